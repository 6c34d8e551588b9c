//! Reconciler scenarios for the links routerd creates, without a kernel: the engine's plan of
//! `examples/vlan-dslite.yaml` against a host that has only the two Ethernet ports, run by the
//! graph reconciler through a recording fake backend (the real backend is tested in
//! `firmware/host/tests/it/link_kinds.rs` and `tests/it/reconcile.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::BoxFuture;
use routerd_graph::{Reconciler, Selection};
use routerd_host::artifact::{LinkSpec, RouteSpec};
use routerd_host::{Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, Backend, HostError};
use routerd_ledger::{EntryHead, EntryState, Origin};
use routerd_model::parse_config;

use super::{Desired, PlanInput, plan};
use crate::intent::Intent;
use crate::item::BackendRegistry;
use crate::reason::Reason;
use crate::render::render;
use crate::result::{ConditionStatus, ConditionType};

const EXAMPLE: &str = include_str!("../../../examples/vlan-dslite.yaml");

/// The time the tests plan for (2026-11-22T00:00:00Z, in milliseconds since the Unix epoch).
const NOW: u64 = 1_795_305_600_000;

/// rtnetlink as far as the plan needs: the kinds, a fixed inventory, a log of operations, and
/// creates that fail with `EOPNOTSUPP` for the keys in `unsupported`.
struct FakeNetlink {
    host: Vec<Artifact>,
    unsupported: BTreeSet<String>,
    log: Mutex<Vec<String>>,
}

impl FakeNetlink {
    fn new(unsupported: &[&str]) -> Self {
        let port = |ifname: &str, up: bool| {
            let spec =
                LinkSpec { ifname: ifname.into(), admin_up: Some(up), mtu: None, kind: None };
            Artifact::new(ArtifactSpec::Link(spec))
        };
        Self {
            // eth0 is down: the config's `adminUp: true` makes routerd bring it up.
            host: vec![port("eth0", false), port("eth1", true)],
            unsupported: unsupported.iter().map(|k| k.to_string()).collect(),
            log: Mutex::new(Vec::new()),
        }
    }

    fn record(&self, op: &str, key: &ArtifactKey) -> Result<(), HostError> {
        self.log.lock().expect("log").push(format!("{op} {key}"));
        if op == "create" && self.unsupported.contains(&key.to_string()) {
            return Err(HostError::Rejected {
                key: key.clone(),
                op: "create",
                message: "Unknown device type: Operation not supported".into(),
                errno: Some(EOPNOTSUPP),
            });
        }
        Ok(())
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().expect("log").clone()
    }
}

/// `EOPNOTSUPP` on Linux (`include/uapi/asm-generic/errno.h`; the engine has no libc).
const EOPNOTSUPP: i32 = 95;

impl Backend for FakeNetlink {
    fn apply_with(&self) -> routerd_host::ApplyWith {
        routerd_host::ApplyWith::Rtnetlink
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        &[
            ArtifactKind::Link,
            ArtifactKind::Ipip6Tunnel,
            ArtifactKind::Ipv4Address,
            ArtifactKind::Ipv4Route,
        ]
    }

    fn observe<'a>(
        &'a self,
        kind: ArtifactKind,
        _wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        let listed = self.host.iter().filter(|a| a.key.kind == kind).cloned().collect();
        async move { Ok(listed) }.boxed()
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        async move { self.record("create", &desired.key) }.boxed()
    }

    fn modify<'a>(
        &'a self,
        _observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        async move { self.record("modify", &desired.key) }.boxed()
    }

    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        async move { self.record("delete", &observed.key) }.boxed()
    }
}

