//! The artifact kinds of the DNS controller and their attributes (design brief
//! `dns-bind9.md` §1, ADR 0012):
//!
//! | kind | name | applyWith | what |
//! |---|---|---|---|
//! | `bind.config` | `key/<key>` | `bind` | a TSIG key file, BIND `key` clause, mode 0600 |
//! | `bind.config` | `<server>/options` | `bind` | a server's routerd `named.conf` |
//! | `bind.zone` | `<server>/<zone>.` | `bind` | a `zone` clause of the server's `zones.conf` |
//! | `dns.rrset` | `local:<server>/<zone>./<owner>./<TYPE>` | `dns` | one RRset, RFC 2136 |
//! | `dns.rrset` | `remote:<external>/<zone>./<owner>./<TYPE>` | `dns` | the same on a remote primary |
//!
//! Where the `dns` family sends its UPDATEs is a block of routerd's endpoint file
//! ([`ENDPOINTS_FILE`], a built-in `file` artifact): `address`, `key` lines per server.

use std::fmt;

use hickory_proto::rr::{Name, RData, RecordType};
use routerd_host::kinds::Diffs;
use routerd_host::kinds::external::{ExternalArtifactKind, ExternalArtifactType};
use routerd_host::secret::Secret;
use serde::{Deserialize, Serialize};

/// Where the TSIG key files live, one `<key>.key` per `DNSTSIGKey` (BIND `key` clause, mode
/// 0600, readable by `nsupdate -k` too).
pub const KEY_DIR: &str = "/etc/routerd/dns/keys";
/// Where each `DNSServer`'s configuration lives: `<dir>/<server>/named.conf` and `zones.conf`.
pub const CONF_DIR: &str = "/etc/routerd/dns/servers";
/// Where each `DNSServer` keeps its zone files and journals: `<dir>/<server>/`.
pub const DATA_DIR: &str = "/var/lib/routerd/dns";
/// The endpoint file of the `dns` family: one block per server it sends UPDATEs to.
pub const ENDPOINTS_FILE: &str = "/etc/routerd/dns/endpoints.conf";

/// A TSIG algorithm BIND and hickory both support (RFC 8945 §6; hickory signs only the
/// SHA-2 family, so HMAC-MD5 and HMAC-SHA1 are refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum TsigAlgorithm {
    /// `hmac-sha256`, the default.
    #[default]
    #[serde(rename = "hmac-sha256")]
    HmacSha256,
    /// `hmac-sha384`.
    #[serde(rename = "hmac-sha384")]
    HmacSha384,
    /// `hmac-sha512`.
    #[serde(rename = "hmac-sha512")]
    HmacSha512,
}

impl TsigAlgorithm {
    /// The name BIND writes (`hmac-sha256`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::HmacSha256 => "hmac-sha256",
            Self::HmacSha384 => "hmac-sha384",
            Self::HmacSha512 => "hmac-sha512",
        }
    }

    /// The algorithm named `name` as BIND writes it (case-insensitive).
    pub fn parse(name: &str) -> Option<Self> {
        [Self::HmacSha256, Self::HmacSha384, Self::HmacSha512]
            .into_iter()
            .find(|a| a.as_str().eq_ignore_ascii_case(name.trim_end_matches('.')))
    }
}

impl fmt::Display for TsigAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a TSIG key's secret comes from. Only a digest of an inline secret is ever serialised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum KeySecret {
    /// Written in router.yaml (`secret:`), base64; shown as its digest.
    Inline(Secret),
    /// Read from this file (`secretFile:`, base64) when the key file is written.
    File(String),
    /// Made by routerd once (`generate: true`) and kept in the key file from then on.
    Generated,
}

/// Attributes of a `bind.config` artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "section")]
pub enum BindConfig {
    /// `key/<key>`: the key file `KEY_DIR/<key>.key`, `key "<key>" { algorithm …; secret …; };`.
    Key {
        /// Its algorithm.
        algorithm: TsigAlgorithm,
        /// Its secret.
        secret: KeySecret,
    },
    /// `<server>/options`: the server's whole routerd `named.conf` (options, controls,
    /// statistics channel, key includes, `include "zones.conf"`).
    Server {
        /// The file's text.
        text: String,
    },
}

