//! The ordering core shared by [`plan`](crate::plan) and the [`Reconciler`](crate::Reconciler).
//!
//! Sans-I/O: [`Sequencer::next_op`] hands out the next operation to run and [`Sequencer::complete`]
//! takes its outcome; the sequencer updates the current graph accordingly. It never calls a
//! configurator, reads no clock and spawns nothing. The driver decides what "running" means:
//! `plan` assumes success, `reconcile` calls the configurator.
//!
//! ```text
//! new: actions (fixed point) ─▶ stage 1 order (post-order: dependents first, an item that
//!      goes with a deleted dependency after it)
//!      intended topological order ─▶ stage 2 (creates: dependencies first)
//! loop: next_op [─▶ next_joining …] ─▶ driver runs them ─▶ complete(outcome) per op, in order
//!       ─▶ graph updated, blocks recorded
//! finish: pending / deferred / auto-deleted / cascaded report
//! ```
//!
//! A driver that ends the run at its first failure calls [`Sequencer::abort`] instead of
//! going on: it lists the operations that would still have run and leaves the current graph
//! as it stands.

mod abort;
mod actions;
mod index;
pub(crate) mod order;
mod steps;

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::ops::{Deref, DerefMut};

use self::index::Edge;
pub(crate) use self::index::Index;
use crate::graph::Graph;
use crate::item::{Item, Key};
use crate::plan::{Cascaded, PlannedOp, Reason};
use crate::state::{ItemState, Operation, Selection};

/// Result of one operation handed out by [`Sequencer::next_op`].
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
    /// Removal without an operation of its own, once item `with` (a dependency declared
    /// [`cascade`](crate::Dependency::cascade), deleted for good or itself cascaded) is gone.
    ///
    /// Shape: the `with` links of all cascades form a forest (`compute_actions` refuses a link
    /// that would close a loop), so walks along them end.
    Cascade { with: usize },
}

impl Action {
    fn rank(&self) -> u8 {
        match self {
            Action::Modify => 1,
            Action::Delete { .. } => 2,
            Action::Cascade { .. } => 3,
        }
    }

    /// Whether the action removes the item from the current graph (a delete or a cascade).
    fn removes(&self) -> bool {
        matches!(self, Action::Delete { .. } | Action::Cascade { .. })
    }
}

/// The current graph of a run: updated in place (reconcile), or a plan's scratch copy made
/// only when the run first changes it (copy on write).
pub(crate) enum Current<'a, I: Item> {
    /// The caller's graph, updated in place.
    InPlace(&'a mut Graph<I>),
    /// A graph the run must not change; nothing changed yet.
    Shared(&'a Graph<I>),
    /// The copy of a shared graph, once the run changed it.
    Copied(Graph<I>),
}

impl<I: Item> Deref for Current<'_, I> {
    type Target = Graph<I>;

    fn deref(&self) -> &Graph<I> {
        match self {
            Current::InPlace(graph) => graph,
            Current::Shared(graph) => graph,
            Current::Copied(graph) => graph,
        }
    }
}

impl<I: Item> DerefMut for Current<'_, I> {
    /// Side effects: the first call on a shared graph copies it.
    fn deref_mut(&mut self) -> &mut Graph<I> {
        if let Current::Shared(graph) = self {
            *self = Current::Copied((*graph).clone());
        }
        match self {
            Current::InPlace(graph) => graph,
            Current::Copied(graph) => graph,
            Current::Shared(_) => unreachable!("invariant: a shared graph was just copied"),
        }
    }
}

/// What the current graph said about an id at start of run.
#[derive(Clone, Copy, Debug, Default)]
struct CurFact {
    /// An item is stored under the key.
    present: bool,
    /// The stored item is external.
    external: bool,
    /// The operation running in the background, if any.
    running: Option<Operation>,
    /// The key's state is marked `externally_modified`.
    externally_modified: bool,
}

