//! The doctor: a registry of checks over the daemon's own state, each with an area, a stable
//! code, a status (pass, warn, fail, skip), what was found and what to do about it.
//!
//! | area | what |
//! |---|---|
//! | reconcile | the last reconcile ran, its operations succeeded, nothing blocked or drifted, resyncs on time |
//! | ledger | the entries decode, no reconcile was interrupted, the generations decode |
//! | routes | the routes routerd owns are on the host as declared |
//! | firewall | routerd's nft tables are on the host as declared, no orphaned ones kept |
//! | mgmt | a management interface is protected, no apply waits for its confirm |
//! | disk | room for the ledger |
//! | runtime | memory, the systemd watchdog |
//!
//! Checks read; none changes anything.

use std::path::Path;
use std::time::{Duration, SystemTime};

use routerd_engine::ResultDocument;
use routerd_ledger::{EntryState, Ledger};
use routerd_model::Config;
use routerd_model::status::{CheckStatus, DaemonStatus, DoctorCheck};

/// Everything the checks read.
pub struct DoctorInput<'a> {
    /// The daemon's status.
    pub status: &'a DaemonStatus,
    /// The last Result document, if a reconcile finished.
    pub result: Option<&'a ResultDocument>,
    /// The applied config.
    pub config: &'a Config,
    /// The ledger.
    pub ledger: &'a Ledger,
    /// The resync interval.
    pub resync: Duration,
    /// When the last reconcile finished.
    pub last_finished: Option<SystemTime>,
}

/// Runs every check, in area order.
pub fn run(input: &DoctorInput<'_>) -> Vec<DoctorCheck> {
    let mut out = Vec::new();
    reconcile(input, &mut out);
    ledger(input, &mut out);
    owned_artifacts(input, "routes", "T001", &["linux.ipv4.route", "linux.ipv6.route"], &mut out);
    owned_artifacts(input, "firewall", "F001", &["nft.table"], &mut out);
    firewall_orphans(input, &mut out);
    mgmt(input, &mut out);
    disk(input, &mut out);
    runtime(&mut out);
    out
}

fn check(
    area: &str,
    code: &str,
    name: &str,
    status: CheckStatus,
    detail: impl Into<String>,
    remedy: &str,
) -> DoctorCheck {
    DoctorCheck {
        area: area.into(),
        code: code.into(),
        name: name.into(),
        status,
        detail: detail.into(),
        remedy: if status == CheckStatus::Pass { String::new() } else { remedy.into() },
    }
}

/// At most `n` items, then `… (N more)`.
fn list(items: &[String], n: usize) -> String {
    let mut out = items.iter().take(n).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > n {
        out.push_str(&format!(" … ({} more)", items.len() - n));
    }
    out
}

fn reconcile(input: &DoctorInput<'_>, out: &mut Vec<DoctorCheck>) {
    use CheckStatus::{Fail, Pass, Skip, Warn};
    let s = input.status;
    let area = "reconcile";
    out.push(match (&s.last_error, &s.last_reconcile) {
        (Some(e), _) => check(
            area,
            "R001",
            "last reconcile ran",
            Fail,
            e.clone(),
            "see the daemon log (journalctl -u routerd); the ledger or the host is unavailable",
        ),
        (None, None) => check(
            area,
            "R001",
            "last reconcile ran",
            Warn,
            "no reconcile has finished yet",
            "wait for the first reconcile",
        ),
        (None, Some(r)) => check(
            area,
            "R001",
            "last reconcile ran",
            Pass,
            format!(
                "generation {} at {} ({} ms, by {})",
                s.generation, r.started, r.duration_ms, r.trigger
            ),
            "",
        ),
    });
    let Some(doc) = input.result else {
        out.push(check(area, "R002", "operations succeeded", Skip, "no reconcile yet", ""));
        return;
    };
    let failed: Vec<String> = doc
        .operations
        .iter()
        .filter(|o| o.result == "failed")
        .map(|o| {
            format!("{} {}/{}: {}", o.operation, o.kind, o.name, o.error.as_deref().unwrap_or(""))
        })
        .collect();
    out.push(if failed.is_empty() {
        check(
            area,
            "R002",
            "operations succeeded",
            Pass,
            format!("{} operations", doc.operations.len()),
            "",
        )
    } else {
        check(
            area,
            "R002",
            "operations succeeded",
            Fail,
            list(&failed, 3),
            "fix the config or the host so these operations can run (routerctl plan shows why)",
        )
    });
    let by_phase = |phase: routerd_engine::Phase| -> Vec<String> {
        doc.resources.iter().filter(|r| r.phase == phase).map(|r| r.id.clone()).collect()
    };
    let blocked = by_phase(routerd_engine::Phase::Blocked);
    out.push(if blocked.is_empty() {
        check(area, "R003", "nothing blocked", Pass, "", "")
    } else {
        check(
            area,
            "R003",
            "nothing blocked",
            Warn,
            list(&blocked, 3),
            "see the resources' Blocked conditions (routerctl resources -o json)",
        )
    });
    let drifted = by_phase(routerd_engine::Phase::Drifted);
    out.push(if drifted.is_empty() {
        check(area, "R004", "no drift left", Pass, "", "")
    } else {
        check(
            area,
            "R004",
            "no drift left",
            Warn,
            list(&drifted, 3),
            "something changes these back; find who (another daemon, a script) and stop it",
        )
    });
    let late = input
        .last_finished
        .and_then(|t| t.elapsed().ok())
        .filter(|age| *age > input.resync * 2 + Duration::from_secs(10));
    out.push(match late {
        Some(age) => check(
            area,
            "R005",
            "resync on time",
            Warn,
            format!(
                "last reconcile {}s ago, resync every {}s",
                age.as_secs(),
                input.resync.as_secs()
            ),
            "the reconcile loop is stuck or starved; see the daemon log",
        ),
        None => check(area, "R005", "resync on time", Pass, "", ""),
    });
}

