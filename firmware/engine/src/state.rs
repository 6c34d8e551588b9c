//! `StatePolicy` variables as external items of the dependency graph, and the `when.state`
//! gates that read them.
//!
//! The supervisor's scheduler evaluates each `StatePolicy` through an [`Evaluator`] (the
//! conditions read from the host, in [`evaluate`]; its `values` in order, the first whose
//! `when` holds sets the variable) and writes the outcome into the session's
//! [`StateStore`]; the [`backend`] lists it as a `routerd.stateVariable/<variable>`
//! artifact when the engine takes its inventory. A resource with `when.state` depends on each
//! variable it names with a predicate ([`holds`]): its artifacts are created while every
//! condition holds and withdrawn (deleted) when one stops holding, by the graph's ordinary
//! rules for unmet dependencies. A variable nobody evaluates (`reconcile --once`, before the
//! daemon's first round) is absent, so its gated dependents wait.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr};
use std::sync::RwLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ipnet::Ipv6Net;
use routerd_host::artifact::{AddressSpec, StateVariableSpec, StateVariableStatus};
use routerd_host::{Artifact, ArtifactKind, ArtifactSpec, Target};
use routerd_model::spec::routing::{
    PrefixDelegationCondition, ResolveUpstreamSource, StatePolicySpec,
};
use routerd_model::spec::{StateMatchSpec, StateStatus};
use routerd_model::{Config, ResourceSpec, parse_duration};

use crate::render::RenderCtx;
use crate::scheduled::ScheduledBackend;

pub mod evaluate;
pub use evaluate::{Evaluator, resolve_aaaa};

/// Time between two evaluations of every variable (`StatePolicy` has no interval field).
pub const EVALUATION_INTERVAL: Duration = Duration::from_secs(5);
/// How long one DNS lookup of a `dnsResolve` condition waits for its answer.
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(2);

/// What the scheduler evaluates for one `StatePolicy`, resolved from the config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatePlan {
    /// The variable's name.
    pub variable: String,
    /// The entries, in config order: the first whose conditions all hold sets the variable.
    pub values: Vec<ValuePlan>,
}

/// One `values[]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValuePlan {
    /// The value the variable takes.
    pub value: String,
    /// The `when` conditions, AND-ed; empty holds always (a fallback entry).
    pub conditions: Vec<Condition>,
}

/// One condition of a `values[].when`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Condition {
    /// `ipv6Address`: whether the link holds a global IPv6 address (scope universe, neither
    /// tentative nor failed duplicate address detection), as `global` asks.
    Ipv6Address {
        /// The link's kernel name.
        ifname: String,
        /// `true`: such an address must be there; `false`: none may be.
        global: bool,
    },
    /// `dnsResolve`: whether `name` has at least one AAAA record.
    DnsResolve {
        /// The name looked up.
        name: String,
        /// Who is asked.
        resolvers: Resolvers,
    },
    /// `ipv6PrefixDelegation`: whether an `IPv6PrefixDelegation` has a prefix delegated now,
    /// or has had none for a while.
    PrefixDelegation {
        /// The `IPv6PrefixDelegation` resource's name.
        resource: String,
        /// How a delegated prefix is known to be this resource's ([`prefixes_of`]): `None`
        /// when it is the config's only prefix delegation, so every one is; else the links of
        /// the `IPv6DelegatedAddress` resources numbered from it.
        downstream: Option<Vec<String>>,
        /// `true`: a prefix must be delegated; `false`: none may be.
        available: bool,
        /// With `available: false`: none for at least this long, counted from when the
        /// scheduler first saw none.
        unavailable_for: Option<Duration>,
    },
    /// A condition this build cannot evaluate; it never holds, and the reason becomes the
    /// variable's detail.
    Unsupported(String),
}

/// Which of the prefixes delegated to the router (`delegated`, from the kernel's routes:
/// [`routerd_host::netlink::NetlinkBackend::delegated_prefixes`]) belong to one
/// `IPv6PrefixDelegation`. With `downstream` `None` (the config's only delegation) all of
/// them; else those holding an address of `addresses` on one of the `downstream` links,
/// because the kernel's routes do not say which uplink a prefix came from, and the addresses
/// derived from it do.
pub fn prefixes_of(
    downstream: Option<&[String]>,
    delegated: &[Ipv6Net],
    addresses: &[AddressSpec],
) -> Vec<Ipv6Net> {
    let Some(links) = downstream else { return delegated.to_vec() };
    delegated
        .iter()
        .filter(|prefix| {
            addresses.iter().any(|a| {
                links.contains(&a.ifname)
                    && matches!(a.address.addr(), IpAddr::V6(v6) if prefix.contains(&v6))
            })
        })
        .copied()
        .collect()
}

