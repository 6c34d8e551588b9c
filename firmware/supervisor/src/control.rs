//! The control API: HTTP+JSON on a Unix socket (default `/run/routerd/control.sock`, mode
//! 0600 in a 0700 directory). Endpoints and shapes are in `docs/control-api.md`; `routerctl`
//! and the web UI's JSON endpoints use these handlers.
//!
//! Handlers never touch the engine: they read the daemon's latest snapshot (a `watch`
//! receiver) and send triggers to the reconcile loop.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use routerd_engine::ResultDocument;
use routerd_ledger::{Channel, GenerationRecord};
use routerd_model::status::{CheckStatus, DaemonStatus, ResourceStatus};
use serde::{Deserialize, Serialize};
use tokio::net::UnixListener;
use tokio::sync::{mpsc, oneshot, watch};

use crate::daemon::{
    Actor, ApplyOutcome, ApplyRequest, ChangeRefused, EngineAnswer, EngineQuery, Msg,
    RollbackRequest, STOPPING, Stopping, Trigger, request,
};
use crate::metrics::Metrics;

/// Default confirm window of `POST /v1/apply`.
const DEFAULT_CONFIRM_SECONDS: u64 = 90;
/// Longest confirm window `POST /v1/apply` takes: a day (the web editor allows less).
const MAX_CONFIRM_SECONDS: u64 = 86_400;

/// Default path of the control socket.
pub const DEFAULT_SOCKET: &str = "/run/routerd/control.sock";

/// What the reconcile loop publishes after each reconcile.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The status document.
    pub status: DaemonStatus,
    /// The last Result document, `None` before the first reconcile finished.
    pub result: Option<Arc<ResultDocument>>,
    /// Per-resource statuses after the last reconcile, ordered by ID.
    pub resources: Arc<Vec<ResourceStatus>>,
    /// The applied config's text.
    pub yaml: Arc<str>,
}

/// Shared by every handler.
#[derive(Clone)]
struct ControlState {
    snapshot: watch::Receiver<Snapshot>,
    loop_tx: mpsc::Sender<Msg>,
    metrics: Arc<Metrics>,
}

/// An error body: `{"error": "..."}`.
#[derive(Serialize)]
struct ErrorBody {
    error: String,
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(ErrorBody { error: message.to_string() })).into_response()
}

/// The router of the control API.
pub fn router(
    snapshot: watch::Receiver<Snapshot>,
    loop_tx: mpsc::Sender<Msg>,
    metrics: Arc<Metrics>,
    ota: Arc<crate::ota::Updates>,
) -> Router {
    let ota = Router::new()
        .route("/v1/ota", get(crate::ota::status))
        .route("/v1/ota/mark", post(crate::ota::mark))
        .route("/v1/ota/inspect", post(crate::ota::inspect))
        .route("/v1/ota/install", post(crate::ota::install))
        .with_state(ota);
    Router::new()
        .route("/v1/status", get(status))
        .route("/v1/result", get(result))
        .route("/v1/resources", get(resources))
        .route("/v1/doctor", get(doctor))
        .route("/v1/dns", get(dns))
        .route("/v1/plan", post(plan))
        .route("/v1/adopt", post(adopt))
        .route("/v1/ledger", get(ledger))
        .route("/v1/graph", get(graph))
        .route("/v1/reconcile", post(reconcile))
        .route("/v1/apply", post(apply))
        .route("/v1/confirm", post(confirm))
        .route("/v1/rollback", post(rollback))
        .route("/v1/generations", get(generations))
        .route("/v1/generations/{generation}", get(generation))
        .route("/v1/generations/{from}/diff/{to}", get(diff))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such endpoint") })
        .route("/v1/passwd", post(passwd))
        .route("/metrics", get(metrics_text))
        .with_state(ControlState { snapshot, loop_tx, metrics })
        .merge(ota)
}

