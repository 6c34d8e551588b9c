//! routerd's onboard web UI: server-rendered askama pages with htmx, every asset embedded
//! (`assets.rs`), behind a login.
//!
//! The UI never touches the engine or the host: it asks a [`Backend`] (the supervisor) for
//! snapshots and credential checks. This first part has the login (no default password: a
//! one-time setup token, then argon2id), sessions, CSRF tokens, login rate limiting, strict
//! security headers and the overview page.
//!
//! ```text
//! browser ──▶ security headers ──▶ /assets/* (hashed, immutable)
//!                                 /login, /setup (no session)
//!                                 /, POST /logout (session; POST needs its CSRF token)
//! ```

mod adopt;
mod artifacts;
mod assets;
mod auth;
mod charts;
mod config;
mod dns;
mod doctor;
mod graph;
mod history;
mod ledger;
mod nav;
mod ota;
mod overview;

use std::future::Future;
use std::net::IpAddr;
use std::net::SocketAddr;
use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Form, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use routerd_model::dns_view::DnsView;
use serde::Deserialize;
use tokio::sync::{mpsc, watch};

pub use crate::artifacts::{ArtifactRow, ArtifactStatus};
pub use crate::charts::{
    GatewayPoint, GatewaySeries, LinkPoint, LinkSeries, ReconcilePoint, SeriesView,
};
pub use crate::graph::{DRAW_UP_TO, GraphChoice, GraphShown, GraphSvg, WHOLE_UP_TO, render_svg};
pub(crate) use crate::overview::overview_page;

use crate::assets::Links;
use crate::auth::{HASH_QUEUE, Hasher, LoginGate, LoginRefused, Sessions};

