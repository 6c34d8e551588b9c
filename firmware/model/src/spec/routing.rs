//! Specs of state, health and routing policy (`net.routerd.net/v1alpha1`): `StatePolicy`,
//! `HealthCheck`, `IPv4DefaultRoutePolicy`, `IPv4SourceNAT`, `IPv4PolicyRoute`,
//! `IPv4PolicyRouteSet`, `IPv4ReversePathFilter`, `PathMTUPolicy`. Each spec type is followed by
//! its own checks (`Validate`). No I/O.

use serde::{Deserialize, Serialize};

use super::AddressFamily::Ipv4;
use super::{AddressFamily, WhenSpec, lenient};
use crate::kind::ResourceKind;
use crate::validate::Validate;
use crate::validate::check::{Check, Target};

const HEALTH_CHECK: Target = Target::Kind(ResourceKind::HealthCheck);
const ROUTE_SET: Target = Target::Kind(ResourceKind::Ipv4PolicyRouteSet);
const PREFIX_DELEGATION: Target = Target::Kind(ResourceKind::Ipv6PrefixDelegation);

/// `StatePolicy`: derives a named state variable from observed conditions; `when.state`
/// elsewhere refers to it by `variable`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatePolicySpec {
    /// `variable` (required): the variable's name, unique across `StatePolicy` resources.
    pub variable: String,
    /// `interface`: names the interface resource the conditions observe by default.
    pub interface: Option<String>,
    /// `values` (required, non-empty): tried in order; the first whose `when` holds sets the
    /// variable.
    pub values: Vec<StateValueSpec>,
}

impl Validate for StatePolicySpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.require(!self.variable.is_empty(), "variable", "variable must not be empty");
        c.opt_reference("interface", self.interface.as_ref(), Target::Interface);
        c.non_empty("values", &self.values);
        for (i, value) in self.values.iter().enumerate() {
            let at = |field: &str| format!("values[{i}].when.{field}");
            if let Some(pd) = &value.when.ipv6_prefix_delegation {
                c.opt_reference(
                    &at("ipv6PrefixDelegation.resource"),
                    pd.resource.as_ref(),
                    PREFIX_DELEGATION,
                );
                let unavailable_for = pd.unavailable_for.as_ref();
                c.duration(&at("ipv6PrefixDelegation.unavailableFor"), unavailable_for);
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
}

/// One entry of `StatePolicy.values`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StateValueSpec {
    /// `value` (required): the variable's value when `when` holds. YAML numbers and booleans
    /// are accepted as text.
    #[serde(deserialize_with = "lenient::string")]
    pub value: String,
    /// `when` (required): the conditions, AND-ed.
    pub when: StateConditionSpec,
}

/// `StatePolicy.values[].when`: observed conditions, all AND-ed; absent ones are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StateConditionSpec {
    /// `ipv6PrefixDelegation`: condition on a prefix delegation.
    pub ipv6_prefix_delegation: Option<PrefixDelegationCondition>,
    /// `ipv6Address`: condition on the addresses of an interface.
    pub ipv6_address: Option<Ipv6AddressCondition>,
    /// `dnsResolve`: condition on a DNS lookup.
    pub dns_resolve: Option<DnsResolveCondition>,
}

/// `StatePolicy.values[].when.ipv6PrefixDelegation`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PrefixDelegationCondition {
    /// `resource`: names an `IPv6PrefixDelegation`.
    pub resource: Option<String>,
    /// `available`: whether a prefix must currently be delegated.
    pub available: Option<bool>,
    /// `unavailableFor`: Go duration the prefix must have been missing.
    pub unavailable_for: Option<String>,
}

/// `StatePolicy.values[].when.ipv6Address`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv6AddressCondition {
    /// `interface`: names the interface resource; absent means the policy's `interface`.
    pub interface: Option<String>,
    /// `global`: whether a global IPv6 address must be present.
    pub global: Option<bool>,
}

