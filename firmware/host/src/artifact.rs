//! Artifacts: one host object each, identified by [`ArtifactKind`] + name (seed 000, "Artifact
//! Intents"), with typed attributes ([`ArtifactSpec`]). Names are stable and derived from the
//! object's host identity, so an observed object and a desired one with the same identity have
//! the same [`ArtifactKey`]. The kinds, their specs and their rules are in [`crate::kinds`],
//! one module per kind; this module re-exports them under their old paths.
//! This module does not touch the host.

use std::fmt;

use serde::{Deserialize, Serialize};

pub use crate::kinds::address::AddressSpec;
pub use crate::kinds::aftr_address::AftrAddressSpec;
pub use crate::kinds::dhcp_client::{DhcpBinding, DhcpClientSpec};
pub use crate::kinds::dnsmasq_section::DnsmasqSectionSpec;
pub use crate::kinds::file_block::FileBlockSpec;
pub use crate::kinds::fwmark_rule::{FwmarkRuleSpec, ROUTERD_FWMARK_RANGE};
pub use crate::kinds::health_check::HealthStatusSpec;
pub use crate::kinds::hostname::SystemHostnameSpec;
pub use crate::kinds::ip6_tunnel::{EncapLimit, Ip6TunnelMode, Ip6TunnelSpec};
pub use crate::kinds::link::{LinkKind, LinkSpec, VlanProtocol};
pub use crate::kinds::log_sink::{
    LogDelivery, LogOutput, LogSeverity, LogSinkSpec, PluginOutput, SyslogOutput, SyslogTransport,
};
pub use crate::kinds::nft_table::ROUTERD_NFT_TABLE_PREFIX;
pub use crate::kinds::opaque::OpaqueSpec;
pub use crate::kinds::ppp_link::PppLinkSpec;
pub use crate::kinds::ppp_secret::{PppSecretSpec, PppSecretValue};
pub use crate::kinds::route::{MAIN_ROUTE_TABLE, ROUTERD_ROUTE_PROTOCOL, RouteSpec};
pub use crate::kinds::route_table::{RESERVED_ROUTE_TABLES, RouteTableSpec};
pub use crate::kinds::state_variable::{StateVariableSpec, StateVariableStatus};
pub use crate::kinds::sysctl::SysctlSpec;
pub use crate::kinds::timesyncd::{TimesyncServersSpec, TimesyncdSpec};
pub use crate::kinds::unit::UnitSpec;
pub use crate::kinds::{ApplyWith, ArtifactKind, ArtifactSpec};

/// Identity of an artifact: kind + stable name. Displayed as `kind/name`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ArtifactKey {
    /// Artifact type.
    pub kind: ArtifactKind,
    /// Stable identity within the kind.
    pub name: String,
}

impl ArtifactKey {
    /// Builds a key.
    pub fn new(kind: ArtifactKind, name: impl Into<String>) -> Self {
        Self { kind, name: name.into() }
    }
}

impl fmt::Display for ArtifactKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.kind, self.name)
    }
}

/// One host object with its attributes: a desired one (rendered) or an observed one (inventory).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifact {
    /// Identity.
    pub key: ArtifactKey,
    /// Typed attributes.
    pub spec: ArtifactSpec,
}

impl Artifact {
    /// Builds an artifact whose key is derived from the spec ([`ArtifactSpec::key`]).
    pub fn new(spec: ArtifactSpec) -> Self {
        Self { key: spec.key(), spec }
    }
}

/// One differing attribute between a desired and an observed artifact.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttributeDiff {
    /// Attribute name as shown to the operator (`mtu`, `chains.forward.rules`).
    pub attribute: String,
    /// Desired value.
    pub desired: serde_json::Value,
    /// Observed value (`null` when absent on the host).
    pub observed: serde_json::Value,
}

#[cfg(test)]
#[path = "artifact_tests.rs"]
mod tests;