/// What the UI needs from the daemon.
pub trait Backend: Send + Sync + 'static {
    /// The overview's figures, from the daemon's latest snapshot.
    fn overview(&self) -> Overview;
    /// Prometheus metrics in the OpenMetrics text format (served without a session, for a
    /// scraper, like the control socket's `/metrics`).
    fn metrics(&self) -> String;
    /// Whether an admin password is set (if not, the setup page is the way in).
    fn password_set(&self) -> bool;
    /// Whether `password` is the admin password (argon2id: slow on purpose).
    fn verify_password(&self, password: &str) -> bool;
    /// A value that changes whenever the admin password is set (web or console); sessions
    /// made under another value are over.
    fn credentials_stamp(&self) -> String;
    /// Whether `token` is the one-time setup token.
    fn verify_setup_token(&self, token: &str) -> bool;
    /// Sets the admin password; the error is shown to the operator.
    fn set_password(&self, password: &str) -> Result<(), String>;
    /// The applied config's generation and text, as written (read together: the editor's
    /// base).
    fn config_text(&self) -> (u64, String);
    /// The applied config's generation and the unified diff (3 lines of context) from its text
    /// to `yaml`: what the plan page's edit changes in the running config.
    fn config_diff(&self, yaml: &str) -> (u64, String);
    /// Validates `yaml`: its resource count and warnings, or every problem with its location.
    fn validate(&self, yaml: &str) -> Result<Valid, Vec<ConfigProblem>>;
    /// Applies a config (the daemon validates it again and records the generation).
    fn apply(
        &self,
        request: ApplyRequest,
    ) -> impl Future<Output = Result<ApplyView, EditRefused>> + Send;
    /// Confirms the pending apply, asked from `client` (logged as a security event).
    fn confirm(&self, client: IpAddr) -> impl Future<Output = Result<(), String>> + Send;
    /// Rolls the pending apply back now, asked from `client`.
    fn rollback(&self, client: IpAddr) -> impl Future<Output = Result<(), String>> + Send;
    /// What applying `yaml` would do; changes nothing.
    fn plan(&self, yaml: String) -> impl Future<Output = Result<PlanView, EditRefused>> + Send;
    /// Every recorded generation, oldest first.
    fn generations(&self) -> impl Future<Output = Result<Vec<GenerationView>, String>> + Send;
    /// The unified diff of two generations' texts.
    fn diff(&self, from: u64, to: u64) -> impl Future<Output = Result<String, String>> + Send;
    /// Applies an earlier generation's text again (a new generation), with the confirm window
    /// asked for when no apply waits for its confirm.
    fn rollback_to(&self, request: RollbackTo) -> impl Future<Output = Result<(), String>> + Send;
    /// The charts' recent history (interfaces, gateways, reconciles).
    fn series(&self) -> SeriesView;
    /// The adoption candidates of the applied config.
    fn candidates(&self) -> impl Future<Output = Result<Vec<CandidateView>, String>> + Send;
    /// Records the named candidates (`kind/name`) as owned; returns those recorded.
    fn adopt(
        &self,
        artifacts: Vec<String>,
    ) -> impl Future<Output = Result<Vec<String>, String>> + Send;
    /// Every ledger entry, ordered by kind and name.
    fn ledger(&self) -> impl Future<Output = Result<Vec<LedgerRow>, String>> + Send;
    /// Every declared artifact as the last reconcile found it, then the orphans it reported.
    fn artifacts(&self) -> Vec<ArtifactRow>;
    /// The planned transition of the applied config as Graphviz DOT, every artifact.
    fn graph_dot(&self) -> impl Future<Output = Result<String, String>> + Send;
    /// That graph drawn as `choice` asks ([`render_svg`], run where a layout panic is
    /// contained).
    fn graph_svg(
        &self,
        choice: GraphChoice,
    ) -> impl Future<Output = Result<GraphSvg, String>> + Send;
    /// The applied config's resource IDs, in config order (the graph page's resource picker).
    fn resource_ids(&self) -> Vec<String>;
    /// The doctor's checks, run now.
    fn doctor(&self) -> impl Future<Output = Result<Vec<CheckView>, String>> + Send;
    /// The DNS controller's servers, zones and RRsets from the last reconcile (the data of
    /// owned RRsets from the ledger), and the doctor's `dns` checks, run now: the view
    /// `GET /v1/dns` serves, its checks as the Doctor page shows them.
    fn dns(&self) -> impl Future<Output = Result<DnsView<CheckView>, String>> + Send;
    /// RAUC's slots, the health gate's records and the staged bundle (`docs/ota.md`).
    fn ota(&self) -> impl Future<Output = Result<OtaView, String>> + Send;
    /// Stores an uploaded bundle as the staged one (replacing any before it) and has RAUC
    /// inspect it. `chunks` ends when the upload is complete; an `Err` in it (the browser
    /// went away) abandons the upload. The error is shown to the operator.
    fn ota_upload(
        &self,
        file_name: String,
        chunks: mpsc::Receiver<Result<Bytes, String>>,
    ) -> impl Future<Output = Result<BundleView, String>> + Send;
    /// Downloads the bundle at `url` (http or https) as the staged one and inspects it.
    fn ota_fetch(&self, url: String) -> impl Future<Output = Result<BundleView, String>> + Send;
    /// Deletes the staged bundle.
    fn ota_discard(&self) -> impl Future<Output = ()> + Send;
    /// Starts installing the staged bundle, if its digest is still `digest`, into the other
    /// slot; progress goes to [`Backend::ota_progress`].
    fn ota_install(&self, digest: String) -> impl Future<Output = Result<(), String>> + Send;
    /// The install in progress or the last one, whoever started it (web UI or `routerctl`).
    fn ota_progress(&self) -> watch::Receiver<InstallView>;
    /// Makes `slot` (a slot name) the one the boot loader starts next (RAUC `Mark(active)`).
    fn ota_boot_next(&self, slot: String) -> impl Future<Output = Result<String, String>> + Send;
    /// Reboots the router (through systemd).
    fn reboot(&self) -> impl Future<Output = Result<(), String>> + Send;
}

/// The OTA page: RAUC's view of the slots, the health gate's records and the staged bundle.
#[derive(Clone, Debug, Default)]
pub struct OtaView {
    /// The system's `compatible` (RAUC installs only bundles made for it).
    pub compatible: String,
    /// The booted slot's boot name (`A`).
    pub boot_slot: String,
    /// RAUC's operation: `idle` or `installing`.
    pub operation: String,
    /// RAUC's `LastError` (empty when the last operation succeeded).
    pub last_error: String,
    /// Every slot.
    pub slots: Vec<SlotRow>,
    /// Whether the daemon runs the health gate.
    pub health_gate: bool,
    /// The health gate's records, newest first.
    pub gate: Vec<GateRow>,
    /// The bundle uploaded or downloaded and inspected, waiting for Install.
    pub staged: Option<BundleView>,
}

