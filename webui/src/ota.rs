//! The updates page (`/ota`): both slots' status and the health gate's records; a bundle
//! uploaded or downloaded from a URL, inspected by RAUC and shown before anything is
//! installed; the install with a live progress bar (server-sent events, `/ota/events`); boot
//! the other slot next; reboot. Every POST needs the session's CSRF token; the upload carries
//! it as the first multipart field, checked before a byte of the bundle is stored.

use std::sync::Arc;

use askama::Template;
use axum::extract::{Form, Multipart, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Redirect, Response};
use futures::Stream;
use serde::Deserialize;
use tokio::sync::mpsc;

use crate::assets::Links;
use crate::auth;
use crate::config::{Denied, SignedIn, checked, session};
use crate::{AppState, Backend, InstallPhase, InstallView, OtaView, render};

/// Chunks of an upload in flight between the browser and the backend's file.
const UPLOAD_QUEUE: usize = 8;

#[derive(Template)]
#[template(path = "ota.html")]
struct OtaPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    view: Option<OtaView>,
    progress: String,
    installing: bool,
    notice: Option<String>,
    error: Option<String>,
}

#[derive(Template)]
#[template(path = "ota_progress.html")]
struct ProgressFragment<'a> {
    csrf: &'a str,
    install: &'a InstallView,
}

impl InstallPhase {
    /// `idle`, `running`, `succeeded`, `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            InstallPhase::Idle => "idle",
            InstallPhase::Running => "running",
            InstallPhase::Succeeded => "succeeded",
            InstallPhase::Failed => "failed",
        }
    }
}

fn progress_html(csrf: &str, install: &InstallView) -> String {
    ProgressFragment { csrf, install }
        .render()
        .unwrap_or_else(|e| format!("rendering the progress: {e}"))
}

/// The page, with `notice` (what the last request did) or `error` (why it did nothing).
async fn page_with<B: Backend>(
    app: &AppState<B>,
    csrf: String,
    notice: Option<String>,
    error: Option<String>,
    status: StatusCode,
) -> Response {
    let install = app.backend.ota_progress().borrow().clone();
    let (view, error) = match app.backend.ota().await {
        Ok(view) => (Some(view), error),
        Err(e) => (None, Some(error.unwrap_or(e))),
    };
    let page = OtaPage {
        assets: Links::get(),
        signed_in: true,
        progress: progress_html(&csrf, &install),
        installing: install.phase == InstallPhase::Running,
        csrf,
        view,
        notice,
        error,
    };
    render(&page, status)
}

/// `GET /ota`.
pub(crate) async fn page<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(session): SignedIn,
) -> Response {
    page_with(&app, session.csrf, None, None, StatusCode::OK).await
}

/// `POST /ota/upload` (`multipart/form-data`: `csrf`, then the file `bundle`): the bundle is
/// streamed to the backend as it arrives, then inspected; back to the page, which shows the
/// manifest.
pub(crate) async fn upload<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    mut multipart: Multipart,
) -> Response {
    let session = match session(&app, &headers) {
        Ok(session) => session,
        Err(denied) => return denied.into_response(),
    };
    let failed = |error: String, status: StatusCode| {
        page_with(&app, session.csrf.clone(), None, Some(error), status)
    };
    let mut csrf_ok = false;
    loop {
        let mut field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(e) => return failed(format!("The upload broke off: {e}"), e.status()).await,
        };
        match field.name() {
            Some("csrf") => {
                let token = field.text().await.unwrap_or_default();
                csrf_ok = auth::same(&session.csrf, &token);
            }
            Some("bundle") if !csrf_ok => return Denied::Forbidden.into_response(),
            Some("bundle") => {
                let name = field.file_name().unwrap_or_default().to_string();
                if name.is_empty() {
                    let message = "Choose a bundle file (.raucb) first.".to_string();
                    return failed(message, StatusCode::BAD_REQUEST).await;
                }
                let (tx, rx) = mpsc::channel(UPLOAD_QUEUE);
                let feed = async move {
                    loop {
                        let chunk = match field.chunk().await {
                            Ok(Some(chunk)) => Ok(chunk),
                            Ok(None) => break,
                            Err(e) => Err(format!("the upload broke off: {e}")),
                        };
                        let last = chunk.is_err();
                        // A send fails once the backend gave up (no room, say); it says why.
                        if tx.send(chunk).await.is_err() || last {
                            break;
                        }
                    }
                };
                let ((), stored) = tokio::join!(feed, app.backend.ota_upload(name, rx));
                return match stored {
                    Ok(_) => Redirect::to("/ota").into_response(),
                    Err(e) => failed(e, StatusCode::UNPROCESSABLE_ENTITY).await,
                };
            }
            _ => {}
        }
    }
    if !csrf_ok {
        return Denied::Forbidden.into_response();
    }
    failed("The upload has no bundle file.".into(), StatusCode::BAD_REQUEST).await
}

