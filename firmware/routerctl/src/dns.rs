//! `dns zones|records|status`: the DNS controller's zones, RRsets and servers (ADR 0012), read
//! from what the daemon already serves: the last reconcile's Result document (`GET /v1/result`:
//! each resource's `dns.rrset`, `bind.zone`, `bind.config` and unit artifacts as observed, the
//! orphans, the operations), the ledger (`GET /v1/ledger`: the data routerd wrote into each
//! owned RRset) and the `dns` doctor checks (`GET /v1/doctor?area=dns`).
//!
//! The table output is in [`crate::tables`]; `-o json` and `-o yaml` print the rows derived
//! here (not the daemon's documents, which `routerctl -o json` of `status`, `ledger` and
//! `doctor dns` already give).

use std::collections::{BTreeMap, HashMap};

use hyper::Method;
use routerd_model::status::{CheckStatus, DoctorCheck};
use serde_json::{Value, json};

use crate::cli::Cli;
use crate::client::{call, parse};
use crate::tables::{dns_records_table, dns_status_table, dns_zones_table};
use crate::{Failure, console, print_doc};

/// The `dns.rrset` artifact kind.
const RRSET: &str = "dns.rrset";
/// The kind of a local zone's clause in its server's `zones.conf`.
const BIND_ZONE: &str = "bind.zone";
/// The kind of a server's `named.conf` (and of the key files).
const BIND_CONFIG: &str = "bind.config";
/// The kind of a server's unit.
const UNIT: &str = "systemd.service";

/// Which server an RRset is published on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Side {
    /// A `DNSServer` the router runs.
    #[default]
    Local,
    /// A `DNSExternalServer`.
    Remote,
}

impl Side {
    /// `local` or `remote`, as the artifact name writes it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Remote => "remote",
        }
    }
}

/// The parts of a `dns.rrset` name, `local:<server>/<zone>./<owner>./<TYPE>` or
/// `remote:<external>/…` (ADR 0012; the ledger's stable format, lowercased names).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct RRsetName {
    /// Local or remote.
    pub(crate) side: Side,
    /// The `DNSServer` or `DNSExternalServer` name.
    pub(crate) server: String,
    /// The zone apex, absolute (`lab.example.`).
    pub(crate) zone: String,
    /// The owner name, absolute, inside the zone.
    pub(crate) owner: String,
    /// The type (`A`, `MX`).
    pub(crate) rtype: String,
}

impl RRsetName {
    /// The parts of the artifact name `name`, if it is one.
    pub(crate) fn parse(name: &str) -> Option<Self> {
        let (side, rest) = name.split_once(':')?;
        let side = match side {
            "local" => Side::Local,
            "remote" => Side::Remote,
            _ => return None,
        };
        let mut parts = rest.splitn(4, '/');
        let server = parts.next().filter(|s| !s.is_empty())?;
        let zone = parts.next().filter(|z| z.ends_with('.'))?;
        let owner = parts.next().filter(|o| o.ends_with('.'))?;
        let rtype = parts.next().filter(|t| !t.is_empty() && !t.contains('/'))?;
        let inside = zone == "." || owner == zone || owner.ends_with(&format!(".{zone}"));
        inside.then(|| Self {
            side,
            server: server.to_owned(),
            zone: zone.to_owned(),
            owner: owner.to_owned(),
            rtype: rtype.to_owned(),
        })
    }

    /// The owner relative to its zone, as a zone file writes it: `www`, `@` for the apex.
    pub(crate) fn relative_owner(&self) -> String {
        if self.owner == self.zone {
            return "@".into();
        }
        let suffix = if self.zone == "." { "." } else { &self.zone };
        self.owner
            .strip_suffix(suffix)
            .map(|o| o.trim_end_matches('.').to_owned())
            .unwrap_or_else(|| self.owner.clone())
    }
}

/// Where an RRset stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecordState {
    /// Declared, owned, on the server as declared.
    InSync,
    /// Declared and owned; the server holds other data (changed by hand).
    Drift,
    /// Declared; its zone could not be read (the reason is the detail).
    Unobserved,
    /// Declared, not on the server (yet).
    Missing,
    /// Declared and on the server, not in the ledger: an adoption candidate.
    Unowned,
    /// On the server, not in router.yaml nor in the ledger: left alone.
    Foreign,
    /// In the ledger, declared no more (deleted by the reconcile, or gone).
    Undeclared,
}

