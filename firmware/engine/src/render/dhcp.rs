//! The DHCP family: client bindings (`IPv4DHCPAddress`, `IPv6DHCPAddress`,
//! `IPv6PrefixDelegation`, through systemd-networkd) and servers and scopes (`IPv4DHCPServer`,
//! `IPv4DHCPScope`, `IPv6DHCPServer`, `IPv6DHCPScope`, through dnsmasq as
//! `routerd-dnsmasq.service`).
//!
//! The client bindings render to blocks of routerd's `.network` file for their link
//! (systemd.network(5) settings; `routerd_host::networkd` writes the file). IPv4 servers and
//! scopes render to dnsmasq configuration sections (dnsmasq(8) option lines) and the unit that
//! runs dnsmasq; so do the IPv6 server and scopes (router advertisements and DHCPv6 on the
//! link of a delegated address).

use std::net::{IpAddr, Ipv6Addr};
use std::str::FromStr;
use std::time::Duration;

use routerd_host::artifact::{DhcpBinding, DhcpClientSpec, DnsmasqSectionSpec, UnitSpec};
use routerd_host::dnsmasq::{
    Dhcp4OptionName, Dhcp6OptionName, DnsmasqOption, Ipv6RangeMode, RaMtu,
};
use routerd_host::{ArtifactKey, ArtifactKind, ArtifactSpec, Target, dnsmasq};
use routerd_model::spec::dhcp::{
    DnsUpstreamSource, Ipv4DhcpScopeSpec, Ipv4DhcpServerKind, Ipv4DhcpServerSpec, Ipv4DnsSource,
    Ipv6DhcpScopeSpec, Ipv6DhcpServerSpec, Ipv6DnsSource, Ipv6ScopeMode, RouterSource,
};
use routerd_model::spec::net::{
    DuidType, Ipv4DhcpAddressSpec, Ipv6DhcpAddressSpec, Ipv6PrefixDelegationSpec, PdProfile,
};
use routerd_model::spec::routing::MtuSource;
use routerd_model::{Resource, ResourceSpec};
use serde::Serialize;

use super::ctx::dep;
use super::{Out, RenderCtx};
use crate::intent::IntentDep;

/// The one dnsmasq instance every DHCP/DNS kind shares.
pub(super) const DNSMASQ_UNIT: &str = dnsmasq::UNIT;

/// The unit file of `routerd-dnsmasq.service` for `target`.
///
/// dnsmasq reads only routerd's file (`--conf-file`, so neither `/etc/dnsmasq.conf` nor
/// `/etc/dnsmasq.d`), keeps its leases beside it, and listens only on loopback and the
/// `interface=` lines of the server sections (`--bind-dynamic`): with no server section it
/// answers nobody outside the router. It starts only once the file exists. `Type=forking`:
/// dnsmasq forks once its sockets are bound, so a start job fails when dnsmasq cannot serve.
/// No `After=network.target`: routerd itself is ordered before `network.target` and starts
/// this unit during its first reconcile, so that ordering would hold the start job until
/// routerd is ready, which waits for the job; `--bind-dynamic` follows the links as they come.
pub(super) fn dnsmasq_unit(target: &Target) -> UnitSpec {
    let dir = target.dnsmasq_dir();
    let conf = target.dnsmasq_conf();
    let mut content = format!(
        "# Written by routerd for the DHCP and DNS resources of router.yaml.\n\
         [Unit]\n\
         Description=routerd DHCP and DNS server (dnsmasq)\n\
         ConditionPathExists={conf}\n\
         \n\
         [Service]\n\
         Type=forking\n\
         PIDFile={dir}/dnsmasq.pid\n\
         ExecStart={bin} --conf-file={conf} --dhcp-leasefile={leases} \
         --pid-file={dir}/dnsmasq.pid --bind-dynamic --interface=lo\n\
         Restart=on-failure\n",
        conf = conf.display(),
        dir = dir.display(),
        leases = target.dnsmasq_leases().display(),
        bin = dnsmasq::BINARY,
    );
    if let Some(ns) = target.netns_path() {
        content.push_str(&format!("NetworkNamespacePath={}\n", ns.display()));
    }
    content.push_str("\n[Install]\nWantedBy=multi-user.target\n");
    UnitSpec { unit: DNSMASQ_UNIT.into(), content, active: true }
}