/// The resolvers a `dnsResolve` condition asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolvers {
    /// `upstreamSource: system` (the default): the router's own resolver configuration.
    System,
    /// `upstreamSource: static`: these servers, in order, from inside the router's namespace.
    Static(Vec<SocketAddr>),
    /// `upstreamSource: dhcp4 | dhcp6`: the DNS servers DHCP client `client` (a binding's
    /// artifact key, `dhcp.ipv4.client/wan0`) received, read from systemd-networkd before
    /// each evaluation, then asked as [`Resolvers::Static`] ones.
    Lease {
        /// The client binding whose DNS servers are asked.
        client: routerd_host::ArtifactKey,
    },
}

impl Resolvers {
    /// The servers among `addresses` (IP addresses as the config writes them), on port 53 and
    /// in order; `None` when there is none.
    pub fn servers(addresses: &[String]) -> Option<Self> {
        let servers: Vec<SocketAddr> = addresses
            .iter()
            .filter_map(|s| s.parse::<IpAddr>().ok())
            .map(|ip| SocketAddr::new(ip, 53))
            .collect();
        (!servers.is_empty()).then_some(Self::Static(servers))
    }
}

/// The evaluation plan of every `StatePolicy` in `config`, in config order. Validation has
/// already checked the references; one that still does not resolve makes its condition
/// [`Condition::Unsupported`].
pub fn state_plans(config: &Config) -> Vec<StatePlan> {
    let target = Target::default();
    let runtime = crate::runtime::RuntimeValues::default();
    let ctx = RenderCtx::new(config, &target, &runtime);
    config
        .spec
        .resources
        .iter()
        .filter_map(|res| match &res.spec {
            ResourceSpec::StatePolicy(s) => Some(state_plan(&ctx, s)),
            _ => None,
        })
        .collect()
}

fn state_plan(ctx: &RenderCtx<'_>, s: &StatePolicySpec) -> StatePlan {
    let values = s
        .values
        .iter()
        .map(|v| {
            let when = &v.when;
            let mut conditions = Vec::new();
            if let Some(a) = &when.ipv6_address {
                let name = a.interface.as_ref().or(s.interface.as_ref());
                conditions.push(match name.and_then(|n| ctx.interface(n)) {
                    Some(i) => Condition::Ipv6Address {
                        ifname: i.ifname,
                        global: a.global.unwrap_or(true),
                    },
                    None => Condition::Unsupported(
                        "ipv6Address names no interface resource (set interface on the \
                         condition or the policy)"
                            .into(),
                    ),
                });
            }
            if let Some(d) = &when.dns_resolve {
                conditions.push(dns_condition(ctx, d, s.interface.as_deref()));
            }
            if let Some(pd) = &when.ipv6_prefix_delegation {
                conditions.push(prefix_delegation_condition(ctx, pd));
            }
            ValuePlan { value: v.value.clone(), conditions }
        })
        .collect();
    StatePlan { variable: s.variable.clone(), values }
}

fn prefix_delegation_condition(ctx: &RenderCtx<'_>, pd: &PrefixDelegationCondition) -> Condition {
    let delegations: Vec<&str> = ctx
        .resources()
        .filter(|r| matches!(r.spec, ResourceSpec::Ipv6PrefixDelegation(_)))
        .map(|r| r.name.as_str())
        .collect();
    let resource = match (&pd.resource, delegations.as_slice()) {
        (Some(name), _) if delegations.contains(&name.as_str()) => name.clone(),
        (Some(name), _) => {
            return Condition::Unsupported(format!(
                "ipv6PrefixDelegation names {name:?}, which is no IPv6PrefixDelegation"
            ));
        }
        (None, [only]) => only.to_string(),
        (None, _) => {
            return Condition::Unsupported(
                "ipv6PrefixDelegation needs resource: the config has no single \
                 IPv6PrefixDelegation"
                    .into(),
            );
        }
    };
    let unavailable_for = match pd.unavailable_for.as_deref().map(parse_duration) {
        None => None,
        Some(Ok(d)) => Some(d),
        Some(Err(e)) => return Condition::Unsupported(format!("unavailableFor: {e}")),
    };
    let available = pd.available.unwrap_or(unavailable_for.is_none());
    if available && unavailable_for.is_some() {
        return Condition::Unsupported(
            "ipv6PrefixDelegation: unavailableFor needs available: false".into(),
        );
    }
    let downstream = (delegations.len() > 1).then(|| {
        ctx.resources()
            .filter_map(|r| match &r.spec {
                ResourceSpec::Ipv6DelegatedAddress(d) if d.prefix_delegation == resource => {
                    ctx.interface(&d.interface).map(|i| i.ifname)
                }
                _ => None,
            })
            .collect()
    });
    Condition::PrefixDelegation { resource, downstream, available, unavailable_for }
}

