//! What routerctl prints for a person (`-o table`, the default): each answer of the daemon as
//! rows fitted to the console's width, wrapped under their column, never cut (issue 34 §8).
//! Pure text: nothing here asks the daemon or prints.

use std::time::Duration;

use routerd_model::dns_view::{DnsRecordRow, DnsServerRow, DnsZoneRow};
use routerd_model::status::{CheckStatus, DaemonStatus, DoctorCheck, ResourceStatus};

use crate::console;

/// `STATE ORIGIN GEN ARTIFACT  OWNER` per entry, `width` columns (long names wrap under
/// their column).
pub(crate) fn ledger_table(list: &serde_json::Value, width: usize) -> String {
    let mut out = String::from("STATE    ORIGIN   GEN  ARTIFACT / OWNER\n");
    for e in list.as_array().into_iter().flatten() {
        let artifact =
            format!("{}/{}", e["kind"].as_str().unwrap_or("-"), e["name"].as_str().unwrap_or("-"));
        let prefix = format!(
            "{:<8} {:<8} {:<4} ",
            e["state"].as_str().unwrap_or("-"),
            e["origin"].as_str().unwrap_or("-"),
            e["generation"].as_u64().map(|g| g.to_string()).unwrap_or_default(),
        );
        push_row(&mut out, &prefix, &artifact, 23, width);
        push_row(&mut out, &" ".repeat(23), e["owner"].as_str().unwrap_or(""), 23, width);
        // Further resources sharing the artifact (issue 33 §5), one line each.
        for co in e["coOwners"].as_array().into_iter().flatten().filter_map(|c| c.as_str()) {
            push_row(&mut out, &format!("{:<21}+ ", ""), co, 23, width);
        }
    }
    out
}

/// Appends `prefix` and `text` wrapped to `width` ([`console::wrap_row`]) and a newline.
pub(crate) fn push_row(out: &mut String, prefix: &str, text: &str, indent: usize, width: usize) {
    out.push_str(&console::wrap_row(prefix, text, indent, width));
    out.push('\n');
}

/// `applied generation 4: Healthy, 3 operations (0 failed)`, then the warnings (wrapped to
/// `width`, indented under their text) and the confirm deadline.
pub(crate) fn outcome_line(body: &str, verb: &str, width: usize) -> String {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else { return body.into() };
    let mut line = format!(
        "{verb} generation {}: {}, {} operations ({} failed)",
        v["generation"],
        v["phase"].as_str().unwrap_or("-"),
        v["operations"],
        v["failed"]
    );
    for w in v["warnings"].as_array().into_iter().flatten() {
        line.push('\n');
        line.push_str(&console::wrap_row("warning: ", w.as_str().unwrap_or_default(), 9, width));
    }
    if let Some(deadline) = v["confirmDeadline"].as_str() {
        line.push_str(&format!(
            "\nconfirm by {deadline} (routerctl confirm), or it is rolled back"
        ));
    }
    line
}

/// One row per generation: number, time, result, channel/author, comment, `width` columns (a
/// long comment wraps under its column). The generations newest first, the running one marked
/// `*` (issue 34 §2).
pub(crate) fn history_table(
    list: &serde_json::Value,
    running: Option<u64>,
    width: usize,
) -> String {
    let mut out =
        String::from("GEN  APPLIED               RESULT          BY            COMMENT\n");
    for r in list.as_array().into_iter().flatten().rev() {
        let when = r["appliedAt"]
            .as_u64()
            .map(|t| {
                humantime::format_rfc3339_seconds(
                    std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(t),
                )
                .to_string()
            })
            .unwrap_or_default();
        let by = format!(
            "{}/{}",
            r["channel"].as_str().unwrap_or("-"),
            r["author"].as_str().unwrap_or("-")
        );
        let generation = r["generation"].as_u64();
        let mark = if generation.is_some() && generation == running { "*" } else { "" };
        let prefix = format!(
            "{:<4} {:<21} {:<15} {:<13} ",
            generation.map(|g| format!("{g}{mark}")).unwrap_or_default(),
            when,
            r["result"].as_str().unwrap_or("-"),
            by,
        );
        push_row(&mut out, &prefix, r["comment"].as_str().unwrap_or(""), 57, width);
    }
    out
}

