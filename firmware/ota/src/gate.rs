//! The health gate: after every boot, the booted slot stays on trial until the router proves
//! healthy; only then is it marked good. A slot that does not prove healthy within the window
//! is marked bad and the machine reboots, so the boot loader falls back to the other slot.
//!
//! Why every boot and not only the first after an install: the boot loaders set the booted
//! slot's try flag at each boot (GRUB `X_TRY=1`, U-Boot `BOOT_X_LEFT`), so a boot that is never
//! confirmed is not booted again; `Mark(good, booted)` is the confirmation (RAUC's
//! "Marking a slot good" integration, <https://rauc.readthedocs.io/en/latest/integration.html>).
//!
//! ```text
//!            health() ok                      ┌──▶ Good   Mark(good, booted)
//! Checking ──────────────────────────────────┤
//!   │  window over, another slot is good    └──▶ Bad    Mark(bad, booted), then reboot
//!   └─ window over, no other slot is good  ───▶ Held   stay up unconfirmed (nothing to fall back to)
//! ```
//!
//! The decision is persisted per boot (`/proc/sys/kernel/random/boot_id`) in a small JSON file
//! before anything is marked, so a supervisor restart within the same boot resumes the same
//! window (it does not start a fresh one) and never marks a slot good after it was marked bad.
//! The gate knows nothing of routerd's doctor: the caller passes the health check as a closure.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::OtaError;
use crate::rauc::Rauc;
use crate::slot::{BootStatus, MarkState, SlotRef, SlotState, SlotStatus};

/// How many boots the state file remembers (the newest last).
const KEEP_RECORDS: usize = 16;

/// Where the gate stands for one boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GatePhase {
    /// The window is open; the slot is not confirmed yet.
    Checking,
    /// The router proved healthy; the slot is marked good.
    Good,
    /// The window closed unhealthy; the slot is marked bad and a reboot was requested.
    Bad,
    /// The window closed unhealthy but no other slot is good: the slot stays unconfirmed and
    /// the router stays up rather than reboot into nothing.
    Held,
}

impl GatePhase {
    /// `checking`, `good`, `bad`, `held`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Checking => "checking",
            Self::Good => "good",
            Self::Bad => "bad",
            Self::Held => "held",
        }
    }
}

/// The gate's record of one boot, as persisted and as shown to the operator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GateRecord {
    /// The kernel's boot id (`/proc/sys/kernel/random/boot_id`).
    pub boot_id: String,
    /// The booted slot's name (`rootfs.0`).
    pub slot: String,
    /// Its boot name (`A`), when it has one.
    pub bootname: Option<String>,
    /// The version of the bundle last installed into it, when RAUC knows one.
    pub version: Option<String>,
    /// Where the gate stands.
    pub phase: GatePhase,
    /// When the window opened, seconds since the Unix epoch (for people; the window is
    /// counted on `started_uptime`).
    pub started: u64,
    /// When the window opened, seconds since boot (`/proc/uptime`, `CLOCK_BOOTTIME`): a clock
    /// that a time sync at boot does not move and that a supervisor restart in the same boot
    /// shares.
    pub started_uptime: u64,
    /// The window's length, seconds.
    pub window_seconds: u64,
    /// When the phase left `checking`, seconds since the Unix epoch.
    pub decided: Option<u64>,
    /// The last health verdict's detail (what failed), or RAUC's answer to `Mark`.
    pub detail: String,
}

/// The result of one health check: `Ok(())` when healthy, otherwise what is wrong (one line
/// for the log and the operator).
pub type Health = Result<(), String>;

/// How the gate runs.
#[derive(Debug, Clone)]
pub struct GateOptions {
    /// How long the booted slot has to prove healthy, from the first start of the gate in
    /// this boot.
    pub window: Duration,
    /// Time between two health checks.
    pub interval: Duration,
    /// The JSON file holding the records (on the data partition, shared by both slots).
    pub state_file: PathBuf,
    /// This boot's id.
    pub boot_id: String,
}

/// Errors of the gate: RAUC's or the state file's.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// RAUC refused or could not be reached.
    #[error(transparent)]
    Rauc(#[from] OtaError),
    /// RAUC lists no slot in state `booted` (booted from a slot RAUC does not manage, or
    /// RAUC cannot tell which one it is).
    #[error("rauc reports no booted slot; the health gate needs one")]
    NoBootedSlot,
    /// The state file (or `/proc/uptime`) could not be read, parsed or written.
    #[error("health gate state {path:?}: {source}")]
    State {
        /// The file.
        path: PathBuf,
        /// The I/O or JSON error.
        #[source]
        source: std::io::Error,
    },
}

/// Reads this boot's id from `/proc/sys/kernel/random/boot_id` (`random(4)`).
///
/// Errors: the file cannot be read (not Linux, no procfs).
pub fn boot_id() -> std::io::Result<String> {
    Ok(std::fs::read_to_string("/proc/sys/kernel/random/boot_id")?.trim().to_string())
}

/// The records of the state file, oldest first; an absent file has none.
///
/// Errors: [`GateError::State`] when the file exists but cannot be read or parsed.
pub fn records(state_file: &Path) -> Result<Vec<GateRecord>, GateError> {
    let fail = |source| GateError::State { path: state_file.into(), source };
    match std::fs::read(state_file) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| fail(e.into())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(fail(e)),
    }
}