/// Body of `POST /v1/apply`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ApplyBody {
    yaml: String,
    #[serde(default)]
    comment: String,
    #[serde(default = "default_author")]
    author: String,
    #[serde(default = "default_channel")]
    channel: Channel,
    /// Seconds; 0 applies without a confirm window.
    #[serde(default = "default_confirm")]
    confirm_timeout_seconds: u64,
    /// The address the client reaches the router from (lockout guard).
    client_address: Option<std::net::IpAddr>,
    /// The generation the text was edited from: another applied since refuses the apply (409
    /// with `baseGeneration` and `currentGeneration`) instead of undoing it unseen.
    base_generation: Option<u64>,
}

fn default_author() -> String {
    "root".into()
}

fn default_channel() -> Channel {
    Channel::Api
}

fn default_confirm() -> u64 {
    DEFAULT_CONFIRM_SECONDS
}

/// Body of `POST /v1/rollback` (optional).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RollbackBody {
    generation: Option<u64>,
    /// Who asks (recorded as the new generation's author).
    #[serde(default = "default_author")]
    author: String,
    /// Through which door.
    #[serde(default = "default_channel")]
    channel: Channel,
    /// Seconds of the confirm window a rollback to `generation` opens, as an apply's (0: none).
    /// Rolling back a pending apply opens none.
    #[serde(default = "default_confirm")]
    confirm_timeout_seconds: u64,
    /// Why (recorded after "rollback to generation N").
    #[serde(default)]
    comment: String,
    /// The address the client reaches the router from (lockout guard).
    client_address: Option<std::net::IpAddr>,
}

impl Default for RollbackBody {
    fn default() -> Self {
        Self {
            generation: None,
            author: default_author(),
            channel: default_channel(),
            confirm_timeout_seconds: default_confirm(),
            comment: String::new(),
            client_address: None,
        }
    }
}

/// Body of `POST /v1/confirm` (optional): who confirms, for the log.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ConfirmBody {
    #[serde(default = "default_author")]
    author: String,
    #[serde(default = "default_channel")]
    channel: Channel,
}

impl Default for ConfirmBody {
    fn default() -> Self {
        Self { author: default_author(), channel: default_channel() }
    }
}

/// An optional JSON body: empty means `T::default()`; malformed gives the message of a 400.
fn optional_body<T: serde::de::DeserializeOwned + Default>(body: &[u8]) -> Result<T, String> {
    if body.is_empty() {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| format!("request body: {e}"))
}

/// Sends `make(reply)` to the loop and answers with what it replies.
async fn ask(
    state: &ControlState,
    make: impl FnOnce(oneshot::Sender<Result<ApplyOutcome, ChangeRefused>>) -> Msg,
) -> Response {
    match call(state, make).await {
        Ok(outcome) => Json(outcome).into_response(),
        Err(response) => response,
    }
}

/// 503: the loop is gone.
fn stopping() -> Response {
    error(StatusCode::SERVICE_UNAVAILABLE, STOPPING)
}

/// The loop's answer to `make`; its refusal, or the loop being gone, as the error response.
async fn call<T>(
    state: &ControlState,
    make: impl FnOnce(oneshot::Sender<Result<T, ChangeRefused>>) -> Msg,
) -> Result<T, Response> {
    match request(&state.loop_tx, make).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(refusal)) => Err(refused(refusal)),
        Err(Stopping) => Err(stopping()),
    }
}

fn refused(refusal: ChangeRefused) -> Response {
    match refusal {
        ChangeRefused::Invalid(errors) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            Json(serde_json::json!({
                "error": format!("the config is invalid ({} errors); nothing was changed", errors.len()),
                "errors": errors,
            })),
        )
            .into_response(),
        ChangeRefused::Conflict(m) => error(StatusCode::CONFLICT, &m),
        ChangeRefused::Stale { base, current } => (
            StatusCode::CONFLICT,
            Json(serde_json::json!({
                "error": crate::web::stale_sentence(base, current),
                "baseGeneration": base,
                "currentGeneration": current,
            })),
        )
            .into_response(),
        ChangeRefused::NotFound(m) => error(StatusCode::NOT_FOUND, &m),
        ChangeRefused::Failed(m) => error(StatusCode::INTERNAL_SERVER_ERROR, &m),
    }
}

