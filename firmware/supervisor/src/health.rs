//! The HealthCheck scheduler: one task per `HealthCheck`, probing on the check's interval from
//! inside the target namespace (the probes are the engine's
//! [`Prober`](routerd_engine::health::Prober)), keeping the verdict in the session's
//! [`HealthStore`](routerd_engine::health::HealthStore) and asking the loop for a reconcile
//! when a verdict changes. The reconcile then creates or withdraws what depends on the check
//! being healthy (DESIGN.md, Supervisor: "health result").
//!
//! A verdict follows the check's thresholds: `unhealthyThreshold` consecutive failures turn a
//! healthy check unhealthy, `healthyThreshold` consecutive successes turn it back. The first
//! probe after start decides at once, so a router that boots with a dead uplink does not prefer
//! it for thresholds × interval.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use routerd_engine::Netns;
use routerd_engine::aftr::AftrStore;
use routerd_engine::health::{HealthStatusSpec, HealthStore, ProbePlan, Prober, probe_plans};
use routerd_engine::state::{StateStore, now_ms};
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
        let mut prober = Prober::new(self.netns.clone());
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
            let (target, outcome) = prober.once(&self.plan, &self.aftr).await;
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
    use std::time::Duration;

    use routerd_engine::health::{ProbeKind, ProbeTarget};

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