impl RecordState {
    /// The word the JSON and the web UI use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::InSync => "in-sync",
            Self::Drift => "drift",
            Self::Unobserved => "unobserved",
            Self::Missing => "missing",
            Self::Unowned => "unowned",
            Self::Foreign => "foreign",
            Self::Undeclared => "undeclared",
        }
    }
}

/// One RRset.
#[derive(Clone, Debug)]
pub(crate) struct Record {
    /// Its identity.
    pub(crate) name: RRsetName,
    /// The TTL, when known: routerd's (as it wrote it) or a foreign RRset's as read.
    pub(crate) ttl: Option<u64>,
    /// The records' data in presentation format, when known.
    pub(crate) rdata: Vec<String>,
    /// The declaring resource (`apiVersion/kind/name`); for an undeclared one the ledger's
    /// owner; empty for a foreign one.
    pub(crate) resource: String,
    /// In the ledger.
    pub(crate) owned: bool,
    /// Where it stands.
    pub(crate) state: RecordState,
    /// Why (the drift, the reason it is unobserved, a failed operation).
    pub(crate) detail: String,
}

impl Record {
    /// The state as the table prints it: `in sync`, `drift: the server has ttl 60`.
    pub(crate) fn state_text(&self) -> String {
        let word = self.state.as_str().replace('-', " ");
        if self.detail.is_empty() { word } else { format!("{word}: {}", self.detail) }
    }

    fn to_json(&self) -> Value {
        json!({
            "side": self.name.side.as_str(),
            "server": self.name.server,
            "zone": self.name.zone,
            "owner": self.name.owner,
            "type": self.name.rtype,
            "ttl": self.ttl,
            "rdata": self.rdata,
            "resource": self.resource,
            "foreign": self.state == RecordState::Foreign,
            "owned": self.owned,
            "state": self.state.as_str(),
            "detail": self.detail,
        })
    }
}

/// One zone on one server.
#[derive(Clone, Debug, Default)]
pub(crate) struct Zone {
    /// Local or remote.
    pub(crate) side: Side,
    /// The server's name.
    pub(crate) server: String,
    /// The apex, absolute.
    pub(crate) zone: String,
    /// RRsets the config declares in it.
    pub(crate) declared: usize,
    /// Of those, RRsets in the ledger.
    pub(crate) owned: usize,
    /// RRsets on the server that are in neither router.yaml nor the ledger.
    pub(crate) foreign: usize,
    /// Owned RRsets the server holds otherwise.
    pub(crate) drifted: usize,
    /// Declared RRsets not on the server.
    pub(crate) missing: usize,
    /// Declared RRsets on the server but not in the ledger.
    pub(crate) unowned: usize,
    /// Ledger RRsets no longer declared.
    pub(crate) undeclared: usize,
    /// Why the zone could not be read, when it could not.
    pub(crate) unreadable: Option<String>,
    /// What is wrong with the zone's clause on a local server.
    pub(crate) clause: Option<String>,
}

impl Zone {
    /// `OK`, `unreadable: <reason>`, or what differs: `2 drifted, 1 missing`.
    pub(crate) fn state(&self) -> String {
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

    fn to_json(&self) -> Value {
        json!({
            "side": self.side.as_str(),
            "server": self.server,
            "zone": self.zone,
            "declared": self.declared,
            "owned": self.owned,
            "foreign": self.foreign,
            "drifted": self.drifted,
            "missing": self.missing,
            "unowned": self.unowned,
            "undeclared": self.undeclared,
            "unreadable": self.unreadable,
            "state": self.state(),
        })
    }
}

/// One server: a `DNSServer` (its unit and `named.conf`) or a `DNSExternalServer`.
#[derive(Clone, Debug)]
pub(crate) struct Server {
    /// The resource's name.
    pub(crate) name: String,
    /// Local or remote.
    pub(crate) side: Side,
    /// Zones on it.
    pub(crate) zones: usize,
    /// Its state as a phrase: `unit running, named.conf in place`.
    pub(crate) state: String,
    /// Nothing is wrong.
    pub(crate) ok: bool,
}

impl Server {
    fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "side": self.side.as_str(),
            "zones": self.zones,
            "state": self.state,
            "ok": self.ok,
        })
    }
}

/// The DNS view of one Result document.
#[derive(Clone, Debug, Default)]
pub(crate) struct Dns {
    /// Zones by side, server and apex.
    pub(crate) zones: Vec<Zone>,
    /// RRsets by side, server, zone, owner and type.
    pub(crate) records: Vec<Record>,
    /// Servers by name.
    pub(crate) servers: Vec<Server>,
}

