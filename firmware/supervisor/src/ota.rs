//! The supervisor's side of A/B updates: the health gate task (`routerd serve --health-gate`),
//! rebooting through systemd, and the control API's `/v1/ota` endpoints.
//!
//! "Healthy" for the gate is the doctor's verdict: a reconcile has finished (R001 passes) and
//! no check fails. Warnings do not hold the gate: a router that warns is still reachable and
//! reconciling, and a warning (a resource waiting for adoption, say) is the operator's to act
//! on, not a reason to fall back to older firmware. The gate itself is
//! [`routerd_ota::gate`]; `docs/ota.md` describes what the operator sees.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use routerd_model::status::{CheckStatus, DoctorCheck};
use routerd_ota::gate::{self, GateError, GateOptions, GateRecord};
use routerd_ota::{MarkState, Rauc, SlotRef, SlotStatus};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::daemon::{Msg, request};

/// Name of the gate's state file in the daemon's state directory.
pub const GATE_STATE_FILE: &str = "ota-gate.json";

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
    /// Reboot when the gate marks a slot bad (off only in tests: the test host must not
    /// reboot).
    pub reboot: bool,
}

/// The doctor's verdict for the gate: `Ok` when a reconcile finished and nothing fails,
/// otherwise the failing (or not yet passing R001) checks, `; `-joined.
pub fn verdict(checks: &[DoctorCheck]) -> Result<(), String> {
    let mut problems: Vec<String> = checks
        .iter()
        .filter(|c| {
            c.status == CheckStatus::Fail || (c.code == "R001" && c.status != CheckStatus::Pass)
        })
        .map(|c| format!("{} {}: {}", c.code, c.name, c.detail))
        .collect();
    if !checks.iter().any(|c| c.code == "R001") {
        problems.push("R001 last reconcile ran: not reported".to_string());
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("; ")) }
}

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
                if allow_reboot {
                    reboot().await;
                } else {
                    tracing::warn!("health gate: reboot skipped (--health-gate-no-reboot)");
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
/// (`org.freedesktop.systemd1(5)`). Failures are logged: the router stays up.
pub async fn reboot() {
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
        Ok(()) => tracing::warn!("reboot requested"),
        Err(e) => tracing::error!("reboot through systemd failed: {e}"),
    }
}

/// What `GET /v1/ota` answers.
#[derive(Serialize)]
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
#[derive(Serialize)]
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
pub async fn status(State(options): State<Arc<OtaOptions>>) -> Response {
    let rauc = match Rauc::connect(options.rauc_bus.as_deref()).await {
        Ok(rauc) => rauc,
        Err(e) => return rauc_error(e),
    };
    let read = async {
        let slots = rauc.slots().await?;
        Ok::<_, routerd_ota::OtaError>(OtaStatus {
            compatible: rauc.compatible().await?,
            boot_slot: rauc.boot_slot().await?,
            // The noop boot loader backend cannot tell; not worth failing the page for.
            primary: rauc.primary().await.ok(),
            operation: rauc.operation().await?,
            last_error: rauc.last_error().await?,
            slots: slots.iter().map(SlotView::from).collect(),
            health_gate: options.health_gate,
            gate: Vec::new(),
        })
    };
    let mut answer = match read.await {
        Ok(answer) => answer,
        Err(e) => return rauc_error(e),
    };
    match gate::records(&options.state_file) {
        Ok(mut records) => {
            records.reverse();
            answer.gate = records;
        }
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
    Json(answer).into_response()
}

/// `POST /v1/ota/mark`: RAUC's `Mark` of a slot (`good`, `bad`, `active`).
pub async fn mark(State(options): State<Arc<OtaOptions>>, body: axum::body::Bytes) -> Response {
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
    let rauc = match Rauc::connect(options.rauc_bus.as_deref()).await {
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
pub async fn inspect(State(options): State<Arc<OtaOptions>>, body: axum::body::Bytes) -> Response {
    let body = match bundle_body(&body) {
        Ok(body) => body,
        Err(message) => return error(StatusCode::BAD_REQUEST, message),
    };
    let rauc = match Rauc::connect(options.rauc_bus.as_deref()).await {
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
        }))
        .into_response(),
        Err(e) => rauc_error(e),
    }
}

/// `POST /v1/ota/install`: installs the bundle into the other slot if it still has `digest`;
/// the answer streams the install as newline-delimited JSON (`application/x-ndjson`), one
/// `progress` object per step and a final `completed` one with RAUC's verdict.
pub async fn install(State(options): State<Arc<OtaOptions>>, body: axum::body::Bytes) -> Response {
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
    let rauc = match Rauc::connect(options.rauc_bus.as_deref()).await {
        Ok(rauc) => rauc,
        Err(e) => return rauc_error(e),
    };
    let installation = match rauc.install(&body.path, &digest).await {
        Ok(installation) => installation,
        Err(e) => return rauc_error(e),
    };
    tracing::info!("ota: installing {} ({digest})", body.path.display());
    let events = futures::stream::unfold(Some(installation), |installation| async move {
        let mut installation = installation?;
        let line = match installation.next_event().await? {
            Ok(event) => install_line(&event),
            Err(e) => serde_json::json!({ "event": "error", "error": e.to_string() }),
        };
        let mut text = line.to_string();
        text.push('\n');
        if line["event"] == "completed" {
            let ok = line["ok"].as_bool() == Some(true);
            let what = line["lastError"].as_str().unwrap_or("");
            tracing::info!("ota: install finished: {}", if ok { "ok" } else { what });
        }
        Some((Ok::<_, std::convert::Infallible>(axum::body::Bytes::from(text)), Some(installation)))
    });
    Response::builder()
        .header("content-type", "application/x-ndjson")
        .body(axum::body::Body::from_stream(events))
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
