//! Field checks for host, link, address and LAN-service kinds: the parts of each spec that
//! serde cannot check (address syntax and family, ranges, durations, references, fields
//! required by another field's value).

use super::Validate;
use super::check::{Check, Target};
use super::names;
use crate::kind::ResourceKind;
use crate::spec::AddressFamily::{Ipv4, Ipv6};
use crate::spec::dhcp::*;
use crate::spec::net::*;
use crate::spec::system::*;

const DHCP4_SERVER: Target = Target::Kind(ResourceKind::Ipv4DhcpServer);
const DHCP6_SERVER: Target = Target::Kind(ResourceKind::Ipv6DhcpServer);
const PREFIX_DELEGATION: Target = Target::Kind(ResourceKind::Ipv6PrefixDelegation);
const DELEGATED_ADDRESS: Target = Target::Kind(ResourceKind::Ipv6DelegatedAddress);
const SELF_ADDRESS_POLICY: Target = Target::Kind(ResourceKind::SelfAddressPolicy);
const INTERFACE: Target = Target::Kind(ResourceKind::Interface);

/// The fallback device the kernel creates in every namespace once `ip6_tunnel` is loaded
/// (`net/ipv6/ip6_tunnel.c`, `ip6_tnl_init_net`); no other link can take its name.
const IP6TNL_FALLBACK: &str = "ip6tnl0";

impl Validate for LogSinkSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        log_sink(c, self);
    }
}

impl Validate for SysctlSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.shape("key", names::check_sysctl_key(&self.key));
    }
}

impl Validate for NtpClientSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.opt_reference("interface", self.interface.as_ref(), Target::Interface)
    }
}

impl Validate for NixOsHostSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        nixos_host(c, self);
    }
}

impl Validate for HostnameSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.shape("hostname", names::check_hostname(&self.hostname));
    }
}

impl Validate for InterfaceSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.shape("ifname", names::check_ifname(&self.ifname));
        c.range("mtu", self.mtu.map(u64::from), 68, 65535);
    }
}

impl Validate for PppoeInterfaceSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        pppoe_interface(c, self);
    }
}

impl Validate for VlanInterfaceSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        vlan_interface(c, self);
    }
}

impl Validate for Ipv4StaticAddressSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("interface", &self.interface, Target::Interface);
        if let Err(e) = crate::addr::parse_interface_address(&self.address, Some(Ipv4)) {
            c.error("address", e.to_string());
        }
    }
}

impl Validate for Ipv4DhcpAddressSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("interface", &self.interface, Target::Interface)
    }
}

impl Validate for Ipv6DhcpAddressSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("interface", &self.interface, Target::Interface)
    }
}

impl Validate for Ipv6PrefixDelegationSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        prefix_delegation(c, self);
    }
}

impl Validate for Ipv6DelegatedAddressSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        delegated_address(c, self);
    }
}

impl Validate for DsLiteTunnelSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        ds_lite_tunnel(c, self);
    }
}

impl Validate for Ipv4DhcpServerSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        ipv4_dhcp_server(c, self);
    }
}

impl Validate for Ipv4DhcpScopeSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        ipv4_dhcp_scope(c, self);
    }
}

impl Validate for Ipv6DhcpServerSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.references("listenInterfaces", &self.listen_interfaces, Target::Interface);
    }
}

impl Validate for Ipv6DhcpScopeSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        ipv6_dhcp_scope(c, self);
    }
}

impl Validate for SelfAddressPolicySpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        self_address_policy(c, self);
    }
}

impl Validate for DnsConditionalForwarderSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.shape("domain", names::check_domain(&self.domain));
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

fn log_sink(c: &mut Check<'_, '_>, s: &LogSinkSpec) {
    let plugin_path = s.plugin.as_ref().and_then(|p| p.path.as_ref());
    if s.r#type == LogSinkType::Plugin && plugin_path.is_none() {
        c.error("type", "plugin.path is required when type is plugin");
    }
    if let Some(plugin) = &s.plugin {
        c.duration("plugin.timeout", plugin.timeout.as_ref());
    }
    if let Some(syslog) = &s.syslog {
        let remote = matches!(syslog.network, Some(SyslogNetwork::Tcp | SyslogNetwork::Udp));
        if remote && syslog.address.is_none() {
            c.error(
                "syslog.network",
                "syslog.address is required when syslog.network is tcp or udp",
            );
        }
    }
}

