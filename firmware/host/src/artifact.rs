//! Artifact kinds and their typed attributes: the vocabulary shared by render (engine), inventory
//! and configurators (this crate).
//!
//! An artifact is one host object, identified by [`ArtifactKind`] + name (seed 000, "Artifact
//! Intents"). Names are stable and derived from the object's kernel identity, so an observed
//! object and a desired one with the same identity have the same [`ArtifactKey`].
//! This module does not touch the host.

use std::fmt;
use std::net::IpAddr;

use ipnet::IpNet;
use serde::{Deserialize, Serialize};

use crate::nftables::ir::{NftTableSpec, NftTableState};

/// Route protocol number (`rtm_protocol`) on every route routerd installs.
///
/// The kernel does not interpret values above `RTPROT_STATIC` (4); FRR uses 186..=198 and
/// iproute2's `rt_protos` names 0..=18, 42 and 99. 208 is unused by both. Shown by `ip route` as
/// `proto 208` (or `proto routerd` with the board's `rt_protos.d/routerd.conf`).
pub const ROUTERD_ROUTE_PROTOCOL: u8 = 208;

/// Tables that are never a `linux.ipv4.routeTable` artifact: `default` (253), `main` (254)
/// and `local` (255) belong to the whole system (`include/uapi/linux/rtnetlink.h`).
pub const RESERVED_ROUTE_TABLES: [u32; 3] = [253, 254, 255];

/// The fwmark range routerd treats as its own namespace (seed 000, "Orphans").
pub const ROUTERD_FWMARK_RANGE: std::ops::RangeInclusive<u32> = 0x100..=0x1ff;

/// Prefix of nftables tables inside routerd's namespace (seed 000).
pub const ROUTERD_NFT_TABLE_PREFIX: &str = "routerd_";

/// Stable artifact type. The serialised string is part of the ledger format and the Result
/// document: never rename one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ArtifactKind {
    /// A network link (`ip link`), named by ifname.
    #[serde(rename = "linux.link")]
    Link,
    /// An IPv4 address on a link, named `ifname/addr/prefixlen`.
    #[serde(rename = "linux.ipv4.address")]
    Ipv4Address,
    /// An IPv6 address on a link, named `ifname/addr/prefixlen`.
    #[serde(rename = "linux.ipv6.address")]
    Ipv6Address,
    /// An IPv4 route, named `table:destination:metric`.
    #[serde(rename = "linux.ipv4.route")]
    Ipv4Route,
    /// An IPv6 route, named `table:destination:metric`.
    #[serde(rename = "linux.ipv6.route")]
    Ipv6Route,
    /// A numbered IPv4 routing table routerd fills, named by its number.
    #[serde(rename = "linux.ipv4.routeTable")]
    Ipv4RouteTable,
    /// An IPv4 fwmark policy rule (`ip rule ... fwmark`), named by the mark in hex (`0x100`).
    #[serde(rename = "linux.ipv4.fwmarkRule")]
    Ipv4FwmarkRule,
    /// An IP-in-IPv6 (ip6tnl, ipip6 mode) tunnel link, named by ifname.
    #[serde(rename = "linux.ipip6.tunnel")]
    Ipip6Tunnel,
    /// A PPP link brought up by pppd, named by ifname.
    #[serde(rename = "linux.ppp.link")]
    PppLink,
    /// A sysctl key under `/proc/sys`, named in dotted form (`net.ipv4.ip_forward`).
    #[serde(rename = "linux.sysctl")]
    Sysctl,
    /// The system hostname, named `system`.
    #[serde(rename = "linux.hostname")]
    Hostname,
    /// An nftables table, named `family/name` (`inet/routerd_nat`).
    #[serde(rename = "nft.table")]
    NftTable,
    /// A systemd unit, named by unit name (`routerd-dnsmasq.service`).
    #[serde(rename = "systemd.service")]
    SystemdService,
    /// A managed file, named by absolute path.
    #[serde(rename = "file")]
    File,
    /// A DHCPv4 client binding on a link, named by ifname.
    #[serde(rename = "dhcp.ipv4.client")]
    Dhcp4Client,
    /// A DHCPv6 client binding on a link, named by ifname.
    #[serde(rename = "dhcp.ipv6.client")]
    Dhcp6Client,
    /// A DHCPv6 prefix delegation binding, named by resource name.
    #[serde(rename = "dhcp.ipv6.prefixDelegation")]
    Dhcp6PrefixDelegation,
    /// A section of routerd's dnsmasq configuration, named `section/name`.
    #[serde(rename = "dnsmasq.config")]
    DnsmasqConfig,
    /// A probe run by the supervisor's scheduler, named by resource name.
    #[serde(rename = "routerd.healthCheck")]
    HealthCheck,
    /// A log forwarding sink, named by resource name.
    #[serde(rename = "routerd.logSink")]
    LogSink,
    /// A source-address selection policy, named by resource name.
    #[serde(rename = "routerd.addressSelection")]
    AddressSelection,
    /// A firewall zone: an engine-internal grouping of interfaces compiled into nft tables.
    #[serde(rename = "routerd.firewallZone")]
    FirewallZone,
    /// A state variable evaluated by the supervisor (`StatePolicy`).
    #[serde(rename = "routerd.stateVariable")]
    StateVariable,
}

