//! HealthCheck verdicts as external items of the dependency graph.
//!
//! The supervisor's scheduler probes each `HealthCheck` and writes its verdict into the
//! session's [`HealthStore`]; the [`backend`] lists those verdicts as
//! `routerd.healthCheck/<name>` artifacts when the engine takes its inventory. An intent that
//! depends on a check with [`IntentDep::healthy`](crate::intent::IntentDep::healthy) is created
//! while the check is healthy and withdrawn (deleted) when it turns unhealthy, by the graph's
//! ordinary rules for unmet dependencies. A check without a verdict yet (no scheduler, as in
//! `reconcile --once`, or before the first probe) is absent, so its gated dependents wait.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::RwLock;
use std::time::Duration;

use routerd_host::artifact::HealthStatusSpec;
use routerd_host::{Artifact, ArtifactKind, ArtifactSpec, Target};

use routerd_model::spec::AddressFamily;
use routerd_model::spec::routing::{
    HealthCheckSpec, HealthCheckType, TargetSource, split_host_port,
};
use routerd_model::{Config, ResourceSpec, parse_duration};

use crate::render::RenderCtx;
use crate::scheduled::ScheduledBackend;

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
    let ipv6 = s.address_family == Some(AddressFamily::Ipv6);
    let ifname = s.interface.as_deref().and_then(|i| ctx.interface(i)).map(|i| i.ifname);
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
        (Some(TargetSource::DsliteRemote), _) => {
            ProbeTarget::Unsupported("targetSource dsliteRemote is not supported yet".into())
        }
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
    }
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
}
