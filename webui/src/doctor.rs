//! The doctor page, live: the checks table, then a server-sent event stream (`/doctor/events`)
//! that sends the table again whenever a check changes. `assets/routerd.js` swaps it in; htmx
//! is not needed for it.

use std::sync::Arc;
use std::time::Duration;

use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;

use crate::assets::Links;
use crate::config::SignedIn;
use crate::{AppState, Backend, CheckView, render};

/// How often the stream runs the checks again.
const INTERVAL: Duration = Duration::from_secs(2);

#[derive(Template)]
#[template(path = "doctor.html")]
struct DoctorPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    table: String,
}

#[derive(Template)]
#[template(path = "checks.html")]
struct ChecksFragment {
    checks: Vec<CheckView>,
    error: Option<String>,
}

async fn table<B: Backend>(app: &AppState<B>) -> String {
    match app.backend.doctor().await {
        Ok(checks) => checks_table(checks, None),
        Err(e) => checks_table(Vec::new(), Some(e)),
    }
}

/// The checks table (`checks.html`), or `error` above it; also on the DNS page.
pub(crate) fn checks_table(checks: Vec<CheckView>, error: Option<String>) -> String {
    let fragment = ChecksFragment { checks, error };
    fragment.render().unwrap_or_else(|e| format!("rendering the checks: {e}"))
}

/// `GET /doctor`.
pub(crate) async fn page<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(session): SignedIn,
) -> Response {
    let page = DoctorPage {
        assets: Links::get(),
        signed_in: true,
        csrf: session.csrf,
        table: table(&app).await,
    };
    render(&page, StatusCode::OK)
}

/// `GET /doctor/events`: an event `checks` with the table's HTML at once and after every
/// change (checked every [`INTERVAL`]).
pub(crate) async fn events<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    _: SignedIn,
) -> Sse<impl Stream<Item = Result<Event, std::convert::Infallible>>> {
    let stream = futures::stream::unfold((app, None::<String>), |(app, last)| async move {
        loop {
            let now = table(&app).await;
            if last.as_deref() != Some(now.as_str()) {
                let event = Event::default().event("checks").data(&now);
                return Some((Ok(event), (app, Some(now))));
            }
            tokio::time::sleep(INTERVAL).await;
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