/// One slot.
#[derive(Clone, Debug, Default)]
pub struct SlotRow {
    /// RAUC's slot name (`rootfs.0`).
    pub name: String,
    /// The boot loader's name for it (`A`), empty for slots it does not boot.
    pub bootname: String,
    /// `booted`, `active` or `inactive`.
    pub state: String,
    /// The boot loader's mark: `good`, `bad` or empty.
    pub boot_status: String,
    /// The version installed in it, empty when unknown.
    pub version: String,
    /// When it was installed (RFC 3339), empty when unknown.
    pub installed: String,
    /// Whether this is the slot running now.
    pub booted: bool,
    /// Whether the boot loader starts this slot next.
    pub primary: bool,
}

/// One health-gate decision (`docs/ota.md`).
#[derive(Clone, Debug, Default)]
pub struct GateRow {
    /// The slot on trial.
    pub slot: String,
    /// Its version.
    pub version: String,
    /// `checking`, `good`, `bad` or `held`.
    pub phase: String,
    /// When the trial began (RFC 3339).
    pub started: String,
    /// When it was decided, empty while checking.
    pub decided: String,
    /// Why.
    pub detail: String,
}

/// A bundle RAUC inspected (signature checked, manifest read), not installed yet.
#[derive(Clone, Debug, Default)]
pub struct BundleView {
    /// Where it came from: the uploaded file's name or the URL.
    pub source: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// The manifest's `compatible`.
    pub compatible: String,
    /// The manifest's version, empty when it has none.
    pub version: String,
    /// The manifest's description, empty when it has none.
    pub description: String,
    /// The manifest's build id, empty when it has none.
    pub build: String,
    /// `verity`, `crypt` or `plain`, empty when RAUC does not say.
    pub format: String,
    /// The digest Install passes back (`manifest-sha256:…` or `file-sha256:…`).
    pub digest: String,
    /// The signing certificate's subject (RFC 4514), empty when it could not be read.
    pub signer: String,
    /// Its issuer and the end of its validity, as a phrase.
    pub signer_issuer: String,
}

/// Where an install stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InstallPhase {
    /// None since the daemon started.
    #[default]
    Idle,
    /// RAUC is installing.
    Running,
    /// The last install succeeded: the other slot boots next.
    Succeeded,
    /// The last install failed; nothing was switched.
    Failed,
}

/// The install in progress or the last one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstallView {
    /// Where it stands.
    pub phase: InstallPhase,
    /// The bundle: its version and where it came from.
    pub bundle: String,
    /// RAUC's overall progress, 0 to 100.
    pub percent: u8,
    /// RAUC's message for the current step.
    pub message: String,
    /// When finished: RAUC's last error on failure, empty on success.
    pub detail: String,
}

/// One doctor check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckView {
    /// `reconcile`, `ledger`, `routes`, …
    pub area: String,
    /// Stable code (`R002`).
    pub code: String,
    /// What is checked.
    pub name: String,
    /// `pass`, `warn`, `fail`, `skip`.
    pub status: String,
    /// What was found.
    pub detail: String,
    /// What to do (warn and fail), as the console prints it.
    pub remedy: String,
    /// What the page offers instead of the console's command (warn and fail): a button label
    /// and the page that does it, `("Review adoption", "/adopt")`. `None`: nothing to click.
    pub action: Option<(String, String)>,
}

/// One ledger entry in the browser.
#[derive(Clone, Debug)]
pub struct LedgerRow {
    /// Artifact kind (`linux.ipv4.route`).
    pub kind: String,
    /// Artifact name.
    pub name: String,
    /// Owner resource ID.
    pub owner: String,
    /// `created` or `adopted`.
    pub origin: String,
    /// `owned` or `pending`.
    pub state: String,
    /// Generation that recorded it.
    pub generation: u64,
}

