//! `ExposeService`: a port forward. `nft.table/ip|ip6/routerd_dnat_<name>` rewrites the
//! destination of traffic arriving on the zone's interfaces (or `viaInterface`) for
//! `externalPort`; the zone firewall adds the matching forward accept.

use std::net::IpAddr;

use ipnet::IpNet;
use routerd_host::ArtifactSpec;
use routerd_host::nftables::ir::{
    NftAction, NftChainType, NftFamily, NftHook, NftL4Proto, NftMatch, NftPolicy, NftTableSpec,
};
use routerd_model::Resource;
use routerd_model::spec::firewall::{ExposeServiceSpec, Protocol};

use super::ctx::nft_table_name;
use super::nft_match::{base_chain, rule, saddr};
use super::{Out, RenderCtx};
use crate::intent::ApplyWith;

/// `dstnat` priority.
const DSTNAT_PRIORITY: i32 = -100;

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &ExposeServiceSpec, out: &mut Out) {
    let Ok(address) = s.internal_address.parse::<IpAddr>() else {
        return out.warn(format!("internalAddress {:?} is not an address", s.internal_address));
    };
    let ifnames = match s.via_interface.as_deref() {
        Some(v) => match ctx.interface(v) {
            Some(i) => vec![i.ifname],
            None => return out.unresolved("viaInterface", v),
        },
        None => match ctx.zone_ifnames(&s.from_zone) {
            Some(z) => z,
            None => return out.unresolved("fromZone", &s.from_zone),
        },
    };
    let mut sources = Vec::new();
    for src in &s.sources {
        match src.parse::<IpNet>() {
            Ok(n) if n.addr().is_ipv4() == address.is_ipv4() => sources.push(Some(saddr(n))),
            _ => {
                out.warn(format!("source {src:?} is not a prefix of the internal address's family"))
            }
        }
    }
    if sources.is_empty() {
        sources.push(None);
    }
    if s.hairpin {
        out.warn("hairpin is not applied in this build: LAN clients must use the internal address");
    }
    let proto = match s.protocol {
        Protocol::Tcp => NftL4Proto::Tcp,
        Protocol::Udp => NftL4Proto::Udp,
    };
    let mut rules = Vec::new();
    for ifname in &ifnames {
        for src in &sources {
            let mut m = vec![NftMatch::IifName(ifname.clone())];
            m.extend(src.clone());
            m.push(NftMatch::L4Proto(proto));
            m.push(NftMatch::Dport(s.external_port));
            rules.push(rule(m, vec![NftAction::Dnat { address, port: Some(s.internal_port) }]));
        }
    }
    let family = if address.is_ipv4() { NftFamily::Ip } else { NftFamily::Ip6 };
    let table = NftTableSpec {
        family,
        name: nft_table_name("routerd_dnat_", &res.name),
        owner: out.owner().to_string(),
        chains: vec![base_chain(
            "prerouting",
            NftChainType::Nat,
            NftHook::Prerouting,
            DSTNAT_PRIORITY,
            NftPolicy::Accept,
            rules,
        )],
    };
    out.ensure(ArtifactSpec::NftTable(table), ApplyWith::Nftnl, Vec::new());
}