impl ExternalArtifactType for BindConfig {
    fn drift(&self, observed: &Self, diffs: &mut Diffs) {
        match (self, observed) {
            (
                Self::Key { algorithm, secret },
                Self::Key { algorithm: seen_algorithm, secret: seen_secret },
            ) => {
                diffs.compare("algorithm", algorithm, seen_algorithm);
                // A generated secret is whatever the file holds.
                if *secret != KeySecret::Generated {
                    diffs.compare("secret", secret, seen_secret);
                }
            }
            (Self::Server { text }, Self::Server { text: seen }) => {
                diffs.compare("text", text, seen);
            }
            _ => diffs.compare("section", &section_name(self), &section_name(observed)),
        }
    }
}

fn section_name(config: &BindConfig) -> &'static str {
    match config {
        BindConfig::Key { .. } => "key",
        BindConfig::Server { .. } => "server",
    }
}

/// Attributes of a `bind.zone` artifact: a zone clause of routerd's `zones.conf`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BindZone {
    /// The `zone "…" { … };` clause, as written in `zones.conf`.
    pub clause: String,
    /// The zone file written when the clause is added and no file exists yet (SOA, apex NS and
    /// their glue, RFC 1035 §5 master file format). Never compared: from then on BIND owns the
    /// file and its journal, and routerd changes the zone by UPDATE only.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub seed: String,
    /// Observed only (`rndc zonestatus`): whether named has the zone loaded; `None` when its
    /// control channel did not answer (named stopped) or not asked. Never compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded: Option<bool>,
    /// Observed only: the SOA serial named serves, when loaded. Never compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<u32>,
    /// Observed only: the serial each secondary the server notifies serves (asked by SOA
    /// query), in `named.conf`'s order. Never compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secondaries: Vec<SecondarySerial>,
}

/// What one secondary serves of a zone (observed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecondarySerial {
    /// The secondary, as BIND writes it: `192.0.2.53#53`.
    pub address: String,
    /// Its serial of the zone; `None` when it did not answer with authority (not
    /// transferred yet, or unreachable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<u32>,
}

/// The zone file of `zone` (absolute, `lab.example.`) in its server's data directory:
/// `lab.example.zone`, its journal `lab.example.zone.jnl` beside it.
pub fn zone_file_name(zone: &Name) -> String {
    let apex = zone.to_lowercase().to_ascii();
    format!("{}.zone", apex.trim_end_matches('.'))
}

impl ExternalArtifactType for BindZone {
    fn drift(&self, observed: &Self, diffs: &mut Diffs) {
        diffs.compare("clause", &self.clause, &observed.clause);
    }
}

/// Attributes of a `dns.rrset` artifact: one whole RRset (RFC 2181 §5), the unit one
/// resource owns and one UPDATE replaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RRset {
    /// The TTL in seconds (RFC 2181 §8: 0 to 2^31 - 1).
    pub ttl: u32,
    /// The records' data in presentation format (RFC 1035 §5.1) as hickory prints it, sorted
    /// and without duplicates: `192.0.2.10`, `10 mail.lab.example.`.
    pub rdata: Vec<String>,
    /// Observed only: the zone could not be read, and why (`ServerUnreachable: …`). The
    /// RRset's state is unknown: it differs from any desired one, so the engine tries again
    /// rather than believe it absent, and the ledger keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unobserved: Option<String>,
}

impl RRset {
    /// The RRset of `ttl` and `rdata`, put in canonical order.
    pub fn new(ttl: u32, rdata: impl IntoIterator<Item = RData>) -> Self {
        let mut rdata: Vec<String> = rdata.into_iter().map(|r| presentation(&r)).collect();
        rdata.sort();
        rdata.dedup();
        Self { ttl, rdata, unobserved: None }
    }

