//! Request bodies of NetBird's management API v0.77.1 (`shared/management/http/api/openapi.yml`
//! at tag v0.77.1; brief §1 table) and the mapping of each desired object onto its body.
//!
//! The desired state names everything; the API wants IDs. Names resolve through a
//! [`Resolve`] at execution time, after the creates they depend on returned their IDs (brief
//! §1, "Where the seed differs from the API", 1). A name without an ID is a [`ResolveError`].
//! The mapping trusts a state [`crate::parse`] accepted: it sends what is there and adds the
//! defaults below. No I/O.

use std::fmt;

use ipnet::IpNet;
use serde::Serialize;

use crate::desired::{
    Group, Nameserver, NameserverGroup, Policy, Protocol, Route, SetupKey, SetupKeyType,
};
use crate::error::{child_index, child_key};

/// Route metric when `metric` is absent: the lowest priority (brief §1, "Where the seed
/// differs", 3).
pub const DEFAULT_METRIC: u32 = 9999;
/// Route `masquerade` when absent (brief §1, "Where the seed differs", 3).
pub const DEFAULT_MASQUERADE: bool = true;
/// Route `keep_route` when absent (brief §1, "Where the seed differs", 3).
pub const DEFAULT_KEEP_ROUTE: bool = true;

/// The kinds of NetBird object a name can stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A group.
    Group,
    /// A setup key.
    SetupKey,
    /// A peer, named by its setup key (its hostname once enrolled).
    Peer,
    /// A policy.
    Policy,
    /// A route.
    Route,
    /// A nameserver group.
    NameserverGroup,
}

/// Looks up the NetBird ID of the object of `kind` named `name`; `None` if it has none (yet).
///
/// Implemented for every `Fn(Kind, &str) -> Option<String>`.
pub trait Resolve {
    /// The ID, or `None`.
    fn id(&self, kind: Kind, name: &str) -> Option<String>;
}

impl<F: Fn(Kind, &str) -> Option<String>> Resolve for F {
    fn id(&self, kind: Kind, name: &str) -> Option<String> {
        self(kind, name)
    }
}

/// A name with no NetBird ID, found at `path` of the desired state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {kind} `{name}` has no NetBird ID yet")]
pub struct ResolveError {
    /// What the name stands for.
    pub kind: Kind,
    /// The name as written.
    pub name: String,
    /// Where, e.g. `policies.pilots-to-gs.sources[0]`.
    pub path: String,
}

/// Body of `POST /api/groups` and `PUT /api/groups/{groupId}`.
///
/// PUT replaces `peers` and `resources` both, so an update must resend the group's current
/// resources (brief §1, Group).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupRequest {
    /// The group's name.
    pub name: String,
    /// Peer IDs.
    pub peers: Vec<String>,
    /// Network resources in the group; `netbird.json` has none of its own.
    pub resources: Vec<Resource>,
}

/// A network resource of a group (`Resource`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resource {
    /// Its ID.
    pub id: String,
    /// Its type.
    #[serde(rename = "type")]
    pub resource_type: ResourceType,
}

/// A network resource's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResourceType {
    /// `host`.
    Host,
    /// `subnet`.
    Subnet,
    /// `domain`.
    Domain,
}

/// A group's request and the peers left out of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMapping {
    /// The body.
    pub request: GroupRequest,
    /// Peers (setup key names) without an ID: not enrolled yet, condition `PeersPending`
    /// (brief §1, "Where the seed differs", 5).
    pub pending: Vec<String>,
}

/// Body of `POST /api/setup-keys`. Fields other than `auto_groups` cannot change afterwards
/// (brief §1, Setup key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SetupKeyCreate {
    /// The key's name.
    pub name: String,
    /// `one-off` or `reusable`.
    #[serde(rename = "type")]
    pub key_type: SetupKeyType,
    /// Validity in seconds, 86400..=31536000.
    pub expires_in: u64,
    /// Group IDs.
    pub auto_groups: Vec<String>,
    /// Uses allowed, 0 = unlimited.
    pub usage_limit: u32,
    /// Sent only when `netbird.json` sets it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ephemeral: Option<bool>,
    /// Sent only when `netbird.json` sets it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_extra_dns_labels: Option<bool>,
}

/// Body of `PUT /api/setup-keys/{keyId}`: the only two fields the API changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SetupKeyUpdate {
    /// Always false: a desired key is a live key (revoking is deleting it from the file).
    pub revoked: bool,
    /// Group IDs.
    pub auto_groups: Vec<String>,
}