/// `StatePolicy.values[].when.dnsResolve`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DnsResolveCondition {
    /// `name`: the name to resolve.
    pub name: Option<String>,
    /// `type`: record type; absent means `AAAA`.
    pub r#type: Option<DnsRecordType>,
    /// `upstreamSource`: which resolvers to ask; absent means `system`.
    pub upstream_source: Option<ResolveUpstreamSource>,
    /// `upstreamInterface`: names the interface resource whose lease supplies resolvers.
    pub upstream_interface: Option<String>,
    /// `upstreamServers`: resolver IP addresses (`upstreamSource: static`).
    #[serde(default)]
    pub upstream_servers: Vec<String>,
}

/// `dnsResolve.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DnsRecordType {
    /// `AAAA`.
    #[serde(rename = "AAAA")]
    Aaaa,
}

/// `dnsResolve.upstreamSource`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResolveUpstreamSource {
    /// `static`: `upstreamServers`.
    Static,
    /// `dhcp4`: from the DHCPv4 lease of `upstreamInterface`.
    Dhcp4,
    /// `dhcp6`: from the DHCPv6 reply on `upstreamInterface`.
    Dhcp6,
    /// `system`: the host's resolver.
    System,
}

/// `HealthCheck`: a periodic probe whose result gates route candidates.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HealthCheckSpec {
    /// `type`: probe kind; absent means `ping`.
    pub r#type: Option<HealthCheckType>,
    /// `role`: what the probe proves, for status display.
    pub role: Option<HealthCheckRole>,
    /// `addressFamily`: family of the probe; absent means `ipv4`.
    pub address_family: Option<AddressFamily>,
    /// `target`: address or host name to probe (`targetSource: static`).
    pub target: Option<String>,
    /// `targetSource`: where the target comes from; absent means `auto`.
    pub target_source: Option<TargetSource>,
    /// `interface`: names the interface resource to probe through.
    pub interface: Option<String>,
    /// `interval`: Go duration between probes; absent means the engine default.
    pub interval: Option<String>,
    /// `timeout`: Go duration per probe; absent means the engine default.
    pub timeout: Option<String>,
    /// `healthyThreshold`: consecutive successes to turn healthy, at least 1.
    pub healthy_threshold: Option<u32>,
    /// `unhealthyThreshold`: consecutive failures to turn unhealthy, at least 1.
    pub unhealthy_threshold: Option<u32>,
    /// `when`: state gate; absent means always active.
    pub when: Option<WhenSpec>,
}

impl Validate for HealthCheckSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.opt_reference("interface", self.interface.as_ref(), Target::Interface);
        c.duration("interval", self.interval.as_ref());
        c.duration("timeout", self.timeout.as_ref());
        c.min("healthyThreshold", self.healthy_threshold.map(u64::from), 1);
        c.min("unhealthyThreshold", self.unhealthy_threshold.map(u64::from), 1);
        if self.target_source == Some(TargetSource::Static) && self.target.is_none() {
            c.error("targetSource", "target is required when targetSource is static");
        }
        let kind = self.r#type.unwrap_or(HealthCheckType::Ping);
        match self.target.as_deref().map(split_host_port) {
            Some(Err(e)) => c.error("target", e),
            Some(Ok((host, port))) => {
                if let Some(family) = self.address_family
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
        c.when("when", self.when.as_ref());
    }
}

/// `HealthCheck.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HealthCheckType {
    /// `ping`: ICMP echo.
    Ping,
    /// `tcp`: a TCP connection to `target` (`host:port`) is accepted. A routerd extension
    /// beyond the v1alpha1 schema (ADR 0006).
    Tcp,
    /// `dns`: the DNS server at `target` (port 53 unless `host:port`) answers a query for the
    /// root's NS records with NOERROR or NXDOMAIN. A routerd extension (ADR 0006).
    Dns,
}

