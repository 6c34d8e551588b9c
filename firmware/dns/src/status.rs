//! What the DNS kinds report beyond their phase (ADR 0013, design brief §4): the conditions
//! `Loaded` (a zone), `Published` and `Conflict` (the RRsets of a record or a zone) with stable
//! reasons, and a `DNSZone`'s status fields, `servers[]` (per zone and server: role, state,
//! serial), `recordsCount` and `foreignRecords`. Read from the facts the engine already has:
//! the `bind.zone` artifacts as inventory found them (with their serial from `rndc
//! zonestatus`), the `dns.rrset` artifacts as the zone transfer found them, and the
//! operations of this run with their reasons.

use std::ops::Range;

use routerd_engine::kind_status::{
    ArtifactFacts, KindCondition, KindItem, KindStatus, StatusFacts,
};
use routerd_engine::result::{ConditionStatus, OperationResult};
use routerd_host::ControllerCode;
use serde::Serialize;
use serde_json::Value;

use crate::artifacts::{BIND_ZONE, DNS_REMOTE_ZONE, DNS_RRSET};
use crate::kinds::names;
use crate::kinds::zone::ZoneSpec;

/// Condition types and reasons of the DNS kinds: one word, one meaning.
pub mod words {
    use routerd_host::ControllerCode;

    /// Condition: the zone is loaded by its server (local), or readable by zone transfer
    /// (remote).
    pub const LOADED: ControllerCode = ControllerCode::new("Loaded");
    /// Condition: the resource's RRsets are on the server as declared.
    pub const PUBLISHED: ControllerCode = ControllerCode::new("Published");
    /// Condition: an RRset routerd would create is already on a remote primary with other
    /// data; it stays until adopted.
    pub const CONFLICT: ControllerCode = ControllerCode::new("Conflict");

    /// Condition: every secondary the server notifies serves the primary's serial.
    pub const SECONDARIES_IN_SYNC: ControllerCode = ControllerCode::new("SecondariesInSync");
    /// `SecondariesInSync` is `True`.
    pub const SERIALS_MATCH: ControllerCode = ControllerCode::new("SerialsMatch");
    /// `SecondariesInSync` is `False`: a secondary serves an older serial, or did not answer
    /// for the zone (not transferred yet, or unreachable).
    pub const SECONDARY_BEHIND: ControllerCode = ControllerCode::new("SecondaryBehind");

    /// `Loaded` is `True`.
    pub const ZONE_LOADED: ControllerCode = ControllerCode::new("ZoneLoaded");
    /// `Loaded` is `False`: the zone is not (yet) in its server's configuration, or named
    /// did not load it.
    pub const ZONE_NOT_LOADED: ControllerCode = ControllerCode::new("ZoneNotLoaded");
    /// `Loaded` is `False`: named's checks refused the zone's configuration.
    pub const CONFIG_REJECTED: ControllerCode = ControllerCode::new("ConfigRejected");
    /// `Published` is `True`.
    pub const RRSETS_PUBLISHED: ControllerCode = ControllerCode::new("RRsetsPublished");
    /// `Published` is `False`: an UPDATE is still to be sent (a plan), or waits for what
    /// it depends on.
    pub const UPDATE_PENDING: ControllerCode = ControllerCode::new("UpdatePending");
    /// `Published` or `Loaded` is `Unknown`: the zone could not be read.
    pub const ZONE_UNREADABLE: ControllerCode = ControllerCode::new("ZoneUnreadable");
    /// The server refused the update key (RFC 8945 BADKEY).
    pub const TSIG_BAD_KEY: ControllerCode = ControllerCode::new("TsigBadKey");
    /// The server found the signature wrong: another secret (BADSIG).
    pub const TSIG_BAD_SIG: ControllerCode = ControllerCode::new("TsigBadSig");
    /// The clocks differ by more than the fudge (BADTIME).
    pub const TSIG_BAD_TIME: ControllerCode = ControllerCode::new("TsigBadTime");
    /// The server's policy refused the UPDATE (REFUSED).
    pub const UPDATE_REFUSED: ControllerCode = ControllerCode::new("UpdateRefused");
    /// The server is not authoritative for the zone (NOTAUTH).
    pub const NOT_AUTHORITATIVE: ControllerCode = ControllerCode::new("NotAuthoritative");
    /// No answer from the server.
    pub const SERVER_UNREACHABLE: ControllerCode = ControllerCode::new("ServerUnreachable");
    /// A create found the RRset already there (the RFC 2136 prerequisite failed).
    pub const FOREIGN_RRSET: ControllerCode = ControllerCode::new("ForeignRRset");
    /// The server accepted the UPDATE but left the RRset out: a CNAME where the name holds
    /// other data (RFC 2136 §3.4.2.2).
    pub const UPDATE_IGNORED: ControllerCode = ControllerCode::new("UpdateIgnored");
    /// A delete on a remote primary that its TXT ownership registry does not confirm (no owner
    /// record of this router): refused, the RRset stays.
    pub const OWNER_RECORD_MISSING: ControllerCode = ControllerCode::new("OwnerRecordMissing");
    /// Any other failure of an UPDATE or transfer.
    pub const UPDATE_FAILED: ControllerCode = ControllerCode::new("UpdateFailed");

