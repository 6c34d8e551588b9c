//! The config editor (validate as you type, through htmx), the plan page (the YAML diff against
//! the running config and the operations), apply with a confirm window, and the confirm
//! countdown with its Confirm / Roll back buttons.
//!
//! The editor is a plain textarea (no soft wrap) that works without script; `routerd.js` adds
//! the line-number gutter and makes each problem's "line L, column C" jump to its place.
//!
//! Every POST here needs a session and its CSRF token; htmx requests send the token with the
//! form (`hx-include`).

use std::sync::Arc;

use askama::Template;
use axum::extract::{Form, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;

use crate::assets::Links;
use crate::auth::{self, Session};
use crate::{
    AppState, ApplyRequest, Backend, ClientAddr, ConfigProblem, EditRefused, PlanView, render,
};

#[derive(Template)]
#[template(path = "config.html")]
struct EditorPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    yaml: String,
    /// The generation `yaml` was edited from (the form sends it back).
    base: Option<u64>,
    /// The operator's comment, kept from form to form.
    comment: String,
    /// Always `None` here: the problems block is shared with [`ProblemsFragment`].
    valid: Option<crate::Valid>,
    problems: Vec<ConfigProblem>,
    error: Option<String>,
}

impl EditorPage {
    /// The gutter's line numbers for `yaml` as the textarea shows it (a final line break opens
    /// an empty last line), one a line; the script keeps them current while typing.
    fn gutter(&self) -> String {
        let lines = self.yaml.split('\n').count();
        (1..=lines).map(|n| format!("{n}\n")).collect()
    }
}

/// An edit in progress: the text, the generation it was edited from and the comment typed
/// with it, carried from the editor to the plan page and back.
struct Draft {
    base: Option<u64>,
    yaml: String,
    comment: String,
}

/// The editor holding `draft`, with the problems or the refusal of the last attempt.
fn editor_page(
    csrf: String,
    draft: Draft,
    problems: Vec<ConfigProblem>,
    error: Option<String>,
    status: StatusCode,
) -> Response {
    let Draft { base, yaml, comment } = draft;
    let page = EditorPage {
        assets: Links::get(),
        signed_in: true,
        csrf,
        yaml,
        base,
        comment,
        valid: None,
        problems,
        error,
    };
    render(&page, status)
}

#[derive(Template)]
#[template(path = "plan.html")]
struct PlanPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    yaml: String,
    base: Option<u64>,
    comment: String,
    plan: PlanView,
    /// The generation running now, which `changes` is against.
    running: u64,
    /// The unified diff from the running config's text to `yaml`.
    changes: Vec<crate::history::DiffLine>,
}

#[derive(Template)]
#[template(path = "stale.html")]
struct StalePage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    stale: crate::StaleView,
    changes: Vec<crate::history::DiffLine>,
    comment: String,
}

/// The editor's problems block alone (validate as you type swaps it in).
#[derive(Template)]
#[template(path = "config.html", block = "problems")]
struct ProblemsFragment {
    valid: Option<crate::Valid>,
    problems: Vec<ConfigProblem>,
}

#[derive(Template)]
#[template(path = "countdown.html")]
struct CountdownFragment {
    confirm: Option<(u64, u64, String)>,
}

#[derive(Template)]
#[template(path = "banner.html")]
struct BannerFragment {
    csrf: String,
    fallback: Option<crate::FallbackView>,
    confirm: Option<crate::ConfirmView>,
    timed_out: Option<crate::TimedOutView>,
}

/// Why a request was turned away before its handler ran.
pub(crate) enum Denied {
    /// No session: to the login page.
    Login,
    /// The CSRF token is missing or wrong: 403.
    Forbidden,
}

impl IntoResponse for Denied {
    fn into_response(self) -> Response {
        match self {
            Denied::Login => Redirect::to("/login").into_response(),
            Denied::Forbidden => {
                (StatusCode::FORBIDDEN, "missing or wrong CSRF token").into_response()
            }
        }
    }
}

/// A request with a live session (otherwise: to the login page).
pub(crate) struct SignedIn(pub(crate) Session);

