//! Field checks for state, health, routing-policy, firewall and static-route kinds.

use super::Validate;
use super::check::{Check, Target};
use crate::addr;
use crate::kind::ResourceKind;
use crate::spec::AddressFamily::{self, Ipv4, Ipv6};
use crate::spec::firewall::*;
use crate::spec::net::{Ipv4StaticRouteSpec, Ipv6StaticRouteSpec, LOCAL_TABLE};
use crate::spec::routing::*;

const HEALTH_CHECK: Target = Target::Kind(ResourceKind::HealthCheck);
const ROUTE_SET: Target = Target::Kind(ResourceKind::Ipv4PolicyRouteSet);
const PREFIX_DELEGATION: Target = Target::Kind(ResourceKind::Ipv6PrefixDelegation);
const ZONE: Target = Target::Kind(ResourceKind::Zone);

/// Highest `ip rule` priority we may use; 32766 and 32767 are the `main` and `default` rules.
const MAX_RULE_PRIORITY: u64 = 32765;

/// `IPv4PolicyRouteSet.hashFields` values the renderer can hash (`ip saddr`, `ip daddr`).
const HASH_FIELDS: [&str; 2] = ["sourceAddress", "destinationAddress"];

impl Validate for StatePolicySpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        state_policy(c, self);
    }
}

impl Validate for HealthCheckSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        health_check(c, self);
    }
}

impl Validate for Ipv4DefaultRoutePolicySpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        default_route_policy(c, self);
    }
}

impl Validate for Ipv4SourceNatSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        source_nat(c, self);
    }
}

impl Validate for Ipv4PolicyRouteSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("outboundInterface", &self.outbound_interface, Target::Interface);
        table_priority_mark(c, "", self.table, self.priority, self.mark);
        c.prefixes("sourceCIDRs", &self.source_cidrs, Some(Ipv4));
        c.prefixes("destinationCIDRs", &self.destination_cidrs, Some(Ipv4));
    }
}

impl Validate for Ipv4PolicyRouteSetSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        policy_route_set(c, self);
    }
}

impl Validate for Ipv4ReversePathFilterSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.opt_reference("interface", self.interface.as_ref(), Target::Interface);
        if self.target == RpFilterTarget::Interface && self.interface.is_none() {
            c.error("target", "interface is required when target is interface");
        }
    }
}

impl Validate for PathMtuPolicySpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        path_mtu_policy(c, self);
    }
}

impl Validate for ZoneSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.references("interfaces", &self.interfaces, Target::Interface);
    }
}

impl Validate for FirewallPolicySpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        firewall_policy(c, self);
    }
}

impl Validate for ExposeServiceSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        expose_service(c, self);
    }
}

impl Validate for Ipv4StaticRouteSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        static_route(c, &route_of_v4(self), Ipv4);
    }
}

impl Validate for Ipv6StaticRouteSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        static_route(c, &route_of_v6(self), Ipv6);
    }
}

fn state_policy(c: &mut Check<'_, '_>, s: &StatePolicySpec) {
    c.require(!s.variable.is_empty(), "variable", "variable must not be empty");
    c.opt_reference("interface", s.interface.as_ref(), Target::Interface);
    c.non_empty("values", &s.values);
    for (i, value) in s.values.iter().enumerate() {
        let at = |field: &str| format!("values[{i}].when.{field}");
        if let Some(pd) = &value.when.ipv6_prefix_delegation {
            c.opt_reference(
                &at("ipv6PrefixDelegation.resource"),
                pd.resource.as_ref(),
                PREFIX_DELEGATION,
            );
            c.duration(&at("ipv6PrefixDelegation.unavailableFor"), pd.unavailable_for.as_ref());
        }
        if let Some(addr) = &value.when.ipv6_address {
            c.opt_reference(
                &at("ipv6Address.interface"),
                addr.interface.as_ref(),
                Target::Interface,
            );
        }
        if let Some(dns) = &value.when.dns_resolve {
            let upstream = dns.upstream_interface.as_ref();
            c.opt_reference(&at("dnsResolve.upstreamInterface"), upstream, Target::Interface);
            c.ips(&at("dnsResolve.upstreamServers"), &dns.upstream_servers, None);
        }
    }
}