/// What the current graph holds under an id, as the run last read it.
#[derive(Clone, Copy, Debug)]
struct Seen {
    /// An item is stored under the key.
    present: bool,
    /// The key has a state: whether it is usable, and the operation running in the background.
    state: Option<(bool, Option<Operation>)>,
}

impl Seen {
    fn of(present: bool, state: Option<&ItemState>) -> Self {
        Seen { present, state: state.map(|s| (s.is_usable(), s.in_progress())) }
    }

    fn in_progress(&self) -> Option<Operation> {
        self.state.and_then(|(_, running)| running)
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

/// One step of the run, by item id.
#[derive(Clone, Copy, Debug)]
enum Step {
    Stage1(usize),
    Stage2(usize),
}

/// An operation handed out and not completed yet: the id it was decided for, and its stage.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// A stage-1 modify or delete of this id.
    Change(usize),
    /// A stage-2 create of this id.
    Create(usize),
}

impl Slot {
    fn id(self) -> usize {
        match self {
            Slot::Change(id) | Slot::Create(id) => id,
        }
    }
}

/// What the run left undone, for the plan or status.
#[derive(Debug)]
pub(crate) struct Report<K> {
    pub(crate) pending: Vec<(Key<K>, String)>,
    pub(crate) deferred: Vec<(Key<K>, String)>,
    pub(crate) auto_deleted: Vec<Key<K>>,
    /// Items removed with the item they go with, as `(item, went with)`.
    pub(crate) cascaded: Vec<Cascaded<K>>,
}

/// One reconciliation run over a current graph it updates in place.
///
/// Shape: items are addressed by the dense ids of [`Index`]; per-id facts live in vectors of
/// `index.len()` entries.
pub(crate) struct Sequencer<'a, I: Item, F> {
    cur: Current<'a, I>,
    int: &'a Graph<I>,
    needs_recreate: F,
    /// Keys selected for this run; `None` selects everything.
    scope: Option<BTreeSet<Key<I::Kind>>>,
    /// Keys, intended items and intended edges by id.
    index: Index<'a, I>,
    /// Ids of the current items at start of run, in key order.
    cur_ids: Vec<usize>,
    /// Dependencies of each current item at start of run (empty without an item).
    cur_deps: Vec<Vec<Edge<I>>>,
    /// The current graph at start of run, by id; valid while the actions are decided.
    cur_facts: Vec<CurFact>,
    actions: Vec<Option<Action>>,
    /// Current-state reverse edges: non-external items depending on an id (at start of run),
    /// in key order.
    dependents: Vec<Vec<usize>>,
    /// Intended-state reverse edges, in key order.
    int_dependents: Vec<Vec<usize>>,
    steps: Vec<Step>,
    position: usize,
    held: BTreeMap<Key<I::Kind>, Hold>,
    /// Items deleted in this run and why; a recreate reason carries over to their create.
    deleted: BTreeMap<Key<I::Kind>, Reason>,
    /// Items outside the selection deleted by a cascade: created again when possible.
    restorable: BTreeSet<Key<I::Kind>>,
    /// Operations handed out and not completed yet, in hand-out order (more than one only
    /// through [`Sequencer::next_joining`] and [`Sequencer::next_joining_change`]).
    running: VecDeque<(PlannedOp<I>, Slot)>,
    /// By id: an operation handed out and not completed yet.
    in_flight: Vec<bool>,
    /// By id: the current graph's slot as last read, `None` until read and after the run
    /// changed the key. A dependency is asked about by every item that needs it (a link by
    /// each of its routes), and each question would otherwise search the graph's map.
    seen: Vec<Cell<Option<Seen>>>,
    report: Report<I::Kind>,
    /// Set by [`Sequencer::abort`]: the run goes on only on a copy, to list what is skipped.
    aborted: Option<abort::Aborted<'a, I>>,
}