#[derive(Deserialize)]
pub(crate) struct FetchForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    url: String,
}

/// `POST /ota/fetch`: the backend downloads the bundle at `url` and inspects it.
pub(crate) async fn fetch<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    Form(form): Form<FetchForm>,
) -> Response {
    let session = match checked(&app, &headers, &form.csrf) {
        Ok(session) => session,
        Err(denied) => return denied.into_response(),
    };
    match app.backend.ota_fetch(form.url.trim().to_string()).await {
        Ok(_) => Redirect::to("/ota").into_response(),
        Err(e) => {
            page_with(&app, session.csrf, None, Some(e), StatusCode::UNPROCESSABLE_ENTITY).await
        }
    }
}

#[derive(Deserialize)]
pub(crate) struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

/// `POST /ota/discard`: deletes the staged bundle.
pub(crate) async fn discard<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    Form(form): Form<CsrfForm>,
) -> Response {
    if let Err(denied) = checked(&app, &headers, &form.csrf) {
        return denied.into_response();
    }
    app.backend.ota_discard().await;
    Redirect::to("/ota").into_response()
}

#[derive(Deserialize)]
pub(crate) struct InstallForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    digest: String,
}

/// `POST /ota/install`: starts installing the staged bundle (only if it is still the one the
/// operator saw: `digest`); the page then follows the progress.
pub(crate) async fn install<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    Form(form): Form<InstallForm>,
) -> Response {
    let session = match checked(&app, &headers, &form.csrf) {
        Ok(session) => session,
        Err(denied) => return denied.into_response(),
    };
    match app.backend.ota_install(form.digest).await {
        Ok(()) => Redirect::to("/ota").into_response(),
        Err(e) => page_with(&app, session.csrf, None, Some(e), StatusCode::CONFLICT).await,
    }
}

/// `?rendered=` of `/ota/events`: the install phase the page was rendered with.
#[derive(Deserialize, Default)]
pub(crate) struct EventsQuery {
    #[serde(default)]
    rendered: String,
}

/// `GET /ota/events`: an event `progress` with the install panel's HTML at once and at every
/// change; an event `reload` instead when an install has finished since the page was rendered
/// (`?rendered=running`) or while the stream is open: the slots and the staged bundle changed
/// too, and the page's buttons were rendered disabled.
pub(crate) async fn events<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(session): SignedIn,
    Query(query): Query<EventsQuery>,
) -> Sse<impl Stream<Item = Result<Event, std::convert::Infallible>>> {
    let mut progress = app.backend.ota_progress();
    let first = progress.borrow_and_update().clone();
    let seen = if query.rendered == InstallPhase::Running.as_str() {
        InstallPhase::Running
    } else {
        first.phase
    };
    let start = (progress, session.csrf, Some(first), seen);
    let stream = futures::stream::unfold(start, |(mut progress, csrf, next, seen)| async move {
        let install = match next {
            Some(install) => install,
            None => {
                // An error here is the daemon stopping: end the stream.
                progress.changed().await.ok()?;
                progress.borrow_and_update().clone()
            }
        };
        let finished = seen == InstallPhase::Running && install.phase != InstallPhase::Running;
        let event = if finished {
            Event::default().event("reload").data(install.phase.as_str())
        } else {
            Event::default().event("progress").data(progress_html(&csrf, &install))
        };
        let phase = install.phase;
        Some((Ok(event), (progress, csrf, None, phase)))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

#[derive(Deserialize)]
pub(crate) struct SlotForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    slot: String,
}

/// `POST /ota/boot-next`: the boot loader starts `slot` next (RAUC `Mark(active)`).
pub(crate) async fn boot_next<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    Form(form): Form<SlotForm>,
) -> Response {
    let session = match checked(&app, &headers, &form.csrf) {
        Ok(session) => session,
        Err(denied) => return denied.into_response(),
    };
    match app.backend.ota_boot_next(form.slot).await {
        Ok(message) => page_with(&app, session.csrf, Some(message), None, StatusCode::OK).await,
        Err(e) => page_with(&app, session.csrf, None, Some(e), StatusCode::CONFLICT).await,
    }
}

/// `POST /ota/reboot`: asks the daemon to reboot the router.
pub(crate) async fn reboot<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    Form(form): Form<CsrfForm>,
) -> Response {
    let session = match checked(&app, &headers, &form.csrf) {
        Ok(session) => session,
        Err(denied) => return denied.into_response(),
    };
    match app.backend.reboot().await {
        Ok(()) => {
            let notice = "The router is rebooting. Reload this page in a minute or two; the \
                          health gate then decides whether the new slot stays."
                .to_string();
            page_with(&app, session.csrf, Some(notice), None, StatusCode::OK).await
        }
        Err(e) => {
            page_with(&app, session.csrf, None, Some(e), StatusCode::SERVICE_UNAVAILABLE).await
        }
    }
}
