//! `DSLiteTunnel`: an ip6tnl link in ipip6 mode towards the AFTR (RFC 6333), and the IPv4
//! default route through it when `defaultRoute` (tunnel configurator in a later issue; the
//! kernel here has no ip6 tunnels).

use ipnet::IpNet;
use routerd_host::artifact::RouteSpec;
use routerd_host::{ArtifactKind, ArtifactSpec, ROUTERD_ROUTE_PROTOCOL};
use routerd_model::Resource;
use routerd_model::spec::net::DsLiteTunnelSpec;

use super::ctx::dep;
use super::{Out, RenderCtx};
use crate::intent::ApplyWith;

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &DsLiteTunnelSpec, out: &mut Out) {
    let Some(under) = ctx.interface(&s.interface) else {
        return out.unresolved("interface", &s.interface);
    };
    let ifname = s.tunnel_name.clone().unwrap_or_else(|| res.name.clone());
    let tunnel = out.ensure_opaque(
        ArtifactKind::Ipip6Tunnel,
        ifname.clone(),
        s,
        ApplyWith::Rtnetlink,
        vec![dep(&under.key, format!("encapsulates over {}", under.ifname))],
    );
    if s.default_route {
        let route = RouteSpec {
            table: 254,
            destination: IpNet::V4(ipnet::Ipv4Net::default()),
            gateway: None,
            oif: Some(ifname.clone()),
            metric: s.route_metric.unwrap_or(0),
            protocol: ROUTERD_ROUTE_PROTOCOL,
        };
        out.ensure(
            ArtifactSpec::Route(route),
            ApplyWith::Rtnetlink,
            vec![dep(&tunnel, format!("routes through {ifname}"))],
        );
    }
}