impl<'a, I: Item, F: Fn(&I, &I) -> bool> Sequencer<'a, I, F> {
    /// Prepares a run: decides stage-1 actions and the order of both stages.
    ///
    /// `index` is [`Index::new`] of `int` (it holds the intended topological order); `failed`
    /// lists keys whose background operation just failed (they are not retried in this run).
    pub(crate) fn new(
        cur: Current<'a, I>,
        int: &'a Graph<I>,
        needs_recreate: F,
        selection: &Selection,
        mut index: Index<'a, I>,
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
        let mut cur_ids = Vec::with_capacity(cur.len());
        let mut cur_edges = Vec::with_capacity(cur.len());
        for (key, item) in cur.keys().zip(cur.items()) {
            let id = index.id(key);
            cur_ids.push(id);
            cur_edges.push((id, index.edges(item), item.is_external()));
        }
        index.grow();
        let count = index.len();
        let mut cur_deps: Vec<Vec<Edge<I>>> = Vec::new();
        cur_deps.resize_with(count, Vec::new);
        let mut cur_facts = vec![CurFact::default(); count];
        for (key, state) in cur.states() {
            if let Some(id) = index.get(key) {
                cur_facts[id].running = state.in_progress();
                cur_facts[id].externally_modified = state.externally_modified;
            }
        }
        let mut dependents = vec![Vec::new(); count];
        for (id, edges, external) in cur_edges {
            cur_facts[id].present = true;
            cur_facts[id].external = external;
            if !external {
                add_reverse_edges(&mut dependents, id, &edges);
            }
            cur_deps[id] = edges;
        }
        let mut int_dependents = vec![Vec::new(); count];
        for id in 0..int.len() {
            add_reverse_edges(&mut int_dependents, id, &index.int_deps[id]);
        }
        let order = std::mem::take(&mut index.order);
        let mut seq = Self {
            cur,
            int,
            needs_recreate,
            scope,
            index,
            cur_ids,
            cur_deps,
            cur_facts,
            actions: vec![None; count],
            dependents,
            int_dependents,
            steps: Vec::new(),
            position: 0,
            held,
            deleted: BTreeMap::new(),
            restorable: BTreeSet::new(),
            running: VecDeque::new(),
            in_flight: vec![false; count],
            seen: vec![Cell::new(None); count],
            report: Report {
                pending: Vec::new(),
                deferred: Vec::new(),
                auto_deleted: Vec::new(),
                cascaded: Vec::new(),
            },
            aborted: None,
        };
        seq.compute_actions();
        let stage1 = seq.stage1_order();
        seq.steps = stage1
            .into_iter()
            .map(Step::Stage1)
            .chain(order.into_iter().map(Step::Stage2))
            .collect();
        seq
    }

    /// The error of the last operation on `key`, kept in its state until one succeeds.
    pub(crate) fn last_error(&self, key: &Key<I::Kind>) -> Option<String> {
        // Most keys a run touches have no state at all: the slot read once says so.
        if self.index.get(key).is_some_and(|id| self.seen(id).state.is_none()) {
            return None;
        }
        self.cur.state(key).and_then(|s| s.last_error.clone())
    }

    /// The next operation to run, or `None` when the run is over.
    ///
    /// Shape: call [`Sequencer::complete`] with its outcome before asking for the next one (or
    /// extend it to a batch with [`Sequencer::next_joining`]).
    pub(crate) fn next_op(&mut self) -> Option<PlannedOp<I>> {
        debug_assert!(self.running.is_empty(), "next_op called before complete");
        while let Some(&step) = self.steps.get(self.position) {
            self.position += 1;
            let (op, slot) = match step {
                Step::Stage1(id) => (self.stage1_step(id), Slot::Change(id)),
                Step::Stage2(id) => (self.stage2_step(id), Slot::Create(id)),
            };
            if let Some(op) = op {
                return Some(self.hand_out(op, slot));
            }
        }
        None
    }

