//! The effectful half: [`Reconciler::reconcile`] runs the operations the ordering core hands out
//! through the configurators and records what happened in the current graph and a [`Status`].
//! [`ReconcileOptions`] choose what a failed operation does to the rest of the run.
//!
//! The reconciler holds no state between calls besides what it writes into the current graph
//! (item states, the background-operation tracker); it spawns no task and returns once every
//! synchronous operation has finished.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use crate::background::{CancelHandle, OpContext, ResumeSignal, Tracker};
use crate::configurator::{Configurator, Registry};
use crate::error::{GraphError, OperationError, ReconcileError, error_chain};
use crate::graph::Graph;
use crate::item::{Item, Key};
use crate::plan::{Cascaded, Plan, PlannedOp, plan};
use crate::sequencer::{Current, Index, Outcome, Sequencer};
use crate::state::{Operation, Selection};

/// One executed (or started, or finished-in-background) operation.
#[derive(Clone, Debug)]
pub struct OpLogEntry<I: Item> {
    /// The item operated on.
    pub key: Key<I::Kind>,
    /// Create, Modify or Delete.
    pub operation: Operation,
    /// The value passed to the configurator: intended for Create and Modify, current for Delete.
    pub item: I,
    /// When the operation started (for a batch of creates, when the batch started).
    pub start: SystemTime,
    /// When it ended (for a batch, when the batch ended); `None` while it continues in the
    /// background.
    pub end: Option<SystemTime>,
    /// Whether the operation continues in the background (a later reconcile logs its end).
    pub in_progress: bool,
    /// The error of the operation, with its sources.
    pub error: Option<String>,
    /// The item's error before this operation ran.
    pub previous_error: Option<String>,
    /// Whether cancellation was requested before the background operation finished.
    pub cancelled: bool,
}

impl<I: Item> fmt::Display for OpLogEntry<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.operation, self.key)?;
        if self.in_progress {
            f.write_str(" (in progress)")?;
        }
        if let Some(error) = &self.error {
            write!(f, ": {error}")?;
        }
        Ok(())
    }
}

/// What a reconcile did and what is left.
#[derive(Debug)]
pub struct Status<I: Item> {
    /// Operations in the order they ran; background results read by this run come first.
    pub op_log: Vec<OpLogEntry<I>>,
    /// Failed operations as `(key, "operation: error")`; see [`Status::error`] for the join.
    pub errors: Vec<(Key<I::Kind>, String)>,
    /// Selected intended items left uncreated, with the unsatisfied dependency described.
    pub pending: Vec<(Key<I::Kind>, String)>,
    /// Deletes and modifies that wait for another operation.
    pub deferred: Vec<(Key<I::Kind>, String)>,
    /// Operations not run because the run ended at a failure ([`OnFailure::AbortRun`]), as
    /// `(key, operation, reason)` in the order they would have run; the reason names the
    /// failed operation (`not run: delete svc/zone failed first`). Always empty with
    /// [`OnFailure::BlockDependents`].
    ///
    /// Shape: what the run would still have handed out had it gone on with every later
    /// operation succeeding: what the failure blocks is in [`Status::pending`] or
    /// [`Status::deferred`] as usual, and a dependent of a skipped create is skipped, not
    /// pending. An item with a skipped operation is in neither of those lists. The current
    /// graph has none of these operations; a later reconcile runs them.
    pub skipped: Vec<(Key<I::Kind>, Operation, String)>,
    /// Items removed without a Delete because an external dependency disappeared.
    pub auto_deleted: Vec<Key<I::Kind>>,
    /// Items removed without a Delete with the item they went with (a dependency declared
    /// [`cascade`](crate::Dependency::cascade), removed in this run: its Delete succeeded, or
    /// it was auto-deleted or went itself with another item), as `(item, went with)`, in the
    /// order of the run.
    pub cascaded: Vec<Cascaded<I::Kind>>,
    /// Whether operations continue in the background (anywhere in the current graph).
    pub async_ops_in_progress: bool,
    /// Fires when a background operation finishes; then call `reconcile` again. `None` when no
    /// operation is in progress.
    pub ready_to_resume: Option<ResumeSignal>,
    /// Cancels the background operations and waits for them; `None` when none is in progress.
    pub cancel: Option<CancelHandle>,
}

