//! The DNS view ([`DnsView`], ADR 0012): the DNS controller's servers, zones and RRsets from
//! what the daemon already holds: the last reconcile's Result document (each resource's
//! `dns.rrset`, `bind.zone`, `bind.config` and unit artifacts as observed, the orphans, the
//! operations), the ledger (the data routerd wrote into each owned RRset, which the document
//! does not carry) and the doctor's `dns` checks. Derived here only: the control API serves it
//! (`GET /v1/dns`, which `routerctl dns` prints) and the web UI's DNS page shows it.

use std::collections::{BTreeMap, HashMap};

use routerd_dns::artifacts::{RRsetName, Side as RRsetSide};
use routerd_dns::kinds::server::{options_name, unit_name};
use routerd_engine::ResultDocument;
use routerd_engine::result::{ObservedArtifact, OperationResult, OrphanCleanup};
use routerd_model::dns_view::{
    DnsRecordRow, DnsSecondaryRow, DnsServerRow, DnsView, DnsZoneRow, RecordState, Side,
};
use routerd_model::status::DoctorCheck;
use tokio::sync::{mpsc, watch};

use crate::control::Snapshot;
use crate::daemon::{ChangeRefused, EngineAnswer, EngineQuery, Msg, Stopping, request};

/// The `dns.rrset` artifact kind.
const RRSET: &str = "dns.rrset";
/// The kind of a local zone's clause in its server's `zones.conf`.
const BIND_ZONE: &str = "bind.zone";
/// The kind of a server's `named.conf`.
const BIND_CONFIG: &str = "bind.config";
/// The kind of a server's unit.
const UNIT: &str = "systemd.service";

/// The DNS view now: the snapshot's Result document, the data of owned RRsets from the ledger
/// (asked of the loop only when the document has RRsets) and the doctor's `dns` checks, run now.
///
/// Errors: the loop refused the ledger query (inner `Err`), or it is stopping ([`Stopping`]).
pub(crate) async fn read(
    snapshot: &watch::Receiver<Snapshot>,
    loop_tx: &mpsc::Sender<Msg>,
) -> Result<Result<DnsView, ChangeRefused>, Stopping> {
    let doc = snapshot.borrow().result.clone();
    let checks = request(loop_tx, Msg::Doctor).await?;
    let has_rrsets = doc.as_deref().is_some_and(|d| {
        d.resources.iter().flat_map(|r| &r.artifacts).any(|a| a.kind == RRSET)
            || d.orphans.iter().any(|o| o.kind == RRSET)
    });
    let entries = if has_rrsets {
        match request(loop_tx, |tx| Msg::Engine(EngineQuery::Ledger, tx)).await? {
            Ok(EngineAnswer::Entries(entries)) => entries,
            Ok(_) => return Ok(Err(ChangeRefused::Failed("unexpected engine answer".into()))),
            Err(refusal) => return Ok(Err(refusal)),
        }
    } else {
        Vec::new()
    };
    let ledger = entries.iter().map(|e| (e.kind.as_str(), e.name.as_str(), e.attributes.json()));
    Ok(Ok(view(doc.as_deref(), ledger, checks)))
}