    /// The next operation, if it is a create that may run at the same time as every operation
    /// handed out and not completed yet, and `joins` accepts its intended item.
    ///
    /// Shape: `None` (nothing consumed) when the operations running are not all creates, when
    /// the next step is not a create, when the next create depends on one that is running, or
    /// when `joins` refuses it; complete the running operations first, then go on with
    /// [`Sequencer::next_op`]. Steps that yield no operation are consumed on the way.
    ///
    /// Why this is the same run as one operation at a time: a create is decided by its own key
    /// and its dependencies only (see `stage2_step`), and none of its dependencies is running,
    /// so the outcomes still to come cannot change the decision.
    pub(crate) fn next_joining(&mut self, joins: impl Fn(&I) -> bool) -> Option<PlannedOp<I>> {
        if self.running.is_empty() || self.running.iter().any(|(_, s)| matches!(s, Slot::Change(_)))
        {
            return None;
        }
        while let Some(&Step::Stage2(id)) = self.steps.get(self.position) {
            if self.index.int_deps[id].iter().any(|edge| self.in_flight[edge.to]) {
                return None;
            }
            if self.index.int_items[id].is_some_and(|item| !joins(item)) {
                return None;
            }
            self.position += 1;
            if let Some(op) = self.stage2_step(id) {
                return Some(self.hand_out(op, Slot::Create(id)));
            }
        }
        None
    }

    /// The next operation, if it is a stage-1 operation of the same kind (modify or delete) as
    /// every operation handed out and not completed yet, on an item that shares no edge with
    /// any of them, and `joins` accepts its current item.
    ///
    /// Shape: as [`Sequencer::next_joining`]: `None` with nothing consumed otherwise.
    ///
    /// Why this is the same run as one operation at a time: a stage-1 step is decided by its
    /// item's action, its dependencies and its dependents (`stage1_step`): whether they are
    /// gone, failed or held. With no edge in either direction, in the current or the intended
    /// graph, to an operation still running, no outcome to come can change the decision.
    pub(crate) fn next_joining_change(
        &mut self,
        joins: impl Fn(&I) -> bool,
    ) -> Option<PlannedOp<I>> {
        let kind = match self.running.front() {
            Some((op, Slot::Change(_))) => op.op,
            _ => return None,
        };
        if self.running.iter().any(|(op, slot)| op.op != kind || matches!(slot, Slot::Create(_))) {
            return None;
        }
        while let Some(&Step::Stage1(id)) = self.steps.get(self.position) {
            let same_kind = match &self.actions[id] {
                Some(Action::Modify) => kind == Operation::Modify,
                Some(Action::Delete { .. }) => kind == Operation::Delete,
                // No operation: removed with its dependency (an edge to it), or kept.
                Some(Action::Cascade { .. }) | None => true,
            };
            let flying = |to: usize| self.in_flight[to];
            // A delete also looks through the dependents going with it at their dependents.
            let linked = self.cur_deps[id].iter().any(|edge| flying(edge.to))
                || self.index.int_deps[id].iter().any(|edge| flying(edge.to))
                || self.find_dependent(id, |d, _| flying(d).then_some(())).is_some()
                || self.int_dependents[id].iter().any(|&d| flying(d));
            if !same_kind || linked {
                return None;
            }
            if self.cur.get(&self.index.keys[id]).is_some_and(|item| !joins(item)) {
                return None;
            }
            self.position += 1;
            if let Some(op) = self.stage1_step(id) {
                if op.op != kind {
                    // Decided otherwise than its action said (never: a modify step yields a
                    // modify, a delete step a delete); run it alone after the batch.
                    self.position -= 1;
                    return None;
                }
                return Some(self.hand_out(op, Slot::Change(id)));
            }
        }
        None
    }

    fn hand_out(&mut self, op: PlannedOp<I>, slot: Slot) -> PlannedOp<I> {
        self.in_flight[slot.id()] = true;
        self.running.push_back((op.clone(), slot));
        op
    }

