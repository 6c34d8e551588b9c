//! `DSLiteTunnel`: an ip6tnl link in ipip6 mode towards the AFTR (RFC 6333), and the IPv4
//! default route through it when `defaultRoute`.
//!
//! With `remoteAddress` (and a local endpoint that is static or "any"), the tunnel is a typed
//! `linux.ipip6.tunnel` artifact that rtnetlink creates. Endpoints known only at run time
//! (`aftrFQDN` to resolve, a delegated or suffix-derived local address) arrive in a later
//! issue: until then the tunnel is rendered as an opaque intent, which stays `Blocked`, and the
//! resource's warning says what is missing.

use std::net::Ipv6Addr;

use ipnet::IpNet;
use routerd_host::artifact::{EncapLimit, Ip6TunnelMode, Ip6TunnelSpec, RouteSpec};
use routerd_host::{ArtifactKind, ArtifactSpec, ROUTERD_ROUTE_PROTOCOL};
use routerd_model::Resource;
use routerd_model::spec::net::{DsLiteTunnelSpec, LocalAddressSource};

use super::ctx::dep;
use super::{Out, RenderCtx};
use crate::intent::ApplyWith;

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &DsLiteTunnelSpec, out: &mut Out) {
    let Some(under) = ctx.interface(&s.interface) else {
        return out.unresolved("interface", &s.interface);
    };
    let ifname = s.tunnel_name.clone().unwrap_or_else(|| res.name.clone());
    let deps = vec![dep(&under.key, format!("encapsulates over {}", under.ifname))];
    let tunnel = match tunnel_spec(s, &ifname, &under.ifname) {
        Ok(spec) => out.ensure(ArtifactSpec::Ip6Tunnel(spec), ApplyWith::Rtnetlink, deps),
        Err(missing) => {
            out.warn(format!("the tunnel is not created yet: {missing}"));
            out.ensure_opaque(
                ArtifactKind::Ipip6Tunnel,
                ifname.clone(),
                s,
                ApplyWith::Rtnetlink,
                deps,
            )
        }
    };
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

/// The tunnel as `ip -6 tunnel add IFNAME mode ipip6 remote AFTR local LOCAL dev UNDERLYING
/// encaplimit LIMIT`, or what is missing to build it from the config alone.
fn tunnel_spec(
    s: &DsLiteTunnelSpec,
    ifname: &str,
    underlying: &str,
) -> Result<Ip6TunnelSpec, String> {
    let Some(remote) = &s.remote_address else {
        return Err(
            "remoteAddress is not set, and resolving aftrFQDN arrives in a later issue".to_string()
        );
    };
    let remote = parse_v6("remoteAddress", remote)?;
    let local = match (s.local_address_source, &s.local_address) {
        (Some(LocalAddressSource::DelegatedAddress), _) => {
            return Err("localAddressSource delegatedAddress needs the delegated prefix, which \
                        arrives in a later issue"
                .to_string());
        }
        (_, Some(local)) => Some(parse_v6("localAddress", local)?),
        (_, None) if s.local_address_suffix.is_some() => {
            return Err("localAddressSuffix needs the interface's prefix at run time, which \
                        arrives in a later issue"
                .to_string());
        }
        // Source `interface` without a suffix: any local address, the kernel picks the source
        // address of the route to the AFTR.
        (_, None) => None,
    };
    let encap_limit = match s.encapsulation_limit.as_deref() {
        None => EncapLimit::DEFAULT,
        Some("none") => EncapLimit::None,
        Some(text) => text
            .parse()
            .map(EncapLimit::Limit)
            .map_err(|_| format!("encapsulationLimit {text:?} is neither 0..255 nor none"))?,
    };
    Ok(Ip6TunnelSpec {
        ifname: ifname.to_string(),
        mode: Ip6TunnelMode::Ipip6,
        remote,
        local,
        underlying: Some(underlying.to_string()),
        encap_limit,
        mtu: s.mtu.map(u32::from),
        admin_up: Some(true),
    })
}

fn parse_v6(field: &str, text: &str) -> Result<Ipv6Addr, String> {
    text.parse().map_err(|_| format!("{field} {text:?} is not an IPv6 address"))
}
