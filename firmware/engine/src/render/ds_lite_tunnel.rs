//! `DSLiteTunnel`: an ip6tnl link in ipip6 mode towards the AFTR (RFC 6333), and the IPv4
//! default route through it when `defaultRoute`.
//!
//! With `remoteAddress`, the tunnel is a typed `linux.ipip6.tunnel` artifact that rtnetlink
//! creates. Its local end is static, "any" (the kernel picks the source address of the route to
//! the AFTR), or, with `localAddressSource: delegatedAddress`, the address systemd-networkd
//! derived from a delegated prefix: a runtime value (ADR 0008), so the tunnel waits for that
//! address, follows it when the prefix changes and is withdrawn when it is lost. Without
//! `remoteAddress`, the remote end is the AFTR the scheduler resolved from `aftrFQDN`
//! ([`crate::aftr`]), a runtime value too: the tunnel observes `routerd.aftrAddress/<ifname>`,
//! waits for its first answer and follows a new one. With `localAddressSource: interface` and
//! a `localAddressSuffix`, the local end is the suffix on the prefix of the underlying link's
//! first global IPv6 address (the link's addresses are a runtime value too); while the link
//! has none, the tunnel is an opaque intent, `Blocked`, and the warning says what it waits for.

use std::net::Ipv6Addr;

use ipnet::{IpNet, Ipv6Net};
use routerd_host::artifact::{
    AftrAddressSpec, EncapLimit, Ip6TunnelMode, Ip6TunnelSpec, RouteSpec,
};
use routerd_host::{ArtifactKey, ArtifactKind, ArtifactSpec, ROUTERD_ROUTE_PROTOCOL};
use routerd_model::Resource;
use routerd_model::spec::net::{DsLiteTunnelSpec, LocalAddressSource};

use super::ctx::dep;
use super::{Out, RenderCtx};
use crate::aftr;
use crate::intent::{Carried, IntentDep};

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &DsLiteTunnelSpec, out: &mut Out) {
    let Some(under) = ctx.interface(&s.interface) else {
        return out.unresolved("interface", &s.interface);
    };
    let ifname = s.tunnel_name.clone().unwrap_or_else(|| res.name.clone());
    let mut deps = vec![dep(&under.key, format!("encapsulates over {}", under.ifname))];
    let mut delegated = None;
    if s.local_address_source == Some(LocalAddressSource::DelegatedAddress) {
        let name = s.local_delegated_address.as_deref().unwrap_or_default();
        let Some(link) = ctx.delegated_link(name) else {
            return out.unresolved("localDelegatedAddress", name);
        };
        let key = ArtifactKey::new(ArtifactKind::Dhcp6DelegatedAddress, link.ifname.clone());
        deps.push(IntentDep {
            carries: Some(Carried::Addresses),
            ..dep(&key, format!("local end from delegated address {name} on {}", link.ifname))
        });
        delegated = Some(ctx.runtime.delegated_address(&link.ifname));
    }
    // Without remoteAddress, the AFTR is the scheduler's answer for aftrFQDN.
    let mut resolved = None;
    if let (None, Some(fqdn)) = (&s.remote_address, &s.aftr_fqdn) {
        let lookup = AftrAddressSpec {
            ifname: ifname.clone(),
            fqdn: fqdn.clone(),
            addresses: Vec::new(),
            detail: None,
        };
        let key = out.observe(ArtifactSpec::Aftr(lookup));
        deps.push(IntentDep {
            carries: Some(Carried::Addresses),
            ..dep(&key, format!("remote end: the AFTR {fqdn} resolves to"))
        });
        let answer = ctx.runtime.aftr.get(&ifname).map(Vec::as_slice).unwrap_or_default();
        resolved =
            Some(match aftr::pick(answer, s.aftr_address_ordinal, s.aftr_address_selection) {
                Some(a) => Ok(a),
                // No answer yet: a placeholder, while the dependency makes the tunnel wait.
                None if answer.is_empty() => Ok(Ipv6Addr::UNSPECIFIED),
                None => Err(format!(
                    "{fqdn} has {} AAAA records and aftrAddressOrdinal asks for the {}th",
                    answer.len(),
                    s.aftr_address_ordinal.unwrap_or(1)
                )),
            });
    }
    // A suffix on the underlying link's own prefix: its first global IPv6 address.
    let own = ctx.runtime.interface_addresses(&under.ifname).iter().find_map(|a| match a {
        IpNet::V6(n) if is_global_v6(n.addr()) => Some(*n),
        _ => None,
    });
    let tunnel = match tunnel_spec(s, &ifname, &under.ifname, delegated, resolved, own) {
        Ok(spec) => out.ensure(ArtifactSpec::Ip6Tunnel(spec), deps),
        Err(missing) => {
            out.warn(format!("the tunnel is not created yet: {missing}"));
            out.ensure_opaque(ArtifactKind::Ipip6Tunnel, ifname.clone(), s, deps)
        }
    };
    if s.default_route {
        let route = RouteSpec {
            table: routerd_host::MAIN_ROUTE_TABLE,
            destination: IpNet::V4(ipnet::Ipv4Net::default()),
            gateway: None,
            oif: Some(ifname.clone()),
            metric: s.route_metric.unwrap_or(0),
            protocol: ROUTERD_ROUTE_PROTOCOL,
        };
        out.ensure(
            ArtifactSpec::Route(route),
            vec![dep(&tunnel, format!("routes through {ifname}"))],
        );
    }
}