/// One generation in the history.
#[derive(Clone, Debug)]
pub struct GenerationView {
    /// Its number.
    pub generation: u64,
    /// RFC 3339.
    pub applied_at: String,
    /// `applied`, `pendingConfirm`, `degraded`, `rolledBack`.
    pub result: String,
    /// `web/admin`, `cli/root`, `boot/routerd`.
    pub by: String,
    /// The operator's comment.
    pub comment: String,
}

/// The plan diff of a candidate config.
#[derive(Clone, Debug, Default)]
pub struct PlanView {
    /// The phase the plan reports.
    pub phase: String,
    /// Operations in execution order (a delete and a create of one artifact are a recreate).
    pub operations: Vec<PlanOp>,
    /// Orphans, with what happens to them.
    pub orphans: Vec<OrphanView>,
    /// Existing artifacts the config declares but routerd does not own yet.
    pub candidates: Vec<CandidateView>,
}

/// One planned operation.
#[derive(Clone, Debug)]
pub struct PlanOp {
    /// `create`, `modify`, `delete`.
    pub operation: String,
    /// `kind/name`.
    pub artifact: String,
    /// The resource it belongs to (empty for orphans).
    pub owner: String,
    /// Why.
    pub reason: String,
    /// For a modify: attribute, before (on the host), after (desired).
    pub diff: Vec<AttributeChange>,
}

/// One attribute that changes.
#[derive(Clone, Debug)]
pub struct AttributeChange {
    /// The attribute (`mtu`, `chains.forward.rules`).
    pub attribute: String,
    /// On the host now (JSON).
    pub before: String,
    /// Desired (JSON).
    pub after: String,
}

/// An orphan in a plan.
#[derive(Clone, Debug)]
pub struct OrphanView {
    /// `kind/name`.
    pub artifact: String,
    /// `delete` (reconcile removes it) or `keep`.
    pub cleanup: String,
    /// Why.
    pub reason: String,
    /// What happens or what the operator can do.
    pub remediation: String,
}

/// An adoption candidate in a plan.
#[derive(Clone, Debug)]
pub struct CandidateView {
    /// `kind/name`.
    pub artifact: String,
    /// Matches the config (can be adopted as it is).
    pub adoptable: bool,
    /// The attributes that differ, for a drifted candidate.
    pub differs: Vec<AttributeChange>,
}

/// A config problem with its place in the text.
#[derive(Clone, Debug)]
pub struct ConfigProblem {
    /// 1-based line, 0 when unknown.
    pub line: u32,
    /// 1-based column, 0 when unknown.
    pub column: u32,
    /// The resource ID, when the problem is in one.
    pub resource: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// A config that validates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Valid {
    /// Resources in it.
    pub resources: usize,
    /// `(resource ID, message)` of what applies with a caveat: two resources declaring one
    /// artifact (shared or in conflict), a value the firmware replaces.
    pub warnings: Vec<(String, String)>,
}

/// An apply from the editor.
#[derive(Clone, Debug)]
pub struct ApplyRequest {
    /// The YAML text.
    pub yaml: String,
    /// The confirm window in seconds; 0 applies without one.
    pub confirm_seconds: u64,
    /// The operator's comment.
    pub comment: String,
    /// The browser's address (for the lockout guard).
    pub client: std::net::IpAddr,
    /// The generation the text was edited from; another applied since refuses the apply
    /// ([`EditRefused::Stale`]). `None`: not checked (a form from before bases existed).
    pub base: Option<u64>,
}

/// A rollback to an earlier generation, asked for and confirmed on the History page.
#[derive(Clone, Debug)]
pub struct RollbackTo {
    /// The generation whose text comes back.
    pub generation: u64,
    /// The confirm window in seconds, as an apply's; 0 opens none.
    pub confirm_seconds: u64,
    /// Why (recorded after "rollback to generation N").
    pub comment: String,
    /// The browser's address (for the lockout guard).
    pub client: IpAddr,
}

/// What an apply did.
#[derive(Clone, Debug, Default)]
pub struct ApplyView {
    /// The generation now applied.
    pub generation: u64,
    /// Its phase.
    pub phase: String,
    /// Lockout warnings.
    pub warnings: Vec<String>,
}

