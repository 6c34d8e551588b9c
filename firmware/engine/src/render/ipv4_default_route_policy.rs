//! `IPv4DefaultRoutePolicy` (`mode: priority`): several uplink candidates; the healthy one with
//! the lowest `priority` carries the traffic, and the next one takes over while it fails.
//!
//! A candidate's next hop is its `gateway` (`gatewaySource: static`), none (a device route),
//! or with `gatewaySource: dhcp4` the router of the interface's DHCPv4 lease, which networkd
//! reports (a runtime value, ADR 0008): the candidate's routes wait for it and follow it.
//!
//! Per candidate without a `table`: a default route in `main` whose metric is `routeMetric`,
//! else `priority`, so the kernel prefers the best candidate. A candidate with a `healthCheck`
//! gets two: that preferred route, which depends on the check being healthy (its verdict is an
//! external item, [`crate::health`]) and is withdrawn while it fails, and a standby route
//! [`STANDBY_METRIC_OFFSET`] higher that always stays. The standby keeps the check's probes
//! (bound to the candidate's link) routable, and when every candidate fails, traffic still
//! follows the static priority order instead of having no route at all.
//!
//! With a `table`: a route table with the default route via the candidate (and, with a `mark`,
//! the fwmark rule at priority 30000 + rank). A failing `healthCheck` withdraws the table's
//! route and rule. A candidate's `when` gates its routes (and rule) on state variables the same
//! way. Traffic from `sourceCIDRs` / to `destinationCIDRs` is marked, in
//! `nft.table/ip/routerd_default_route_<name>`, with the mark of the best-ranked marked
//! candidate whose check is healthy and whose `when` holds (runtime values, ADR 0008), so it
//! fails over to the next candidate's table and back. A `routeSet` candidate marks with its
//! `IPv4PolicyRouteSet`'s hash over the set's targets instead. With none eligible, the
//! best-ranked one's mark stays, and its withdrawn rule lets the traffic fall through to `main`.

use std::net::IpAddr;

use ipnet::IpNet;
use routerd_host::artifact::RouteSpec;
use routerd_host::nftables::ir::NftHashField;
use routerd_host::{ArtifactKey, ArtifactKind, ArtifactSpec, ROUTERD_ROUTE_PROTOCOL};
use routerd_model::spec::routing::{
    DefaultRouteCandidate, GatewaySource, Ipv4DefaultRoutePolicySpec,
};
use routerd_model::{Resource, ResourceSpec};

use super::ctx::{IfaceRef, dep, healthy_dep};
use super::deferred;
use super::ipv4_policy_route_set::marking_rules;
use super::nft_match::ipv4_pairs;
use super::policy_table::{self, PolicyTarget};
use super::{Out, RenderCtx};
use crate::intent::{Carried, IntentDep};

/// fwmark rule priority of the best-ranked candidate; the next ones follow.
const RULE_PRIORITY_BASE: u32 = 30000;

/// How much higher than its preferred route a health-checked candidate's standby route is:
/// above any metric an operator gives a default route (DHCP clients use 100 to 1024), so every
/// preferred route wins over every standby.
pub const STANDBY_METRIC_OFFSET: u32 = 1_000_000;

