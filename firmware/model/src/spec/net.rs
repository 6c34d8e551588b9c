//! Specs of links and addresses (`net.routerd.net/v1alpha1`): `Interface`, `PPPoEInterface`,
//! `DSLiteTunnel`, static and DHCP addresses, IPv6 prefix delegation, and the extension kinds
//! that are not in the v1alpha1 schema (`docs/adr/0004-vlan-interface-kind.md`): `VLANInterface`
//! and the static route kinds `IPv4StaticRoute` / `IPv6StaticRoute`. Each spec type is followed
//! by its own checks (`Validate`). No I/O.

use serde::{Deserialize, Serialize};

use super::AddressFamily::{self, Ipv4, Ipv6};
use super::{WhenSpec, lenient};
use crate::addr;
use crate::kind::ResourceKind;
use crate::validate::Validate;
use crate::validate::check::{Check, Target};

const PREFIX_DELEGATION: Target = Target::Kind(ResourceKind::Ipv6PrefixDelegation);
const DELEGATED_ADDRESS: Target = Target::Kind(ResourceKind::Ipv6DelegatedAddress);
const INTERFACE: Target = Target::Kind(ResourceKind::Interface);

/// `Interface`: an existing kernel link that other resources refer to by `metadata.name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InterfaceSpec {
    /// `ifname` (required): kernel interface name, 1..=15 bytes, no `/`, `:` or whitespace.
    pub ifname: String,
    /// `managed` (required): whether routerd changes the link's state.
    pub managed: bool,
    /// `adminUp`: set the link administratively up; default `false` (leave as is).
    #[serde(default)]
    pub admin_up: bool,
    /// `owner`: who owns the link; absent means `routerd` when `managed`, else `external`.
    pub owner: Option<InterfaceOwner>,
    /// `mtu`: bytes, 68..=65535 (IPv4's minimum, RFC 791; the kernel may refuse more than the
    /// device takes); set through rtnetlink (`IFLA_MTU`) and repaired when it drifts, like the
    /// admin state. Absent leaves the MTU as it is. Applied only when routerd manages the link.
    /// A field routerd added after the v1alpha1 schema: not serialized when absent, so a
    /// config without it round-trips to the schema's fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
}

impl Validate for InterfaceSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.ifname("ifname", &self.ifname);
        c.range("mtu", self.mtu.map(u64::from), 68, 65535);
    }
}

/// `Interface.owner`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InterfaceOwner {
    /// `routerd`.
    Routerd,
    /// `external`: another tool manages the link; routerd only reads it.
    External,
}

/// `PPPoEInterface`: a PPPoE session over an Ethernet interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PppoeInterfaceSpec {
    /// `interface` (required): names the underlying interface resource.
    pub interface: String,
    /// `ifname`: name of the ppp link (`ppp0`); absent lets pppd choose.
    pub ifname: Option<String>,
    /// `username` (required): PPP user name.
    pub username: String,
    /// `password`: PPP password, in `secretEncoding`; mutually exclusive with `passwordFile`.
    pub password: Option<String>,
    /// `passwordFile`: file holding the password.
    pub password_file: Option<String>,
    /// `serviceName`: PPPoE service name to request.
    pub service_name: Option<String>,
    /// `acName`: access concentrator name to require.
    pub ac_name: Option<String>,
    /// `defaultRoute`: install a default route via the session; default `false`.
    #[serde(default)]
    pub default_route: bool,
    /// `usePeerDNS`: use DNS servers from the peer; default `false`.
    #[serde(default, rename = "usePeerDNS")]
    pub use_peer_dns: bool,
    /// `persist`: redial after the session drops; absent means `true`.
    pub persist: Option<bool>,
    /// `mtu`: bytes, 576..=1500; absent means pppd's default (1492).
    pub mtu: Option<u16>,
    /// `mru`: bytes, 576..=1500; absent means pppd's default (1492).
    pub mru: Option<u16>,
    /// `lcpInterval`: seconds between LCP echo requests.
    pub lcp_interval: Option<u32>,
    /// `lcpFailure`: unanswered LCP echoes before the link is declared down.
    pub lcp_failure: Option<u32>,
    /// `ipv6`: negotiate IPv6CP; default `false`.
    #[serde(default)]
    pub ipv6: bool,
    /// `managed`: routerd runs the session; default `false`.
    #[serde(default)]
    pub managed: bool,
    /// `secretEncoding`: encoding of `password`; absent means `plain`.
    pub secret_encoding: Option<SecretEncoding>,
}