fn nixos_host(c: &mut Check<'_, '_>, s: &NixOsHostSpec) {
    if let Some(hostname) = &s.hostname {
        c.shape("hostname", names::check_hostname(hostname));
    }
    if let Some(boot) = &s.boot {
        let grub = boot.loader == Some(BootLoader::Grub);
        c.require(
            !grub || boot.grub_device.is_some(),
            "boot.loader",
            "boot.grubDevice is required when boot.loader is grub",
        );
    }
    for (i, user) in s.users.iter().enumerate() {
        c.require(!user.name.is_empty(), &format!("users[{i}].name"), "name must not be empty");
    }
    if let Some(service) = &s.routerd_service {
        c.duration("routerdService.reconcileInterval", service.reconcile_interval.as_ref());
    }
}

fn pppoe_interface(c: &mut Check<'_, '_>, s: &PppoeInterfaceSpec) {
    c.reference("interface", &s.interface, Target::Interface);
    if let Some(ifname) = &s.ifname {
        c.shape("ifname", names::check_ifname(ifname));
    }
    c.range("mtu", s.mtu.map(u64::from), 576, 1500);
    c.range("mru", s.mru.map(u64::from), 576, 1500);
    if s.password.is_some() && s.password_file.is_some() {
        c.error("passwordFile", "set password or passwordFile, not both");
    }
    // pppd reads a secret starting with `@` as the name of a file holding it (pppd(8)).
    if s.password.as_deref().is_some_and(|p| p.starts_with('@')) {
        c.error(
            "password",
            "a password starting with `@` cannot be given inline; use passwordFile",
        );
    }
    if s.password.as_deref().is_some_and(|p| p.chars().any(char::is_control)) {
        c.error("password", "the password contains a control character");
    }
    if s.password_file.as_deref().is_some_and(|f| !f.starts_with('/')) {
        c.error("passwordFile", "not an absolute path");
    }
}

fn vlan_interface(c: &mut Check<'_, '_>, s: &VlanInterfaceSpec) {
    // A VLAN rides on a real link: not on a PPP session, a tunnel or another VLAN resource.
    c.reference("interface", &s.interface, INTERFACE);
    c.range("vlanID", Some(u64::from(s.vlan_id)), 1, 4094);
    if let Some(ifname) = &s.ifname {
        c.shape("ifname", names::check_ifname(ifname));
    }
    c.range("mtu", s.mtu.map(u64::from), 68, 65535);
}

fn prefix_delegation(c: &mut Check<'_, '_>, s: &Ipv6PrefixDelegationSpec) {
    c.reference("interface", &s.interface, Target::Interface);
    c.range("prefixLength", s.prefix_length.map(u64::from), 1, 128);
    c.duration("convergenceTimeout", s.convergence_timeout.as_ref());
    if let Some(iaid) = &s.iaid {
        let decimal = iaid.parse::<u32>().is_ok();
        if !decimal {
            c.shape("iaid", names::check_hex(iaid, 8));
        }
    }
    if let Some(raw) = &s.duid_raw_data {
        c.shape("duidRawData", names::check_hex_bytes(raw));
    }
}

fn delegated_address(c: &mut Check<'_, '_>, s: &Ipv6DelegatedAddressSpec) {
    c.reference("prefixDelegation", &s.prefix_delegation, PREFIX_DELEGATION);
    c.reference("interface", &s.interface, Target::Interface);
    if let Some(subnet) = &s.subnet_id {
        c.shape("subnetID", names::check_hex(subnet, 16));
    }
    c.ip("addressSuffix", &s.address_suffix, Some(Ipv6));
    c.when("when", s.when.as_ref());
}

