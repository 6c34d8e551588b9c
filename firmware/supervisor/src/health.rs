//! The HealthCheck scheduler: one task per `HealthCheck`, probing on the check's interval from
//! inside the target namespace, keeping the verdict in the session's
//! [`HealthStore`](routerd_engine::health::HealthStore) and asking the loop for a reconcile
//! when a verdict changes. The reconcile then creates or withdraws what depends on the check
//! being healthy (DESIGN.md, Supervisor: "health result").
//!
//! A verdict follows the check's thresholds: `unhealthyThreshold` consecutive failures turn a
//! healthy check unhealthy, `healthyThreshold` consecutive successes turn it back. The first
//! probe after start decides at once, so a router that boots with a dead uplink does not prefer
//! it for thresholds × interval.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use routerd_engine::aftr::AftrStore;
use routerd_engine::health::{HealthStore, ProbeKind, ProbePlan, ProbeTarget, probe_plans};
use routerd_engine::state::{StateStore, now_ms};
use routerd_host::artifact::HealthStatusSpec;
use routerd_host::netlink::NetlinkBackend;
use routerd_host::probe::{self, Pinger, ProbeError};
use routerd_host::{ArtifactKind, ArtifactSpec, Backend, Netns};
use routerd_model::Config;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::daemon::{Msg, Trigger};

/// The running probe tasks of the applied config.
pub struct HealthScheduler {
    netns: Netns,
    store: Arc<HealthStore>,
    /// The state variables a check's `when` reads.
    state: Arc<StateStore>,
    /// The AFTR answers, for checks of a DS-Lite tunnel's remote end.
    aftr: Arc<AftrStore>,
    loop_tx: mpsc::Sender<Msg>,
    tasks: BTreeMap<String, (ProbePlan, AbortHandle)>,
    /// Digest of the config the tasks follow.
    synced: Option<String>,
}

impl HealthScheduler {
    /// A scheduler probing inside `netns`, writing to `store`, reading the state variables of
    /// `state` (for checks' `when`) and the AFTR answers of `aftr`, and waking the loop through
    /// `loop_tx`; no task runs until [`HealthScheduler::sync`].
    pub fn new(
        netns: Netns,
        store: Arc<HealthStore>,
        state: Arc<StateStore>,
        aftr: Arc<AftrStore>,
        loop_tx: mpsc::Sender<Msg>,
    ) -> Self {
        Self { netns, store, state, aftr, loop_tx, tasks: BTreeMap::new(), synced: None }
    }

    /// Runs exactly the checks of `config`, whose text has digest `digest`: starts new ones,
    /// restarts changed ones, stops and forgets removed ones. Nothing to do for the digest last
    /// synced (the daemon calls this after every reconcile).
    pub fn sync(&mut self, digest: &str, config: &Config) {
        if self.synced.as_deref() == Some(digest) {
            return;
        }
        self.synced = Some(digest.to_string());
        let plans: BTreeMap<String, ProbePlan> =
            probe_plans(config).into_iter().map(|p| (p.name.clone(), p)).collect();
        self.tasks.retain(|name, (running, task)| {
            let keep = plans.get(name) == Some(running);
            if !keep {
                task.abort();
            }
            keep
        });
        let names: BTreeSet<String> = plans.keys().cloned().collect();
        self.store.retain(&names);
        for (name, plan) in plans {
            if self.tasks.contains_key(&name) {
                continue;
            }
            let probe = Probe {
                plan: plan.clone(),
                netns: self.netns.clone(),
                store: Arc::clone(&self.store),
                state: Arc::clone(&self.state),
                aftr: Arc::clone(&self.aftr),
                loop_tx: self.loop_tx.clone(),
            };
            let task = tokio::spawn(probe.run()).abort_handle();
            self.tasks.insert(name, (plan, task));
        }
    }
}

impl Drop for HealthScheduler {
    fn drop(&mut self) {
        for (_, task) in self.tasks.values() {
            task.abort();
        }
    }
}

