//! The doctor's `dns` area (design brief §4): read from the last observation of the host (the
//! Result document), so a check never blocks the daemon on a server that does not answer.
//!
//! | code | check |
//! |---|---|
//! | N001 | each `DNSServer`'s unit runs and its `named.conf` is in place |
//! | N002 | named accepted the configuration (no failed `bind.config`/`bind.zone` operation) |
//! | N003 | each zone answered its last transfer (loaded, serving) |
//! | N004 | the servers accept routerd's TSIG keys |
//! | N005 | owned RRsets match the declared data |
//! | N006 | foreign RRsets inside managed zones |
//! | N007 | each secondary a primary notifies serves the primary's serial of each zone |
//! | N008 | the clock is synchronised (TSIG allows 300 s of skew) |
//! | N009 | journal size and zone files of zones no longer declared |
//!
//! N007 reads the zones' `SecondariesInSync` conditions (`crate::status`): a secondary is
//! asked for its serial at every observation, so a lag right after a change shows until it
//! has transferred, which is why it warns rather than fails.

use std::path::Path;

use routerd_engine::ResultDocument;
use routerd_engine::registry::DoctorChecks;
use routerd_engine::result::{ObservedArtifact, OperationResult, ResourceResult};
use routerd_model::Config;
use routerd_model::status::{CheckStatus, DoctorCheck};

use crate::artifacts::{DATA_DIR, zone_file_name};
use crate::kinds::index::{DnsIndex, ZoneAt};
use crate::kinds::server::{DNS_SERVER, options_name, unit_name};

/// A journal larger than this is worth a look: BIND compacts it only on `rndc sync -clean`.
pub const JOURNAL_WARN_BYTES: u64 = 16 * 1024 * 1024;
/// The file systemd-timesyncd keeps while the clock is synchronised.
pub const TIMESYNC_FLAG: &str = "/run/systemd/timesync/synchronized";

/// The DNS area's checks.
pub struct DnsDoctor;

fn check(code: &str, name: &str, status: CheckStatus, detail: String, remedy: &str) -> DoctorCheck {
    DoctorCheck {
        area: "dns".into(),
        code: code.into(),
        name: name.into(),
        status,
        detail,
        remedy: remedy.into(),
    }
}

/// The observed artifacts of every resource of `doc`.
fn observed(doc: &ResultDocument) -> impl Iterator<Item = (&ResourceResult, &ObservedArtifact)> {
    doc.resources.iter().flat_map(|r| r.observed.iter().map(move |a| (r, a)))
}

/// The reason an RRset could not be read (`TsigBadSig: …`), from its drift.
fn unobserved(a: &ObservedArtifact) -> Option<String> {
    a.drift
        .iter()
        .find(|d| d.attribute == "unobserved")
        .and_then(|d| d.observed.as_str().map(str::to_owned))
}

fn list(items: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = items.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > SHOWN {
        text.push_str(&format!(" and {} more", items.len() - SHOWN));
    }
    text
}

impl DoctorChecks for DnsDoctor {
    fn run(&self, config: &Config, current: Option<&ResultDocument>, out: &mut Vec<DoctorCheck>) {
        let servers: Vec<&str> = DNS_SERVER
            .resource_kind()
            .map(|k| config.resources_of(k).map(|r| r.name.as_str()).collect())
            .unwrap_or_default();
        let index = DnsIndex::build(config);
        if servers.is_empty() && index.zones().next().is_none() {
            return;
        }
        let Some(doc) = current else {
            out.push(check(
                "N001",
                "DNS servers",
                CheckStatus::Skip,
                "the host was not observed yet".into(),
                "",
            ));
            return;
        };
        servers_running(&servers, doc, out);
        config_accepted(doc, out);
        zones_and_keys(doc, out);
        owned_and_foreign(doc, out);
        secondaries(doc, out);
        clock(Path::new(TIMESYNC_FLAG), out);
        journals(Path::new("/"), &index, out);
    }
}

/// N001.
fn servers_running(servers: &[&str], doc: &ResultDocument, out: &mut Vec<DoctorCheck>) {
    if servers.is_empty() {
        return;
    }
    let mut down = Vec::new();
    for server in servers {
        let ok = |kind: &str, name: &str| {
            observed(doc)
                .any(|(_, a)| a.kind == kind && &*a.name == name && a.present && a.drift.is_empty())
        };
        if !ok("systemd.service", &unit_name(server)) || !ok("bind.config", &options_name(server)) {
            down.push((*server).to_owned());
        }
    }
    out.push(if down.is_empty() {
        check(
            "N001",
            "DNS servers running",
            CheckStatus::Pass,
            format!("{} server(s) running", servers.len()),
            "",
        )
    } else {
        check(
            "N001",
            "DNS servers running",
            CheckStatus::Fail,
            format!("not running or not configured as declared: {}", list(&down)),
            "journalctl -u routerd-named-<server>; routerctl plan",
        )
    });
}

