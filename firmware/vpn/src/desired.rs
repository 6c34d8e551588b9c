//! The desired state of one NetBird account: seed 002's `netbird.json` ("State File Format"),
//! read unchanged, every object named by its map key and every reference by name, never by
//! NetBird ID. [`parse`] reads and validates it. No I/O.
//!
//! Unknown fields are refused everywhere: a misspelt `"enabeld"` must not silently fall back
//! to a default. Maps keep their keys sorted, so everything built from them is deterministic.

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;

use ipnet::IpNet;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use routerd_model::{Located, LocatedProblem};

use crate::error::{Location, NetbirdStateError, NetbirdStateErrors};
use crate::validate;

/// The whole `netbird.json`: one NetBird account's groups, setup keys, policies, routes and
/// DNS. A section left out means "none".
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetbirdState {
    /// Groups by name.
    #[serde(default)]
    pub groups: BTreeMap<String, Group>,
    /// Setup keys by name; a key's name is also the hostname its peer gets (seed 002,
    /// "Conventions").
    #[serde(default)]
    pub setup_keys: BTreeMap<String, SetupKey>,
    /// Access policies by name.
    #[serde(default)]
    pub policies: BTreeMap<String, Policy>,
    /// Network routes by `network_id` (the API's field, at most 40 characters).
    #[serde(default)]
    pub routes: BTreeMap<String, Route>,
    /// DNS settings.
    #[serde(default)]
    pub dns: Dns,
}

/// A group of peers (`groups.<name>`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    /// Members, named by their setup key (which becomes the peer's hostname once it enrolls);
    /// absent means none. Peers not enrolled yet are left out of the API request.
    #[serde(default)]
    pub peers: Vec<String>,
}

/// A setup key (`setup_keys.<name>`). NetBird can change only `auto_groups` (and `revoked`)
/// of an existing key; everything else is fixed when it is created (brief §1).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetupKey {
    /// `type`: `one-off` or `reusable`.
    #[serde(rename = "type")]
    pub key_type: SetupKeyType,
    /// Validity in seconds, 86400..=31536000 (1 to 365 days); used only when creating.
    pub expires_in: u64,
    /// How many peers may enroll with it; 0 is unlimited; a one-off key allows 0 or 1.
    pub usage_limit: u32,
    /// Group names every peer enrolling with the key joins.
    pub auto_groups: Vec<String>,
    /// Ours, not the API's: whether its peer has enrolled (seed 002 "Conventions"); the
    /// reconciler sets it to true after renaming the peer.
    pub enrolled: bool,
    /// Peers enrolled with it are removed when offline; absent leaves the API's default (false).
    pub ephemeral: Option<bool>,
    /// Peers may add extra DNS labels; absent leaves the API's default (false).
    pub allow_extra_dns_labels: Option<bool>,
}

/// How often a setup key may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SetupKeyType {
    /// `one-off`: one enrollment.
    #[serde(rename = "one-off")]
    OneOff,
    /// `reusable`: up to `usage_limit` enrollments (0 = unlimited).
    #[serde(rename = "reusable")]
    Reusable,
}

/// An access policy (`policies.<name>`): flat in the seed, one rule in the API.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Free text.
    pub description: String,
    /// Whether NetBird enforces it.
    pub enabled: bool,
    /// Group names traffic comes from.
    pub sources: Vec<String>,
    /// Group names traffic goes to.
    pub destinations: Vec<String>,
    /// Whether destinations may also open connections to sources.
    pub bidirectional: bool,
    /// Protocol, any case (the seed writes `"ALL"`).
    pub protocol: Protocol,
    /// Destination ports as strings, each 1..=65535, as the API writes them; absent means
    /// all ports.
    pub ports: Option<Vec<String>>,
}

/// The protocol a policy allows. Read in any case; written lower-case, as the API wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// `all`.
    All,
    /// `tcp`.
    Tcp,
    /// `udp`.
    Udp,
    /// `icmp`.
    Icmp,
    /// `netbird-ssh`.
    NetbirdSsh,
}

/// A network route (`routes.<network_id>`).
///
/// Exactly one of `network` and `domains`, exactly one of `peer` and `peer_groups`; `groups`
/// is required although the seed's example omits it (NetBird's API requires it).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// Free text.
    pub description: String,
    /// The routed network, a CIDR such as `192.168.1.0/24`.
    pub network: Option<IpNet>,
    /// Or the routed domains.
    pub domains: Option<Vec<String>>,
    /// The routing peer, named by its setup key.
    pub peer: Option<String>,
    /// Or the groups whose peers route (names).
    pub peer_groups: Option<Vec<String>>,
    /// Distribution groups (names): the groups that receive the route. Required; absent reads
    /// as empty and is refused by validation.
    #[serde(default)]
    pub groups: Vec<String>,
    /// Whether the route is active.
    pub enabled: bool,
    /// Route metric, 1..=9999, lower wins; absent means 9999 (brief §1).
    pub metric: Option<u32>,
    /// Whether routing peers masquerade; absent means true (brief §1).
    pub masquerade: Option<bool>,
    /// Whether clients keep the route's addresses when it is withdrawn; absent means true
    /// (brief §1).
    pub keep_route: Option<bool>,
}

/// DNS settings (`dns`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dns {
    /// Nameserver groups by name.
    #[serde(default)]
    pub nameserver_groups: BTreeMap<String, NameserverGroup>,
}