/// One check's task.
struct Probe {
    plan: ProbePlan,
    netns: Netns,
    store: Arc<HealthStore>,
    state: Arc<StateStore>,
    aftr: Arc<AftrStore>,
    loop_tx: mpsc::Sender<Msg>,
}

impl Probe {
    /// Whether the check's `when` holds now (always, without one).
    fn active(&self) -> bool {
        self.plan.when.is_empty()
            || self.state.gates_holding(&self.plan.when, now_ms()).into_iter().all(|h| h)
    }

    async fn run(self) {
        let mut pinger = None;
        let mut routes = None;
        let mut tally = Tally::default();
        let mut next = tokio::time::Instant::now();
        loop {
            // Paused while `when` does not hold: no probe, no verdict (what is gated on it
            // waits), and the count starts again when it resumes.
            if !self.active() {
                tally = Tally::default();
                if self.store.remove(&self.plan.name) {
                    tracing::info!("health check {} paused by its when", self.plan.name);
                    let _ = self.loop_tx.try_send(Msg::Reconcile(Trigger::Health));
                }
                tokio::time::sleep(self.plan.interval).await;
                next = tokio::time::Instant::now();
                continue;
            }
            let (target, outcome) = self.once(&mut pinger, &mut routes).await;
            let healthy = tally.record(outcome.is_ok(), &self.plan);
            let detail = match &outcome {
                Ok(rtt) => format!("reply in {:.1} ms", rtt.as_secs_f64() * 1000.0),
                Err(e) if tally.run > 1 => format!("{} consecutive failures: {e}", tally.run),
                Err(e) => e.clone(),
            };
            let status = HealthStatusSpec {
                name: self.plan.name.clone(),
                healthy,
                target: target.map(|t| t.to_string()),
                detail: Some(detail),
            };
            if self.store.set(status) {
                tracing::info!(
                    "health check {} is {}",
                    self.plan.name,
                    if healthy { "healthy" } else { "unhealthy" }
                );
                // A full queue already holds a reconcile, which reads the new verdict.
                let _ = self.loop_tx.try_send(Msg::Reconcile(Trigger::Health));
            }
            next += self.plan.interval;
            let now = tokio::time::Instant::now();
            if next < now {
                next = now;
            }
            tokio::time::sleep_until(next).await;
        }
    }

    /// One probe: the target it went to (if resolved) and its round-trip time or why it
    /// failed.
    async fn once(
        &self,
        pinger: &mut Option<Pinger>,
        routes: &mut Option<NetlinkBackend>,
    ) -> (Option<IpAddr>, Result<Duration, String>) {
        let target = match self.target(routes).await {
            Ok(t) => t,
            Err(e) => return (None, Err(e)),
        };
        let port = match self.plan.kind {
            ProbeKind::Ping => None,
            ProbeKind::Tcp { port } | ProbeKind::Dns { port } => Some(port),
        };
        let started = Instant::now();
        if let Some(port) = port {
            let peer = SocketAddr::new(target, port);
            let (ifname, timeout) = (self.plan.ifname.as_deref(), self.plan.timeout);
            let outcome = match self.plan.kind {
                ProbeKind::Dns { .. } => probe::dns_query(&self.netns, ifname, peer, timeout).await,
                _ => probe::tcp_connect(&self.netns, ifname, peer, timeout).await,
            };
            return (Some(target), self.paced(started, outcome).await);
        }
        // Opened on first use and again after a failure: the link may not exist yet.
        if pinger.is_none() {
            match Pinger::open(&self.netns, self.plan.ipv6, self.plan.ifname.as_deref()) {
                Ok(p) => *pinger = Some(p),
                Err(e) => return (Some(target), Err(format!("opening the probe socket: {e}"))),
            }
        }
        let Some(p) = pinger.as_ref() else { return (Some(target), Err("no socket".into())) };
        let outcome = p.ping(target, self.plan.timeout).await;
        if matches!(outcome, Err(ProbeError::Failed(_))) {
            // The socket may be bound to a link that went away: open it again next time.
            *pinger = None;
        }
        (Some(target), self.paced(started, outcome).await)
    }