pub(super) fn render(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv4DefaultRoutePolicySpec,
    out: &mut Out,
) {
    let mut ranked: Vec<&DefaultRouteCandidate> = s.candidates.iter().collect();
    ranked.sort_by_key(|c| c.priority);
    // The marked candidates that render, in rank order.
    let mut marked: Vec<Marked<'_>> = Vec::new();
    for (rank, c) in ranked.iter().enumerate() {
        let start = out.len();
        if let (None, Some(set)) = (c.interface.as_deref(), c.route_set.as_deref()) {
            marked.extend(route_set_candidate(ctx, s, c, set, out));
            continue;
        }
        let Some(iface) = c.interface.as_deref() else {
            out.warn(format!("candidate {} has no interface; skipped", label(c)));
            continue;
        };
        let Some(link) = ctx.interface(iface) else {
            out.unresolved("interface", iface);
            continue;
        };
        let Some((gateway, mut deps)) = gateway_of(ctx, c, iface, &link, out) else { continue };
        let health = c.health_check.as_deref().map(|check| {
            healthy_dep(
                check,
                format!("candidate {} is preferred while {check} is healthy", label(c)),
            )
        });
        let key = match c.table {
            Some(table) => {
                deps.extend(health);
                let priority = RULE_PRIORITY_BASE
                    + u32::try_from(rank).unwrap_or(u32::MAX - RULE_PRIORITY_BASE);
                let target = PolicyTarget {
                    link: &link,
                    gateway,
                    table,
                    metric: c.route_metric.unwrap_or(0),
                    mark: c.mark.map(|m| (m, priority.min(32765))),
                    extra_deps: deps,
                };
                policy_table::render(&target, out)
            }
            None => {
                deps.push(dep(&link.key, format!("needs link {}", link.ifname)));
                let metric = c.route_metric.unwrap_or(c.priority);
                let route = |metric| {
                    ArtifactSpec::Route(RouteSpec {
                        table: routerd_host::MAIN_ROUTE_TABLE,
                        destination: IpNet::V4(ipnet::Ipv4Net::default()),
                        gateway,
                        oif: Some(link.ifname.clone()),
                        metric,
                        protocol: ROUTERD_ROUTE_PROTOCOL,
                    })
                };
                if let Some(health) = health {
                    let standby = metric.saturating_add(STANDBY_METRIC_OFFSET);
                    out.ensure(route(standby), deps.clone());
                    deps.push(health);
                }
                out.ensure(route(metric), deps)
            }
        };
        // `when`: the candidate's routes (and rule) exist only while its state conditions
        // hold, like a failing check's.
        if let Some(when) = c.when.as_ref().filter(|w| !w.state.is_empty()) {
            deferred::gate_on_state_from(when, out, start);
        }
        if let Some(mark) = c.mark {
            let deps = vec![dep(&key, format!("candidate {} is routed", label(c)))];
            marked.push(Marked { marks: vec![mark], fields: Vec::new(), deps, candidate: c });
        }
    }
    // The traffic goes to the best marked candidate whose check is healthy and whose `when`
    // holds (runtime values, ADR 0008), so it fails over to the next one's table; with none
    // eligible, to the best one, whose withdrawn rule lets it fall through to `main`.
    let eligible = |c: &DefaultRouteCandidate| {
        let healthy = match &c.health_check {
            None => true,
            Some(check) => ctx.runtime.healthy(check) == Some(true),
        };
        let gated_on = match c.when.as_ref().filter(|w| !w.state.is_empty()) {
            None => true,
            Some(when) => ctx.runtime.when_holds(when) == Some(true),
        };
        healthy && gated_on
    };
    let Some(chosen) = marked.iter().find(|m| eligible(m.candidate)).or(marked.first()).cloned()
    else {
        return;
    };
    if s.source_cidrs.is_empty() && s.destination_cidrs.is_empty() {
        return out.warn(
            "no sourceCIDRs or destinationCIDRs: candidate marks are not applied to any traffic",
        );
    }
    let pairs = match ipv4_pairs(&s.source_cidrs, &s.destination_cidrs) {
        Ok(p) => p,
        Err(e) => return out.warn(e),
    };
    // One mark, or a route set's hash over its targets' marks.
    let rules = match marking_rules(pairs, &chosen.marks, &chosen.fields) {
        Ok(rules) => rules,
        Err(e) => return out.warn(e),
    };
    policy_table::ensure_mark_table(
        out,
        "routerd_default_route_",
        &res.name,
        rules,
        chosen.deps,
        false,
    );
}

/// A candidate that can carry the policy's marked traffic: the marks it puts on it (one, or a
/// route set's targets' marks, spread by `fields`), and what the marking waits for.
#[derive(Clone)]
struct Marked<'a> {
    marks: Vec<u32>,
    fields: Vec<NftHashField>,
    deps: Vec<IntentDep>,
    candidate: &'a DefaultRouteCandidate,
}

/// A `routeSet` candidate: the policy's marked traffic is spread over the route set's targets
/// the way the set spreads its own (its hash fields and target marks), through the tables,
/// routes and rules the `IPv4PolicyRouteSet` resource owns. It has no route in `main` of its
/// own: a set stands for several uplinks, which one default route cannot.
fn route_set_candidate<'a>(
    ctx: &RenderCtx<'_>,
    s: &Ipv4DefaultRoutePolicySpec,
    c: &'a DefaultRouteCandidate,
    set: &str,
    out: &mut Out,
) -> Option<Marked<'a>> {
    let Some(spec) = ctx.resources().find_map(|r| match &r.spec {
        ResourceSpec::Ipv4PolicyRouteSet(p) if r.name == set => Some(p),
        _ => None,
    }) else {
        out.unresolved("routeSet", set);
        return None;
    };
    if s.source_cidrs.is_empty() && s.destination_cidrs.is_empty() {
        out.warn(format!(
            "candidate {} uses route set {set}, which only marked traffic can take (set \
             sourceCIDRs or destinationCIDRs); it is skipped",
            label(c)
        ));
        return None;
    }
    let targets: Vec<_> =
        spec.targets.iter().filter(|t| ctx.interface(&t.outbound_interface).is_some()).collect();
    if targets.is_empty() {
        out.warn(format!("candidate {}: route set {set} has no target to use", label(c)));
        return None;
    }
    let deps = targets
        .iter()
        .map(|t| {
            let rule = ArtifactKey::new(ArtifactKind::Ipv4FwmarkRule, format!("{:#x}", t.mark));
            dep(&rule, format!("candidate {}: route set {set} routes mark {:#x}", label(c), t.mark))
        })
        .collect();
    let fields = super::ipv4_policy_route_set::hash_fields(&spec.hash_fields, out);
    Some(Marked { marks: targets.iter().map(|t| t.mark).collect(), fields, deps, candidate: c })
}