fn ledger(input: &DoctorInput<'_>, out: &mut Vec<DoctorCheck>) {
    use CheckStatus::{Fail, Pass, Warn};
    let area = "ledger";
    match input.ledger.heads() {
        Ok(heads) => {
            out.push(check(
                area,
                "L001",
                "entries decode",
                Pass,
                format!("{} entries", heads.len()),
                "",
            ));
            let pending = heads.iter().filter(|h| h.state == EntryState::Pending).count();
            out.push(if pending == 0 {
                check(area, "L002", "no interrupted reconcile", Pass, "", "")
            } else {
                check(
                    area,
                    "L002",
                    "no interrupted reconcile",
                    Warn,
                    format!("{pending} entries still pending from an interrupted reconcile"),
                    "the next reconcile resolves them against the host",
                )
            });
        }
        Err(e) => out.push(check(
            area,
            "L001",
            "entries decode",
            Fail,
            e.to_string(),
            "restore the ledger from a backup, or rebuild it with routerd adopt --apply",
        )),
    }
    out.push(match input.ledger.generation_records() {
        Ok(all) => check(
            area,
            "L003",
            "generations decode",
            Pass,
            format!("{} generations", all.len()),
            "",
        ),
        Err(e) => check(
            area,
            "L003",
            "generations decode",
            Fail,
            e.to_string(),
            "the history is damaged; the running config is unaffected",
        ),
    });
}

/// Declared artifacts of `kinds` that are missing or differ on the host.
fn owned_artifacts(
    input: &DoctorInput<'_>,
    area: &str,
    code: &str,
    kinds: &[&str],
    out: &mut Vec<DoctorCheck>,
) {
    let name = format!("{} in place", if area == "routes" { "routes" } else { "nft tables" });
    let Some(doc) = input.result else {
        out.push(check(area, code, &name, CheckStatus::Skip, "no reconcile yet", ""));
        return;
    };
    let mut total = 0;
    let mut wrong = Vec::new();
    for o in doc.resources.iter().flat_map(|r| &r.observed).filter(|o| kinds.contains(&&*o.kind)) {
        total += 1;
        if !o.present {
            wrong.push(format!("{}/{} missing", o.kind, o.name));
        } else if !o.drift.is_empty() {
            let attrs: Vec<&str> = o.drift.iter().map(|d| d.attribute.as_str()).collect();
            wrong.push(format!("{}/{} differs ({})", o.kind, o.name, attrs.join(", ")));
        }
    }
    out.push(if wrong.is_empty() {
        check(area, code, &name, CheckStatus::Pass, format!("{total} declared, all in place"), "")
    } else {
        check(area, code, &name, CheckStatus::Fail, list(&wrong, 3),
            "routerctl reconcile repairs them; if they come back wrong, something else changes them")
    });
}

fn firewall_orphans(input: &DoctorInput<'_>, out: &mut Vec<DoctorCheck>) {
    let Some(doc) = input.result else { return };
    let kept: Vec<String> = doc
        .orphans
        .iter()
        .filter(|o| o.kind == "nft.table" && o.cleanup == "keep")
        .map(|o| format!("{} ({})", o.name, o.reason))
        .collect();
    out.push(if kept.is_empty() {
        check("firewall", "F002", "no orphaned routerd tables", CheckStatus::Pass, "", "")
    } else {
        check(
            "firewall",
            "F002",
            "no orphaned routerd tables",
            CheckStatus::Warn,
            list(&kept, 3),
            "tables named routerd_* that the ledger does not own: delete them by hand if unused",
        )
    });
}

fn mgmt(input: &DoctorInput<'_>, out: &mut Vec<DoctorCheck>) {
    let r = &input.config.spec.reconcile;
    out.push(if r.protected_interfaces.is_empty() && r.protected_zones.is_empty() {
        check("mgmt", "M001", "management interface protected", CheckStatus::Warn,
            "spec.reconcile.protectedInterfaces and protectedZones are empty",
            "list the interface you manage the router through in spec.reconcile.protectedInterfaces")
    } else {
        let names = [r.protected_interfaces.clone(), r.protected_zones.clone()].concat();
        check("mgmt", "M001", "management interface protected", CheckStatus::Pass, names.join(", "), "")
    });
    out.push(match &input.status.pending_confirm {
        Some(c) => check(
            "mgmt",
            "M002",
            "no apply awaits its confirm",
            CheckStatus::Warn,
            format!(
                "generation {} is rolled back to {} at {}",
                c.generation, c.previous, c.deadline
            ),
            "routerctl confirm keeps it; routerctl rollback restores the previous one now",
        ),
        None => check("mgmt", "M002", "no apply awaits its confirm", CheckStatus::Pass, "", ""),
    });
}