/// Why the daemon refused an apply.
#[derive(Clone, Debug)]
pub enum EditRefused {
    /// The config does not validate.
    Invalid(Vec<ConfigProblem>),
    /// The text was edited from an older generation than the one applied now.
    Stale(StaleView),
    /// Anything else, as a sentence (a confirm pending, the lockout guard, a failure).
    Other(String),
}

/// An apply refused because another generation was applied after the one its text was edited
/// from (issue 34 §1: applying it would have undone that one unseen).
#[derive(Clone, Debug, Default)]
pub struct StaleView {
    /// The generation the text was edited from.
    pub base: u64,
    /// The generation applied now.
    pub current: u64,
    /// Who applied `current`, when and why (`root/cli at 2026-11-26T16:30:04Z: comment`).
    pub applied_by: String,
    /// The unified diff from `base`'s text to `current`'s: what the edit would have undone.
    pub changes: String,
    /// The edit re-applied to `current`'s text (a three-way merge, as diff3 does), with
    /// conflict markers where both changed the same lines.
    pub merged: String,
    /// Whether `merged` holds conflict markers.
    pub conflicts: bool,
}

/// The overview page's figures.
#[derive(Clone, Debug, Default)]
pub struct Overview {
    /// Phase of the last reconcile (`Healthy`, …), `-` before the first.
    pub phase: String,
    /// Applied generation.
    pub generation: u64,
    /// When and why the last reconcile ran, as a sentence.
    pub last_reconcile: String,
    /// Why the last reconcile could not run, if it could not.
    pub last_error: Option<String>,
    /// Resources still drifted after the last reconcile.
    pub drifted: usize,
    /// Resources blocked.
    pub blocked: usize,
    /// Orphans reported.
    pub orphans: usize,
    /// Adoption candidates.
    pub candidates: usize,
    /// The last reconcile's operations, at most 20.
    pub operations: Vec<OperationView>,
    /// An apply waiting for its confirm.
    pub pending_confirm: Option<ConfirmView>,
    /// The config file did not load at start: what runs instead (every page's banner).
    pub config_fallback: Option<FallbackView>,
    /// The last apply the confirm timer rolled back (announced on every page until dismissed).
    pub timed_out: Option<TimedOutView>,
    /// When the last reconcile started, seconds since the Unix epoch (0: none yet).
    pub last_reconcile_unix: u64,
    /// The last apply or rollback since the daemon started, apart from the last reconcile.
    pub last_apply: Option<ActivityView>,
    /// The last reconcile that repaired drift (not an apply) since the daemon started.
    pub last_repair: Option<ActivityView>,
}

/// An apply or a repair, for the Overview: who or what, when, why, and its operations by name.
#[derive(Clone, Debug, Default)]
pub struct ActivityView {
    /// The generation an apply made; 0 for a repair.
    pub generation: u64,
    /// Who applied (`admin (web)`), or what triggered a repair (`nftables`, `resync`).
    pub by: String,
    /// The comment typed with an apply.
    pub comment: String,
    /// RFC 3339.
    pub at: String,
    /// Seconds since the Unix epoch (0: unknown).
    pub at_unix: u64,
    /// The first operations.
    pub operations: Vec<OperationView>,
    /// How many operations it ran in all.
    pub total: usize,
}

/// An apply not confirmed in time and rolled back by the daemon's timer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimedOutView {
    /// The generation that was not confirmed.
    pub generation: u64,
    /// The generation whose text came back.
    pub restored: u64,
    /// RFC 3339 time of the rollback (also what a dismissal names).
    pub at: String,
}

/// The config file did not load at start (the daemon's `configFallback`).
#[derive(Clone, Debug, Default)]
pub struct FallbackView {
    /// The generation running instead; `None`: nothing is applied.
    pub running: Option<u64>,
    /// The file's errors, `file:line:column: message`.
    pub errors: Vec<String>,
}

/// One operation in the overview.
#[derive(Clone, Debug)]
pub struct OperationView {
    /// `create`, `modify`, `delete`.
    pub operation: String,
    /// `kind/name`.
    pub artifact: String,
    /// `done`, `failed`, `skipped`, `blocked`.
    pub result: String,
}