/// Plans `yaml` against the fake's inventory and `ledger` and runs it; returns the desired
/// state and the operations that failed.
async fn apply(
    fake: &Arc<FakeNetlink>,
    yaml: &str,
    ledger: &[EntryHead],
) -> (Arc<Desired>, BTreeSet<String>) {
    let registry = BackendRegistry::new(vec![Arc::clone(fake) as Arc<dyn Backend>]);
    let config = parse_config(yaml, "router.yaml").expect("config parses");
    let support = |i: &Intent| registry.support(&i.artifact);
    let desired = Arc::new(Desired::new(render(&config), &BTreeSet::new(), &support));
    let observed: BTreeMap<ArtifactKey, Arc<Artifact>> =
        fake.host.iter().map(|a| (a.key.clone(), Arc::new(a.clone()))).collect();
    let observes = |k: ArtifactKind| registry.observes(k);
    let input = PlanInput { observed: &observed, ledger, observes: &observes, now: NOW };
    let mut planned = plan(&desired, &input).expect("no cycle");
    registry.begin_apply(false);
    let mut current = std::mem::take(&mut planned.current);
    let status = Reconciler::new(&registry)
        .reconcile(&mut current, planned.intended(), Selection::All)
        .await
        .expect("reconcile runs");
    let failed = status
        .op_log
        .iter()
        .filter(|e| e.error.is_some())
        .map(|e| format!("{} {}", e.operation.as_str(), e.key))
        .collect();
    (desired, failed)
}

fn position(log: &[String], entry: &str) -> usize {
    log.iter().position(|e| e == entry).unwrap_or_else(|| panic!("{entry} not run: {log:#?}"))
}

#[tokio::test]
async fn created_links_come_before_what_lives_on_them_and_nothing_is_blocked() {
    let fake = Arc::new(FakeNetlink::new(&[]));
    let (desired, failed) = apply(&fake, EXAMPLE, &[]).await;
    assert!(desired.blocked.is_empty(), "{:?}", desired.blocked);
    assert!(failed.is_empty(), "{failed:?}");
    let log = fake.log();
    assert!(log.contains(&"modify linux.link/eth0".to_string()), "{log:#?}");
    let vlan = position(&log, "create linux.link/eth1.20");
    assert!(vlan < position(&log, "create linux.ipv4.address/eth1.20/192.168.20.1/24"));
    let tunnel = position(&log, "create linux.ipip6.tunnel/dslite0");
    assert!(tunnel < position(&log, "create linux.ipv4.route/254:0.0.0.0/0:100"));
}

#[tokio::test]
async fn a_kernel_without_vlan_and_ip6tnl_fails_those_links_and_stops_only_their_dependents() {
    let unsupported = ["linux.link/eth1.20", "linux.ipip6.tunnel/dslite0"];
    let fake = Arc::new(FakeNetlink::new(&unsupported));
    let (_, failed) = apply(&fake, EXAMPLE, &[]).await;
    let expected = ["create linux.link/eth1.20", "create linux.ipip6.tunnel/dslite0"];
    assert_eq!(failed, expected.iter().map(|e| e.to_string()).collect());
    let log = fake.log();
    // The address and the route were never attempted; the WAN port was still brought up.
    assert!(!log.iter().any(|e| e.contains("linux.ipv4.")), "{log:#?}");
    assert!(log.contains(&"modify linux.link/eth0".to_string()), "{log:#?}");
}

#[tokio::test]
async fn a_removed_ds_lite_loses_its_route_before_its_tunnel_and_its_vlan_stays() {
    // The host as the example left it, everything recorded as created by routerd.
    let fake = FakeNetlink::new(&[]);
    let config = parse_config(EXAMPLE, "vlan-dslite.yaml").expect("example parses");
    let created: Vec<Artifact> = render(&config)
        .intents
        .iter()
        .filter(|i| i.key().kind != ArtifactKind::Link || i.key().name == "eth1.20")
        .map(|i| (*i.artifact).clone())
        .collect();
    let ledger: Vec<EntryHead> = created
        .iter()
        .map(|a| EntryHead {
            kind: a.key.kind.as_str().into(),
            name: a.key.name.clone(),
            owner: "net.routerd.net/v1alpha1/DSLiteTunnel/dslite0".into(),
            co_owners: Vec::new(),
            origin: Origin::Created,
            state: EntryState::Owned,
            generation: 1,
        })
        .collect();
    let route = created.iter().find(|a| matches!(a.spec, ArtifactSpec::Route(RouteSpec { .. })));
    assert!(route.is_some(), "the example has a default route through the tunnel");
    let fake = Arc::new(FakeNetlink { host: [fake.host, created].concat(), ..fake });

    // The config without the DS-Lite tunnel and without the VLAN.
    let lan_only = EXAMPLE
        .split("    - apiVersion: net.routerd.net/v1alpha1\n      kind: VLANInterface")
        .next()
        .expect("head");
    let (_, failed) = apply(&fake, lan_only, &ledger).await;
    assert!(failed.is_empty(), "{failed:?}");
    let log = fake.log();
    // The kernel drops routes with their link: the route goes first, then the tunnel. Links
    // and addresses are never deleted as orphans.
    let route = position(&log, "delete linux.ipv4.route/254:0.0.0.0/0:100");
    assert!(route < position(&log, "delete linux.ipip6.tunnel/dslite0"), "{log:#?}");
    assert!(
        !log.iter().any(|e| e.contains("delete linux.link/") || e.contains("address")),
        "{log:#?}"
    );
}