async fn apply(State(state): State<ControlState>, body: axum::body::Bytes) -> Response {
    let body: ApplyBody = match serde_json::from_slice(&body) {
        Ok(b) => b,
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("request body: {e}")),
    };
    if body.confirm_timeout_seconds > MAX_CONFIRM_SECONDS {
        let message = format!("confirmTimeoutSeconds must be at most {MAX_CONFIRM_SECONDS}");
        return error(StatusCode::BAD_REQUEST, &message);
    }
    let request = ApplyRequest {
        yaml: body.yaml,
        source: "apply".into(),
        author: body.author,
        channel: body.channel,
        comment: body.comment,
        confirm: (body.confirm_timeout_seconds > 0)
            .then(|| std::time::Duration::from_secs(body.confirm_timeout_seconds)),
        client: body.client_address,
        base: body.base_generation,
    };
    ask(&state, |reply| Msg::Apply(request, reply)).await
}

async fn confirm(State(state): State<ControlState>, body: axum::body::Bytes) -> Response {
    let body: ConfirmBody = match optional_body(&body) {
        Ok(b) => b,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    let by = Actor::control_socket(body.author, body.channel);
    ask(&state, |reply| Msg::Confirm(by, reply)).await
}

async fn rollback(State(state): State<ControlState>, body: axum::body::Bytes) -> Response {
    let body: RollbackBody = match optional_body(&body) {
        Ok(b) => b,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    let by =
        Actor { client: body.client_address, ..Actor::control_socket(body.author, body.channel) };
    let request = RollbackRequest {
        target: body.generation,
        by,
        confirm: (body.confirm_timeout_seconds > 0)
            .then(|| std::time::Duration::from_secs(body.confirm_timeout_seconds)),
        comment: body.comment,
    };
    ask(&state, |reply| Msg::Rollback(request, reply)).await
}

async fn history(
    state: &ControlState,
    which: Option<u64>,
) -> Result<Vec<GenerationRecord>, Response> {
    call(state, |tx| Msg::Generations(which, tx)).await
}

/// Every generation, oldest first, without its text.
async fn generations(State(state): State<ControlState>) -> Response {
    match history(&state, None).await {
        Ok(records) => {
            let list: Vec<serde_json::Value> = records
                .iter()
                .map(|r| {
                    let mut v = serde_json::to_value(r).unwrap_or_default();
                    if let Some(o) = v.as_object_mut() {
                        o.remove("yaml");
                    }
                    v
                })
                .collect();
            Json(list).into_response()
        }
        Err(response) => response,
    }
}

/// One generation with its text.
async fn generation(
    State(state): State<ControlState>,
    UrlPath(generation): UrlPath<u64>,
) -> Response {
    match history(&state, Some(generation)).await {
        Ok(mut records) => match records.pop() {
            Some(r) => Json(r).into_response(),
            None => error(StatusCode::NOT_FOUND, &format!("no generation {generation}")),
        },
        Err(response) => response,
    }
}

async fn status(State(state): State<ControlState>) -> Json<DaemonStatus> {
    Json(state.snapshot.borrow().status.clone())
}

async fn resources(State(state): State<ControlState>) -> Json<Arc<Vec<ResourceStatus>>> {
    Json(Arc::clone(&state.snapshot.borrow().resources))
}

async fn result(State(state): State<ControlState>) -> Response {
    let result = state.snapshot.borrow().result.clone();
    match result {
        Some(doc) => Json(doc).into_response(),
        None => error(StatusCode::NOT_FOUND, "no reconcile has finished yet"),
    }
}

/// Asks for a reconcile now; 202 once queued (a queued one already covers this request).
async fn reconcile(State(state): State<ControlState>) -> Response {
    match state.loop_tx.try_send(Msg::Reconcile(Trigger::Api)) {
        Ok(()) | Err(mpsc::error::TrySendError::Full(_)) => {
            (StatusCode::ACCEPTED, Json(serde_json::json!({"accepted": true}))).into_response()
        }
        Err(mpsc::error::TrySendError::Closed(_)) => stopping(),
    }
}

/// A bound control socket; the file is removed on drop. Bound outside any runtime (a std
/// listener), so that the thread that serves it can take it into its own runtime.
pub struct ControlSocket {
    listener: Option<std::os::unix::net::UnixListener>,
    path: PathBuf,
}

impl ControlSocket {
    /// Binds `path`: creates its directory (0700) if missing, replaces a stale socket file
    /// (one nobody answers on), and makes the socket 0600.
    ///
    /// Errors: another daemon answers on `path` (`AddrInUse`), or the directory, file or bind
    /// fails.
    pub fn bind(path: &Path) -> io::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.exists()
        {
            std::fs::create_dir_all(dir)?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        if path.exists() {
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("another routerd answers on {}", path.display()),
                ));
            }
            std::fs::remove_file(path)?;
        }
        let listener = std::os::unix::net::UnixListener::bind(path)?;
        listener.set_nonblocking(true)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        Ok(Self { listener: Some(listener), path: path.to_path_buf() })
    }

    /// Serves `router` on the current runtime until the process stops.
    pub async fn serve(mut self, router: Router) -> io::Result<()> {
        let listener = self.listener.take().ok_or_else(|| io::Error::other("already served"))?;
        axum::serve(UnixListener::from_std(listener)?, router).await
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The unified diff (3 lines of context) of two generations' texts.
async fn diff(
    State(state): State<ControlState>,
    UrlPath((from, to)): UrlPath<(u64, u64)>,
) -> Response {
    let old = match history(&state, Some(from)).await {
        Ok(mut records) => records.pop().map(|r| r.yaml).unwrap_or_default(),
        Err(response) => return response,
    };
    let new = match history(&state, Some(to)).await {
        Ok(mut records) => records.pop().map(|r| r.yaml).unwrap_or_default(),
        Err(response) => return response,
    };
    let diff = unified_diff(from, &old, to, &new);
    Json(serde_json::json!({"from": from, "to": to, "diff": diff})).into_response()
}

/// The unified diff (3 lines of context) from generation `from`'s text to `to`'s.
pub fn unified_diff(from: u64, old: &str, to: u64, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("generation {from}"), &format!("generation {to}"))
        .to_string()
}