impl Validate for PppoeInterfaceSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("interface", &self.interface, Target::Interface);
        if let Some(ifname) = &self.ifname {
            c.ifname("ifname", ifname);
        }
        c.range("mtu", self.mtu.map(u64::from), 576, 1500);
        c.range("mru", self.mru.map(u64::from), 576, 1500);
        if self.password.is_some() && self.password_file.is_some() {
            c.error("passwordFile", "set password or passwordFile, not both");
        }
        // pppd reads a secret starting with `@` as the name of a file holding it (pppd(8)).
        if self.password.as_deref().is_some_and(|p| p.starts_with('@')) {
            c.error(
                "password",
                "a password starting with `@` cannot be given inline; use passwordFile",
            );
        }
        if self.password.as_deref().is_some_and(|p| p.chars().any(char::is_control)) {
            c.error("password", "the password contains a control character");
        }
        if self.password_file.as_deref().is_some_and(|f| !f.starts_with('/')) {
            c.error("passwordFile", "not an absolute path");
        }
    }
}

/// `PPPoEInterface.secretEncoding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SecretEncoding {
    /// `plain`.
    Plain,
}

/// `VLANInterface` (routerd-rs extension, `docs/adr/0004-vlan-interface-kind.md`): a VLAN link
/// (kernel `vlan` link type, `ip link add link PARENT name IFNAME type vlan id ID`) that routerd
/// creates on top of an `Interface`.
///
/// Other resources name it by `metadata.name` in their `interface` fields, like an `Interface`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VlanInterfaceSpec {
    /// `interface` (required): names the parent `Interface` resource, whose link carries the
    /// tagged frames.
    pub interface: String,
    /// `vlanID` (required): the VLAN ID, 1..=4094 (0 means "priority tag only" and 4095 is
    /// reserved, IEEE 802.1Q table 9-2).
    #[serde(rename = "vlanID")]
    pub vlan_id: u16,
    /// `ifname`: kernel name of the VLAN link, 1..=15 bytes, no `/`, `:` or whitespace; absent
    /// means `<parent ifname>.<vlanID>` (`eth1.20`), see [`VlanInterfaceSpec::ifname_on`].
    pub ifname: Option<String>,
    /// `protocol`: the tag's EtherType, `802.1Q` (C-tag, default) or `802.1ad` (S-tag, for
    /// QinQ), as `ip link ... type vlan protocol` spells them.
    #[serde(default)]
    pub protocol: VlanProtocol,
    /// `adminUp`: set the link administratively up; default `true` (a link routerd creates is
    /// brought up). `false` keeps it down.
    #[serde(default = "default_true")]
    pub admin_up: bool,
    /// `mtu`: bytes, 68..=65535; absent means the kernel's default (the parent's MTU).
    pub mtu: Option<u32>,
}

impl VlanInterfaceSpec {
    /// The kernel name of the VLAN link on a parent link named `parent_ifname`: `ifname`, or
    /// `<parent_ifname>.<vlanID>` when absent.
    pub fn ifname_on(&self, parent_ifname: &str) -> String {
        match &self.ifname {
            Some(ifname) => ifname.clone(),
            None => format!("{parent_ifname}.{}", self.vlan_id),
        }
    }
}

impl Validate for VlanInterfaceSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        // A VLAN rides on a real link: not on a PPP session, a tunnel or another VLAN resource.
        c.reference("interface", &self.interface, INTERFACE);
        c.range("vlanID", Some(u64::from(self.vlan_id)), 1, 4094);
        if let Some(ifname) = &self.ifname {
            c.ifname("ifname", ifname);
        }
        c.range("mtu", self.mtu.map(u64::from), 68, 65535);
    }
}

