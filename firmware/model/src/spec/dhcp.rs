//! Specs of the LAN services (`net.routerd.net/v1alpha1`): DHCPv4/DHCPv6 servers and scopes,
//! the router's self-address policy, and DNS conditional forwarders. Plain data; no I/O.

use serde::{Deserialize, Serialize};

use super::{AddressFamily, WhenSpec};

/// `IPv4DHCPServer`: a DHCPv4 (and optionally DNS) server daemon.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv4DhcpServerSpec {
    /// `server`: the daemon; absent means `dnsmasq`.
    pub server: Option<Ipv4DhcpServerKind>,
    /// `managed`: routerd writes the config and runs the daemon; default `false`.
    #[serde(default)]
    pub managed: bool,
    /// `listenInterfaces`: names of interface resources to serve on; absent means every
    /// interface that has a scope.
    #[serde(default)]
    pub listen_interfaces: Vec<String>,
    /// `dns`: the DNS forwarder built into the daemon.
    pub dns: Option<Ipv4DhcpServerDnsSpec>,
}

/// `IPv4DHCPServer.server`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ipv4DhcpServerKind {
    /// `dnsmasq`.
    Dnsmasq,
    /// `kea`.
    Kea,
    /// `dhcpd` (ISC).
    Dhcpd,
}

/// `IPv4DHCPServer.dns`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv4DhcpServerDnsSpec {
    /// `enabled`: serve DNS; default `false`.
    #[serde(default)]
    pub enabled: bool,
    /// `upstreamSource`: where upstream resolvers come from; absent means `system`.
    pub upstream_source: Option<DnsUpstreamSource>,
    /// `upstreamInterface`: names the interface resource whose DHCP lease supplies upstreams
    /// (`upstreamSource: dhcp4`).
    pub upstream_interface: Option<String>,
    /// `upstreamServers`: upstream resolver IP addresses (`upstreamSource: static`).
    #[serde(default)]
    pub upstream_servers: Vec<String>,
    /// `cacheSize`: cached names; absent means the daemon default.
    pub cache_size: Option<u32>,
}

/// `IPv4DHCPServer.dns.upstreamSource`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DnsUpstreamSource {
    /// `dhcp4`: from the DHCPv4 lease of `upstreamInterface`.
    Dhcp4,
    /// `static`: `upstreamServers`.
    Static,
    /// `system`: the host's resolv.conf.
    System,
    /// `none`: no upstream (local names only).
    None,
}

/// `IPv4DHCPScope`: an address pool served on one interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv4DhcpScopeSpec {
    /// `server` (required): names an `IPv4DHCPServer`.
    pub server: String,
    /// `interface` (required): names the interface resource to serve on.
    pub interface: String,
    /// `rangeStart` (required): first IPv4 address of the pool.
    pub range_start: String,
    /// `rangeEnd` (required): last IPv4 address of the pool, not below `rangeStart`.
    pub range_end: String,
    /// `leaseTime`: Go duration (`12h`); absent means the daemon default.
    pub lease_time: Option<String>,
    /// `routerSource`: where option 3 comes from; absent means `interfaceAddress`.
    pub router_source: Option<RouterSource>,
    /// `router`: IPv4 gateway to announce (`routerSource: static`).
    pub router: Option<String>,
    /// `dnsSource`: where option 6 comes from; absent means `self`.
    pub dns_source: Option<Ipv4DnsSource>,
    /// `dnsInterface`: names the interface resource whose lease supplies DNS servers
    /// (`dnsSource: dhcp4`).
    pub dns_interface: Option<String>,
    /// `dnsServers`: IPv4 DNS servers to announce (`dnsSource: static`).
    #[serde(default)]
    pub dns_servers: Vec<String>,
    /// `authoritative`: answer DHCPNAK for unknown leases; default `false`.
    #[serde(default)]
    pub authoritative: bool,
    /// `when`: state gate; absent means always active.
    pub when: Option<WhenSpec>,
}

/// `IPv4DHCPScope.routerSource`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RouterSource {
    /// `interfaceAddress`: the server's address on the scope's interface.
    InterfaceAddress,
    /// `static`: `router`.
    Static,
    /// `none`: announce no router.
    None,
}

/// `IPv4DHCPScope.dnsSource`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ipv4DnsSource {
    /// `dhcp4`: relay the DNS servers of `dnsInterface`'s lease.
    Dhcp4,
    /// `static`: `dnsServers`.
    Static,
    /// `self`: the router itself.
    #[serde(rename = "self")]
    SelfAddress,
    /// `none`: announce no DNS server.
    None,
}