/// Declares the dnsmasq unit (shared: every resource declares the same one).
pub(super) fn ensure_dnsmasq_unit(ctx: &RenderCtx<'_>, out: &mut Out) -> ArtifactKey {
    out.ensure_common(ArtifactSpec::Unit(dnsmasq_unit(ctx.target)), Vec::new())
}

/// A scope's `leaseTime`, a config duration (`12h`, `90m`, `1h30m`; dnsmasq's line raises it to
/// two minutes, [`dnsmasq::MIN_LEASE`]). `None` when absent, and, with a warning, when it is not
/// a duration: dnsmasq's default (`default`) applies.
fn lease_time(text: Option<&str>, default: &str, out: &mut Out) -> Option<Duration> {
    let text = text?;
    let lease = routerd_model::parse_duration(text.trim()).ok();
    if lease.is_none() {
        out.warn(format!("leaseTime {text:?} is not a duration; dnsmasq's {default} applies"));
    }
    lease
}

/// The address `text` of config field `field`, for a dnsmasq option; `None`, with a warning,
/// when it is not an address of the family the option takes (validation refuses such a config,
/// so this is only the render's fallback: the address is left out).
pub(super) fn address<A: FromStr>(text: &str, field: &str, out: &mut Out) -> Option<A> {
    let parsed = text.trim().parse().ok();
    if parsed.is_none() {
        out.warn(format!(
            "{field}: {text:?} is not an address of the family dnsmasq takes here; left out"
        ));
    }
    parsed
}

pub(super) fn render_ipv4_client(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv4DhcpAddressSpec,
    out: &mut Out,
) {
    // The client identifier is the MAC (RFC 2132 section 9.14, type 1), as OpenWrt and most
    // ISPs expect; networkd's own default is an RFC 4361 DUID. The hostname stays the Hostname
    // resource's, never the lease's.
    let mut settings = vec!["[DHCPv4]".to_string(), "ClientIdentifier=mac".into()];
    settings.push("UseHostname=no".into());
    settings.push(format!("UseDNS={}", yes_no(s.use_dns.unwrap_or(true))));
    settings.push(format!("UseRoutes={}", yes_no(s.use_routes.unwrap_or(true))));
    if let Some(m) = s.route_metric {
        settings.push(format!("RouteMetric={m}"));
    }
    client(ctx, res, &s.interface, s.client.as_deref(), DhcpBinding::Ipv4, settings, out);
}

pub(super) fn render_ipv6_client(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv6DhcpAddressSpec,
    out: &mut Out,
) {
    let settings = vec!["[DHCPv6]".to_string(), "UseHostname=no".into()];
    client(ctx, res, &s.interface, s.client.as_deref(), DhcpBinding::Ipv6, settings, out);
}

pub(super) fn render_prefix_delegation(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv6PrefixDelegationSpec,
    out: &mut Out,
) {
    let ntt =
        matches!(s.profile, Some(PdProfile::NttNgnDirectHikariDenwa | PdProfile::NttHgwLanPd));
    let mut settings = vec!["[DHCPv6]".to_string()];
    // NTT's NGN delegates a /60 and expects a DUID-LL (the profile's documented defaults).
    if let Some(len) = s.prefix_length.or(ntt.then_some(60)) {
        settings.push(format!("PrefixDelegationHint=::/{len}"));
    }
    if let Some(iaid) = s.iaid.as_deref().filter(|i| !i.is_empty()) {
        match parse_iaid(iaid) {
            Some(n) => settings.push(format!("IAID={n}")),
            None => {
                out.warn(format!("iaid {iaid:?} is not a 32-bit number; the client's own applies"))
            }
        }
    }
    match s.duid_raw_data.as_deref().filter(|d| !d.is_empty()) {
        Some(raw) => match duid_bytes(raw) {
            // Raw data stands for the whole DUID: its type is the first two bytes.
            Some(bytes) => settings.push(format!("DUIDRawData={bytes}")),
            None => {
                out.warn(format!("duidRawData {raw:?} is not hex bytes; the client's DUID applies"))
            }
        },
        None => {
            let duid = match s.duid_type {
                Some(DuidType::LinkLayer) => Some("link-layer"),
                Some(DuidType::LinkLayerTime) => Some("link-layer-time"),
                Some(DuidType::Vendor) => Some("vendor"),
                Some(DuidType::Uuid) => Some("uuid"),
                Some(DuidType::Default) | None => ntt.then_some("link-layer"),
            };
            if let Some(d) = duid {
                settings.push(format!("DUIDType={d}"));
            }
        }
    }
    if s.hint_from_state {
        out.warn("hintFromState: systemd-networkd keeps no delegation across restarts to hint");
    }
    let client_name = s.client.as_deref();
    client(ctx, res, &s.interface, client_name, DhcpBinding::PrefixDelegation, settings, out);
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// An IAID as the config gives it (decimal, or hex with `0x`), `None` unless it fits 32 bits.
fn parse_iaid(text: &str) -> Option<u32> {
    let t = text.trim();
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => t.parse().ok(),
    }
}