/// `VLANInterface.protocol`: the EtherType of the VLAN tag (`IFLA_VLAN_PROTOCOL`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum VlanProtocol {
    /// `802.1Q`: customer tag, EtherType 0x8100.
    #[default]
    #[serde(rename = "802.1Q")]
    Ieee8021Q,
    /// `802.1ad`: service tag (QinQ outer tag), EtherType 0x88a8.
    #[serde(rename = "802.1ad")]
    Ieee8021Ad,
}

/// `IPv4StaticAddress`: an address assigned to an interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv4StaticAddressSpec {
    /// `interface` (required): names the interface resource.
    pub interface: String,
    /// `address` (required): interface address with prefix length, host bits allowed
    /// (`192.168.1.1/24`).
    pub address: String,
    /// `exclusive`: remove other IPv4 addresses from the interface; default `false`.
    #[serde(default)]
    pub exclusive: bool,
    /// `allowOverlap`: allow a subnet that overlaps another interface's; default `false`.
    #[serde(default)]
    pub allow_overlap: bool,
    /// `allowOverlapReason`: why the overlap is intended (shown in plans).
    pub allow_overlap_reason: Option<String>,
}

impl Validate for Ipv4StaticAddressSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("interface", &self.interface, Target::Interface);
        if let Err(e) = addr::parse_interface_address(&self.address, Some(Ipv4)) {
            c.error("address", e.to_string());
        }
    }
}

/// `IPv4DHCPAddress`: obtain an IPv4 address by DHCP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv4DhcpAddressSpec {
    /// `interface` (required): names the interface resource.
    pub interface: String,
    /// `client`: DHCP client implementation; absent means the engine default.
    pub client: Option<String>,
    /// `required`: the router is not ready without a lease; default `false`.
    #[serde(default)]
    pub required: bool,
    /// `useRoutes`: install routes (and the default route) from the lease; absent: `true`.
    pub use_routes: Option<bool>,
    /// `useDNS`: use DNS servers from the lease; absent means `true`.
    #[serde(rename = "useDNS")]
    pub use_dns: Option<bool>,
    /// `routeMetric`: metric of routes from the lease; absent means the client default.
    pub route_metric: Option<u32>,
}

impl Validate for Ipv4DhcpAddressSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("interface", &self.interface, Target::Interface)
    }
}

/// `IPv6DHCPAddress`: obtain an IPv6 address by DHCPv6 (IA_NA).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv6DhcpAddressSpec {
    /// `interface` (required): names the interface resource.
    pub interface: String,
    /// `client`: DHCPv6 client implementation; absent means the engine default.
    pub client: Option<String>,
    /// `required`: the router is not ready without a lease; default `false`.
    #[serde(default)]
    pub required: bool,
}

impl Validate for Ipv6DhcpAddressSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("interface", &self.interface, Target::Interface)
    }
}

/// `IPv6PrefixDelegation`: request a delegated prefix (DHCPv6 IA_PD) on an upstream interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv6PrefixDelegationSpec {
    /// `interface` (required): names the upstream interface resource.
    pub interface: String,
    /// `client`: DHCPv6 client implementation; absent means the engine default.
    pub client: Option<String>,
    /// `profile`: ISP quirks; absent means `default`.
    pub profile: Option<PdProfile>,
    /// `prefixLength`: prefix length hint, 1..=128; absent means none (60 for NTT profiles).
    pub prefix_length: Option<u8>,
    /// `iaid`: IAID to use, as text. YAML integers are accepted.
    #[serde(default, deserialize_with = "lenient::opt_string")]
    pub iaid: Option<String>,
    /// `duidType`: DUID kind; absent or `""` means the client default (`link-layer` for NTT).
    pub duid_type: Option<DuidType>,
    /// `duidRawData`: DUID bytes as hex, overriding `duidType`.
    pub duid_raw_data: Option<String>,
    /// `hintFromState`: hint the last delegated prefix; default `false`.
    #[serde(default)]
    pub hint_from_state: bool,
    /// `convergenceTimeout`: Go duration to wait for a delegation before reporting failure.
    pub convergence_timeout: Option<String>,
    /// `required`: the router is not ready without a prefix; default `false`.
    #[serde(default)]
    pub required: bool,
}

