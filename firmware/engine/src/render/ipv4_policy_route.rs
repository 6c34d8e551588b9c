//! `IPv4PolicyRoute`: traffic from `sourceCIDRs` / to `destinationCIDRs` is marked in
//! prerouting and routed by its own table (fwmark rule → table → default route via
//! `outboundInterface`). Owns `linux.ipv4.routeTable`, the table's default route,
//! `linux.ipv4.fwmarkRule` and `nft.table/ip/routerd_policy_<name>`.
//!
//! The table's default route uses the gateway of the declared static default route on the same
//! interface, if there is one; otherwise it is a device route.

use routerd_host::ArtifactSpec;
use routerd_host::nftables::ir::{
    NftAction, NftChainType, NftFamily, NftHook, NftPolicy, NftTableSpec,
};
use routerd_model::Resource;
use routerd_model::spec::routing::Ipv4PolicyRouteSpec;

use super::ctx::{dep, nft_table_name};
use super::nft_match::{base_chain, ipv4_pairs, rule};
use super::policy_table::{self, PolicyTarget};
use super::{Out, RenderCtx};
use crate::intent::ApplyWith;

/// Priority of the marking chains: `mangle` (-150), before routing decides.
pub(super) const MANGLE_PRIORITY: i32 = -150;

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &Ipv4PolicyRouteSpec, out: &mut Out) {
    let Some(link) = ctx.interface(&s.outbound_interface) else {
        return out.unresolved("outboundInterface", &s.outbound_interface);
    };
    let gateway = ctx.default_gateway_v4(&s.outbound_interface);
    let target = PolicyTarget {
        link: &link,
        gateway,
        table: s.table,
        metric: s.route_metric.unwrap_or(0),
        mark: Some((s.mark, s.priority)),
        extra_deps: gateway
            .map(|g| ctx.addresses_covering(&s.outbound_interface, g))
            .unwrap_or_default(),
    };
    let rule_key = policy_table::render(&target, out);
    if s.allow_local_source_nat {
        out.warn("allowLocalSourceNAT is not applied in this build: locally originated traffic is not marked");
    }
    if s.source_cidrs.is_empty() && s.destination_cidrs.is_empty() {
        return out.warn("no sourceCIDRs or destinationCIDRs: no traffic is marked into the table");
    }
    let pairs = match ipv4_pairs(&s.source_cidrs, &s.destination_cidrs) {
        Ok(p) => p,
        Err(e) => return out.warn(e),
    };
    let rules = pairs.into_iter().map(|m| rule(m, vec![NftAction::SetMark(s.mark)])).collect();
    let table = NftTableSpec {
        family: NftFamily::Ip,
        name: nft_table_name("routerd_policy_", &res.name),
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
    out.ensure(
        ArtifactSpec::NftTable(table),
        ApplyWith::Nftnl,
        vec![dep(&rule_key, format!("mark {:#x} has its rule", s.mark))],
    );
}
