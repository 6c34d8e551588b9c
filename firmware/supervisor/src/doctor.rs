//! The doctor: a registry of checks over the daemon's own state, each with an area, a stable
//! code, a status (pass, warn, fail, skip), what was found and what to do about it.
//!
//! | area | what |
//! |---|---|
//! | config | the config file loaded at start (else the daemon runs the last applied generation, or nothing) |
//! | reconcile | the last reconcile ran, its operations succeeded, nothing blocked or drifted, resyncs on time |
//! | ledger | the entries decode, no reconcile was interrupted, the generations decode |
//! | routes | the routes routerd owns are on the host as declared |
//! | firewall | routerd's nft tables are on the host as declared, no orphaned ones kept |
//! | mgmt | a management interface is protected, no apply waits for its confirm |
//! | leases | the DHCP client bindings hold their leases (`required` ones within their time) |
//! | gateway | each default route's gateway resolves and answers echoes ([`crate::gateway`]) |
//! | disk | room for the ledger |
//! | runtime | memory, the systemd watchdog |
//!
//! Checks read; none changes anything.
//!
//! **Current state, not the last reconcile's.** The checks of what is on the host (`routes`,
//! `firewall`, `leases`) read [`DoctorInput::observed`]: a plan document the daemon observes
//! for the doctor when its last observation is older than [`OBSERVED_MAX_AGE`]
//! (`Daemon::observe_for_doctor`), so a table deleted by hand fails `F001` at once, even in
//! the moment before the nftables notification's reconcile puts it back. A plan observes and
//! changes nothing, so the failure is shown, not hidden by a repair. The `reconcile` checks
//! are about the last reconcile itself and read its Result document.
//!
//! On the web page a remedy comes with an action ([`action`]): a link to the page that does
//! it. The console prints the remedy's command text.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use routerd_engine::registry::Registry;
use routerd_engine::{ConditionStatus, ConditionType, OperationResult, ResultDocument};
use routerd_ledger::{EntryState, Ledger};
use routerd_model::status::{CheckStatus, DaemonStatus, DoctorCheck};
use routerd_model::{Config, ResourceSpec};

/// Everything the checks read.
pub struct DoctorInput<'a> {
    /// The daemon's status.
    pub status: &'a DaemonStatus,
    /// The last Result document, if a reconcile finished.
    pub result: Option<&'a ResultDocument>,
    /// The host as observed now (a plan document no older than [`OBSERVED_MAX_AGE`]); `None`
    /// when it could not be observed (the checks then read `result`, and say so).
    pub observed: Option<&'a ResultDocument>,
    /// The default routes' gateways and their probe history.
    pub gateways: &'a [crate::gateway::GatewayHistory],
    /// The applied config.
    pub config: &'a Config,
    /// The ledger.
    pub ledger: &'a Ledger,
    /// The resync interval.
    pub resync: Duration,
    /// When the last reconcile finished.
    pub last_finished: Option<SystemTime>,
    /// Since when each DHCP client binding has been without its lease ([`track_unbound`]),
    /// by resource ID.
    pub unbound_since: &'a BTreeMap<String, SystemTime>,
    /// The controller crates, whose doctor checks run after the built-in ones.
    pub registry: &'a Registry,
}

/// How old an observation of the host the doctor may read: the web page's live table runs the
/// checks every 2 s, and a second page or `routerctl doctor` within this time reuses it.
pub const OBSERVED_MAX_AGE: Duration = Duration::from_secs(1);

/// How many echoes in a row must be lost before a gateway counts as unreachable, when its
/// neighbour entry does not say so first: one lost echo is loss, not an outage.
pub const GATEWAY_DOWN_AFTER: usize = 3;

/// The action the web page offers for a check of `code` that does not pass: a button label
/// and the page that does it (issue 34 §3: remedies are actions there; the console keeps the
/// command text of [`DoctorCheck::remedy`]).
pub fn action(code: &str) -> Option<(&'static str, &'static str)> {
    Some(match code {
        "C001" | "R002" | "R003" | "M001" | "B001" | "B002" => ("Open the config", "/config"),
        // What a reconcile would do to put them back, drawn.
        "T001" | "F001" => ("Show the plan", "/graph"),
        "R004" => ("See the artifacts", "/artifacts"),
        "F002" => ("Review adoption", "/adopt"),
        "L001" | "L003" | "M002" => ("Roll back", "/history"),
        "L002" => ("See the ledger", "/ledger"),
        "U001" => ("See the metrics", "/metrics"),
        // The gateway's round-trip time and loss over the last hour.
        "G001" => ("See its history", "/interfaces"),
        _ => return None,
    })
}

