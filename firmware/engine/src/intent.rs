//! Artifact intents: a resource's declaration of one host artifact (seed 000, "Artifact
//! Intents"). Rendering produces them; planning turns them into graph items.

use std::fmt;
use std::sync::Arc;

use routerd_host::{Artifact, ArtifactKey, ArtifactKind};
use serde::{Deserialize, Serialize};

/// What the resource wants done with the artifact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    /// routerd wants it to exist and may manage it.
    Ensure,
    /// routerd relies on it but does not own it (never created, modified or deleted).
    Observe,
    /// Reserved for explicit deletion flows.
    Delete,
}

impl Action {
    /// The lowercase word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ensure => "ensure",
            Self::Observe => "observe",
            Self::Delete => "delete",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The configurator family of an artifact kind, shown in plans as `applyWith`: one per kind,
/// from the kind table in `routerd_host::kinds`.
pub use routerd_host::ApplyWith;

/// A dependency of an intent on another artifact.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IntentDep {
    /// The artifact depended on.
    pub key: ArtifactKey,
    /// Why, for pending reports (`address needs link lan0`).
    pub description: String,
    /// Recreate this artifact when the dependency is modified.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub recreate_when_modified: bool,
    /// The dependency is a HealthCheck verdict that must be healthy, not merely present: the
    /// artifact is withdrawn while the check fails ([`crate::health`]). Waiting on it is a
    /// standby, not a block.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub healthy: bool,
    /// The dependency is a state variable that must meet this `when.state` condition, not
    /// merely exist: the artifact is withdrawn while it does not ([`crate::state::holds`]).
    /// Boxed: most dependencies have none, and every intent carries its dependencies (about
    /// 100 bytes less per dependency, tens of thousands in a large config).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub state: Option<Box<routerd_model::spec::StateMatchSpec>>,
    /// The dependency is the source of a value the artifact is built from (a runtime value,
    /// ADR 0008), met only while the source carries it. So the artifact waits for the value
    /// and is withdrawn when it is lost.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub carries: Option<Carried>,
}

impl IntentDep {
    /// A plain dependency on `key`: the artifact is created after it and deleted before it;
    /// `description` says why, for pending reports (`zone needs server ns1`).
    pub fn on(key: &ArtifactKey, description: impl Into<String>) -> Self {
        Self {
            key: key.clone(),
            description: description.into(),
            recreate_when_modified: false,
            healthy: false,
            state: None,
            carries: None,
        }
    }
}

/// The runtime value an artifact takes from its dependency ([`IntentDep::carries`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Carried {
    /// Addresses: a DHCP binding that has configured an address (the delegated address a
    /// DS-Lite tunnel's local end is), or an AFTR lookup with an answer.
    Addresses,
    /// A gateway: a DHCPv4 lease whose router networkd has routed through
    /// (`DhcpClientSpec::gateway`, a default-route candidate with `gatewaySource: dhcp4`).
    Gateway,
    /// DNS servers: a DHCP client that received some (`DhcpClientSpec::dns_servers`, a
    /// `DNSConditionalForwarder` with `upstreamSource: dhcp4 | dhcp6`).
    DnsServers,
}

impl Carried {
    /// Whether `spec`, the dependency's item, carries the value.
    pub fn by(self, spec: &routerd_host::ArtifactSpec) -> bool {
        use routerd_host::ArtifactSpec;
        match (self, spec) {
            (Self::Addresses, ArtifactSpec::DhcpClient(c)) => !c.addresses.is_empty(),
            (Self::Addresses, ArtifactSpec::Aftr(a)) => !a.addresses.is_empty(),
            (Self::Gateway, ArtifactSpec::DhcpClient(c)) => c.gateway.is_some(),
            (Self::DnsServers, ArtifactSpec::DhcpClient(c)) => !c.dns_servers.is_empty(),
            _ => false,
        }
    }
}

/// One artifact intent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Intent {
    /// The artifact with its desired attributes (shared with the graph items made from it).
    pub artifact: Arc<Artifact>,
    /// Owner resource ID (`apiVersion/kind/name`), shared by the resource's intents and the
    /// graph items made from them.
    pub owner: Arc<str>,
    /// Further resources declaring the same artifact (issue 33 §5): with equal attributes they
    /// share it (it is deleted only when none of them nor `owner` declares it); with other
    /// attributes it is a conflict and the intent is observe-only. Empty for almost every
    /// intent; set by de-duplication, never by a render.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub co_owners: Vec<Arc<str>>,
    /// Declared alike by every resource that needs it, by design (the dnsmasq unit): shared
    /// without a warning. Set by the render ([`crate::render`]'s `Out::ensure_common`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub common: bool,
    /// Ensure, observe or delete.
    pub action: Action,
    /// Configurator family.
    pub apply_with: ApplyWith,
    /// Artifacts that must exist first.
    pub dependencies: Vec<IntentDep>,
}

impl Intent {
    /// The artifact key.
    pub fn key(&self) -> &ArtifactKey {
        &self.artifact.key
    }

    /// The artifact kind.
    pub fn kind(&self) -> ArtifactKind {
        self.artifact.key.kind
    }

    /// Every resource declaring the artifact: `owner`, then the co-owners.
    pub fn owners(&self) -> impl Iterator<Item = &Arc<str>> + '_ {
        std::iter::once(&self.owner).chain(&self.co_owners)
    }
}

/// Kinds this build can list on the host. Only these enter the ledger (seed 000: "only
/// inventory-backed ensure artifacts are remembered"); the kind table says which
/// ([`ArtifactKind::is_remembered`]).
pub fn is_inventory_backed(kind: ArtifactKind) -> bool {
    kind.is_remembered()
}
