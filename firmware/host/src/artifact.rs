//! Artifact kinds and their typed attributes: the vocabulary shared by render (engine), inventory
//! and configurators (this crate).
//!
//! An artifact is one host object, identified by [`ArtifactKind`] + name (seed 000, "Artifact
//! Intents"). Names are stable and derived from the object's kernel identity, so an observed
//! object and a desired one with the same identity have the same [`ArtifactKey`].
//! This module does not touch the host.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

use ipnet::IpNet;
use serde::{Deserialize, Serialize};

use crate::nftables::ir::{NftTableSpec, NftTableState};
use crate::secret::Secret;

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
/// document: never rename one, and never change what a string means (a new kind of host object
/// gets a new string).
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
    /// A block routerd writes in a file, named `path#block`
    /// (`/etc/sysctl.d/90-routerd.conf#net.ipv4.ip_forward`).
    #[serde(rename = "file")]
    File,
    /// A PPP secret: a routerd block of one entry in a pppd secrets file, named `path#block`
    /// (`/etc/ppp/chap-secrets#wan`).
    #[serde(rename = "ppp.secret")]
    PppSecret,
    /// A DHCPv4 client binding on a link, named by ifname.
    #[serde(rename = "dhcp.ipv4.client")]
    Dhcp4Client,
    /// A DHCPv6 client binding on a link, named by ifname.
    #[serde(rename = "dhcp.ipv6.client")]
    Dhcp6Client,
    /// A DHCPv6 prefix delegation binding (IA_PD) on the uplink, named by ifname.
    #[serde(rename = "dhcp.ipv6.prefixDelegation")]
    Dhcp6PrefixDelegation,
    /// An address from a delegated prefix on a downstream link, named by ifname.
    #[serde(rename = "dhcp.ipv6.delegatedAddress")]
    Dhcp6DelegatedAddress,
    /// A section of routerd's dnsmasq configuration, named `section/name`.
    #[serde(rename = "dnsmasq.config")]
    DnsmasqConfig,
    /// A probe run by the supervisor's scheduler, named by resource name.
    #[serde(rename = "routerd.healthCheck")]
    HealthCheck,
    /// A block of routerd's systemd-timesyncd drop-in, named by its `NTPClient` resource.
    #[serde(rename = "timesyncd.config")]
    TimesyncdConfig,
    /// The NTP servers systemd-timesyncd uses, named `system`; observed only.
    #[serde(rename = "timesyncd.servers")]
    TimesyncdServers,
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
    /// The AFTR addresses the supervisor resolved for a DS-Lite tunnel, named by its ifname.
    #[serde(rename = "routerd.aftrAddress")]
    AftrAddress,
}