    /// The reasons a failed UPDATE or an unreadable zone names, as the wire client words them
    /// ([`crate::wire::WireError::reason`]).
    pub const WIRE: [ControllerCode; 9] = [
        TSIG_BAD_KEY,
        TSIG_BAD_SIG,
        TSIG_BAD_TIME,
        UPDATE_REFUSED,
        NOT_AUTHORITATIVE,
        SERVER_UNREACHABLE,
        FOREIGN_RRSET,
        UPDATE_IGNORED,
        UPDATE_FAILED,
    ];
}

/// How much of a list a message names before it says how many more.
const NAMED: usize = 3;

/// The `Published` and `Conflict` conditions of a record resource.
pub fn record_status(facts: &StatusFacts<'_>) -> KindStatus {
    KindStatus { conditions: rrset_conditions(facts), fields: None }
}

/// The conditions and status fields of a `DNSZone`.
pub fn zone_status(spec: &ZoneSpec, facts: &StatusFacts<'_>) -> KindStatus {
    let Some(place) = Place::of(spec) else { return KindStatus::default() };
    let mut servers = Vec::new();
    let mut loaded = Vec::new();
    let apexes = place.apexes(spec);
    for apex in &apexes {
        let (rows, verdict) = match place.side {
            Side::Local => local_zone(facts, &place.server, apex),
            Side::Remote => remote_zone(facts, &place.server, apex),
        };
        servers.extend(rows);
        loaded.push(verdict);
    }
    let mut conditions = Vec::new();
    if let Some(worst) = loaded.iter().min_by_key(|v| rank(v.status)).cloned() {
        conditions.push(worst);
    }
    conditions.extend(secondaries_in_sync(&servers));
    conditions.extend(rrset_conditions(facts));

    let prefix = |apex: &str| format!("{}:{}/{apex}/", place.side.word(), place.server);
    let prefixes: Vec<String> = apexes.iter().map(|a| prefix(a)).collect();
    let (records_count, foreign_records) = count_rrsets(
        facts.desired_of(DNS_RRSET.as_str()),
        facts.current_of(DNS_RRSET.as_str()),
        &prefixes,
    );
    let fields = ZoneFields { servers, records_count, foreign_records };
    KindStatus { conditions, fields: serde_json::to_value(fields).ok() }
}