/// `GEN/OBS  PHASE  SINCE  KIND/NAME` per resource, `width` columns (a long name wraps under
/// its column); SINCE is when its Ready condition last changed.
pub(crate) fn resources_table(list: &[ResourceStatus], width: usize) -> String {
    let mut out = String::from("GEN/OBS  PHASE             SINCE                 RESOURCE\n");
    for r in list {
        let since = r
            .conditions
            .iter()
            .find(|c| c.type_ == "Ready")
            .map(|c| c.last_transition_time.as_str())
            .unwrap_or("-");
        // `apiVersion/kind/name` → `kind/name`: the group is implied by the kind.
        let short = r.id.splitn(3, '/').nth(2).unwrap_or(&r.id);
        let generations = format!("{}/{}", r.generation, r.observed_generation);
        let prefix = format!("{generations:<8} {:<17} {since:<21} ", r.phase);
        push_row(&mut out, &prefix, short, 49, width);
    }
    out
}

/// `STATUS CODE AREA NAME`, then the detail and, for warn and fail, the remedy, indented;
/// `width` columns, long texts wrapped under their column.
pub(crate) fn doctor_table(checks: &[DoctorCheck], width: usize) -> String {
    let mut out = String::new();
    for c in checks {
        let prefix = format!("{:<5} {:<5} {:<10} ", c.status.as_str(), c.code, c.area);
        push_row(&mut out, &prefix, &c.name, 23, width);
        if !c.detail.is_empty() {
            push_row(&mut out, "      ", &c.detail, 6, width);
        }
        if !c.remedy.is_empty() {
            push_row(&mut out, "      → ", &c.remedy, 8, width);
        }
    }
    let count = |s: CheckStatus| checks.iter().filter(|c| c.status == s).count();
    out.push_str(&format!(
        "{} pass, {} warn, {} fail, {} skip\n",
        count(CheckStatus::Pass),
        count(CheckStatus::Warn),
        count(CheckStatus::Fail),
        count(CheckStatus::Skip)
    ));
    out
}

/// `key  value` lines, at most `width` columns (long values wrap under the value column). A
/// confirm window shows the seconds left until its deadline from `now` (Unix seconds), never
/// negative.
pub(crate) fn status_table(s: &DaemonStatus, now: u64, width: usize) -> String {
    let mut rows: Vec<(&str, String)> = vec![
        ("state", s.state.to_string()),
        ("config", s.config.clone()),
        ("netns", s.netns.clone().unwrap_or_else(|| "(host)".into())),
        ("phase", s.phase.clone().unwrap_or_else(|| "-".into())),
        (
            "generation",
            match s.observed_generation {
                Some(o) => format!("{} (observed {o})", s.generation),
                None => format!("{} (not yet observed)", s.generation),
            },
        ),
        ("reconciles", s.reconciles.to_string()),
    ];
    if let Some(r) = &s.last_reconcile {
        rows.push(("last", format!("{} by {}, {} ms", r.started, r.trigger, r.duration_ms)));
        rows.push(("operations", format!("{} ({} failed)", r.operations, r.failed)));
        rows.push((
            "resources",
            format!(
                "{} ({} drifted, {} blocked, {} to adopt), {} orphans",
                r.resources, r.drifted, r.blocked, r.requires_adoption, r.orphans
            ),
        ));
    }
    if let Some(f) = &s.config_fallback {
        let running = match f.running {
            Some(g) => format!("running generation {g} instead"),
            None => "nothing applied".into(),
        };
        rows.push(("config file", format!("does not load, {running} (routerctl doctor)")));
        for error in &f.errors {
            rows.push(("", error.clone()));
        }
    }
    if let Some(c) = &s.pending_confirm {
        let left = c.deadline_unix.saturating_sub(now);
        rows.push((
            "confirm",
            format!(
                "generation {} within {left} s (by {}, else back to {})",
                c.generation, c.deadline, c.previous
            ),
        ));
    }
    if let Some(e) = &s.last_error {
        rows.push(("error", e.clone()));
    }
    let mut out = String::new();
    for (key, value) in rows {
        push_row(&mut out, &format!("{key:<12}"), &value, 12, width);
    }
    out
}

/// `routerctl ota inspect` as text, `width` columns (long values wrap under their column).
pub(crate) fn inspect_table(info: &serde_json::Value, width: usize) -> String {
    let mut out = String::new();
    for (label, key) in [
        ("bundle", "path"),
        ("compatible", "compatible"),
        ("version", "version"),
        ("description", "description"),
        ("build", "build"),
        ("format", "format"),
        ("digest", "digest"),
    ] {
        match info[key].as_str() {
            // A digest is copied into `ota install --digest`: one piece, even past the width.
            Some(value) if key == "digest" => out.push_str(&format!("{label:<12}{value}\n")),
            Some(value) => push_row(&mut out, &format!("{label:<12}"), value, 12, width),
            None => {}
        }
    }
    let signer = &info["signer"];
    if let Some(subject) = signer["subject"].as_str() {
        push_row(&mut out, "signed by   ", subject, 12, width);
        let issuer = signer["issuer"].as_str().unwrap_or("?");
        let until = signer["notAfter"].as_str().unwrap_or("?");
        push_row(&mut out, "issued by   ", &format!("{issuer}, valid until {until}"), 12, width);
    }
    out
}

