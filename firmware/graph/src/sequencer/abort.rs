//! Ending a run at its first failure ([`OnFailure::AbortRun`](crate::OnFailure::AbortRun)).
//!
//! The rest of the run is only worked out, on a copy of the current graph, to tell what would
//! still have run; the caller's graph keeps what actually happened.

use std::collections::BTreeSet;

use super::{Current, Outcome, Report, Sequencer};
use crate::graph::Graph;
use crate::item::{Item, Key};
use crate::plan::PlannedOp;
use crate::state::{ItemStatus, Operation};

/// What [`Sequencer::abort`] left for [`Sequencer::finish`].
pub(super) struct Aborted<'a, I: Item> {
    /// The caller's graph, set aside while the rest of the run is worked out on a copy; `None`
    /// when the run had none (a plan's shared graph).
    real: Option<&'a mut Graph<I>>,
    /// Lengths of the report's lists at the abort: later entries come from the rest of the run.
    marks: Marks,
    /// Keys with a skipped operation.
    skipped: BTreeSet<Key<I::Kind>>,
    /// External items whose `externally_modified` mark a skipped delete was for: a
    /// `recreate_when_modified` dependent the next run must still recreate.
    keep_marked: BTreeSet<Key<I::Kind>>,
}

/// Lengths of a report's lists.
#[derive(Clone, Copy)]
struct Marks {
    pending: usize,
    deferred: usize,
    auto_deleted: usize,
    cascaded: usize,
}

impl Marks {
    fn of<K>(report: &Report<K>) -> Self {
        Marks {
            pending: report.pending.len(),
            deferred: report.deferred.len(),
            auto_deleted: report.auto_deleted.len(),
            cascaded: report.cascaded.len(),
        }
    }
}

impl<'a, I: Item, F: Fn(&I, &I) -> bool> Sequencer<'a, I, F> {
    /// Ends the run after the outcomes completed so far: the operations that would still have
    /// run, in the order they would have run; nothing more is handed out.
    ///
    /// Shape: call at most once, with no operation running; then only [`Sequencer::finish`].
    /// The rest of the run is worked out as [`plan`](crate::plan) does (every operation
    /// assumed to succeed) on a copy of the current graph, so what the failures block is
    /// blocked as it would have been had the run gone on, and the dependents of a skipped
    /// create are skipped too rather than pending.
    /// Side effects: none on the current graph; [`Sequencer::finish`] then settles it without
    /// what the rest of the run would have changed.
    pub(crate) fn abort(&mut self) -> Vec<PlannedOp<I>> {
        debug_assert!(self.running.is_empty(), "abort called before complete");
        debug_assert!(self.aborted.is_none(), "abort called twice");
        let marks = Marks::of(&self.report);
        let real = match std::mem::replace(&mut self.cur, Current::Copied(Graph::new())) {
            Current::InPlace(graph) => {
                // The slots read so far (`seen`) hold for the copy as well.
                self.cur = Current::Copied(graph.clone());
                Some(graph)
            }
            other => {
                self.cur = other;
                None
            }
        };
        let mut ops = Vec::new();
        while let Some(op) = self.next_op() {
            ops.push(op.clone());
            self.complete(Outcome::Done);
        }
        let mut keep_marked = BTreeSet::new();
        for op in ops.iter().filter(|op| op.op == Operation::Delete) {
            let Some(id) = self.index.get(&op.key) else { continue };
            for edge in &self.cur_deps[id] {
                if self.cur_facts[edge.to].externally_modified {
                    keep_marked.insert(edge.dep.key.clone());
                }
            }
        }
        let skipped = ops.iter().map(|op| op.key.clone()).collect();
        self.aborted = Some(Aborted { real, marks, skipped, keep_marked });
        ops
    }

    /// [`Sequencer::finish`] of an aborted run.
    ///
    /// Shape: the report keeps what the run found before the abort; of what the rest of the
    /// run found it keeps the pending and deferred items that have no skipped operation (they
    /// would not have run either), and drops the removals without an operation (auto-deleted,
    /// cascaded), which are not made: the next run makes them.
    /// Side effects on the caller's graph: pending states of the kept pending items that have
    /// no item, then the settling of [`Sequencer::finish`], which leaves the
    /// `externally_modified` marks a skipped delete was for.
    pub(super) fn finish_aborted(mut self, aborted: Aborted<'a, I>) -> Report<I::Kind> {
        let Aborted { real, marks, skipped, keep_marked } = aborted;
        let report = &mut self.report;
        let removed_later = report.auto_deleted.split_off(marks.auto_deleted);
        let cascaded_later = report.cascaded.split_off(marks.cascaded);
        let dropped: BTreeSet<Key<I::Kind>> = removed_later
            .into_iter()
            .chain(cascaded_later.into_iter().map(|(key, _)| key))
            .collect();
        let left = |key: &Key<I::Kind>| skipped.contains(key) || dropped.contains(key);
        let pending_later = report.pending.split_off(marks.pending);
        report.pending.extend(pending_later.into_iter().filter(|(key, _)| !left(key)));
        let deferred_later = report.deferred.split_off(marks.deferred);
        report.deferred.extend(deferred_later.into_iter().filter(|(key, _)| !left(key)));
        if let Some(graph) = real {
            for (key, reason) in &report.pending[marks.pending..] {
                if !graph.contains(key) {
                    let state = graph.state_mut(key);
                    state.state = ItemStatus::Pending { reason: reason.clone() };
                    state.async_op = None;
                }
            }
            let scope = self.scope.as_ref();
            graph.settle(self.int, |key| scope.is_none_or(|scope| scope.contains(key)));
            for key in &keep_marked {
                if graph.state(key).is_some() {
                    graph.state_mut(key).externally_modified = true;
                }
            }
        }
        self.report
    }
}