/// The RRsets whose names start with one of `prefixes` (the zone's and its reverse zones'):
/// how many names `desired` declares, and how many of `current` it does not. Both lists are
/// in name order ([`StatusFacts::desired_of`]), so the names of a prefix are one range of
/// each, found by binary search, and a merge walk of the two finds the undeclared.
fn count_rrsets(
    desired: &[KindItem<'_>],
    current: &[KindItem<'_>],
    prefixes: &[String],
) -> (usize, usize) {
    let declared = || names_within(desired, prefixes);
    let mut last = None;
    let records = declared().filter(|name| last.replace(*name) != Some(*name)).count();
    let mut declared = declared().peekable();
    let foreign = names_within(current, prefixes)
        .filter(|name| {
            while declared.next_if(|d| d < name).is_some() {}
            declared.peek() != Some(name)
        })
        .count();
    (records, foreign)
}

/// The names of `items` (in name order) that start with one of `prefixes`, in order.
fn names_within<'a>(
    items: &'a [KindItem<'a>],
    prefixes: &[String],
) -> impl Iterator<Item = &'a str> + 'a {
    let mut ranges: Vec<Range<usize>> = prefixes
        .iter()
        .map(|prefix| {
            let prefix = prefix.as_str();
            let start = items.partition_point(|i| i.name < prefix);
            let len = items[start..].partition_point(|i| i.name.starts_with(prefix));
            start..start + len
        })
        .filter(|range| !range.is_empty())
        .collect();
    // One prefix may hold another's names (the same apex twice): each name once.
    ranges.sort_by_key(|range| range.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
            _ => merged.push(range),
        }
    }
    merged.into_iter().flat_map(move |range| items[range].iter().map(|i| i.name))
}

/// A `DNSZone`'s status fields.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ZoneFields {
    servers: Vec<ZoneOnServer>,
    /// RRsets the config declares in the zone and its reverse zones (all resources).
    records_count: usize,
    /// RRsets on the server in neither the config nor the ledger's reach: left alone.
    foreign_records: usize,
}

/// One zone (the forward zone or a reverse zone) on its server.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ZoneOnServer {
    /// The `DNSServer` or `DNSExternalServer`.
    server: String,
    /// The zone apex, absolute.
    zone: String,
    /// `primary` (a server the router runs), `secondary` (one it notifies) or `external` (a
    /// remote primary).
    role: Role,
    /// Where the zone stands there.
    state: ZoneState,
    /// The SOA serial the server last reported, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    serial: Option<u32>,
    /// A secondary's: whether it serves the primary's serial.
    #[serde(skip_serializing_if = "Option::is_none")]
    in_sync: Option<bool>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Role {
    Primary,
    Secondary,
    External,
}

/// The brief's `servers[].state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
enum ZoneState {
    /// Loaded (local) or readable (remote).
    Configured,
    /// Its configuration was refused, it did not load, or it cannot be read.
    Failed,
    /// Not configured yet (a plan), or not known yet.
    Pending,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Local,
    Remote,
}

impl Side {
    fn word(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Remote => "remote",
        }
    }
}

/// Where a zone resource's zones are served.
struct Place {
    side: Side,
    server: String,
}

impl Place {
    fn of(spec: &ZoneSpec) -> Option<Self> {
        match (&spec.server, &spec.external_server) {
            (Some(server), None) => Some(Self { side: Side::Local, server: server.clone() }),
            (None, Some(server)) => Some(Self { side: Side::Remote, server: server.clone() }),
            _ => None,
        }
    }

    /// The zone's apex and its reverse zones' (local only), lowercased and absolute.
    fn apexes(&self, spec: &ZoneSpec) -> Vec<String> {
        let mut zones = vec![spec.zone.clone()];
        if self.side == Side::Local {
            zones.extend(spec.reverse_zones.iter().map(|r| r.name.clone()));
        }
        zones
            .iter()
            .filter_map(|z| names::zone_apex(z).ok())
            .map(|apex| apex.to_lowercase().to_ascii())
            .collect()
    }
}