/// The candidate's next hop and what its route must wait for; `None` when it cannot render.
fn gateway_of(
    ctx: &RenderCtx<'_>,
    c: &DefaultRouteCandidate,
    iface: &str,
    link: &IfaceRef,
    out: &mut Out,
) -> Option<(Option<IpAddr>, Vec<IntentDep>)> {
    match (c.gateway_source, c.gateway.as_deref()) {
        // The lease's router is a runtime value (ADR 0008): the route waits for it, follows
        // it, and is withdrawn when the lease (or its router) is lost. Until then it renders
        // without a gateway, and its unmet dependency keeps it from being made.
        (Some(GatewaySource::Dhcp4), _) => {
            let lease =
                routerd_host::ArtifactKey::new(ArtifactKind::Dhcp4Client, link.ifname.clone());
            let bindings: Vec<_> = ctx
                .resources()
                .filter_map(|r| match &r.spec {
                    ResourceSpec::Ipv4DhcpAddress(d) if d.interface == iface => Some(d),
                    _ => None,
                })
                .collect();
            if bindings.is_empty() {
                out.warn(format!(
                    "candidate {} takes its gateway from DHCPv4, but no IPv4DHCPAddress is on \
                     {iface}: it waits for a lease that never comes",
                    label(c)
                ));
            } else if bindings.iter().all(|d| d.use_routes == Some(false)) {
                out.warn(format!(
                    "candidate {} takes its gateway from DHCPv4, but the IPv4DHCPAddress on \
                     {iface} has useRoutes: false, so networkd routes through no router to \
                     read: it waits",
                    label(c)
                ));
            }
            let waits = IntentDep {
                carries: Some(Carried::Gateway),
                ..dep(&lease, format!("gateway: the router of the DHCPv4 lease on {}", link.ifname))
            };
            Some((ctx.runtime.lease_gateway(&link.ifname).map(IpAddr::V4), vec![waits]))
        }
        (_, Some(g)) => match g.parse::<IpAddr>() {
            Ok(g) => {
                let deps = ctx
                    .addresses_covering(iface, g)
                    .iter()
                    .map(|k| dep(k, "gateway reachable"))
                    .collect();
                Some((Some(g), deps))
            }
            Err(_) => {
                out.warn(format!("candidate {}: gateway {g:?} is not an address", label(c)));
                None
            }
        },
        _ => Some((None, Vec::new())),
    }
}

fn label(c: &DefaultRouteCandidate) -> String {
    c.name.clone().unwrap_or_else(|| format!("priority {}", c.priority))
}

impl super::Render for routerd_model::spec::all::Ipv4DefaultRoutePolicySpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, res, self, out);
    }

    /// The marking candidates' (marked and table-routed, or in a `routeSet`: their
    /// eligibility decides the mark) health verdicts and `when.state` conditions, and the
    /// leases of `gatewaySource: dhcp4` candidates.
    fn reads(&self, ctx: &super::RenderCtx<'_>, reads: &mut crate::runtime::RuntimeReads) {
        use routerd_model::spec::routing::GatewaySource;
        let marking = || {
            self.candidates
                .iter()
                .filter(|c| (c.table.is_some() && c.mark.is_some()) || c.route_set.is_some())
        };
        reads.health_checks.extend(marking().filter_map(|c| c.health_check.clone()));
        let leases = self
            .candidates
            .iter()
            .filter(|c| c.gateway_source == Some(GatewaySource::Dhcp4))
            .filter_map(|c| ctx.interface(c.interface.as_deref()?));
        reads.lease_gateways.extend(leases.map(|link| link.ifname));
        let gates = marking().filter_map(|c| c.when.as_ref());
        reads
            .state_gates
            .extend(gates.flat_map(|w| w.state.iter().map(|(v, m)| (v.clone(), m.clone()))));
    }
}