impl ArtifactKind {
    /// Every kind, in declaration order.
    pub const ALL: [ArtifactKind; 23] = [
        Self::Link,
        Self::Ipv4Address,
        Self::Ipv6Address,
        Self::Ipv4Route,
        Self::Ipv6Route,
        Self::Ipv4RouteTable,
        Self::Ipv4FwmarkRule,
        Self::Ipip6Tunnel,
        Self::PppLink,
        Self::Sysctl,
        Self::Hostname,
        Self::NftTable,
        Self::SystemdService,
        Self::File,
        Self::Dhcp4Client,
        Self::Dhcp6Client,
        Self::Dhcp6PrefixDelegation,
        Self::DnsmasqConfig,
        Self::HealthCheck,
        Self::LogSink,
        Self::AddressSelection,
        Self::FirewallZone,
        Self::StateVariable,
    ];

    /// The stable string (`linux.ipv4.fwmarkRule`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Link => "linux.link",
            Self::Ipv4Address => "linux.ipv4.address",
            Self::Ipv6Address => "linux.ipv6.address",
            Self::Ipv4Route => "linux.ipv4.route",
            Self::Ipv6Route => "linux.ipv6.route",
            Self::Ipv4RouteTable => "linux.ipv4.routeTable",
            Self::Ipv4FwmarkRule => "linux.ipv4.fwmarkRule",
            Self::Ipip6Tunnel => "linux.ipip6.tunnel",
            Self::PppLink => "linux.ppp.link",
            Self::Sysctl => "linux.sysctl",
            Self::Hostname => "linux.hostname",
            Self::NftTable => "nft.table",
            Self::SystemdService => "systemd.service",
            Self::File => "file",
            Self::Dhcp4Client => "dhcp.ipv4.client",
            Self::Dhcp6Client => "dhcp.ipv6.client",
            Self::Dhcp6PrefixDelegation => "dhcp.ipv6.prefixDelegation",
            Self::DnsmasqConfig => "dnsmasq.config",
            Self::HealthCheck => "routerd.healthCheck",
            Self::LogSink => "routerd.logSink",
            Self::AddressSelection => "routerd.addressSelection",
            Self::FirewallZone => "routerd.firewallZone",
            Self::StateVariable => "routerd.stateVariable",
        }
    }

    /// Parses the stable string form.
    pub fn parse(s: &str) -> Option<ArtifactKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for ArtifactKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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

/// Typed attributes per artifact family. Desired and observed artifacts use the same variants,
/// except nftables tables, whose observed form is the fingerprint the kernel can give back
/// ([`NftTableState`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ArtifactSpec {
    /// `linux.link`.
    Link(LinkSpec),
    /// `linux.ipv4.address` / `linux.ipv6.address`, by the address family.
    Address(AddressSpec),
    /// `linux.ipv4.route` / `linux.ipv6.route`, by the destination family.
    Route(RouteSpec),
    /// `linux.ipv4.routeTable`.
    RouteTable(RouteTableSpec),
    /// `linux.ipv4.fwmarkRule`.
    FwmarkRule(FwmarkRuleSpec),
    /// `linux.sysctl`.
    Sysctl(SysctlSpec),
    /// `nft.table`, desired.
    NftTable(NftTableSpec),
    /// `nft.table`, observed.
    NftTableObserved(NftTableState),
    /// Any kind whose configurator is not in this build: attributes as rendered from the
    /// resource, compared as JSON.
    Opaque(OpaqueSpec),
}

/// `linux.link`: an existing link routerd manages (it never creates physical links).
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
}

/// `linux.ipv4.address` / `linux.ipv6.address`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AddressSpec {
    /// Link the address is on.
    pub ifname: String,
    /// Address with prefix length (`IFA_LOCAL`/`IFA_ADDRESS` + `ifa_prefixlen`).
    pub address: IpNet,
}