/// `routerctl dns zones`.
pub(crate) async fn zones(cli: &Cli) -> Result<(), Failure> {
    let dns = read(&result(cli).await?, None);
    if cli.structured() {
        let list: Vec<Value> = dns.zones.iter().map(Zone::to_json).collect();
        print_doc(cli.output, &Value::Array(list).to_string())
    } else {
        print!("{}", dns_zones_table(&dns.zones, console::width()));
        Ok(())
    }
}

/// `routerctl dns records [--zone Z]`.
pub(crate) async fn records(cli: &Cli, zone: Option<&str>) -> Result<(), Failure> {
    let doc = result(cli).await?;
    let ledger = parse(&call(&cli.socket, Method::GET, "/v1/ledger", None).await?)?;
    let mut dns = read(&doc, Some(&ledger));
    if let Some(zone) = zone {
        let apex = absolute(zone);
        dns.records.retain(|r| r.name.zone == apex);
    }
    if cli.structured() {
        let list: Vec<Value> = dns.records.iter().map(Record::to_json).collect();
        print_doc(cli.output, &Value::Array(list).to_string())
    } else {
        print!("{}", dns_records_table(&dns.records, console::width()));
        Ok(())
    }
}

/// `routerctl dns status`: the servers, then the `dns` doctor checks; fails with
/// [`Failure::ChecksFailed`] when one fails, as `routerctl doctor` does.
pub(crate) async fn status(cli: &Cli) -> Result<(), Failure> {
    let dns = read(&result(cli).await?, None);
    // 404: no check in the area (no DNS resource in the config).
    let checks: Vec<DoctorCheck> =
        match call(&cli.socket, Method::GET, "/v1/doctor?area=dns", None).await {
            Ok(body) => serde_json::from_value(parse(&body)?["checks"].clone())
                .map_err(|e| Failure::Answered(format!("unexpected doctor report: {e}")))?,
            Err(Failure::Answered(message)) if message.starts_with("404") => Vec::new(),
            Err(other) => return Err(other),
        };
    if cli.structured() {
        let doc = json!({
            "servers": dns.servers.iter().map(Server::to_json).collect::<Vec<_>>(),
            "checks": checks,
        });
        print_doc(cli.output, &doc.to_string())?;
    } else {
        print!("{}", dns_status_table(&dns.servers, &checks, console::width()));
    }
    if checks.iter().any(|c| c.status == CheckStatus::Fail) {
        return Err(Failure::ChecksFailed);
    }
    Ok(())
}

/// The last reconcile's Result document.
async fn result(cli: &Cli) -> Result<Value, Failure> {
    parse(&call(&cli.socket, Method::GET, "/v1/result", None).await?)
}

/// `zone` as an absolute, lowercased apex: `Lab.Example` → `lab.example.`.
pub(crate) fn absolute(zone: &str) -> String {
    let zone = zone.trim().to_ascii_lowercase();
    if zone.ends_with('.') { zone } else { format!("{zone}.") }
}

/// An observed artifact of a resource.
struct Seen<'a> {
    present: bool,
    owned: bool,
    drift: &'a [Value],
}

impl<'a> Seen<'a> {
    fn of(v: &'a Value) -> Self {
        Self {
            present: v["present"].as_bool().unwrap_or(false),
            owned: v["owned"].as_bool().unwrap_or(false),
            drift: v["drift"].as_array().map(Vec::as_slice).unwrap_or_default(),
        }
    }

    /// Why its zone could not be read (`TsigBadSig: …`), if it could not.
    fn unobserved(&self) -> Option<String> {
        self.drift
            .iter()
            .find(|d| d["attribute"] == "unobserved")
            .map(|d| d["observed"].as_str().unwrap_or("unknown").to_owned())
    }

    /// The attributes that differ, with the server's values: `the server has ttl 60`.
    fn differs(&self) -> String {
        let parts: Vec<String> = self
            .drift
            .iter()
            .map(|d| {
                let attribute = d["attribute"].as_str().unwrap_or("?");
                format!("{attribute} {}", value_text(&d["observed"]))
            })
            .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!("the server has {}", parts.join("; "))
        }
    }
}