/// DUID bytes as hex (`00030001…`, with or without `:` between bytes) in networkd's form
/// (`00:03:00:01:…`); `None` when not an even run of hex digits, or longer than a DUID may be
/// (RFC 8415 section 11.1: at most 128 bytes of DUID after the 2-byte type).
fn duid_bytes(text: &str) -> Option<String> {
    let hex: String = text.chars().filter(|c| *c != ':').collect();
    if hex.is_empty()
        || !hex.len().is_multiple_of(2)
        || hex.len() > 260
        || !hex.chars().all(|c| c.is_ascii_hexdigit())
    {
        return None;
    }
    let pairs: Vec<&str> = (0..hex.len()).step_by(2).map(|i| &hex[i..i + 2]).collect();
    Some(pairs.join(":").to_ascii_lowercase())
}

/// A DHCP client binding on `iface`, run by systemd-networkd: the block of routerd's
/// `.network` file for the link.
fn client(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    iface: &str,
    client: Option<&str>,
    binding: DhcpBinding,
    settings: Vec<String>,
    out: &mut Out,
) {
    let Some(link) = ctx.interface(iface) else { return out.unresolved("interface", iface) };
    let deps = vec![dep(&link.key, format!("runs on {}", link.ifname))];
    if binding != DhcpBinding::Ipv4
        && let Some(policy) = super::firewall_policy::drops_dhcpv6_replies(ctx, &link.ifname)
    {
        out.warn(format!(
            "FirewallPolicy {policy} (preset home-router) drops the DHCPv6 server's replies \
             (UDP 546) on {}, which is in no zone: put the interface in a wan* zone",
            link.ifname
        ));
    }
    if let Some(other) = client.filter(|c| !matches!(*c, "" | "networkd" | "systemd-networkd")) {
        // routerd's configs name the client their distribution ships (dhclient, dhcpcd,
        // dhcp6c); the binding is the same DHCP exchange, which this firmware's networkd runs.
        out.warn(format!(
            "{}: client {other:?} is not in this firmware; systemd-networkd runs the binding \
             instead (set client: networkd, or leave it out, to silence this)",
            res.name
        ));
    }
    let spec = DhcpClientSpec::desired(binding, link.ifname.clone(), settings);
    out.ensure(ArtifactSpec::DhcpClient(spec), deps);
}