/// How long a DHCPv4 or DHCPv6 address binding may take to get its lease before it counts as
/// failed: a DHCP exchange takes seconds (RFC 2131 section 4.1 retransmits from 4 s, doubling);
/// a minute covers a few lost packets and a slow upstream.
pub const LEASE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long an `IPv6PrefixDelegation` without `convergenceTimeout` may take to get its
/// prefix: longer than a lease, since the upstream (an ISP's or a home gateway's DHCPv6
/// server) often answers only after its own uplink is up.
pub const PREFIX_TIMEOUT: Duration = Duration::from_secs(120);

/// Updates `since` from a Result document: a resource whose `Bound` condition is not `True`
/// keeps the time it was first seen so (`now` when new); a bound one, and one the document no
/// longer has, leaves. So the time counts from the daemon's start, from the config that
/// declared the binding, or from the loss of the lease, whichever is latest.
pub fn track_unbound(
    since: &mut BTreeMap<String, SystemTime>,
    doc: &ResultDocument,
    now: SystemTime,
) {
    let unbound: Vec<&str> = doc
        .resources
        .iter()
        .filter(|r| {
            r.conditions
                .iter()
                .any(|c| c.type_ == ConditionType::Bound && c.status != ConditionStatus::True)
        })
        .map(|r| r.id.as_str())
        .collect();
    since.retain(|id, _| unbound.contains(&id.as_str()));
    for id in unbound {
        since.entry(id.to_string()).or_insert(now);
    }
}

/// Runs every check, in area order.
pub fn run(input: &DoctorInput<'_>) -> Vec<DoctorCheck> {
    let mut out = Vec::new();
    config_file(input.status, &mut out);
    reconcile(input, &mut out);
    ledger(input, &mut out);
    owned_artifacts(input, "routes", "T001", &["linux.ipv4.route", "linux.ipv6.route"], &mut out);
    owned_artifacts(input, "firewall", "F001", &["nft.table"], &mut out);
    firewall_orphans(input, &mut out);
    mgmt(input, &mut out);
    leases(input.config, current(input), input.unbound_since, SystemTime::now(), &mut out);
    gateways(input.gateways, &mut out);
    disk(input, &mut out);
    runtime(&mut out);
    input.registry.run_doctor(input.config, current(input), &mut out);
    out
}

/// What the host checks read: the observation made for the doctor, else the last reconcile's.
fn current<'a>(input: &DoctorInput<'a>) -> Option<&'a ResultDocument> {
    input.observed.or(input.result)
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

fn config_file(status: &DaemonStatus, out: &mut Vec<DoctorCheck>) {
    let name = "the config file loads";
    out.push(match &status.config_fallback {
        None => check("config", "C001", name, CheckStatus::Pass, status.config.as_str(), ""),
        Some(f) => {
            let running = match f.running {
                Some(g) => format!("running generation {g}, the last applied, instead"),
                None => "nothing is applied and no reconcile runs".into(),
            };
            check(
                "config",
                "C001",
                name,
                CheckStatus::Fail,
                format!("{running}; {}", list(&f.errors, 3)),
                "fix the file and send SIGHUP (routerd validate --config FILE shows every error), \
                 or apply a config from the web UI or routerctl apply",
            )
        }
    });
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
        .filter(|o| o.result == OperationResult::Failed)
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
    let Some(doc) = current(input) else {
        out.push(check(area, code, &name, CheckStatus::Skip, "no reconcile yet", ""));
        return;
    };
    let stale = if input.observed.is_some() { "" } else { " (as of the last reconcile)" };
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
        let detail = format!("{total} declared, all in place{stale}");
        check(area, code, &name, CheckStatus::Pass, detail, "")
    } else {
        check(area, code, &name, CheckStatus::Fail, format!("{}{stale}", list(&wrong, 3)),
            "routerctl reconcile repairs them; if they come back wrong, something else changes them")
    });
}

