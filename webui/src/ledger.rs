//! The ledger browser: what routerd created or adopted, filtered by kind, state and text (in
//! the name or the owner). Read-only.

use std::collections::BTreeSet;
use std::sync::Arc;

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::assets::Links;
use crate::config::SignedIn;
use crate::{AppState, Backend, LedgerRow, render};

/// Rows shown at most; the count says how many matched.
const MAX_ROWS: usize = 500;

#[derive(Template)]
#[template(path = "ledger.html")]
struct LedgerPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    kinds: Vec<String>,
    filter: Filter,
    rows: Vec<LedgerRow>,
    matched: usize,
    total: usize,
    error: Option<String>,
}

/// The filters (query string).
#[derive(Deserialize, Default, Clone)]
pub(crate) struct Filter {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    state: String,
    #[serde(default)]
    text: String,
}

impl Filter {
    fn accepts(&self, row: &LedgerRow) -> bool {
        (self.kind.is_empty() || row.kind == self.kind)
            && (self.state.is_empty() || row.state == self.state)
            && (self.text.is_empty()
                || row.name.contains(&self.text)
                || row.owner.contains(&self.text))
    }
}

/// `GET /ledger?kind=…&state=…&text=…`.
pub(crate) async fn page<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(session): SignedIn,
    Query(filter): Query<Filter>,
) -> Response {
    let (all, error) = match app.backend.ledger().await {
        Ok(rows) => (rows, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    let kinds: Vec<String> =
        all.iter().map(|r| r.kind.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let matching: Vec<LedgerRow> = all.iter().filter(|r| filter.accepts(r)).cloned().collect();
    let page = LedgerPage {
        assets: Links::get(),
        signed_in: true,
        csrf: session.csrf,
        kinds,
        matched: matching.len(),
        total: all.len(),
        rows: matching.into_iter().take(MAX_ROWS).collect(),
        filter,
        error,
    };
    render(&page, StatusCode::OK)
}
