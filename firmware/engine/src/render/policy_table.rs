//! The triple every policy-routing kind owns (seed 000: "linux.ipv4.fwmarkRule,
//! linux.ipv4.routeTable"): a numbered table, its default route through an interface, and the
//! fwmark rule steering marked packets into it. Created in that order, so a marked packet never
//! meets an empty table.

use std::net::IpAddr;

use ipnet::IpNet;
use routerd_host::artifact::{FwmarkRuleSpec, RouteSpec, RouteTableSpec};
use routerd_host::{ArtifactKey, ArtifactSpec, ROUTERD_ROUTE_PROTOCOL};

use super::Out;
use super::ctx::{IfaceRef, dep};
use crate::intent::ApplyWith;

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
    /// Keys the default route must wait for (addresses making the gateway reachable).
    pub extra_deps: Vec<ArtifactKey>,
}

/// Emits table, default route and (if marked) fwmark rule; returns the key traffic marking
/// should wait for (the rule, or the route when unmarked).
pub(super) fn render(t: &PolicyTarget<'_>, out: &mut Out) -> ArtifactKey {
    let table_key = out.ensure(
        ArtifactSpec::RouteTable(RouteTableSpec { table: t.table }),
        ApplyWith::Rtnetlink,
        Vec::new(),
    );
    let mut deps = vec![
        dep(&t.link.key, format!("needs link {}", t.link.ifname)),
        dep(&table_key, format!("fills table {}", t.table)),
    ];
    deps.extend(
        t.extra_deps.iter().map(|k| dep(k, format!("gateway reachable through {}", k.name))),
    );
    let route = RouteSpec {
        table: t.table,
        destination: IpNet::V4(ipnet::Ipv4Net::default()),
        gateway: t.gateway,
        oif: Some(t.link.ifname.clone()),
        metric: t.metric,
        protocol: ROUTERD_ROUTE_PROTOCOL,
    };
    let route_key = out.ensure(ArtifactSpec::Route(route), ApplyWith::Rtnetlink, deps);
    let Some((mark, priority)) = t.mark else { return route_key };
    let rule = FwmarkRuleSpec { mark, mask: u32::MAX, table: t.table, priority };
    out.ensure(
        ArtifactSpec::FwmarkRule(rule),
        ApplyWith::Rtnetlink,
        vec![dep(&route_key, format!("table {} has its default route", t.table))],
    )
}