fn disk(input: &DoctorInput<'_>, out: &mut Vec<DoctorCheck>) {
    let dir = input
        .ledger
        .path()
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = "room for the ledger";
    match nix::sys::statvfs::statvfs(dir) {
        Ok(fs) => {
            let unit = fs.fragment_size();
            let free = fs.blocks_available().saturating_mul(unit);
            let total = fs.blocks().saturating_mul(unit).max(1);
            let percent = free.saturating_mul(100) / total;
            let detail = format!("{} MiB free ({percent} %) on {}", free >> 20, dir.display());
            let remedy = "free space on that filesystem: the ledger must be writable to apply";
            out.push(match disk_status(free, total) {
                CheckStatus::Pass => check("disk", "D001", name, CheckStatus::Pass, detail, ""),
                status => check("disk", "D001", name, status, detail, remedy),
            });
        }
        Err(e) => out.push(check(
            "disk",
            "D001",
            name,
            CheckStatus::Skip,
            format!("{}: {e}", dir.display()),
            "",
        )),
    }
}

/// The verdict on `free` of `total` bytes where the ledger lives.
///
/// The ledger is megabytes at most, so the verdict is on bytes: fail under 16 MiB, where a
/// ledger write can fail; warn under 64 MiB. The share of the disk matters only on small flash:
/// under 10 % warns while less than 1 GiB is free, so a large disk with gigabytes left passes
/// however full it is (a build machine at 98 % used once failed every health gate).
fn disk_status(free: u64, total: u64) -> CheckStatus {
    const MIB: u64 = 1 << 20;
    let percent = free.saturating_mul(100) / total.max(1);
    if free < 16 * MIB {
        CheckStatus::Fail
    } else if free < 64 * MIB || (percent < 10 && free < 1024 * MIB) {
        CheckStatus::Warn
    } else {
        CheckStatus::Pass
    }
}

fn runtime(out: &mut Vec<DoctorCheck>) {
    let rss_kib = std::fs::read_to_string("/proc/self/status").ok().and_then(|s| {
        let line = s.lines().find(|l| l.starts_with("VmRSS:"))?.to_string();
        line.split_whitespace().nth(1)?.parse::<u64>().ok()
    });
    out.push(match rss_kib {
        Some(kib) if kib > 64 * 1024 => check(
            "runtime",
            "U001",
            "memory",
            CheckStatus::Warn,
            format!("resident {} MiB", kib / 1024),
            "more than the 64 MiB budget: report it with routerctl doctor -o json",
        ),
        Some(kib) => check(
            "runtime",
            "U001",
            "memory",
            CheckStatus::Pass,
            format!("resident {} MiB", kib / 1024),
            "",
        ),
        None => check(
            "runtime",
            "U001",
            "memory",
            CheckStatus::Skip,
            "/proc/self/status unreadable",
            "",
        ),
    });
    let under_systemd = std::env::var_os("NOTIFY_SOCKET").is_some();
    out.push(match (under_systemd, crate::service::watchdog_interval()) {
        (false, _) => check(
            "runtime",
            "U002",
            "systemd watchdog",
            CheckStatus::Skip,
            "not started by systemd",
            "",
        ),
        (true, Some(every)) => check(
            "runtime",
            "U002",
            "systemd watchdog",
            CheckStatus::Pass,
            format!("pinged every {} ms", every.as_millis()),
            "",
        ),
        (true, None) => check(
            "runtime",
            "U002",
            "systemd watchdog",
            CheckStatus::Warn,
            "no WatchdogSec= in the unit",
            "set WatchdogSec=30s in routerd.service so a hung daemon restarts",
        ),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;

    #[test]
    fn disk_space_is_judged_in_bytes_and_the_share_only_counts_on_small_disks() {
        // A build machine's large disk, nearly full in share but with gigabytes left.
        assert_eq!(disk_status(4 * GIB, 252 * GIB), CheckStatus::Pass);
        // Too little to write the ledger, whatever the disk.
        assert_eq!(disk_status(10 * MIB, 252 * GIB), CheckStatus::Fail);
        assert_eq!(disk_status(10 * MIB, 12 * MIB), CheckStatus::Fail);
        // A router's data partition.
        assert_eq!(disk_status(40 * MIB, 512 * MIB), CheckStatus::Warn);
        assert_eq!(disk_status(300 * MIB, 8 * GIB), CheckStatus::Warn);
        assert_eq!(disk_status(400 * MIB, 512 * MIB), CheckStatus::Pass);
    }
}
