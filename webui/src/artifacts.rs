//! The artifacts browser: every artifact the applied config declares, as the last reconcile
//! found it on the host, plus the orphans it reported, filtered by kind, status and text (in
//! the name or the owning resource). Read-only; from the daemon's snapshot, so it costs no
//! host inventory.

use std::collections::BTreeSet;
use std::sync::Arc;

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::assets::Links;
use crate::config::SignedIn;
use crate::{AppState, Backend, render};

/// Rows shown at most; the count says how many matched.
const MAX_ROWS: usize = 500;

/// Where an artifact stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ArtifactStatus {
    /// On the host as desired and recorded as routerd's.
    InSync,
    /// On the host, owned, with attributes that differ.
    Drifted,
    /// Declared, not on the host.
    Missing,
    /// On the host but not in the ledger: an adoption candidate.
    Unowned,
    /// Declared but not observed (its configurator has no inventory yet).
    Unobserved,
    /// On the host or in the ledger, declared by no resource.
    Orphan,
}

impl ArtifactStatus {
    /// Every status, in the filter's order.
    pub const ALL: [Self; 6] =
        [Self::InSync, Self::Drifted, Self::Missing, Self::Unowned, Self::Unobserved, Self::Orphan];

    /// The word the page and its filter use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InSync => "in-sync",
            Self::Drifted => "drifted",
            Self::Missing => "missing",
            Self::Unowned => "unowned",
            Self::Unobserved => "unobserved",
            Self::Orphan => "orphan",
        }
    }
}

/// One artifact in the browser.
#[derive(Clone, Debug)]
pub struct ArtifactRow {
    /// Artifact kind (`linux.ipv4.route`).
    pub kind: String,
    /// Artifact name.
    pub name: String,
    /// The resource that declares it (for an orphan, the ledger's owner or empty).
    pub owner: String,
    /// Where it stands.
    pub status: ArtifactStatus,
    /// The configurator family (`rtnetlink`, `nftables`, …), empty for orphans.
    pub apply_with: String,
    /// The differing attributes, or for an orphan what happens to it.
    pub detail: String,
}

#[derive(Template)]
#[template(path = "artifacts.html")]
struct ArtifactsPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    kinds: Vec<String>,
    statuses: Vec<&'static str>,
    filter: Filter,
    rows: Vec<ArtifactRow>,
    matched: usize,
    total: usize,
}

/// The filters (query string).
#[derive(Deserialize, Default, Clone)]
pub(crate) struct Filter {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    text: String,
}

impl Filter {
    fn accepts(&self, row: &ArtifactRow) -> bool {
        (self.kind.is_empty() || row.kind == self.kind)
            && (self.status.is_empty() || row.status.as_str() == self.status)
            && (self.text.is_empty()
                || row.name.contains(&self.text)
                || row.owner.contains(&self.text))
    }
}

/// `GET /artifacts?kind=…&status=…&text=…`.
pub(crate) async fn page<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(session): SignedIn,
    Query(filter): Query<Filter>,
) -> Response {
    let all = app.backend.artifacts();
    let kinds: Vec<String> =
        all.iter().map(|r| r.kind.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let matching: Vec<ArtifactRow> = all.iter().filter(|r| filter.accepts(r)).cloned().collect();
    let page = ArtifactsPage {
        assets: Links::get(),
        signed_in: true,
        csrf: session.csrf,
        kinds,
        statuses: ArtifactStatus::ALL.iter().map(|s| s.as_str()).collect(),
        matched: matching.len(),
        total: all.len(),
        rows: matching.into_iter().take(MAX_ROWS).collect(),
        filter,
    };
    render(&page, StatusCode::OK)
}
