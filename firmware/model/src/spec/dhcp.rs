//! Specs of the LAN services (`net.routerd.net/v1alpha1`): DHCPv4/DHCPv6 servers and scopes,
//! the router's self-address policy, and DNS conditional forwarders. Each spec type is followed
//! by its own checks (`Validate`). No I/O.

use serde::{Deserialize, Serialize};

use super::AddressFamily::{Ipv4, Ipv6};
use super::{AddressFamily, WhenSpec};
use crate::kind::ResourceKind;
use crate::validate::Validate;
use crate::validate::check::{Check, Target};

const DHCP4_SERVER: Target = Target::Kind(ResourceKind::Ipv4DhcpServer);
const DHCP6_SERVER: Target = Target::Kind(ResourceKind::Ipv6DhcpServer);
const DELEGATED_ADDRESS: Target = Target::Kind(ResourceKind::Ipv6DelegatedAddress);
const SELF_ADDRESS_POLICY: Target = Target::Kind(ResourceKind::SelfAddressPolicy);

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

impl Validate for Ipv4DhcpServerSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.references("listenInterfaces", &self.listen_interfaces, Target::Interface);
        let Some(dns) = &self.dns else { return };
        let upstream = dns.upstream_interface.as_ref();
        c.opt_reference("dns.upstreamInterface", upstream, Target::Interface);
        c.ips("dns.upstreamServers", &dns.upstream_servers, None);
        match dns.upstream_source {
            Some(DnsUpstreamSource::Dhcp4) if dns.upstream_interface.is_none() => c.error(
                "dns.upstreamSource",
                "dns.upstreamInterface is required when dns.upstreamSource is dhcp4",
            ),
            Some(DnsUpstreamSource::Static) if dns.upstream_servers.is_empty() => c.error(
                "dns.upstreamSource",
                "dns.upstreamServers is required when dns.upstreamSource is static",
            ),
            _ => {}
        }
    }
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

impl Validate for Ipv4DhcpScopeSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("server", &self.server, DHCP4_SERVER);
        c.reference("interface", &self.interface, Target::Interface);
        let start = crate::addr::parse_ipv4(&self.range_start);
        let end = crate::addr::parse_ipv4(&self.range_end);
        match (&start, &end) {
            (Ok(start), Ok(end)) if end < start => {
                c.error("rangeEnd", format!("rangeEnd {end} is before rangeStart {start}"));
            }
            _ => {}
        }
        if let Err(e) = start {
            c.error("rangeStart", e.to_string());
        }
        if let Err(e) = end {
            c.error("rangeEnd", e.to_string());
        }
        c.duration("leaseTime", self.lease_time.as_ref());
        c.opt_ip("router", self.router.as_ref(), Some(Ipv4));
        if self.router_source == Some(RouterSource::Static) && self.router.is_none() {
            c.error("routerSource", "router is required when routerSource is static");
        }
        c.opt_reference("dnsInterface", self.dns_interface.as_ref(), Target::Interface);
        c.ips("dnsServers", &self.dns_servers, Some(Ipv4));
        if self.dns_source == Some(Ipv4DnsSource::Dhcp4) && self.dns_interface.is_none() {
            c.error("dnsSource", "dnsInterface is required when dnsSource is dhcp4");
        }
        if self.dns_source == Some(Ipv4DnsSource::Static) && self.dns_servers.is_empty() {
            c.error("dnsSource", "dnsServers is required when dnsSource is static");
        }
        c.when("when", self.when.as_ref());
    }
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

impl Validate for Ipv6DhcpServerSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.references("listenInterfaces", &self.listen_interfaces, Target::Interface);
    }
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

impl Validate for Ipv6DhcpScopeSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("server", &self.server, DHCP6_SERVER);
        c.reference("delegatedAddress", &self.delegated_address, DELEGATED_ADDRESS);
        let policy = self.self_address_policy.as_ref();
        c.opt_reference("selfAddressPolicy", policy, SELF_ADDRESS_POLICY);
        c.duration("leaseTime", self.lease_time.as_ref());
        c.ips("dnsServers", &self.dns_servers, Some(Ipv6));
        if self.dns_source == Some(Ipv6DnsSource::Static) && self.dns_servers.is_empty() {
            c.error("dnsSource", "dnsServers is required when dnsSource is static");
        }
        c.when("when", self.when.as_ref());
    }
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

impl Validate for SelfAddressPolicySpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.non_empty("candidates", &self.candidates);
        let family = Some(self.address_family);
        for (i, cand) in self.candidates.iter().enumerate() {
            let at = |field: &str| format!("candidates[{i}].{field}");
            c.opt_reference(&at("interface"), cand.interface.as_ref(), Target::Interface);
            c.opt_reference(
                &at("delegatedAddress"),
                cand.delegated_address.as_ref(),
                DELEGATED_ADDRESS,
            );
            c.opt_ip(&at("address"), cand.address.as_ref(), family);
            c.opt_ip(&at("addressSuffix"), cand.address_suffix.as_ref(), family);
            c.opt_ip(&at("matchSuffix"), cand.match_suffix.as_ref(), family);
            c.min(&at("ordinal"), cand.ordinal.map(u64::from), 1);
            let (needed, ok) = match cand.source {
                SelfAddressSource::InterfaceAddress => ("interface", cand.interface.is_some()),
                SelfAddressSource::DelegatedAddress => {
                    ("delegatedAddress", cand.delegated_address.is_some())
                }
                SelfAddressSource::Static => ("address", cand.address.is_some()),
            };
            if cand.source == SelfAddressSource::DelegatedAddress && self.address_family != Ipv6 {
                c.error(&at("source"), "delegatedAddress candidates give IPv6 addresses only");
            }
            if !ok {
                let source = serde_json::to_value(cand.source).ok();
                let source = source.as_ref().and_then(|v| v.as_str()).unwrap_or_default();
                c.error(&at("source"), format!("{needed} is required when source is {source}"));
            }
        }
    }
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

impl Validate for DnsConditionalForwarderSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.domain("domain", &self.domain);
        c.opt_reference("upstreamInterface", self.upstream_interface.as_ref(), Target::Interface);
        c.ips("upstreamServers", &self.upstream_servers, None);
        let from_lease = matches!(
            self.upstream_source,
            Some(ForwarderUpstreamSource::Dhcp4 | ForwarderUpstreamSource::Dhcp6)
        );
        if from_lease && self.upstream_interface.is_none() {
            c.error(
                "upstreamInterface",
                "upstreamInterface is required when upstreamSource is dhcp4 or dhcp6",
            );
        }
    }
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