impl ArtifactKind {
    /// Every kind, in declaration order.
    pub const ALL: [ArtifactKind; 28] = [
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
        Self::PppSecret,
        Self::Dhcp4Client,
        Self::Dhcp6Client,
        Self::Dhcp6PrefixDelegation,
        Self::Dhcp6DelegatedAddress,
        Self::DnsmasqConfig,
        Self::HealthCheck,
        Self::TimesyncdConfig,
        Self::TimesyncdServers,
        Self::LogSink,
        Self::AddressSelection,
        Self::FirewallZone,
        Self::StateVariable,
        Self::AftrAddress,
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
            Self::PppSecret => "ppp.secret",
            Self::Dhcp4Client => "dhcp.ipv4.client",
            Self::Dhcp6Client => "dhcp.ipv6.client",
            Self::Dhcp6PrefixDelegation => "dhcp.ipv6.prefixDelegation",
            Self::Dhcp6DelegatedAddress => "dhcp.ipv6.delegatedAddress",
            Self::DnsmasqConfig => "dnsmasq.config",
            Self::HealthCheck => "routerd.healthCheck",
            Self::TimesyncdConfig => "timesyncd.config",
            Self::TimesyncdServers => "timesyncd.servers",
            Self::LogSink => "routerd.logSink",
            Self::AddressSelection => "routerd.addressSelection",
            Self::FirewallZone => "routerd.firewallZone",
            Self::StateVariable => "routerd.stateVariable",
            Self::AftrAddress => "routerd.aftrAddress",
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
    /// `linux.ipip6.tunnel`.
    Ip6Tunnel(Ip6TunnelSpec),
    /// `linux.ppp.link`.
    PppLink(PppLinkSpec),
    /// `nft.table`, desired.
    NftTable(NftTableSpec),
    /// `nft.table`, observed.
    NftTableObserved(NftTableState),
    /// `systemd.service`.
    Unit(UnitSpec),
    /// `dnsmasq.config`.
    DnsmasqSection(DnsmasqSectionSpec),
    /// `dhcp.ipv4.client`, `dhcp.ipv6.client`, `dhcp.ipv6.prefixDelegation`,
    /// `dhcp.ipv6.delegatedAddress`.
    DhcpClient(DhcpClientSpec),
    /// `linux.hostname`.
    Hostname(SystemHostnameSpec),
    /// `routerd.healthCheck`.
    Health(HealthStatusSpec),
    /// `routerd.stateVariable`.
    State(StateVariableSpec),
    /// `routerd.aftrAddress`.
    Aftr(AftrAddressSpec),
    /// `file`.
    FileBlock(FileBlockSpec),
    /// `ppp.secret`.
    PppSecret(PppSecretSpec),
    /// `timesyncd.config`.
    Timesyncd(TimesyncdSpec),
    /// `timesyncd.servers`.
    TimesyncServers(TimesyncServersSpec),
    /// `routerd.logSink`.
    LogSink(LogSinkSpec),
    /// Any kind whose configurator is not in this build: attributes as rendered from the
    /// resource, compared as JSON.
    Opaque(OpaqueSpec),
}

/// `linux.ppp.link`, named by ifname: the link of a PPP unit, which pppd creates when its
/// session comes up and removes when the session ends. routerd never changes it; it observes it
/// (listed from the rtnetlink link dump: hardware type `ARPHRD_PPP`), and its appearance lets
/// what runs over the session proceed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PppLinkSpec {
    /// Interface name (pppd's `ifname` option).
    pub ifname: String,
    /// Observed: `IFF_UP`. Desired `None`: not compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_up: Option<bool>,
    /// Observed: the MTU the session negotiated, in bytes. Desired `None`: not compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
}

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

/// `linux.ipip6.tunnel`: an ip6tnl link, IPv4 or IPv6 packets inside IPv6 (RFC 2473), as
/// `ip -6 tunnel add IFNAME mode ipip6 remote R local L dev U encaplimit E` makes it.
///
/// DS-Lite (RFC 6333) uses mode `ipip6` towards the AFTR. Every field but `mtu` and `adminUp`
/// is compared as given: `None` in `local` and `underlying` is a value (any local address, no
/// bound link), not "left as found".
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ip6TunnelSpec {
    /// Interface name, at most 15 bytes.
    pub ifname: String,
    /// Inner protocol (`IFLA_IPTUN_PROTO`).
    pub mode: Ip6TunnelMode,
    /// Remote endpoint (`IFLA_IPTUN_REMOTE`), the AFTR for DS-Lite.
    pub remote: Ipv6Addr,
    /// Local endpoint (`IFLA_IPTUN_LOCAL`); `None`: any (`::`), the kernel picks the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<Ipv6Addr>,
    /// Link the encapsulated packets leave through (`IFLA_IPTUN_LINK`, `ip tunnel ... dev`);
    /// `None`: any, by route lookup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub underlying: Option<String>,
    /// Tunnel encapsulation limit option (RFC 2473 section 4.1.1; `IFLA_IPTUN_ENCAP_LIMIT`,
    /// and `IP6_TNL_F_IGN_ENCAP_LIMIT` in `IFLA_IPTUN_FLAGS` for `none`).
    pub encap_limit: EncapLimit,
    /// MTU in bytes (`IFLA_MTU`). Desired `None`: the kernel's (underlying MTU minus headers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// Administrative state, `IFF_UP`. Desired `None`: left as found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_up: Option<bool>,
}