/// An apply waiting for its confirm.
#[derive(Clone, Debug)]
pub struct ConfirmView {
    /// The generation that waits.
    pub generation: u64,
    /// The one restored at the deadline.
    pub previous: u64,
    /// RFC 3339.
    pub deadline: String,
    /// The deadline in seconds since the Unix epoch.
    pub deadline_unix: u64,
}

/// Options of the UI.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Served over TLS: session cookies get `Secure`.
    pub tls: bool,
}

pub(crate) struct AppState<B> {
    pub(crate) backend: Arc<B>,
    pub(crate) sessions: Sessions,
    /// Login and setup-token attempts, counted before hashing.
    gate: LoginGate,
    /// Where every password hash runs, one at a time.
    hasher: Hasher,
    options: Options,
    /// The `at` of the timed-out apply whose notice the operator dismissed.
    pub(crate) dismissed: std::sync::Mutex<Option<String>>,
}

/// The UI's routes over `backend`. Serve with
/// `into_make_service_with_connect_info::<SocketAddr>()` so login attempts are counted per
/// client address.
pub fn router<B: Backend>(backend: Arc<B>, options: Options) -> Router {
    let state = Arc::new(AppState {
        backend,
        sessions: Sessions::default(),
        gate: LoginGate::default(),
        hasher: Hasher::new(HASH_QUEUE),
        options,
        dismissed: std::sync::Mutex::new(None),
    });
    Router::new()
        .route("/", get(overview::page::<B>))
        .route("/overview/live", get(overview::live::<B>))
        .route("/overview/charts", get(charts::overview_charts::<B>))
        .route("/interfaces", get(charts::page::<B>))
        .route("/interfaces/charts", get(charts::interfaces_charts::<B>))
        .route("/login", get(login_page::<B>).post(login::<B>))
        .route("/setup", get(setup_page::<B>).post(setup::<B>))
        .route("/logout", post(logout::<B>))
        .route("/config", get(config::editor::<B>))
        .route("/config/validate", post(config::validate::<B>))
        .route("/config/apply", post(config::apply::<B>))
        .route("/config/plan", post(config::plan::<B>))
        .route("/config/edit", post(config::edit::<B>))
        .route("/notice/dismiss", post(config::dismiss::<B>))
        .route("/confirm", post(config::confirm::<B>))
        .route("/rollback", post(config::rollback::<B>))
        .route("/confirm/countdown", get(config::countdown::<B>))
        .route("/banner", get(config::banner::<B>))
        .route("/history", get(history::list::<B>))
        .route("/history/diff", get(history::diff::<B>))
        .route("/history/rollback", get(history::ask::<B>).post(history::rollback::<B>))
        .route("/adopt", get(adopt::page::<B>).post(adopt::approve::<B>))
        .route("/ledger", get(ledger::page::<B>))
        .route("/artifacts", get(artifacts::page::<B>))
        .route("/graph", get(graph::page::<B>))
        .route("/graph.svg", get(graph::svg::<B>))
        .route("/graph.dot", get(graph::dot::<B>))
        .route("/dns", get(dns::page::<B>))
        .route("/doctor", get(doctor::page::<B>))
        .route("/doctor/events", get(doctor::events::<B>))
        .route("/ota", get(ota::page::<B>))
        .route(
            "/ota/upload",
            // A bundle is far larger than axum's default 2 MB body limit; the backend stops
            // an upload that outgrows the room on its data partition.
            post(ota::upload::<B>).layer(axum::extract::DefaultBodyLimit::disable()),
        )
        .route("/ota/fetch", post(ota::fetch::<B>))
        .route("/ota/discard", post(ota::discard::<B>))
        .route("/ota/install", post(ota::install::<B>))
        .route("/ota/events", get(ota::events::<B>))
        .route("/ota/boot-next", post(ota::boot_next::<B>))
        .route("/ota/reboot", post(ota::reboot::<B>))
        .route("/assets/{hashed}", get(assets::serve))
        .route("/metrics", get(metrics::<B>))
        .with_state(state)
        .layer(middleware::from_fn(nav::remember_path))
        .layer(middleware::from_fn(security_headers))
}

