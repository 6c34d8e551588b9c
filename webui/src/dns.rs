//! The DNS page: the DNS controller's servers, zones and RRsets (ADR 0012) as the last
//! reconcile found them, the RRsets filtered by zone (and to the foreign ones), foreign RRsets
//! marked, then the `dns` doctor checks. Read-only; the daemon derives the rows from its Result
//! document, ledger and checks, as `routerctl dns` does from the control API.

use std::collections::BTreeSet;
use std::sync::Arc;

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::assets::Links;
use crate::config::SignedIn;
use crate::{AppState, Backend, CheckView, render};

/// RRsets shown at most; the count says how many matched.
const MAX_ROWS: usize = 500;

/// What the DNS page shows.
#[derive(Clone, Debug, Default)]
pub struct DnsView {
    /// `DNSServer`s and `DNSExternalServer`s, by name.
    pub servers: Vec<DnsServerRow>,
    /// Zones by side, server and apex.
    pub zones: Vec<DnsZoneRow>,
    /// RRsets by side, server, zone, owner and type.
    pub records: Vec<DnsRecordRow>,
    /// The doctor's `dns` checks.
    pub checks: Vec<CheckView>,
    /// Whether a reconcile has finished (before the first, nothing is known yet).
    pub observed: bool,
}

/// One server.
#[derive(Clone, Debug, Default)]
pub struct DnsServerRow {
    /// The resource's name.
    pub name: String,
    /// `local` (a `DNSServer` the router runs) or `remote` (a `DNSExternalServer`).
    pub side: String,
    /// Zones on it.
    pub zones: usize,
    /// Its state as a phrase: `unit running, named.conf in place, zones readable`.
    pub state: String,
    /// Nothing is wrong.
    pub ok: bool,
}

/// One zone on one server.
#[derive(Clone, Debug, Default)]
pub struct DnsZoneRow {
    /// The server's name.
    pub server: String,
    /// `local` or `remote`.
    pub side: String,
    /// The apex, absolute (`lab.example.`).
    pub zone: String,
    /// RRsets the config declares in it.
    pub declared: usize,
    /// Of those, RRsets in the ledger.
    pub owned: usize,
    /// RRsets on the server in neither router.yaml nor the ledger.
    pub foreign: usize,
    /// `OK`, `unreadable: <reason>`, or what differs (`2 drifted, 1 missing`).
    pub state: String,
    /// Nothing is wrong (foreign RRsets are not wrong: they are left alone).
    pub ok: bool,
}

/// One RRset.
#[derive(Clone, Debug, Default)]
pub struct DnsRecordRow {
    /// The server's name.
    pub server: String,
    /// `local` or `remote`.
    pub side: String,
    /// The zone apex, absolute.
    pub zone: String,
    /// The owner name relative to the zone (`www`, `@` for the apex).
    pub name: String,
    /// The type (`A`, `MX`).
    pub rtype: String,
    /// The TTL, when known.
    pub ttl: Option<u64>,
    /// The records' data in presentation format, when known.
    pub data: Vec<String>,
    /// The declaring resource (`ARecord/www`); for an undeclared RRset the ledger's owner;
    /// empty for a foreign one.
    pub resource: String,
    /// `in-sync`, `drift`, `unobserved`, `missing`, `unowned`, `foreign`, `undeclared`.
    pub status: String,
    /// Why: the server's differing values, the reason the zone could not be read, a failed
    /// operation.
    pub detail: String,
}

impl DnsRecordRow {
    /// Made outside router.yaml (and not in the ledger): left alone, highlighted.
    pub fn foreign(&self) -> bool {
        self.status == "foreign"
    }
}

#[derive(Template)]
#[template(path = "dns.html")]
struct DnsPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    view: DnsView,
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
        self.apex().is_none_or(|z| row.zone == z) && (!self.foreign_only() || row.foreign())
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
        foreign: view.records.iter().filter(|r| r.foreign()).count(),
        rows: matching.into_iter().take(MAX_ROWS).collect(),
        checks: crate::doctor::checks_table(view.checks.clone(), None),
        filter,
        view,
        error,
    };
    render(&page, StatusCode::OK)
}
