//! `IPv4StaticRoute` / `IPv6StaticRoute`: one route with routerd's protocol number, depending
//! on its link and on the declared addresses that make its gateway reachable.

use std::net::IpAddr;

use ipnet::IpNet;
use routerd_host::artifact::RouteSpec;
use routerd_host::{ArtifactSpec, ROUTERD_ROUTE_PROTOCOL};
use routerd_model::spec::net::{Ipv4StaticRouteSpec, Ipv6StaticRouteSpec};

use super::ctx::dep;
use super::{Out, RenderCtx};

pub(super) fn render_ipv4(ctx: &RenderCtx<'_>, s: &Ipv4StaticRouteSpec, out: &mut Out) {
    route(ctx, s.interface.as_deref(), &s.destination, s.via.as_deref(), s.metric, s.table, out);
}

pub(super) fn render_ipv6(ctx: &RenderCtx<'_>, s: &Ipv6StaticRouteSpec, out: &mut Out) {
    // The kernel stores IPv6 metric 0 as 1024 (IP6_RT_PRIO_USER), so render what it will
    // report; otherwise the route would look drifted forever.
    let metric = if s.metric == 0 { IP6_RT_PRIO_USER } else { s.metric };
    route(ctx, s.interface.as_deref(), &s.destination, s.via.as_deref(), metric, s.table, out);
}

/// Default IPv6 route metric, `include/net/ip6_route.h`.
const IP6_RT_PRIO_USER: u32 = 1024;

fn route(
    ctx: &RenderCtx<'_>,
    interface: Option<&str>,
    destination: &str,
    via: Option<&str>,
    metric: u32,
    table: u32,
    out: &mut Out,
) {
    let Ok(destination) = destination.parse::<IpNet>() else {
        return out.warn(format!("destination {destination:?} is not a prefix"));
    };
    let gateway = match via.map(str::parse::<IpAddr>) {
        Some(Ok(g)) => Some(g),
        Some(Err(_)) => return out.warn(format!("via {via:?} is not an address")),
        None => None,
    };
    let mut deps = Vec::new();
    let mut oif = None;
    if let Some(name) = interface {
        let Some(link) = ctx.interface(name) else { return out.unresolved("interface", name) };
        deps.push(dep(&link.key, format!("needs link {}", link.ifname)));
        if let Some(g) = gateway {
            for addr in ctx.addresses_covering(name, g) {
                deps.push(dep(&addr, format!("gateway {g} is reachable through {}", addr.name)));
            }
        }
        oif = Some(link.ifname);
    }
    let spec = RouteSpec {
        table,
        destination: destination.trunc(),
        gateway,
        oif,
        metric,
        protocol: ROUTERD_ROUTE_PROTOCOL,
    };
    out.ensure(ArtifactSpec::Route(spec), deps);
}

impl super::Render for routerd_model::spec::all::Ipv4StaticRouteSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        _: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render_ipv4(ctx, self, out);
    }
}

impl super::Render for routerd_model::spec::all::Ipv6StaticRouteSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        _: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render_ipv6(ctx, self, out);
    }
}