/// A nameserver group (`dns.nameserver_groups.<name>`), with the API's fields (all required).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NameserverGroup {
    /// Free text.
    pub description: String,
    /// The nameservers.
    pub nameservers: Vec<Nameserver>,
    /// Whether peers use it.
    pub enabled: bool,
    /// Group names whose peers use it.
    pub groups: Vec<String>,
    /// Whether it resolves every domain; true exactly when `domains` is empty.
    pub primary: bool,
    /// Match domains of a non-primary group.
    pub domains: Vec<String>,
    /// Whether the match domains are also search domains.
    pub search_domains_enabled: bool,
}

/// One nameserver, as in the API (`Nameserver`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nameserver {
    /// Its address.
    pub ip: IpAddr,
    /// Transport: `udp`.
    pub ns_type: NameserverType,
    /// Its port, usually 53.
    pub port: u16,
}

/// A nameserver's transport; the API knows only `udp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NameserverType {
    /// `udp`.
    #[serde(rename = "udp")]
    Udp,
}

impl Protocol {
    /// Every protocol, in the API's order.
    pub const VALUES: [Protocol; 5] =
        [Protocol::All, Protocol::Tcp, Protocol::Udp, Protocol::Icmp, Protocol::NetbirdSsh];

    /// The API's word: lower-case.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::All => "all",
            Protocol::Tcp => "tcp",
            Protocol::Udp => "udp",
            Protocol::Icmp => "icmp",
            Protocol::NetbirdSsh => "netbird-ssh",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Protocol {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Protocol {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let word = String::deserialize(deserializer)?;
        Protocol::VALUES.into_iter().find(|p| p.as_str().eq_ignore_ascii_case(&word)).ok_or_else(
            || {
                serde::de::Error::custom(format_args!(
                    "unknown protocol `{word}`, expected all, tcp, udp, icmp or netbird-ssh \
                     (any case)"
                ))
            },
        )
    }
}

/// Reads and validates `netbird.json`; `file` names it in errors.
///
/// Errors: a syntax or type error (unknown field, wrong type, missing field) or the first
/// duplicate key alone, at `file:line:column` with its JSON path; otherwise every semantic error
/// (undefined groups, the API's limits on keys, routes and nameserver groups), each at its path
/// and location, ordered by position. Syntax is serde_json's; locations and duplicate keys are
/// [`routerd_model::locate_json`]'s (where it refuses JSON that serde_json accepts, such as a
/// `\ud83d\ude00` surrogate pair escape, errors come without a location).
/// Side effects: none. Never panics.
pub fn parse(text: &str, file: &str) -> Result<NetbirdState, NetbirdStateErrors> {
    let state = read(text, file)?;
    let errors = match routerd_model::locate_json(text) {
        Ok(located) => validate::check(&state, Some(&located), file),
        Err(problems) if problems.iter().any(|p| p.duplicate_key) => duplicates(problems, file),
        // JSON read as YAML 1.2 that saphyr refuses: validate all the same, without locations.
        Err(_) => validate::check(&state, None, file),
    };
    if errors.is_empty() { Ok(state) } else { Err(NetbirdStateErrors(errors)) }
}

/// The duplicate keys among `problems`: serde_json keeps the last value of a repeated key,
/// silently, so one is refused like a syntax error, alone.
fn duplicates(problems: Vec<LocatedProblem>, file: &str) -> Vec<NetbirdStateError> {
    problems
        .into_iter()
        .filter(|p| p.duplicate_key)
        .map(|p| NetbirdStateError {
            file: file.to_owned(),
            location: Some(p.location.into()),
            path: p.path,
            message: "duplicate key: only the last one would count".to_owned(),
        })
        .collect()
}

/// Deserializes `text`, turning the first serde error into a located one.
fn read(text: &str, file: &str) -> Result<NetbirdState, NetbirdStateErrors> {
    let mut de = serde_json::Deserializer::from_str(text);
    let state = serde_path_to_error::deserialize(&mut de).map_err(|err| {
        let path = routerd_model::join_path("", err.path());
        serde_error(text, file, path, err.inner())
    })?;
    de.end().map_err(|err| serde_error(text, file, String::new(), &err))?;
    Ok(state)
}

/// A serde_json error, located: a syntax error where serde_json stopped; a data error (wrong
/// type, unknown or missing field) at the start of the value or key it is about, since
/// serde_json reports the position after it.
fn serde_error(
    text: &str,
    file: &str,
    path: String,
    err: &serde_json::Error,
) -> NetbirdStateErrors {
    let mut message = err.to_string();
    if let Some(cut) = message.rfind(" at line ") {
        message.truncate(cut);
    }
    let stopped =
        (err.line() > 0).then(|| Location { line: err.line(), column: err.column().max(1) });
    let location = if err.classify() == serde_json::error::Category::Data {
        let located = routerd_model::locate_json(text).ok();
        let about = located.map(|located: Located| {
            if message.starts_with("unknown field") || message.starts_with("missing field") {
                located.key_location(&path)
            } else {
                located.value_location(&path)
            }
        });
        about.map(Location::from).or(stopped)
    } else {
        stopped
    };
    NetbirdStateErrors(vec![NetbirdStateError { file: file.to_owned(), location, path, message }])
}