impl<I: Item> Status<I> {
    /// Whether every operation of the run succeeded.
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }

    /// The joined error of the run, `None` if every operation succeeded.
    pub fn error(&self) -> Option<ReconcileError> {
        if self.errors.is_empty() {
            return None;
        }
        let failures = self.errors.iter().map(|(key, error)| format!("{key}: {error}")).collect();
        Some(ReconcileError::OperationsFailed { failures })
    }
}

/// What a failed operation does to the rest of a run ([`ReconcileOptions::on_failure`]).
///
/// Failures of background operations read at the start of a run (started by an earlier run)
/// block their dependents under either policy; only an operation the run itself executes
/// ends it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OnFailure {
    /// The run goes on: a failed operation blocks only what depends on it (its dependents'
    /// creates stay pending, the deletes it holds up are deferred); everything else runs.
    /// The default, and the behaviour of [`Reconciler::new`].
    #[default]
    BlockDependents,
    /// The first operation the run executes that fails ends the run (for operations run
    /// together as a batch, the batch in which one fails): no further operation is handed to
    /// a configurator, and those that would still have run are reported in
    /// [`Status::skipped`].
    ///
    /// Why: the seed's "abort on first failure". API calls made in dependency order (the
    /// seed's NetBird calls) stop at the first failure instead of going on around it: the
    /// remote side holds a prefix of the change in dependency order, nothing is attempted on
    /// top of a refusal, and a rerun, once the cause is fixed, finishes exactly the rest.
    ///
    /// Shape: the current graph keeps what actually happened: operations that finished before
    /// the failure, the failure itself, and operations already continuing in the background
    /// (they are neither cancelled nor waited for, as with [`OnFailure::BlockDependents`]).
    /// Nothing after the failure is touched: not even removals without an operation (items
    /// auto-deleted or going with a deleted item, see [`Status::auto_deleted`] and
    /// [`Status::cascaded`]) that the rest of the run would have made; the next run makes
    /// them.
    AbortRun,
}

/// Options of a [`Reconciler`].
///
/// Shape: `ReconcileOptions::default()` is the behaviour of [`Reconciler::new`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ReconcileOptions {
    /// What a failed operation does to the rest of the run.
    pub on_failure: OnFailure,
}

/// Drives configurators to move a current-state graph to an intended-state graph.
///
/// Shape: cheap to build; keep the registry and build a reconciler per run if convenient.
pub struct Reconciler<'r, I: Item> {
    registry: &'r dyn Registry<I>,
    options: ReconcileOptions,
}

impl<'r, I: Item> Reconciler<'r, I> {
    /// A reconciler that finds configurators in `registry`, with the default options (a
    /// failure blocks only its dependents: [`OnFailure::BlockDependents`]).
    pub fn new(registry: &'r dyn Registry<I>) -> Self {
        Self::with_options(registry, ReconcileOptions::default())
    }

    /// A reconciler that finds configurators in `registry` and runs with `options` (for
    /// instance [`OnFailure::AbortRun`] to end a run at its first failure).
    pub fn with_options(registry: &'r dyn Registry<I>, options: ReconcileOptions) -> Self {
        Self { registry, options }
    }

    /// The options this reconciler runs with.
    pub fn options(&self) -> ReconcileOptions {
        self.options
    }

    /// The plan [`Reconciler::reconcile`] would execute if every operation succeeded at once
    /// (the same under every [`OnFailure`] policy).
    ///
    /// Errors: [`GraphError::Cycle`]. Side effects: none.
    pub fn plan(
        &self,
        current: &Graph<I>,
        intended: &Graph<I>,
        selection: Selection,
    ) -> Result<Plan<I>, GraphError> {
        plan(current, intended, &|cur: &I, int: &I| self.needs_recreate(cur, int), selection)
    }

