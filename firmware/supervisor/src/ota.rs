//! The supervisor's side of A/B updates: the health gate task (`routerd serve --health-gate`),
//! rebooting through systemd, the control API's `/v1/ota` endpoints, and [`Updates`]: the
//! bundle the web UI staged and the progress of the install in flight.
//!
//! "Healthy" for the gate is the doctor's verdict: a reconcile has finished (R001 passes) and
//! no check fails. Warnings do not hold the gate: a router that warns is still reachable and
//! reconciling, and a warning (a resource waiting for adoption, say) is the operator's to act
//! on, not a reason to fall back to older firmware. The gate itself is
//! [`routerd_ota::gate`]; `docs/ota.md` describes what the operator sees.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use routerd_model::status::{CheckStatus, DoctorCheck};
use routerd_ota::gate::{self, GateError, GateOptions, GateRecord};
use routerd_ota::{
    BundleDigest, BundleInfo, Call, InstallEvent, MarkState, Rauc, SlotRef, SlotStatus,
};
use routerd_webui::{BundleView, GateRow, InstallPhase, InstallView, OtaView, SlotRow};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch};

use crate::daemon::{Msg, request, rfc3339};

/// Name of the gate's state file in the daemon's state directory.
pub const GATE_STATE_FILE: &str = "ota-gate.json";

/// Name of the directory in the daemon's state directory (the data partition) where the web
/// UI's uploaded or downloaded bundle waits for Install.
pub const STAGING_DIR: &str = "ota";

/// The staged bundle's file name in [`STAGING_DIR`]; one bundle at a time.
const STAGED_FILE: &str = "staged.raucb";

/// Room a staged bundle must leave free on the data partition: the ledger, the config history
/// and the gate's records live there too, and a full partition would stop their writes.
const RESERVE_BYTES: u64 = 64 << 20;

/// Time between two doctor runs while the gate's window is open.
const CHECK_INTERVAL: Duration = Duration::from_secs(5);

/// How `routerd serve` reaches RAUC and runs the gate.
#[derive(Clone, Debug)]
pub struct OtaOptions {
    /// Run the health gate after start.
    pub health_gate: bool,
    /// How long a boot has to prove healthy.
    pub health_window: Duration,
    /// RAUC's bus address; `None` is the system bus.
    pub rauc_bus: Option<String>,
    /// The gate's state file.
    pub state_file: PathBuf,
    /// Reboot when the gate marks a slot bad or the operator asks (off only in tests: the
    /// test host must not reboot).
    pub reboot: bool,
    /// Where the web UI's bundles are staged ([`STAGING_DIR`] in the state directory).
    pub staging_dir: PathBuf,
    /// "Install from a URL" may download from loopback and this router's own addresses (a
    /// mirror reached through an SSH tunnel); off by default ([`not_this_router`]).
    pub fetch_local: bool,
}

/// The doctor's verdict for the gate: `Ok` when a reconcile finished, nothing fails and no
/// `required` DHCP binding is still waiting for its lease (B001 warns while it waits within its
/// time, and fails after); otherwise those checks, `; `-joined.
///
/// The gateway check (G001) does not count: an upstream gateway that does not answer says
/// nothing about the image on trial (an outage at the provider, a gateway that drops ICMP echo),
/// and counting it would roll back every update installed during an outage.
pub fn verdict(checks: &[DoctorCheck]) -> Result<(), String> {
    let mut problems: Vec<String> = checks
        .iter()
        .filter(|c| c.code != GATEWAY_CHECK)
        .filter(|c| {
            c.status == CheckStatus::Fail
                || (c.code == "R001" && c.status != CheckStatus::Pass)
                || (c.code == "B001" && c.status == CheckStatus::Warn)
        })
        .map(|c| format!("{} {}: {}", c.code, c.name, c.detail))
        .collect();
    if !checks.iter().any(|c| c.code == "R001") {
        problems.push("R001 last reconcile ran: not reported".to_string());
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("; ")) }
}

/// The doctor's gateway check, left out of the gate's verdict.
const GATEWAY_CHECK: &str = "G001";

