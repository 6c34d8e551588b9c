//! The AFTR lookups: one task resolving the `aftrFQDN` of every DS-Lite tunnel of the applied
//! config (without `remoteAddress`), from inside the target namespace, keeping the answers in
//! the session's [`AftrStore`] and asking the loop for a
//! reconcile when one changes. The reconcile renders the tunnel with the new AFTR (a runtime
//! value, ADR 0008).
//!
//! A name is asked again every [`RESOLVE_INTERVAL`] once answered, every [`RETRY_INTERVAL`]
//! before. A failed lookup keeps the previous answer (its detail says what failed): a resolver
//! that is briefly unreachable must not take the tunnel down. An answer without AAAA records
//! replaces it, so the tunnel waits again.

use std::collections::BTreeSet;
use std::net::Ipv6Addr;
use std::sync::Arc;

use routerd_engine::aftr::{AftrPlan, AftrStore, RESOLVE_INTERVAL, RETRY_INTERVAL, aftr_plans};
use routerd_host::Netns;
use routerd_host::artifact::AftrAddressSpec;
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
            let looked_up = crate::state::resolve_aaaa(&netns, &plan.fqdn, &plan.resolvers).await;
            let (answer, answered) = answer_of(plan, looked_up, store.get(&plan.ifname));
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

/// What to record for `plan` after a lookup that gave `looked_up` (the AAAA records and who
/// answered, or the error), `previous` being what is recorded now; and whether the name was
/// answered with records. A failed lookup keeps the previous records.
fn answer_of(
    plan: &AftrPlan,
    looked_up: Result<(Vec<Ipv6Addr>, String), String>,
    previous: Option<AftrAddressSpec>,
) -> (AftrAddressSpec, bool) {
    let (addresses, detail, answered) = match looked_up {
        Ok((addresses, by)) => {
            let detail = match addresses.len() {
                0 => format!("{by} has no AAAA record for {}", plan.fqdn),
                n => format!("{n} AAAA record(s) from {by}"),
            };
            let answered = !addresses.is_empty();
            (addresses, detail, answered)
        }
        Err(e) => {
            let kept = previous.map(|p| p.addresses).unwrap_or_default();
            let detail =
                if kept.is_empty() { e } else { format!("{e}; the previous answer is kept") };
            (kept, detail, false)
        }
    };
    let spec = AftrAddressSpec {
        ifname: plan.ifname.clone(),
        fqdn: plan.fqdn.clone(),
        addresses,
        detail: Some(detail),
    };
    (spec, answered)
}

#[cfg(test)]
mod tests {
    use routerd_engine::state::Resolvers;

    use super::*;

    #[test]
    fn a_failed_lookup_keeps_the_previous_answer_and_an_empty_one_replaces_it() {
        let plan = AftrPlan {
            ifname: "ds-lite0".into(),
            fqdn: "aftr.example.test".into(),
            resolvers: Resolvers::System,
        };
        let aftr: Ipv6Addr = "2001:db8::1".parse().expect("address");
        let (first, answered) =
            answer_of(&plan, Ok((vec![aftr], "[2001:db8::53]:53".into())), None);
        assert!(answered);
        assert_eq!(first.addresses, [aftr]);
        assert_eq!(first.detail.as_deref(), Some("1 AAAA record(s) from [2001:db8::53]:53"));

        let (kept, answered) = answer_of(&plan, Err("timed out".into()), Some(first.clone()));
        assert!(!answered, "asked again soon");
        assert_eq!(kept.addresses, [aftr]);
        assert!(kept.detail.is_some_and(|d| d.contains("previous answer is kept")));

        let (empty, answered) = answer_of(&plan, Ok((Vec::new(), "x".into())), Some(first));
        assert!(!answered);
        assert!(empty.addresses.is_empty(), "an answer without records withdraws the tunnel");
    }
}