/// Runs the gate for this boot to its decision and returns the record.
///
/// Shape: calls `health` every `interval` until it returns `Ok` or the window (counted from
/// the first start of the gate in this boot) is over; then marks and, for [`GatePhase::Bad`],
/// awaits `reboot` (which should not return when it works). A boot already decided is not
/// checked again: `Good` and `Held` return at once, `Bad` requests the reboot again.
/// Errors: [`GateError`]; the record says `checking` then, and a later run resumes it.
/// Side effects: writes `state_file` (atomically, before each `Mark`), calls RAUC's `Mark`,
/// calls `reboot`.
pub async fn run<H, HF, R, RF>(
    rauc: &Rauc,
    options: &GateOptions,
    mut health: H,
    reboot: R,
) -> Result<GateRecord, GateError>
where
    H: FnMut() -> HF,
    HF: Future<Output = Health>,
    R: FnOnce() -> RF,
    RF: Future<Output = ()>,
{
    let mut history = records(&options.state_file)?;
    let existing = history.iter().position(|r| r.boot_id == options.boot_id);
    let mut record = match existing.map(|i| history.remove(i)) {
        Some(record) if record.phase == GatePhase::Bad => {
            tracing::warn!("slot {} was marked bad in this boot; rebooting again", record.slot);
            reboot().await;
            return Ok(record);
        }
        Some(record) if record.phase != GatePhase::Checking => return Ok(record),
        Some(record) => {
            tracing::info!("health gate: resuming the window of slot {}", record.slot);
            record
        }
        None => {
            let slots = rauc.slots().await?;
            let booted = booted(&slots).ok_or(GateError::NoBootedSlot)?;
            GateRecord {
                boot_id: options.boot_id.clone(),
                slot: booted.name.clone(),
                bootname: booted.bootname.clone(),
                version: booted.installed_version.clone(),
                phase: GatePhase::Checking,
                started: unix_now(),
                started_uptime: uptime()?,
                window_seconds: options.window.as_secs(),
                decided: None,
                detail: String::new(),
            }
        }
    };
    save(&options.state_file, &mut history, &record)?;
    tracing::info!("health gate: slot {} on trial for {} s", record.slot, record.window_seconds);
    let deadline = record.started_uptime.saturating_add(record.window_seconds);
    loop {
        let verdict = health().await;
        match verdict {
            Ok(()) => {
                let marked = rauc.mark(MarkState::Good, &SlotRef::Booted).await?;
                record.phase = GatePhase::Good;
                record.decided = Some(unix_now());
                record.detail = marked.message;
                save(&options.state_file, &mut history, &record)?;
                tracing::info!("health gate: slot {} is healthy: {}", record.slot, record.detail);
                return Ok(record);
            }
            Err(problem) => record.detail = problem,
        }
        let now = uptime()?;
        if now >= deadline {
            break;
        }
        let left = Duration::from_secs(deadline - now);
        tokio::time::sleep(options.interval.min(left)).await;
    }
    let slots = rauc.slots().await?;
    let fallback = fallback(&slots, &record.slot);
    record.decided = Some(unix_now());
    let Some(fallback) = fallback else {
        record.phase = GatePhase::Held;
        save(&options.state_file, &mut history, &record)?;
        tracing::error!(
            "health gate: slot {} is unhealthy ({}), but no other slot is good: staying up \
             unconfirmed",
            record.slot,
            record.detail
        );
        return Ok(record);
    };
    // Persisted first: a restart between Mark and the reboot must not mark the slot good.
    record.phase = GatePhase::Bad;
    save(&options.state_file, &mut history, &record)?;
    let marked = rauc.mark(MarkState::Bad, &SlotRef::Booted).await?;
    tracing::error!(
        "health gate: slot {} is unhealthy ({}); {}; rebooting into {fallback}",
        record.slot,
        record.detail,
        marked.message
    );
    reboot().await;
    Ok(record)
}

/// The slot the system runs from.
fn booted(slots: &[SlotStatus]) -> Option<&SlotStatus> {
    slots.iter().find(|s| s.state == Some(SlotState::Booted))
}

/// Another bootable slot of the booted slot's class that the boot loader calls good.
fn fallback(slots: &[SlotStatus], booted: &str) -> Option<String> {
    let class = slots.iter().find(|s| s.name == booted).and_then(|s| s.class.clone());
    slots
        .iter()
        .find(|s| {
            s.name != booted
                && s.bootname.is_some()
                && s.class == class
                && s.boot_status == Some(BootStatus::Good)
        })
        .map(|s| s.name.clone())
}

/// Replaces this boot's record in `history`, keeps the newest [`KEEP_RECORDS`] and writes the
/// file atomically (temporary file, fsync, rename).
fn save(path: &Path, history: &mut Vec<GateRecord>, record: &GateRecord) -> Result<(), GateError> {
    history.retain(|r| r.boot_id != record.boot_id);
    history.push(record.clone());
    let excess = history.len().saturating_sub(KEEP_RECORDS);
    history.drain(..excess);
    let fail = |source| GateError::State { path: path.into(), source };
    let text = serde_json::to_vec_pretty(&history).map_err(|e| fail(e.into()))?;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(fail)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
    std::io::Write::write_all(&mut tmp, &text).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}

/// Whole seconds since boot, from `/proc/uptime` (`proc(5)`).
fn uptime() -> Result<u64, GateError> {
    const UPTIME: &str = "/proc/uptime";
    let fail = |source| GateError::State { path: UPTIME.into(), source };
    let text = std::fs::read_to_string(UPTIME).map_err(fail)?;
    let seconds = text.split_whitespace().next().and_then(|s| s.parse::<f64>().ok());
    let bad = || fail(std::io::Error::other(format!("unexpected content {text:?}")));
    seconds.filter(|s| s.is_finite() && *s >= 0.0).map(|s| s as u64).ok_or_else(bad)
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