fn health_check(c: &mut Check<'_, '_>, s: &HealthCheckSpec) {
    c.opt_reference("interface", s.interface.as_ref(), Target::Interface);
    c.duration("interval", s.interval.as_ref());
    c.duration("timeout", s.timeout.as_ref());
    c.min("healthyThreshold", s.healthy_threshold.map(u64::from), 1);
    c.min("unhealthyThreshold", s.unhealthy_threshold.map(u64::from), 1);
    if s.target_source == Some(TargetSource::Static) && s.target.is_none() {
        c.error("targetSource", "target is required when targetSource is static");
    }
    let kind = s.r#type.unwrap_or(HealthCheckType::Ping);
    match s.target.as_deref().map(split_host_port) {
        Some(Err(e)) => c.error("target", e),
        Some(Ok((host, port))) => {
            if let Some(family) = s.address_family
                && host.parse::<std::net::IpAddr>().is_ok()
            {
                c.ip("target", host, Some(family));
            }
            if port.is_none() && kind == HealthCheckType::Tcp {
                c.error("target", "type tcp needs a port: target host:port");
            }
            if port.is_some() && kind == HealthCheckType::Ping {
                c.error("target", "a port is meaningful for type tcp or dns only, not ping");
            }
        }
        None if kind == HealthCheckType::Tcp => {
            c.error("target", "type tcp needs a target host:port");
        }
        None => {}
    }
    c.when("when", s.when.as_ref());
}

fn default_route_policy(c: &mut Check<'_, '_>, s: &Ipv4DefaultRoutePolicySpec) {
    c.prefixes("sourceCIDRs", &s.source_cidrs, Some(Ipv4));
    c.prefixes("destinationCIDRs", &s.destination_cidrs, Some(Ipv4));
    c.non_empty("candidates", &s.candidates);
    for (i, cand) in s.candidates.iter().enumerate() {
        let at = |field: &str| format!("candidates[{i}].{field}");
        c.opt_reference(&at("interface"), cand.interface.as_ref(), Target::Interface);
        c.opt_reference(&at("routeSet"), cand.route_set.as_ref(), ROUTE_SET);
        c.opt_reference(&at("healthCheck"), cand.health_check.as_ref(), HEALTH_CHECK);
        if cand.interface.is_none() && cand.route_set.is_none() {
            c.error(&format!("candidates[{i}]"), "one of interface or routeSet is required");
        }
        c.opt_ip(&at("gateway"), cand.gateway.as_ref(), Some(Ipv4));
        if cand.gateway_source == Some(GatewaySource::Static) && cand.gateway.is_none() {
            c.error(&at("gatewaySource"), "gateway is required when gatewaySource is static");
        }
        c.min(&at("priority"), Some(u64::from(cand.priority)), 1);
        c.min(&at("table"), cand.table.map(u64::from), 1);
        c.min(&at("mark"), cand.mark.map(u64::from), 1);
        c.when(&at("when"), cand.when.as_ref());
    }
}

fn source_nat(c: &mut Check<'_, '_>, s: &Ipv4SourceNatSpec) {
    c.reference("outboundInterface", &s.outbound_interface, Target::Interface);
    c.prefixes("sourceCIDRs", &s.source_cidrs, Some(Ipv4));
    let t = &s.translation;
    c.opt_ip("translation.address", t.address.as_ref(), Some(Ipv4));
    c.ips("translation.addresses", &t.addresses, Some(Ipv4));
    match t.r#type {
        NatTranslationType::Address if t.address.is_none() => {
            c.error("translation.type", "translation.address is required when type is address");
        }
        NatTranslationType::Pool if t.addresses.is_empty() => {
            c.error("translation.type", "translation.addresses is required when type is pool");
        }
        _ => {}
    }
    if let Some(ports) = &t.port_mapping {
        c.min("translation.portMapping.start", ports.start.map(u64::from), 1);
        c.min("translation.portMapping.end", ports.end.map(u64::from), 1);
        if let (Some(start), Some(end)) = (ports.start, ports.end)
            && start > end
        {
            let msg = format!("port range start {start} is greater than end {end}");
            c.error("translation.portMapping.end", msg);
        }
        let is_range = ports.r#type == Some(PortMappingType::Range);
        if is_range && (ports.start.is_none() || ports.end.is_none()) {
            c.error("translation.portMapping", "start and end are required when type is range");
        }
    }
    c.when("when", s.when.as_ref());
}

fn policy_route_set(c: &mut Check<'_, '_>, s: &Ipv4PolicyRouteSetSpec) {
    hash_fields(c, &s.hash_fields);
    c.prefixes("sourceCIDRs", &s.source_cidrs, Some(Ipv4));
    c.prefixes("destinationCIDRs", &s.destination_cidrs, Some(Ipv4));
    c.non_empty("targets", &s.targets);
    for (i, target) in s.targets.iter().enumerate() {
        let prefix = format!("targets[{i}].");
        let field = format!("{prefix}outboundInterface");
        c.reference(&field, &target.outbound_interface, Target::Interface);
        table_priority_mark(c, &prefix, target.table, target.priority, target.mark);
    }
    c.when("when", s.when.as_ref());
}

