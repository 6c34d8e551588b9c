//! HealthCheck verdicts as external items of the dependency graph.
//!
//! The supervisor's scheduler probes each `HealthCheck` through a [`Prober`] (the probing
//! itself, in [`probe`]) on the check's interval and writes its verdict into the session's
//! [`HealthStore`]; the [`backend`] lists those verdicts as
//! `routerd.healthCheck/<name>` artifacts when the engine takes its inventory. An intent that
//! depends on a check with [`IntentDep::healthy`](crate::intent::IntentDep::healthy) is created
//! while the check is healthy and withdrawn (deleted) when it turns unhealthy, by the graph's
//! ordinary rules for unmet dependencies. A check without a verdict yet (no scheduler, as in
//! `reconcile --once`, or before the first probe) is absent, so its gated dependents wait.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::RwLock;
use std::time::Duration;

pub use routerd_host::artifact::HealthStatusSpec;
use routerd_host::{Artifact, ArtifactKind, ArtifactSpec, Target};

use routerd_model::spec::net::AftrAddressSelection;
use routerd_model::spec::routing::{
    HealthCheckSpec, HealthCheckType, TargetSource, split_host_port,
};
use routerd_model::spec::{AddressFamily, StateMatchSpec};
use routerd_model::{Config, ResourceSpec, parse_duration};

use crate::render::RenderCtx;
use crate::scheduled::ScheduledBackend;

pub mod probe;
pub use probe::Prober;

/// Time between two probes when `interval` is absent.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(5);
/// How long a probe waits for its reply when `timeout` is absent (never longer than the
/// interval).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
/// Consecutive failures that turn a healthy check unhealthy when `unhealthyThreshold` is
/// absent.
pub const DEFAULT_UNHEALTHY_THRESHOLD: u32 = 3;
/// Consecutive successes that turn an unhealthy check healthy when `healthyThreshold` is
/// absent.
pub const DEFAULT_HEALTHY_THRESHOLD: u32 = 2;

/// What the scheduler runs for one `HealthCheck`, resolved from the config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbePlan {
    /// The resource's name, which the verdict is stored under.
    pub name: String,
    /// What a probe is.
    pub kind: ProbeKind,
    /// IPv6 instead of IPv4 (`addressFamily: ipv6`).
    pub ipv6: bool,
    /// The link the probes are bound to (the `interface` resource's kernel name).
    pub ifname: Option<String>,
    /// Where the probes go.
    pub target: ProbeTarget,
    /// Time between the starts of two probes.
    pub interval: Duration,
    /// How long one probe waits for its reply.
    pub timeout: Duration,
    /// Consecutive successes from unhealthy to healthy.
    pub healthy_threshold: u32,
    /// Consecutive failures from healthy to unhealthy.
    pub unhealthy_threshold: u32,
    /// The check's `when.state` conditions, as `(variable, condition)`: while one does not
    /// hold, the scheduler sends no probe (a metered standby link stays quiet), and the
    /// verdict, gated the same way in the graph, is not used.
    pub when: Vec<(String, StateMatchSpec)>,
}

/// What one probe of a check is (`type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    /// ICMP echo (`ping`).
    Ping,
    /// A TCP connection to the port (`tcp`).
    Tcp {
        /// Destination port.
        port: u16,
    },
    /// A DNS query to the port (`dns`, 53 by default).
    Dns {
        /// Destination port.
        port: u16,
    },
}

/// Where a check's probes go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeTarget {
    /// A literal address (`target`).
    Address(IpAddr),
    /// A host name (`target`), resolved before each probe.
    Host(String),
    /// The gateway of the best default route through the check's link, looked up in the
    /// kernel before each probe (`targetSource: defaultGateway`, and `auto` without a target).
    DefaultGateway,
    /// The AFTR a DS-Lite tunnel with `aftrFQDN` uses (`targetSource: dsliteRemote`): the
    /// address [`crate::aftr::pick`] takes from the scheduler's latest answer for the tunnel
    /// ([`crate::aftr::AftrStore`]), read before each probe.
    Aftr {
        /// The tunnel's link name (the store's key).
        tunnel: String,
        /// `aftrAddressOrdinal`.
        ordinal: Option<u32>,
        /// `aftrAddressSelection`.
        selection: Option<AftrAddressSelection>,
    },
    /// Cannot be probed; the reason becomes the check's detail.
    Unsupported(String),
}

/// The probe plan of every `HealthCheck` in `config`, in config order. Validation has already
/// checked durations and thresholds; values that still do not parse fall back to the defaults.
pub fn probe_plans(config: &Config) -> Vec<ProbePlan> {
    // Interface names resolve as rendering resolves them (VLANs, PPPoE, DS-Lite included).
    let target = Target::default();
    let runtime = crate::runtime::RuntimeValues::default();
    let ctx = RenderCtx::new(config, &target, &runtime);
    config
        .spec
        .resources
        .iter()
        .filter_map(|res| match &res.spec {
            ResourceSpec::HealthCheck(s) => Some(probe_plan(&ctx, &res.name, s)),
            _ => None,
        })
        .collect()
}