/// Splits a HealthCheck `target` into host and port: `192.0.2.1:443`, `[2001:db8::1]:53` and
/// `example.net:443` carry a port; a bare address (also IPv6) or name does not.
///
/// Errors: a port that is not a number in 1..=65535, or an unclosed `[`.
pub fn split_host_port(target: &str) -> Result<(&str, Option<u16>), String> {
    let port = |p: &str| match p.parse::<u16>() {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err(format!("port {p:?} is not a number in 1..=65535")),
    };
    if let Some(rest) = target.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("unclosed [ in target")?;
        return match after.strip_prefix(':') {
            Some(p) => Ok((host, port(p)?)),
            None if after.is_empty() => Ok((host, None)),
            None => Err(format!("unexpected {after:?} after ]")),
        };
    }
    if target.parse::<std::net::IpAddr>().is_ok() {
        return Ok((target, None));
    }
    match target.rsplit_once(':') {
        Some((host, p)) => Ok((host, port(p)?)),
        None => Ok((target, None)),
    }
}

/// `HealthCheck.role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HealthCheckRole {
    /// `link`.
    Link,
    /// `next-hop`.
    NextHop,
    /// `internet`.
    Internet,
    /// `service`.
    Service,
    /// `policy`.
    Policy,
}

/// `HealthCheck.targetSource`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TargetSource {
    /// `auto`: chosen from the role.
    Auto,
    /// `static`: `target`.
    Static,
    /// `defaultGateway`: the interface's default gateway.
    DefaultGateway,
    /// `dsliteRemote`: the AFTR of the DS-Lite tunnel named by `interface`.
    DsliteRemote,
}

/// `IPv4DefaultRoutePolicy`: pick the IPv4 default route among candidates by priority and
/// health.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv4DefaultRoutePolicySpec {
    /// `mode`: absent means `priority`.
    pub mode: Option<DefaultRouteMode>,
    /// `sourceCIDRs`: IPv4 prefixes (host bits zero) the policy applies to; empty means all.
    #[serde(default, rename = "sourceCIDRs")]
    pub source_cidrs: Vec<String>,
    /// `destinationCIDRs`: IPv4 prefixes (host bits zero); empty means all.
    #[serde(default, rename = "destinationCIDRs")]
    pub destination_cidrs: Vec<String>,
    /// `candidates` (required, non-empty).
    pub candidates: Vec<DefaultRouteCandidate>,
}

impl Validate for Ipv4DefaultRoutePolicySpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.prefixes("sourceCIDRs", &self.source_cidrs, Some(Ipv4));
        c.prefixes("destinationCIDRs", &self.destination_cidrs, Some(Ipv4));
        c.non_empty("candidates", &self.candidates);
        for (i, cand) in self.candidates.iter().enumerate() {
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
}

/// `IPv4DefaultRoutePolicy.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DefaultRouteMode {
    /// `priority`: the healthy candidate with the lowest `priority` wins.
    Priority,
}

/// One entry of `IPv4DefaultRoutePolicy.candidates`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DefaultRouteCandidate {
    /// `name`: label for status output.
    pub name: Option<String>,
    /// `interface`: names the outgoing interface resource.
    pub interface: Option<String>,
    /// `routeSet`: names an `IPv4PolicyRouteSet` to use instead of `interface`.
    pub route_set: Option<String>,
    /// `gatewaySource`: where the next hop comes from; absent means `none` (device route).
    pub gateway_source: Option<GatewaySource>,
    /// `gateway`: IPv4 next hop (`gatewaySource: static`).
    pub gateway: Option<String>,
    /// `priority` (required): lower wins, at least 1.
    pub priority: u32,
    /// `table`: routing table ID, at least 1; absent means `main`.
    pub table: Option<u32>,
    /// `mark`: fwmark, at least 1, unique across policy routes.
    pub mark: Option<u32>,
    /// `routeMetric`: metric of the installed route.
    pub route_metric: Option<u32>,
    /// `healthCheck`: names a `HealthCheck` that must be healthy.
    pub health_check: Option<String>,
    /// `when`: state gate; absent means always eligible.
    pub when: Option<WhenSpec>,
}

