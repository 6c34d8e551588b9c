//! The DNS page's rows ([`DnsView`]) from what the daemon already holds: the last reconcile's
//! Result document (each resource's `dns.rrset`, `bind.zone`, `bind.config` and unit artifacts
//! as observed, the orphans, the operations), the ledger (the data routerd wrote into each owned
//! RRset, which the document does not carry) and the doctor's `dns` checks. `routerctl dns`
//! derives the same rows from the control API's documents (`firmware/routerctl/src/dns.rs`).

use std::collections::{BTreeMap, HashMap};

use routerd_dns::artifacts::{RRsetName, Side};
use routerd_dns::kinds::server::{options_name, unit_name};
use routerd_engine::ResultDocument;
use routerd_engine::result::{ObservedArtifact, OperationResult, OrphanCleanup};
use routerd_webui::{CheckView, DnsRecordRow, DnsServerRow, DnsView, DnsZoneRow};

/// The `dns.rrset` artifact kind.
const RRSET: &str = "dns.rrset";
/// The kind of a local zone's clause in its server's `zones.conf`.
const BIND_ZONE: &str = "bind.zone";
/// The kind of a server's `named.conf`.
const BIND_CONFIG: &str = "bind.config";
/// The kind of a server's unit.
const UNIT: &str = "systemd.service";

/// `local` or `remote`.
fn side_word(side: Side) -> &'static str {
    match side {
        Side::Local => "local",
        Side::Remote => "remote",
    }
}

/// The sort key of a side: local servers first.
fn side_rank(side: Side) -> u8 {
    match side {
        Side::Local => 0,
        Side::Remote => 1,
    }
}

/// The owner of `name` relative to its zone, as a zone file writes it: `www`, `@` for the apex.
fn relative_owner(zone: &str, owner: &str) -> String {
    if owner == zone {
        return "@".into();
    }
    let suffix = if zone == "." { "." } else { zone };
    owner
        .strip_suffix(suffix)
        .map(|o| o.trim_end_matches('.').to_owned())
        .unwrap_or_else(|| owner.to_owned())
}

/// `apiVersion/kind/name` → `kind/name`: the group is implied by the kind.
fn short_id(id: &str) -> &str {
    id.splitn(3, '/').nth(2).unwrap_or(id)
}

/// Why the zone of an RRset could not be read (`TsigBadSig: …`), if it could not.
fn unobserved(o: &ObservedArtifact) -> Option<String> {
    o.drift
        .iter()
        .find(|d| d.attribute == "unobserved")
        .map(|d| d.observed.as_str().unwrap_or("unknown").to_owned())
}

/// A JSON value as a phrase: strings bare, lists comma-separated, `none` for null or empty.
fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "none".into(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) if items.is_empty() => "none".into(),
        serde_json::Value::Array(items) => {
            items.iter().map(value_text).collect::<Vec<_>>().join(", ")
        }
        other => other.to_string(),
    }
}

/// The differing attributes with the server's values: `the server has ttl 60`.
fn differs(o: &ObservedArtifact) -> String {
    let parts: Vec<String> =
        o.drift.iter().map(|d| format!("{} {}", d.attribute, value_text(&d.observed))).collect();
    if parts.is_empty() { String::new() } else { format!("the server has {}", parts.join("; ")) }
}

/// The TTL and data of an RRset spec as the ledger, an orphan or an adoption candidate holds
/// it (`{"type": "external", …, "attributes": {ttl, rdata}}`, or the attributes alone).
fn rrset_data(spec: &serde_json::Value) -> Option<(Option<u64>, Vec<String>)> {
    let attributes = spec.get("attributes").unwrap_or(spec);
    let ttl = attributes["ttl"].as_u64();
    let rdata: Option<Vec<String>> = attributes["rdata"]
        .as_array()
        .map(|list| list.iter().filter_map(|r| r.as_str().map(str::to_owned)).collect());
    (ttl.is_some() || rdata.is_some()).then(|| (ttl, rdata.unwrap_or_default()))
}