/// `EXAMPLE` with a delegation on the WAN, a delegated address on the LAN, and the tunnel's
/// local end from that address (ADR 0008).
fn delegated_tunnel_config() -> routerd_model::Config {
    let yaml = EXAMPLE.replace(
        "        localAddressSource: static\n        localAddress: 2001:db8::2\n",
        "        localAddressSource: delegatedAddress\n        localDelegatedAddress: lan-v6\n",
    ) + crate::fixtures::WAN_PD_LAN_V6;
    parse_config(&yaml, "router.yaml").expect("config parses")
}

#[test]
fn a_tunnel_built_from_a_delegated_address_waits_for_it_follows_it_and_goes_with_it() {
    use routerd_host::artifact::{DhcpBinding, DhcpClientSpec, Ip6TunnelSpec};

    use crate::runtime::RuntimeValues;

    let config = delegated_tunnel_config();
    let target = routerd_host::Target::default();
    let support = |_: &Intent| crate::item::Support::Applied;
    // The host: both ports up, both bindings applied (the LAN's with `addresses`), and
    // optionally the tunnel as routerd created it earlier, recorded in the ledger.
    let host = |addresses: &[&str], tunnel: Option<&Ip6TunnelSpec>| {
        let mut host: Vec<Artifact> = ["eth0", "eth1"]
            .into_iter()
            .map(|ifname| {
                let spec =
                    LinkSpec { ifname: ifname.into(), admin_up: Some(true), mtu: None, kind: None };
                Artifact::new(ArtifactSpec::Link(spec))
            })
            .collect();
        let rendered = render(&config);
        for i in rendered.intents.iter().filter(|i| i.key().kind.as_str().starts_with("dhcp.")) {
            let ArtifactSpec::DhcpClient(d) = &i.artifact.spec else { panic!("binding") };
            let addresses = match d.binding {
                DhcpBinding::DelegatedAddress => addresses.iter().map(|a| a.to_string()).collect(),
                _ => Vec::new(),
            };
            host.push(Artifact::new(ArtifactSpec::DhcpClient(DhcpClientSpec {
                addresses,
                ..d.clone()
            })));
        }
        host.extend(tunnel.map(|t| Artifact::new(ArtifactSpec::Ip6Tunnel(t.clone()))));
        host.into_iter().map(|a| (a.key.clone(), Arc::new(a))).collect::<BTreeMap<_, _>>()
    };
    let tunnel_key = "linux.ipip6.tunnel/dslite0";
    let ledger = [EntryHead {
        kind: "linux.ipip6.tunnel".into(),
        name: "dslite0".into(),
        owner: "net.routerd.net/v1alpha1/DSLiteTunnel/dslite0".into(),
        co_owners: Vec::new(),
        origin: Origin::Created,
        state: EntryState::Owned,
        generation: 1,
    }];
    let plan_of = |observed: &BTreeMap<ArtifactKey, Arc<Artifact>>, ledger: &[EntryHead]| {
        let runtime = RuntimeValues::from_observed(observed, &Default::default(), NOW);
        let rendered = super::super::render::render_with(&config, &target, &runtime);
        let desired = Arc::new(Desired::new(rendered, &BTreeSet::new(), &support));
        let input = PlanInput { observed, ledger, observes: &|_| true, now: NOW };
        plan(&desired, &input).expect("no cycle")
    };
    let op_on = |p: &super::EnginePlan| {
        p.ops.ops.iter().find(|o| o.key.to_string() == tunnel_key).map(|o| (o.op, o.after.clone()))
    };

    // No address yet: the tunnel is not created, it waits on the LAN's binding.
    let waiting = plan_of(&host(&[], None), &[]);
    assert!(op_on(&waiting).is_none(), "{:?}", waiting.ops.steps());
    assert!(
        waiting.ops.pending.iter().any(|(k, why)| k.to_string() == tunnel_key
            && why.contains("dhcp.ipv6.delegatedAddress/eth1")),
        "{:?}",
        waiting.ops.pending
    );

    // The delegation's `Bound` condition: none yet, then the address derived from it (with
    // several delegations networkd does not say which uplink a prefix came through).
    let bound_condition = |p: &super::EnginePlan| {
        let input = crate::report::ReportInput {
            config: &config,
            mode: "plan",
            generation: 1,
            timestamp: "2026-11-22T00:00:00Z".into(),
            executed: None,
            with_operations: false,
            adopted: Vec::new(),
            warnings: Vec::new(),
        };
        let doc = crate::report::build(p, input);
        let pd = doc.resources.iter().find(|r| r.id.ends_with("/IPv6PrefixDelegation/wan-pd"));
        let c =
            pd.expect("the delegation").conditions.iter().find(|c| c.type_ == ConditionType::Bound);
        let c = c.expect("a Bound condition");
        (c.status, c.reason, c.message.clone())
    };
    let (status, reason, _) = bound_condition(&waiting);
    assert_eq!((status, reason), (ConditionStatus::False, Reason::NoPrefix));

    // The address is there: the tunnel is created with it as its local end.
    let bound = plan_of(&host(&["2001:db8:a0:2a::1/64"], None), &[]);
    let (status, _, message) = bound_condition(&bound);
    assert_eq!(status, ConditionStatus::True, "{message}");
    assert!(message.contains("2001:db8:a0:2a::1/64"), "{message}");
    let (op, after) = op_on(&bound).expect("tunnel planned");
    assert_eq!(op, routerd_graph::Operation::Create);
    let ArtifactSpec::Ip6Tunnel(created) = &after.expect("desired").artifact.spec else {
        panic!("typed tunnel")
    };
    assert_eq!(created.local, "2001:db8:a0:2a::1".parse().ok());

    // Renumbered: the existing tunnel is changed to the new address.
    let renumbered = plan_of(&host(&["2001:db8:b0:2a::1/64"], Some(created)), &ledger);
    let (op, after) = op_on(&renumbered).expect("tunnel changed");
    assert_ne!(op, routerd_graph::Operation::Delete);
    let ArtifactSpec::Ip6Tunnel(changed) = &after.expect("desired").artifact.spec else {
        panic!("typed tunnel")
    };
    assert_eq!(changed.local, "2001:db8:b0:2a::1".parse().ok());

    // The delegation is lost: the tunnel routerd made is withdrawn.
    let lost = plan_of(&host(&[], Some(created)), &ledger);
    let (op, _) = op_on(&lost).expect("tunnel withdrawn");
    assert_eq!(op, routerd_graph::Operation::Delete, "{:?}", lost.ops.steps());
}