    /// Moves `current` towards `intended` for the selected items.
    ///
    /// Shape: first reads results of finished background operations (whatever the selection),
    /// then runs deletes and modifies (dependents first), then creates (dependencies first). A
    /// failed operation blocks only what depends on it, or, with [`OnFailure::AbortRun`], ends
    /// the run: the operations left are listed in [`Status::skipped`]. Creates of a
    /// configurator that takes batches ([`Configurator::create_batch_limit`]) go to it together
    /// when none depends on another (ADR 0009); the outcome is the same as one at a time.
    /// Operations that continue in the background leave their item in progress; call again
    /// once [`Status::ready_to_resume`] fires.
    /// Errors: [`GraphError::Cycle`] when `intended` has a dependency cycle; nothing is run.
    /// Operation failures are not errors of this function: they are in the returned status.
    /// Side effects: calls configurators; updates items and states of `current` in place.
    pub async fn reconcile(
        &self,
        current: &mut Graph<I>,
        intended: &Graph<I>,
        selection: Selection,
    ) -> Result<Status<I>, GraphError> {
        let index = Index::new(intended)?;
        let tracker = Arc::clone(current.tracker());
        let seen = tracker.completions();
        let mut op_log = Vec::new();
        let failed = absorb_finished(current, &tracker, &mut op_log);
        let needs_recreate = |cur: &I, int: &I| self.needs_recreate(cur, int);
        let mut seq = Sequencer::new(
            Current::InPlace(current),
            intended,
            needs_recreate,
            &selection,
            index,
            failed,
        );
        let mut skipped = Vec::new();
        while let Some(op) = seq.next_op() {
            let failed = match self.batch(&mut seq, &op) {
                Some(batch) => self.execute_batch(&tracker, &mut seq, op, batch, &mut op_log).await,
                None => {
                    let previous_error = seq.last_error(&op.key);
                    let (outcome, entry) = self.execute(&tracker, op, previous_error).await;
                    let failed =
                        entry.error.is_some().then(|| (entry.operation, entry.key.clone()));
                    op_log.push(entry);
                    seq.complete(outcome);
                    failed
                }
            };
            if let Some((operation, key)) = failed
                && self.options.on_failure == OnFailure::AbortRun
            {
                let reason = format!("not run: {operation} {key} failed first");
                skipped =
                    seq.abort().into_iter().map(|op| (op.key, op.op, reason.clone())).collect();
                break;
            }
        }
        let report = seq.finish();
        let in_progress = current.async_ops_in_progress();
        let errors = op_log
            .iter()
            .filter_map(|e| {
                Some((e.key.clone(), format!("{}: {}", e.operation, e.error.as_ref()?)))
            })
            .collect();
        Ok(Status {
            op_log,
            errors,
            pending: report.pending,
            deferred: report.deferred,
            skipped,
            auto_deleted: report.auto_deleted,
            cascaded: report.cascaded,
            async_ops_in_progress: in_progress,
            ready_to_resume: in_progress.then(|| ResumeSignal::new(&tracker, seen)),
            cancel: in_progress.then(|| CancelHandle::new(Arc::clone(&tracker))),
        })
    }

