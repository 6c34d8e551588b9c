//! The StatePolicy scheduler: one task evaluating every `StatePolicy` of the applied config
//! from inside the target namespace, every [`EVALUATION_INTERVAL`] and at once when the host's
//! links or addresses change, keeping the values in the session's
//! [`StateStore`](routerd_engine::state::StateStore) and asking the loop for a reconcile when
//! a value changes or a `when.state` condition starts or stops holding (a `for` duration
//! running out). The reconcile then creates or withdraws what the conditions gate.
//!
//! What a condition reads (rtnetlink, networkd, DNS) is the engine's
//! [`Evaluator`](routerd_engine::state::Evaluator); this module only schedules it.

use std::collections::BTreeSet;
use std::sync::Arc;

use routerd_engine::state::{
    EVALUATION_INTERVAL, Evaluator, StatePlan, StateStore, now_ms, state_gates, state_plans,
};
use routerd_engine::{Netns, SystemBus};
use routerd_model::Config;
use routerd_model::spec::StateMatchSpec;
use tokio::sync::{Notify, mpsc};

use crate::config_task::ConfigTask;
use crate::daemon::{Msg, Trigger};

/// The evaluation task of the applied config.
pub struct StateScheduler {
    netns: Netns,
    /// The system bus, on which networkd tells the DNS servers of a DHCP lease.
    bus: Arc<SystemBus>,
    store: Arc<StateStore>,
    loop_tx: mpsc::Sender<Msg>,
    wake: Arc<Notify>,
    task: ConfigTask,
}

impl StateScheduler {
    /// A scheduler evaluating inside `netns` (asking networkd on `bus` for lease DNS
    /// servers), writing to `store` and waking the loop through `loop_tx`; nothing runs until
    /// [`StateScheduler::sync`].
    pub fn new(
        netns: Netns,
        bus: Arc<SystemBus>,
        store: Arc<StateStore>,
        loop_tx: mpsc::Sender<Msg>,
    ) -> Self {
        let wake = Arc::new(Notify::new());
        Self { netns, bus, store, loop_tx, wake, task: ConfigTask::default() }
    }

    /// Evaluates exactly the policies of `config`, whose text has digest `digest`: declares
    /// its variables (new ones `unknown`, removed ones dropped; the values of the others are
    /// kept) and restarts the task on them. Nothing to do for the digest last synced.
    pub fn sync(&mut self, digest: &str, config: &Config) {
        if !self.task.resync(digest) {
            return;
        }
        let plans = state_plans(config);
        let names: BTreeSet<String> = plans.iter().map(|p| p.variable.clone()).collect();
        self.store.declare(&names);
        if plans.is_empty() {
            return;
        }
        let task = EvaluationTask {
            plans,
            gates: state_gates(config),
            // A new evaluator per config: the `unavailableFor` counts start again.
            evaluator: Evaluator::new(self.netns.clone(), Arc::clone(&self.bus)),
            store: Arc::clone(&self.store),
            loop_tx: self.loop_tx.clone(),
            wake: Arc::clone(&self.wake),
        };
        self.task.spawn(task.run());
    }

    /// Evaluates again now rather than at the next interval (the host's addresses changed).
    pub fn wake(&self) {
        self.wake.notify_one();
    }
}

/// The evaluation task of one config.
struct EvaluationTask {
    plans: Vec<StatePlan>,
    gates: Vec<(String, StateMatchSpec)>,
    /// What the conditions read from the host.
    evaluator: Evaluator,
    store: Arc<StateStore>,
    loop_tx: mpsc::Sender<Msg>,
    wake: Arc<Notify>,
}

impl EvaluationTask {
    async fn run(mut self) {
        let mut held: Option<Vec<bool>> = None;
        loop {
            let mut changed = false;
            for plan in &self.plans {
                let outcome = self.evaluator.evaluate(plan).await;
                let value = outcome.value.clone();
                if self.store.set(&plan.variable, outcome, now_ms()) {
                    changed = true;
                    match value {
                        Some(v) => tracing::info!("state variable {} is {v:?}", plan.variable),
                        None => tracing::info!("state variable {} has no value", plan.variable),
                    }
                }
            }
            let now_held = self.store.gates_holding(&self.gates, now_ms());
            if changed || held.as_ref() != Some(&now_held) {
                // A full queue already holds a reconcile, which reads the new values.
                let _ = self.loop_tx.try_send(Msg::Reconcile(Trigger::State));
            }
            held = Some(now_held);
            tokio::select! {
                () = tokio::time::sleep(EVALUATION_INTERVAL) => {}
                () = self.wake.notified() => {}
            }
        }
    }
}