/// Query of `GET /v1/doctor`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DoctorQuery {
    area: Option<String>,
}

/// The doctor's checks (of one area with `?area=`), with counts per status.
async fn doctor(State(state): State<ControlState>, query: Query<DoctorQuery>) -> Response {
    let Ok(mut checks) = request(&state.loop_tx, Msg::Doctor).await else {
        return stopping();
    };
    if let Some(area) = &query.area {
        checks.retain(|c| &c.area == area);
        if checks.is_empty() {
            return error(StatusCode::NOT_FOUND, &format!("no checks in area {area:?}"));
        }
    }
    let count = |s: CheckStatus| checks.iter().filter(|c| c.status == s).count();
    let summary = serde_json::json!({
        "pass": count(CheckStatus::Pass),
        "warn": count(CheckStatus::Warn),
        "fail": count(CheckStatus::Fail),
        "skip": count(CheckStatus::Skip),
    });
    Json(serde_json::json!({"checks": checks, "summary": summary})).into_response()
}

/// The DNS controller's servers, zones and RRsets as the last reconcile found them, and the
/// `dns` checks, run now ([`crate::dns_view`]); before the first reconcile `observed` is false
/// and only the checks are there.
async fn dns(State(state): State<ControlState>) -> Response {
    match crate::dns_view::read(&state.snapshot, &state.loop_tx).await {
        Ok(Ok(view)) => Json(view).into_response(),
        Ok(Err(refusal)) => refused(refusal),
        Err(Stopping) => stopping(),
    }
}

/// `?format=table` asks for the 80-column text instead of JSON.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Format {
    format: Option<String>,
}

impl Format {
    fn table(&self) -> bool {
        self.format.as_deref() == Some("table")
    }
}

async fn engine(state: &ControlState, query: EngineQuery) -> Result<EngineAnswer, Response> {
    call(state, |tx| Msg::Engine(query, tx)).await
}

fn document(answer: EngineAnswer, format: &Format) -> Response {
    match answer {
        EngineAnswer::Document(doc) if format.table() => {
            routerd_engine::table::render(&doc).into_response()
        }
        EngineAnswer::Document(doc) => Json(doc).into_response(),
        _ => error(StatusCode::INTERNAL_SERVER_ERROR, "unexpected engine answer"),
    }
}