/// Body of `POST /api/policies` and `PUT /api/policies/{policyId}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyRequest {
    /// The policy's name.
    pub name: String,
    /// Free text.
    pub description: String,
    /// Whether it is enforced.
    pub enabled: bool,
    /// Exactly one rule, built from the flat seed policy.
    pub rules: Vec<PolicyRule>,
}

/// A policy rule (`PolicyRuleUpdate`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyRule {
    /// The rule's ID, sent on PUT (brief §1, Policy); `None` on POST.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The policy's name.
    pub name: String,
    /// The policy's `enabled`.
    pub enabled: bool,
    /// Always `accept`: seed policies only allow.
    pub action: Action,
    /// As in the policy.
    pub bidirectional: bool,
    /// Lower-case.
    pub protocol: Protocol,
    /// Ports as strings; left out when the policy has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<String>>,
    /// Group IDs.
    pub sources: Vec<String>,
    /// Group IDs.
    pub destinations: Vec<String>,
}

/// What a rule does with matching traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// `accept`.
    Accept,
    /// `drop`.
    Drop,
}

/// Body of `POST /api/routes` and `PUT /api/routes/{routeId}`.
///
/// Exactly one of `peer` and `peer_groups`, and of `network` and `domains`, is sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RouteRequest {
    /// Free text.
    pub description: String,
    /// The map key in `routes`, at most 40 characters.
    pub network_id: String,
    /// Whether it is active.
    pub enabled: bool,
    /// Routing peer ID.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    /// Routing peer group IDs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer_groups: Option<Vec<String>>,
    /// The routed CIDR.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<IpNet>,
    /// The routed domains.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domains: Option<Vec<String>>,
    /// 1..=9999; [`DEFAULT_METRIC`] when absent.
    pub metric: u32,
    /// [`DEFAULT_MASQUERADE`] when absent.
    pub masquerade: bool,
    /// Distribution group IDs.
    pub groups: Vec<String>,
    /// [`DEFAULT_KEEP_ROUTE`] when absent.
    pub keep_route: bool,
}

/// Body of `POST /api/dns/nameservers` and `PUT /api/dns/nameservers/{nsgroupId}`; every
/// field is required.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NameserverGroupRequest {
    /// The group's name.
    pub name: String,
    /// Free text.
    pub description: String,
    /// The nameservers.
    pub nameservers: Vec<Nameserver>,
    /// Whether peers use it.
    pub enabled: bool,
    /// Group IDs.
    pub groups: Vec<String>,
    /// True exactly when `domains` is empty.
    pub primary: bool,
    /// Match domains.
    pub domains: Vec<String>,
    /// Whether match domains are search domains.
    pub search_domains_enabled: bool,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Group => "group",
            Kind::SetupKey => "setup key",
            Kind::Peer => "peer",
            Kind::Policy => "policy",
            Kind::Route => "route",
            Kind::NameserverGroup => "nameserver group",
        })
    }
}

/// The request for group `name`, with its current `resources` (kept: PUT replaces them).
///
/// Peers without an ID are not an error: they are left out and listed in
/// [`GroupMapping::pending`].
pub fn group_request(
    name: &str,
    group: &Group,
    resources: Vec<Resource>,
    resolve: &dyn Resolve,
) -> GroupMapping {
    let mut peers = Vec::new();
    let mut pending = Vec::new();
    for peer in &group.peers {
        match resolve.id(Kind::Peer, peer) {
            Some(id) => peers.push(id),
            None => pending.push(peer.clone()),
        }
    }
    GroupMapping { request: GroupRequest { name: name.to_owned(), peers, resources }, pending }
}

/// The create request for setup key `name`.
///
/// Errors: an auto group without an ID.
pub fn setup_key_create(
    name: &str,
    key: &SetupKey,
    resolve: &dyn Resolve,
) -> Result<SetupKeyCreate, ResolveError> {
    let path = child_key("setup_keys", name);
    Ok(SetupKeyCreate {
        name: name.to_owned(),
        key_type: key.key_type,
        expires_in: key.expires_in,
        auto_groups: ids(resolve, Kind::Group, &child_key(&path, "auto_groups"), &key.auto_groups)?,
        usage_limit: key.usage_limit,
        ephemeral: key.ephemeral,
        allow_extra_dns_labels: key.allow_extra_dns_labels,
    })
}