fn dns_condition(
    ctx: &RenderCtx<'_>,
    d: &routerd_model::spec::routing::DnsResolveCondition,
    policy_interface: Option<&str>,
) -> Condition {
    let Some(name) = d.name.clone().filter(|n| !n.is_empty()) else {
        return Condition::Unsupported("dnsResolve without a name".into());
    };
    let resolvers = match d.upstream_source.unwrap_or(ResolveUpstreamSource::System) {
        ResolveUpstreamSource::System => Resolvers::System,
        ResolveUpstreamSource::Static => match Resolvers::servers(&d.upstream_servers) {
            Some(servers) => servers,
            None => {
                return Condition::Unsupported(
                    "dnsResolve upstreamSource static without an upstreamServers address".into(),
                );
            }
        },
        source @ (ResolveUpstreamSource::Dhcp4 | ResolveUpstreamSource::Dhcp6) => {
            let v6 = source == ResolveUpstreamSource::Dhcp6;
            let iface = d.upstream_interface.as_deref().or(policy_interface).unwrap_or_default();
            match ctx.dhcp_client(iface, v6) {
                Some(client) => Resolvers::Lease { client },
                None => {
                    return Condition::Unsupported(format!(
                        "dnsResolve upstreamSource {}: no {} is on {iface:?}",
                        if v6 { "dhcp6" } else { "dhcp4" },
                        if v6 {
                            "IPv6DHCPAddress or IPv6PrefixDelegation"
                        } else {
                            "IPv4DHCPAddress"
                        }
                    ));
                }
            }
        }
    };
    Condition::DnsResolve { name, resolvers }
}

/// Every `when.state` condition of `config` (resources' and default-route candidates'), as `(variable, condition)` pairs in config order:
/// what the scheduler re-checks after each round, so that a `for` duration running out asks
/// for a reconcile even when no variable changed.
pub fn state_gates(config: &Config) -> Vec<(String, StateMatchSpec)> {
    config
        .spec
        .resources
        .iter()
        .flat_map(|r| {
            let candidates = match &r.spec {
                ResourceSpec::Ipv4DefaultRoutePolicy(p) => p.candidates.as_slice(),
                _ => &[],
            };
            crate::render::when_of(&r.spec)
                .into_iter()
                .chain(candidates.iter().filter_map(|c| c.when.as_ref()))
        })
        .flat_map(|w| w.state.iter().map(|(v, m)| (v.clone(), m.clone())))
        .collect()
}

/// Milliseconds since the Unix epoch, now: what the callers of a plan (the supervisor) read
/// once per plan or apply and hand in ([`crate::plan::PlanInput::now`]); the engine itself
/// reads no clock.
pub fn now_ms() -> u64 {
    unix_ms(SystemTime::now())
}