/// `[##########..........]  50% message`, at most `width` columns: a long message wraps under
/// its start (so the result has more than one line).
pub(crate) fn progress_bar(percent: u64, message: &str, width: usize) -> String {
    const WIDTH: u64 = 20;
    let done = (percent.min(100) * WIDTH / 100) as usize;
    let bar = format!("[{}{}] {percent:>3}% ", "#".repeat(done), ".".repeat(WIDTH as usize - done));
    console::wrap_row(&bar, message, bar.len(), width)
}

/// `routerctl ota status` as text: RAUC's summary, one line per slot, then the health gate's
/// records (newest first); the last error and the gate's details wrap to `width`.
pub(crate) fn ota_table(status: &serde_json::Value, width: usize) -> String {
    let text = |v: &serde_json::Value| v.as_str().unwrap_or("-").to_string();
    let mut out = format!(
        "compatible  {}\nbooted      {}\nprimary     {}\noperation   {}\n",
        text(&status["compatible"]),
        text(&status["bootSlot"]),
        text(&status["primary"]),
        text(&status["operation"]),
    );
    if let Some(error) = status["lastError"].as_str().filter(|e| !e.is_empty()) {
        push_row(&mut out, "last error  ", error, 12, width);
    }
    out.push_str(&format!(
        "\n{:<10} {:<5} {:<9} {:<6} {:<16} {}\n",
        "SLOT", "BOOT", "STATE", "STATUS", "VERSION", "INSTALLED"
    ));
    for slot in status["slots"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "{:<10} {:<5} {:<9} {:<6} {:<16} {}\n",
            text(&slot["name"]),
            text(&slot["bootname"]),
            text(&slot["state"]),
            text(&slot["bootStatus"]),
            text(&slot["version"]),
            text(&slot["installed"]),
        ));
    }
    let gate = status["gate"].as_array().map(Vec::as_slice).unwrap_or_default();
    if status["healthGate"].as_bool() != Some(true) {
        out.push_str("\nhealth gate off (routerd serve without --health-gate)\n");
    }
    if !gate.is_empty() {
        out.push_str(&format!(
            "\n{:<10} {:<9} {:<8} {}\n",
            "GATE SLOT", "PHASE", "WINDOW", "DETAIL"
        ));
    }
    for record in gate.iter().take(5) {
        let window = record["windowSeconds"].as_u64().map_or("-".into(), |s| format!("{s}s"));
        let prefix =
            format!("{:<10} {:<9} {:<8} ", text(&record["slot"]), text(&record["phase"]), window);
        push_row(&mut out, &prefix, &text(&record["detail"]), 30, width);
    }
    out
}

/// The width of column `header` holding `cells`: the longest of them, but at most `cap` (a
/// longer cell pushes the rest of its row right, so one long name does not widen every row).
fn column<'a>(header: &str, cap: usize, cells: impl Iterator<Item = &'a str>) -> usize {
    cells.map(|c| c.chars().count()).max().unwrap_or(0).min(cap).max(header.len())
}