/// Runs the gate for this boot in the background; logs its decision or why it cannot run.
///
/// Side effects: RAUC `Mark` of the booted slot; for a failed window a reboot through systemd
/// ([`reboot`]).
pub fn spawn_gate(options: OtaOptions, loop_tx: mpsc::Sender<Msg>) {
    tokio::spawn(async move {
        let boot_id = match gate::boot_id() {
            Ok(id) => id,
            Err(e) => {
                tracing::error!("health gate off: cannot read the boot id: {e}");
                return;
            }
        };
        let gate_options = GateOptions {
            window: options.health_window,
            interval: CHECK_INTERVAL,
            state_file: options.state_file.clone(),
            boot_id,
        };
        // RAUC may start after routerd (nothing orders them: the network must not wait for
        // the updater), so an unreachable RAUC is retried for as long as the window lasts.
        let give_up = tokio::time::Instant::now() + options.health_window;
        loop {
            let health = || {
                let loop_tx = loop_tx.clone();
                async move {
                    match request(&loop_tx, Msg::Doctor).await {
                        Ok(checks) => verdict(&checks),
                        Err(_) => Err("the daemon is stopping".to_string()),
                    }
                }
            };
            let allow_reboot = options.reboot;
            let restart = || async move {
                if let Err(e) = reboot(allow_reboot).await {
                    tracing::error!("health gate: {e}");
                }
            };
            let outcome = match Rauc::connect(options.rauc_bus.as_deref()).await {
                Ok(rauc) => gate::run(&rauc, &gate_options, health, restart).await,
                Err(e) => Err(e.into()),
            };
            match outcome {
                Ok(record) => {
                    tracing::info!(
                        "health gate: slot {} is {} ({})",
                        record.slot,
                        record.phase.as_str(),
                        record.detail
                    );
                    return;
                }
                Err(GateError::Rauc(e))
                    if !e.is_refused() && tokio::time::Instant::now() < give_up =>
                {
                    tracing::warn!("health gate: RAUC not reachable yet ({e}); retrying");
                    tokio::time::sleep(CHECK_INTERVAL).await;
                }
                Err(e) => {
                    tracing::error!("health gate: {e}");
                    return;
                }
            }
        }
    });
}

/// Asks systemd to reboot: `StartUnit("reboot.target", "replace-irreversibly")` on
/// `org.freedesktop.systemd1` over the system bus, what `systemctl reboot` does
/// (`org.freedesktop.systemd1(5)`). With `allowed` false (`--no-reboot`, tests) it only logs.
///
/// Errors: the bus or systemd refused, as a sentence; the router stays up.
pub async fn reboot(allowed: bool) -> Result<(), String> {
    if !allowed {
        tracing::warn!("reboot skipped (--no-reboot)");
        return Ok(());
    }
    let result = async {
        let conn = zbus::Connection::system().await?;
        conn.call_method(
            Some("org.freedesktop.systemd1"),
            "/org/freedesktop/systemd1",
            Some("org.freedesktop.systemd1.Manager"),
            "StartUnit",
            &("reboot.target", "replace-irreversibly"),
        )
        .await?;
        Ok::<_, zbus::Error>(())
    }
    .await;
    match result {
        Ok(()) => {
            tracing::warn!("reboot requested");
            Ok(())
        }
        Err(e) => Err(format!("reboot through systemd failed: {e}")),
    }
}

/// What `GET /v1/ota` answers.
#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct OtaStatus {
    /// RAUC's `Compatible`.
    compatible: String,
    /// RAUC's `BootSlot` (the booted slot's boot name).
    boot_slot: String,
    /// The slot the boot loader starts next.
    primary: Option<String>,
    /// `idle` or `installing`.
    operation: String,
    /// RAUC's `LastError`.
    last_error: String,
    /// Every slot.
    slots: Vec<SlotView>,
    /// Whether this daemon runs the health gate.
    health_gate: bool,
    /// The gate's records, newest first.
    gate: Vec<GateRecord>,
}

/// One slot as the control API shows it.
#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct SlotView {
    name: String,
    bootname: Option<String>,
    state: Option<String>,
    boot_status: Option<String>,
    version: Option<String>,
    installed: Option<String>,
    install_status: Option<String>,
}