pub(super) fn render_ipv4_server(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv4DhcpServerSpec,
    out: &mut Out,
) {
    if !s.managed {
        return unmanaged(out);
    }
    if matches!(s.server, Some(Ipv4DhcpServerKind::Kea | Ipv4DhcpServerKind::Dhcpd)) {
        // Not in this build: the opaque intent is Blocked and says so.
        return server(ctx, res, "dhcpv4-server", &s.listen_interfaces, s, out);
    }
    let (mut lines, deps) = listen_on(ctx, &s.listen_interfaces, out);
    if let Some(dns) = &s.dns {
        if !dns.enabled {
            // DHCP only: no DNS service, and the leases do not name the router as resolver.
            lines.push(DnsmasqOption::Port(0));
        }
        let server = |a| DnsmasqOption::Server { domain: None, address: a };
        match dns.upstream_source {
            Some(DnsUpstreamSource::Static) => {
                lines.push(DnsmasqOption::NoResolv);
                for a in &dns.upstream_servers {
                    lines.extend(address(a, "dns.upstreamServers", out).map(server));
                }
            }
            Some(DnsUpstreamSource::None) => lines.push(DnsmasqOption::NoResolv),
            // The DNS servers of the upstream's DHCPv4 lease (a runtime value, ADR 0008). Until
            // it has some, the system's resolvers: withdrawing the server would stop DHCP on
            // the LAN for want of a WAN lease.
            Some(DnsUpstreamSource::Dhcp4) => {
                let iface = dns.upstream_interface.as_deref().unwrap_or_default();
                let servers = ctx.dhcp_client(iface, false).map(|c| ctx.runtime.lease_dns(&c));
                match servers {
                    None => out.warn(format!(
                        "dns.upstreamSource dhcp4: no IPv4DHCPAddress is on {iface:?}; the \
                         system's resolvers are used"
                    )),
                    Some([]) => out.warn(format!(
                        "dns.upstreamSource dhcp4: the lease on {iface:?} has no DNS servers \
                         (yet); the system's resolvers are used"
                    )),
                    Some(servers) => {
                        lines.push(DnsmasqOption::NoResolv);
                        lines.extend(servers.iter().copied().map(server));
                    }
                }
            }
            // The system's resolvers (/etc/resolv.conf, which the DHCP client keeps current).
            Some(DnsUpstreamSource::System) | None => {}
        }
        if let Some(n) = dns.cache_size {
            lines.push(DnsmasqOption::CacheSize(n));
        }
    }
    let section = DnsmasqSectionSpec::from_options(format!("dhcpv4-server/{}", res.name), lines);
    out.ensure(ArtifactSpec::DnsmasqSection(section), deps);
}

/// dnsmasq sends router advertisements (`enable-ra`) and answers DHCPv6 on the listed links;
/// what it announces there comes from the scopes.
pub(super) fn render_ipv6_server(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv6DhcpServerSpec,
    out: &mut Out,
) {
    if !s.managed {
        return unmanaged(out);
    }
    let (mut lines, deps) = listen_on(ctx, &s.listen_interfaces, out);
    lines.push(DnsmasqOption::EnableRa);
    let section = DnsmasqSectionSpec::from_options(format!("dhcpv6-server/{}", res.name), lines);
    out.ensure(ArtifactSpec::DnsmasqSection(section), deps);
}

pub(super) fn render_ipv4_scope(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv4DhcpScopeSpec,
    out: &mut Out,
) {
    if server_unmanaged(ctx, &s.server, false) {
        return scope_of_unmanaged(&s.server, out);
    }
    let mut deps = vec![server_dep("dhcpv4-server", &s.server)];
    match ctx.interface(&s.interface) {
        Some(l) => deps.push(dep(&l.key, format!("serves {}", l.ifname))),
        None => return out.unresolved("interface", &s.interface),
    }
    let name = format!("dhcpv4-range/{}", res.name);
    let tag = &res.name;
    let start = address(&s.range_start, "rangeStart", out);
    let end = address(&s.range_end, "rangeEnd", out);
    let (Some(start), Some(end)) = (start, end) else { return };
    let lease = lease_time(s.lease_time.as_deref(), "1h", out);
    let mut lines = vec![DnsmasqOption::DhcpRange { tag: tag.clone(), start, end, lease }];
    let option =
        |option, addresses| DnsmasqOption::DhcpOption { tag: tag.clone(), option, addresses };
    match (s.router_source, s.router.as_deref()) {
        (Some(RouterSource::Static), Some(r)) => {
            if let Some(r) = address(r, "router", out) {
                lines.push(option(Dhcp4OptionName::Router, vec![r]));
            }
        }
        // An empty option: the leases carry no default gateway.
        (Some(RouterSource::None), _) => lines.push(option(Dhcp4OptionName::Router, Vec::new())),
        // dnsmasq's default: the address of the interface the request came in on.
        _ => {}
    }
    match s.dns_source {
        Some(Ipv4DnsSource::Static) => {
            let servers: Vec<_> =
                s.dns_servers.iter().filter_map(|a| address(a, "dnsServers", out)).collect();
            if !servers.is_empty() {
                lines.push(option(Dhcp4OptionName::DnsServer, servers));
            }
        }
        Some(Ipv4DnsSource::None) => lines.push(option(Dhcp4OptionName::DnsServer, Vec::new())),
        // The DNS servers of the uplink's lease (a runtime value, ADR 0008); until it has
        // some, dnsmasq's default: the pool is not withdrawn for want of a WAN lease.
        Some(Ipv4DnsSource::Dhcp4) => {
            let iface = s.dns_interface.as_deref().unwrap_or_default();
            let servers: Vec<_> = ctx
                .dhcp_client(iface, false)
                .map(|c| ctx.runtime.lease_dns(&c))
                .unwrap_or_default()
                .iter()
                .filter_map(|a| match a {
                    IpAddr::V4(a) => Some(*a),
                    IpAddr::V6(_) => None,
                })
                .collect();
            if servers.is_empty() {
                out.warn(format!(
                    "dnsSource dhcp4: the DHCPv4 lease on {iface:?} has no DNS servers (yet); \
                     the leases name dnsmasq itself"
                ));
            } else {
                lines.push(option(Dhcp4OptionName::DnsServer, servers));
            }
        }
        // dnsmasq's default: itself (the interface's address), when its DNS is on.
        Some(Ipv4DnsSource::SelfAddress) | None => {}
    }
    if s.authoritative {
        lines.push(DnsmasqOption::DhcpAuthoritative);
    }
    let section = DnsmasqSectionSpec::from_options(name, lines);
    out.ensure(ArtifactSpec::DnsmasqSection(section), deps);
}

