//! Static assets, embedded in the binary (`include_dir`): no CDN, the UI works with no internet.
//!
//! Each file is served under a content-hashed name (`/assets/routerd.3f9c2a1b7e04.css`) with a
//! one-year `immutable` cache lifetime: a new build changes the name, so browsers never keep a
//! stale copy and never revalidate a current one.

use std::collections::HashMap;
use std::sync::OnceLock;

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use include_dir::{Dir, include_dir};
use sha2::{Digest, Sha256};

static ASSETS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/assets");

/// One embedded file under its hashed name.
struct Asset {
    body: &'static [u8],
    content_type: &'static str,
}

/// Hashed name → asset, and original name → hashed URL.
struct Table {
    by_hashed: HashMap<String, Asset>,
    urls: HashMap<&'static str, String>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut by_hashed = HashMap::new();
        let mut urls = HashMap::new();
        for file in ASSETS.files() {
            let Some(name) = file.path().to_str() else { continue };
            let Some((stem, ext)) = name.rsplit_once('.') else { continue };
            let content_type = match ext {
                "css" => "text/css; charset=utf-8",
                "js" => "text/javascript; charset=utf-8",
                "svg" => "image/svg+xml",
                _ => continue, // licences and notes are not served
            };
            let digest = Sha256::digest(file.contents());
            let hash: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
            let hashed = format!("{stem}.{hash}.{ext}");
            urls.insert(name, format!("/assets/{hashed}"));
            by_hashed.insert(hashed, Asset { body: file.contents(), content_type });
        }
        Table { by_hashed, urls }
    })
}

/// The URL of the embedded file `name` (`routerd.css`); `/assets/missing` when there is none,
/// which answers 404 (a template naming a file that does not exist shows up in tests).
pub fn url(name: &str) -> String {
    table().urls.get(name).cloned().unwrap_or_else(|| "/assets/missing".into())
}

/// `GET /assets/{hashed}`.
pub async fn serve(Path(hashed): Path<String>) -> Response {
    match table().by_hashed.get(&hashed) {
        Some(asset) => (
            [
                (header::CONTENT_TYPE, asset.content_type),
                (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
            ],
            asset.body,
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// The URLs the templates link.
pub struct Links {
    /// The stylesheet.
    pub css: String,
    /// htmx.
    pub htmx: String,
    /// Our script: live panels, the editor's line numbers and jumps, the graph's pan and zoom.
    pub js: String,
    /// svg-pan-zoom (the dependency graph's pan and zoom).
    pub panzoom: String,
    /// The page icon (SVG).
    pub icon: String,
}

impl Links {
    /// The current URLs.
    pub fn get() -> Self {
        Self {
            css: url("routerd.css"),
            htmx: url("htmx.min.js"),
            js: url("routerd.js"),
            panzoom: url("svg-pan-zoom.min.js"),
            icon: url("routerd-icon.svg"),
        }
    }
}
