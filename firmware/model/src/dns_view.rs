//! The DNS controller's servers, zones and RRsets (ADR 0012) as the last reconcile found them:
//! the rows the daemon derives once from its Result document, the ledger (the data routerd wrote
//! into each owned RRset) and the doctor's `dns` checks, serves as `GET /v1/dns`
//! (`docs/control-api.md`) and shows on the web UI's DNS page; `routerctl dns zones|records|
//! status` prints them.
//!
//! Plain data: nothing here reads a document or decides a state; the daemon does
//! (`firmware/supervisor/src/dns_view.rs`). In JSON the fields are camelCase and the enums their
//! words ([`Side::as_str`], [`RecordState::as_str`]):
//!
//! ```json
//! {"observed": true,
//!  "servers": [{"name": "auth", "side": "local", "zones": 1,
//!               "state": "unit running, named.conf in place, zones readable", "ok": true}],
//!  "zones": [{"side": "local", "server": "auth", "zone": "lab.example.", "declared": 2,
//!             "owned": 2, "foreign": 0, "drifted": 1, "missing": 0, "unowned": 0,
//!             "undeclared": 0, "unreadable": null, "state": "1 drifted", "ok": false}],
//!  "records": [{"side": "local", "server": "auth", "zone": "lab.example.",
//!               "owner": "www.lab.example.", "type": "A", "ttl": 300,
//!               "rdata": ["192.0.2.10"], "resource": "net.routerd.net/v1alpha1/ARecord/www",
//!               "foreign": false, "owned": true, "state": "drift",
//!               "detail": "the server has ttl 60"}],
//!  "checks": [{"area": "dns", "code": "N001", "name": "…", "status": "pass", "detail": "…",
//!              "remedy": ""}]}
//! ```

use serde::{Deserialize, Serialize};

use crate::status::DoctorCheck;

/// Which server a zone or RRset is on.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// A `DNSServer`: a BIND the router runs (`local` in JSON).
    #[default]
    Local,
    /// A `DNSExternalServer`: a server elsewhere that routerd updates (`remote` in JSON).
    Remote,
}

impl Side {
    /// `local` or `remote`, as the JSON, the tables and the `dns.rrset` artifact names write
    /// it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Remote => "remote",
        }
    }
}

/// Where a declared, owned or observed RRset stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecordState {
    /// Declared, owned, on the server as declared (`in-sync`).
    InSync,
    /// Declared and owned; the server holds other data (changed by hand).
    Drift,
    /// Declared; its zone could not be read (the row's detail says why).
    Unobserved,
    /// Declared, not on the server (yet).
    Missing,
    /// Declared and on the server, not in the ledger: an adoption candidate.
    Unowned,
    /// On the server, in neither router.yaml nor the ledger: left alone.
    Foreign,
    /// In the ledger, declared no more (deleted by the reconcile, or gone).
    Undeclared,
}

impl RecordState {
    /// The word the JSON, the tables and the web UI use: `in-sync`, `drift`, `unobserved`,
    /// `missing`, `unowned`, `foreign`, `undeclared`.
    pub fn as_str(self) -> &'static str {
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

/// The DNS view of the last reconcile (`GET /v1/dns`): `{observed, servers, zones, records,
/// checks}`. `C` is the type of a check: a [`DoctorCheck`] as the control API serves it; the
/// web UI carries its own (with the page's action).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DnsView<C = DoctorCheck> {
    /// Whether a reconcile has finished: before the first, nothing is known of the servers and
    /// the rows are empty (the checks may not be).
    pub observed: bool,
    /// `DNSServer`s and `DNSExternalServer`s, by name.
    pub servers: Vec<DnsServerRow>,
    /// Zones by side (local first), server and apex.
    pub zones: Vec<DnsZoneRow>,
    /// RRsets by side (local first), server, zone, owner and type.
    pub records: Vec<DnsRecordRow>,
    /// The doctor's `dns` checks, run when the view was made.
    pub checks: Vec<C>,
}

impl<C> Default for DnsView<C> {
    fn default() -> Self {
        Self {
            observed: false,
            servers: Vec::new(),
            zones: Vec::new(),
            records: Vec::new(),
            checks: Vec::new(),
        }
    }
}