/// N002.
fn config_accepted(doc: &ResultDocument, out: &mut Vec<DoctorCheck>) {
    let rejected: Vec<String> = doc
        .operations
        .iter()
        .filter(|op| {
            (op.kind == "bind.config" || op.kind == "bind.zone")
                && op.result == OperationResult::Failed
        })
        .map(|op| format!("{}: {}", op.name, op.error.as_deref().unwrap_or("failed")))
        .collect();
    out.push(if rejected.is_empty() {
        check(
            "N002",
            "named accepts its configuration",
            CheckStatus::Pass,
            "no configuration change was refused".into(),
            "",
        )
    } else {
        check(
            "N002",
            "named accepts its configuration",
            CheckStatus::Fail,
            list(&rejected),
            "fix the DNSServer or DNSZone in router.yaml; named-checkconf names the line",
        )
    });
}

/// N003 and N004: each zone's RRsets were read (the zone is loaded and answers), and no read
/// or update failed on a TSIG key.
fn zones_and_keys(doc: &ResultDocument, out: &mut Vec<DoctorCheck>) {
    let mut unread = Vec::new();
    let mut keys = Vec::new();
    for (resource, a) in observed(doc).filter(|(_, a)| a.kind == "dns.rrset") {
        if let Some(reason) = unobserved(a) {
            let zone = a.name.split('/').take(2).collect::<Vec<_>>().join("/");
            let line = format!("{zone} ({reason})");
            if reason.starts_with("Tsig") {
                keys.push(line);
            } else if !unread.contains(&line) {
                unread.push(line);
            }
            let _ = resource;
        }
    }
    for op in doc
        .operations
        .iter()
        .filter(|op| op.kind == "dns.rrset" && op.result == OperationResult::Failed)
    {
        if let Some(error) = op.error.as_deref().filter(|e| e.contains("Tsig")) {
            keys.push(format!("{}: {error}", op.name));
        }
    }
    keys.sort();
    keys.dedup();
    out.push(if unread.is_empty() {
        check(
            "N003",
            "zones loaded",
            CheckStatus::Pass,
            "every zone with routerd's RRsets answered".into(),
            "",
        )
    } else {
        check(
            "N003",
            "zones loaded",
            CheckStatus::Fail,
            list(&unread),
            "routerctl dns status; journalctl -u routerd-named-<server>",
        )
    });
    out.push(if keys.is_empty() {
        check(
            "N004",
            "update keys accepted",
            CheckStatus::Pass,
            "no server refused routerd's TSIG key".into(),
            "",
        )
    } else {
        check(
            "N004",
            "update keys accepted",
            CheckStatus::Fail,
            list(&keys),
            "compare the DNSTSIGKey with the server's key; check the clock (BADTIME)",
        )
    });
}

/// N005 and N006.
fn owned_and_foreign(doc: &ResultDocument, out: &mut Vec<DoctorCheck>) {
    let drifted: Vec<String> = observed(doc)
        .filter(|(_, a)| {
            a.kind == "dns.rrset"
                && a.owned
                && a.present
                && !a.drift.is_empty()
                && unobserved(a).is_none()
        })
        .map(|(_, a)| a.name.to_string())
        .collect();
    out.push(if drifted.is_empty() {
        check(
            "N005",
            "owned RRsets as declared",
            CheckStatus::Pass,
            "every owned RRset holds its declared data".into(),
            "",
        )
    } else {
        check(
            "N005",
            "owned RRsets as declared",
            CheckStatus::Warn,
            format!("changed on the server: {}", list(&drifted)),
            "routerctl apply puts the declared data back",
        )
    });
    let foreign: Vec<String> = doc
        .orphans
        .iter()
        .filter(|o| o.kind == "dns.rrset" && o.owner.is_empty())
        .map(|o| o.name.clone())
        .collect();
    out.push(if foreign.is_empty() {
        check(
            "N006",
            "foreign RRsets",
            CheckStatus::Pass,
            "no RRset in a managed zone is outside router.yaml".into(),
            "",
        )
    } else {
        check(
            "N006",
            "foreign RRsets",
            CheckStatus::Warn,
            format!(
                "{} RRset(s) made outside router.yaml, left alone: {}",
                foreign.len(),
                list(&foreign)
            ),
            "declare them in router.yaml (then adopt), or remove them on the server",
        )
    });
}