/// ip6tnl modes, by inner protocol (`ip -6 tunnel ... mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ip6TunnelMode {
    /// `ipip6`: IPv4 in IPv6 (`IPPROTO_IPIP`, 4): DS-Lite.
    Ipip6,
    /// `ip6ip6`: IPv6 in IPv6 (`IPPROTO_IPV6`, 41).
    Ip6ip6,
    /// `any`: both (protocol 0).
    Any,
}

impl fmt::Display for Ip6TunnelMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ipip6 => "ipip6",
            Self::Ip6ip6 => "ip6ip6",
            Self::Any => "any",
        })
    }
}

/// The encapsulation limit of an ip6tnl: a number of nested encapsulations, or `none` (no
/// limit option sent). Serialized as the number or the string `none`, as `encaplimit` in
/// iproute2 and `encapsulationLimit` in the config.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EncapLimit {
    /// At most this many nested encapsulations (0..=255).
    Limit(u8),
    /// No encapsulation limit option (`IP6_TNL_F_IGN_ENCAP_LIMIT`).
    None,
}

impl EncapLimit {
    /// iproute2's and the kernel's default, `IPV6_DEFAULT_TNL_ENCAP_LIMIT` (4).
    pub const DEFAULT: EncapLimit = EncapLimit::Limit(4);
}

impl fmt::Display for EncapLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Limit(n) => write!(f, "{n}"),
            Self::None => f.write_str("none"),
        }
    }
}

impl Serialize for EncapLimit {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Limit(n) => serializer.serialize_u8(*n),
            Self::None => serializer.serialize_str("none"),
        }
    }
}

impl<'de> Deserialize<'de> for EncapLimit {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Number(u8),
            Text(String),
        }
        match Wire::deserialize(deserializer)? {
            Wire::Number(n) => Ok(Self::Limit(n)),
            Wire::Text(t) if t == "none" => Ok(Self::None),
            Wire::Text(t) => Err(serde::de::Error::custom(format!(
                "encapsulation limit {t:?} is neither 0..=255 nor \"none\""
            ))),
        }
    }
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

impl FwmarkRuleSpec {
    /// The artifact name: `0x100` for an exact mark (mask `0xffffffff`, the only kind routerd
    /// writes), `0x150/0xff0` for a masked one, as `ip rule` prints them, so that a hand-made
    /// masked rule is never taken for routerd's rule of the same value.
    pub fn key_name(&self) -> String {
        if self.mask == u32::MAX {
            format!("{:#x}", self.mark)
        } else {
            format!("{:#x}/{:#x}", self.mark, self.mask)
        }
    }

    /// Whether every mark the rule matches lies in `range`, whose marks differ only in their
    /// low byte (as [`ROUTERD_FWMARK_RANGE`]'s do): the mask fixes every bit above the low byte
    /// and the value's are the range's.
    pub fn within(&self, range: &std::ops::RangeInclusive<u32>) -> bool {
        (self.mask | 0xff) == u32::MAX
            && range.contains(&(self.mark & !0xff))
            && range.contains(&(self.mark | 0xff))
    }
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

/// `systemd.service`: a unit file routerd writes into the unit directory, enabled, and (when
/// `active`) running. Seed 000: ledger-owned `routerd-*.service` units are orphan-cleaned
/// (stopped, disabled, file removed, manager reloaded).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnitSpec {
    /// Unit name with its suffix (`routerd-dnsmasq.service`); also the file name.
    pub unit: String,
    /// The unit file's whole text (systemd.unit(5)), compared byte for byte.
    pub content: String,
    /// Desired: the unit runs. Observed: its `ActiveState` is `active`, `activating` or
    /// `reloading` (org.freedesktop.systemd1(5)).
    pub active: bool,
}

