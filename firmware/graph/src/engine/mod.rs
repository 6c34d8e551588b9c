//! The ordering core shared by [`plan`](crate::plan) and the [`Reconciler`](crate::Reconciler).
//!
//! Sans-I/O: [`Engine::next_op`] hands out the next operation to run and [`Engine::complete`]
//! takes its outcome; the engine updates the current graph accordingly. It never calls a
//! configurator, reads no clock and spawns nothing. The driver decides what "running" means:
//! `plan` assumes success, `reconcile` calls the configurator.
//!
//! ```text
//! new: actions (fixed point) ─▶ stage 1 order (post-order: dependents first)
//!      intended topological order ─▶ stage 2 (creates: dependencies first)
//! loop: next_op ─▶ driver runs it ─▶ complete(outcome) ─▶ graph updated, blocks recorded
//! finish: pending / deferred / auto-deleted report
//! ```

mod actions;
pub(crate) mod order;
mod steps;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::graph::Graph;
use crate::item::{Item, Key};
use crate::plan::{PlannedOp, Reason};
use crate::state::{Operation, Selection};

/// Result of one operation handed out by [`Engine::next_op`].
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The operation finished successfully.
    Done,
    /// The operation failed with this error.
    Failed(String),
    /// The operation continues in the background under this tracker id.
    Background(u64),
}

/// A stage-1 action decided for an item of the current graph.
#[derive(Clone, Debug)]
pub(crate) enum Action {
    /// Modify in place into the intended value.
    Modify,
    /// Delete; with `auto`, the item is only removed from the graph (no operation).
    Delete { reason: Reason, auto: bool },
}

impl Action {
    fn rank(&self) -> u8 {
        match self {
            Action::Modify => 1,
            Action::Delete { .. } => 2,
        }
    }
}

/// Why an item must not be touched again, or used as a dependency, in this run.
#[derive(Clone, Debug)]
pub(crate) enum Hold {
    Failed(String),
    InProgress(Operation),
    Deferred(String),
}

impl fmt::Display for Hold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Hold::Failed(error) => write!(f, "failed: {error}"),
            Hold::InProgress(op) => write!(f, "has a {op} in progress"),
            Hold::Deferred(why) => write!(f, "waits ({why})"),
        }
    }
}

#[derive(Clone, Debug)]
enum Step<K> {
    Stage1(Key<K>),
    Stage2(Key<K>),
}

/// What the run left undone, for the plan or status.
#[derive(Debug)]
pub(crate) struct Report<K> {
    pub(crate) pending: Vec<(Key<K>, String)>,
    pub(crate) deferred: Vec<(Key<K>, String)>,
    pub(crate) auto_deleted: Vec<Key<K>>,
}

/// One reconciliation run over a current graph it updates in place.
pub(crate) struct Engine<'a, I: Item, F> {
    cur: &'a mut Graph<I>,
    int: &'a Graph<I>,
    needs_recreate: F,
    /// Keys selected for this run; `None` selects everything.
    scope: Option<BTreeSet<Key<I::Kind>>>,
    actions: BTreeMap<Key<I::Kind>, Action>,
    /// Current-state reverse edges: non-external items depending on a key (at start of run).
    dependents: BTreeMap<Key<I::Kind>, Vec<Key<I::Kind>>>,
    /// Intended-state reverse edges.
    int_dependents: BTreeMap<Key<I::Kind>, Vec<Key<I::Kind>>>,
    steps: Vec<Step<I::Kind>>,
    position: usize,
    held: BTreeMap<Key<I::Kind>, Hold>,
    /// Items deleted in this run and why; a recreate reason carries over to their create.
    deleted: BTreeMap<Key<I::Kind>, Reason>,
    /// Items outside the selection deleted by a cascade: created again when possible.
    restorable: BTreeSet<Key<I::Kind>>,
    running: Option<PlannedOp<I>>,
    report: Report<I::Kind>,
}

