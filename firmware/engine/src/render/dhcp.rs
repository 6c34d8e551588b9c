//! The DHCP family: client bindings (`IPv4DHCPAddress`, `IPv6DHCPAddress`,
//! `IPv6PrefixDelegation`, through systemd-networkd) and servers and scopes (`IPv4DHCPServer`,
//! `IPv4DHCPScope`, `IPv6DHCPServer`, `IPv6DHCPScope`, through dnsmasq as
//! `routerd-dnsmasq.service`). Their configurators arrive in a later issue; the intents carry
//! the attributes the plan shows.

use routerd_host::{ArtifactKey, ArtifactKind};
use routerd_model::Resource;
use routerd_model::spec::dhcp::{
    Ipv4DhcpScopeSpec, Ipv4DhcpServerSpec, Ipv6DhcpScopeSpec, Ipv6DhcpServerSpec,
};
use routerd_model::spec::net::{
    Ipv4DhcpAddressSpec, Ipv6DhcpAddressSpec, Ipv6PrefixDelegationSpec,
};
use serde::Serialize;

use super::ctx::dep;
use super::{Out, RenderCtx};
use crate::intent::{ApplyWith, IntentDep};

/// The one dnsmasq instance every DHCP/DNS kind shares.
pub(super) const DNSMASQ_UNIT: &str = "routerd-dnsmasq.service";

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
    server(ctx, res, "dhcpv4-server", &s.listen_interfaces, s, out);
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
    out.ensure_opaque(ArtifactKind::DnsmasqConfig, name, s, ApplyWith::Dnsmasq, deps);
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
    let unit = out.ensure_opaque(
        ArtifactKind::SystemdService,
        DNSMASQ_UNIT,
        serde_json::json!({"unit": DNSMASQ_UNIT, "exec": "dnsmasq"}),
        ApplyWith::Systemd,
        Vec::new(),
    );
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