impl Validate for Ipv6PrefixDelegationSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("interface", &self.interface, Target::Interface);
        c.range("prefixLength", self.prefix_length.map(u64::from), 1, 128);
        c.duration("convergenceTimeout", self.convergence_timeout.as_ref());
        if let Some(iaid) = &self.iaid {
            let decimal = iaid.parse::<u32>().is_ok();
            if !decimal {
                c.hex("iaid", iaid, 8);
            }
        }
        if let Some(raw) = &self.duid_raw_data {
            c.hex_bytes("duidRawData", raw);
        }
    }
}

/// `IPv6PrefixDelegation.profile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PdProfile {
    /// `default`.
    Default,
    /// `ntt-ngn-direct-hikari-denwa`: NTT NGN with Hikari Denwa, PD directly from the NGN.
    NttNgnDirectHikariDenwa,
    /// `ntt-hgw-lan-pd`: PD from the LAN side of an NTT home gateway.
    NttHgwLanPd,
}

/// `IPv6PrefixDelegation.duidType` (RFC 8415 section 11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DuidType {
    /// `""`: the client default.
    #[serde(rename = "")]
    Default,
    /// `vendor`: DUID-EN.
    Vendor,
    /// `uuid`: DUID-UUID.
    Uuid,
    /// `link-layer-time`: DUID-LLT.
    LinkLayerTime,
    /// `link-layer`: DUID-LL.
    LinkLayer,
}

/// `IPv6DelegatedAddress`: an address taken from a delegated prefix and put on an interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv6DelegatedAddressSpec {
    /// `prefixDelegation` (required): names an `IPv6PrefixDelegation`.
    pub prefix_delegation: String,
    /// `interface` (required): names the downstream interface resource.
    pub interface: String,
    /// `subnetID`: hexadecimal subnet number inside the delegated prefix (`0`, `1`, `a0`);
    /// absent means `0`. YAML integers are accepted.
    #[serde(default, rename = "subnetID", deserialize_with = "lenient::opt_string")]
    pub subnet_id: Option<String>,
    /// `addressSuffix` (required): interface identifier written as an IPv6 address (`::1`).
    pub address_suffix: String,
    /// `sendRA`: send router advertisements on the interface; default `false`.
    #[serde(default, rename = "sendRA")]
    pub send_ra: bool,
    /// `announce`: advertise the prefix in RAs; default `false`.
    #[serde(default)]
    pub announce: bool,
    /// `when`: state gate; absent means always active.
    pub when: Option<WhenSpec>,
}

impl Validate for Ipv6DelegatedAddressSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("prefixDelegation", &self.prefix_delegation, PREFIX_DELEGATION);
        c.reference("interface", &self.interface, Target::Interface);
        if let Some(subnet) = &self.subnet_id {
            c.hex("subnetID", subnet, 16);
        }
        c.ip("addressSuffix", &self.address_suffix, Some(Ipv6));
        c.when("when", self.when.as_ref());
    }
}