/// `IPv4DefaultRoutePolicy.candidates[].gatewaySource`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GatewaySource {
    /// `none`: device route without a gateway.
    None,
    /// `dhcp4`: the router option of the interface's DHCPv4 lease.
    Dhcp4,
    /// `static`: `gateway`.
    Static,
}

/// `IPv4SourceNAT`: SNAT/masquerade for traffic leaving an interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv4SourceNatSpec {
    /// `outboundInterface` (required): names the egress interface resource.
    pub outbound_interface: String,
    /// `sourceCIDRs` (required): IPv4 prefixes (host bits zero) to translate.
    #[serde(rename = "sourceCIDRs")]
    pub source_cidrs: Vec<String>,
    /// `translation` (required): how to rewrite the source.
    pub translation: NatTranslationSpec,
    /// `when`: state gate; absent means always active.
    pub when: Option<WhenSpec>,
}

impl Validate for Ipv4SourceNatSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("outboundInterface", &self.outbound_interface, Target::Interface);
        c.prefixes("sourceCIDRs", &self.source_cidrs, Some(Ipv4));
        let t = &self.translation;
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
        c.when("when", self.when.as_ref());
    }
}

/// `IPv4SourceNAT.translation`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NatTranslationSpec {
    /// `type` (required).
    pub r#type: NatTranslationType,
    /// `address`: IPv4 address to translate to (`type: address`).
    pub address: Option<String>,
    /// `addresses`: IPv4 addresses to translate to (`type: pool`).
    #[serde(default)]
    pub addresses: Vec<String>,
    /// `portMapping`: source port handling; absent means `auto`.
    pub port_mapping: Option<PortMappingSpec>,
}

/// `IPv4SourceNAT.translation.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum NatTranslationType {
    /// `interfaceAddress`: masquerade to the outbound interface's address.
    InterfaceAddress,
    /// `address`: SNAT to `address`.
    Address,
    /// `pool`: SNAT to `addresses`.
    Pool,
}

/// `IPv4SourceNAT.translation.portMapping`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PortMappingSpec {
    /// `type`: absent means `auto`.
    pub r#type: Option<PortMappingType>,
    /// `start`: first port, 1..=65535 (`type: range`).
    pub start: Option<u16>,
    /// `end`: last port, 1..=65535, not below `start` (`type: range`).
    pub end: Option<u16>,
}

/// `IPv4SourceNAT.translation.portMapping.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PortMappingType {
    /// `auto`: the kernel picks.
    Auto,
    /// `preserve`: keep source ports where possible.
    Preserve,
    /// `range`: map into `start..=end`.
    Range,
}

/// `IPv4PolicyRoute`: mark matching traffic and route it through a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv4PolicyRouteSpec {
    /// `outboundInterface` (required): names the egress interface resource.
    pub outbound_interface: String,
    /// `table` (required): routing table ID, at least 1.
    pub table: u32,
    /// `priority` (required): `ip rule` priority, 1..=32765 (32766 is `main`).
    pub priority: u32,
    /// `mark` (required): fwmark, at least 1, unique across policy routes.
    pub mark: u32,
    /// `sourceCIDRs`: IPv4 prefixes (host bits zero); empty means all.
    #[serde(default, rename = "sourceCIDRs")]
    pub source_cidrs: Vec<String>,
    /// `destinationCIDRs`: IPv4 prefixes (host bits zero); empty means all.
    #[serde(default, rename = "destinationCIDRs")]
    pub destination_cidrs: Vec<String>,
    /// `routeMetric`: metric of the table's default route.
    pub route_metric: Option<u32>,
    /// `allowLocalSourceNAT`: also mark router-originated traffic; default `false`.
    #[serde(default, rename = "allowLocalSourceNAT")]
    pub allow_local_source_nat: bool,
}