/// `SERVER ZONE SIDE SERIAL OWNED FOREIGN STATE` per zone, then a line per secondary of its
/// server (its serial, in sync or behind), `width` columns: the state (`OK`, `unreadable:
/// <reason>`, `2 drifted, 1 missing`) wraps under its column.
pub(crate) fn dns_zones_table(zones: &[DnsZoneRow], width: usize) -> String {
    if zones.is_empty() {
        return "no DNS zones in the applied config\n".into();
    }
    let server = column("SERVER", 12, zones.iter().map(|z| z.server.as_str()));
    let apex = column("ZONE", 28, zones.iter().map(|z| z.zone.as_str()));
    let serials: Vec<String> =
        zones.iter().map(|z| z.serial.map_or_else(|| "-".to_owned(), |s| s.to_string())).collect();
    let serial_w = column("SERIAL", 10, serials.iter().map(String::as_str));
    let row = |s: &str, z: &str, side: &str, serial: &str, owned: &str, foreign: &str| {
        format!("{s:<server$} {z:<apex$} {side:<6} {serial:<serial_w$} {owned:<5} {foreign:<7} ")
    };
    let header = row("SERVER", "ZONE", "SIDE", "SERIAL", "OWNED", "FOREIGN");
    let indent = header.chars().count();
    let mut out = String::new();
    push_row(&mut out, &header, "STATE", indent, width);
    for (z, serial) in zones.iter().zip(&serials) {
        let (owned, foreign) = (z.owned.to_string(), z.foreign.to_string());
        let prefix = row(&z.server, &z.zone, z.side.as_str(), serial, &owned, &foreign);
        push_row(&mut out, &prefix, &z.state, indent, width);
        for s in &z.secondaries {
            let serial = s.serial.map_or_else(|| "none".to_owned(), |s| s.to_string());
            let sync = if s.in_sync { "in sync" } else { "behind" };
            let line = row("", &format!("  secondary {}", s.address), "", &serial, "", "");
            push_row(&mut out, &line, sync, indent, width);
        }
    }
    out
}

/// `SERVER ZONE NAME TYPE TTL STATE` per RRset (the name relative to its zone, `@` for the
/// apex), then its data one record a line and the resource declaring it (`foreign` when none
/// does), indented; `width` columns, long texts wrapped under their column.
pub(crate) fn dns_records_table(records: &[DnsRecordRow], width: usize) -> String {
    if records.is_empty() {
        return "no RRsets\n".into();
    }
    let owners: Vec<String> = records.iter().map(DnsRecordRow::relative_owner).collect();
    let ttls: Vec<String> =
        records.iter().map(|r| r.ttl.map_or_else(|| "-".into(), |t| t.to_string())).collect();
    let server = column("SERVER", 12, records.iter().map(|r| r.server.as_str()));
    let apex = column("ZONE", 28, records.iter().map(|r| r.zone.as_str()));
    let owner = column("NAME", 24, owners.iter().map(String::as_str));
    let rtype = column("TYPE", 10, records.iter().map(|r| r.rtype.as_str()));
    let ttl = column("TTL", 10, ttls.iter().map(String::as_str));
    let row = |s: &str, z: &str, o: &str, t: &str, l: &str| {
        format!("{s:<server$} {z:<apex$} {o:<owner$} {t:<rtype$} {l:<ttl$} ")
    };
    let header = row("SERVER", "ZONE", "NAME", "TYPE", "TTL");
    let indent = header.chars().count();
    let mut out = String::new();
    push_row(&mut out, &header, "STATE", indent, width);
    for ((r, o), l) in records.iter().zip(&owners).zip(&ttls) {
        let prefix = row(&r.server, &r.zone, o, &r.rtype, l);
        push_row(&mut out, &prefix, &state_text(r), indent, width);
        for data in &r.rdata {
            push_row(&mut out, "    ", data, 4, width);
        }
        let resource = if r.foreign {
            "foreign".to_string()
        } else {
            format!("resource {}", r.short_resource())
        };
        push_row(&mut out, "    ", &resource, 4, width);
    }
    out
}

/// An RRset's state as the records table prints it: `in sync`, `drift: the server has ttl 60`.
pub(crate) fn state_text(r: &DnsRecordRow) -> String {
    let word = r.state.as_str().replace('-', " ");
    if r.detail.is_empty() { word } else { format!("{word}: {}", r.detail) }
}

/// `SERVER SIDE ZONES STATE` per server, then the `dns` doctor checks as `routerctl doctor`
/// prints them; `width` columns.
pub(crate) fn dns_status_table(
    servers: &[DnsServerRow],
    checks: &[DoctorCheck],
    width: usize,
) -> String {
    let mut out = String::new();
    if servers.is_empty() {
        out.push_str("no DNS servers in the applied config\n");
    } else {
        let name = column("SERVER", 12, servers.iter().map(|s| s.name.as_str()));
        let row = |n: &str, side: &str, zones: &str| format!("{n:<name$} {side:<6} {zones:<5} ");
        let header = row("SERVER", "SIDE", "ZONES");
        let indent = header.chars().count();
        push_row(&mut out, &header, "STATE", indent, width);
        for s in servers {
            let prefix = row(&s.name, s.side.as_str(), &s.zones.to_string());
            push_row(&mut out, &prefix, &s.state, indent, width);
        }
    }
    out.push('\n');
    if checks.is_empty() {
        out.push_str("no dns checks\n");
    } else {
        out.push_str(&doctor_table(checks, width));
    }
    out
}
