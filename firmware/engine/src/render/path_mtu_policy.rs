//! `PathMTUPolicy`: TCP MSS clamping between `fromInterface` and `toInterfaces` in
//! `nft.table/inet/routerd_mss_<name>` (`tcp option maxseg size set rt mtu`, or a fixed size
//! from a static MTU), and the dnsmasq RA MTU option when `ipv6RA.enabled` (dnsmasq
//! configurator in a later issue).

use routerd_host::artifact::LinkSpec;
use routerd_host::nftables::ir::{
    NftAction, NftChainType, NftFamily, NftHook, NftIpFamily, NftL4Proto, NftMatch, NftPolicy,
    NftTableSpec,
};
use routerd_host::{ArtifactKind, ArtifactSpec};
use routerd_model::Resource;
use routerd_model::spec::AddressFamily;
use routerd_model::spec::routing::{MtuSource, PathMtuPolicySpec};

use super::ctx::{dep, nft_table_name};
use super::nft_match::{base_chain, rule};
use super::{Out, RenderCtx};
use crate::intent::ApplyWith;

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
        out.ensure(ArtifactSpec::NftTable(table), ApplyWith::Nftnl, Vec::new());
        rendered = true;
    }
    if s.ipv6_ra.as_ref().is_some_and(|r| r.enabled) {
        let attrs =
            serde_json::json!({"option": "ra-param", "interface": from.ifname, "mtu": static_mtu});
        let name = format!("ra-mtu/{}", from.ifname);
        out.ensure_opaque(
            ArtifactKind::DnsmasqConfig,
            name,
            attrs,
            ApplyWith::Dnsmasq,
            vec![dep(&from.key, "needs the LAN link")],
        );
        rendered = true;
    }
    if !rendered {
        // Nothing to apply; the policy still declares the link it relies on, so plans show it.
        let link = LinkSpec { ifname: from.ifname.clone(), admin_up: None, mtu: None, kind: None };
        out.observe(ArtifactSpec::Link(link), ApplyWith::Rtnetlink);
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