/// Body of `POST /v1/plan` (optional).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PlanBody {
    yaml: Option<String>,
}

/// What a reconcile of the given YAML (or of the applied config) would do. Changes nothing.
async fn plan(
    State(state): State<ControlState>,
    format: Query<Format>,
    body: axum::body::Bytes,
) -> Response {
    let body: PlanBody = match optional_body(&body) {
        Ok(b) => b,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    match engine(&state, EngineQuery::Plan(body.yaml)).await {
        Ok(answer) => document(answer, &format),
        Err(response) => response,
    }
}

/// Body of `POST /v1/adopt`.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct AdoptBody {
    #[serde(default)]
    apply: bool,
    /// Only these candidates (`kind/name`); every matching one when absent.
    artifacts: Option<Vec<String>>,
}

/// Adoption candidates; with `{"apply": true}` the matching ones become owned (ledger only).
async fn adopt(
    State(state): State<ControlState>,
    format: Query<Format>,
    body: axum::body::Bytes,
) -> Response {
    let body: AdoptBody = match optional_body(&body) {
        Ok(b) => b,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message),
    };
    match engine(&state, EngineQuery::Adopt { apply: body.apply, only: body.artifacts }).await {
        Ok(answer) => document(answer, &format),
        Err(response) => response,
    }
}

/// Every ledger entry with its recorded attributes.
async fn ledger(State(state): State<ControlState>) -> Response {
    match engine(&state, EngineQuery::Ledger).await {
        Ok(EngineAnswer::Entries(entries)) => {
            let list: Vec<serde_json::Value> = entries
                .iter()
                .map(|e| {
                    let mut v = serde_json::to_value(e).unwrap_or_default();
                    if let Some(o) = v.as_object_mut() {
                        // The state is not part of the stored entry; the API shows it.
                        let state = match e.state {
                            routerd_ledger::EntryState::Pending => "pending",
                            routerd_ledger::EntryState::Owned => "owned",
                        };
                        o.insert("state".into(), state.into());
                    }
                    v
                })
                .collect();
            Json(list).into_response()
        }
        Ok(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "unexpected engine answer"),
        Err(response) => response,
    }
}

/// The applied config's planned transition as Graphviz DOT (`| dot -Tsvg`).
async fn graph(State(state): State<ControlState>) -> Response {
    match engine(&state, EngineQuery::Graph).await {
        Ok(EngineAnswer::Dot(dot)) => {
            ([(axum::http::header::CONTENT_TYPE, "text/vnd.graphviz")], dot).into_response()
        }
        Ok(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "unexpected engine answer"),
        Err(response) => response,
    }
}

/// Prometheus text exposition.
async fn metrics_text(State(state): State<ControlState>) -> Response {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.encode(),
    )
        .into_response()
}

/// Body of `POST /v1/passwd`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PasswdBody {
    password: String,
}

/// Sets the admin password (root only: the socket is 0600). 204; 409 when too short.
async fn passwd(State(state): State<ControlState>, body: axum::body::Bytes) -> Response {
    let body: PasswdBody = match serde_json::from_slice(&body) {
        Ok(b) => b,
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("request body: {e}")),
    };
    match call(&state, |tx| Msg::Passwd(body.password, tx)).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(response) => response,
    }
}