/// `IPv6DHCPServer`: a DHCPv6/RA daemon.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv6DhcpServerSpec {
    /// `server`: the daemon; absent means `dnsmasq`.
    pub server: Option<Ipv6DhcpServerKind>,
    /// `managed`: routerd writes the config and runs the daemon; default `false`.
    #[serde(default)]
    pub managed: bool,
    /// `listenInterfaces`: names of interface resources to serve on.
    #[serde(default)]
    pub listen_interfaces: Vec<String>,
}

/// `IPv6DHCPServer.server`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ipv6DhcpServerKind {
    /// `dnsmasq`.
    Dnsmasq,
}

/// `IPv6DHCPScope`: RA and stateless DHCPv6 on the interface of a delegated address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv6DhcpScopeSpec {
    /// `server` (required): names an `IPv6DHCPServer`.
    pub server: String,
    /// `delegatedAddress` (required): names an `IPv6DelegatedAddress`; its interface and
    /// prefix are served.
    pub delegated_address: String,
    /// `mode`: absent means `stateless`.
    pub mode: Option<Ipv6ScopeMode>,
    /// `leaseTime`: Go duration for RA/DHCPv6 lifetimes.
    pub lease_time: Option<String>,
    /// `defaultRoute`: advertise the router as default gateway; default `false`.
    #[serde(default)]
    pub default_route: bool,
    /// `dnsSource`: where RDNSS / DHCPv6 DNS come from; absent means `self`.
    pub dns_source: Option<Ipv6DnsSource>,
    /// `selfAddressPolicy`: names a `SelfAddressPolicy` choosing the router address announced
    /// for `dnsSource: self`.
    pub self_address_policy: Option<String>,
    /// `dnsServers`: IPv6 DNS servers (`dnsSource: static`).
    #[serde(default)]
    pub dns_servers: Vec<String>,
    /// `when`: state gate; absent means always active.
    pub when: Option<WhenSpec>,
}

/// `IPv6DHCPScope.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ipv6ScopeMode {
    /// `stateless`: SLAAC plus stateless DHCPv6 for options.
    Stateless,
    /// `ra-only`: router advertisements only.
    RaOnly,
}

/// `IPv6DHCPScope.dnsSource`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ipv6DnsSource {
    /// `self`: the router's address chosen by `selfAddressPolicy`.
    #[serde(rename = "self")]
    SelfAddress,
    /// `static`: `dnsServers`.
    Static,
    /// `none`: announce no DNS server.
    None,
}

/// `SelfAddressPolicy`: ordered candidates for "the router's own address" on a LAN.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SelfAddressPolicySpec {
    /// `addressFamily` (required): family of every candidate.
    pub address_family: AddressFamily,
    /// `candidates` (required, non-empty): tried in order; the first available wins.
    pub candidates: Vec<SelfAddressCandidate>,
}

/// One entry of `SelfAddressPolicy.candidates`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SelfAddressCandidate {
    /// `source` (required): where the address comes from.
    pub source: SelfAddressSource,
    /// `interface`: names the interface resource (`source: interfaceAddress`).
    pub interface: Option<String>,
    /// `delegatedAddress`: names an `IPv6DelegatedAddress` (`source: delegatedAddress`).
    pub delegated_address: Option<String>,
    /// `address`: the address of the policy's family (`source: static`).
    pub address: Option<String>,
    /// `addressSuffix`: interface identifier (`::1`) combined with the source prefix.
    pub address_suffix: Option<String>,
    /// `matchSuffix`: only interface addresses ending in this identifier (`::1`) match.
    pub match_suffix: Option<String>,
    /// `ordinal`: pick the n-th (1-based) matching address.
    pub ordinal: Option<u32>,
}

/// `SelfAddressPolicy.candidates[].source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SelfAddressSource {
    /// `delegatedAddress`: the address of an `IPv6DelegatedAddress`.
    DelegatedAddress,
    /// `interfaceAddress`: an address currently on `interface`.
    InterfaceAddress,
    /// `static`: `address`.
    Static,
}

/// `DNSConditionalForwarder`: send queries for one domain to specific resolvers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DnsConditionalForwarderSpec {
    /// `domain` (required): DNS domain, e.g. `flets-east.jp`.
    pub domain: String,
    /// `upstreamSource`: where the resolvers come from; absent means `static`.
    pub upstream_source: Option<ForwarderUpstreamSource>,
    /// `upstreamInterface`: names the interface resource whose DHCP lease supplies resolvers.
    pub upstream_interface: Option<String>,
    /// `upstreamServers`: resolver IP addresses (`upstreamSource: static`).
    #[serde(default)]
    pub upstream_servers: Vec<String>,
}

/// `DNSConditionalForwarder.upstreamSource`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForwarderUpstreamSource {
    /// `static`: `upstreamServers`.
    Static,
    /// `dhcp4`: from the DHCPv4 lease of `upstreamInterface`.
    Dhcp4,
    /// `dhcp6`: from the DHCPv6 reply on `upstreamInterface`.
    Dhcp6,
}