/// Strict headers on every response: no inline script or style (CSP), no framing, no MIME
/// sniffing, no referrer, nothing stored by a cache (pages show the router's state and CSRF
/// tokens) but the hashed assets. A state-changing request from another site is refused before
/// it reaches a handler ([`cross_site`]), besides each form's CSRF token.
async fn security_headers(request: Request, next: Next) -> Response {
    if let Some(why) = cross_site(&request) {
        return (StatusCode::FORBIDDEN, why).into_response();
    }
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    let set = |headers: &mut HeaderMap, name: &'static str, value: &'static str| {
        headers.insert(name, HeaderValue::from_static(value));
    };
    // A handler may have set a narrower policy of its own (the graph's SVG).
    if !headers.contains_key("content-security-policy") {
        set(
            headers,
            "content-security-policy",
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
             connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
        );
    }
    set(headers, "x-content-type-options", "nosniff");
    set(headers, "x-frame-options", "DENY");
    set(headers, "referrer-policy", "no-referrer");
    response
}

/// Why a state-changing request (not `GET` or `HEAD`) comes from another site, if it does: the
/// browser's `Sec-Fetch-Site` says `cross-site` or `same-site` (Fetch Metadata, which every
/// current browser sends and which decides when present), or, from an older browser, its
/// `Origin` is not this `Host` (RFC 6454). An `Origin` of `null` decides nothing: our
/// `Referrer-Policy: no-referrer` makes browsers send it for our own forms. Clients that send
/// neither (`curl`) pass on to the CSRF check.
fn cross_site(request: &Request) -> Option<&'static str> {
    if matches!(*request.method(), axum::http::Method::GET | axum::http::Method::HEAD) {
        return None;
    }
    let headers = request.headers();
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = text("sec-fetch-site") {
        return (!matches!(site, "same-origin" | "none"))
            .then_some("refused: a request from another site (Sec-Fetch-Site)");
    }
    let origin = text("origin").filter(|o| *o != "null")?;
    let host = text("host").unwrap_or_default();
    let origin_host = origin.split_once("://").map_or("", |(_, rest)| rest);
    (origin_host.is_empty() || !origin_host.eq_ignore_ascii_case(host))
        .then_some("refused: a request from another origin (Origin)")
}

/// `GET /metrics`: no session needed (a Prometheus scraper has none); counts and timings only,
/// nothing an operator would keep secret.
async fn metrics<B: Backend>(State(app): State<Arc<AppState<B>>>) -> Response {
    let content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    ([(header::CONTENT_TYPE, content_type)], app.backend.metrics()).into_response()
}

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    error: Option<String>,
    needs_setup: bool,
}

#[derive(Template)]
#[template(path = "setup.html")]
struct SetupPage {
    assets: Links,
    signed_in: bool,
    csrf: String,
    error: Option<String>,
    token: String,
}

pub(crate) fn render(page: &impl Template, status: StatusCode) -> Response {
    match page.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(e) => {
            (StatusCode::INTERNAL_SERVER_ERROR, format!("rendering the page: {e}")).into_response()
        }
    }
}

/// The client's address (0.0.0.0 when the server was not set up to record it).
pub(crate) struct ClientAddr(pub(crate) std::net::IpAddr);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        let addr = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(a)| a.ip());
        Ok(Self(addr.unwrap_or(std::net::IpAddr::from([0, 0, 0, 0]))))
    }
}

async fn login_page<B: Backend>(State(app): State<Arc<AppState<B>>>) -> Response {
    let page = LoginPage {
        assets: Links::get(),
        signed_in: false,
        csrf: String::new(),
        error: None,
        needs_setup: !app.backend.password_set(),
    };
    render(&page, StatusCode::OK)
}

#[derive(Deserialize)]
struct LoginForm {
    password: String,
}