/// Every `hashFields` entry is one of [`HASH_FIELDS`], and none is listed twice.
fn hash_fields(c: &mut Check<'_, '_>, fields: &[String]) {
    for (i, field) in fields.iter().enumerate() {
        let at = format!("hashFields[{i}]");
        if !HASH_FIELDS.contains(&field.as_str()) {
            let allowed = HASH_FIELDS.join(" or ");
            c.error(&at, format!("unknown hashFields entry {field:?}, expected {allowed}"));
        } else if let Some(first) = fields[..i].iter().position(|f| f == field) {
            c.error(&at, format!("hashFields entry {field:?} is already listed at [{first}]"));
        }
    }
}

/// `table >= 1`, `priority` in 1..=32765, `mark >= 1`, at `prefix` + field name.
fn table_priority_mark(c: &mut Check<'_, '_>, prefix: &str, table: u32, priority: u32, mark: u32) {
    c.min(&format!("{prefix}table"), Some(u64::from(table)), 1);
    c.range(&format!("{prefix}priority"), Some(u64::from(priority)), 1, MAX_RULE_PRIORITY);
    c.min(&format!("{prefix}mark"), Some(u64::from(mark)), 1);
}

fn path_mtu_policy(c: &mut Check<'_, '_>, s: &PathMtuPolicySpec) {
    c.reference("fromInterface", &s.from_interface, Target::Interface);
    c.references("toInterfaces", &s.to_interfaces, Target::Interface);
    if let Some(mtu) = &s.mtu {
        c.range("mtu.value", mtu.value.map(u64::from), 1280, 65535);
        if mtu.source == Some(MtuSource::Static) && mtu.value.is_none() {
            c.error("mtu.source", "mtu.value is required when mtu.source is static");
        }
    }
}

fn firewall_policy(c: &mut Check<'_, '_>, s: &FirewallPolicySpec) {
    let Some(access) = &s.router_access else { return };
    for (service, spec) in [("ssh", &access.ssh), ("dns", &access.dns), ("dhcp", &access.dhcp)] {
        if let Some(spec) = spec {
            c.references(&format!("routerAccess.{service}.fromZones"), &spec.from_zones, ZONE);
        }
    }
}

fn expose_service(c: &mut Check<'_, '_>, s: &ExposeServiceSpec) {
    let family = s.family.unwrap_or(Ipv4);
    c.reference("fromZone", &s.from_zone, ZONE);
    c.opt_reference("viaInterface", s.via_interface.as_ref(), Target::Interface);
    c.min("externalPort", Some(u64::from(s.external_port)), 1);
    c.min("internalPort", Some(u64::from(s.internal_port)), 1);
    c.ip("internalAddress", &s.internal_address, Some(family));
    for (i, source) in s.sources.iter().enumerate() {
        let is_ip = addr::parse_ip(source, None).is_ok();
        let result = if is_ip {
            addr::parse_ip(source, Some(family)).map(|_| ())
        } else {
            addr::parse_prefix(source, Some(family)).map(|_| ())
        };
        if let Err(e) = result {
            c.error(&format!("sources[{i}]"), e.to_string());
        }
    }
}

/// The family-independent view of a static route spec.
struct StaticRoute<'s> {
    interface: Option<&'s String>,
    destination: &'s str,
    via: Option<&'s String>,
    table: u32,
}

fn route_of_v4(s: &Ipv4StaticRouteSpec) -> StaticRoute<'_> {
    let (interface, via) = (s.interface.as_ref(), s.via.as_ref());
    StaticRoute { interface, destination: &s.destination, via, table: s.table }
}

fn route_of_v6(s: &Ipv6StaticRouteSpec) -> StaticRoute<'_> {
    let (interface, via) = (s.interface.as_ref(), s.via.as_ref());
    StaticRoute { interface, destination: &s.destination, via, table: s.table }
}

fn static_route(c: &mut Check<'_, '_>, r: &StaticRoute<'_>, family: AddressFamily) {
    c.opt_reference("interface", r.interface, Target::Interface);
    if let Err(e) = addr::parse_prefix(r.destination, Some(family)) {
        c.error("destination", e.to_string());
    }
    c.opt_ip("via", r.via, Some(family));
    if r.interface.is_none() && r.via.is_none() {
        c.error("", "at least one of interface or via is required");
    }
    match r.table {
        0 => c.error("table", "table 0 is not a routing table (unspecified)"),
        LOCAL_TABLE => c.error("table", "table 255 (local) is reserved for the kernel"),
        _ => {}
    }
}