/// `dnsmasq.config`: one section of routerd's dnsmasq configuration file, named
/// `section/name` (`dhcpv4-range/lan-pool`). Every section of that file is routerd's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DnsmasqSectionSpec {
    /// The section name, the artifact's name.
    pub section: String,
    /// Option lines in dnsmasq's configuration-file form (dnsmasq(8): long options without the
    /// leading `--`, `dhcp-range=…`), in order.
    pub lines: Vec<String>,
}

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

/// `linux.hostname`, always named `system`: the system's hostname, as systemd-hostnamed keeps
/// it (org.freedesktop.hostname1(5)). Reconciled, never deleted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemHostnameSpec {
    /// The static hostname (`/etc/hostname`, `StaticHostname`).
    pub hostname: String,
    /// The kernel's hostname (`uname -n`, `Hostname`); desired: the static one.
    pub kernel: String,
}

/// `routerd.healthCheck`, named after its `HealthCheck` resource: the verdict of the check's
/// probes, which the supervisor's scheduler keeps. An external item: present once the check has
/// a verdict, and only `healthy` is compared, so dependents gated on health (a default-route
/// candidate's preferred route) are created when it turns healthy and withdrawn when it turns
/// unhealthy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthStatusSpec {
    /// The HealthCheck resource's name, the artifact's name.
    pub name: String,
    /// Desired: `true`. Observed: the verdict after the check's thresholds.
    pub healthy: bool,
    /// Observed: the address probed, once resolved (`192.0.2.1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Observed: the last probe's outcome and the run of equal outcomes (`reply in 0.4 ms`,
    /// `3 consecutive failures: no reply within 1s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// `routerd.aftrAddress`, named after a DS-Lite tunnel's link: the AAAA records of its
/// `aftrFQDN` (RFC 6333's AFTR; RFC 6334 gives the name by DHCPv6), as the supervisor's
/// scheduler last resolved them through the tunnel's resolvers. An external item: present once
/// the scheduler has asked, and nothing of it is compared; the tunnel depends on it having
/// addresses and is rendered with the one its `aftrAddressOrdinal` picks (a runtime value).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AftrAddressSpec {
    /// The tunnel's link name, the artifact's name.
    pub ifname: String,
    /// The name resolved (`aftrFQDN`).
    pub fqdn: String,
    /// Observed: the AAAA records of the last answer, in the order the server gave them.
    /// Desired: empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<std::net::Ipv6Addr>,
    /// Observed: how the last lookup went (`answered by 2001:db8::53`, or the error while the
    /// previous answer is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// `routerd.stateVariable`, named after its `StatePolicy`'s `variable`: the value the
/// supervisor's scheduler last evaluated. An external item: present once the scheduler has
/// declared the variable, and nothing of it is compared; a `when.state` dependency reads
/// `status`, `value` and `since` through its own predicate, so dependents are created while
/// their condition holds and withdrawn when it stops holding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateVariableSpec {
    /// The variable's name (`StatePolicy.spec.variable`), the artifact's name.
    pub variable: String,
    /// Whether the variable has been evaluated and, if so, whether a value's `when` held.
    pub status: StateVariableStatus,
    /// The `value` of the first entry whose `when` held; `None` unless `status` is `set`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// When `status` and `value` last changed, in milliseconds since the Unix epoch; what a
    /// `for` duration is measured from. `None` while unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<u64>,
    /// Observed: why the variable has its value (`ipv6Address: wan has 2001:db8::2/64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// [`StateVariableSpec::status`]: the three states `when.state.VAR.status` matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StateVariableStatus {
    /// Not evaluated yet.
    Unknown,
    /// Evaluated: an entry's `when` held, `value` is its value.
    Set,
    /// Evaluated: no entry's `when` held.
    Unset,
}

/// `file`, named `path#block`: one block of lines routerd writes in a file, between marker
/// comments (`# routerd block NAME` ... `# routerd end`). Lines outside routerd's blocks are the
/// operator's and are kept as they are (seed 000: "only routerd-owned blocks inside a file may
/// be safe to touch").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileBlockSpec {
    /// The file's absolute path on the router (below the target's root); no `#`.
    pub path: String,
    /// The block's name, unique in the file.
    pub block: String,
    /// The block's lines, in order, without line breaks.
    pub lines: Vec<String>,
    /// The file's permission bits (`0o644`; `0o600` for secrets). Blocks of one file share it.
    pub mode: u32,
}