/// `Loaded` of a zone on a server the router runs, from its `bind.zone` artifact, with a row
/// for the server and one for each secondary it notifies.
fn local_zone(
    facts: &StatusFacts<'_>,
    server: &str,
    apex: &str,
) -> (Vec<ZoneOnServer>, KindCondition) {
    let name = format!("{server}/{apex}");
    let artifact = facts.artifacts.iter().find(|a| a.kind == BIND_ZONE.as_str() && a.name == name);
    let observed = artifact.and_then(|a| a.observed);
    let serial = observed.and_then(|o| o.get("serial")).and_then(Value::as_u64);
    let serial = serial.and_then(|s| u32::try_from(s).ok());
    let loaded = observed.and_then(|o| o.get("loaded")).and_then(Value::as_bool);
    let failed = artifact.and_then(|a| a.operation).filter(|o| o.result == OperationResult::Failed);
    let done =
        artifact.and_then(|a| a.operation).is_some_and(|o| o.result == OperationResult::Done);
    let (state, condition) = if let Some(op) = failed {
        let error = op.error.as_deref().unwrap_or("failed");
        let condition = cond(words::LOADED, false, words::CONFIG_REJECTED, error.to_owned());
        (ZoneState::Failed, condition)
    } else if done || (artifact.is_some_and(|a| a.present) && loaded != Some(false)) {
        // Just written (named loads it on the reconfig that followed), or in place and not
        // reported unloaded (a stopped named reports nothing).
        let at = serial.map(|s| format!(" with serial {s}")).unwrap_or_default();
        let message = format!("zone {apex} loaded by {server}{at}");
        (ZoneState::Configured, cond(words::LOADED, true, words::ZONE_LOADED, message))
    } else if loaded == Some(false) {
        let message = format!("zone {apex} is configured on {server}, but named has not loaded it");
        (ZoneState::Failed, cond(words::LOADED, false, words::ZONE_NOT_LOADED, message))
    } else {
        let message = format!("zone {apex} is not configured on {server} yet");
        (ZoneState::Pending, cond(words::LOADED, false, words::ZONE_NOT_LOADED, message))
    };
    let mut rows = vec![ZoneOnServer {
        server: server.to_owned(),
        zone: apex.to_owned(),
        role: Role::Primary,
        state,
        serial,
        in_sync: None,
    }];
    let secondaries = observed.and_then(|o| o.get("secondaries")).and_then(Value::as_array);
    for secondary in secondaries.into_iter().flatten() {
        let address = secondary.get("address").and_then(Value::as_str).unwrap_or_default();
        let theirs = secondary.get("serial").and_then(Value::as_u64);
        let theirs = theirs.and_then(|s| u32::try_from(s).ok());
        let in_sync = theirs.is_some() && theirs == serial;
        rows.push(ZoneOnServer {
            server: address.to_owned(),
            zone: apex.to_owned(),
            role: Role::Secondary,
            state: if in_sync { ZoneState::Configured } else { ZoneState::Pending },
            serial: theirs,
            in_sync: Some(in_sync),
        });
    }
    (rows, condition)
}

/// `SecondariesInSync` over the secondary rows of `servers`; none without secondaries.
fn secondaries_in_sync(servers: &[ZoneOnServer]) -> Option<KindCondition> {
    let secondaries: Vec<&ZoneOnServer> =
        servers.iter().filter(|s| s.role == Role::Secondary).collect();
    if secondaries.is_empty() {
        return None;
    }
    let behind: Vec<String> = secondaries
        .iter()
        .filter(|s| s.in_sync != Some(true))
        .map(|s| match s.serial {
            Some(serial) => format!("{} has {} at serial {serial}", s.server, s.zone),
            None => format!("{} does not serve {}", s.server, s.zone),
        })
        .collect();
    Some(if behind.is_empty() {
        let message = format!("{} secondary zone(s) at the primary's serial", secondaries.len());
        cond(words::SECONDARIES_IN_SYNC, true, words::SERIALS_MATCH, message)
    } else {
        let names: Vec<&str> = behind.iter().map(String::as_str).collect();
        cond(words::SECONDARIES_IN_SYNC, false, words::SECONDARY_BEHIND, list(&names))
    })
}