    /// The records' data typed as `rtype`.
    ///
    /// Errors: an entry that does not parse as `rtype` (a ledger row written by hand).
    pub fn records(&self, rtype: RecordType) -> Result<Vec<RData>, String> {
        self.rdata
            .iter()
            .map(|text| {
                RData::try_from_str(rtype, text).map_err(|e| format!("{rtype} {text:?}: {e}"))
            })
            .collect()
    }
}

impl ExternalArtifactType for RRset {
    fn drift(&self, observed: &Self, diffs: &mut Diffs) {
        if observed.unobserved.is_some() {
            diffs.compare("unobserved", &self.unobserved, &observed.unobserved);
            return;
        }
        diffs.compare("ttl", &self.ttl, &observed.ttl);
        diffs.compare("rdata", &self.rdata, &observed.rdata);
    }
}

/// `rdata` in presentation format (RFC 1035 §5.1), read back by [`RData::try_from_str`]: as
/// hickory prints it, except TXT, which hickory prints as its strings run together; here each
/// character-string is quoted, `"` and `\\` escaped, control characters as `\\DDD`. UTF-8
/// stays as it is (hickory's lexer reads `\\DDD` as a character, not a byte); a string that is
/// not UTF-8 (a foreign record) is written byte by byte as `\\DDD`, for display only.
pub fn presentation(rdata: &RData) -> String {
    let RData::TXT(txt) = rdata else { return rdata.to_string() };
    let mut out = String::new();
    for (i, chunk) in txt.txt_data.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push('"');
        match std::str::from_utf8(chunk) {
            Ok(text) => {
                for c in text.chars() {
                    match c {
                        '"' | '\\' => {
                            out.push('\\');
                            out.push(c);
                        }
                        c if c.is_ascii_control() => {
                            out.push_str(&format!("\\{:03}", u32::from(c)))
                        }
                        c => out.push(c),
                    }
                }
            }
            Err(_) => {
                for b in chunk.iter() {
                    out.push_str(&format!("\\{b:03}"));
                }
            }
        }
        out.push('"');
    }
    out
}

/// Which server a `dns.rrset` is published on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// A `DNSServer` the router runs.
    Local,
    /// A `DNSExternalServer`.
    Remote,
}

/// The parts of a `dns.rrset` name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RRsetName {
    /// Local or remote.
    pub side: Side,
    /// The `DNSServer` or `DNSExternalServer` name.
    pub server: String,
    /// The zone apex, absolute.
    pub zone: Name,
    /// The owner name, absolute, inside the zone.
    pub owner: Name,
    /// The type.
    pub rtype: RecordType,
}

impl RRsetName {
    /// The artifact name: `local:auth/lab.example./www.lab.example./A`. Names are lowercased
    /// (RFC 4343: DNS names compare case-insensitively).
    pub fn key_name(&self) -> String {
        let side = match self.side {
            Side::Local => "local",
            Side::Remote => "remote",
        };
        format!(
            "{side}:{}/{}/{}/{}",
            self.server,
            self.zone.to_lowercase(),
            self.owner.to_lowercase(),
            self.rtype
        )
    }

    /// The parts of the artifact name `name`, if it is one.
    pub fn parse(name: &str) -> Option<Self> {
        let parts = RRsetNameParts::split(name)?;
        let zone = parts.zone()?;
        let owner = Name::from_ascii(parts.owner).ok()?;
        let rtype: RecordType = parts.rtype.parse().ok()?;
        (owner.is_fqdn() && zone.zone_of(&owner)).then_some(Self {
            side: parts.side,
            server: parts.server.to_owned(),
            zone,
            owner,
            rtype,
        })
    }
}