impl FileBlockSpec {
    /// The artifact name: `path#block`.
    pub fn key_name(&self) -> String {
        format!("{}#{}", self.path, self.block)
    }
}

/// `ppp.secret`, named `path#block`: one entry of a pppd secrets file (`/etc/ppp/chap-secrets`,
/// `/etc/ppp/pap-secrets`; pppd(8), AUTHENTICATION), in a routerd block of that file like a
/// [`FileBlockSpec`]: the line `"client" * "secret" *`, any server and any address. The file is
/// kept at mode 0600. The secret is a [`Secret`], so the password itself is in no document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PppSecretSpec {
    /// The secrets file's absolute path on the router.
    pub path: String,
    /// The block's name, unique in the file (the `PPPoEInterface`'s name).
    pub block: String,
    /// The client: the PPP user name the router authenticates as.
    pub client: String,
    /// The secret, or the file pppd reads it from.
    pub secret: PppSecretValue,
    /// The file's permission bits: desired 0o600.
    pub mode: u32,
}

impl PppSecretSpec {
    /// The artifact name: `path#block`.
    pub fn key_name(&self) -> String {
        format!("{}#{}", self.path, self.block)
    }
}

/// The secret of a [`PppSecretSpec`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PppSecretValue {
    /// The password, written into the secrets file.
    Inline(Secret),
    /// A file holding the password, written as `@path`: pppd reads the secret from it when it
    /// authenticates (pppd(8): "If the secret starts with an `@`").
    File(String),
}

/// `timesyncd.config`, named after its `NTPClient` resource: one block of routerd's drop-in
/// `/etc/systemd/timesyncd.conf.d/90-routerd.conf` (timesyncd.conf(5)), whose `NTP=` line lists
/// the resource's servers. The drop-in resets `NTP=` before routerd's blocks, so the servers of
/// `timesyncd.conf` and earlier drop-ins give way to routerd's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimesyncdSpec {
    /// The NTPClient resource's name, the artifact's name.
    pub name: String,
    /// NTP server host names or addresses, in order; empty: timesyncd's fallback servers.
    pub servers: Vec<String>,
    /// Desired: timesyncd runs with these servers. Observed: it is on the bus and its
    /// `SystemNTPServers` (org.freedesktop.timesync1(5)) contains every one of them, so a
    /// timesyncd not restarted since the file changed, or stopped, shows as drift.
    pub effective: bool,
}

/// `timesyncd.servers`, always named `system`: the servers systemd-timesyncd reports in
/// `SystemNTPServers`, read for an `NTPClient` with `managed: false`, which routerd leaves to
/// the operator. Observed only; desired `servers` must all appear, in any order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimesyncServersSpec {
    /// Desired: the servers the config names. Observed: timesyncd's system servers.
    pub servers: Vec<String>,
}

/// `routerd.logSink`, named after its `LogSink` resource: a destination the supervisor forwards
/// routerd's own events to ([`crate::logsink`]). It lives in the routerd process, so it is
/// absent after a restart until the next reconcile installs it again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogSinkSpec {
    /// The LogSink resource's name, the artifact's name.
    pub name: String,
    /// The lowest severity forwarded.
    pub min_level: LogSeverity,
    /// Where the events go.
    pub output: LogOutput,
    /// Observed only: what was delivered since the sink was installed; never compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<LogDelivery>,
}

/// An event's severity, lowest first (RFC 5424 section 6.2.1 names the codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogSeverity {
    /// Debug: severity code 7.
    Debug,
    /// Informational: code 6.
    Info,
    /// Warning: code 4.
    Warning,
    /// Error: code 3.
    Error,
}

impl LogSeverity {
    /// The RFC 5424 severity code.
    pub fn code(self) -> u8 {
        match self {
            Self::Debug => 7,
            Self::Info => 6,
            Self::Warning => 4,
            Self::Error => 3,
        }
    }