fn ds_lite_tunnel(c: &mut Check<'_, '_>, s: &DsLiteTunnelSpec) {
    c.reference("interface", &s.interface, Target::Interface);
    if let Some(name) = &s.tunnel_name {
        c.shape("tunnelName", names::check_ifname(name));
        c.require(
            name != IP6TNL_FALLBACK,
            "tunnelName",
            "tunnelName \"ip6tnl0\" is the kernel's fallback tunnel device; choose another name",
        );
    }
    c.ips("aftrDNSServers", &s.aftr_dns_servers, None);
    c.min("aftrAddressOrdinal", s.aftr_address_ordinal.map(u64::from), 1);
    c.opt_ip("remoteAddress", s.remote_address.as_ref(), Some(Ipv6));
    c.opt_ip("localAddress", s.local_address.as_ref(), Some(Ipv6));
    c.opt_ip("localAddressSuffix", s.local_address_suffix.as_ref(), Some(Ipv6));
    c.opt_reference("localDelegatedAddress", s.local_delegated_address.as_ref(), DELEGATED_ADDRESS);
    match s.local_address_source {
        Some(LocalAddressSource::Static) if s.local_address.is_none() => {
            c.error(
                "localAddressSource",
                "localAddress is required when localAddressSource is static",
            );
        }
        Some(LocalAddressSource::DelegatedAddress) if s.local_delegated_address.is_none() => c
            .error(
                "localAddressSource",
                "localDelegatedAddress is required when localAddressSource is delegatedAddress",
            ),
        _ => {}
    }
    c.range("mtu", s.mtu.map(u64::from), 1280, 65535);
    if let Some(limit) = &s.encapsulation_limit {
        let ok = limit == "none" || limit.parse::<u8>().is_ok();
        c.require(ok, "encapsulationLimit", "encapsulationLimit must be 0..255 or none");
    }
    c.when("when", s.when.as_ref());
}

fn ipv4_dhcp_server(c: &mut Check<'_, '_>, s: &Ipv4DhcpServerSpec) {
    c.references("listenInterfaces", &s.listen_interfaces, Target::Interface);
    let Some(dns) = &s.dns else { return };
    c.opt_reference("dns.upstreamInterface", dns.upstream_interface.as_ref(), Target::Interface);
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

fn ipv4_dhcp_scope(c: &mut Check<'_, '_>, s: &Ipv4DhcpScopeSpec) {
    c.reference("server", &s.server, DHCP4_SERVER);
    c.reference("interface", &s.interface, Target::Interface);
    let start = crate::addr::parse_ipv4(&s.range_start);
    let end = crate::addr::parse_ipv4(&s.range_end);
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
    c.duration("leaseTime", s.lease_time.as_ref());
    c.opt_ip("router", s.router.as_ref(), Some(Ipv4));
    if s.router_source == Some(RouterSource::Static) && s.router.is_none() {
        c.error("routerSource", "router is required when routerSource is static");
    }
    c.opt_reference("dnsInterface", s.dns_interface.as_ref(), Target::Interface);
    c.ips("dnsServers", &s.dns_servers, Some(Ipv4));
    if s.dns_source == Some(Ipv4DnsSource::Dhcp4) && s.dns_interface.is_none() {
        c.error("dnsSource", "dnsInterface is required when dnsSource is dhcp4");
    }
    if s.dns_source == Some(Ipv4DnsSource::Static) && s.dns_servers.is_empty() {
        c.error("dnsSource", "dnsServers is required when dnsSource is static");
    }
    c.when("when", s.when.as_ref());
}

fn ipv6_dhcp_scope(c: &mut Check<'_, '_>, s: &Ipv6DhcpScopeSpec) {
    c.reference("server", &s.server, DHCP6_SERVER);
    c.reference("delegatedAddress", &s.delegated_address, DELEGATED_ADDRESS);
    c.opt_reference("selfAddressPolicy", s.self_address_policy.as_ref(), SELF_ADDRESS_POLICY);
    c.duration("leaseTime", s.lease_time.as_ref());
    c.ips("dnsServers", &s.dns_servers, Some(Ipv6));
    if s.dns_source == Some(Ipv6DnsSource::Static) && s.dns_servers.is_empty() {
        c.error("dnsSource", "dnsServers is required when dnsSource is static");
    }
    c.when("when", s.when.as_ref());
}

fn self_address_policy(c: &mut Check<'_, '_>, s: &SelfAddressPolicySpec) {
    c.non_empty("candidates", &s.candidates);
    let family = Some(s.address_family);
    for (i, cand) in s.candidates.iter().enumerate() {
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
        if cand.source == SelfAddressSource::DelegatedAddress && s.address_family != Ipv6 {
            c.error(&at("source"), "delegatedAddress candidates give IPv6 addresses only");
        }
        if !ok {
            let source = serde_json::to_value(cand.source).ok();
            let source = source.as_ref().and_then(|v| v.as_str()).unwrap_or_default();
            c.error(&at("source"), format!("{needed} is required when source is {source}"));
        }
    }
}