#[test]
fn an_intent_no_configurator_applies_is_blocked_naming_its_apply_with_and_so_are_its_dependents() {
    // Every kind has a configurator in this build (`tests/it/reconcile.rs` checks it on a real
    // session); a build without one, here networkd, still reports rather than skips.
    use crate::intent::ApplyWith;
    use crate::item::Support;
    let config = delegated_tunnel_config();
    let support = |i: &Intent| match i.apply_with {
        ApplyWith::Networkd => Support::NoConfigurator,
        _ => Support::Applied,
    };
    let desired = Desired::new(render(&config), &BTreeSet::new(), &support);
    let binding = ArtifactKey::new(ArtifactKind::Dhcp6DelegatedAddress, "eth1");
    let (reason, message) = desired.blocked.get(&binding).expect("the binding is blocked");
    assert_eq!(*reason, Reason::ConfiguratorMissing);
    assert!(message.contains("(applyWith networkd)"), "{message}");
    // The tunnel built from the binding's address cannot be applied either.
    let tunnel = ArtifactKey::new(ArtifactKind::Ipip6Tunnel, "dslite0");
    assert!(desired.blocked.contains_key(&tunnel), "{:#?}", desired.blocked);
    // What does not depend on networkd is not blocked.
    let link = ArtifactKey::new(ArtifactKind::Link, "eth0");
    assert!(!desired.blocked.contains_key(&link), "{:#?}", desired.blocked);
}

