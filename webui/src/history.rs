//! The history: every applied generation, the diff between any two, and rollback to any one.

use std::sync::Arc;

use askama::Template;
use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::assets::Links;
use crate::config::{SignedIn, checked, settled};
use crate::{AppState, Backend, ClientAddr, GenerationView, render};

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

#[derive(Deserialize)]
pub(crate) struct RollbackForm {
    #[serde(default)]
    csrf: String,
    generation: u64,
}

/// `POST /history/rollback`: applies that generation's text again.
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
    settled(&app, session, app.backend.rollback_to(form.generation, client).await)
}
