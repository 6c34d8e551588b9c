//! The triple every policy-routing kind owns (seed 000: "linux.ipv4.fwmarkRule,
//! linux.ipv4.routeTable"): a numbered table, its default route through an interface, and the
//! fwmark rule steering marked packets into it. Created in that order, so a marked packet never
//! meets an empty table.

use std::net::IpAddr;

use ipnet::IpNet;
use routerd_host::artifact::{FwmarkRuleSpec, RouteSpec, RouteTableSpec};
use routerd_host::nftables::ir::{
    NftChainType, NftFamily, NftHook, NftPolicy, NftRule, NftTableSpec,
};
use routerd_host::{ArtifactKey, ArtifactSpec, ROUTERD_ROUTE_PROTOCOL};

use super::ctx::{IfaceRef, dep, nft_table_name};
use super::nft_match::base_chain;
use super::{Out, RenderCtx};
use crate::intent::IntentDep;

/// Priority of the marking chains: `mangle` (-150), before routing decides.
pub(super) const MANGLE_PRIORITY: i32 = -150;

/// One policy target.
pub(super) struct PolicyTarget<'a> {
    /// Outbound link.
    pub link: &'a IfaceRef,
    /// Next hop of the table's default route; `None` for a device route.
    pub gateway: Option<IpAddr>,
    /// Routing table number.
    pub table: u32,
    /// Route metric in the table.
    pub metric: u32,
    /// fwmark (and rule) if the target is steered by mark; `None` for a table only.
    pub mark: Option<(u32, u32)>,
    /// What the default route must wait for besides link and table (addresses making the
    /// gateway reachable, a healthy check).
    pub extra_deps: Vec<IntentDep>,
}

impl<'a> PolicyTarget<'a> {
    /// A marked target through `iface`, whose default route takes the gateway of the static
    /// default route declared on that interface (a device route when there is none).
    pub(super) fn through(
        ctx: &RenderCtx<'_>,
        iface: &str,
        link: &'a IfaceRef,
        table: u32,
        metric: u32,
        mark: (u32, u32),
    ) -> Self {
        let gateway = ctx.default_gateway_v4(iface);
        let extra_deps = gateway
            .map(|g| ctx.addresses_covering(iface, g))
            .unwrap_or_default()
            .iter()
            .map(|k| dep(k, format!("gateway reachable through {}", k.name)))
            .collect();
        Self { link, gateway, table, metric, mark: Some(mark), extra_deps }
    }
}

/// Ensures `nft.table/ip/<prefix><resource name>`: one `prerouting` chain at mangle priority
/// holding the marking `rules`, created after `deps` (the fwmark rules it feeds). With `local`,
/// also an `output` chain of type `route` with the same rules, which marks what the router
/// itself sends and has the kernel route it again by the new mark (nft(8), "route" chains).
pub(super) fn ensure_mark_table(
    out: &mut Out,
    prefix: &str,
    resource_name: &str,
    rules: Vec<NftRule>,
    deps: Vec<IntentDep>,
    local: bool,
) {
    let mut chains = Vec::new();
    if local {
        chains.push(base_chain(
            "output",
            NftChainType::Route,
            NftHook::Output,
            MANGLE_PRIORITY,
            NftPolicy::Accept,
            rules.clone(),
        ));
    }
    chains.insert(
        0,
        base_chain(
            "prerouting",
            NftChainType::Filter,
            NftHook::Prerouting,
            MANGLE_PRIORITY,
            NftPolicy::Accept,
            rules,
        ),
    );
    let table = NftTableSpec {
        family: NftFamily::Ip,
        name: nft_table_name(prefix, resource_name),
        owner: out.owner().to_string(),
        chains,
    };
    out.ensure(ArtifactSpec::NftTable(table), deps);
}

/// Emits table, default route and (if marked) fwmark rule; returns the key traffic marking
/// should wait for (the rule, or the route when unmarked).
pub(super) fn render(t: &PolicyTarget<'_>, out: &mut Out) -> ArtifactKey {
    let table_key =
        out.ensure(ArtifactSpec::RouteTable(RouteTableSpec { table: t.table }), Vec::new());
    let mut deps = vec![
        dep(&t.link.key, format!("needs link {}", t.link.ifname)),
        dep(&table_key, format!("fills table {}", t.table)),
    ];
    deps.extend(t.extra_deps.iter().cloned());
    let route = RouteSpec {
        table: t.table,
        destination: IpNet::V4(ipnet::Ipv4Net::default()),
        gateway: t.gateway,
        oif: Some(t.link.ifname.clone()),
        metric: t.metric,
        protocol: ROUTERD_ROUTE_PROTOCOL,
    };
    let route_key = out.ensure(ArtifactSpec::Route(route), deps);
    let Some((mark, priority)) = t.mark else { return route_key };
    let rule = FwmarkRuleSpec { mark, mask: u32::MAX, table: t.table, priority };
    out.ensure(
        ArtifactSpec::FwmarkRule(rule),
        vec![dep(&route_key, format!("table {} has its default route", t.table))],
    )
}
