//! `IPv4PolicyRoute`: traffic from `sourceCIDRs` / to `destinationCIDRs` is marked in
//! prerouting and routed by its own table (fwmark rule → table → default route via
//! `outboundInterface`). Owns `linux.ipv4.routeTable`, the table's default route,
//! `linux.ipv4.fwmarkRule` and `nft.table/ip/routerd_policy_<name>`.
//!
//! The table's default route uses the gateway of the declared static default route on the same
//! interface, if there is one; otherwise it is a device route.

use routerd_host::nftables::ir::NftAction;
use routerd_model::Resource;
use routerd_model::spec::routing::Ipv4PolicyRouteSpec;

use super::ctx::dep;
use super::nft_match::{ipv4_pairs, rule};
use super::policy_table::{self, PolicyTarget};
use super::{Out, RenderCtx};

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &Ipv4PolicyRouteSpec, out: &mut Out) {
    let Some(link) = ctx.interface(&s.outbound_interface) else {
        return out.unresolved("outboundInterface", &s.outbound_interface);
    };
    let metric = s.route_metric.unwrap_or(0);
    let target = PolicyTarget::through(
        ctx,
        &s.outbound_interface,
        &link,
        s.table,
        metric,
        (s.mark, s.priority),
    );
    let rule_key = policy_table::render(&target, out);
    if s.source_cidrs.is_empty() && s.destination_cidrs.is_empty() {
        return out.warn("no sourceCIDRs or destinationCIDRs: no traffic is marked into the table");
    }
    let pairs = match ipv4_pairs(&s.source_cidrs, &s.destination_cidrs) {
        Ok(p) => p,
        Err(e) => return out.warn(e),
    };
    let rules = pairs.into_iter().map(|m| rule(m, vec![NftAction::SetMark(s.mark)])).collect();
    let deps = vec![dep(&rule_key, format!("mark {:#x} has its rule", s.mark))];
    // allowLocalSourceNAT: what the router itself sends from or to these prefixes is marked
    // and routed into the table too.
    policy_table::ensure_mark_table(
        out,
        "routerd_policy_",
        &res.name,
        rules,
        deps,
        s.allow_local_source_nat,
    );
}

impl super::Render for routerd_model::spec::all::Ipv4PolicyRouteSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, res, self, out);
    }
}