impl Validate for Ipv4PolicyRouteSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("outboundInterface", &self.outbound_interface, Target::Interface);
        table_priority_mark(c, "", self.table, self.priority, self.mark);
        c.prefixes("sourceCIDRs", &self.source_cidrs, Some(Ipv4));
        c.prefixes("destinationCIDRs", &self.destination_cidrs, Some(Ipv4));
    }
}

/// Highest `ip rule` priority we may use; 32766 and 32767 are the `main` and `default` rules.
const MAX_RULE_PRIORITY: u64 = 32765;

/// `table >= 1`, `priority` in 1..=32765, `mark >= 1`, at `prefix` + field name; shared by
/// `IPv4PolicyRoute` and the targets of `IPv4PolicyRouteSet`.
fn table_priority_mark(c: &mut Check<'_, '_>, prefix: &str, table: u32, priority: u32, mark: u32) {
    c.min(&format!("{prefix}table"), Some(u64::from(table)), 1);
    c.range(&format!("{prefix}priority"), Some(u64::from(priority)), 1, MAX_RULE_PRIORITY);
    c.min(&format!("{prefix}mark"), Some(u64::from(mark)), 1);
}

/// `IPv4PolicyRouteSet`: spread traffic over several marked targets by hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv4PolicyRouteSetSpec {
    /// `mode`: absent means `hash`.
    pub mode: Option<RouteSetMode>,
    /// `hashFields`: packet fields hashed to pick a target (e.g. `sourceAddress`).
    #[serde(default)]
    pub hash_fields: Vec<String>,
    /// `sourceCIDRs`: IPv4 prefixes (host bits zero); empty means all.
    #[serde(default, rename = "sourceCIDRs")]
    pub source_cidrs: Vec<String>,
    /// `destinationCIDRs`: IPv4 prefixes (host bits zero); empty means all.
    #[serde(default, rename = "destinationCIDRs")]
    pub destination_cidrs: Vec<String>,
    /// `targets` (required, non-empty).
    pub targets: Vec<PolicyRouteTarget>,
    /// `when`: state gate; absent means always active.
    pub when: Option<WhenSpec>,
}

impl Validate for Ipv4PolicyRouteSetSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        hash_fields(c, &self.hash_fields);
        c.prefixes("sourceCIDRs", &self.source_cidrs, Some(Ipv4));
        c.prefixes("destinationCIDRs", &self.destination_cidrs, Some(Ipv4));
        c.non_empty("targets", &self.targets);
        for (i, target) in self.targets.iter().enumerate() {
            let prefix = format!("targets[{i}].");
            let field = format!("{prefix}outboundInterface");
            c.reference(&field, &target.outbound_interface, Target::Interface);
            table_priority_mark(c, &prefix, target.table, target.priority, target.mark);
        }
        c.when("when", self.when.as_ref());
    }
}

/// `IPv4PolicyRouteSet.hashFields` values the renderer can hash (`ip saddr`, `ip daddr`).
const HASH_FIELDS: [&str; 2] = ["sourceAddress", "destinationAddress"];

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

/// `IPv4PolicyRouteSet.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RouteSetMode {
    /// `hash`.
    Hash,
}

/// One entry of `IPv4PolicyRouteSet.targets`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyRouteTarget {
    /// `name`: label for status output.
    pub name: Option<String>,
    /// `outboundInterface` (required): names the egress interface resource.
    pub outbound_interface: String,
    /// `table` (required): routing table ID, at least 1.
    pub table: u32,
    /// `priority` (required): `ip rule` priority, 1..=32765.
    pub priority: u32,
    /// `mark` (required): fwmark, at least 1, unique across policy routes.
    pub mark: u32,
    /// `routeMetric`: metric of the table's default route.
    pub route_metric: Option<u32>,
}