impl From<&SlotStatus> for SlotView {
    fn from(s: &SlotStatus) -> Self {
        Self {
            name: s.name.clone(),
            bootname: s.bootname.clone(),
            state: s.state.as_ref().map(|x| x.as_str().to_string()),
            boot_status: s.boot_status.as_ref().map(|x| x.as_str().to_string()),
            version: s.installed_version.clone(),
            installed: s.installed_timestamp.clone(),
            install_status: s.install_status.clone(),
        }
    }
}

/// Body of `POST /v1/ota/mark`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MarkBody {
    /// `good`, `bad` or `active`.
    state: String,
    /// `booted`, `other` or a slot name; default `booted`.
    #[serde(default)]
    slot: Option<String>,
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(serde_json::json!({ "error": message.into() }))).into_response()
}

/// An error talking to RAUC as a response: RAUC's refusals and a bundle that changed since
/// it was inspected are 409 with the reason, an unreachable RAUC 503.
fn rauc_error(e: routerd_ota::OtaError) -> Response {
    if e.is_refused() || matches!(e, routerd_ota::OtaError::DigestMismatch { .. }) {
        error(StatusCode::CONFLICT, e.to_string())
    } else {
        error(StatusCode::SERVICE_UNAVAILABLE, e.to_string())
    }
}