/// A zone being counted.
#[derive(Default)]
struct Tally {
    declared: usize,
    owned: usize,
    foreign: usize,
    drifted: usize,
    missing: usize,
    unowned: usize,
    undeclared: usize,
    unreadable: Option<String>,
    clause: Option<String>,
}

impl Tally {
    /// `OK`, `unreadable: <reason>`, or what differs: `2 drifted, 1 missing`.
    fn state(&self) -> String {
        if let Some(reason) = &self.unreadable {
            return format!("unreadable: {reason}");
        }
        let mut parts: Vec<String> = self.clause.iter().cloned().collect();
        for (n, what) in [
            (self.drifted, "drifted"),
            (self.missing, "missing"),
            (self.unowned, "unowned"),
            (self.undeclared, "undeclared"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        if parts.is_empty() { "OK".into() } else { parts.join(", ") }
    }
}

/// A zone's key: side rank, server, apex.
type ZoneKey = (u8, String, String);

/// The DNS page of `doc` (`None` before the first reconcile), with the owned RRsets' data from
/// `ledger` (`(kind, name, attributes JSON)` of each entry) and the doctor's `checks` (of every
/// area; the page keeps the `dns` ones).
pub(super) fn view<'a>(
    doc: Option<&ResultDocument>,
    ledger: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    checks: Vec<CheckView>,
) -> DnsView {
    let checks: Vec<CheckView> = checks.into_iter().filter(|c| c.area == "dns").collect();
    let Some(doc) = doc else {
        return DnsView { checks, observed: false, ..DnsView::default() };
    };
    let written: HashMap<&str, serde_json::Value> = ledger
        .into_iter()
        .filter(|(kind, _, _)| *kind == RRSET)
        .filter_map(|(_, name, json)| Some((name, serde_json::from_str(json).ok()?)))
        .collect();
    let failed: HashMap<(&str, &str), &str> = doc
        .operations
        .iter()
        .filter(|op| op.result == OperationResult::Failed)
        .map(|op| ((op.kind.as_ref(), &*op.name), op.error.as_deref().unwrap_or("failed")))
        .collect();
    let candidates: HashMap<&str, &serde_json::Value> = doc
        .adoption_candidates
        .iter()
        .filter(|c| c.kind == RRSET)
        .map(|c| (c.name.as_str(), &c.desired))
        .collect();
    let seen: HashMap<(&str, &str), &ObservedArtifact> = doc
        .resources
        .iter()
        .flat_map(|r| r.observed.iter())
        .map(|o| ((o.kind.as_ref(), &*o.name), o))
        .collect();
    let mut zones: BTreeMap<ZoneKey, (Side, Tally)> = BTreeMap::new();
    let mut records: Vec<(RRsetName, DnsRecordRow)> = Vec::new();
    let mut servers: BTreeMap<String, Side> = BTreeMap::new();
    for r in &doc.resources {
        let mut parts = r.id.rsplitn(3, '/');
        let (name, kind) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
        match kind {
            "DNSServer" => {
                servers.insert(name.to_owned(), Side::Local);
            }
            "DNSExternalServer" => {
                servers.insert(name.to_owned(), Side::Remote);
            }
            _ => {}
        }
        for intent in &r.artifacts {
            let key = (intent.kind.as_ref(), &*intent.name);
            if key.0 == BIND_ZONE {
                let Some((server, apex)) = key.1.split_once('/') else { continue };
                let (_, zone) = tally(&mut zones, Side::Local, server, apex);
                zone.clause = match (seen.get(&key), failed.get(&key)) {
                    (_, Some(error)) => Some(format!("zone refused: {error}")),
                    (None, None) => None,
                    (Some(o), None) if !o.present => Some("zone not configured".into()),
                    (Some(o), None) if !o.drift.is_empty() => Some("zone clause differs".into()),
                    (Some(_), None) => None,
                };
                continue;
            }
            if key.0 != RRSET {
                continue;
            }
            let Some(parsed) = RRsetName::parse(key.1) else { continue };
            let observed = seen.get(&key).copied();
            let (status, detail) = match observed {
                None => ("unobserved", "not observed yet".to_owned()),
                Some(o) => match unobserved(o) {
                    Some(reason) => ("unobserved", reason),
                    None if !o.present => ("missing", String::new()),
                    None if !o.owned => ("unowned", differs(o)),
                    None if !o.drift.is_empty() => ("drift", differs(o)),
                    None => ("in-sync", String::new()),
                },
            };
            let detail = match failed.get(&key) {
                Some(e) if detail.is_empty() => format!("failed: {e}"),
                Some(e) => format!("{detail}; failed: {e}"),
                None => detail,
            };
            // The data: as routerd wrote it (the ledger), else as declared for adoption; the
            // drift's desired values are newer than either.
            let (mut ttl, mut data) = written
                .get(key.1)
                .or_else(|| candidates.get(key.1).copied())
                .and_then(rrset_data)
                .unwrap_or_default();
            if status != "unobserved" {
                for d in observed.iter().flat_map(|o| o.drift.iter()) {
                    match d.attribute.as_str() {
                        "ttl" => ttl = d.desired.as_u64().or(ttl),
                        "rdata" => {
                            let desired = serde_json::json!({ "rdata": d.desired });
                            if let Some((_, rdata)) = rrset_data(&desired) {
                                data = rdata;
                            }
                        }
                        _ => {}
                    }
                }
            }
            let owned = observed.is_some_and(|o| o.owned);
            let zone_name = parsed.zone.to_ascii();
            let (_, zone) = tally(&mut zones, parsed.side, &parsed.server, &zone_name);
            zone.declared += 1;
            zone.owned += usize::from(owned);
            match status {
                "drift" => zone.drifted += 1,
                "missing" => zone.missing += 1,
                "unowned" => zone.unowned += 1,
                "unobserved" if zone.unreadable.is_none() => zone.unreadable = Some(detail.clone()),
                _ => {}
            }
            let row = row(&parsed, ttl, data, short_id(&r.id), status, detail);
            records.push((parsed, row));
        }
    }
    for o in doc.orphans.iter().filter(|o| o.kind == RRSET) {
        let Some(parsed) = RRsetName::parse(&o.name) else { continue };
        let (ttl, data) = rrset_data(&o.observed)
            .or_else(|| written.get(o.name.as_str()).and_then(rrset_data))
            .unwrap_or_default();
        let zone_name = parsed.zone.to_ascii();
        let (_, zone) = tally(&mut zones, parsed.side, &parsed.server, &zone_name);
        let (status, detail) = if o.owner.is_empty() {
            zone.foreign += 1;
            ("foreign", "not in router.yaml, left alone")
        } else {
            zone.undeclared += 1;
            let what = match o.cleanup {
                OrphanCleanup::Delete => "deleted by the reconcile",
                OrphanCleanup::Forget => "gone from the server, the ledger entry is dropped",
                OrphanCleanup::Keep => "kept",
            };
            ("undeclared", what)
        };
        let row = row(&parsed, ttl, data, short_id(&o.owner), status, detail.into());
        records.push((parsed, row));
    }
    records.sort_by(|(a, _), (b, _)| {
        let key = |n: &RRsetName| {
            (side_rank(n.side), n.server.clone(), n.zone.to_ascii(), n.owner.to_ascii())
        };
        key(a).cmp(&key(b)).then_with(|| a.rtype.to_string().cmp(&b.rtype.to_string()))
    });
    let zones: Vec<DnsZoneRow> = zones
        .into_iter()
        .map(|((_, server, zone), (side, t))| DnsZoneRow {
            server,
            side: side_word(side).into(),
            zone,
            declared: t.declared,
            owned: t.owned,
            foreign: t.foreign,
            state: t.state(),
            ok: t.state() == "OK",
        })
        .collect();
    let servers = servers
        .into_iter()
        .map(|(name, side)| server(&name, side, &zones, &seen, &failed))
        .collect();
    DnsView {
        servers,
        zones,
        records: records.into_iter().map(|(_, row)| row).collect(),
        checks,
        observed: true,
    }
}

/// The tally of zone `apex` of `server`, added when new.
fn tally<'z>(
    zones: &'z mut BTreeMap<ZoneKey, (Side, Tally)>,
    side: Side,
    server: &str,
    apex: &str,
) -> &'z mut (Side, Tally) {
    zones
        .entry((side_rank(side), server.to_owned(), apex.to_owned()))
        .or_insert_with(|| (side, Tally::default()))
}