    /// A probe's outcome as the tally records it. A failure other than a timeout (a refused
    /// connection, no route) returns at once; waiting out the rest of the timeout keeps the
    /// probe rate what the interval says.
    async fn paced(
        &self,
        started: Instant,
        outcome: Result<Duration, ProbeError>,
    ) -> Result<Duration, String> {
        match outcome {
            Ok(rtt) => Ok(rtt),
            Err(e) => {
                if let ProbeError::Failed(_) = e {
                    let spent = started.elapsed();
                    tokio::time::sleep(self.plan.timeout.saturating_sub(spent)).await;
                }
                Err(e.to_string())
            }
        }
    }

    /// Resolves the probe's target for this round.
    async fn target(&self, routes: &mut Option<NetlinkBackend>) -> Result<IpAddr, String> {
        match &self.plan.target {
            ProbeTarget::Address(a) => Ok(*a),
            ProbeTarget::Unsupported(why) => Err(why.clone()),
            ProbeTarget::Aftr { tunnel, ordinal, selection } => {
                let answer = self.aftr.get(tunnel).map(|a| a.addresses).unwrap_or_default();
                routerd_engine::aftr::pick(&answer, *ordinal, *selection)
                    .map(IpAddr::V6)
                    .ok_or_else(|| format!("no AFTR resolved for {tunnel} yet"))
            }
            ProbeTarget::Host(name) => {
                let found = tokio::net::lookup_host((name.as_str(), 0))
                    .await
                    .map_err(|e| format!("resolving {name}: {e}"))?;
                found
                    .map(|s| s.ip())
                    .find(|ip| ip.is_ipv6() == self.plan.ipv6)
                    .ok_or_else(|| format!("{name} has no address of the check's family"))
            }
            ProbeTarget::DefaultGateway => {
                let Some(ifname) = self.plan.ifname.as_deref() else {
                    return Err("no interface to take the default gateway of".into());
                };
                if routes.is_none() {
                    *routes = Some(NetlinkBackend::new(&self.netns).map_err(|e| e.to_string())?);
                }
                let Some(backend) = routes.as_ref() else { return Err("no netlink".into()) };
                let kind =
                    if self.plan.ipv6 { ArtifactKind::Ipv6Route } else { ArtifactKind::Ipv4Route };
                let listed = backend.observe(kind, &[]).await.map_err(|e| e.to_string())?;
                listed
                    .iter()
                    .filter_map(|a| match &a.spec {
                        ArtifactSpec::Route(r)
                            if r.table == routerd_host::MAIN_ROUTE_TABLE
                                && r.destination.prefix_len() == 0
                                && r.oif.as_deref() == Some(ifname) =>
                        {
                            r.gateway.map(|g| (r.metric, g))
                        }
                        _ => None,
                    })
                    .min()
                    .map(|(_, g)| g)
                    .ok_or_else(|| format!("no default route with a gateway through {ifname}"))
            }
        }
    }
}

/// Consecutive outcomes and the verdict they give.
#[derive(Debug, Default)]
struct Tally {
    healthy: Option<bool>,
    last: Option<bool>,
    /// How many probes in a row had the `last` outcome.
    run: u32,
}

