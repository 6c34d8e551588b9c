//! The Overview (issue 34 §4): the state at a glance. The phase with, on a first start that
//! needs adoption, what that means and where to act; the doctor's pass/warn/fail counts; the
//! counters, each a link to the page that lists them; the last apply (who, when, why, what)
//! apart from the last reconcile and the last repaired drift; the last hour's charts. The live
//! part reloads itself every few seconds (htmx), times are relative ("2 min ago") with the
//! RFC 3339 time as the element's `datetime`.

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};

use crate::assets::Links;
use crate::charts::{ChartsPanel, overview_panel};
use crate::config::{SignedIn, now_unix};
use crate::{AppState, Backend, Overview, render};

/// Seconds between two reloads of the live part.
const EVERY: u64 = 5;

/// The doctor's checks by outcome.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CheckCounts {
    pub(crate) pass: usize,
    pub(crate) warn: usize,
    pub(crate) fail: usize,
}

/// The part of the Overview that reloads itself.
#[derive(Template)]
#[template(path = "overview_live.html")]
pub(crate) struct Live {
    view: Overview,
    /// `None` while not counted yet (the page's first render): a placeholder loads them.
    checks: Option<CheckCounts>,
    /// Seconds since the Unix epoch, for relative times.
    now: u64,
    every: u64,
}

impl Live {
    /// "12 s ago", "5 min ago", "3 h ago", "2 days ago".
    fn ago(&self, at_unix: &u64) -> String {
        ago(*at_unix, self.now)
    }
}

#[derive(Template)]
#[template(path = "overview.html")]
struct OverviewPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    notice: Option<String>,
    live: Live,
    charts: ChartsPanel,
}

/// `GET /`: from the daemon's snapshot alone, so it answers while the daemon loop is busy
/// (planning, applying); the doctor's counts, which the loop computes, come with the live
/// part's first load.
pub(crate) async fn page<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(session): SignedIn,
) -> Response {
    overview_with(&app, session.csrf, None, StatusCode::OK, None)
}

/// The overview, with `notice` (why the last request did nothing) on top.
pub(crate) fn overview_page<B: Backend>(
    app: &AppState<B>,
    csrf: String,
    notice: Option<String>,
    status: StatusCode,
) -> Response {
    overview_with(app, csrf, notice, status, None)
}

fn overview_with<B: Backend>(
    app: &AppState<B>,
    csrf: String,
    notice: Option<String>,
    status: StatusCode,
    checks: Option<CheckCounts>,
) -> Response {
    let page = OverviewPage {
        assets: Links::get(),
        signed_in: true,
        csrf,
        notice,
        live: Live { view: app.backend.overview(), checks, now: now_unix(), every: EVERY },
        charts: overview_panel(&app.backend.series()),
    };
    render(&page, status)
}

/// `GET /overview/live`: the live part alone, with the doctor's counts (htmx).
pub(crate) async fn live<B: Backend>(State(app): State<Arc<AppState<B>>>, _: SignedIn) -> Response {
    let checks = counts(&*app.backend).await;
    let live = Live { view: app.backend.overview(), checks, now: now_unix(), every: EVERY };
    match live.render() {
        Ok(html) => Html(html).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// The doctor's checks counted by outcome; `None` when the doctor could not run.
async fn counts<B: Backend>(backend: &B) -> Option<CheckCounts> {
    let checks = backend.doctor().await.ok()?;
    let count = |status: &str| checks.iter().filter(|c| c.status == status).count();
    Some(CheckCounts { pass: count("pass"), warn: count("warn"), fail: count("fail") })
}

/// How long before `now` `at` was, in the largest whole unit; "just now" under 5 s, and
/// "-" for an unknown time (0).
pub(crate) fn ago(at: u64, now: u64) -> String {
    if at == 0 {
        return "-".into();
    }
    match now.saturating_sub(at) {
        s if s < 5 => "just now".into(),
        s if s < 60 => format!("{s} s ago"),
        s if s < 3600 => format!("{} min ago", s / 60),
        s if s < 86_400 => format!("{} h ago", s / 3600),
        s if s < 2 * 86_400 => "1 day ago".into(),
        s => format!("{} days ago", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_are_told_in_their_largest_unit() {
        assert_eq!(super::ago(100, 102), "just now");
        assert_eq!(super::ago(100, 142), "42 s ago");
        assert_eq!(super::ago(100, 100 + 5 * 60 + 59), "5 min ago");
        assert_eq!(super::ago(100, 100 + 3 * 3600), "3 h ago");
        assert_eq!(super::ago(100, 100 + 3 * 86_400), "3 days ago");
        assert_eq!(super::ago(0, 100), "-");
    }
}