/// `DSLiteTunnel`: an IPv4-in-IPv6 tunnel to an AFTR (RFC 6333).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DsLiteTunnelSpec {
    /// `interface` (required): names the IPv6 upstream interface resource.
    pub interface: String,
    /// `tunnelName`: kernel name of the tunnel link (`ds-lite0`); absent derives one from
    /// `metadata.name`.
    pub tunnel_name: Option<String>,
    /// `aftrFQDN`: AFTR host name to resolve (AAAA).
    #[serde(rename = "aftrFQDN")]
    pub aftr_fqdn: Option<String>,
    /// `aftrDNSServers`: IP addresses of DNS servers used to resolve `aftrFQDN`.
    #[serde(default, rename = "aftrDNSServers")]
    pub aftr_dns_servers: Vec<String>,
    /// `aftrAddressOrdinal`: which resolved AAAA (1-based) to use.
    pub aftr_address_ordinal: Option<u32>,
    /// `aftrAddressSelection`: how `aftrAddressOrdinal` picks; absent means `ordinal`.
    pub aftr_address_selection: Option<AftrAddressSelection>,
    /// `remoteAddress`: AFTR IPv6 address, instead of resolving `aftrFQDN`.
    pub remote_address: Option<String>,
    /// `localAddress`: local IPv6 tunnel endpoint, for `localAddressSource: static`.
    pub local_address: Option<String>,
    /// `localAddressSource`: where the local endpoint comes from; absent means `interface`.
    pub local_address_source: Option<LocalAddressSource>,
    /// `localDelegatedAddress`: names an `IPv6DelegatedAddress`, for
    /// `localAddressSource: delegatedAddress`.
    pub local_delegated_address: Option<String>,
    /// `localAddressSuffix`: interface identifier (`::100`) combined with the source prefix.
    pub local_address_suffix: Option<String>,
    /// `defaultRoute`: route IPv4 default traffic into the tunnel; default `false`.
    #[serde(default)]
    pub default_route: bool,
    /// `routeMetric`: metric of the tunnel's default route.
    pub route_metric: Option<u32>,
    /// `mtu`: tunnel MTU in bytes, 1280..=65535; absent means the kernel default.
    pub mtu: Option<u16>,
    /// `encapsulationLimit`: ip6tnl `encaplimit`, a number 0..=255 or `none`.
    #[serde(default, deserialize_with = "lenient::opt_string")]
    pub encapsulation_limit: Option<String>,
    /// `when`: state gate; absent means always active.
    pub when: Option<WhenSpec>,
}

/// The fallback device the kernel creates in every namespace once `ip6_tunnel` is loaded
/// (`net/ipv6/ip6_tunnel.c`, `ip6_tnl_init_net`); no other link can take its name.
const IP6TNL_FALLBACK: &str = "ip6tnl0";

impl Validate for DsLiteTunnelSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("interface", &self.interface, Target::Interface);
        if let Some(name) = &self.tunnel_name {
            c.ifname("tunnelName", name);
            c.require(
                name != IP6TNL_FALLBACK,
                "tunnelName",
                "tunnelName \"ip6tnl0\" is the kernel's fallback tunnel device; choose another \
                 name",
            );
        }
        c.ips("aftrDNSServers", &self.aftr_dns_servers, None);
        c.min("aftrAddressOrdinal", self.aftr_address_ordinal.map(u64::from), 1);
        c.opt_ip("remoteAddress", self.remote_address.as_ref(), Some(Ipv6));
        c.opt_ip("localAddress", self.local_address.as_ref(), Some(Ipv6));
        c.opt_ip("localAddressSuffix", self.local_address_suffix.as_ref(), Some(Ipv6));
        let delegated = self.local_delegated_address.as_ref();
        c.opt_reference("localDelegatedAddress", delegated, DELEGATED_ADDRESS);
        match self.local_address_source {
            Some(LocalAddressSource::Static) if self.local_address.is_none() => {
                c.error(
                    "localAddressSource",
                    "localAddress is required when localAddressSource is static",
                );
            }
            Some(LocalAddressSource::DelegatedAddress) if delegated.is_none() => c.error(
                "localAddressSource",
                "localDelegatedAddress is required when localAddressSource is delegatedAddress",
            ),
            _ => {}
        }
        c.range("mtu", self.mtu.map(u64::from), 1280, 65535);
        if let Some(limit) = &self.encapsulation_limit {
            let ok = limit == "none" || limit.parse::<u8>().is_ok();
            c.require(ok, "encapsulationLimit", "encapsulationLimit must be 0..255 or none");
        }
        c.when("when", self.when.as_ref());
    }
}

