//! Adoption: existing host artifacts the config declares but the ledger does not own yet. The
//! operator selects the ones to own; drifted ones cannot be selected and show what differs.
//! Approving writes the ledger only (the host is not touched).

use std::collections::HashMap;
use std::sync::Arc;

use askama::Template;
use axum::extract::{Form, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::assets::Links;
use crate::config::{SignedIn, checked};
use crate::{AppState, Backend, CandidateView, render};

#[derive(Template)]
#[template(path = "adopt.html")]
struct AdoptPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    candidates: Vec<CandidateView>,
    adopted: Vec<String>,
    error: Option<String>,
}

async fn page_with<B: Backend>(
    app: &AppState<B>,
    csrf: String,
    adopted: Vec<String>,
    error: Option<String>,
) -> Response {
    let (candidates, error) = match app.backend.candidates().await {
        Ok(c) => (c, error),
        Err(e) => (Vec::new(), Some(error.unwrap_or(e))),
    };
    let page =
        AdoptPage { assets: Links::get(), signed_in: true, csrf, candidates, adopted, error };
    render(&page, StatusCode::OK)
}

/// `GET /adopt`.
pub(crate) async fn page<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(session): SignedIn,
) -> Response {
    page_with(&app, session.csrf, Vec::new(), None).await
}

/// `POST /adopt`: the checked candidates (fields `a0`, `a1`, … holding `kind/name`) and the
/// CSRF token.
pub(crate) async fn approve<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let csrf = form.get("csrf").cloned().unwrap_or_default();
    let session = match checked(&app, &headers, &csrf) {
        Ok(s) => s,
        Err(denied) => return denied.into_response(),
    };
    let mut chosen: Vec<String> = form
        .iter()
        .filter(|(k, _)| k.starts_with('a') && k[1..].parse::<usize>().is_ok())
        .map(|(_, v)| v.clone())
        .collect();
    chosen.sort();
    if chosen.is_empty() {
        return page_with(
            &app,
            session.csrf,
            Vec::new(),
            Some("Select at least one candidate.".into()),
        )
        .await;
    }
    match app.backend.adopt(chosen).await {
        Ok(adopted) => page_with(&app, session.csrf, adopted, None).await,
        Err(e) => page_with(&app, session.csrf, Vec::new(), Some(e)).await,
    }
}