impl<C> DnsView<C> {
    /// The same rows with each check turned into what `f` makes of it.
    pub fn map_checks<D>(self, f: impl FnMut(C) -> D) -> DnsView<D> {
        DnsView {
            observed: self.observed,
            servers: self.servers,
            zones: self.zones,
            records: self.records,
            checks: self.checks.into_iter().map(f).collect(),
        }
    }
}

/// One server: `{name, side, zones, state, ok}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DnsServerRow {
    /// The `DNSServer`'s or `DNSExternalServer`'s name.
    pub name: String,
    /// Local (a `DNSServer`) or remote (a `DNSExternalServer`).
    pub side: Side,
    /// How many zones are on it.
    pub zones: usize,
    /// Its state as a phrase: a local one's unit and `named.conf` (`unit running, named.conf in
    /// place`), then whether its zones could be read (`zones readable`, `unreadable: <zone>
    /// (<reason>), …`); `no zones` for a remote one without any.
    pub state: String,
    /// Nothing is wrong.
    pub ok: bool,
}

/// One zone on one server: `{side, server, zone, declared, owned, foreign, drifted, missing,
/// unowned, undeclared, unreadable, serial, secondaries, state, ok}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DnsZoneRow {
    /// Local or remote.
    pub side: Side,
    /// The server's name.
    pub server: String,
    /// The apex, absolute and lowercased (`lab.example.`).
    pub zone: String,
    /// RRsets router.yaml declares in it.
    pub declared: usize,
    /// Of those, the RRsets in the ledger.
    pub owned: usize,
    /// RRsets on the server in neither router.yaml nor the ledger (left alone, not wrong).
    pub foreign: usize,
    /// Owned RRsets the server holds otherwise.
    pub drifted: usize,
    /// Declared RRsets not on the server.
    pub missing: usize,
    /// Declared RRsets on the server but not in the ledger.
    pub unowned: usize,
    /// Ledger RRsets declared no more.
    pub undeclared: usize,
    /// Why the zone could not be read, when it could not (`null` in JSON when it could).
    pub unreadable: Option<String>,
    /// The SOA serial the server serves, when known (the `DNSZone`'s status, `servers[]`).
    #[serde(default)]
    pub serial: Option<u32>,
    /// The secondaries the server notifies, with what each serves of the zone.
    #[serde(default)]
    pub secondaries: Vec<DnsSecondaryRow>,
    /// `OK`, `unreadable: <reason>`, or what is wrong: the zone's clause on a local server
    /// (`zone not configured`, `zone refused: <error>`) and the counts that are not zero
    /// (`2 drifted, 1 missing`).
    pub state: String,
    /// Nothing is wrong: the state is `OK`.
    pub ok: bool,
}

/// A secondary of a zone's server: `{address, serial, inSync}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DnsSecondaryRow {
    /// As BIND writes it: `192.0.2.53#53`.
    pub address: String,
    /// Its serial of the zone; `None` when it did not answer for it.
    pub serial: Option<u32>,
    /// Whether it serves the primary's serial.
    pub in_sync: bool,
}

/// One RRset: `{side, server, zone, owner, type, ttl, rdata, resource, foreign, owned, state,
/// detail}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DnsRecordRow {
    /// Local or remote.
    pub side: Side,
    /// The server's name.
    pub server: String,
    /// The zone apex, absolute and lowercased (`lab.example.`).
    pub zone: String,
    /// The owner name, absolute and lowercased, inside the zone (`www.lab.example.`).
    pub owner: String,
    /// The type (`A`, `MX`); `type` in JSON.
    #[serde(rename = "type")]
    pub rtype: String,
    /// The TTL, when known: as routerd wrote or declares it, or a foreign RRset's as read.
    pub ttl: Option<u64>,
    /// The records' data in presentation format, when known (`192.0.2.10`, `"v=spf1 -all"`).
    pub rdata: Vec<String>,
    /// The declaring resource (`apiVersion/kind/name`); for an undeclared RRset the ledger's
    /// owner; empty for a foreign one.
    pub resource: String,
    /// The state is [`RecordState::Foreign`] (made outside router.yaml, left alone): the flag
    /// a filter of the JSON looks for.
    pub foreign: bool,
    /// In the ledger.
    pub owned: bool,
    /// Where it stands.
    pub state: RecordState,
    /// Why: the server's differing values (`the server has ttl 60`), the reason its zone could
    /// not be read, what the reconcile does with an undeclared one, a failed operation
    /// (`failed: <error>`); empty when there is nothing to say.
    pub detail: String,
}