/// A JSON value as a phrase: strings bare, lists comma-separated, `none` for null or empty.
fn value_text(v: &Value) -> String {
    match v {
        Value::Null => "none".into(),
        Value::String(s) => s.clone(),
        Value::Array(items) if items.is_empty() => "none".into(),
        Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// The TTL and data of an RRset's attributes, as the ledger, an orphan or an adoption
/// candidate holds them (the whole artifact spec, `{"type": "external", …, "attributes":
/// {ttl, rdata}}`, or the attributes alone).
fn rrset_data(spec: &Value) -> Option<(Option<u64>, Vec<String>)> {
    let attributes = spec.get("attributes").unwrap_or(spec);
    let ttl = attributes["ttl"].as_u64();
    let rdata: Option<Vec<String>> = attributes["rdata"]
        .as_array()
        .map(|list| list.iter().filter_map(|r| r.as_str().map(str::to_owned)).collect());
    (ttl.is_some() || rdata.is_some()).then(|| (ttl, rdata.unwrap_or_default()))
}

/// The items of the JSON array `v` (none when it is not one).
fn list(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

/// The DNS view of the Result document `doc`; `ledger` (`GET /v1/ledger`) gives the data of
/// owned RRsets, which the document does not carry.
pub(crate) fn read(doc: &Value, ledger: Option<&Value>) -> Dns {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let written: HashMap<String, &Value> = ledger
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|e| e["kind"] == RRSET)
        .map(|e| (text(&e["name"]), &e["attributes"]))
        .collect();
    let failed: HashMap<(String, String), String> = list(&doc["operations"])
        .filter(|op| op["result"] == "failed")
        .map(|op| {
            let error = op["error"].as_str().unwrap_or("failed").to_owned();
            ((text(&op["kind"]), text(&op["name"])), error)
        })
        .collect();
    let candidates: HashMap<String, &Value> = list(&doc["adoptionCandidates"])
        .filter(|c| c["kind"] == RRSET)
        .map(|c| (text(&c["name"]), &c["desired"]))
        .collect();
    // Every observed artifact by kind and name, whichever resource observed it.
    let mut seen: HashMap<(String, String), &Value> = HashMap::new();
    let resources: Vec<&Value> = list(&doc["resources"]).collect();
    for r in &resources {
        for o in r["observed"].as_array().into_iter().flatten() {
            seen.insert((text(&o["kind"]), text(&o["name"])), o);
        }
    }
    let mut zones: BTreeMap<(Side, String, String), Zone> = BTreeMap::new();
    let mut records = Vec::new();
    let mut servers: BTreeMap<String, Side> = BTreeMap::new();
    for r in &resources {
        let id = text(&r["id"]);
        let mut parts = id.rsplit('/');
        let (own_name, own_kind) = (parts.next().unwrap_or_default(), parts.next());
        match own_kind {
            Some("DNSServer") => {
                servers.insert(own_name.to_owned(), Side::Local);
            }
            Some("DNSExternalServer") => {
                servers.insert(own_name.to_owned(), Side::Remote);
            }
            _ => {}
        }
        for intent in r["artifacts"].as_array().into_iter().flatten() {
            let (kind, name) = (text(&intent["kind"]), text(&intent["name"]));
            let key = (kind.clone(), name.clone());
            if kind == BIND_ZONE {
                let Some((server, apex)) = name.split_once('/') else { continue };
                let zone = zone_of(&mut zones, Side::Local, server, apex);
                zone.clause = match (seen.get(&key).map(|o| Seen::of(o)), failed.get(&key)) {
                    (_, Some(error)) => Some(format!("zone refused: {error}")),
                    (None, None) => None,
                    (Some(o), None) if !o.present => Some("zone not configured".into()),
                    (Some(o), None) if !o.drift.is_empty() => Some("zone clause differs".into()),
                    (Some(_), None) => None,
                };
                continue;
            }
            if kind != RRSET {
                continue;
            }
            let Some(parsed) = RRsetName::parse(&name) else { continue };
            let observed = seen.get(&key).map(|o| Seen::of(o));
            let error = failed.get(&key);
            let (state, detail) = match &observed {
                None => (RecordState::Unobserved, "not observed yet".to_owned()),
                Some(o) => match o.unobserved() {
                    Some(reason) => (RecordState::Unobserved, reason),
                    None if !o.present => (RecordState::Missing, String::new()),
                    None if !o.owned => (RecordState::Unowned, o.differs()),
                    None if !o.drift.is_empty() => (RecordState::Drift, o.differs()),
                    None => (RecordState::InSync, String::new()),
                },
            };
            let detail = match error {
                Some(e) if detail.is_empty() => format!("failed: {e}"),
                Some(e) => format!("{detail}; failed: {e}"),
                None => detail,
            };
            // The data: as routerd wrote it (the ledger), else as declared for adoption; the
            // drift's desired values are newer than either.
            let (mut ttl, mut rdata) = written
                .get(&name)
                .copied()
                .or_else(|| candidates.get(&name).copied())
                .and_then(rrset_data)
                .unwrap_or_default();
            if state != RecordState::Unobserved {
                for d in observed.iter().flat_map(|o| o.drift) {
                    match d["attribute"].as_str() {
                        Some("ttl") => ttl = d["desired"].as_u64().or(ttl),
                        Some("rdata") => {
                            if let Some((_, desired)) = rrset_data(&json!({"rdata": d["desired"]}))
                            {
                                rdata = desired;
                            }
                        }
                        _ => {}
                    }
                }
            }
            let owned = observed.as_ref().is_some_and(|o| o.owned);
            let zone = zone_of(&mut zones, parsed.side, &parsed.server, &parsed.zone);
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
            records.push(Record {
                name: parsed,
                ttl,
                rdata,
                resource: id.clone(),
                owned,
                state,
                detail,
            });
        }
    }
    for o in list(&doc["orphans"]).filter(|o| o["kind"] == RRSET) {
        let name = text(&o["name"]);
        let Some(parsed) = RRsetName::parse(&name) else { continue };
        let owner = text(&o["owner"]);
        let (ttl, rdata) = rrset_data(&o["observed"])
            .or_else(|| written.get(&name).copied().and_then(rrset_data))
            .unwrap_or_default();
        let zone = zone_of(&mut zones, parsed.side, &parsed.server, &parsed.zone);
        let (state, detail) = if owner.is_empty() {
            zone.foreign += 1;
            (RecordState::Foreign, "not in router.yaml, left alone".to_owned())
        } else {
            zone.undeclared += 1;
            let what = match o["cleanup"].as_str() {
                Some("delete") => "deleted by the reconcile",
                Some("forget") => "gone from the server, the ledger entry is dropped",
                _ => "kept",
            };
            (RecordState::Undeclared, what.to_owned())
        };
        let owned = !owner.is_empty();
        records.push(Record { name: parsed, ttl, rdata, resource: owner, owned, state, detail });
    }
    records.sort_by(|a, b| a.name.cmp(&b.name));
    let zones: Vec<Zone> = zones.into_values().collect();
    let servers = servers
        .into_iter()
        .map(|(name, side)| server(&name, side, &zones, &seen, &failed))
        .collect();
    Dns { zones, records, servers }
}

/// The zone `apex` of `server` in `zones`, added when new.
fn zone_of<'a>(
    zones: &'a mut BTreeMap<(Side, String, String), Zone>,
    side: Side,
    server: &str,
    apex: &str,
) -> &'a mut Zone {
    zones.entry((side, server.to_owned(), apex.to_owned())).or_insert_with(|| Zone {
        side,
        server: server.to_owned(),
        zone: apex.to_owned(),
        ..Zone::default()
    })
}