    /// When `first` is a create whose configurator takes batches
    /// ([`Configurator::create_batch_limit`]), the creates that may run with it: the next
    /// ones in the run's order, of the same configurator, depending on none of the batch.
    /// Likewise for a modify or a delete ([`Configurator::change_batch_limit`]): the next
    /// stage-1 operations of its kind and configurator sharing no edge with the batch.
    /// `None` for anything else (run one at a time).
    fn batch<F: Fn(&I, &I) -> bool>(
        &self,
        seq: &mut Sequencer<'_, I, F>,
        first: &PlannedOp<I>,
    ) -> Option<(&'r dyn Configurator<I>, Vec<PlannedOp<I>>)> {
        let (configurator, limit) = match first.op {
            Operation::Create => {
                let configurator = self.registry.configurator(first.after.as_ref()?)?;
                (configurator, configurator.create_batch_limit())
            }
            Operation::Modify | Operation::Delete => {
                let item = first.after.as_ref().or(first.before.as_ref())?;
                let configurator = self.registry.configurator(item)?;
                (configurator, configurator.change_batch_limit())
            }
            Operation::Recreate => return None,
        };
        let same = |item: &I| {
            self.registry.configurator(item).is_some_and(|c| std::ptr::addr_eq(c, configurator))
        };
        let mut joined = Vec::new();
        while joined.len() + 1 < limit {
            let next = match first.op {
                Operation::Create => seq.next_joining(same),
                Operation::Modify | Operation::Delete | Operation::Recreate => {
                    seq.next_joining_change(same)
                }
            };
            let Some(op) = next else { break };
            joined.push(op);
        }
        (!joined.is_empty()).then_some((configurator, joined))
    }