fn firewall_orphans(input: &DoctorInput<'_>, out: &mut Vec<DoctorCheck>) {
    let Some(doc) = current(input) else { return };
    let kept: Vec<String> = doc
        .orphans
        .iter()
        .filter(|o| o.kind == "nft.table" && o.cleanup == routerd_engine::OrphanCleanup::Keep)
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

/// A DHCP client binding of the config: its ID, whether it is `required`, its time to bind.
fn bindings(config: &Config) -> Vec<(String, bool, Duration)> {
    let timeout = |text: Option<&String>| {
        // Validation rejects a bad duration; the default stands in for one anyway.
        text.and_then(|t| routerd_model::duration::parse_duration(t).ok()).unwrap_or(PREFIX_TIMEOUT)
    };
    config
        .spec
        .resources
        .iter()
        .filter_map(|r| match &r.spec {
            ResourceSpec::Ipv4DhcpAddress(s) => Some((r.id(), s.required, LEASE_TIMEOUT)),
            ResourceSpec::Ipv6DhcpAddress(s) => Some((r.id(), s.required, LEASE_TIMEOUT)),
            ResourceSpec::Ipv6PrefixDelegation(s) => {
                Some((r.id(), s.required, timeout(s.convergence_timeout.as_ref())))
            }
            _ => None,
        })
        .collect()
}

/// B001: the `required` bindings hold their leases. While one waits within its time the check
/// warns, and the health gate waits too ([`crate::ota::verdict`]); past its time it fails.
/// B002: the other bindings, warned about once past their time.
fn leases(
    config: &Config,
    result: Option<&ResultDocument>,
    unbound_since: &BTreeMap<String, SystemTime>,
    now: SystemTime,
    out: &mut Vec<DoctorCheck>,
) {
    use CheckStatus::{Fail, Pass, Skip, Warn};
    let area = "leases";
    /// Where one binding stands: bound, waiting within its time, or past it.
    #[derive(PartialEq)]
    enum Stand {
        Bound,
        Waiting,
        Late,
    }
    // `(required, stand, the line that describes it)` of each binding.
    let found: Vec<(bool, Stand, String)> = bindings(config)
        .into_iter()
        .map(|(id, required, timeout)| {
            let condition = result
                .and_then(|d| d.resources.iter().find(|r| r.id == id))
                .and_then(|r| r.conditions.iter().find(|c| c.type_ == ConditionType::Bound));
            if let Some(c) = condition.filter(|c| c.status == ConditionStatus::True) {
                return (required, Stand::Bound, format!("{id}: {}", c.message));
            }
            let why = condition.map_or("no reconcile yet", |c| c.message.as_str());
            let waited = unbound_since
                .get(&id)
                .and_then(|t| now.duration_since(*t).ok())
                .unwrap_or_default();
            let stand = if waited >= timeout { Stand::Late } else { Stand::Waiting };
            let line = format!("{id}: {why}, for {}s of {}s", waited.as_secs(), timeout.as_secs());
            (required, stand, line)
        })
        .collect();
    let remedy = "check the uplink: the link is up, the upstream's DHCP server answers and \
                  accepts this client (DUID, IAID, VLAN); routerctl resources shows the binding";
    for (code, name, required) in
        [("B001", "required leases bound", true), ("B002", "leases bound", false)]
    {
        let lines = |stand: Stand| -> Vec<String> {
            found
                .iter()
                .filter(|(r, s, _)| *r == required && *s == stand)
                .map(|(_, _, line)| line.clone())
                .collect()
        };
        let (held, early, late) = (lines(Stand::Bound), lines(Stand::Waiting), lines(Stand::Late));
        out.push(if found.iter().all(|(r, _, _)| *r != required) {
            let what = if required { "no binding has required: true" } else { "none declared" };
            check(area, code, name, Skip, what, "")
        } else if !late.is_empty() {
            // An optional binding without its lease is worth a look, not a failed router.
            let status = if required { Fail } else { Warn };
            check(area, code, name, status, list(&late, 3), remedy)
        } else if required && !early.is_empty() {
            let detail = format!("waiting: {}", list(&early, 3));
            check(area, code, name, Warn, detail, "wait; the check fails once the time is over")
        } else {
            let mut detail = list(&held, 3);
            if !early.is_empty() {
                detail = format!("{detail}; waiting: {}", list(&early, 3));
            }
            check(area, code, name, Pass, detail.trim_start_matches("; "), "")
        });
    }
}

/// G001, one per default route's gateway ([`crate::gateway`]): fails when the gateway does
/// not resolve (neighbour entry `INCOMPLETE` or `FAILED`) or its last
/// [`GATEWAY_DOWN_AFTER`] echoes were all lost; warns on loss over the loss window; skips
/// without a default route through a gateway.
fn gateways(histories: &[crate::gateway::GatewayHistory], out: &mut Vec<DoctorCheck>) {
    use CheckStatus::{Fail, Pass, Skip, Warn};
    let area = "gateway";
    let present: Vec<_> = histories.iter().filter(|h| h.present).collect();
    if present.is_empty() {
        out.push(check(
            area,
            "G001",
            "gateways answer",
            Skip,
            "no default route via a gateway",
            "",
        ));
        return;
    }
    let remedy = "check the upstream: the link is up and the gateway answers ARP/NDP and ping \
                  (a moved or removed gateway address, a cable, the modem)";
    for h in present {
        let name = format!("gateway {} via {} answers", h.gateway, h.interface);
        let Some(last) = h.samples.last() else {
            out.push(check(area, "G001", &name, Skip, "no probe yet", ""));
            continue;
        };
        let neighbour = h.neighbour.as_deref().unwrap_or("none");
        let rtt = last.rtt_ms.map_or_else(|| "lost".to_string(), |ms| format!("{ms:.2} ms"));
        let window = h.samples.len().min(crate::gateway::LOSS_WINDOW);
        let mut detail = format!(
            "last echo {rtt}, loss {:.0} % over {window} probes, neighbour {neighbour}",
            last.loss_percent
        );
        if let Some(e) = h.last_error.as_deref().filter(|_| last.rtt_ms.is_none()) {
            detail.push_str(&format!(" ({e})"));
        }
        let lost = h.lost_in_a_row();
        let unresolved = matches!(neighbour, "incomplete" | "failed");
        let status = if unresolved || lost >= GATEWAY_DOWN_AFTER.min(h.samples.len()).max(1) {
            if lost > 0 { Fail } else { Warn }
        } else if last.loss_percent > 0.0 {
            Warn
        } else {
            Pass
        };
        out.push(check(area, "G001", &name, status, detail, remedy));
    }
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

    /// A Result document whose resources have these `Bound` conditions.
    fn bound_doc(bound: &[(&str, bool)]) -> ResultDocument {
        use routerd_engine::Reason;
        use routerd_engine::result::{Condition, ResourceResult};
        let resource = |(id, status): &(&str, bool)| ResourceResult {
            id: id.to_string(),
            generation: None,
            observed_generation: None,
            phase: routerd_engine::Phase::Healthy,
            observed: Vec::new(),
            plan: Vec::new(),
            artifacts: Vec::new(),
            warnings: Vec::new(),
            status: None,
            conditions: vec![Condition {
                type_: ConditionType::Bound,
                status: ConditionStatus::from(*status),
                reason: if *status { Reason::LeaseBound } else { Reason::NoLease },
                message: if *status { "leased 192.0.2.10/24" } else { "no lease yet" }.into(),
                last_transition_time: "2026-11-22T00:00:00Z".into(),
            }],
        };
        ResultDocument {
            generation: 1,
            timestamp: "2026-11-22T00:00:00Z".into(),
            phase: routerd_engine::Phase::Healthy,
            mode: "reconcile".into(),
            resources: bound.iter().map(resource).collect(),
            orphans: Vec::new(),
            adoption_candidates: Vec::new(),
            adopted_artifacts: Vec::new(),
            operations: Vec::new(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn a_required_binding_holds_the_gate_while_it_waits_and_fails_past_its_time() {
        let config = routerd_model::parse_config(
            "apiVersion: routerd.net/v1alpha1
kind: Router
metadata: {name: r}
spec:
  resources:
    - apiVersion: net.routerd.net/v1alpha1
      kind: Interface
      metadata: {name: wan}
      spec: {ifname: wan0, managed: true}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPAddress
      metadata: {name: wan-v4}
      spec: {interface: wan, required: true}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6PrefixDelegation
      metadata: {name: wan-pd}
      spec: {interface: wan, convergenceTimeout: 5m}
",
            "router.yaml",
        )
        .expect("config");
        let v4 = "net.routerd.net/v1alpha1/IPv4DHCPAddress/wan-v4";
        let pd = "net.routerd.net/v1alpha1/IPv6PrefixDelegation/wan-pd";
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let mut since = BTreeMap::new();
        let checks = |doc: &ResultDocument, since: &BTreeMap<String, SystemTime>, at: u64| {
            let mut out = Vec::new();
            leases(&config, Some(doc), since, t0 + Duration::from_secs(at), &mut out);
            let by_code = |code: &str| {
                out.iter().find(|c| c.code == code).map(|c| (c.status, c.detail.clone()))
            };
            (by_code("B001").expect("B001"), by_code("B002").expect("B002"), out)
        };

        // Neither bound yet: the required one waits within its minute; the gate waits too.
        let unbound = bound_doc(&[(v4, false), (pd, false)]);
        track_unbound(&mut since, &unbound, t0);
        let ((status, detail), (optional, _), out) = checks(&unbound, &since, 30);
        assert_eq!(status, CheckStatus::Warn, "{detail}");
        assert!(detail.contains("for 30s of 60s"), "{detail}");
        assert_eq!(optional, CheckStatus::Pass);
        // (R001 is not among these checks, so the verdict names it too.)
        let held = crate::ota::verdict(&out).expect_err("a waiting required lease holds the gate");
        assert!(held.contains("B001"), "{held}");

        // Past the minute it fails; the delegation has five minutes (convergenceTimeout).
        let ((status, _), (optional, _), _) = checks(&unbound, &since, 61);
        assert_eq!((status, optional), (CheckStatus::Fail, CheckStatus::Pass));
        let ((_, _), (optional, detail), _) = checks(&unbound, &since, 301);
        assert_eq!(optional, CheckStatus::Warn, "an optional binding only warns: {detail}");

        // Bound: the check passes and the time leaves the map; a lost lease counts anew.
        let leased = bound_doc(&[(v4, true), (pd, false)]);
        track_unbound(&mut since, &leased, t0 + Duration::from_secs(90));
        assert!(!since.contains_key(v4) && since.contains_key(pd), "{since:?}");
        let ((status, detail), _, out) = checks(&leased, &since, 90);
        assert_eq!(status, CheckStatus::Pass, "{detail}");
        assert!(detail.contains("192.0.2.10/24"), "{detail}");
        let held = crate::ota::verdict(&out).expect_err("R001 is not among these checks");
        assert!(!held.contains("B001"), "{held}");
        track_unbound(&mut since, &unbound, t0 + Duration::from_secs(200));
        let ((status, detail), _, _) = checks(&unbound, &since, 230);
        assert_eq!(status, CheckStatus::Warn, "{detail}");
        assert!(detail.contains("for 30s"), "{detail}");
    }

    #[test]
    fn a_gateway_fails_when_unresolved_or_its_last_echoes_are_lost_and_warns_on_loss() {
        use crate::gateway::{GatewayHistory, GatewaySample};
        let sample = |rtt_ms: Option<f64>, loss_percent: f64| GatewaySample {
            at_unix_ms: 0,
            rtt_ms,
            loss_percent,
        };
        let history = |samples: Vec<GatewaySample>, neighbour: &str| GatewayHistory {
            gateway: "192.0.2.1".parse().expect("ip"),
            interface: "wan0".into(),
            present: true,
            neighbour: Some(neighbour.into()),
            last_error: None,
            samples,
        };
        let verdict = |h: GatewayHistory| {
            let mut out = Vec::new();
            gateways(&[h], &mut out);
            assert_eq!(out.len(), 1);
            (out[0].status, out[0].detail.clone())
        };
        let ok = sample(Some(0.4), 0.0);
        let (status, detail) = verdict(history(vec![ok.clone()], "reachable"));
        assert_eq!(status, CheckStatus::Pass, "{detail}");
        assert!(detail.contains("0.40 ms") && detail.contains("reachable"), "{detail}");
        let lossy = vec![ok.clone(), sample(None, 50.0), sample(Some(0.5), 33.3)];
        assert_eq!(verdict(history(lossy, "reachable")).0, CheckStatus::Warn);
        let two_lost = vec![ok.clone(), sample(None, 50.0), sample(None, 66.7)];
        assert_eq!(verdict(history(two_lost.clone(), "stale")).0, CheckStatus::Warn);
        assert_eq!(verdict(history(two_lost, "failed")).0, CheckStatus::Fail, "unresolved");
        let three_lost = vec![ok, sample(None, 50.0), sample(None, 66.7), sample(None, 75.0)];
        assert_eq!(verdict(history(three_lost, "reachable")).0, CheckStatus::Fail);
        assert_eq!(verdict(history(vec![sample(None, 100.0)], "none")).0, CheckStatus::Fail);
        let mut gone = history(Vec::new(), "none");
        gone.present = false;
        assert_eq!(verdict(gone).0, CheckStatus::Skip, "no default route left");
    }

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