/// The model's side of an RRset name's.
fn side(side: RRsetSide) -> Side {
    match side {
        RRsetSide::Local => Side::Local,
        RRsetSide::Remote => Side::Remote,
    }
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

/// A zone being counted: its row, what is wrong with its clause on a local server, and its
/// secondaries behind the primary.
#[derive(Default)]
struct Tally {
    row: DnsZoneRow,
    clause: Option<String>,
    behind: Vec<String>,
}

impl Tally {
    /// The finished row: its state `OK`, `unreadable: <reason>`, or what differs (`2 drifted,
    /// 1 missing`).
    fn finish(self) -> DnsZoneRow {
        let z = self.row;
        let state = if let Some(reason) = &z.unreadable {
            format!("unreadable: {reason}")
        } else {
            let mut parts: Vec<String> = self.clause.into_iter().collect();
            parts.extend(self.behind);
            for (n, what) in [
                (z.drifted, "drifted"),
                (z.missing, "missing"),
                (z.unowned, "unowned"),
                (z.undeclared, "undeclared"),
            ] {
                if n > 0 {
                    parts.push(format!("{n} {what}"));
                }
            }
            if parts.is_empty() { "OK".into() } else { parts.join(", ") }
        };
        DnsZoneRow { ok: state == "OK", state, ..z }
    }
}

/// A zone's key: side (local first), server, apex.
type ZoneKey = (Side, String, String);

/// The DNS view of `doc` (`None` before the first reconcile), with the owned RRsets' data from
/// `ledger` (`(kind, name, attributes JSON)` of each entry) and the doctor's `checks` (of every
/// area; the view keeps the `dns` ones).
pub(crate) fn view<'a>(
    doc: Option<&ResultDocument>,
    ledger: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    checks: Vec<DoctorCheck>,
) -> DnsView {
    let checks: Vec<DoctorCheck> = checks.into_iter().filter(|c| c.area == "dns").collect();
    let Some(doc) = doc else {
        return DnsView { checks, ..DnsView::default() };
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
    let mut zones: BTreeMap<ZoneKey, Tally> = BTreeMap::new();
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
                let zone = tally(&mut zones, Side::Local, server, apex);
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
            let (state, detail) = match observed {
                None => (RecordState::Unobserved, "not observed yet".to_owned()),
                Some(o) => match unobserved(o) {
                    Some(reason) => (RecordState::Unobserved, reason),
                    None if !o.present => (RecordState::Missing, String::new()),
                    None if !o.owned => (RecordState::Unowned, differs(o)),
                    None if !o.drift.is_empty() => (RecordState::Drift, differs(o)),
                    None => (RecordState::InSync, String::new()),
                },
            };
            let detail = match failed.get(&key) {
                Some(e) if detail.is_empty() => format!("failed: {e}"),
                Some(e) => format!("{detail}; failed: {e}"),
                None => detail,
            };
            // The data: as routerd wrote it (the ledger), else as declared for adoption; the
            // drift's desired values are newer than either.
            let (mut ttl, mut rdata) = written
                .get(key.1)
                .or_else(|| candidates.get(key.1).copied())
                .and_then(rrset_data)
                .unwrap_or_default();
            if state != RecordState::Unobserved {
                for d in observed.iter().flat_map(|o| o.drift.iter()) {
                    match d.attribute.as_str() {
                        "ttl" => ttl = d.desired.as_u64().or(ttl),
                        "rdata" => {
                            let desired = serde_json::json!({ "rdata": d.desired });
                            if let Some((_, desired)) = rrset_data(&desired) {
                                rdata = desired;
                            }
                        }
                        _ => {}
                    }
                }
            }
            let owned = observed.is_some_and(|o| o.owned);
            let zone_name = parsed.zone.to_ascii();
            let zone = &mut tally(&mut zones, side(parsed.side), &parsed.server, &zone_name).row;
            zone.declared += 1;
            zone.owned += usize::from(owned);
            match state {
                RecordState::Drift => zone.drifted += 1,
                RecordState::Missing => zone.missing += 1,
                RecordState::Unowned => zone.unowned += 1,
                RecordState::Unobserved if zone.unreadable.is_none() => {
                    zone.unreadable = Some(detail.clone());
                }
                _ => {}
            }
            let row = DnsRecordRow {
                ttl,
                rdata,
                resource: r.id.clone(),
                owned,
                state,
                detail,
                ..row(&parsed)
            };
            records.push((parsed, row));
        }
    }
    for o in doc.orphans.iter().filter(|o| o.kind == RRSET) {
        let Some(parsed) = RRsetName::parse(&o.name) else { continue };
        let (ttl, rdata) = rrset_data(&o.observed)
            .or_else(|| written.get(o.name.as_str()).and_then(rrset_data))
            .unwrap_or_default();
        let zone_name = parsed.zone.to_ascii();
        let zone = &mut tally(&mut zones, side(parsed.side), &parsed.server, &zone_name).row;
        let (state, detail) = if o.owner.is_empty() {
            zone.foreign += 1;
            (RecordState::Foreign, "not in router.yaml, left alone")
        } else {
            zone.undeclared += 1;
            let what = match o.cleanup {
                OrphanCleanup::Delete => "deleted by the reconcile",
                OrphanCleanup::Forget => "gone from the server, the ledger entry is dropped",
                OrphanCleanup::Keep => "kept",
            };
            (RecordState::Undeclared, what)
        };
        let row = DnsRecordRow {
            ttl,
            rdata,
            resource: o.owner.clone(),
            foreign: state == RecordState::Foreign,
            owned: !o.owner.is_empty(),
            state,
            detail: detail.into(),
            ..row(&parsed)
        };
        records.push((parsed, row));
    }
    records.sort_by(|(a, _), (b, _)| {
        let key =
            |n: &RRsetName| (side(n.side), n.server.clone(), n.zone.to_ascii(), n.owner.to_ascii());
        key(a).cmp(&key(b)).then_with(|| a.rtype.to_string().cmp(&b.rtype.to_string()))
    });
    serials(doc, &mut zones);
    let zones: Vec<DnsZoneRow> = zones.into_values().map(Tally::finish).collect();
    let servers = servers
        .into_iter()
        .map(|(name, side)| server(&name, side, &zones, &seen, &failed))
        .collect();
    DnsView {
        observed: true,
        servers,
        zones,
        records: records.into_iter().map(|(_, row)| row).collect(),
        checks,
    }
}