/// A large report puts every resource's status in its own slot, in config order, each naming
/// its own artifacts and operations.
#[test]
fn a_large_report_keeps_each_resource_in_its_slot() {
    let yaml =
        format!("{}{}", crate::fixtures::WAN0, crate::fixtures::static_routes(2500, 1, None));
    let config = crate::fixtures::router(&yaml);
    let support = |_: &Intent| crate::item::Support::Applied;
    let desired = Arc::new(Desired::new(render(&config), &BTreeSet::new(), &support));
    // The host has the link (routerd does not create it) and none of the routes.
    let link = LinkSpec { ifname: "wan0".into(), admin_up: None, mtu: None, kind: None };
    let link = Arc::new(Artifact::new(ArtifactSpec::Link(link)));
    let observed = BTreeMap::from([(link.key.clone(), link)]);
    let input = PlanInput { observed: &observed, ledger: &[], observes: &|_| true, now: NOW };
    let p = plan(&desired, &input).expect("no cycle");
    let doc = crate::report::build(
        &p,
        crate::report::ReportInput {
            config: &config,
            mode: "plan",
            generation: 1,
            timestamp: "2026-11-22T00:00:00Z".into(),
            executed: None,
            with_operations: true,
            adopted: Vec::new(),
            warnings: Vec::new(),
        },
    );
    assert_eq!(doc.resources.len(), config.spec.resources.len());
    for (res, status) in config.spec.resources.iter().zip(&doc.resources) {
        assert_eq!(status.id, res.id());
        assert!(!status.conditions.is_empty(), "{}: no conditions", status.id);
        let id = res.id();
        let Some(route) = id.strip_prefix("net.routerd.net/v1alpha1/IPv4StaticRoute/r") else {
            continue;
        };
        let i: usize = route.parse().expect("route number");
        let name = format!("1000:100.{}.{}.0/24:0", 64 + i / 256, i % 256);
        assert_eq!(status.artifacts.len(), 1, "{}", status.id);
        assert_eq!(*status.artifacts[0].name, *name, "{}", status.id);
        assert!(status.plan.iter().all(|o| *o.name == *name && *o.owner == *status.id));
        assert_eq!(status.phase, crate::Phase::Drifted, "{}: the route is to create", status.id);
    }
}

#[test]
fn the_dnsmasq_unit_every_dhcp_resource_declares_is_shared_without_a_warning() {
    // Issue 33 §5 warns when two resources declare one artifact; the dnsmasq unit is declared
    // by each DHCP and DNS resource by design.
    let config = parse_config(include_str!("../../model/tests/fixtures/all-kinds.yaml"), "t")
        .expect("the fixture parses");
    let desired =
        Desired::new(render(&config), &BTreeSet::new(), &|_| crate::item::Support::Applied);
    let unit = ArtifactKey::new(ArtifactKind::SystemdService, routerd_host::dnsmasq::UNIT);
    let intent = desired.intents.iter().find(|i| *i.key() == unit).expect("the unit");
    assert!(intent.common && intent.co_owners.len() >= 2, "{intent:?}");
    let noisy: Vec<&String> =
        desired.warnings.values().flatten().filter(|w| w.contains(&unit.to_string())).collect();
    assert!(noisy.is_empty(), "{noisy:#?}");
}