/// `IPv4ReversePathFilter`: `rp_filter` setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ipv4ReversePathFilterSpec {
    /// `target` (required): which `net.ipv4.conf.*` entry to set.
    pub target: RpFilterTarget,
    /// `interface`: names the interface resource; required with `target: interface`.
    pub interface: Option<String>,
    /// `mode` (required): 0, 1 or 2 in `ip-sysctl.rst` terms.
    pub mode: RpFilterMode,
}

impl Validate for Ipv4ReversePathFilterSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.opt_reference("interface", self.interface.as_ref(), Target::Interface);
        if self.target == RpFilterTarget::Interface && self.interface.is_none() {
            c.error("target", "interface is required when target is interface");
        }
    }
}

/// `IPv4ReversePathFilter.target`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RpFilterTarget {
    /// `all`: `net.ipv4.conf.all.rp_filter`.
    All,
    /// `default`: `net.ipv4.conf.default.rp_filter`.
    Default,
    /// `interface`: `net.ipv4.conf.<ifname>.rp_filter`.
    Interface,
}

/// `IPv4ReversePathFilter.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RpFilterMode {
    /// `disabled`: 0.
    Disabled,
    /// `strict`: 1 (RFC 3704 strict).
    Strict,
    /// `loose`: 2 (RFC 3704 loose).
    Loose,
}

/// `PathMTUPolicy`: propagate a path MTU from one interface to others (RA MTU, TCP MSS).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PathMtuPolicySpec {
    /// `fromInterface` (required): names the interface resource whose MTU limits the path.
    pub from_interface: String,
    /// `toInterfaces` (required): names the interface resources to apply it on.
    pub to_interfaces: Vec<String>,
    /// `mtu`: how the MTU is chosen; absent means `minInterface`.
    pub mtu: Option<PathMtuSpec>,
    /// `ipv6RA`: advertise the MTU in router advertisements.
    #[serde(rename = "ipv6RA")]
    pub ipv6_ra: Option<PathMtuRaSpec>,
    /// `tcpMSSClamp`: clamp TCP MSS to the MTU.
    #[serde(rename = "tcpMSSClamp")]
    pub tcp_mss_clamp: Option<TcpMssClampSpec>,
}

impl Validate for PathMtuPolicySpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.reference("fromInterface", &self.from_interface, Target::Interface);
        c.references("toInterfaces", &self.to_interfaces, Target::Interface);
        if let Some(mtu) = &self.mtu {
            c.range("mtu.value", mtu.value.map(u64::from), 1280, 65535);
            if mtu.source == Some(MtuSource::Static) && mtu.value.is_none() {
                c.error("mtu.source", "mtu.value is required when mtu.source is static");
            }
        }
    }
}

/// `PathMTUPolicy.mtu`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PathMtuSpec {
    /// `source`: absent means `minInterface`.
    pub source: Option<MtuSource>,
    /// `value`: bytes, 1280..=65535; required with `source: static`.
    pub value: Option<u16>,
}

/// `PathMTUPolicy.mtu.source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum MtuSource {
    /// `minInterface`: the smallest MTU among the interfaces.
    MinInterface,
    /// `static`: `value`.
    Static,
}

/// `PathMTUPolicy.ipv6RA`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PathMtuRaSpec {
    /// `enabled`: default `false`.
    #[serde(default)]
    pub enabled: bool,
    /// `scope`: which RAs carry the MTU option (engine-defined, e.g. `lan`).
    pub scope: Option<String>,
}

/// `PathMTUPolicy.tcpMSSClamp`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TcpMssClampSpec {
    /// `enabled`: default `false`.
    #[serde(default)]
    pub enabled: bool,
    /// `families`: families to clamp; empty means both.
    #[serde(default)]
    pub families: Vec<AddressFamily>,
}