impl<B: Backend> axum::extract::FromRequestParts<Arc<AppState<B>>> for SignedIn {
    type Rejection = Denied;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        app: &Arc<AppState<B>>,
    ) -> Result<Self, Denied> {
        session(app, &parts.headers).map(SignedIn)
    }
}

/// The session of the request.
pub(crate) fn session<B: Backend>(
    app: &AppState<B>,
    headers: &HeaderMap,
) -> Result<Session, Denied> {
    app.sessions.get(headers, &app.backend.credentials_stamp()).ok_or(Denied::Login)
}

/// The session when `csrf` is its token.
pub(crate) fn checked<B: Backend>(
    app: &AppState<B>,
    headers: &HeaderMap,
    csrf: &str,
) -> Result<Session, Denied> {
    let session = session(app, headers)?;
    if auth::same(&session.csrf, csrf) { Ok(session) } else { Err(Denied::Forbidden) }
}

/// `GET /config`: the editor with the applied text.
pub(crate) async fn editor<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(session): SignedIn,
) -> Response {
    let (base, yaml) = app.backend.config_text();
    let draft = Draft { base: Some(base), yaml, comment: String::new() };
    editor_page(session.csrf, draft, Vec::new(), None, StatusCode::OK)
}

/// The form of the stale-apply page's "re-open the editor" and the plan page's Edit
/// (`POST /config/edit`).
#[derive(Deserialize)]
pub(crate) struct EditForm {
    #[serde(default)]
    csrf: String,
    #[serde(deserialize_with = "unix_lines")]
    yaml: String,
    base: Option<u64>,
    #[serde(default)]
    comment: String,
    #[serde(default)]
    conflicts: bool,
}

/// `POST /config/edit`: the editor holding the posted text, edited from generation `base` (the
/// edit re-applied to a generation applied meanwhile, or the plan page's text taken back).
pub(crate) async fn edit<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    Form(form): Form<EditForm>,
) -> Response {
    let session = match checked(&app, &headers, &form.csrf) {
        Ok(s) => s,
        Err(denied) => return denied.into_response(),
    };
    let note = form.conflicts.then(|| {
        "Your edit and the generation applied meanwhile change the same lines: they are marked \
         between <<<<<<< and >>>>>>> below. Keep what should stay, remove the markers, then \
         plan and apply."
            .to_string()
    });
    let draft = Draft { base: form.base, yaml: form.yaml, comment: form.comment };
    editor_page(session.csrf, draft, Vec::new(), note, StatusCode::OK)
}

/// A form carrying the editor's text (validate, plan).
#[derive(Deserialize)]
pub(crate) struct YamlForm {
    #[serde(default)]
    csrf: String,
    #[serde(default, deserialize_with = "unix_lines")]
    yaml: String,
    /// The generation the text was edited from (carried to the plan page's Apply).
    base: Option<u64>,
    /// The comment typed in the editor (carried to the plan page's Apply).
    #[serde(default)]
    comment: String,
}

/// A textarea's text with the CRLF line breaks browsers send (HTML's form submission rules)
/// made LF again, so the stored config and the history's diffs keep the file's own breaks.
fn unix_lines<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let text = String::deserialize(d)?;
    Ok(if text.contains('\r') { text.replace("\r\n", "\n") } else { text })
}

/// Shortest confirm window the editor accepts: less is no time to check and confirm.
const MIN_CONFIRM_SECONDS: u64 = 10;
/// Longest: a day.
const MAX_CONFIRM_SECONDS: u64 = 86_400;

