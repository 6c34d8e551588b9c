//! `dhcp.ipv4.client`, `dhcp.ipv6.client`, `dhcp.ipv6.prefixDelegation` and
//! `dhcp.ipv6.delegatedAddress`: DHCP client bindings systemd-networkd runs. Configurator and
//! inventory: [`crate::networkd`].

use serde::{Deserialize, Serialize};

use super::orphans::OrphanRule;
use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// Which DHCP client binding a [`DhcpClientSpec`] is: its artifact kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DhcpBinding {
    /// `dhcp.ipv4.client`: a DHCPv4 lease (RFC 2131) for the link's address.
    Ipv4,
    /// `dhcp.ipv6.client`: DHCPv6 addresses (IA_NA, RFC 8415).
    Ipv6,
    /// `dhcp.ipv6.prefixDelegation`: a delegated prefix (IA_PD, RFC 8415).
    PrefixDelegation,
    /// `dhcp.ipv6.delegatedAddress`: on a downstream link, an address in a subnet of the
    /// prefix an uplink's delegation receives (networkd's `DHCPPrefixDelegation=`), which
    /// networkd adds with the delegation's lifetimes, renumbers when the prefix changes and
    /// removes when it is lost (RFC 7084 WPD-1..WPD-4).
    DelegatedAddress,
}

impl DhcpBinding {
    /// Every binding, in the order their blocks appear in a `.network` file.
    pub const ALL: [Self; 4] =
        [Self::Ipv4, Self::Ipv6, Self::PrefixDelegation, Self::DelegatedAddress];

    /// The artifact kind.
    pub fn kind(self) -> ArtifactKind {
        match self {
            Self::Ipv4 => ArtifactKind::Dhcp4Client,
            Self::Ipv6 => ArtifactKind::Dhcp6Client,
            Self::PrefixDelegation => ArtifactKind::Dhcp6PrefixDelegation,
            Self::DelegatedAddress => ArtifactKind::Dhcp6DelegatedAddress,
        }
    }

    /// The binding of an artifact kind, `None` for any other kind.
    pub fn of(kind: ArtifactKind) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.kind() == kind)
    }
}

/// A DHCP client binding that systemd-networkd runs on one link: a block of routerd's
/// `.network` file for the link (systemd.network(5)), keyed by the binding's kind and the
/// link's name. The backend writes the file's `[Match]` and `[Network]` sections from the set of
/// bindings on the link; a block holds the settings of one binding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DhcpClientSpec {
    /// Which binding (the artifact kind).
    pub binding: DhcpBinding,
    /// The link's name, the artifact's name.
    pub ifname: String,
    /// The block's lines in systemd.network(5) form (`[DHCPv4]`, `RouteMetric=100`), in order.
    pub settings: Vec<String>,
    /// Desired: systemd-networkd configures the link with routerd's file. Observed: its
    /// `NetworkFile` for the link is routerd's (org.freedesktop.network1(5), `Describe`), so
    /// another `.network` file that matches the link first shows as drift.
    pub effective: bool,
    /// Observed: the addresses networkd configured on the link for this binding (`Describe`'s
    /// `Addresses` whose `ConfigSource` is the binding's: `DHCPv4`, `DHCPv6`, `DHCP-PD`), in
    /// CIDR form (`2001:db8:0:1::1/64`); for `dhcp.ipv6.prefixDelegation`, the delegated
    /// prefixes (`2001:db8:a0ff::/56`, the unreachable routes networkd adds for them), when it
    /// is the only delegation (networkd does not say which uplink a prefix came through). Desired: empty, and never compared: they are the
    /// binding's result, which what depends on the binding reads (the delegated address a
    /// DS-Lite tunnel uses as its local end).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<String>,
    /// Observed, `dhcp.ipv4.client` only: the lease's router (DHCP option 3, RFC 2132 section
    /// 3.5), read as the gateway of the IPv4 default route networkd configured for the lease
    /// (`Describe`'s `Routes` whose `ConfigSource` is `DHCPv4`). `None` before the lease, and
    /// when networkd installs no such route (`UseRoutes=no`, `UseGateway=no`, a lease without
    /// router). Desired: `None`, never compared, like `addresses`: what depends on the lease
    /// reads it (a default-route candidate with `gatewaySource: dhcp4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<std::net::Ipv4Addr>,
    /// Observed: the DNS servers the binding's DHCP client received on the link (DHCPv4
    /// option 6, RFC 2132 section 3.8, for `dhcp.ipv4.client`; DHCPv6 `OPTION_DNS_SERVERS`,
    /// RFC 3646, for `dhcp.ipv6.client` and `dhcp.ipv6.prefixDelegation`, which share the
    /// link's DHCPv6 client): `Describe`'s `DNS` whose `ConfigSource` is `DHCPv4` or `DHCPv6`,
    /// in networkd's order. Desired: empty, never compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dns_servers: Vec<std::net::IpAddr>,
}

impl DhcpClientSpec {
    /// The desired binding of `ifname` with its block's `settings`: effective, and none of the
    /// observed results (addresses, gateway, DNS servers).
    pub fn desired(binding: DhcpBinding, ifname: String, settings: Vec<String>) -> Self {
        Self {
            binding,
            ifname,
            settings,
            effective: true,
            addresses: Vec::new(),
            gateway: None,
            dns_servers: Vec::new(),
        }
    }
}

impl ArtifactType for DhcpClientSpec {
    type Observed = Self;

    /// The kind is the binding's.
    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(self.binding.kind(), self.ifname.clone())
    }

    observed_as_self!(DhcpClient);

    /// Settings and whether they are in effect; the results (addresses, gateway, DNS servers)
    /// are read by dependents, never compared.
    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare("settings", &self.settings, &o.settings);
        diffs.compare("effective", &self.effective, &o.effective);
    }

    fn in_routerd_namespace(&self) -> bool {
        // A block of a `10-routerd-*.network` file.
        true
    }
}

/// Orphans (ADR 0002): a binding in routerd's `.network` files, deleted when the ledger records it.
pub const ORPHANS: OrphanRule = OrphanRule::RecordedInNamespace {
    deleted: "binding in routerd's .network file recorded in the ledger",
    unrecorded: None,
};