/// `DSLiteTunnel.aftrAddressSelection`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AftrAddressSelection {
    /// `ordinal`: the n-th address; fail if there are fewer.
    Ordinal,
    /// `ordinalModulo`: the n-th address modulo the count.
    OrdinalModulo,
}

/// `DSLiteTunnel.localAddressSource`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum LocalAddressSource {
    /// `interface`: a global address of `interface`.
    Interface,
    /// `static`: `localAddress`.
    Static,
    /// `delegatedAddress`: the address of `localDelegatedAddress`.
    DelegatedAddress,
}

/// `IPv4StaticRoute` (routerd-rs addition): a route in an IPv4 table.
///
/// At least one of `interface` and `via` is required.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv4StaticRouteSpec {
    /// `interface`: names the outgoing interface resource.
    pub interface: Option<String>,
    /// `destination` (required): IPv4 prefix with host bits zero; `0.0.0.0/0` for default
    /// (the keyword `default` is rejected).
    pub destination: String,
    /// `via`: IPv4 gateway address.
    pub via: Option<String>,
    /// `metric`: route priority, lower wins; default 0.
    #[serde(default)]
    pub metric: u32,
    /// `table`: routing table ID; default 254 (`main`); 0 and 255 (`local`) are rejected.
    #[serde(default = "main_table")]
    pub table: u32,
}

impl Validate for Ipv4StaticRouteSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        let (interface, via) = (self.interface.as_ref(), self.via.as_ref());
        let route =
            StaticRoute { interface, destination: &self.destination, via, table: self.table };
        route.check(c, Ipv4);
    }
}

/// `IPv6StaticRoute` (routerd-rs addition): a route in an IPv6 table.
///
/// At least one of `interface` and `via` is required.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv6StaticRouteSpec {
    /// `interface`: names the outgoing interface resource.
    pub interface: Option<String>,
    /// `destination` (required): IPv6 prefix with host bits zero; `::/0` for default.
    pub destination: String,
    /// `via`: IPv6 gateway address (link-local gateways need `interface`).
    pub via: Option<String>,
    /// `metric`: route priority, lower wins; default 0.
    #[serde(default)]
    pub metric: u32,
    /// `table`: routing table ID; default 254 (`main`); 0 and 255 (`local`) are rejected.
    #[serde(default = "main_table")]
    pub table: u32,
}

impl Validate for Ipv6StaticRouteSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        let (interface, via) = (self.interface.as_ref(), self.via.as_ref());
        let route =
            StaticRoute { interface, destination: &self.destination, via, table: self.table };
        route.check(c, Ipv6);
    }
}

/// The family-independent view of a static route spec, for the checks both kinds share.
struct StaticRoute<'s> {
    interface: Option<&'s String>,
    destination: &'s str,
    via: Option<&'s String>,
    table: u32,
}

impl StaticRoute<'_> {
    fn check(&self, c: &mut Check<'_, '_>, family: AddressFamily) {
        c.opt_reference("interface", self.interface, Target::Interface);
        if let Err(e) = addr::parse_prefix(self.destination, Some(family)) {
            c.error("destination", e.to_string());
        }
        c.opt_ip("via", self.via, Some(family));
        if self.interface.is_none() && self.via.is_none() {
            c.error("", "at least one of interface or via is required");
        }
        match self.table {
            0 => c.error("table", "table 0 is not a routing table (unspecified)"),
            LOCAL_TABLE => c.error("table", "table 255 (local) is reserved for the kernel"),
            _ => {}
        }
    }
}

/// The kernel's main routing table, `RT_TABLE_MAIN` in `linux/rtnetlink.h`.
pub const MAIN_TABLE: u32 = 254;

/// The kernel's local routing table, `RT_TABLE_LOCAL` in `linux/rtnetlink.h`.
pub const LOCAL_TABLE: u32 = 255;

fn main_table() -> u32 {
    MAIN_TABLE
}

fn default_true() -> bool {
    true
}