/// A `dns.rrset` name cut where [`RRsetName::parse`] cuts it, nothing parsed yet: the RRsets
/// of one zone share [`RRsetNameParts::zone_prefix`], so a caller with many names parses
/// each zone once ([`RRsetNameParts::zone`]) and checks the rest of each name against it
/// ([`RRsetNameParts::parses_in`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RRsetNameParts<'a> {
    /// Local or remote.
    pub side: Side,
    /// `<side>:<server>/<zone>/`, as written in the name.
    pub zone_prefix: &'a str,
    /// The server, not empty.
    pub server: &'a str,
    /// The zone's text.
    pub zone: &'a str,
    /// The owner's text.
    pub owner: &'a str,
    /// The type's text: the rest of the name.
    pub rtype: &'a str,
}

impl<'a> RRsetNameParts<'a> {
    /// The parts of `name`; `None` when [`RRsetName::parse`] fails before it reads a part
    /// (another side, no server, a part missing).
    pub fn split(name: &'a str) -> Option<Self> {
        let (side_word, rest) = name.split_once(':')?;
        let side = match side_word {
            "local" => Side::Local,
            "remote" => Side::Remote,
            _ => return None,
        };
        let mut parts = rest.splitn(4, '/');
        let server = parts.next().filter(|s| !s.is_empty())?;
        let zone = parts.next()?;
        let owner = parts.next()?;
        let rtype = parts.next()?;
        let prefix_len = side_word.len() + server.len() + zone.len() + 3;
        Some(Self { side, zone_prefix: name.get(..prefix_len)?, server, zone, owner, rtype })
    }

    /// The zone, as [`RRsetName::parse`] reads it; `None` when no name of this prefix parses
    /// (not a name, or not absolute).
    pub fn zone(&self) -> Option<Name> {
        Name::from_ascii(self.zone).ok().filter(Name::is_fqdn)
    }

    /// Whether [`RRsetName::parse`] reads the whole name, `zone` being [`RRsetNameParts::zone`]
    /// of the same prefix: the type parses, and the owner is an absolute name inside the zone.
    pub fn parses_in(&self, zone: &Name) -> bool {
        self.rtype.parse::<RecordType>().is_ok()
            && Name::from_ascii(self.owner)
                .is_ok_and(|owner| owner.is_fqdn() && zone.zone_of(&owner))
    }
}

/// `bind.config`, applied by the `bind` family.
pub static BIND_CONFIG: ExternalArtifactKind =
    ExternalArtifactKind::of::<BindConfig>("bind.config", "bind");
/// `bind.zone`, applied by the `bind` family.
pub static BIND_ZONE: ExternalArtifactKind =
    ExternalArtifactKind::of::<BindZone>("bind.zone", "bind").report_unrecorded();
/// `dns.rrset`, applied by the `dns` family.
pub static DNS_RRSET: ExternalArtifactKind = ExternalArtifactKind::of::<RRset>("dns.rrset", "dns")
    .report_unrecorded()
    .unowned_kept_if(is_remote)
    .goes_with(local_zone_of);

/// Attributes of a `dns.remoteZone` artifact (observe only): a zone on a remote primary,
/// named `remote:<external server>/<zone>.`. Absent when the primary does not serve it
/// (NOTAUTH): the zone's RRsets then wait for it instead of failing one by one. Never
/// created, changed or deleted: the zone itself is the primary's (ADR 0002).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteZone {
    /// Observed only: the SOA serial the primary serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<u32>,
    /// Observed only: why its SOA could not be read (`TsigBadKey: …`, `ServerUnreachable: …`).
    /// The zone counts as present, so its RRsets are tried and fail with the same reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

impl ExternalArtifactType for RemoteZone {
    fn drift(&self, _observed: &Self, _diffs: &mut Diffs) {}
}

/// The `dns.remoteZone` kind: observed, kept whatever the ledger says.
pub static DNS_REMOTE_ZONE: ExternalArtifactKind =
    ExternalArtifactKind::of::<RemoteZone>("dns.remoteZone", "dns").keep_orphans();

/// The `dns.remoteZone` name of `zone` on external server `server`:
/// `remote:<server>/<zone>.`.
pub fn remote_zone_name(server: &str, zone: &Name) -> String {
    format!("remote:{server}/{}", zone.to_lowercase())
}

