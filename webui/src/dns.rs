//! The DNS page: the DNS controller's servers, zones and RRsets (ADR 0012) as the last
//! reconcile found them, the RRsets filtered by zone (and to the foreign ones), foreign RRsets
//! marked, then the `dns` doctor checks. Read-only; the rows are `routerd-model`'s
//! ([`DnsView`]), which the daemon derives once from its Result document, ledger and checks
//! and also serves to `routerctl dns` (`GET /v1/dns`).

use std::collections::BTreeSet;
use std::sync::Arc;

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use routerd_model::dns_view::{DnsRecordRow, DnsView};
use serde::Deserialize;

use crate::assets::Links;
use crate::config::SignedIn;
use crate::{AppState, Backend, CheckView, render};

/// RRsets shown at most; the count says how many matched.
const MAX_ROWS: usize = 500;

#[derive(Template)]
#[template(path = "dns.html")]
struct DnsPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    view: DnsView<CheckView>,
    zones: Vec<String>,
    filter: Filter,
    rows: Vec<DnsRecordRow>,
    matched: usize,
    total: usize,
    foreign: usize,
    /// The `dns` checks as the Doctor page shows them (`checks.html`).
    checks: String,
    error: Option<String>,
}

/// The filters (query string).
#[derive(Deserialize, Default, Clone)]
pub(crate) struct Filter {
    /// A zone apex (`lab.example`, the final dot optional); empty: every zone.
    #[serde(default)]
    zone: String,
    /// Only foreign RRsets (the checkbox sends `on`).
    #[serde(default)]
    foreign: String,
}

impl Filter {
    /// The zone asked for, absolute and lowercased (`Lab.Example` → `lab.example.`).
    fn apex(&self) -> Option<String> {
        let zone = self.zone.trim().to_ascii_lowercase();
        match zone.as_str() {
            "" => None,
            z if z.ends_with('.') => Some(zone),
            _ => Some(format!("{zone}.")),
        }
    }

    fn foreign_only(&self) -> bool {
        !self.foreign.is_empty()
    }

    fn accepts(&self, row: &DnsRecordRow) -> bool {
        self.apex().is_none_or(|z| row.zone == z) && (!self.foreign_only() || row.foreign)
    }
}

/// `GET /dns?zone=…&foreign=on`.
pub(crate) async fn page<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(session): SignedIn,
    Query(filter): Query<Filter>,
) -> Response {
    let (view, error) = match app.backend.dns().await {
        Ok(view) => (view, None),
        Err(e) => (DnsView::default(), Some(e)),
    };
    let zones: Vec<String> =
        view.zones.iter().map(|z| z.zone.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let matching: Vec<DnsRecordRow> =
        view.records.iter().filter(|r| filter.accepts(r)).cloned().collect();
    let filter = Filter { zone: filter.apex().unwrap_or_default(), ..filter };
    let page = DnsPage {
        assets: Links::get(),
        signed_in: true,
        csrf: session.csrf,
        zones,
        matched: matching.len(),
        total: view.records.len(),
        foreign: view.records.iter().filter(|r| r.foreign).count(),
        rows: matching.into_iter().take(MAX_ROWS).collect(),
        checks: crate::doctor::checks_table(view.checks.clone(), None),
        filter,
        view,
        error,
    };
    render(&page, StatusCode::OK)
}