/// `Loaded` of a zone on a remote primary, from its observed `dns.remoteZone` (an SOA query
/// at every observation).
fn remote_zone(
    facts: &StatusFacts<'_>,
    server: &str,
    apex: &str,
) -> (Vec<ZoneOnServer>, KindCondition) {
    let name = format!("remote:{server}/{apex}");
    let zone =
        facts.artifacts.iter().find(|a| a.kind == DNS_REMOTE_ZONE.as_str() && a.name == name);
    let observed = zone.and_then(|z| z.observed);
    let serial = observed.and_then(|o| o.get("serial")).and_then(Value::as_u64);
    let serial = serial.and_then(|s| u32::try_from(s).ok());
    let unreadable = observed.and_then(|o| o.get("unreadable")).and_then(Value::as_str);
    let (state, condition) = match (zone.is_some_and(|z| z.present), unreadable) {
        (true, Some(why)) => {
            let message = format!("zone {apex} on {server} cannot be read: {why}");
            (ZoneState::Failed, cond_unknown(words::LOADED, read_reason(why), message))
        }
        (true, None) => {
            let at = serial.map(|s| format!(" with serial {s}")).unwrap_or_default();
            let message = format!("zone {apex} served by {server}{at}");
            (ZoneState::Configured, cond(words::LOADED, true, words::ZONE_LOADED, message))
        }
        (false, _) if zone.is_some() => {
            let message = format!("{server} does not serve zone {apex}: its RRsets wait for it");
            (ZoneState::Failed, cond(words::LOADED, false, words::ZONE_NOT_LOADED, message))
        }
        (false, _) => {
            let message = format!("zone {apex} on {server} is not observed");
            (ZoneState::Pending, cond_unknown(words::LOADED, words::ZONE_UNREADABLE, message))
        }
    };
    let row = ZoneOnServer {
        server: server.to_owned(),
        zone: apex.to_owned(),
        role: Role::External,
        state,
        serial,
        in_sync: None,
    };
    (vec![row], condition)
}

/// Where one RRset stands.
enum Standing {
    Published,
    Pending,
    Unknown(ControllerCode),
    Failed(ControllerCode),
    Conflict(ControllerCode),
}

fn standing(a: &ArtifactFacts<'_>) -> Standing {
    if let Some(op) = a.operation {
        return match op.result {
            OperationResult::Done => Standing::Published,
            OperationResult::Failed => match failure_reason(op.error.as_deref()) {
                r if r == words::FOREIGN_RRSET || r == words::UPDATE_IGNORED => {
                    Standing::Conflict(r)
                }
                r => Standing::Failed(r),
            },
            _ => Standing::Pending,
        };
    }
    match a.observed.and_then(unobserved) {
        Some(why) => Standing::Unknown(read_reason(why)),
        // Present with other data and not routerd's, yet nothing planned: someone else's RRset
        // the engine leaves alone (`unowned_kept_if`).
        None if a.present && !a.owned && a.desired != a.observed => {
            Standing::Conflict(words::FOREIGN_RRSET)
        }
        None if a.present => Standing::Published,
        None => Standing::Pending,
    }
}