/// RA and DHCPv6 on the link of the scope's delegated address, for whatever prefix the link
/// holds: dnsmasq's `constructor:` range takes the prefix from the link's global addresses and
/// follows them when the delegation changes, so nothing here waits for the prefix.
pub(super) fn render_ipv6_scope(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv6DhcpScopeSpec,
    out: &mut Out,
) {
    if server_unmanaged(ctx, &s.server, true) {
        return scope_of_unmanaged(&s.server, out);
    }
    let mut deps = vec![server_dep("dhcpv6-server", &s.server)];
    let Some(link) = ctx.delegated_link(&s.delegated_address) else {
        return out.unresolved("delegatedAddress", &s.delegated_address);
    };
    deps.push(dep(&link.key, format!("serves {}", link.ifname)));
    let tag = &res.name;
    let mode = match s.mode {
        Some(Ipv6ScopeMode::RaOnly) => Ipv6RangeMode::RaOnly,
        Some(Ipv6ScopeMode::Stateless) | None => Ipv6RangeMode::RaStateless,
    };
    let lease = lease_time(s.lease_time.as_deref(), "1d", out);
    let mut lines = vec![DnsmasqOption::DhcpRange6 {
        tag: tag.clone(),
        start: Ipv6Addr::UNSPECIFIED,
        constructor: link.ifname.clone(),
        mode,
        lease,
    }];
    let dns_server = |addresses| DnsmasqOption::DhcpOption6 {
        tag: tag.clone(),
        option: Dhcp6OptionName::DnsServer,
        addresses,
    };
    // The RA parameters of the link are one line; a PathMTUPolicy advertising an MTU there
    // writes it (with the router lifetime this scope asks for), otherwise the scope does.
    if ra_mtu(ctx, &link.ifname).is_none()
        && let Some(param) = ra_param(ctx, &link.ifname, None)
    {
        lines.push(param);
    }
    match s.dns_source {
        Some(Ipv6DnsSource::Static) => {
            let servers: Vec<_> =
                s.dns_servers.iter().filter_map(|a| address(a, "dnsServers", out)).collect();
            if !servers.is_empty() {
                lines.push(dns_server(servers));
            }
        }
        Some(Ipv6DnsSource::None) => lines.push(dns_server(Vec::new())),
        // The address the policy selects; without a policy, or while it selects none,
        // dnsmasq's default: its own address on the link (RDNSS and the DHCPv6 option).
        Some(Ipv6DnsSource::SelfAddress) | None => {
            if let Some(name) = &s.self_address_policy {
                match ctx.self_address_policy(name) {
                    None => out.unresolved("selfAddressPolicy", name),
                    Some(policy) => {
                        let key = ArtifactKey::new(ArtifactKind::AddressSelection, name.clone());
                        deps.push(dep(&key, format!("announces the address {name} selects")));
                        match super::self_address_policy::select(ctx, policy).0.address {
                            Some(IpAddr::V6(a)) => lines.push(dns_server(vec![a])),
                            Some(IpAddr::V4(_)) => out.warn(format!(
                                "selfAddressPolicy {name} selects IPv4 addresses: dnsmasq \
                                 announces its own address on the link"
                            )),
                            None => out.warn(format!(
                                "selfAddressPolicy {name} selects no address yet: dnsmasq \
                                 announces its own address on the link until it does"
                            )),
                        }
                    }
                }
            }
        }
    }
    let section = DnsmasqSectionSpec::from_options(format!("dhcpv6-range/{}", res.name), lines);
    out.ensure(ArtifactSpec::DnsmasqSection(section), deps);
}