/// `POST /config/validate`: the problems fragment (htmx swaps it under the editor).
pub(crate) async fn validate<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    Form(form): Form<YamlForm>,
) -> Response {
    if let Err(denied) = checked(&app, &headers, &form.csrf) {
        return denied.into_response();
    }
    // Parsing a large config takes milliseconds of CPU: off the thread that answers requests.
    let backend = Arc::clone(&app.backend);
    let checked = tokio::task::spawn_blocking(move || backend.validate(&form.yaml)).await;
    let fragment = match checked {
        Ok(Ok(valid)) => ProblemsFragment { valid: Some(valid), problems: Vec::new() },
        Ok(Err(problems)) => ProblemsFragment { valid: None, problems },
        Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    };
    match fragment.render() {
        Ok(html) => Html(html).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

#[derive(Deserialize)]
pub(crate) struct ApplyForm {
    #[serde(default)]
    csrf: String,
    #[serde(deserialize_with = "unix_lines")]
    yaml: String,
    /// The generation the text was edited from.
    base: Option<u64>,
    #[serde(default)]
    comment: String,
    /// Seconds; 0: no confirm window.
    confirm: u64,
}

/// `POST /config/apply`: applies, then the overview (with the countdown); the editor again
/// with the problems or the refusal otherwise.
pub(crate) async fn apply<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    ClientAddr(client): ClientAddr,
    Form(form): Form<ApplyForm>,
) -> Response {
    let session = match checked(&app, &headers, &form.csrf) {
        Ok(s) => s,
        Err(denied) => return denied.into_response(),
    };
    if form.confirm != 0 && !(MIN_CONFIRM_SECONDS..=MAX_CONFIRM_SECONDS).contains(&form.confirm) {
        let error = format!(
            "The confirm window must be 0 (none) or {MIN_CONFIRM_SECONDS} to \
             {MAX_CONFIRM_SECONDS} seconds; nothing was changed."
        );
        return editor_page(
            session.csrf,
            Draft { base: form.base, yaml: form.yaml, comment: form.comment },
            Vec::new(),
            Some(error),
            StatusCode::UNPROCESSABLE_ENTITY,
        );
    }
    let request = ApplyRequest {
        yaml: form.yaml.clone(),
        confirm_seconds: form.confirm,
        comment: form.comment.clone(),
        client,
        base: form.base,
    };
    let (problems, error, status) = match app.backend.apply(request).await {
        Ok(_) => return Redirect::to("/").into_response(),
        Err(EditRefused::Stale(stale)) => {
            let page = StalePage {
                assets: Links::get(),
                signed_in: true,
                csrf: session.csrf,
                changes: crate::history::diff_lines(&stale.changes),
                stale,
                comment: form.comment,
            };
            return render(&page, StatusCode::CONFLICT);
        }
        Err(EditRefused::Invalid(problems)) => (
            problems,
            Some("The config is invalid; nothing was changed.".to_string()),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        Err(EditRefused::Other(message)) => (Vec::new(), Some(message), StatusCode::CONFLICT),
    };
    let draft = Draft { base: form.base, yaml: form.yaml, comment: form.comment };
    editor_page(session.csrf, draft, problems, error, status)
}

#[derive(Deserialize)]
pub(crate) struct CsrfOnly {
    #[serde(default)]
    pub(crate) csrf: String,
}

/// `POST /confirm`.
pub(crate) async fn confirm<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    ClientAddr(client): ClientAddr,
    Form(form): Form<CsrfOnly>,
) -> Response {
    let session = match checked(&app, &headers, &form.csrf) {
        Ok(s) => s,
        Err(denied) => return denied.into_response(),
    };
    settled(&app, session, app.backend.confirm(client).await)
}

/// `POST /rollback`: rolls the pending apply back now.
pub(crate) async fn rollback<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    ClientAddr(client): ClientAddr,
    Form(form): Form<CsrfOnly>,
) -> Response {
    let session = match checked(&app, &headers, &form.csrf) {
        Ok(s) => s,
        Err(denied) => return denied.into_response(),
    };
    settled(&app, session, app.backend.rollback(client).await)
}

/// Back to the overview; refused (the confirm already settled, say), the overview as it is now
/// with the daemon's reason, 409.
pub(crate) fn settled<B: Backend>(
    app: &AppState<B>,
    session: Session,
    outcome: Result<(), String>,
) -> Response {
    match outcome {
        Ok(()) => Redirect::to("/").into_response(),
        Err(e) => crate::overview_page(app, session.csrf, Some(e), StatusCode::CONFLICT),
    }
}