fn probe_plan(ctx: &RenderCtx<'_>, name: &str, s: &HealthCheckSpec) -> ProbePlan {
    let mut ipv6 = s.address_family == Some(AddressFamily::Ipv6);
    let mut ifname = s.interface.as_deref().and_then(|i| ctx.interface(i)).map(|i| i.ifname);
    // Validation has checked the port against the type.
    let (host, port) = match s.target.as_deref().map(split_host_port) {
        Some(Ok((host, port))) => (Some(host), port),
        _ => (s.target.as_deref(), None),
    };
    let kind = match s.r#type.unwrap_or(HealthCheckType::Ping) {
        HealthCheckType::Ping => ProbeKind::Ping,
        HealthCheckType::Tcp => ProbeKind::Tcp { port: port.unwrap_or(0) },
        HealthCheckType::Dns => ProbeKind::Dns { port: port.unwrap_or(53) },
    };
    let target = match (s.target_source, host) {
        // The AFTR is reached over the tunnel's underlying link, in IPv6, not through the
        // tunnel: the check says whether the tunnel's far end answers.
        (Some(TargetSource::DsliteRemote), _) => match dslite_remote(ctx, s) {
            Ok((underlay, target)) => {
                ipv6 = true;
                ifname = underlay;
                target
            }
            Err(why) => ProbeTarget::Unsupported(why),
        },
        (Some(TargetSource::DefaultGateway), _) | (None | Some(TargetSource::Auto), None) => {
            ProbeTarget::DefaultGateway
        }
        (_, Some(t)) => match t.parse::<IpAddr>() {
            Ok(a) => ProbeTarget::Address(a),
            Err(_) => ProbeTarget::Host(t.to_string()),
        },
        (Some(TargetSource::Static), None) => {
            ProbeTarget::Unsupported("targetSource static without a target".into())
        }
    };
    let duration = |text: Option<&String>, default| {
        text.and_then(|t| parse_duration(t).ok()).filter(|d| !d.is_zero()).unwrap_or(default)
    };
    let interval = duration(s.interval.as_ref(), DEFAULT_INTERVAL);
    ProbePlan {
        name: name.to_string(),
        kind,
        ipv6,
        ifname,
        target,
        interval,
        timeout: duration(s.timeout.as_ref(), DEFAULT_TIMEOUT).min(interval),
        healthy_threshold: s.healthy_threshold.unwrap_or(DEFAULT_HEALTHY_THRESHOLD).max(1),
        unhealthy_threshold: s.unhealthy_threshold.unwrap_or(DEFAULT_UNHEALTHY_THRESHOLD).max(1),
        when: s
            .when
            .iter()
            .flat_map(|w| w.state.iter().map(|(v, m)| (v.clone(), m.clone())))
            .collect(),
    }
}

/// The probe target of `targetSource: dsliteRemote`: the remote end of the `DSLiteTunnel`
/// resource the check's `interface` names, and the tunnel's underlying link to probe over.
fn dslite_remote(
    ctx: &RenderCtx<'_>,
    s: &HealthCheckSpec,
) -> Result<(Option<String>, ProbeTarget), String> {
    let name = s.interface.as_deref().unwrap_or_default();
    let tunnel = ctx
        .resources()
        .find_map(|r| match &r.spec {
            ResourceSpec::DsLiteTunnel(t) if r.name == name => Some((r, t)),
            _ => None,
        })
        .map(|(r, t)| (t.tunnel_name.clone().unwrap_or_else(|| r.name.clone()), t));
    let Some((ifname, t)) = tunnel else {
        return Err(format!("targetSource dsliteRemote: {name:?} is not a DSLiteTunnel"));
    };
    let underlay = ctx.interface(&t.interface).map(|l| l.ifname);
    let target = match (t.remote_address.as_deref(), &t.aftr_fqdn) {
        (Some(remote), _) => match remote.parse::<IpAddr>() {
            Ok(a) => ProbeTarget::Address(a),
            Err(_) => return Err(format!("remoteAddress {remote:?} is not an address")),
        },
        (None, Some(_)) => ProbeTarget::Aftr {
            tunnel: ifname,
            ordinal: t.aftr_address_ordinal,
            selection: t.aftr_address_selection,
        },
        (None, None) => return Err(format!("DSLiteTunnel {name} has no remote end")),
    };
    Ok((underlay, target))
}

/// The latest verdict per HealthCheck name, shared by the scheduler (writer) and the session's
/// inventory (reader).
#[derive(Debug, Default)]
pub struct HealthStore {
    verdicts: RwLock<BTreeMap<String, HealthStatusSpec>>,
}