/// `GET /v1/ota`: RAUC's view of the slots and the health gate's records.
pub async fn status(State(updates): State<Arc<Updates>>) -> Response {
    let rauc = match updates.rauc().await {
        Ok(rauc) => rauc,
        Err(e) => return rauc_error(e),
    };
    let mut answer = match updates.status(&rauc).await {
        Ok(answer) => answer,
        Err(e) => return rauc_error(e),
    };
    answer.health_gate = updates.options.health_gate;
    match gate_records(&updates.options.state_file) {
        Ok(records) => answer.gate = records,
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
    Json(answer).into_response()
}

/// RAUC's side of [`OtaStatus`] (the gate's fields empty).
async fn read_status(rauc: &Rauc) -> Result<OtaStatus, routerd_ota::OtaError> {
    let slots = rauc.slots().await?;
    Ok(OtaStatus {
        compatible: rauc.compatible().await?,
        boot_slot: rauc.boot_slot().await?,
        // The noop boot loader backend cannot tell; not worth failing the page for.
        primary: rauc.primary().await.ok(),
        operation: rauc.operation().await?,
        last_error: rauc.last_error().await?,
        slots: slots.iter().map(SlotView::from).collect(),
        health_gate: false,
        gate: Vec::new(),
    })
}

/// Waits (at most 10 s) until RAUC's operation is `idle`.
async fn wait_idle(rauc: &Rauc) {
    for _ in 0..100 {
        if rauc.operation().await.is_ok_and(|o| o == "idle") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The gate's records, newest first.
fn gate_records(state_file: &Path) -> Result<Vec<GateRecord>, GateError> {
    let mut records = gate::records(state_file)?;
    records.reverse();
    Ok(records)
}

/// `POST /v1/ota/mark`: RAUC's `Mark` of a slot (`good`, `bad`, `active`).
pub async fn mark(State(updates): State<Arc<Updates>>, body: axum::body::Bytes) -> Response {
    let body: MarkBody = match serde_json::from_slice(&body) {
        Ok(body) => body,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("body: {e}")),
    };
    let state = match body.state.as_str() {
        "good" => MarkState::Good,
        "bad" => MarkState::Bad,
        "active" => MarkState::Active,
        other => {
            let message = format!("state {other:?}: expected good, bad or active");
            return error(StatusCode::BAD_REQUEST, message);
        }
    };
    let slot = match body.slot.as_deref().unwrap_or("booted") {
        "booted" => SlotRef::Booted,
        "other" => SlotRef::Other,
        name => SlotRef::Named(name.to_string()),
    };
    let rauc = match updates.rauc().await {
        Ok(rauc) => rauc,
        Err(e) => return rauc_error(e),
    };
    match rauc.mark(state, &slot).await {
        Ok(marked) => {
            tracing::info!("ota: {} (by the operator)", marked.message);
            Json(serde_json::json!({ "slot": marked.slot, "message": marked.message }))
                .into_response()
        }
        Err(e) => rauc_error(e),
    }
}

/// Body of `POST /v1/ota/inspect` and `POST /v1/ota/install`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BundleBody {
    /// The bundle file on the router (absolute).
    path: PathBuf,
    /// Install only: the digest `inspect` reported (`file-sha256:…`, `manifest-sha256:…`).
    #[serde(default)]
    digest: Option<String>,
}

/// The body, or why it is a bad request.
fn bundle_body(body: &[u8]) -> Result<BundleBody, String> {
    let body: BundleBody = serde_json::from_slice(body).map_err(|e| format!("body: {e}"))?;
    if !body.path.is_absolute() {
        return Err(format!("path {:?}: must be absolute", body.path));
    }
    Ok(body)
}

/// `POST /v1/ota/inspect`: RAUC checks the bundle's signature and reads its manifest; nothing
/// is installed. Answers compatible, version and the digest to install it by.
pub async fn inspect(State(updates): State<Arc<Updates>>, body: axum::body::Bytes) -> Response {
    let body = match bundle_body(&body) {
        Ok(body) => body,
        Err(message) => return error(StatusCode::BAD_REQUEST, message),
    };
    let rauc = match updates.rauc().await {
        Ok(rauc) => rauc,
        Err(e) => return rauc_error(e),
    };
    match rauc.inspect(&body.path).await {
        Ok(info) => Json(serde_json::json!({
            "path": body.path,
            "compatible": info.compatible,
            "version": info.version,
            "description": info.description,
            "build": info.build,
            "format": info.format,
            "digest": info.digest.to_string(),
            "signer": info.signer.as_ref().map(|s| serde_json::json!({
                "subject": s.subject, "issuer": s.issuer, "notAfter": s.not_after,
            })),
        }))
        .into_response(),
        Err(e) => rauc_error(e),
    }
}

/// `POST /v1/ota/install`: installs the bundle into the other slot if it still has `digest`;
/// the answer streams the install as newline-delimited JSON (`application/x-ndjson`), one
/// `progress` object per step and a final `completed` one with RAUC's verdict.
pub async fn install(State(updates): State<Arc<Updates>>, body: axum::body::Bytes) -> Response {
    let body = match bundle_body(&body) {
        Ok(body) => body,
        Err(message) => return error(StatusCode::BAD_REQUEST, message),
    };
    let Some(digest) = body.digest.as_deref() else {
        return error(StatusCode::BAD_REQUEST, "digest: required (inspect the bundle first)");
    };
    let digest: routerd_ota::BundleDigest = match digest.parse() {
        Ok(digest) => digest,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("{e}")),
    };
    let events = match updates.install(&body.path, &digest, body.path.display().to_string()).await {
        Ok(events) => events,
        Err(e) => return rauc_error(e),
    };
    let lines = futures::stream::unfold(events, |mut events| async move {
        let line = match events.recv().await? {
            Ok(event) => install_line(&event),
            Err(e) => serde_json::json!({ "event": "error", "error": e }),
        };
        let mut text = line.to_string();
        text.push('\n');
        let bytes = axum::body::Bytes::from(text);
        Some((Ok::<_, std::convert::Infallible>(bytes), events))
    });
    Response::builder()
        .header("content-type", "application/x-ndjson")
        .body(axum::body::Body::from_stream(lines))
        .unwrap_or_else(|e| error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
}

/// One install event as a JSON line.
fn install_line(event: &routerd_ota::InstallEvent) -> serde_json::Value {
    match event {
        routerd_ota::InstallEvent::Progress { percent, message, depth } => serde_json::json!({
            "event": "progress", "percent": percent, "message": message, "depth": depth,
        }),
        routerd_ota::InstallEvent::Completed { ok, result, last_error } => serde_json::json!({
            "event": "completed", "ok": ok, "result": result, "lastError": last_error,
        }),
    }
}

/// The daemon's updates: how to reach RAUC, the bundle the web UI staged (uploaded or
/// downloaded, then inspected) and the install in flight, whoever started it. One bundle is
/// staged at a time, in [`OtaOptions::staging_dir`] on the data partition, and it must leave
/// [`RESERVE_BYTES`] free there.
pub struct Updates {
    /// The daemon's OTA options.
    pub options: OtaOptions,
    /// The staged bundle; the lock also serialises uploads and downloads.
    staged: tokio::sync::Mutex<Option<Staged>>,
    /// The install in flight or the last one.
    progress: watch::Sender<InstallView>,
    /// RAUC's last status answer: RAUC answers no `GetSlotStatus` while it installs.
    last_status: std::sync::Mutex<Option<OtaStatus>>,
}

/// A bundle RAUC inspected, waiting for Install.
struct Staged {
    path: PathBuf,
    view: BundleView,
    digest: BundleDigest,
}

/// An install's events for the client that started it: RAUC's events, or why they stopped.
pub type InstallEvents = mpsc::UnboundedReceiver<Result<InstallEvent, String>>;

impl Updates {
    /// No bundle staged, no install seen.
    pub fn new(options: OtaOptions) -> Self {
        Self {
            options,
            staged: tokio::sync::Mutex::new(None),
            progress: watch::Sender::new(InstallView::default()),
            last_status: std::sync::Mutex::new(None),
        }
    }

    /// RAUC's status; while RAUC installs (and refuses status calls) the last answer from
    /// before, with `operation` `installing`.
    async fn status(&self, rauc: &Rauc) -> Result<OtaStatus, routerd_ota::OtaError> {
        let last = || self.last_status.lock().ok().and_then(|last| last.clone());
        match read_status(rauc).await {
            Ok(status) => {
                if let Ok(mut last) = self.last_status.lock() {
                    *last = Some(status.clone());
                }
                Ok(status)
            }
            Err(e) if e.is_refused() && rauc.operation().await.is_ok_and(|o| o != "idle") => {
                match last() {
                    Some(mut status) => {
                        status.operation = "installing".into();
                        Ok(status)
                    }
                    None => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    async fn rauc(&self) -> Result<Rauc, routerd_ota::OtaError> {
        Rauc::connect(self.options.rauc_bus.as_deref()).await
    }

    /// The install in flight or the last one.
    pub fn progress(&self) -> watch::Receiver<InstallView> {
        self.progress.subscribe()
    }

    fn installing(&self) -> bool {
        self.progress.borrow().phase == InstallPhase::Running
    }

    /// Starts installing `path` if it still has `digest`: RAUC accepted the install when this
    /// returns; a task follows it to the end, publishing to [`Updates::progress`] and sending
    /// each event to the returned channel (dropping it does not stop the install).
    ///
    /// Errors: RAUC unreachable or refusing (an install already running, say).
    pub async fn install(
        self: &Arc<Self>,
        path: &Path,
        digest: &BundleDigest,
        label: String,
    ) -> Result<InstallEvents, routerd_ota::OtaError> {
        let rauc = self.rauc().await?;
        let mut installation = rauc.install(path, digest).await?;
        tracing::info!("ota: installing {label} ({digest})");
        self.progress.send_replace(InstallView {
            phase: InstallPhase::Running,
            bundle: label,
            message: "Installing".into(),
            ..InstallView::default()
        });
        let (tx, rx) = mpsc::unbounded_channel();
        let updates = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                match installation.next_event().await {
                    Some(Ok(event)) => {
                        if matches!(event, InstallEvent::Completed { .. }) {
                            // RAUC refuses status calls until it is idle again; publish the
                            // end only then, so a page reloaded on it reads the new slots.
                            wait_idle(&rauc).await;
                        }
                        let done = updates.record(&event);
                        let _ = tx.send(Ok(event));
                        if done {
                            break;
                        }
                    }
                    Some(Err(e)) => {
                        updates.finish(false, format!("lost track of the install: {e}"));
                        let _ = tx.send(Err(e.to_string()));
                        break;
                    }
                    None => {
                        updates.finish(false, "RAUC ended the install without a verdict".into());
                        break;
                    }
                }
            }
        });
        Ok(rx)
    }

    /// Publishes one install event; true when it ends the install.
    ///
    /// (RAUC's `Completed` arrives while its operation is still `installing`.)
    fn record(&self, event: &InstallEvent) -> bool {
        match event {
            InstallEvent::Progress { percent, message, .. } => {
                self.progress.send_modify(|view| {
                    view.percent = (*percent).min(100);
                    view.message = message.clone();
                });
                false
            }
            InstallEvent::Completed { ok, last_error, .. } => {
                let detail =
                    if *ok { String::new() } else { last_error.clone().unwrap_or_default() };
                self.finish(*ok, detail);
                true
            }
        }
    }

    fn finish(&self, ok: bool, detail: String) {
        let bundle = self.progress.borrow().bundle.clone();
        if ok {
            tracing::info!("ota: installed {bundle}");
        } else {
            tracing::warn!("ota: installing {bundle} failed: {detail}");
        }
        self.progress.send_modify(|view| {
            view.phase = if ok { InstallPhase::Succeeded } else { InstallPhase::Failed };
            if ok {
                view.percent = 100;
            }
            view.detail = detail;
        });
    }

    /// RAUC's slots, the gate's records and the staged bundle, for the web UI.
    pub async fn view(&self) -> Result<OtaView, String> {
        let rauc = self.rauc().await.map_err(|e| e.to_string())?;
        let status = self.status(&rauc).await.map_err(|e| e.to_string())?;
        let records = gate_records(&self.options.state_file).map_err(|e| e.to_string())?;
        let primary = status.primary.clone();
        let slots = status
            .slots
            .iter()
            .map(|s| SlotRow {
                name: s.name.clone(),
                bootname: s.bootname.clone().unwrap_or_default(),
                state: s.state.clone().unwrap_or_default(),
                boot_status: s.boot_status.clone().unwrap_or_default(),
                version: s.version.clone().unwrap_or_default(),
                installed: s.installed.clone().unwrap_or_default(),
                booted: s.state.as_deref() == Some("booted"),
                primary: primary.as_deref() == Some(s.name.as_str()),
            })
            .collect();
        let gate = records
            .iter()
            .map(|r| GateRow {
                slot: r.slot.clone(),
                version: r.version.clone().unwrap_or_default(),
                phase: r.phase.as_str().to_string(),
                started: rfc3339(r.started),
                decided: r.decided.map(rfc3339).unwrap_or_default(),
                detail: r.detail.clone(),
            })
            .collect();
        Ok(OtaView {
            compatible: status.compatible,
            boot_slot: status.boot_slot,
            operation: status.operation,
            last_error: status.last_error,
            slots,
            health_gate: self.options.health_gate,
            gate,
            staged: self.staged.lock().await.as_ref().map(|s| s.view.clone()),
        })
    }

    /// Bytes a new staged bundle may take: what the data partition has free, plus the staged
    /// bundle it replaces, less [`RESERVE_BYTES`].
    fn room(&self, replaced: u64) -> Result<u64, String> {
        let dir = &self.options.staging_dir;
        let stat = nix::sys::statvfs::statvfs(dir)
            .map_err(|e| format!("cannot read the free space of {}: {e}", dir.display()))?;
        let free = stat.blocks_available().saturating_mul(stat.fragment_size());
        Ok((free + replaced).saturating_sub(RESERVE_BYTES))
    }

    /// Prepares to stage a new bundle: refuses during an install, removes the staged one, and
    /// answers the partial file to write and the room there is.
    fn begin(&self, staged: &mut Option<Staged>) -> Result<(PathBuf, u64), String> {
        if self.installing() {
            return Err("An install is running; wait for it to finish.".into());
        }
        let dir = &self.options.staging_dir;
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let replaced = staged.take().map_or(0, |s| {
            let _ = std::fs::remove_file(&s.path);
            s.view.bytes
        });
        let room = self.room(replaced)?;
        Ok((dir.join(format!("{STAGED_FILE}.part")), room))
    }

    /// The partial file complete: moves it into place and has RAUC inspect it. A bundle RAUC
    /// refuses is deleted and the refusal, in RAUC's words, is the error.
    async fn stage(
        &self,
        staged: &mut Option<Staged>,
        part: &Path,
        source: String,
        bytes: u64,
    ) -> Result<BundleView, String> {
        let path = self.options.staging_dir.join(STAGED_FILE);
        std::fs::rename(part, &path).map_err(|e| format!("storing the bundle: {e}"))?;
        let inspected = match self.rauc().await {
            Ok(rauc) => rauc.inspect(&path).await,
            Err(e) => Err(e),
        };
        let info: BundleInfo = match inspected {
            Ok(info) => info,
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                tracing::warn!("ota: bundle from {source} refused: {e}");
                return Err(
                    if matches!(e, routerd_ota::OtaError::Refused { call: Call::Info, .. }) {
                        // RAUC before 1.9 inspects through `Info`, whose error has no reason.
                        format!(
                            "RAUC refused the bundle: {e} (this RAUC gives its reason only in its log: journalctl -u rauc)"
                        )
                    } else if e.is_refused() {
                        format!("RAUC refused the bundle: {e}")
                    } else {
                        format!("RAUC could not inspect the bundle: {e}")
                    },
                );
            }
        };
        let view = BundleView {
            source: source.clone(),
            bytes,
            compatible: info.compatible,
            version: info.version.unwrap_or_default(),
            description: info.description.unwrap_or_default(),
            build: info.build.unwrap_or_default(),
            format: info.format.unwrap_or_default(),
            digest: info.digest.to_string(),
            signer: info.signer.as_ref().map_or_else(String::new, |s| s.subject.clone()),
            signer_issuer: info
                .signer
                .as_ref()
                .map_or_else(String::new, |s| format!("{}, valid until {}", s.issuer, s.not_after)),
        };
        tracing::info!("ota: staged {source} (version {:?}, {})", view.version, view.digest);
        *staged = Some(Staged { path, view: view.clone(), digest: info.digest });
        Ok(view)
    }

    /// Writes an upload's chunks to the staging directory and inspects the bundle.
    pub async fn upload(
        &self,
        file_name: String,
        mut chunks: mpsc::Receiver<Result<axum::body::Bytes, String>>,
    ) -> Result<BundleView, String> {
        use std::io::Write;
        let mut staged = self.staged.lock().await;
        let (part, room) = self.begin(&mut staged)?;
        let written = async {
            let mut file = std::fs::File::create(&part)
                .map_err(|e| format!("creating {}: {e}", part.display()))?;
            let mut bytes: u64 = 0;
            while let Some(chunk) = chunks.recv().await {
                let chunk = chunk?;
                bytes += chunk.len() as u64;
                if bytes > room {
                    return Err(format!(
                        "The bundle does not fit: {room} bytes are free for it on the data \
                         partition."
                    ));
                }
                file.write_all(&chunk).map_err(|e| format!("storing the bundle: {e}"))?;
            }
            file.sync_all().map_err(|e| format!("storing the bundle: {e}"))?;
            Ok(bytes)
        }
        .await;
        match written {
            Ok(bytes) => self.stage(&mut staged, &part, file_name, bytes).await,
            Err(e) => {
                let _ = std::fs::remove_file(&part);
                Err(e)
            }
        }
    }

    /// Downloads `url` into the staging directory and inspects the bundle.
    pub async fn fetch(&self, url: String) -> Result<BundleView, String> {
        let mut staged = self.staged.lock().await;
        let (part, room) = self.begin(&mut staged)?;
        tracing::info!("ota: downloading {url}");
        let anywhere = |_| Ok(());
        let allowed: &routerd_ota::fetch::Destinations =
            if self.options.fetch_local { &anywhere } else { &not_this_router };
        match routerd_ota::fetch::download(&url, &part, room, allowed).await {
            Ok(done) => self.stage(&mut staged, &part, url, done.bytes).await,
            Err(e) => Err(format!("Download failed: {e}")),
        }
    }

    /// Deletes the staged bundle (not during an install, which reads it).
    pub async fn discard(&self) {
        if self.installing() {
            return;
        }
        if let Some(s) = self.staged.lock().await.take() {
            let _ = std::fs::remove_file(&s.path);
        }
    }

    /// Installs the staged bundle if its digest is still `digest` (the one the operator saw);
    /// the bundle is deleted once installed.
    pub async fn install_staged(self: &Arc<Self>, digest: &str) -> Result<(), String> {
        let staged = self.staged.lock().await;
        let Some(bundle) = staged.as_ref() else {
            return Err("No bundle is staged: upload or download one first.".into());
        };
        if bundle.view.digest != digest {
            return Err("The staged bundle changed since it was shown; check it again.".into());
        }
        let label = match bundle.view.version.as_str() {
            "" => bundle.view.source.clone(),
            version => format!("version {version} ({})", bundle.view.source),
        };
        let events =
            self.install(&bundle.path, &bundle.digest, label).await.map_err(|e| e.to_string())?;
        drop(staged);
        // The installed bundle only takes room on the data partition.
        let updates = Arc::clone(self);
        tokio::spawn(async move {
            let mut events = events;
            while events.recv().await.is_some() {}
            if updates.progress.borrow().phase == InstallPhase::Succeeded {
                updates.discard().await;
            }
        });
        Ok(())
    }

    /// Makes `slot` the one the boot loader starts next; RAUC's message.
    pub async fn boot_next(&self, slot: String) -> Result<String, String> {
        let rauc = self.rauc().await.map_err(|e| e.to_string())?;
        let marked =
            rauc.mark(MarkState::Active, &SlotRef::Named(slot)).await.map_err(|e| e.to_string())?;
        tracing::info!("ota: {} (by the operator)", marked.message);
        Ok(marked.message)
    }

    /// Reboots (unless `--no-reboot`).
    pub async fn reboot(&self) -> Result<(), String> {
        tracing::warn!("ota: reboot asked for by the operator");
        reboot(self.options.reboot).await
    }
}

/// The download policy of "install from a URL": never this router itself. A URL naming
/// loopback, an unspecified or multicast address, or one of the router's own addresses would
/// let whoever can reach the OTA page make the daemon request its own local services.
///
/// An address is the router's own when a socket can bind to it in this namespace (the kernel
/// decides, for every interface and family at once; with `ip_nonlocal_bind` set, every
/// address binds, so every download is refused: the check fails closed).
fn not_this_router(ip: std::net::IpAddr) -> Result<(), String> {
    let mapped = match ip {
        std::net::IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, std::net::IpAddr::V4),
        v4 => v4,
    };
    if mapped.is_loopback() || mapped.is_unspecified() || mapped.is_multicast() {
        return Err("a loopback, unspecified or multicast address".into());
    }
    if std::net::UdpSocket::bind((mapped, 0)).is_ok() {
        return Err("an address of this router".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use routerd_model::status::{CheckStatus, DoctorCheck};

    use super::{not_this_router, verdict};

    #[test]
    fn an_unreachable_gateway_does_not_fail_the_gate_but_another_failure_does() {
        let check = |code: &str, status| DoctorCheck {
            area: "x".into(),
            code: code.into(),
            name: "n".into(),
            status,
            detail: "d".into(),
            remedy: String::new(),
        };
        let ran = check("R001", CheckStatus::Pass);
        let gateway = check("G001", CheckStatus::Fail);
        assert_eq!(verdict(&[ran.clone(), gateway.clone()]), Ok(()));
        let routes = check("T001", CheckStatus::Fail);
        assert!(verdict(&[ran, gateway, routes]).is_err_and(|e| e.starts_with("T001")));
    }

    #[test]
    fn downloads_from_the_router_itself_are_refused() {
        for refused in
            ["127.0.0.1", "127.9.9.9", "::1", "0.0.0.0", "::", "::ffff:127.0.0.1", "224.0.0.1"]
        {
            let ip = refused.parse().expect("literal");
            assert!(not_this_router(ip).is_err(), "{refused}");
        }
        // TEST-NET-1 and the documentation prefix are on no interface of a test machine.
        for allowed in ["192.0.2.10", "2001:db8::10"] {
            let ip = allowed.parse().expect("literal");
            assert_eq!(not_this_router(ip), Ok(()), "{allowed}");
        }
    }
}