/// `linux.ipv4.route` / `linux.ipv6.route`, unicast only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteSpec {
    /// Routing table number (`RTA_TABLE`); 254 is `main`.
    pub table: u32,
    /// Destination prefix (`RTA_DST` + `rtm_dst_len`), host bits clear.
    pub destination: IpNet,
    /// Next hop (`RTA_GATEWAY`); `None` for a device route.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<IpAddr>,
    /// Output link (`RTA_OIF`), by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oif: Option<String>,
    /// Route metric (`RTA_PRIORITY`), part of the route's identity in the kernel.
    pub metric: u32,
    /// `rtm_protocol`: [`ROUTERD_ROUTE_PROTOCOL`] for routes we install; as observed otherwise.
    pub protocol: u8,
}

/// `linux.ipv4.routeTable`: a numbered table whose routes routerd installs.
///
/// Observed: a table holding at least one route with [`ROUTERD_ROUTE_PROTOCOL`]. Create is a
/// no-op (the kernel creates tables implicitly); delete flushes the routes of our protocol in
/// that table, and only those (seed 000, "Orphans").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteTableSpec {
    /// Table number, 1..=4294967295 except 253..=255 (default, main, local).
    pub table: u32,
}

/// `linux.ipv4.fwmarkRule`: `ip rule add fwmark MARK/MASK lookup TABLE priority PRIORITY`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FwmarkRuleSpec {
    /// `FRA_FWMARK`.
    pub mark: u32,
    /// `FRA_FWMASK`; `0xffffffff` when the config gives none.
    pub mask: u32,
    /// `FRA_TABLE`.
    pub table: u32,
    /// `FRA_PRIORITY`, 1..=32765 (`ip rule` reserves 0, 32766, 32767).
    pub priority: u32,
}

/// `linux.sysctl`: a key under `/proc/sys` of the target network namespace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SysctlSpec {
    /// Dotted key (`net.ipv4.conf.wan.rp_filter`); `/` is not accepted.
    pub key: String,
    /// Value as written to the file; compared with runs of whitespace folded.
    pub value: String,
}

/// Attributes of a kind this build has no configurator for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpaqueSpec {
    /// The artifact kind.
    pub kind: ArtifactKind,
    /// The artifact name.
    pub name: String,
    /// Attributes as rendered from the resource.
    pub attributes: serde_json::Value,
}

impl ArtifactSpec {
    /// The key this spec's kernel identity gives.
    pub fn key(&self) -> ArtifactKey {
        match self {
            Self::Link(l) => ArtifactKey::new(ArtifactKind::Link, l.ifname.clone()),
            Self::Address(a) => {
                let kind = match a.address {
                    IpNet::V4(_) => ArtifactKind::Ipv4Address,
                    IpNet::V6(_) => ArtifactKind::Ipv6Address,
                };
                ArtifactKey::new(kind, format!("{}/{}", a.ifname, a.address))
            }
            Self::Route(r) => {
                let kind = match r.destination {
                    IpNet::V4(_) => ArtifactKind::Ipv4Route,
                    IpNet::V6(_) => ArtifactKind::Ipv6Route,
                };
                ArtifactKey::new(kind, format!("{}:{}:{}", r.table, r.destination, r.metric))
            }
            Self::RouteTable(t) => {
                ArtifactKey::new(ArtifactKind::Ipv4RouteTable, t.table.to_string())
            }
            Self::FwmarkRule(r) => {
                ArtifactKey::new(ArtifactKind::Ipv4FwmarkRule, format!("{:#x}", r.mark))
            }
            Self::Sysctl(s) => ArtifactKey::new(ArtifactKind::Sysctl, s.key.clone()),
            Self::NftTable(t) => ArtifactKey::new(ArtifactKind::NftTable, t.key_name()),
            Self::NftTableObserved(t) => ArtifactKey::new(ArtifactKind::NftTable, t.key_name()),
            Self::Opaque(o) => ArtifactKey::new(o.kind, o.name.clone()),
        }
    }

    /// Attributes where `observed` differs from `self` (desired), as `(attribute, desired,
    /// observed)` triples; empty when the host matches. Desired fields left `None` are not
    /// compared. Used for the Modify decision, drift reports and adoption refusal.
    pub fn drift(&self, observed: &ArtifactSpec) -> Vec<AttributeDiff> {
        crate::compare::drift(self, observed)
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