/// The MTU a `PathMTUPolicy` with `ipv6RA.enabled` advertises on `ifname`, as dnsmasq's
/// `mtu:` value: a number (`mtu.value` with `source: static`) or the `fromInterface` link,
/// whose MTU dnsmasq reads. The RAs that carry it are those of `ipv6RA.scope` when it names
/// an interface resource, else those of every `toInterfaces` link.
pub(super) fn ra_mtu(ctx: &RenderCtx<'_>, ifname: &str) -> Option<RaMtu> {
    ctx.resources().find_map(|r| {
        let ResourceSpec::PathMtuPolicy(p) = &r.spec else { return None };
        if !p.ipv6_ra.as_ref().is_some_and(|ra| ra.enabled) {
            return None;
        }
        let scoped = p.ipv6_ra.as_ref().and_then(|ra| ra.scope.as_deref());
        let carries = match scoped.and_then(|name| ctx.interface(name)) {
            Some(link) => link.ifname == ifname,
            None => {
                p.to_interfaces.iter().any(|t| ctx.interface(t).is_some_and(|l| l.ifname == ifname))
            }
        };
        if !carries {
            return None;
        }
        let fixed =
            p.mtu.as_ref().filter(|m| m.source == Some(MtuSource::Static)).and_then(|m| m.value);
        match fixed {
            Some(v) => Some(RaMtu::Value(v)),
            None => ctx.interface(&p.from_interface).map(|l| RaMtu::Interface(l.ifname)),
        }
    })
}

/// dnsmasq's `ra-param` option for `ifname`, with the `mtu` the RAs carry and dnsmasq's default
/// interval, or `None` when dnsmasq's defaults already fit. The router lifetime is 0 (no
/// default route through the router, RFC 4861 section 4.2) unless a scope on the link sets
/// `defaultRoute`.
pub(super) fn ra_param(
    ctx: &RenderCtx<'_>,
    ifname: &str,
    mtu: Option<RaMtu>,
) -> Option<DnsmasqOption> {
    let default_route = ctx.resources().any(|r| match &r.spec {
        ResourceSpec::Ipv6DhcpScope(sc) => {
            sc.default_route
                && ctx.delegated_link(&sc.delegated_address).is_some_and(|l| l.ifname == ifname)
        }
        _ => false,
    });
    if mtu.is_none() && default_route {
        return None;
    }
    Some(DnsmasqOption::RaParam {
        interface: ifname.to_string(),
        mtu,
        interval: None,
        router_lifetime: (!default_route).then_some(Duration::ZERO),
    })
}

fn server<S: Serialize>(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    section: &str,
    listen: &[String],
    s: &S,
    out: &mut Out,
) {
    let unit = ensure_dnsmasq_unit(ctx, out);
    let mut deps = vec![dep(&unit, "dnsmasq runs the server")];
    for i in listen {
        match ctx.interface(i) {
            Some(l) => deps.push(dep(&l.key, format!("listens on {}", l.ifname))),
            None => out.unresolved("listenInterfaces", i),
        }
    }
    out.ensure_opaque(ArtifactKind::DnsmasqConfig, format!("{section}/{}", res.name), s, deps);
}