/// `Published` over the resource's RRsets, and `Conflict` when a create met another's.
fn rrset_conditions(facts: &StatusFacts<'_>) -> Vec<KindCondition> {
    let rrsets: Vec<&ArtifactFacts<'_>> =
        facts.artifacts.iter().filter(|a| a.kind == DNS_RRSET.as_str()).collect();
    if rrsets.is_empty() {
        return Vec::new();
    }
    let (mut pending, mut unknown, mut failed, mut conflicts) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for a in &rrsets {
        match standing(a) {
            Standing::Published => {}
            Standing::Pending => pending.push(a.name),
            Standing::Unknown(r) => unknown.push((r, a.name)),
            Standing::Failed(r) => failed.push((r, a.name)),
            Standing::Conflict(r) => conflicts.push((r, a.name)),
        }
    }
    let mut out = Vec::new();
    let total = rrsets.len();
    out.push(if let Some((reason, _)) = failed.first() {
        let names: Vec<&str> = failed.iter().map(|(_, n)| *n).collect();
        // The first failure's own words name the server and the key (`server 192.0.2.1#53
        // rejected the signature of TSIG key "k": …`).
        let why = rrsets
            .iter()
            .find_map(|a| a.operation.filter(|o| o.result == OperationResult::Failed))
            .and_then(|o| server_message(o.error.as_deref()?))
            .map_or_else(String::new, |m| format!(" ({m})"));
        cond(words::PUBLISHED, false, *reason, format!("not published: {}{why}", list(&names)))
    } else if let Some((reason, _)) = unknown.first() {
        let names: Vec<&str> = unknown.iter().map(|(_, n)| *n).collect();
        cond_unknown(words::PUBLISHED, *reason, format!("zone unreadable: {}", list(&names)))
    } else if !pending.is_empty() || !conflicts.is_empty() {
        let mut names = pending.clone();
        names.extend(conflicts.iter().map(|(_, n)| *n));
        cond(words::PUBLISHED, false, words::UPDATE_PENDING, format!("pending: {}", list(&names)))
    } else {
        // No serial here: the status of every record would change with each UPDATE of its
        // zone, and the daemon writes a changed status to the ledger. The zone's `Loaded`
        // carries the serial.
        let message = match total {
            1 => format!("{} is on the server as declared", rrsets[0].name),
            n => format!("{n} RRsets are on the server as declared"),
        };
        cond(words::PUBLISHED, true, words::RRSETS_PUBLISHED, message)
    });
    if let Some((reason, _)) = conflicts.first() {
        let names: Vec<&str> = conflicts.iter().map(|(_, n)| *n).collect();
        let message = if *reason == words::UPDATE_IGNORED {
            format!("the server ignored it, its name holds other data: {}", list(&names))
        } else {
            format!(
                "already on the server with other data, left alone until adopted: {}",
                list(&names)
            )
        };
        out.push(cond(words::CONFLICT, true, *reason, message));
    }
    out
}

/// The reason word an operation's error starts with (the engine writes `<reason>: <error>`),
/// if it is one of [`words::WIRE`]; otherwise `UpdateFailed`.
/// What the server said in a failed operation's error: the engine writes
/// `<reason>: <kind>/<name>: <operation>: <message>`, and names hold no `": "`.
fn server_message(error: &str) -> Option<&str> {
    error.splitn(4, ": ").nth(3)
}

fn failure_reason(error: Option<&str>) -> ControllerCode {
    error.and_then(|e| e.split_once(": ")).map_or(words::UPDATE_FAILED, |(w, _)| wire_reason(w))
}

/// The wire reason `text` starts with (`ServerUnreachable: …`), else `UpdateFailed`.
fn wire_reason(text: &str) -> ControllerCode {
    let word = text.split(':').next().unwrap_or_default();
    words::WIRE.into_iter().find(|w| w.as_str() == word).unwrap_or(words::UPDATE_FAILED)
}

/// Why a zone could not be read, from the text the backend wrote (`TsigBadKey: …`): the wire
/// reason it starts with, else `ZoneUnreadable`.
fn read_reason(text: &str) -> ControllerCode {
    match wire_reason(text) {
        r if r == words::UPDATE_FAILED => words::ZONE_UNREADABLE,
        r => r,
    }
}

/// The `unobserved` text of an observed `dns.rrset`.
fn unobserved(attributes: &Value) -> Option<&str> {
    attributes.get("unobserved").and_then(Value::as_str)
}

fn list(names: &[&str]) -> String {
    let mut text = names.iter().take(NAMED).copied().collect::<Vec<_>>().join(", ");
    if names.len() > NAMED {
        text.push_str(&format!(" and {} more", names.len() - NAMED));
    }
    text
}