    /// Runs `first` and the operations `joined` to it with one
    /// [`Configurator::create_many`] or [`Configurator::change_many`], then completes them in
    /// order; returns the first that failed, as `(operation, key)`.
    ///
    /// Shape: every log entry of the batch carries the batch's start and end.
    async fn execute_batch<F: Fn(&I, &I) -> bool>(
        &self,
        tracker: &Arc<Tracker>,
        seq: &mut Sequencer<'_, I, F>,
        first: PlannedOp<I>,
        (configurator, joined): (&'r dyn Configurator<I>, Vec<PlannedOp<I>>),
        op_log: &mut Vec<OpLogEntry<I>>,
    ) -> Option<(Operation, Key<I::Kind>)> {
        let operation = first.op;
        let ops: Vec<PlannedOp<I>> = std::iter::once(first).chain(joined).collect();
        let ctx = OpContext::new(Arc::clone(tracker));
        let start = SystemTime::now();
        let results = if operation == Operation::Create {
            let items: Vec<&I> = ops
                .iter()
                .map(|op| op.after.as_ref().expect("invariant: a create carries its intended item"))
                .collect();
            configurator.create_many(&ctx, &items).await
        } else {
            let changes: Vec<(&I, Option<&I>)> = ops
                .iter()
                .map(|op| {
                    let before = op
                        .before
                        .as_ref()
                        .expect("invariant: a stage-1 op carries its current item");
                    (before, op.after.as_ref())
                })
                .collect();
            configurator.change_many(&ctx, &changes).await
        };
        let end = SystemTime::now();
        let mut results = results.into_iter();
        let mut first_failed = None;
        for PlannedOp { key, after, before, .. } in ops {
            let previous_error = seq.last_error(&key);
            let result = match results.next() {
                Some(result) => result.map_err(|error| error_chain(error.as_ref())),
                None => Err(format!("the configurator returned no result for this {operation}")),
            };
            let outcome = match &result {
                Err(error) => Outcome::Failed(error.clone()),
                Ok(()) => Outcome::Done,
            };
            let item = after.or(before).expect("invariant: every planned op carries an item");
            if result.is_err() && first_failed.is_none() {
                first_failed = Some((operation, key.clone()));
            }
            op_log.push(OpLogEntry {
                key,
                operation,
                item,
                start,
                end: Some(end),
                in_progress: false,
                error: result.err(),
                previous_error,
                cancelled: false,
            });
            seq.complete(outcome);
        }
        first_failed
    }

    fn needs_recreate(&self, current: &I, intended: &I) -> bool {
        self.registry.configurator(intended).is_some_and(|c| c.needs_recreate(current, intended))
    }

    async fn execute(
        &self,
        tracker: &Arc<Tracker>,
        op: PlannedOp<I>,
        previous_error: Option<String>,
    ) -> (Outcome, OpLogEntry<I>) {
        let item = op.after.clone().or_else(|| op.before.clone());
        let item = item.expect("invariant: every planned op carries an item");
        let ctx = OpContext::new(Arc::clone(tracker));
        let start = SystemTime::now();
        let result = match self.registry.configurator(&item) {
            None => {
                Err(OperationError::NoConfigurator { kind: op.key.kind.to_string() }.to_string())
            }
            Some(configurator) => {
                let call = match (op.op, &op.before) {
                    (Operation::Create, _) => configurator.create(&ctx, &item),
                    (Operation::Modify, Some(before)) => configurator.modify(&ctx, before, &item),
                    _ => configurator.delete(&ctx, &item),
                };
                call.await.map_err(|error| error_chain(error.as_ref()))
            }
        };
        let background = ctx.background_id().filter(|_| result.is_ok());
        let outcome = match (&result, background) {
            (Err(error), _) => Outcome::Failed(error.clone()),
            (Ok(()), Some(id)) => Outcome::Background(id),
            (Ok(()), None) => Outcome::Done,
        };
        let entry = OpLogEntry {
            key: op.key,
            operation: op.op,
            item,
            start,
            end: background.is_none().then(SystemTime::now),
            in_progress: background.is_some(),
            error: result.err(),
            previous_error,
            cancelled: false,
        };
        (outcome, entry)
    }
}

/// Completes the transitions of background operations that delivered a result.
///
/// Shape: returns the keys whose operation failed, with the error; they are not retried in
/// this run. Side effects: updates items and states in `current`; forgets finished operations
/// no item refers to.
fn absorb_finished<I: Item>(
    current: &mut Graph<I>,
    tracker: &Tracker,
    op_log: &mut Vec<OpLogEntry<I>>,
) -> BTreeMap<Key<I::Kind>, String> {
    let running: Vec<(Key<I::Kind>, Operation, u64)> = current
        .states()
        .filter_map(|(key, state)| Some((key.clone(), state.in_progress()?, state.async_op?)))
        .collect();
    let mut failed = BTreeMap::new();
    for (key, operation, id) in running {
        let Some(finished) = tracker.take_finished(id) else { continue };
        let previous_error = current.state(&key).and_then(|state| state.last_error.clone());
        let item =
            current.entry(&key).map(|entry| entry.next.clone().unwrap_or(entry.item.clone()));
        settle(current, &key, operation, finished.result.clone());
        if let Err(error) = &finished.result {
            failed.insert(key.clone(), error.clone());
        }
        if let Some(item) = item {
            op_log.push(OpLogEntry {
                key,
                operation,
                item,
                start: finished.started,
                end: Some(finished.ended),
                in_progress: false,
                error: finished.result.err(),
                previous_error,
                cancelled: finished.cancelled,
            });
        }
    }
    let live: BTreeSet<u64> = current.states().filter_map(|(_, state)| state.async_op).collect();
    tracker.prune(&live);
    failed
}

/// Applies the result of a background `operation` on `key` to the current graph.
fn settle<I: Item>(
    current: &mut Graph<I>,
    key: &Key<I::Kind>,
    operation: Operation,
    result: Result<(), String>,
) {
    let next = current.entry_mut(key).and_then(|entry| entry.next.take());
    match (operation, &result) {
        (Operation::Delete, Ok(())) => {
            current.take_entry(key);
            current.drop_state(key);
            return;
        }
        (Operation::Create, Err(_)) => {
            current.take_entry(key);
        }
        (Operation::Modify, Ok(())) => {
            if let (Some(entry), Some(next)) = (current.entry_mut(key), next) {
                entry.item = next;
            }
        }
        _ => {}
    }
    current.state_mut(key).record(operation, result);
}

impl<I: Item> Default for Status<I> {
    fn default() -> Self {
        Self {
            op_log: Vec::new(),
            errors: Vec::new(),
            pending: Vec::new(),
            deferred: Vec::new(),
            skipped: Vec::new(),
            auto_deleted: Vec::new(),
            cascaded: Vec::new(),
            async_ops_in_progress: false,
            ready_to_resume: None,
            cancel: None,
        }
    }
}
