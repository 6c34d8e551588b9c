//! `IPv4SourceNAT`: `nft.table/ip/routerd_snat_<name>` with one postrouting rule per source
//! prefix: masquerade (`interfaceAddress`), snat to one address (`address`), or to a pool.

use std::net::IpAddr;

use routerd_host::ArtifactSpec;
use routerd_host::nftables::ir::{
    NftAction, NftChainType, NftFamily, NftHook, NftMatch, NftPolicy, NftTableSpec,
};
use routerd_model::Resource;
use routerd_model::spec::routing::{Ipv4SourceNatSpec, NatTranslationType, PortMappingType};

use super::ctx::nft_table_name;
use super::nft_match::{base_chain, ipv4_pairs, rule};
use super::{Out, RenderCtx};

/// `srcnat` priority.
const SRCNAT_PRIORITY: i32 = 100;

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &Ipv4SourceNatSpec, out: &mut Out) {
    let Some(link) = ctx.interface(&s.outbound_interface) else {
        return out.unresolved("outboundInterface", &s.outbound_interface);
    };
    let ports = s.translation.port_mapping.as_ref().and_then(|p| match p.r#type {
        Some(PortMappingType::Range) => p.start.zip(p.end),
        _ => None,
    });
    let Some(action) = translation(s, ports, out) else { return };
    let pairs = match ipv4_pairs(&s.source_cidrs, &[]) {
        Ok(p) => p,
        Err(e) => return out.warn(e),
    };
    let rules = pairs
        .into_iter()
        .map(|mut m| {
            m.insert(0, NftMatch::OifName(link.ifname.clone()));
            rule(m, vec![action.clone()])
        })
        .collect();
    let table = NftTableSpec {
        family: NftFamily::Ip,
        name: nft_table_name("routerd_snat_", &res.name),
        owner: out.owner().to_string(),
        chains: vec![base_chain(
            "postrouting",
            NftChainType::Nat,
            NftHook::Postrouting,
            SRCNAT_PRIORITY,
            NftPolicy::Accept,
            rules,
        )],
    };
    // No dependency on the link: nft matches `oifname` by name, so the table is valid before
    // the link exists and takes effect when it appears.
    out.ensure(ArtifactSpec::NftTable(table), Vec::new());
}

fn translation(
    s: &Ipv4SourceNatSpec,
    ports: Option<(u16, u16)>,
    out: &mut Out,
) -> Option<NftAction> {
    let t = &s.translation;
    let parse = |a: &str| a.parse::<IpAddr>().ok().filter(IpAddr::is_ipv4);
    match t.r#type {
        NatTranslationType::InterfaceAddress => Some(NftAction::Masquerade { ports }),
        NatTranslationType::Address => match t.address.as_deref().and_then(parse) {
            Some(address) => Some(NftAction::Snat { address, last: None, ports }),
            None => {
                out.warn("translation type address needs an IPv4 translation.address");
                None
            }
        },
        // The kernel's NAT takes one range of addresses: the pool's, sorted, when they follow
        // each other; else its first contiguous run, with a warning.
        NatTranslationType::Pool => {
            let listed: Vec<&str> = if t.addresses.is_empty() {
                t.address.as_deref().into_iter().collect()
            } else {
                t.addresses.iter().map(String::as_str).collect()
            };
            let mut pool: Vec<std::net::Ipv4Addr> = listed
                .iter()
                .filter_map(|a| match parse(a) {
                    Some(IpAddr::V4(v4)) => Some(v4),
                    _ => None,
                })
                .collect();
            pool.sort_unstable();
            pool.dedup();
            let Some(&first) = pool.first() else {
                out.warn("translation type pool needs IPv4 translation.addresses");
                return None;
            };
            let run = pool
                .windows(2)
                .take_while(|w| u32::from(w[1]) == u32::from(w[0]).wrapping_add(1))
                .count();
            let last = pool[run];
            if run + 1 < pool.len() {
                out.warn(format!(
                    "pool addresses are not one contiguous range: translating to {first}-{last} \
                     only (the kernel's NAT takes one range)"
                ));
            }
            let last = (last != first).then_some(IpAddr::V4(last));
            Some(NftAction::Snat { address: IpAddr::V4(first), last, ports })
        }
    }
}

impl super::Render for routerd_model::spec::all::Ipv4SourceNatSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, res, self, out);
    }
}