impl Tally {
    /// Counts one probe outcome; returns the verdict after it.
    fn record(&mut self, ok: bool, plan: &ProbePlan) -> bool {
        if self.last == Some(ok) {
            self.run = self.run.saturating_add(1);
        } else {
            (self.last, self.run) = (Some(ok), 1);
        }
        let verdict = match self.healthy {
            None => ok,
            Some(true) => ok || self.run < plan.unhealthy_threshold,
            Some(false) => ok && self.run >= plan.healthy_threshold,
        };
        self.healthy = Some(verdict);
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(healthy_threshold: u32, unhealthy_threshold: u32) -> ProbePlan {
        ProbePlan {
            name: "wan".into(),
            kind: ProbeKind::Ping,
            ipv6: false,
            ifname: None,
            target: ProbeTarget::DefaultGateway,
            interval: Duration::from_secs(1),
            timeout: Duration::from_secs(1),
            healthy_threshold,
            unhealthy_threshold,
            when: Vec::new(),
        }
    }

    #[test]
    fn the_first_probe_decides_then_thresholds_apply_both_ways() {
        let p = plan(2, 3);
        let mut t = Tally::default();
        assert!(t.record(true, &p), "first success: healthy at once");
        assert!(t.record(false, &p) && t.record(false, &p), "two failures are not enough");
        assert!(!t.record(false, &p), "the third turns it unhealthy");
        assert!(!t.record(true, &p), "one success is not enough");
        assert!(!t.record(false, &p), "a failure restarts the count");
        assert!(!t.record(true, &p));
        assert!(t.record(true, &p), "two in a row turn it healthy");

        let mut down = Tally::default();
        assert!(!down.record(false, &p), "first failure: unhealthy at once");
    }

    #[tokio::test]
    async fn a_dslite_remote_check_probes_the_aftr_the_tunnel_uses_once_resolved() {
        let aftr = Arc::new(AftrStore::default());
        let (loop_tx, _rx) = mpsc::channel(1);
        let probe = Probe {
            plan: ProbePlan {
                target: ProbeTarget::Aftr {
                    tunnel: "ds0".into(),
                    ordinal: Some(2),
                    selection: Some(routerd_model::spec::net::AftrAddressSelection::OrdinalModulo),
                },
                ipv6: true,
                ..plan(1, 1)
            },
            netns: Netns::current(),
            store: Arc::new(HealthStore::default()),
            state: Arc::new(StateStore::default()),
            aftr: Arc::clone(&aftr),
            loop_tx,
        };
        let err = probe.target(&mut None).await.expect_err("nothing resolved yet");
        assert!(err.contains("no AFTR resolved for ds0"), "{err}");
        aftr.set(routerd_host::artifact::AftrAddressSpec {
            ifname: "ds0".into(),
            fqdn: "aftr.example.test".into(),
            addresses: vec!["2001:db8::1".parse().expect("ip"), "2001:db8::2".parse().expect("ip")],
            detail: None,
        });
        // The second record, as the tunnel's aftrAddressOrdinal picks it.
        let target = probe.target(&mut None).await.expect("resolved");
        assert_eq!(target, "2001:db8::2".parse::<IpAddr>().expect("ip"));
    }

    #[tokio::test]
    async fn a_check_gated_by_when_is_active_only_while_its_conditions_hold() {
        use routerd_engine::state::Evaluation;
        use routerd_model::spec::StateMatchSpec;
        let state = Arc::new(StateStore::default());
        state.declare(&BTreeSet::from(["uplink".to_string()]));
        let (loop_tx, _rx) = mpsc::channel(1);
        let lte = StateMatchSpec { equals: Some("lte".into()), ..Default::default() };
        let probe = Probe {
            plan: ProbePlan { when: vec![("uplink".into(), lte)], ..plan(1, 1) },
            netns: Netns::current(),
            store: Arc::new(HealthStore::default()),
            state: Arc::clone(&state),
            aftr: Arc::new(AftrStore::default()),
            loop_tx,
        };
        assert!(!probe.active(), "not evaluated yet: paused");
        let set = |value: &str| {
            let outcome = Evaluation { value: Some(value.into()), detail: String::new() };
            state.set("uplink", outcome, now_ms());
        };
        set("fiber");
        assert!(!probe.active(), "another value: paused");
        set("lte");
        assert!(probe.active());
        let always = Probe { plan: plan(1, 1), ..probe };
        assert!(always.active(), "no when: always");
    }
}