impl HealthStore {
    /// Records `status` as the verdict of check `status.name`. Returns whether `healthy`
    /// changed (or the check had no verdict before): the caller then asks for a reconcile.
    pub fn set(&self, status: HealthStatusSpec) -> bool {
        let Ok(mut map) = self.verdicts.write() else { return false };
        let changed = map.get(&status.name).is_none_or(|old| old.healthy != status.healthy);
        map.insert(status.name.clone(), status);
        changed
    }

    /// Drops the verdict of check `name` (its probes paused). Returns whether it had one: the
    /// caller then asks for a reconcile.
    pub fn remove(&self, name: &str) -> bool {
        self.verdicts.write().is_ok_and(|mut map| map.remove(name).is_some())
    }

    /// Drops the verdicts of checks not in `names` (resources removed from the config).
    pub fn retain(&self, names: &std::collections::BTreeSet<String>) {
        if let Ok(mut map) = self.verdicts.write() {
            map.retain(|name, _| names.contains(name));
        }
    }

    /// The verdict of check `name`, if it has one.
    pub fn get(&self, name: &str) -> Option<HealthStatusSpec> {
        self.verdicts.read().ok().and_then(|m| m.get(name).cloned())
    }

    fn all(&self) -> Vec<HealthStatusSpec> {
        self.verdicts.read().map(|m| m.values().cloned().collect()).unwrap_or_default()
    }
}

/// Inventory of `routerd.healthCheck`: the verdicts in `store`. Nothing to create or delete: the
/// scheduler, not a configurator, produces them.
pub fn backend(store: std::sync::Arc<HealthStore>) -> ScheduledBackend {
    ScheduledBackend::new(
        &[ArtifactKind::HealthCheck],
        "the scheduler's health probes",
        move || {
            store
                .all()
                .into_iter()
                .map(|status| Artifact::new(ArtifactSpec::Health(status)))
                .collect()
        },
    )
}

/// Whether a graph item is a healthy verdict: the predicate of a `healthy` dependency.
pub(crate) fn is_healthy(spec: &ArtifactSpec) -> bool {
    matches!(spec, ArtifactSpec::Health(h) if h.healthy)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(name: &str, healthy: bool) -> HealthStatusSpec {
        HealthStatusSpec { name: name.into(), healthy, target: None, detail: None }
    }

    #[test]
    fn set_reports_only_changes_of_the_verdict() {
        let store = HealthStore::default();
        assert!(store.set(status("wan", true)), "first verdict");
        let mut again = status("wan", true);
        again.detail = Some("reply in 1 ms".into());
        assert!(!store.set(again), "same verdict, new detail");
        assert_eq!(store.get("wan").and_then(|s| s.detail).as_deref(), Some("reply in 1 ms"));
        assert!(store.set(status("wan", false)), "turned unhealthy");
        store.retain(&Default::default());
        assert_eq!(store.get("wan"), None);
    }

    #[test]
    fn a_dslite_remote_check_probes_the_tunnels_far_end_over_its_underlying_link() {
        let config = crate::fixtures::router(
            "    - {apiVersion: net.routerd.net/v1alpha1, kind: Interface, metadata: {name: wan}, spec: {ifname: wan0, managed: true}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: DSLiteTunnel
      metadata: {name: ds-static}
      spec: {interface: wan, remoteAddress: 2001:db8::1, localAddress: 2001:db8::2, localAddressSource: static}
    - apiVersion: net.routerd.net/v1alpha1
      kind: DSLiteTunnel
      metadata: {name: ds-named}
      spec: {interface: wan, aftrFQDN: aftr.example.test, aftrAddressOrdinal: 2, localAddress: 2001:db8::2, localAddressSource: static}
    - {apiVersion: net.routerd.net/v1alpha1, kind: HealthCheck, metadata: {name: static}, spec: {interface: ds-static, targetSource: dsliteRemote}}
    - {apiVersion: net.routerd.net/v1alpha1, kind: HealthCheck, metadata: {name: named}, spec: {interface: ds-named, targetSource: dsliteRemote}}
    - {apiVersion: net.routerd.net/v1alpha1, kind: HealthCheck, metadata: {name: wrong}, spec: {interface: wan, targetSource: dsliteRemote}}
",
        );
        let plans = probe_plans(&config);
        let by = |name: &str| plans.iter().find(|p| p.name == name).expect("a plan");
        let fixed = by("static");
        assert_eq!(fixed.target, ProbeTarget::Address("2001:db8::1".parse().expect("ip")));
        assert_eq!((fixed.ifname.as_deref(), fixed.ipv6), (Some("wan0"), true));
        let named = by("named");
        let aftr =
            ProbeTarget::Aftr { tunnel: "ds-named".into(), ordinal: Some(2), selection: None };
        assert_eq!(named.target, aftr);
        assert_eq!((named.ifname.as_deref(), named.ipv6), (Some("wan0"), true));
        assert!(
            matches!(&by("wrong").target, ProbeTarget::Unsupported(why) if why.contains("not a DSLiteTunnel")),
            "{:?}",
            by("wrong").target
        );
    }
}