    /// Records the outcome of the earliest operation handed out and not completed yet.
    ///
    /// Side effects: updates the item and its state in the current graph.
    pub(crate) fn complete(&mut self, outcome: Outcome) {
        let (op, slot) = self.running.pop_front().expect("invariant: complete() follows next_op()");
        self.in_flight[slot.id()] = false;
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
    /// A plan ([`Current::Shared`]) skips this: its scratch graph is thrown away. After
    /// [`Sequencer::abort`], see `finish_aborted`.
    pub(crate) fn finish(mut self) -> Report<I::Kind> {
        if let Some(aborted) = self.aborted.take() {
            return self.finish_aborted(aborted);
        }
        if !matches!(self.cur, Current::Shared(_)) {
            let keep_marked = self.marks_still_needed();
            let scope = self.scope.as_ref();
            self.cur.settle(self.int, |key| scope.is_none_or(|scope| scope.contains(key)));
            for key in &keep_marked {
                if self.cur.state(key).is_some() {
                    self.cur.state_mut(key).externally_modified = true;
                }
            }
        }
        self.report
    }

    /// External items whose `externally_modified` mark a delete of this run was for and that
    /// delete did not happen (failed, deferred): settling would clear the mark, and the
    /// `recreate_when_modified` dependent would then never be recreated.
    fn marks_still_needed(&self) -> BTreeSet<Key<I::Kind>> {
        let mut keep = BTreeSet::new();
        for &id in &self.cur_ids {
            let deleting = matches!(self.actions[id], Some(Action::Delete { auto: false, .. }));
            if !deleting || self.deleted.contains_key(&self.index.keys[id]) {
                continue;
            }
            for edge in &self.cur_deps[id] {
                if edge.dep.recreate_when_modified && self.cur_facts[edge.to].externally_modified {
                    keep.insert(edge.dep.key.clone());
                }
            }
        }
        keep
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

    /// The subgraph of the intended item under `key`, if any.
    fn intended_subgraph(&self, key: &Key<I::Kind>) -> Option<String> {
        match self.index.get(key) {
            Some(id) => self.index.int_subgraphs[id].map(str::to_string),
            None => self.int.subgraph_of(key).map(str::to_string),
        }
    }

    /// Whether the current item `dependent` goes with item `id` (a cascade).
    fn goes_with(&self, dependent: usize, id: usize) -> bool {
        matches!(self.actions[dependent], Some(Action::Cascade { with }) if with == id)
    }

    /// The first `Some` of `visit(dependent, required)` over the current dependents of `id`
    /// (`required` is `id`) and, through each dependent that goes with `id`, over that
    /// dependent's own (`required` is that dependent), and so on down.
    ///
    /// Shape: dependents in key order, those of a cascaded dependent after all of `id`'s; each
    /// dependent visited once per item it depends on along the way. Walks only `with` links
    /// backwards (a forest), so it ends; allocates only when `id` has a cascaded dependent.
    fn find_dependent<T>(
        &self,
        id: usize,
        mut visit: impl FnMut(usize, usize) -> Option<T>,
    ) -> Option<T> {
        let mut below = Vec::new();
        let mut required = id;
        loop {
            for &dependent in &self.dependents[required] {
                if let Some(found) = visit(dependent, required) {
                    return Some(found);
                }
                if self.goes_with(dependent, required) {
                    below.push(dependent);
                }
            }
            required = below.pop()?;
        }
    }

    /// The current graph's slot of `id`: read once, then from `seen` until the run changes it.
    fn seen(&self, id: usize) -> Seen {
        if let Some(seen) = self.seen[id].get() {
            return seen;
        }
        let (present, state) = self.cur.slot(&self.index.keys[id]);
        let seen = Seen::of(present, state);
        self.seen[id].set(Some(seen));
        seen
    }

    /// Forgets what was read of `key`'s slot: the run is about to change it.
    fn forget(&self, key: &Key<I::Kind>) {
        if let Some(id) = self.index.get(key) {
            self.seen[id].set(None);
        }
    }
}

/// Records `id` as a dependent of every item its `edges` name, once per item.
///
/// Shape: called in key order of `id`, so each list ends up in key order.
fn add_reverse_edges<I: Item>(reverse: &mut [Vec<usize>], id: usize, edges: &[Edge<I>]) {
    for edge in edges {
        let dependents = &mut reverse[edge.to];
        if dependents.last() != Some(&id) {
            dependents.push(id);
        }
    }
}
