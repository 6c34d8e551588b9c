//! The DHCP family: client bindings (`IPv4DHCPAddress`, `IPv6DHCPAddress`,
//! `IPv6PrefixDelegation`, through systemd-networkd) and servers and scopes (`IPv4DHCPServer`,
//! `IPv4DHCPScope`, `IPv6DHCPServer`, `IPv6DHCPScope`, through dnsmasq as
//! `routerd-dnsmasq.service`).
//!
//! IPv4 servers and scopes render to dnsmasq configuration sections (dnsmasq(8) option lines)
//! and the unit that runs dnsmasq; the client bindings and the IPv6 kinds still render opaque
//! intents (their configurators arrive later) that carry the attributes the plan shows.

use std::time::Duration;

use routerd_host::artifact::{DnsmasqSectionSpec, UnitSpec};
use routerd_host::{ArtifactKey, ArtifactKind, ArtifactSpec, Target, dnsmasq};
use routerd_model::Resource;
use routerd_model::spec::dhcp::{
    DnsUpstreamSource, Ipv4DhcpScopeSpec, Ipv4DhcpServerKind, Ipv4DhcpServerSpec, Ipv4DnsSource,
    Ipv6DhcpScopeSpec, Ipv6DhcpServerSpec, RouterSource,
};
use routerd_model::spec::net::{
    Ipv4DhcpAddressSpec, Ipv6DhcpAddressSpec, Ipv6PrefixDelegationSpec,
};
use serde::Serialize;

use super::ctx::dep;
use super::{Out, RenderCtx};
use crate::intent::{ApplyWith, IntentDep};

/// The one dnsmasq instance every DHCP/DNS kind shares.
pub(super) const DNSMASQ_UNIT: &str = dnsmasq::UNIT;

/// dnsmasq's shortest lease (dnsmasq(8), `--dhcp-range`: "the minimum lease time is two
/// minutes").
const MIN_LEASE: Duration = Duration::from_secs(120);