/// The update request for setup key `name`: `revoked: false` and its auto groups.
///
/// Errors: an auto group without an ID.
pub fn setup_key_update(
    name: &str,
    key: &SetupKey,
    resolve: &dyn Resolve,
) -> Result<SetupKeyUpdate, ResolveError> {
    let path = child_key(&child_key("setup_keys", name), "auto_groups");
    Ok(SetupKeyUpdate {
        revoked: false,
        auto_groups: ids(resolve, Kind::Group, &path, &key.auto_groups)?,
    })
}

/// The request for policy `name`: one rule named after it, `action: accept`, the protocol
/// lower-cased (brief §1, "Where the seed differs", 2); `rule_id` is the existing rule's ID
/// on PUT, `None` on POST.
///
/// Errors: a source or destination group without an ID.
pub fn policy_request(
    name: &str,
    policy: &Policy,
    rule_id: Option<String>,
    resolve: &dyn Resolve,
) -> Result<PolicyRequest, ResolveError> {
    let path = child_key("policies", name);
    let rule = PolicyRule {
        id: rule_id,
        name: name.to_owned(),
        enabled: policy.enabled,
        action: Action::Accept,
        bidirectional: policy.bidirectional,
        protocol: policy.protocol,
        ports: policy.ports.clone(),
        sources: ids(resolve, Kind::Group, &child_key(&path, "sources"), &policy.sources)?,
        destinations: ids(
            resolve,
            Kind::Group,
            &child_key(&path, "destinations"),
            &policy.destinations,
        )?,
    };
    Ok(PolicyRequest {
        name: name.to_owned(),
        description: policy.description.clone(),
        enabled: policy.enabled,
        rules: vec![rule],
    })
}

/// The request for the route keyed `network_id`, with [`DEFAULT_METRIC`],
/// [`DEFAULT_MASQUERADE`] and [`DEFAULT_KEEP_ROUTE`] where it leaves them out. An empty
/// `domains` or `peer_groups` is not sent.
///
/// Errors: the peer or a group without an ID.
pub fn route_request(
    network_id: &str,
    route: &Route,
    resolve: &dyn Resolve,
) -> Result<RouteRequest, ResolveError> {
    let path = child_key("routes", network_id);
    let peer = match &route.peer {
        Some(name) => Some(id(resolve, Kind::Peer, &child_key(&path, "peer"), name)?),
        None => None,
    };
    let peer_groups = match route.peer_groups.as_deref() {
        Some(names) if !names.is_empty() => {
            Some(ids(resolve, Kind::Group, &child_key(&path, "peer_groups"), names)?)
        }
        _ => None,
    };
    Ok(RouteRequest {
        description: route.description.clone(),
        network_id: network_id.to_owned(),
        enabled: route.enabled,
        peer,
        peer_groups,
        network: route.network,
        domains: route.domains.clone().filter(|domains| !domains.is_empty()),
        metric: route.metric.unwrap_or(DEFAULT_METRIC),
        masquerade: route.masquerade.unwrap_or(DEFAULT_MASQUERADE),
        groups: ids(resolve, Kind::Group, &child_key(&path, "groups"), &route.groups)?,
        keep_route: route.keep_route.unwrap_or(DEFAULT_KEEP_ROUTE),
    })
}

/// The request for nameserver group `name`.
///
/// Errors: a group without an ID.
pub fn nameserver_group_request(
    name: &str,
    group: &NameserverGroup,
    resolve: &dyn Resolve,
) -> Result<NameserverGroupRequest, ResolveError> {
    let path = child_key(&child_key("dns.nameserver_groups", name), "groups");
    Ok(NameserverGroupRequest {
        name: name.to_owned(),
        description: group.description.clone(),
        nameservers: group.nameservers.clone(),
        enabled: group.enabled,
        groups: ids(resolve, Kind::Group, &path, &group.groups)?,
        primary: group.primary,
        domains: group.domains.clone(),
        search_domains_enabled: group.search_domains_enabled,
    })
}

fn id(resolve: &dyn Resolve, kind: Kind, path: &str, name: &str) -> Result<String, ResolveError> {
    resolve.id(kind, name).ok_or_else(|| ResolveError {
        kind,
        name: name.to_owned(),
        path: path.to_owned(),
    })
}

fn ids(
    resolve: &dyn Resolve,
    kind: Kind,
    path: &str,
    names: &[String],
) -> Result<Vec<String>, ResolveError> {
    names
        .iter()
        .enumerate()
        .map(|(index, name)| id(resolve, kind, &child_index(path, index), name))
        .collect()
}