/// Milliseconds since the Unix epoch at `t` (0 before it).
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Whether `condition` (one value of `when.state`) holds for the variable item `spec` at
/// `now_ms` (milliseconds since the Unix epoch).
///
/// Every given check must hold. A variable not yet evaluated (`unknown`) matches only
/// `status: unknown`: `exists: false` asks for an evaluated variable without a value, so a
/// fallback gated on a missing prefix is not applied before anything was looked at. `for` is
/// measured from the variable's last change of status or value; a duration that does not
/// parse never holds (validation refuses it first).
pub fn holds(condition: &StateMatchSpec, spec: &ArtifactSpec, now_ms: u64) -> bool {
    let ArtifactSpec::State(v) = spec else { return false };
    let set = v.status == StateVariableStatus::Set;
    let value = v.value.as_deref().filter(|_| set);
    if let Some(exists) = condition.exists {
        let ok = if exists { set } else { v.status == StateVariableStatus::Unset };
        if !ok {
            return false;
        }
    }
    if let Some(status) = condition.status {
        let want = match status {
            StateStatus::Set => StateVariableStatus::Set,
            StateStatus::Unset => StateVariableStatus::Unset,
            StateStatus::Unknown => StateVariableStatus::Unknown,
        };
        if v.status != want {
            return false;
        }
    }
    if condition.equals.as_deref().is_some_and(|e| value != Some(e)) {
        return false;
    }
    if condition
        .r#in
        .as_ref()
        .is_some_and(|list| !value.is_some_and(|x| list.iter().any(|l| l == x)))
    {
        return false;
    }
    if condition.contains.as_deref().is_some_and(|c| !value.is_some_and(|x| x.contains(c))) {
        return false;
    }
    if let Some(text) = &condition.r#for {
        let Ok(d) = parse_duration(text) else { return false };
        let Some(since) = v.since_ms else { return false };
        let needed = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        if now_ms.saturating_sub(since) < needed {
            return false;
        }
    }
    true
}

/// One evaluation's outcome: the value (`None`: no entry held) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// The first holding entry's value.
    pub value: Option<String>,
    /// Why (`ipv6Address on wan: 2001:db8::2`; `no value's conditions hold: ...`).
    pub detail: String,
}

/// The current value of every declared variable, shared by the scheduler (writer) and the
/// session's inventory (reader).
#[derive(Debug, Default)]
pub struct StateStore {
    variables: RwLock<BTreeMap<String, StateVariableSpec>>,
}

impl StateStore {
    /// Keeps exactly the variables in `names`: new ones start `unknown`, others are dropped
    /// (policies removed from the config).
    pub fn declare(&self, names: &BTreeSet<String>) {
        let Ok(mut map) = self.variables.write() else { return };
        map.retain(|name, _| names.contains(name));
        for name in names {
            map.entry(name.clone()).or_insert_with(|| StateVariableSpec {
                variable: name.clone(),
                status: StateVariableStatus::Unknown,
                value: None,
                since_ms: None,
                detail: Some("not evaluated yet".into()),
            });
        }
    }

    /// Records `outcome` for `variable` at `now_ms`. Returns whether its status or value
    /// changed: the caller then asks for a reconcile. `since_ms` moves only on such a change.
    pub fn set(&self, variable: &str, outcome: Evaluation, now_ms: u64) -> bool {
        let Ok(mut map) = self.variables.write() else { return false };
        let status = if outcome.value.is_some() {
            StateVariableStatus::Set
        } else {
            StateVariableStatus::Unset
        };
        let old = map.get(variable);
        let changed = old.is_none_or(|o| o.status != status || o.value != outcome.value);
        let since_ms = match old {
            Some(o) if !changed => o.since_ms,
            _ => Some(now_ms),
        };
        map.insert(
            variable.to_string(),
            StateVariableSpec {
                variable: variable.to_string(),
                status,
                value: outcome.value,
                since_ms,
                detail: Some(outcome.detail),
            },
        );
        changed
    }

    /// The variable `name`, if declared.
    pub fn get(&self, name: &str) -> Option<StateVariableSpec> {
        self.variables.read().ok().and_then(|m| m.get(name).cloned())
    }

    /// Whether each of `gates` holds now, in order (absent variables do not).
    pub fn gates_holding(&self, gates: &[(String, StateMatchSpec)], now_ms: u64) -> Vec<bool> {
        let Ok(map) = self.variables.read() else { return vec![false; gates.len()] };
        gates
            .iter()
            .map(|(var, m)| {
                map.get(var).is_some_and(|v| holds(m, &ArtifactSpec::State(v.clone()), now_ms))
            })
            .collect()
    }

    fn all(&self) -> Vec<StateVariableSpec> {
        self.variables.read().map(|m| m.values().cloned().collect()).unwrap_or_default()
    }
}

