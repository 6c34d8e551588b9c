//! The history: every applied generation, the diff between any two, and rollback to any one.

use std::sync::Arc;

use askama::Template;
use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::assets::Links;
use crate::config::{SignedIn, checked, settled};
use crate::{AppState, Backend, ClientAddr, GenerationView, RollbackTo, render};

#[derive(Template)]
#[template(path = "history.html")]
struct HistoryPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    generations: Vec<GenerationView>,
    /// The generation applied now.
    running: u64,
    error: Option<String>,
}

/// One line of a unified diff, classed for colour (`add`, `del`, `hunk`, `ctx`).
pub(crate) struct DiffLine {
    pub(crate) class: &'static str,
    pub(crate) text: String,
}

/// The lines of unified diff `text`, classed.
pub(crate) fn diff_lines(text: &str) -> Vec<DiffLine> {
    text.lines()
        .map(|l| DiffLine {
            class: match l.as_bytes().first() {
                Some(b'@') => "hunk",
                Some(b'+') => "add",
                Some(b'-') => "del",
                _ => "ctx",
            },
            text: l.to_string(),
        })
        .collect()
}

#[derive(Template)]
#[template(path = "diff.html")]
struct DiffPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    from: u64,
    to: u64,
    lines: Vec<DiffLine>,
}

/// `GET /history`: newest first.
pub(crate) async fn list<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(session): SignedIn,
) -> Response {
    let (mut generations, error) = match app.backend.generations().await {
        Ok(g) => (g, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    generations.reverse();
    let page = HistoryPage {
        assets: Links::get(),
        signed_in: true,
        csrf: session.csrf,
        generations,
        running: app.backend.overview().generation,
        error,
    };
    render(&page, StatusCode::OK)
}

#[derive(Deserialize)]
pub(crate) struct DiffQuery {
    from: u64,
    to: u64,
}

/// `GET /history/diff?from=A&to=B`.
pub(crate) async fn diff<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(session): SignedIn,
    Query(q): Query<DiffQuery>,
) -> Response {
    let text = match app.backend.diff(q.from, q.to).await {
        Ok(t) => t,
        Err(e) => return (StatusCode::NOT_FOUND, e).into_response(),
    };
    let lines = diff_lines(&text);
    let page = DiffPage {
        assets: Links::get(),
        signed_in: true,
        csrf: session.csrf,
        from: q.from,
        to: q.to,
        lines,
    };
    render(&page, StatusCode::OK)
}

/// The question before a rollback: what comes back, with the confirm window and comment an
/// apply has.
#[derive(Template)]
#[template(path = "rollback.html")]
struct RollbackPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    /// The generation whose text comes back.
    generation: u64,
    /// The generation applied now.
    running: u64,
    /// An apply waits for its confirm: the rollback restores at once, with no window.
    pending: Option<u64>,
    /// From the running text to `generation`'s.
    lines: Vec<DiffLine>,
}

#[derive(Deserialize)]
pub(crate) struct RollbackQuery {
    generation: u64,
}

/// `GET /history/rollback?generation=N`: asks before rolling back, showing what would change.
pub(crate) async fn ask<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(session): SignedIn,
    Query(q): Query<RollbackQuery>,
) -> Response {
    let overview = app.backend.overview();
    let running = overview.generation;
    let text = match app.backend.diff(running, q.generation).await {
        Ok(t) => t,
        Err(e) => return (StatusCode::NOT_FOUND, e).into_response(),
    };
    let page = RollbackPage {
        assets: Links::get(),
        signed_in: true,
        csrf: session.csrf,
        generation: q.generation,
        running,
        pending: overview.pending_confirm.map(|c| c.generation),
        lines: diff_lines(&text),
    };
    render(&page, StatusCode::OK)
}

#[derive(Deserialize)]
pub(crate) struct RollbackForm {
    #[serde(default)]
    csrf: String,
    generation: u64,
    /// The confirm window in seconds (absent: none, as a form from before windows).
    #[serde(default)]
    confirm: u64,
    #[serde(default)]
    comment: String,
}

/// `POST /history/rollback`: applies that generation's text again, with the confirm window the
/// operator chose on the question page.
pub(crate) async fn rollback<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    ClientAddr(client): ClientAddr,
    Form(form): Form<RollbackForm>,
) -> Response {
    let session = match checked(&app, &headers, &form.csrf) {
        Ok(s) => s,
        Err(denied) => return denied.into_response(),
    };
    let request = RollbackTo {
        generation: form.generation,
        confirm_seconds: form.confirm.min(86_400),
        comment: form.comment.trim().to_string(),
        client,
    };
    settled(&app, session, app.backend.rollback_to(request).await)
}