impl DnsRecordRow {
    /// The owner relative to its zone, as a zone file writes it: `www`, `@` for the apex.
    pub fn relative_owner(&self) -> String {
        if self.owner == self.zone {
            return "@".into();
        }
        let suffix = if self.zone == "." { "." } else { &self.zone };
        self.owner
            .strip_suffix(suffix)
            .map(|o| o.trim_end_matches('.').to_owned())
            .unwrap_or_else(|| self.owner.clone())
    }

    /// The declaring resource as `kind/name` (the group is implied by the kind); empty for a
    /// foreign RRset.
    pub fn short_resource(&self) -> &str {
        self.resource.splitn(3, '/').nth(2).unwrap_or(&self.resource)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(zone: &str, owner: &str) -> DnsRecordRow {
        DnsRecordRow {
            side: Side::Local,
            server: "auth".into(),
            zone: zone.into(),
            owner: owner.into(),
            rtype: "A".into(),
            ttl: None,
            rdata: Vec::new(),
            resource: "net.routerd.net/v1alpha1/ARecord/www".into(),
            foreign: false,
            owned: true,
            state: RecordState::InSync,
            detail: String::new(),
        }
    }

    #[test]
    fn owners_are_written_relative_to_their_zone() {
        assert_eq!(record("lab.example.", "www.lab.example.").relative_owner(), "www");
        assert_eq!(record("corp.example.", "corp.example.").relative_owner(), "@");
        let deep = record("example.", "_ldap._tcp.dc.example.");
        assert_eq!(deep.relative_owner(), "_ldap._tcp.dc");
        assert_eq!(record(".", "example.").relative_owner(), "example");
        assert_eq!(record(".", ".").relative_owner(), "@");
    }

    #[test]
    fn resources_are_shown_without_their_group() {
        let mut row = record("lab.example.", "www.lab.example.");
        assert_eq!(row.short_resource(), "ARecord/www");
        row.resource = String::new();
        assert_eq!(row.short_resource(), "");
    }

    #[test]
    fn the_json_uses_the_words_and_the_documented_keys() {
        for (state, word) in [
            (RecordState::InSync, "in-sync"),
            (RecordState::Drift, "drift"),
            (RecordState::Unobserved, "unobserved"),
            (RecordState::Missing, "missing"),
            (RecordState::Unowned, "unowned"),
            (RecordState::Foreign, "foreign"),
            (RecordState::Undeclared, "undeclared"),
        ] {
            assert_eq!(serde_json::to_value(state).expect("serializes"), word);
            assert_eq!(state.as_str(), word);
        }
        for side in [Side::Local, Side::Remote] {
            assert_eq!(serde_json::to_value(side).expect("serializes"), side.as_str());
        }
        let row = record("lab.example.", "www.lab.example.");
        let json = serde_json::to_value(&row).expect("serializes");
        let mut keys: Vec<&str> =
            json.as_object().expect("an object").keys().map(String::as_str).collect();
        keys.sort_unstable();
        let mut expected = [
            "side", "server", "zone", "owner", "type", "ttl", "rdata", "resource", "foreign",
            "owned", "state", "detail",
        ];
        expected.sort_unstable();
        assert_eq!(keys, expected);
        assert_eq!(json["ttl"], serde_json::Value::Null);
        let back: DnsRecordRow = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, row);
        let view: DnsView = serde_json::from_str(
            r#"{"observed": false, "servers": [], "zones": [],
                "records": [], "checks": []}"#,
        )
        .expect("an empty view");
        assert_eq!(view, DnsView::default());
    }
}