/// The tunnel as `ip -6 tunnel add IFNAME mode ipip6 remote AFTR local LOCAL dev UNDERLYING
/// encaplimit LIMIT`, or what is missing to build it from the config alone. `delegated`: for
/// `localAddressSource: delegatedAddress`, the address networkd derived, `None` while there is
/// none (the tunnel then waits on its binding and the local end here is a placeholder).
/// `own`: the underlying link's first global IPv6 address, for a `localAddressSuffix` on it.
fn tunnel_spec(
    s: &DsLiteTunnelSpec,
    ifname: &str,
    underlying: &str,
    delegated: Option<Option<Ipv6Net>>,
    resolved: Option<Result<Ipv6Addr, String>>,
    own: Option<Ipv6Net>,
) -> Result<Ip6TunnelSpec, String> {
    let remote = match (&s.remote_address, resolved) {
        (Some(remote), _) => parse_v6("remoteAddress", remote)?,
        (None, Some(resolved)) => resolved?,
        (None, None) => return Err("neither remoteAddress nor aftrFQDN is set".to_string()),
    };
    let local = match (s.local_address_source, &s.local_address) {
        (Some(LocalAddressSource::DelegatedAddress), _) => {
            let suffix = match &s.local_address_suffix {
                Some(text) => Some(parse_v6("localAddressSuffix", text)?),
                None => None,
            };
            delegated.flatten().map(|net| match suffix {
                Some(suffix) => with_interface_id(net, suffix),
                None => net.addr(),
            })
        }
        (_, Some(local)) => Some(parse_v6("localAddress", local)?),
        (_, None) if s.local_address_suffix.is_some() => {
            let text = s.local_address_suffix.as_deref().unwrap_or_default();
            let suffix = parse_v6("localAddressSuffix", text)?;
            match own {
                Some(net) => Some(with_interface_id(net, suffix)),
                None => {
                    return Err(format!(
                        "localAddressSuffix {text} goes on the prefix of {underlying}'s global \
                         IPv6 address, and {underlying} has none yet"
                    ));
                }
            }
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

/// `net`'s prefix with the host bits of `suffix` (`2001:db8:0:2a::1/64` and `::100` give
/// `2001:db8:0:2a::100`).
fn with_interface_id(net: Ipv6Net, suffix: Ipv6Addr) -> Ipv6Addr {
    let mask = u128::from(net.netmask());
    Ipv6Addr::from((u128::from(net.network()) & mask) | (u128::from(suffix) & !mask))
}

fn parse_v6(field: &str, text: &str) -> Result<Ipv6Addr, String> {
    text.parse().map_err(|_| format!("{field} {text:?} is not an IPv6 address"))
}

/// A global unicast IPv6 address (2000::/3, RFC 4291 section 2.4): what an ISP's prefix gives,
/// not a link-local or unique local one.
fn is_global_v6(a: Ipv6Addr) -> bool {
    a.segments()[0] & 0xe000 == 0x2000
}

impl super::Render for routerd_model::spec::all::DsLiteTunnelSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, res, self, out);
    }

    /// A local end given as a suffix on the underlying link's own prefix reads that link's
    /// addresses.
    fn reads(&self, ctx: &super::RenderCtx<'_>, reads: &mut crate::runtime::RuntimeReads) {
        if self.local_address_suffix.is_some()
            && self.local_address.is_none()
            && self.local_address_source
                != Some(routerd_model::spec::net::LocalAddressSource::DelegatedAddress)
        {
            reads.address_links.extend(ctx.interface(&self.interface).map(|i| i.ifname));
        }
    }
}