async fn login<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    ClientAddr(from): ClientAddr,
    Form(form): Form<LoginForm>,
) -> Response {
    let failed = |error: String, status: StatusCode| {
        let page = LoginPage {
            assets: Links::get(),
            signed_in: false,
            csrf: String::new(),
            error: Some(error),
            needs_setup: false,
        };
        render(&page, status)
    };
    let refused = |refusal: LoginRefused| failed(refusal.message(), StatusCode::TOO_MANY_REQUESTS);
    if let Err(refusal) = app.gate.reserve(from) {
        tracing::warn!("login refused before checking from {from}: {refusal:?}");
        return refused(refusal);
    }
    let backend = Arc::clone(&app.backend);
    let password = form.password;
    let ok = match app.hasher.run(move || backend.verify_password(&password)).await {
        Ok(ok) => ok,
        Err(refusal) => {
            app.gate.release(from);
            tracing::warn!("login refused before checking from {from}: {refusal:?}");
            return refused(refusal);
        }
    };
    if !ok {
        tracing::warn!("login failed for admin from {from}");
        return failed("Wrong password.".into(), StatusCode::UNAUTHORIZED);
    }
    app.gate.succeeded(from);
    tracing::info!("login of admin from {from}");
    let (id, _) = app.sessions.create(app.backend.credentials_stamp());
    let mut response = Redirect::to("/").into_response();
    if let Ok(cookie) = HeaderValue::from_str(&auth::cookie(&id, app.options.tls)) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// `?token=` prefills the setup form (the link the demo prints).
#[derive(Deserialize, Default)]
struct SetupQuery {
    #[serde(default)]
    token: String,
}

async fn setup_page<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    axum::extract::Query(query): axum::extract::Query<SetupQuery>,
) -> Response {
    if app.backend.password_set() {
        return Redirect::to("/login").into_response();
    }
    let page = SetupPage {
        assets: Links::get(),
        signed_in: false,
        csrf: String::new(),
        error: None,
        token: query.token,
    };
    render(&page, StatusCode::OK)
}

#[derive(Deserialize)]
struct SetupForm {
    token: String,
    password: String,
    again: String,
}

async fn setup<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    ClientAddr(from): ClientAddr,
    Form(form): Form<SetupForm>,
) -> Response {
    let failed = |error: &str, status: StatusCode| {
        let page = SetupPage {
            assets: Links::get(),
            signed_in: false,
            csrf: String::new(),
            error: Some(error.to_string()),
            token: String::new(),
        };
        render(&page, status)
    };
    if app.backend.password_set() {
        return Redirect::to("/login").into_response();
    }
    if let Err(refusal) = app.gate.reserve(from) {
        return failed(&refusal.message(), StatusCode::TOO_MANY_REQUESTS);
    }
    if form.password != form.again {
        app.gate.release(from);
        return failed("The two passwords differ.", StatusCode::UNPROCESSABLE_ENTITY);
    }
    // The token check and the password's storage are one job on the one hashing worker, so
    // two setups sent at once cannot both pass the check: the first spends the token.
    let backend = Arc::clone(&app.backend);
    let (token, password) = (form.token.trim().to_string(), form.password);
    let outcome = app
        .hasher
        .run(move || {
            if !backend.verify_setup_token(&token) {
                return Err(None);
            }
            backend.set_password(&password).map_err(Some)
        })
        .await;
    match outcome {
        Ok(Ok(())) => {
            app.gate.succeeded(from);
            tracing::info!("password set for admin from {from} (web, setup token)");
            Redirect::to("/login").into_response()
        }
        Ok(Err(None)) => {
            tracing::warn!("setup token refused from {from}");
            failed("That is not the setup token.", StatusCode::UNAUTHORIZED)
        }
        Ok(Err(Some(e))) => failed(&e, StatusCode::UNPROCESSABLE_ENTITY),
        Err(refusal) => {
            app.gate.release(from);
            failed(&refusal.message(), StatusCode::TOO_MANY_REQUESTS)
        }
    }
}

#[derive(Deserialize)]
struct CsrfForm {
    csrf: String,
}

async fn logout<B: Backend>(
    State(app): State<Arc<AppState<B>>>,
    headers: HeaderMap,
    Form(form): Form<CsrfForm>,
) -> Response {
    let Some(session) = app.sessions.get(&headers, &app.backend.credentials_stamp()) else {
        return Redirect::to("/login").into_response();
    };
    if !auth::same(&session.csrf, &form.csrf) {
        return (StatusCode::FORBIDDEN, "missing or wrong CSRF token").into_response();
    }
    app.sessions.remove(&headers);
    let mut response = Redirect::to("/login").into_response();
    response.headers_mut().insert(header::SET_COOKIE, HeaderValue::from_static(auth::CLEAR_COOKIE));
    response
}