/// Inventory of `routerd.stateVariable`: the variables in `store`. Nothing to create or delete: the
/// scheduler, not a configurator, produces them.
pub fn backend(store: std::sync::Arc<StateStore>) -> ScheduledBackend {
    ScheduledBackend::new(
        &[ArtifactKind::StateVariable],
        "the scheduler's state evaluations",
        move || store.all().into_iter().map(|v| Artifact::new(ArtifactSpec::State(v))).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `ipv6PrefixDelegation` condition of a policy whose `when` is `when`, with the
    /// resources `extra` beside `wan` and delegation `isp-pd`.
    fn pd_condition(when: &str, extra: &str) -> Condition {
        use crate::fixtures::{WAN0, router};
        let config = router(&format!(
            "{WAN0}    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6PrefixDelegation
      metadata: {{name: isp-pd}}
      spec: {{interface: wan}}
{extra}    - apiVersion: net.routerd.net/v1alpha1
      kind: StatePolicy
      metadata: {{name: pd}}
      spec:
        variable: wan.pd
        values:
          - value: ready
            when: {{ipv6PrefixDelegation: {when}}}
"
        ));
        let plans = state_plans(&config);
        plans[0].values[0].conditions[0].clone()
    }

    #[test]
    fn a_prefix_delegation_condition_names_its_delegation_and_how_to_tell_its_prefixes() {
        let secs = Duration::from_secs;
        assert_eq!(
            pd_condition("{available: true}", ""),
            Condition::PrefixDelegation {
                resource: "isp-pd".into(),
                downstream: None,
                available: true,
                unavailable_for: None,
            }
        );
        let Condition::PrefixDelegation { available, unavailable_for, .. } =
            pd_condition("{resource: isp-pd, unavailableFor: 30s}", "")
        else {
            panic!("a prefix delegation condition");
        };
        assert_eq!((available, unavailable_for), (false, Some(secs(30))));
        // A second delegation: the prefixes are told apart by the addresses derived from them.
        let second = "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6PrefixDelegation
      metadata: {name: other-pd}
      spec: {interface: wan}
    - apiVersion: net.routerd.net/v1alpha1
      kind: Interface
      metadata: {name: lan}
      spec: {ifname: lan0, managed: true}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6DelegatedAddress
      metadata: {name: lan-v6}
      spec: {prefixDelegation: isp-pd, interface: lan, addressSuffix: \"::1\"}
";
        let Condition::PrefixDelegation { downstream, .. } =
            pd_condition("{resource: isp-pd}", second)
        else {
            panic!("a prefix delegation condition");
        };
        assert_eq!(downstream, Some(vec!["lan0".to_string()]));
        assert!(matches!(pd_condition("{}", second), Condition::Unsupported(_)));
        assert!(matches!(
            pd_condition("{available: true, unavailableFor: 1m}", ""),
            Condition::Unsupported(_)
        ));

        let net = |t: &str| t.parse::<Ipv6Net>().expect("net");
        let delegated = [net("2001:db8:a0ff::/56"), net("2001:db8:b0ff::/56")];
        let on = |ifname: &str, a: &str| AddressSpec {
            ifname: ifname.into(),
            address: a.parse().expect("address"),
        };
        let addresses = [on("lan0", "2001:db8:b0ff:2a::1/64"), on("lan1", "2001:db8:a0ff:1::1/64")];
        assert_eq!(prefixes_of(None, &delegated, &addresses), delegated);
        let lan0 = ["lan0".to_string()];
        assert_eq!(prefixes_of(Some(&lan0), &delegated, &addresses), [net("2001:db8:b0ff::/56")]);
        assert!(prefixes_of(Some(&lan0), &delegated, &addresses[1..]).is_empty());
    }

    #[test]
    fn a_dns_resolve_condition_asks_the_servers_of_the_uplinks_dhcp_client() {
        use crate::fixtures::{WAN0, router};
        let condition = |source: &str, binding: &str| {
            let config = router(&format!(
                "{WAN0}{binding}    - apiVersion: net.routerd.net/v1alpha1
      kind: StatePolicy
      metadata: {{name: dns}}
      spec:
        variable: isp.dns
        interface: wan
        values:
          - value: answers
            when: {{dnsResolve: {{name: aftr.example.test, upstreamSource: {source}}}}}
"
            ));
            state_plans(&config)[0].values[0].conditions[0].clone()
        };
        let resolve = |client: Option<(ArtifactKind, &str)>| match client {
            Some((kind, ifname)) => Condition::DnsResolve {
                name: "aftr.example.test".into(),
                resolvers: Resolvers::Lease {
                    client: routerd_host::ArtifactKey::new(kind, ifname),
                },
            },
            None => Condition::Unsupported(String::new()),
        };
        let v4 = "    - {apiVersion: net.routerd.net/v1alpha1, kind: IPv4DHCPAddress, metadata: {name: v4}, spec: {interface: wan}}\n";
        let pd = "    - {apiVersion: net.routerd.net/v1alpha1, kind: IPv6PrefixDelegation, metadata: {name: pd}, spec: {interface: wan}}\n";
        assert_eq!(condition("dhcp4", v4), resolve(Some((ArtifactKind::Dhcp4Client, "wan0"))));
        // The policy's interface stands in for upstreamInterface; a delegation's client serves.
        assert_eq!(
            condition("dhcp6", pd),
            resolve(Some((ArtifactKind::Dhcp6PrefixDelegation, "wan0")))
        );
        let Condition::Unsupported(why) = condition("dhcp6", v4) else { panic!("unsupported") };
        assert!(why.contains("no IPv6DHCPAddress or IPv6PrefixDelegation is on \"wan\""), "{why}");
    }

    fn var(status: StateVariableStatus, value: Option<&str>, since_ms: u64) -> ArtifactSpec {
        ArtifactSpec::State(StateVariableSpec {
            variable: "wan".into(),
            status,
            value: value.map(str::to_owned),
            since_ms: Some(since_ms),
            detail: None,
        })
    }

    fn cond(json: &str) -> StateMatchSpec {
        serde_json::from_str(json).expect("condition")
    }

    #[test]
    fn conditions_read_status_value_and_how_long_it_held() {
        use StateVariableStatus::*;
        let ds_lite = var(Set, Some("ds-lite"), 10_000);
        assert!(holds(&cond(r#"{"equals": "ds-lite"}"#), &ds_lite, 10_000));
        assert!(!holds(&cond(r#"{"equals": "pppoe"}"#), &ds_lite, 10_000));
        assert!(holds(&cond(r#"{"in": ["pppoe", "ds-lite"]}"#), &ds_lite, 10_000));
        assert!(holds(
            &cond(r#"{"contains": "lite", "exists": true, "status": "set"}"#),
            &ds_lite,
            10_000
        ));
        assert!(!holds(&cond(r#"{"exists": false}"#), &ds_lite, 10_000));
        assert!(
            !holds(&cond(r#"{"equals": "ds-lite", "for": "30s"}"#), &ds_lite, 39_999),
            "held 29.999 s"
        );
        assert!(holds(&cond(r#"{"equals": "ds-lite", "for": "30s"}"#), &ds_lite, 40_000));

        let unset = var(Unset, None, 0);
        assert!(holds(&cond(r#"{"exists": false}"#), &unset, 0));
        assert!(holds(&cond(r#"{"status": "unset"}"#), &unset, 0));
        assert!(!holds(&cond(r#"{"equals": ""}"#), &unset, 0), "no value equals nothing");

        let unknown = var(Unknown, None, 0);
        assert!(
            !holds(&cond(r#"{"exists": false}"#), &unknown, 0),
            "unknown is not evaluated-unset"
        );
        assert!(holds(&cond(r#"{"status": "unknown"}"#), &unknown, 0));
        assert!(holds(&cond("{}"), &unknown, 0), "no check: holds once declared");
    }

    #[test]
    fn since_moves_only_when_the_value_changes() {
        let store = StateStore::default();
        store.declare(&BTreeSet::from(["wan".to_string()]));
        assert_eq!(store.get("wan").map(|v| v.status), Some(StateVariableStatus::Unknown));
        let ev = |v: Option<&str>| Evaluation { value: v.map(str::to_owned), detail: "d".into() };
        assert!(store.set("wan", ev(Some("up")), 1_000), "first value");
        assert!(!store.set("wan", ev(Some("up")), 2_000), "same value");
        assert_eq!(store.get("wan").and_then(|v| v.since_ms), Some(1_000));
        assert!(store.set("wan", ev(None), 3_000), "lost");
        let lost = store.get("wan").expect("declared");
        assert_eq!((lost.status, lost.since_ms), (StateVariableStatus::Unset, Some(3_000)));
        let gates = [("wan".to_string(), cond(r#"{"exists": false, "for": "5s"}"#))];
        assert_eq!(store.gates_holding(&gates, 7_999), [false]);
        assert_eq!(store.gates_holding(&gates, 8_000), [true]);
        store.declare(&BTreeSet::new());
        assert_eq!(store.get("wan"), None);
    }
}
