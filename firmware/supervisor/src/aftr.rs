//! The AFTR lookups: one task resolving the `aftrFQDN` of every DS-Lite tunnel of the applied
//! config (without `remoteAddress`), from inside the target namespace (the lookup is the
//! engine's [`lookup`](routerd_engine::aftr::lookup)), keeping the answers in
//! the session's [`AftrStore`] and asking the loop for a
//! reconcile when one changes. The reconcile renders the tunnel with the new AFTR (a runtime
//! value, ADR 0008).
//!
//! A name is asked again every [`RESOLVE_INTERVAL`] once answered, every [`RETRY_INTERVAL`]
//! before. A failed lookup keeps the previous answer (its detail says what failed): a resolver
//! that is briefly unreachable must not take the tunnel down. An answer without AAAA records
//! replaces it, so the tunnel waits again.

use std::collections::BTreeSet;
use std::sync::Arc;

use routerd_engine::Netns;
use routerd_engine::aftr::{
    AftrPlan, AftrStore, RESOLVE_INTERVAL, RETRY_INTERVAL, aftr_plans, lookup,
};
use routerd_model::Config;
use tokio::sync::mpsc;

use crate::config_task::ConfigTask;
use crate::daemon::{Msg, Trigger};

/// The lookup task of the applied config.
pub struct AftrScheduler {
    netns: Netns,
    store: Arc<AftrStore>,
    loop_tx: mpsc::Sender<Msg>,
    task: ConfigTask,
}

impl AftrScheduler {
    /// A scheduler resolving inside `netns`, writing to `store` and waking the loop through
    /// `loop_tx`; nothing runs until [`AftrScheduler::sync`].
    pub fn new(netns: Netns, store: Arc<AftrStore>, loop_tx: mpsc::Sender<Msg>) -> Self {
        Self { netns, store, loop_tx, task: ConfigTask::default() }
    }

    /// Resolves exactly the tunnels of `config`, whose text has digest `digest`: drops the
    /// answers of tunnels no longer there (the others are kept until asked again) and restarts
    /// the task on them. Nothing to do for the digest last synced.
    pub fn sync(&mut self, digest: &str, config: &Config) {
        if !self.task.resync(digest) {
            return;
        }
        let plans = aftr_plans(config);
        let names: BTreeSet<String> = plans.iter().map(|p| p.ifname.clone()).collect();
        self.store.retain(&names);
        if plans.is_empty() {
            return;
        }
        let task =
            lookups(plans, self.netns.clone(), Arc::clone(&self.store), self.loop_tx.clone());
        self.task.spawn(task);
    }
}

async fn lookups(
    plans: Vec<AftrPlan>,
    netns: Netns,
    store: Arc<AftrStore>,
    loop_tx: mpsc::Sender<Msg>,
) {
    loop {
        let mut changed = false;
        let mut all_answered = true;
        for plan in &plans {
            let (answer, answered) = lookup(&netns, plan, &store).await;
            all_answered &= answered;
            let addresses = answer.addresses.clone();
            if store.set(answer) {
                changed = true;
                tracing::info!("AFTR {} of {} is {addresses:?}", plan.fqdn, plan.ifname);
            }
        }
        if changed {
            // A full queue already holds a reconcile, which reads the new answers.
            let _ = loop_tx.try_send(Msg::Reconcile(Trigger::Aftr));
        }
        let wait = if all_answered { RESOLVE_INTERVAL } else { RETRY_INTERVAL };
        tokio::time::sleep(wait).await;
    }
}