/// The unit file of `routerd-dnsmasq.service` for `target`.
///
/// dnsmasq reads only routerd's file (`--conf-file`, so neither `/etc/dnsmasq.conf` nor
/// `/etc/dnsmasq.d`), keeps its leases beside it, and listens only on loopback and the
/// `interface=` lines of the server sections (`--bind-dynamic`): with no server section it
/// answers nobody outside the router. It starts only once the file exists. `Type=forking`:
/// dnsmasq forks once its sockets are bound, so a start job fails when dnsmasq cannot serve.
pub(super) fn dnsmasq_unit(target: &Target) -> UnitSpec {
    let dir = target.dnsmasq_dir();
    let conf = target.dnsmasq_conf();
    let mut content = format!(
        "# Written by routerd for the DHCP and DNS resources of router.yaml.\n\
         [Unit]\n\
         Description=routerd DHCP and DNS server (dnsmasq)\n\
         After=network.target\n\
         ConditionPathExists={conf}\n\
         \n\
         [Service]\n\
         Type=forking\n\
         PIDFile={dir}/dnsmasq.pid\n\
         ExecStart={bin} --conf-file={conf} --dhcp-leasefile={dir}/dnsmasq.leases \
         --pid-file={dir}/dnsmasq.pid --bind-dynamic --interface=lo\n\
         Restart=on-failure\n",
        conf = conf.display(),
        dir = dir.display(),
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
    out.ensure(ArtifactSpec::Unit(dnsmasq_unit(ctx.target)), ApplyWith::Systemd, Vec::new())
}

/// A lease time in dnsmasq's form (seconds), from a config duration (`12h`, `90m`, `1h30m`); at
/// least two minutes. `None` for a value that is not a duration.
fn lease_seconds(text: &str) -> Option<u64> {
    let d = routerd_model::parse_duration(text.trim()).ok()?;
    Some(d.max(MIN_LEASE).as_secs())
}

pub(super) fn render_ipv4_client(ctx: &RenderCtx<'_>, s: &Ipv4DhcpAddressSpec, out: &mut Out) {
    client(ctx, &s.interface, ArtifactKind::Dhcp4Client, s, out);
}

pub(super) fn render_ipv6_client(ctx: &RenderCtx<'_>, s: &Ipv6DhcpAddressSpec, out: &mut Out) {
    client(ctx, &s.interface, ArtifactKind::Dhcp6Client, s, out);
}

pub(super) fn render_prefix_delegation(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv6PrefixDelegationSpec,
    out: &mut Out,
) {
    let Some(link) = ctx.interface(&s.interface) else {
        return out.unresolved("interface", &s.interface);
    };
    out.ensure_opaque(
        ArtifactKind::Dhcp6PrefixDelegation,
        res.name.clone(),
        s,
        ApplyWith::Networkd,
        vec![dep(&link.key, format!("requested on {}", link.ifname))],
    );
}

pub(super) fn render_ipv4_server(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv4DhcpServerSpec,
    out: &mut Out,
) {
    if matches!(s.server, Some(Ipv4DhcpServerKind::Kea | Ipv4DhcpServerKind::Dhcpd)) {
        // Not in this build: the opaque intent is Blocked and says so.
        return server(ctx, res, "dhcpv4-server", &s.listen_interfaces, s, out);
    }
    let unit = ensure_dnsmasq_unit(ctx, out);
    let mut deps = vec![dep(&unit, "dnsmasq runs the server")];
    let mut lines = Vec::new();
    for i in &s.listen_interfaces {
        match ctx.interface(i) {
            Some(l) => {
                lines.push(format!("interface={}", l.ifname));
                deps.push(dep(&l.key, format!("listens on {}", l.ifname)));
            }
            None => out.unresolved("listenInterfaces", i),
        }
    }
    if let Some(dns) = &s.dns {
        if !dns.enabled {
            // DHCP only: no DNS service, and the leases do not name the router as resolver.
            lines.push("port=0".into());
        }
        match dns.upstream_source {
            Some(DnsUpstreamSource::Static) => {
                lines.push("no-resolv".into());
                lines.extend(dns.upstream_servers.iter().map(|a| format!("server={a}")));
            }
            Some(DnsUpstreamSource::None) => lines.push("no-resolv".into()),
            // The system's resolvers (/etc/resolv.conf, which the DHCP client keeps current).
            Some(DnsUpstreamSource::System | DnsUpstreamSource::Dhcp4) | None => {}
        }
        if let Some(n) = dns.cache_size {
            lines.push(format!("cache-size={n}"));
        }
    }
    let section = DnsmasqSectionSpec { section: format!("dhcpv4-server/{}", res.name), lines };
    out.ensure(ArtifactSpec::DnsmasqSection(section), ApplyWith::Dnsmasq, deps);
}

pub(super) fn render_ipv6_server(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv6DhcpServerSpec,
    out: &mut Out,
) {
    server(ctx, res, "dhcpv6-server", &s.listen_interfaces, s, out);
}

pub(super) fn render_ipv4_scope(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv4DhcpScopeSpec,
    out: &mut Out,
) {
    let mut deps = vec![server_dep("dhcpv4-server", &s.server)];
    match ctx.interface(&s.interface) {
        Some(l) => deps.push(dep(&l.key, format!("serves {}", l.ifname))),
        None => return out.unresolved("interface", &s.interface),
    }
    let name = format!("dhcpv4-range/{}", res.name);
    if s.dns_source == Some(Ipv4DnsSource::Dhcp4) {
        // The resolvers of the uplink's lease are known only at run time.
        out.ensure_opaque(ArtifactKind::DnsmasqConfig, name, s, ApplyWith::Dnsmasq, deps);
        return;
    }
    let tag = &res.name;
    let mut range = format!("dhcp-range=set:{tag},{},{}", s.range_start, s.range_end);
    match s.lease_time.as_deref() {
        None => {}
        Some(t) => match lease_seconds(t) {
            Some(secs) => range.push_str(&format!(",{secs}")),
            None => out.warn(format!("leaseTime {t:?} is not a duration; dnsmasq's 1h applies")),
        },
    }
    let mut lines = vec![range];
    match (s.router_source, s.router.as_deref()) {
        (Some(RouterSource::Static), Some(r)) => {
            lines.push(format!("dhcp-option=tag:{tag},option:router,{r}"));
        }
        // An empty option: the leases carry no default gateway.
        (Some(RouterSource::None), _) => lines.push(format!("dhcp-option=tag:{tag},option:router")),
        // dnsmasq's default: the address of the interface the request came in on.
        _ => {}
    }
    match s.dns_source {
        Some(Ipv4DnsSource::Static) => lines
            .push(format!("dhcp-option=tag:{tag},option:dns-server,{}", s.dns_servers.join(","))),
        Some(Ipv4DnsSource::None) => lines.push(format!("dhcp-option=tag:{tag},option:dns-server")),
        // dnsmasq's default: itself (the interface's address), when its DNS is on.
        _ => {}
    }
    if s.authoritative {
        lines.push("dhcp-authoritative".into());
    }
    let section = DnsmasqSectionSpec { section: name, lines };
    out.ensure(ArtifactSpec::DnsmasqSection(section), ApplyWith::Dnsmasq, deps);
}

pub(super) fn render_ipv6_scope(
    _ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv6DhcpScopeSpec,
    out: &mut Out,
) {
    let delegated =
        ArtifactKey::new(ArtifactKind::Ipv6Address, format!("delegated/{}", s.delegated_address));
    let deps = vec![
        server_dep("dhcpv6-server", &s.server),
        dep(&delegated, format!("serves the prefix of {}", s.delegated_address)),
    ];
    let name = format!("dhcpv6-range/{}", res.name);
    out.ensure_opaque(ArtifactKind::DnsmasqConfig, name, s, ApplyWith::Dnsmasq, deps);
}

fn client<S: Serialize>(
    ctx: &RenderCtx<'_>,
    iface: &str,
    kind: ArtifactKind,
    s: &S,
    out: &mut Out,
) {
    let Some(link) = ctx.interface(iface) else { return out.unresolved("interface", iface) };
    let name = link.ifname.clone();
    out.ensure_opaque(
        kind,
        name,
        s,
        ApplyWith::Networkd,
        vec![dep(&link.key, format!("runs on {}", link.ifname))],
    );
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
    out.ensure_opaque(
        ArtifactKind::DnsmasqConfig,
        format!("{section}/{}", res.name),
        s,
        ApplyWith::Dnsmasq,
        deps,
    );
}

fn server_dep(section: &str, server: &str) -> IntentDep {
    let key = ArtifactKey::new(ArtifactKind::DnsmasqConfig, format!("{section}/{server}"));
    dep(&key, format!("scope of server {server}"))
}