/// Server `name`'s row: a local one's unit and `named.conf` as observed; a remote one's zones
/// read or not.
fn server(
    name: &str,
    side: Side,
    zones: &[Zone],
    seen: &HashMap<(String, String), &Value>,
    failed: &HashMap<(String, String), String>,
) -> Server {
    let mine: Vec<&Zone> = zones.iter().filter(|z| z.server == name && z.side == side).collect();
    let unreadable: Vec<String> = mine
        .iter()
        .filter_map(|z| z.unreadable.as_ref().map(|why| format!("{} ({why})", z.zone)))
        .collect();
    let mut parts = Vec::new();
    let mut ok = unreadable.is_empty();
    if side == Side::Local {
        let look = |kind: &str, artifact: String| {
            let key = (kind.to_owned(), artifact);
            (seen.get(&key).map(|o| Seen::of(o)), failed.get(&key).cloned())
        };
        let (unit, unit_failed) = look(UNIT, format!("routerd-named-{name}.service"));
        let (unit_text, unit_ok) = match (&unit, unit_failed) {
            (_, Some(e)) => (format!("unit failed: {e}"), false),
            (None, None) => ("unit not observed".into(), false),
            (Some(u), None) if !u.present => ("unit missing".into(), false),
            (Some(u), None) if u.drift.iter().any(|d| d["attribute"] == "active") => {
                ("unit not running".into(), false)
            }
            (Some(u), None) if !u.drift.is_empty() => ("unit differs".into(), false),
            (Some(_), None) => ("unit running".into(), true),
        };
        let (conf, conf_failed) = look(BIND_CONFIG, format!("{name}/options"));
        let (conf_text, conf_ok) = match (&conf, conf_failed) {
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
    Server { name: name.to_owned(), side, zones: mine.len(), state: parts.join(", "), ok }
}

#[cfg(test)]
#[path = "dns_tests.rs"]
mod tests;