/// The time is an input of the plan (issue 35 §1): with the same desired state, host and
/// ledger, a resource gated by `when.state` with a `for` duration waits at a `now` where the
/// variable has held its value a millisecond too little, and is created at the next one. The
/// intended graph the apply reconciles toward measures the duration at the plan's `now` too.
#[test]
fn a_when_state_for_duration_is_measured_at_the_now_the_plan_is_given() {
    use routerd_host::artifact::{StateVariableSpec, StateVariableStatus};

    let config = crate::fixtures::router(&format!(
        "{}    - apiVersion: net.routerd.net/v1alpha1
      kind: StatePolicy
      metadata: {{name: uplink}}
      spec:
        variable: uplink
        values:
          - value: legacy
            when: {{}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4SourceNAT
      metadata: {{name: legacy-nat}}
      spec:
        outboundInterface: wan
        sourceCIDRs: [192.168.20.0/24]
        translation: {{type: interfaceAddress}}
        when: {{state: {{uplink: {{equals: legacy, for: 30s}}}}}}
",
        crate::fixtures::WAN0
    ));
    let support = |_: &Intent| crate::item::Support::Applied;
    let desired = Arc::new(Desired::new(render(&config), &BTreeSet::new(), &support));
    // The host: the link, and the variable `legacy` since `since`.
    let since = NOW - 60_000;
    let link = LinkSpec { ifname: "wan0".into(), admin_up: None, mtu: None, kind: None };
    let variable = StateVariableSpec {
        variable: "uplink".into(),
        status: StateVariableStatus::Set,
        value: Some("legacy".into()),
        since_ms: Some(since),
        detail: None,
    };
    let observed: BTreeMap<ArtifactKey, Arc<Artifact>> =
        [ArtifactSpec::Link(link), ArtifactSpec::State(variable)]
            .into_iter()
            .map(|spec| Arc::new(Artifact::new(spec)))
            .map(|a| (a.key.clone(), a))
            .collect();
    let plan_at = |now: u64| {
        let input = PlanInput { observed: &observed, ledger: &[], observes: &|_| true, now };
        plan(&desired, &input).expect("no cycle")
    };
    let nat = "nft.table/ip/routerd_snat_legacy_nat";
    let created = |p: &super::EnginePlan| {
        p.ops
            .ops
            .iter()
            .any(|o| o.key.to_string() == nat && o.op == routerd_graph::Operation::Create)
    };
    // Whether the plan's intended NAT finds its gate satisfied by the observed variable: what
    // the reconciler checks during apply.
    let gate_open = |p: &super::EnginePlan| {
        let item = p.intended().items().find(|i| i.key.to_string() == nat).expect("the NAT");
        let dep = item.deps.iter().find(|d| d.key.kind == ArtifactKind::StateVariable);
        let var = p.current.items().find(|i| i.key.kind == ArtifactKind::StateVariable);
        dep.expect("gated").is_satisfied_by(var.expect("the variable"))
    };
    let active = |p: &super::EnginePlan| {
        let input = crate::report::ReportInput {
            config: &config,
            mode: "plan",
            generation: 1,
            timestamp: "2026-11-22T00:00:00Z".into(),
            executed: None,
            with_operations: true,
            adopted: Vec::new(),
            warnings: Vec::new(),
        };
        let doc = crate::report::build(p, input);
        let r = doc.resources.iter().find(|r| r.id.ends_with("/IPv4SourceNAT/legacy-nat"));
        let c = r
            .expect("the NAT resource")
            .conditions
            .iter()
            .find(|c| c.type_ == ConditionType::Active);
        c.map(|c| (c.status, c.reason))
    };

    // Held 29.999 s of 30 s: the NAT waits, and the report says why.
    let early = plan_at(since + 29_999);
    assert_eq!(early.now, since + 29_999);
    assert!(!created(&early), "{:?}", early.ops.steps());
    assert!(
        early.ops.pending.iter().any(|(k, why)| k.to_string() == nat && why.contains("uplink")),
        "{:?}",
        early.ops.pending
    );
    assert!(!gate_open(&early));
    assert_eq!(active(&early), Some((ConditionStatus::False, Reason::StateConditionUnmet)));

    // Held 30 s: everything else equal, the NAT is created.
    let due = plan_at(since + 30_000);
    assert!(created(&due), "{:?}", due.ops.steps());
    assert!(gate_open(&due));
    assert_eq!(active(&due), None);

    // The same inputs plan the same: nothing but `now` moved.
    assert_eq!(early.ops.steps(), plan_at(since + 29_999).ops.steps());
}