/// Whether the `dns.rrset` named `name` is on a remote primary (`remote:…`): there an RRset
/// the ledger does not hold that differs from the config is someone else's, a `Conflict`
/// until the config matches it and it is adopted (design brief §3). In a local zone a
/// declared RRset is routerd's and differing data is drift.
fn is_remote(name: &str) -> bool {
    name.starts_with("remote:")
}

/// The `bind.zone` an RRset of a local zone goes with (`local:auth/lab.example./…` →
/// `auth/lab.example.`): the zone's section removed, named no longer serves any of its RRsets,
/// so they leave the ledger with it, without an UPDATE each (issue 36 §2, the graph's
/// `cascade`). An RRset on a remote primary goes with nothing: the zone is the primary's.
fn local_zone_of(name: &str) -> Option<(&'static ExternalArtifactKind, String)> {
    let parts = RRsetNameParts::split(name).filter(|p| p.side == Side::Local)?;
    Some((&BIND_ZONE, format!("{}/{}", parts.server, parts.zone.to_ascii_lowercase())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rrset_names_round_trip_lowercased() {
        let name = RRsetName {
            side: Side::Local,
            server: "auth".into(),
            zone: Name::from_ascii("Lab.Example.").expect("valid in the test"),
            owner: Name::from_ascii("WWW.lab.example.").expect("valid in the test"),
            rtype: RecordType::A,
        };
        let key = name.key_name();
        assert_eq!(key, "local:auth/lab.example./www.lab.example./A");
        let back = RRsetName::parse(&key).expect("valid in the test");
        assert_eq!(back.key_name(), key);
        assert_eq!(RRsetName::parse("local:auth/lab.example./www.other./A"), None);
        assert_eq!(RRsetName::parse("elsewhere:auth/a./a./A"), None);
        assert_eq!(RRsetName::parse("local:/lab.example./www.lab.example./A"), None, "no server");
    }

    #[test]
    fn a_local_rrset_goes_with_its_zone_a_remote_one_with_nothing() {
        let zone = |name: &str| local_zone_of(name).map(|(kind, parent)| (kind.as_str(), parent));
        assert_eq!(
            zone("local:auth/lab.example./www.lab.example./A"),
            Some(("bind.zone", "auth/lab.example.".to_owned()))
        );
        assert_eq!(zone("remote:ext/lab.example./www.lab.example./A"), None);
        assert_eq!(zone("local:auth"), None);
    }

    #[test]
    fn rrset_rdata_is_canonical_and_types_back() {
        let a = |s: &str| RData::try_from_str(RecordType::A, s).expect("valid in the test");
        let set = RRset::new(300, [a("192.0.2.11"), a("192.0.2.10"), a("192.0.2.11")]);
        assert_eq!(set.rdata, ["192.0.2.10", "192.0.2.11"]);
        assert_eq!(set.records(RecordType::A).expect("valid in the test").len(), 2);
        let mx =
            RData::try_from_str(RecordType::MX, "10 mail.lab.example.").expect("valid in the test");
        assert_eq!(RRset::new(60, [mx]).rdata, ["10 mail.lab.example."]);
    }

    #[test]
    fn txt_presentation_reads_back_string_by_string() {
        let txt = crate::kinds::records::txt(&format!("say \"hi\" \\ ü {}", "x".repeat(300)));
        let text = presentation(&RData::TXT(txt.clone()));
        assert!(text.starts_with("\"say \\\"hi\\\" \\\\ ü xxx"), "{text}");
        let back = RData::try_from_str(RecordType::TXT, &text).expect("valid in the test");
        assert_eq!(back, RData::TXT(txt));
    }

    #[test]
    fn tsig_algorithms_parse_as_bind_writes_them() {
        assert_eq!(TsigAlgorithm::parse("HMAC-SHA256"), Some(TsigAlgorithm::HmacSha256));
        assert_eq!(TsigAlgorithm::parse("hmac-sha512."), Some(TsigAlgorithm::HmacSha512));
        assert_eq!(TsigAlgorithm::parse("hmac-md5"), None);
    }
}
