//! `IPv4PolicyRouteSet`: like `IPv4PolicyRoute` with several targets; matching flows are spread
//! over the targets by a hash (`mode: hash`). Owns, per target, a route table, its default
//! route and a fwmark rule, plus `nft.table/ip/routerd_policyset_<name>`.

use routerd_host::ArtifactSpec;
use routerd_host::nftables::ir::{
    NftAction, NftChainType, NftFamily, NftHook, NftPolicy, NftTableSpec,
};
use routerd_model::Resource;
use routerd_model::spec::routing::Ipv4PolicyRouteSetSpec;

use super::ctx::{dep, nft_table_name};
use super::ipv4_policy_route::MANGLE_PRIORITY;
use super::nft_match::{base_chain, ipv4_pairs, rule};
use super::policy_table::{self, PolicyTarget};
use super::{Out, RenderCtx};
use crate::intent::ApplyWith;

pub(super) fn render(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv4PolicyRouteSetSpec,
    out: &mut Out,
) {
    let mut rule_deps = Vec::new();
    let mut marks = Vec::new();
    for t in &s.targets {
        let Some(link) = ctx.interface(&t.outbound_interface) else {
            out.unresolved("outboundInterface", &t.outbound_interface);
            continue;
        };
        let gateway = ctx.default_gateway_v4(&t.outbound_interface);
        let target = PolicyTarget {
            link: &link,
            gateway,
            table: t.table,
            metric: t.route_metric.unwrap_or(0),
            mark: Some((t.mark, t.priority)),
            extra_deps: gateway
                .map(|g| ctx.addresses_covering(&t.outbound_interface, g))
                .unwrap_or_default(),
        };
        let key = policy_table::render(&target, out);
        rule_deps.push(dep(&key, format!("mark {:#x} has its rule", t.mark)));
        marks.push(t.mark);
    }
    let Some(&first) = marks.first() else { return };
    let pairs = match ipv4_pairs(&s.source_cidrs, &s.destination_cidrs) {
        Ok(p) => p,
        Err(e) => return out.warn(e),
    };
    let actions =
        hash_actions(&marks, &s.hash_fields, out).unwrap_or(vec![NftAction::SetMark(first)]);
    let rules = pairs.into_iter().map(|m| rule(m, actions.clone())).collect();
    let table = NftTableSpec {
        family: NftFamily::Ip,
        name: nft_table_name("routerd_policyset_", &res.name),
        owner: out.owner().to_string(),
        chains: vec![base_chain(
            "prerouting",
            NftChainType::Filter,
            NftHook::Prerouting,
            MANGLE_PRIORITY,
            NftPolicy::Accept,
            rules,
        )],
    };
    out.ensure(ArtifactSpec::NftTable(table), ApplyWith::Nftnl, rule_deps);
}

/// The marking statements spreading flows over `marks`. `None` when only one target exists.
fn hash_actions(marks: &[u32], _hash_fields: &[String], out: &mut Out) -> Option<Vec<NftAction>> {
    if marks.len() < 2 {
        return None;
    }
    out.warn(
        "hash distribution over several targets is not encoded by this build: \
         all matching traffic takes the first target",
    );
    None
}