    /// The lowercase name (`warning`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

/// Where a log sink's events go.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum LogOutput {
    /// A syslog receiver.
    Syslog(SyslogOutput),
    /// A program run once per event, the event as JSON on its standard input.
    Plugin(PluginOutput),
}

/// A syslog receiver of a log sink.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyslogOutput {
    /// The transport.
    pub network: SyslogTransport,
    /// `host:port` for `udp` and `tcp`; a socket path for `unix` and `unixgram`; `None` for
    /// `local` (`/dev/log`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// The facility code, 0 (`kern`) to 23 (`local7`), RFC 5424 section 6.2.1.
    pub facility: u8,
    /// The APP-NAME (RFC 5424) or TAG (local sockets): 1 to 48 printable ASCII characters.
    pub tag: String,
}

/// How a log sink reaches its syslog receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyslogTransport {
    /// The local syslog socket, `/dev/log` (journald's or rsyslog's).
    Local,
    /// A stream unix socket.
    Unix,
    /// A datagram unix socket.
    Unixgram,
    /// TCP, RFC 6587 octet-counted frames.
    Tcp,
    /// UDP, one message per datagram (RFC 5426).
    Udp,
}

/// A plugin program of a log sink.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginOutput {
    /// The program's absolute path.
    pub path: String,
    /// How long one run may take before it is killed, in milliseconds.
    pub timeout_ms: u64,
}

/// What a log sink delivered since it was installed (observed only).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogDelivery {
    /// Events handed to the receiver.
    pub sent: u64,
    /// Events the receiver could not take (send error, plugin failure or timeout).
    pub failed: u64,
    /// Events dropped because the sink's queue was full (the receiver is too slow).
    pub dropped: u64,
    /// The last delivery error, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
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
            Self::FwmarkRule(r) => ArtifactKey::new(ArtifactKind::Ipv4FwmarkRule, r.key_name()),
            Self::Sysctl(s) => ArtifactKey::new(ArtifactKind::Sysctl, s.key.clone()),
            Self::Ip6Tunnel(t) => ArtifactKey::new(ArtifactKind::Ipip6Tunnel, t.ifname.clone()),
            Self::PppLink(p) => ArtifactKey::new(ArtifactKind::PppLink, p.ifname.clone()),
            Self::NftTable(t) => ArtifactKey::new(ArtifactKind::NftTable, t.key_name()),
            Self::NftTableObserved(t) => ArtifactKey::new(ArtifactKind::NftTable, t.key_name()),
            Self::Unit(u) => ArtifactKey::new(ArtifactKind::SystemdService, u.unit.clone()),
            Self::DnsmasqSection(d) => {
                ArtifactKey::new(ArtifactKind::DnsmasqConfig, d.section.clone())
            }
            Self::DhcpClient(d) => ArtifactKey::new(d.binding.kind(), d.ifname.clone()),
            Self::Hostname(_) => ArtifactKey::new(ArtifactKind::Hostname, "system"),
            Self::Health(h) => ArtifactKey::new(ArtifactKind::HealthCheck, h.name.clone()),
            Self::State(v) => ArtifactKey::new(ArtifactKind::StateVariable, v.variable.clone()),
            Self::Aftr(a) => ArtifactKey::new(ArtifactKind::AftrAddress, a.ifname.clone()),
            Self::FileBlock(f) => ArtifactKey::new(ArtifactKind::File, f.key_name()),
            Self::PppSecret(p) => ArtifactKey::new(ArtifactKind::PppSecret, p.key_name()),
            Self::Timesyncd(t) => ArtifactKey::new(ArtifactKind::TimesyncdConfig, t.name.clone()),
            Self::TimesyncServers(_) => ArtifactKey::new(ArtifactKind::TimesyncdServers, "system"),
            Self::LogSink(l) => ArtifactKey::new(ArtifactKind::LogSink, l.name.clone()),
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

#[cfg(test)]
#[path = "artifact_tests.rs"]
mod tests;