impl<'a, I: Item, F: Fn(&I, &I) -> bool> Engine<'a, I, F> {
    /// Prepares a run: decides stage-1 actions and the order of both stages.
    ///
    /// `order` is the intended graph's topological order; `failed` lists keys whose background
    /// operation just failed (they are not retried in this run).
    pub(crate) fn new(
        cur: &'a mut Graph<I>,
        int: &'a Graph<I>,
        needs_recreate: F,
        selection: &Selection,
        order: Vec<Key<I::Kind>>,
        failed: BTreeMap<Key<I::Kind>, String>,
    ) -> Self {
        let scope = match selection {
            Selection::All => None,
            Selection::Subgraph(_) => Some(
                cur.keys()
                    .filter(|key| cur.is_selected(key, selection))
                    .chain(int.keys().filter(|key| int.is_selected(key, selection)))
                    .cloned()
                    .collect(),
            ),
        };
        let mut held: BTreeMap<_, _> =
            failed.into_iter().map(|(key, error)| (key, Hold::Failed(error))).collect();
        for (key, state) in cur.states() {
            if let Some(op) = state.in_progress() {
                held.insert(key.clone(), Hold::InProgress(op));
            }
        }
        let dependents = reverse_edges(cur, |item| !item.is_external());
        let int_dependents = reverse_edges(int, |_| true);
        let mut engine = Self {
            cur,
            int,
            needs_recreate,
            scope,
            actions: BTreeMap::new(),
            dependents,
            int_dependents,
            steps: Vec::new(),
            position: 0,
            held,
            deleted: BTreeMap::new(),
            restorable: BTreeSet::new(),
            running: None,
            report: Report { pending: Vec::new(), deferred: Vec::new(), auto_deleted: Vec::new() },
        };
        engine.compute_actions();
        let stage1 = engine.stage1_order();
        engine.steps = stage1
            .into_iter()
            .map(Step::Stage1)
            .chain(order.into_iter().map(Step::Stage2))
            .collect();
        engine
    }

    /// The current graph as updated so far.
    pub(crate) fn current(&self) -> &Graph<I> {
        self.cur
    }

    /// The next operation to run, or `None` when the run is over.
    ///
    /// Shape: call [`Engine::complete`] with its outcome before asking for the next one.
    pub(crate) fn next_op(&mut self) -> Option<PlannedOp<I>> {
        debug_assert!(self.running.is_none(), "next_op called before complete");
        while let Some(step) = self.steps.get(self.position).cloned() {
            self.position += 1;
            let op = match step {
                Step::Stage1(key) => self.stage1_step(&key),
                Step::Stage2(key) => self.stage2_step(&key),
            };
            if let Some(op) = op {
                self.running = Some(op.clone());
                return Some(op);
            }
        }
        None
    }

    /// Records the outcome of the operation last handed out by [`Engine::next_op`].
    ///
    /// Side effects: updates the item and its state in the current graph.
    pub(crate) fn complete(&mut self, outcome: Outcome) {
        let op = self.running.take().expect("invariant: complete() follows next_op()");
        match outcome {
            Outcome::Done => self.apply_success(op),
            Outcome::Failed(error) => self.apply_failure(op, error),
            Outcome::Background(id) => self.apply_background(op, id),
        }
    }

    /// Ends the run: clears per-run marks and returns what was left undone.
    ///
    /// Side effects: clears `externally_modified` on selected external items, moves selected
    /// non-external items into their intended subgraph, and drops states of selected keys that
    /// are neither present nor intended.
    pub(crate) fn finish(self) -> Report<I::Kind> {
        let selected: Vec<Key<I::Kind>> = self
            .cur
            .states()
            .map(|(key, _)| key.clone())
            .filter(|key| self.in_scope(key))
            .collect();
        for key in selected {
            match self.cur.get(&key) {
                Some(item) if item.is_external() => {
                    self.cur.state_mut(&key).externally_modified = false
                }
                Some(_) if self.int.contains(&key) => {
                    let subgraph = self.intended_subgraph(&key);
                    if let Some(entry) = self.cur.entry_mut(&key) {
                        entry.subgraph = subgraph;
                    }
                }
                Some(_) => {}
                None if self.int.get(&key).is_some_and(|item| !item.is_external()) => {}
                None => self.cur.drop_state(&key),
            }
        }
        self.report
    }

    fn in_scope(&self, key: &Key<I::Kind>) -> bool {
        self.scope.as_ref().is_none_or(|scope| scope.contains(key))
    }

    fn is_external(&self, key: &Key<I::Kind>) -> bool {
        match self.cur.get(key) {
            Some(item) => item.is_external(),
            None => self.int.get(key).is_some_and(Item::is_external),
        }
    }

    fn intended_subgraph(&self, key: &Key<I::Kind>) -> Option<String> {
        self.int.subgraph_of(key).map(str::to_string)
    }
}

/// For every key, the items of `graph` (passing `keep`) that depend on it, in key order.
fn reverse_edges<I: Item>(
    graph: &Graph<I>,
    keep: impl Fn(&I) -> bool,
) -> BTreeMap<Key<I::Kind>, Vec<Key<I::Kind>>> {
    let mut reverse: BTreeMap<Key<I::Kind>, Vec<Key<I::Kind>>> = BTreeMap::new();
    for item in graph.items().filter(|item| keep(item)) {
        let key = item.key();
        for dep in item.deps() {
            let dependents = reverse.entry(dep.key).or_default();
            if dependents.last() != Some(&key) {
                dependents.push(key.clone());
            }
        }
    }
    reverse
}