fn rank(status: ConditionStatus) -> u8 {
    match status {
        ConditionStatus::False => 0,
        ConditionStatus::Unknown => 1,
        ConditionStatus::True => 2,
    }
}

fn cond(
    type_: ControllerCode,
    holds: bool,
    reason: ControllerCode,
    message: String,
) -> KindCondition {
    KindCondition { type_, status: ConditionStatus::from(holds), reason, message }
}

fn cond_unknown(type_: ControllerCode, reason: ControllerCode, message: String) -> KindCondition {
    KindCondition { type_, status: ConditionStatus::Unknown, reason, message }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// The counts by a set of the declared names and a scan of every name.
    fn count_by_scan(
        desired: &[KindItem<'_>],
        current: &[KindItem<'_>],
        prefixes: &[String],
    ) -> (usize, usize) {
        let inside = |name: &str| prefixes.iter().any(|p| name.starts_with(p.as_str()));
        let declared: HashSet<&str> =
            desired.iter().map(|i| i.name).filter(|n| inside(n)).collect();
        let foreign =
            current.iter().filter(|i| inside(i.name) && !declared.contains(i.name)).count();
        (declared.len(), foreign)
    }

    fn items<'a>(names: &[&'a str]) -> Vec<KindItem<'a>> {
        let mut names = names.to_vec();
        names.sort();
        names
            .into_iter()
            .map(|name| KindItem { name, attributes: &Value::Null, owner: "" })
            .collect()
    }

    #[test]
    fn rrsets_are_counted_by_range_as_by_scan() {
        let desired = items(&[
            "local:auth/lab.example./a.lab.example./A",
            "local:auth/lab.example./a.lab.example./A",
            "local:auth/lab.example./b.lab.example./A",
            "local:auth/lab.example./lab.example./MX",
            "local:auth/2.0.192.in-addr.arpa./10.2.0.192.in-addr.arpa./PTR",
            "local:auth/other.example./a.other.example./A",
            "local:auth/xlab.example./a.xlab.example./A",
            "local:other/lab.example./a.lab.example./A",
            "remote:auth/lab.example./a.lab.example./A",
        ]);
        let current = items(&[
            "local:auth/lab.example./a.lab.example./A",
            "local:auth/lab.example./c.lab.example./A",
            "local:auth/lab.example./c.lab.example./A",
            "local:auth/lab.example./lab.example./MX",
            "local:auth/lab.example./z.lab.example./TXT",
            "local:auth/2.0.192.in-addr.arpa./11.2.0.192.in-addr.arpa./PTR",
            "local:auth/other.example./b.other.example./A",
            "local:auth/xlab.example./b.xlab.example./A",
            "local:auth/lab.example/a.lab.example./A",
            "local:other/lab.example./b.lab.example./A",
            "remote:auth/lab.example./b.lab.example./A",
        ]);
        let prefixes = |apexes: &[&str]| -> Vec<String> {
            apexes.iter().map(|a| format!("local:auth/{a}/")).collect()
        };
        for apexes in [
            &["lab.example."][..],
            &["lab.example.", "2.0.192.in-addr.arpa."],
            &["lab.example.", "lab.example."],
            &["2.0.192.in-addr.arpa.", "lab.example.", "other.example."],
            &["nowhere.example."],
            &[],
        ] {
            let prefixes = prefixes(apexes);
            let counts = count_rrsets(&desired, &current, &prefixes);
            assert_eq!(counts, count_by_scan(&desired, &current, &prefixes), "{apexes:?}");
        }
        let counts = count_rrsets(&desired, &current, &prefixes(&["lab.example."]));
        assert_eq!(counts, (3, 3));
        let prefixes = ["local:auth/".to_owned(), "local:auth/lab.example./".to_owned()];
        let counts = count_rrsets(&desired, &current, &prefixes);
        assert_eq!(counts, count_by_scan(&desired, &current, &prefixes), "nested prefixes");
        assert_eq!(count_rrsets(&[], &current, &prefixes), count_by_scan(&[], &current, &prefixes));
    }
}