/// What the fuzz target (`fuzz/fuzz_targets/control.rs`) and the tests share: the router over
/// a stand-in reconcile loop, the endpoints, and how a fuzz input becomes a request. Built for
/// the tests and with the `fuzzing` feature only, so the daemon does not carry it.
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing {
    use std::sync::Arc;

    use axum::Router;
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use routerd_engine::ResultDocument;
    use routerd_model::status::DaemonStatus;
    use tokio::sync::{mpsc, watch};
    use tower::ServiceExt;

    use super::{Snapshot, router};
    use crate::daemon::Msg;
    use crate::metrics::Metrics;

    /// Valid requests of every JSON endpoint: (method, path, body). The seeds of the variant
    /// test and of the fuzz corpus, whose inputs name their endpoint by its index here: append
    /// only.
    pub const SEEDS: [(&str, &str, &str); 9] = [
        (
            "POST",
            "/v1/apply",
            r#"{"yaml": "apiVersion: routerd.net/v1alpha1\n", "comment": "c", "author": "admin", "channel": "cli", "confirmTimeoutSeconds": 90, "clientAddress": "192.168.50.10"}"#,
        ),
        ("POST", "/v1/plan", r#"{"yaml": "kind: Router\n"}"#),
        ("POST", "/v1/plan", ""),
        ("POST", "/v1/adopt", r#"{"apply": true, "artifacts": ["nft.table/inet/routerd_nat"]}"#),
        ("POST", "/v1/rollback", r#"{"generation": 3}"#),
        ("POST", "/v1/passwd", r#"{"password": "correct horse"}"#),
        ("POST", "/v1/confirm", ""),
        ("GET", "/v1/doctor?area=reconcile", ""),
        ("GET", "/v1/generations/3/diff/4", ""),
    ];

    /// The control API over a loop that drops every message (its handlers answer 503) and a
    /// snapshot of a fresh daemon. Call inside a tokio runtime: it spawns the loop there.
    pub fn api() -> Router {
        let (loop_tx, mut loop_rx) = mpsc::channel::<Msg>(64);
        tokio::spawn(async move { while loop_rx.recv().await.is_some() {} });
        api_over(None, loop_tx)
    }

    /// The control API over the loop `loop_tx` reaches and the snapshot of a fresh daemon whose
    /// last reconcile gave `result` (`None`: none has finished).
    pub fn api_over(result: Option<Arc<ResultDocument>>, loop_tx: mpsc::Sender<Msg>) -> Router {
        let snapshot = Snapshot {
            status: DaemonStatus {
                config: "router.yaml".into(),
                netns: None,
                state: routerd_model::status::DaemonState::Running,
                generation: 1,
                observed_generation: Some(1),
                phase: None,
                reconciles: 1,
                last_reconcile: None,
                last_error: None,
                pending_confirm: None,
                config_fallback: None,
                last_timed_out: None,
                last_apply: None,
                last_repair: None,
            },
            result,
            resources: Arc::new(Vec::new()),
            yaml: Arc::from(""),
        };
        let (keep, snapshot) = watch::channel(snapshot);
        // The sender lives as long as the process: a closed channel is not what is tested.
        std::mem::forget(keep);
        let options = crate::ota::OtaOptions {
            health_gate: false,
            health_window: std::time::Duration::from_secs(60),
            rauc_bus: Some("unix:path=/nonexistent".into()),
            state_file: "/nonexistent/gate".into(),
            reboot: false,
            staging_dir: "/nonexistent/staging".into(),
            fetch_local: false,
        };
        let ota = Arc::new(crate::ota::Updates::new(options));
        router(snapshot, loop_tx, Arc::new(Metrics::new()), ota)
    }

    /// The request of a fuzz input: its first byte picks the endpoint in [`SEEDS`] (modulo
    /// their number), the rest is the body. `None` for an empty input.
    pub fn request(input: &[u8]) -> Option<Request<Body>> {
        let (&first, body) = input.split_first()?;
        let (method, path, _) = SEEDS[usize::from(first) % SEEDS.len()];
        Request::builder()
            .method(method)
            .uri(path)
            .header("content-type", "application/json")
            .body(Body::from(body.to_vec()))
            .ok()
    }

    /// Sends a fuzz input to `api` and reads the answer to its end. The answer's status
    /// (`None` for an empty input); an error names the request and what went wrong: a 500 or
    /// a body that cannot be read.
    pub async fn check(api: &Router, input: &[u8]) -> Result<Option<StatusCode>, String> {
        let Some(request) = request(input) else {
            return Ok(None);
        };
        let what = format!(
            "{} {} {:?}",
            request.method(),
            request.uri(),
            String::from_utf8_lossy(&input[1..input.len().min(301)])
        );
        let Ok(response) = api.clone().oneshot(request).await;
        let status = response.status();
        if status == StatusCode::INTERNAL_SERVER_ERROR {
            return Err(format!("{what}: {status}"));
        }
        axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .map_err(|e| format!("{what}: {status}, reading the body: {e}"))?;
        Ok(Some(status))
    }
}

#[cfg(test)]
#[path = "control_tests.rs"]
mod tests;