/// A server section's `interface=` options for `listen`, and its dependencies: the dnsmasq unit
/// and each link.
fn listen_on(
    ctx: &RenderCtx<'_>,
    listen: &[String],
    out: &mut Out,
) -> (Vec<DnsmasqOption>, Vec<IntentDep>) {
    let unit = ensure_dnsmasq_unit(ctx, out);
    let mut deps = vec![dep(&unit, "dnsmasq runs the server")];
    let mut lines = Vec::new();
    for i in listen {
        match ctx.interface(i) {
            Some(l) => {
                lines.push(DnsmasqOption::Interface(l.ifname.clone()));
                deps.push(dep(&l.key, format!("listens on {}", l.ifname)));
            }
            None => out.unresolved("listenInterfaces", i),
        }
    }
    (lines, deps)
}

/// A server with `managed: false`: another tool runs the daemon, so routerd writes no section
/// and declares no unit for it (the shared dnsmasq still runs for what else declares it).
fn unmanaged(out: &mut Out) {
    out.warn(
        "managed: false: routerd neither configures nor runs this server (set managed: true to \
         serve with routerd's dnsmasq)",
    );
}

/// Whether the scope's `server` names a server resource of the family with `managed: false`.
/// A name no resource has is validation's error, not this.
fn server_unmanaged(ctx: &RenderCtx<'_>, server: &str, v6: bool) -> bool {
    ctx.resources().any(|r| {
        r.name == server
            && match &r.spec {
                ResourceSpec::Ipv4DhcpServer(s) if !v6 => !s.managed,
                ResourceSpec::Ipv6DhcpServer(s) if v6 => !s.managed,
                _ => false,
            }
    })
}

/// A scope of an unmanaged server: nothing to write into another tool's daemon.
fn scope_of_unmanaged(server: &str, out: &mut Out) {
    out.warn(format!(
        "server {server:?} has managed: false: routerd does not serve this scope (the daemon \
         that runs the server must)"
    ));
}

fn server_dep(section: &str, server: &str) -> IntentDep {
    let key = ArtifactKey::new(ArtifactKind::DnsmasqConfig, format!("{section}/{server}"));
    dep(&key, format!("scope of server {server}"))
}

impl super::Render for routerd_model::spec::all::Ipv4DhcpAddressSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render_ipv4_client(ctx, res, self, out);
    }
}

impl super::Render for routerd_model::spec::all::Ipv4DhcpServerSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render_ipv4_server(ctx, res, self, out);
    }

    /// A `dhcp4` DNS upstream reads the DNS servers of that lease.
    fn reads(&self, ctx: &super::RenderCtx<'_>, reads: &mut crate::runtime::RuntimeReads) {
        use routerd_model::spec::dhcp::DnsUpstreamSource;
        let upstream =
            self.dns.as_ref().filter(|d| d.upstream_source == Some(DnsUpstreamSource::Dhcp4));
        let client =
            upstream.and_then(|d| ctx.dhcp_client(d.upstream_interface.as_deref()?, false));
        reads.lease_dns.extend(client);
    }
}

impl super::Render for routerd_model::spec::all::Ipv4DhcpScopeSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render_ipv4_scope(ctx, res, self, out);
    }

    /// `dnsSource: dhcp4` reads the DNS servers of that lease.
    fn reads(&self, ctx: &super::RenderCtx<'_>, reads: &mut crate::runtime::RuntimeReads) {
        if self.dns_source == Some(routerd_model::spec::dhcp::Ipv4DnsSource::Dhcp4) {
            let client = self.dns_interface.as_deref().and_then(|i| ctx.dhcp_client(i, false));
            reads.lease_dns.extend(client);
        }
    }
}

impl super::Render for routerd_model::spec::all::Ipv6DhcpAddressSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render_ipv6_client(ctx, res, self, out);
    }
}

impl super::Render for routerd_model::spec::all::Ipv6PrefixDelegationSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render_prefix_delegation(ctx, res, self, out);
    }
}

impl super::Render for routerd_model::spec::all::Ipv6DhcpServerSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render_ipv6_server(ctx, res, self, out);
    }
}

impl super::Render for routerd_model::spec::all::Ipv6DhcpScopeSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render_ipv6_scope(ctx, res, self, out);
    }
}
