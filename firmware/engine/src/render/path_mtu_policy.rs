//! `PathMTUPolicy`: TCP MSS clamping between `fromInterface` and `toInterfaces` in
//! `nft.table/inet/routerd_mss_<name>` (`tcp option maxseg size set rt mtu`, or a fixed size
//! from a static MTU), and, when `ipv6RA.enabled`, the MTU option of the router advertisements
//! dnsmasq sends on the LAN links (`ra-param`, RFC 4861 section 4.6.4).

use routerd_host::ArtifactSpec;
use routerd_host::artifact::{DnsmasqSectionSpec, LinkSpec};
use routerd_host::nftables::ir::{
    NftAction, NftChainType, NftFamily, NftHook, NftIpFamily, NftL4Proto, NftMatch, NftPolicy,
    NftTableSpec,
};
use routerd_model::Resource;
use routerd_model::spec::AddressFamily;
use routerd_model::spec::routing::{MtuSource, PathMtuPolicySpec};

use super::ctx::{dep, nft_table_name};
use super::nft_match::{base_chain, rule};
use super::{Out, RenderCtx};

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &PathMtuPolicySpec, out: &mut Out) {
    let Some(from) = ctx.interface(&s.from_interface) else {
        return out.unresolved("fromInterface", &s.from_interface);
    };
    let mut to = Vec::new();
    for name in &s.to_interfaces {
        match ctx.interface(name) {
            Some(i) => to.push(i.ifname),
            None => out.unresolved("toInterfaces", name),
        }
    }
    let static_mtu =
        s.mtu.as_ref().filter(|m| m.source == Some(MtuSource::Static)).and_then(|m| m.value);
    let mut rendered = false;
    if let Some(clamp) = s.tcp_mss_clamp.as_ref().filter(|c| c.enabled) {
        let families: Vec<Option<NftIpFamily>> = match clamp.families.as_slice() {
            [] => vec![None],
            list if list.contains(&AddressFamily::Ipv4) && list.contains(&AddressFamily::Ipv6) => {
                vec![None]
            }
            list => list.iter().map(|f| Some(nf_family(*f))).collect(),
        };
        let mut rules = Vec::new();
        for fam in &families {
            for peer in &to {
                for (iif, oif) in [(&from.ifname, peer), (peer, &from.ifname)] {
                    let mut m = Vec::new();
                    if let Some(f) = fam {
                        m.push(NftMatch::NfProto(*f));
                    }
                    m.extend([
                        NftMatch::IifName(iif.clone()),
                        NftMatch::OifName(oif.clone()),
                        NftMatch::L4Proto(NftL4Proto::Tcp),
                        NftMatch::TcpSyn,
                    ]);
                    rules.push(rule(m, vec![mss_action(static_mtu, *fam)]));
                }
            }
        }
        let table = NftTableSpec {
            family: NftFamily::Inet,
            name: nft_table_name("routerd_mss_", &res.name),
            owner: out.owner().to_string(),
            chains: vec![base_chain(
                "forward",
                NftChainType::Filter,
                NftHook::Forward,
                -150,
                NftPolicy::Accept,
                rules,
            )],
        };
        out.ensure(ArtifactSpec::NftTable(table), Vec::new());
        rendered = true;
    }
    if let Some(ra) = s.ipv6_ra.as_ref().filter(|r| r.enabled) {
        // The links whose RAs carry the MTU: `ipv6RA.scope` naming an interface resource, else
        // every `toInterfaces` link (the LANs behind the narrower path).
        let links: Vec<_> = match ra.scope.as_deref().map(|n| (n, ctx.interface(n))) {
            Some((_, Some(link))) => vec![link],
            Some((name, None)) => {
                out.warn(format!("ipv6RA.scope {name:?} names no interface resource: the RAs of every toInterfaces link carry the MTU"));
                s.to_interfaces.iter().filter_map(|t| ctx.interface(t)).collect()
            }
            None => s.to_interfaces.iter().filter_map(|t| ctx.interface(t)).collect(),
        };
        if links.is_empty() {
            out.warn("ipv6RA: no link to advertise the MTU on (set toInterfaces or ipv6RA.scope)");
        }
        for link in links {
            let Some(mtu) = super::dhcp::ra_mtu(ctx, &link.ifname) else { continue };
            let Some(param) = super::dhcp::ra_param(ctx, &link.ifname, Some(mtu)) else {
                continue;
            };
            let section =
                DnsmasqSectionSpec::from_options(format!("ra-mtu/{}", link.ifname), [param]);
            let unit = super::dhcp::ensure_dnsmasq_unit(ctx, out);
            out.ensure(
                ArtifactSpec::DnsmasqSection(section),
                vec![
                    dep(&unit, "dnsmasq sends the RAs"),
                    dep(&link.key, format!("RAs on {}", link.ifname)),
                ],
            );
            rendered = true;
        }
    }
    if !rendered {
        // Nothing to apply; the policy still declares the link it relies on, so plans show it.
        let link = LinkSpec { ifname: from.ifname.clone(), admin_up: None, mtu: None, kind: None };
        out.observe(ArtifactSpec::Link(link));
        out.warn("neither tcpMSSClamp nor ipv6RA is enabled: nothing to apply");
    }
}

/// MSS for a static MTU: MTU minus IPv4 (20) or IPv6 (40) and TCP (20) headers; with both
/// families in one rule, the IPv6 value (smaller, safe for both).
fn mss_action(static_mtu: Option<u16>, fam: Option<NftIpFamily>) -> NftAction {
    match (static_mtu, fam) {
        (Some(mtu), Some(NftIpFamily::Ipv4)) => NftAction::SetMss(mtu.saturating_sub(40)),
        (Some(mtu), _) => NftAction::SetMss(mtu.saturating_sub(60)),
        (None, _) => NftAction::ClampMssToPmtu,
    }
}

fn nf_family(f: AddressFamily) -> NftIpFamily {
    match f {
        AddressFamily::Ipv4 => NftIpFamily::Ipv4,
        AddressFamily::Ipv6 => NftIpFamily::Ipv6,
    }
}

impl super::Render for routerd_model::spec::all::PathMtuPolicySpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, res, self, out);
    }
}
