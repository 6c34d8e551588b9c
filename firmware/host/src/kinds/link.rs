//! `linux.link`: links routerd manages or relies on (`ip link`), by ifname. Configurator and
//! inventory: [`crate::netlink`]'s `link.rs`.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::orphans::{Kept, OrphanRule};
use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// `linux.link`: a link routerd manages. Links without a `kind` (physical ports, veth, bridges
/// made elsewhere) are only modified, never created; links with a `kind` (VLANs) are created
/// when absent. No link is ever deleted (ADR 0002).
///
/// Serialized form: `kind` is omitted when `None`, so documents written before it existed
/// (ledger attributes, Result documents) still parse.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkSpec {
    /// Interface name, at most 15 bytes (`IFNAMSIZ - 1`).
    pub ifname: String,
    /// Desired (or observed) administrative state, `IFF_UP`. Desired `None`: left as found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admin_up: Option<bool>,
    /// MTU in bytes (`IFLA_MTU`). Desired `None`: left as found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// Link type and its parameters (`IFLA_LINKINFO`). Desired `None`: any existing link,
    /// whatever its type; `Some`: the link routerd creates, and an existing link of that name
    /// must be exactly this (otherwise it is a conflict, left alone). Observed: the kernel's
    /// `IFLA_INFO_KIND`, `None` for links without one (physical NICs, loopback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<LinkKind>,
}

/// The type of a link (`IFLA_INFO_KIND`) with the parameters routerd compares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum LinkKind {
    /// `vlan` (`IFLA_INFO_KIND "vlan"`, `Documentation/networking/vlan` in older kernels,
    /// `ip-link(8)` `type vlan`).
    Vlan {
        /// Name of the link carrying the tagged frames (`IFLA_LINK`, an index in the kernel).
        /// Observed on a parent in another namespace: `if<index>`, as iproute2 prints it.
        parent: String,
        /// VLAN ID, 1..=4094 (`IFLA_VLAN_ID`).
        id: u16,
        /// Tag protocol (`IFLA_VLAN_PROTOCOL`).
        protocol: VlanProtocol,
    },
    /// Any other link type, observed only: the `IFLA_INFO_KIND` string (`veth`, `bridge`,
    /// `ip6tnl`). routerd never creates these.
    Other {
        /// The kind string.
        name: String,
    },
}

/// The EtherType of a VLAN tag (`IFLA_VLAN_PROTOCOL`, big-endian on the wire).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum VlanProtocol {
    /// `802.1Q`: customer tag, `ETH_P_8021Q` (0x8100); the kernel's default.
    #[default]
    #[serde(rename = "802.1Q")]
    Ieee8021Q,
    /// `802.1ad`: service tag, `ETH_P_8021AD` (0x88a8).
    #[serde(rename = "802.1ad")]
    Ieee8021Ad,
}

impl fmt::Display for VlanProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ieee8021Q => "802.1Q",
            Self::Ieee8021Ad => "802.1ad",
        })
    }
}

impl fmt::Display for LinkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Vlan { parent, id, protocol } => write!(f, "vlan {id} ({protocol}) on {parent}"),
            Self::Other { name } => write!(f, "{name}"),
        }
    }
}

impl ArtifactType for LinkSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::Link, self.ifname.clone())
    }

    observed_as_self!(Link);

    /// `adminUp` and `mtu` when desired; `kind` when declared (a link declared without a kind
    /// is whatever link has that name).
    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare_set("adminUp", &self.admin_up, &o.admin_up);
        diffs.compare_set("mtu", &self.mtu, &o.mtu);
        diffs.compare_set("kind", &self.kind, &o.kind);
    }
}

/// Orphans (ADR 0002): links are never deleted as orphans: routerd may have created a VLAN, but the operator's session may run over it.
pub const ORPHANS: OrphanRule = OrphanRule::Never(Kept {
    reason: "links are never deleted as orphans",
    remediation: "remove the link by hand if it is no longer needed",
});