/// N007.
fn secondaries(doc: &ResultDocument, out: &mut Vec<DoctorCheck>) {
    let conditions: Vec<(&str, &routerd_engine::result::Condition)> = doc
        .resources
        .iter()
        .flat_map(|r| r.conditions.iter().map(move |c| (r.id.as_str(), c)))
        .filter(|(_, c)| c.type_.as_str() == crate::status::words::SECONDARIES_IN_SYNC.as_str())
        .collect();
    if conditions.is_empty() {
        return out.push(check(
            "N007",
            "secondaries in sync",
            CheckStatus::Skip,
            "no DNSServer has secondaries".into(),
            "",
        ));
    }
    let behind: Vec<String> = conditions
        .iter()
        .filter(|(_, c)| c.status != routerd_engine::ConditionStatus::True)
        .map(|(_, c)| c.message.clone())
        .collect();
    out.push(if behind.is_empty() {
        check(
            "N007",
            "secondaries in sync",
            CheckStatus::Pass,
            format!("every secondary serves the primary's serial ({} zone(s))", conditions.len()),
            "",
        )
    } else {
        check(
            "N007",
            "secondaries in sync",
            CheckStatus::Warn,
            format!("behind: {}", list(&behind)),
            "a secondary transfers after the primary's NOTIFY; if it stays behind, read its \
             log, check the transfer key, or run `rndc retransfer <zone>` on it",
        )
    });
}

/// N008: TSIG signatures carry the time; beyond 300 s of skew every update fails BADTIME.
fn clock(flag: &Path, out: &mut Vec<DoctorCheck>) {
    out.push(if flag.exists() {
        check(
            "N008",
            "clock synchronised",
            CheckStatus::Pass,
            "timesyncd reports the clock synchronised".into(),
            "",
        )
    } else {
        check(
            "N008",
            "clock synchronised",
            CheckStatus::Warn,
            "timesyncd does not report the clock synchronised; TSIG fails beyond 300 s of skew"
                .into(),
            "declare an NTPClient; routerctl doctor --area ntp",
        )
    });
}

/// N009: journals and zone files below `root`'s data directory.
fn journals(root: &Path, index: &DnsIndex, out: &mut Vec<DoctorCheck>) {
    let data = root.join(DATA_DIR.trim_start_matches('/'));
    let Ok(servers) = std::fs::read_dir(&data) else {
        out.push(check(
            "N009",
            "journals and zone files",
            CheckStatus::Pass,
            "no zone data yet".into(),
            "",
        ));
        return;
    };
    let mut large = Vec::new();
    let mut stale = Vec::new();
    for server in servers.flatten() {
        let name = server.file_name().to_string_lossy().into_owned();
        let declared: Vec<String> = index
            .zones()
            .filter(|(_, z)| z.at == ZoneAt::Local(name.clone()))
            .map(|(_, z)| zone_file_name(&z.apex))
            .collect();
        let Ok(files) = std::fs::read_dir(server.path()) else { continue };
        for file in files.flatten() {
            let file_name = file.file_name().to_string_lossy().into_owned();
            let size = file.metadata().map(|m| m.len()).unwrap_or(0);
            if file_name.ends_with(".jnl") && size > JOURNAL_WARN_BYTES {
                large.push(format!("{name}/{file_name} ({} MiB)", size / (1024 * 1024)));
            }
            if file_name.ends_with(".zone") && !declared.contains(&file_name) {
                stale.push(format!("{name}/{file_name}"));
            }
        }
    }
    let mut problems = Vec::new();
    if !large.is_empty() {
        problems.push(format!("large journals: {}", list(&large)));
    }
    if !stale.is_empty() {
        problems.push(format!(
            "zone files of zones no longer declared (kept for a rollback): {}",
            list(&stale)
        ));
    }
    out.push(if problems.is_empty() {
        check("N009", "journals and zone files", CheckStatus::Pass, "journals are small; no stale zone files".into(), "")
    } else {
        check(
            "N009",
            "journals and zone files",
            CheckStatus::Warn,
            problems.join("; "),
            "rndc sync -clean compacts a journal; remove a stale zone file by hand once no rollback needs it",
        )
    });
}