/// `GET /confirm/countdown`: the seconds left (htmx polls it every second).
pub(crate) async fn countdown<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    _: SignedIn,
) -> Response {
    let confirm = app.backend.overview().pending_confirm.map(|c| {
        let left = c.deadline_unix.saturating_sub(now_unix());
        (c.generation, left, c.deadline)
    });
    let settled = confirm.is_none();
    match (CountdownFragment { confirm }).render() {
        // Confirmed or rolled back meanwhile: htmx reloads the page, whose figures (generation,
        // operations, the Confirm buttons) are those of before.
        Ok(html) if settled => ([("hx-refresh", "true")], Html(html)).into_response(),
        Ok(html) => Html(html).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// `GET /banner`: what every page shows above its content while it holds (htmx loads it with
/// the page): the config file that did not load at start, and what runs instead.
pub(crate) async fn banner<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    SignedIn(session): SignedIn,
) -> Response {
    let view = app.backend.overview();
    let dismissed = app.dismissed.lock().map(|d| d.clone()).unwrap_or_default();
    let fragment = BannerFragment {
        csrf: session.csrf,
        fallback: view.config_fallback,
        confirm: view.pending_confirm,
        timed_out: view.timed_out.filter(|t| dismissed.as_deref() != Some(t.at.as_str())),
    };
    match fragment.render() {
        Ok(html) => Html(html).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

#[derive(Deserialize)]
pub(crate) struct DismissForm {
    #[serde(default)]
    csrf: String,
    /// The `at` of the notice dismissed.
    at: String,
}

/// `POST /notice/dismiss`: the timed-out apply's notice leaves every page (until another).
pub(crate) async fn dismiss<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    Form(form): Form<DismissForm>,
) -> Response {
    if let Err(denied) = checked(&app, &headers, &form.csrf) {
        return denied.into_response();
    }
    if let Ok(mut dismissed) = app.dismissed.lock() {
        *dismissed = Some(form.at);
    }
    Redirect::to("/").into_response()
}

/// Seconds since the Unix epoch now (0 before 1970).
pub(crate) fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The lines of unified diff `diff`, classed, its `---`/`+++` header lines as `file` (not as
/// a removed and an added line).
fn yaml_changes(diff: &str) -> Vec<crate::history::DiffLine> {
    let mut lines = crate::history::diff_lines(diff);
    for line in lines.iter_mut().take(2) {
        if line.text.starts_with("--- ") || line.text.starts_with("+++ ") {
            line.class = "file";
        }
    }
    lines
}

/// `POST /config/plan`: the plan diff of the editor's text (changes nothing): the YAML diff
/// against the running config and the operations, with an Apply form carrying the same text,
/// base and comment, whose Edit button takes them back to the editor (`POST /config/edit`);
/// the editor with the problems when it does not validate.
pub(crate) async fn plan<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    Form(form): Form<YamlForm>,
) -> Response {
    let session = match checked(&app, &headers, &form.csrf) {
        Ok(s) => s,
        Err(denied) => return denied.into_response(),
    };
    let asked = std::time::Instant::now();
    match app.backend.plan(form.yaml.clone()).await {
        Ok(plan) => {
            let planned = asked.elapsed();
            let (running, diff) = app.backend.config_diff(&form.yaml);
            let page = PlanPage {
                assets: Links::get(),
                signed_in: true,
                csrf: session.csrf,
                yaml: form.yaml,
                base: form.base,
                comment: form.comment,
                plan,
                running,
                changes: yaml_changes(&diff),
            };
            let mut response = render(&page, StatusCode::OK);
            // W3C Server Timing: the browser's developer tools (and the benchmark) read where
            // the time went.
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
            let timing = format!(
                "plan;dur={:.1};desc=\"engine plan\", render;dur={:.1};desc=\"page render\"",
                ms(planned),
                ms(asked.elapsed() - planned)
            );
            if let Ok(value) = axum::http::HeaderValue::from_str(&timing) {
                response.headers_mut().insert("server-timing", value);
            }
            response
        }
        Err(refused) => {
            let (problems, error) = match refused {
                EditRefused::Invalid(p) => {
                    (p, "The config is invalid; nothing was planned.".to_string())
                }
                EditRefused::Other(m) => (Vec::new(), m),
                EditRefused::Stale(s) => {
                    (Vec::new(), format!("generation {} was applied meanwhile", s.current))
                }
            };
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            let draft = Draft { base: form.base, yaml: form.yaml, comment: form.comment };
            editor_page(session.csrf, draft, problems, Some(error), status)
        }
    }
}