/// Each zone's serial and secondaries, from the `servers[]` status field of the `DNSZone`s of
/// `doc` (ADR 0013): a `primary` or `external` row names the zone's server, the `secondary`
/// rows after it its secondaries. A secondary behind makes the zone's state say so.
fn serials(doc: &ResultDocument, zones: &mut BTreeMap<ZoneKey, Tally>) {
    let rows = doc
        .resources
        .iter()
        .filter_map(|r| r.status.as_ref()?.get("servers")?.as_array())
        .flatten();
    let mut current: Option<ZoneKey> = None;
    for row in rows {
        let text = |field: &str| row.get(field).and_then(|v| v.as_str()).unwrap_or_default();
        let serial = row.get("serial").and_then(|v| v.as_u64()).and_then(|s| u32::try_from(s).ok());
        match text("role") {
            "primary" | "external" => {
                let side = if text("role") == "primary" { Side::Local } else { Side::Remote };
                let key = (side, text("server").to_owned(), text("zone").to_owned());
                if let Some(tally) = zones.get_mut(&key) {
                    tally.row.serial = serial;
                }
                current = Some(key);
            }
            "secondary" => {
                let Some(tally) = current.as_ref().and_then(|k| zones.get_mut(k)) else { continue };
                if tally.row.zone != text("zone") {
                    continue;
                }
                let in_sync = row.get("inSync").and_then(|v| v.as_bool()).unwrap_or(false);
                if !in_sync {
                    tally.behind.push(format!("secondary {} behind", text("server")));
                }
                tally.row.secondaries.push(DnsSecondaryRow {
                    address: text("server").to_owned(),
                    serial,
                    in_sync,
                });
            }
            _ => {}
        }
    }
}

/// The tally of zone `apex` of `server`, added when new.
fn tally<'z>(
    zones: &'z mut BTreeMap<ZoneKey, Tally>,
    side: Side,
    server: &str,
    apex: &str,
) -> &'z mut Tally {
    zones.entry((side, server.to_owned(), apex.to_owned())).or_insert_with(|| Tally {
        row: DnsZoneRow {
            side,
            server: server.to_owned(),
            zone: apex.to_owned(),
            ..DnsZoneRow::default()
        },
        clause: None,
        behind: Vec::new(),
    })
}

/// The row of the RRset `name` with its identity filled in: in sync, no data, no resource.
fn row(name: &RRsetName) -> DnsRecordRow {
    DnsRecordRow {
        side: side(name.side),
        server: name.server.clone(),
        zone: name.zone.to_ascii(),
        owner: name.owner.to_ascii(),
        rtype: name.rtype.to_string(),
        ttl: None,
        rdata: Vec::new(),
        resource: String::new(),
        foreign: false,
        owned: false,
        state: RecordState::InSync,
        detail: String::new(),
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
        zones.iter().filter(|z| z.server == name && z.side == side).collect();
    let unreadable: Vec<String> = mine
        .iter()
        .filter_map(|z| z.unreadable.as_ref().map(|why| format!("{} ({why})", z.zone)))
        .collect();
    let mut parts = Vec::new();
    let mut ok = unreadable.is_empty();
    if side == Side::Local {
        let unit_key = unit_name(name);
        let key = (UNIT, unit_key.as_str());
        let (unit_text, unit_ok) = match (seen.get(&key), failed.get(&key)) {
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
    DnsServerRow { name: name.to_owned(), side, zones: mine.len(), state: parts.join(", "), ok }
}

#[cfg(test)]
#[path = "dns_view_tests.rs"]
pub(crate) mod tests;