/// An RRset's row.
fn row(
    name: &RRsetName,
    ttl: Option<u64>,
    data: Vec<String>,
    resource: &str,
    status: &str,
    detail: String,
) -> DnsRecordRow {
    let zone = name.zone.to_ascii();
    DnsRecordRow {
        server: name.server.clone(),
        side: side_word(name.side).into(),
        name: relative_owner(&zone, &name.owner.to_ascii()),
        zone,
        rtype: name.rtype.to_string(),
        ttl,
        data,
        resource: resource.to_owned(),
        status: status.to_owned(),
        detail,
    }
}

/// Server `name`'s row: a local one's unit and `named.conf` as observed; a remote one's zones
/// read or not.
fn server(
    name: &str,
    side: Side,
    zones: &[DnsZoneRow],
    seen: &HashMap<(&str, &str), &ObservedArtifact>,
    failed: &HashMap<(&str, &str), &str>,
) -> DnsServerRow {
    let mine: Vec<&DnsZoneRow> =
        zones.iter().filter(|z| z.server == name && z.side == side_word(side)).collect();
    let unreadable: Vec<String> = mine
        .iter()
        .filter_map(|z| {
            z.state.strip_prefix("unreadable: ").map(|why| format!("{} ({why})", z.zone))
        })
        .collect();
    let mut parts = Vec::new();
    let mut ok = unreadable.is_empty();
    if side == Side::Local {
        let unit_key = unit_name(name);
        let (unit_text, unit_ok) =
            match (seen.get(&(UNIT, unit_key.as_str())), failed.get(&(UNIT, unit_key.as_str()))) {
                (_, Some(e)) => (format!("unit failed: {e}"), false),
                (None, None) => ("unit not observed".into(), false),
                (Some(u), None) if !u.present => ("unit missing".into(), false),
                (Some(u), None) if u.drift.iter().any(|d| d.attribute == "active") => {
                    ("unit not running".into(), false)
                }
                (Some(u), None) if !u.drift.is_empty() => ("unit differs".into(), false),
                (Some(_), None) => ("unit running".into(), true),
            };
        let conf_key = options_name(name);
        let key = (BIND_CONFIG, conf_key.as_str());
        let (conf_text, conf_ok) = match (seen.get(&key), failed.get(&key)) {
            (_, Some(e)) => (format!("named.conf refused: {e}"), false),
            (None, None) => ("named.conf not observed".into(), false),
            (Some(c), None) if !c.present => ("named.conf missing".into(), false),
            (Some(c), None) if !c.drift.is_empty() => ("named.conf differs".into(), false),
            (Some(_), None) => ("named.conf in place".into(), true),
        };
        parts.push(unit_text);
        parts.push(conf_text);
        ok &= unit_ok && conf_ok;
    } else if mine.is_empty() {
        parts.push("no zones".into());
    }
    if !mine.is_empty() {
        parts.push(if unreadable.is_empty() {
            "zones readable".into()
        } else {
            format!("unreadable: {}", unreadable.join(", "))
        });
    }
    DnsServerRow {
        name: name.to_owned(),
        side: side_word(side).into(),
        zones: mine.len(),
        state: parts.join(", "),
        ok,
    }
}

#[cfg(test)]
#[path = "dns_tests.rs"]
mod tests;
