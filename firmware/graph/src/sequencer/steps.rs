//! Executing the run step by step: whether the next stage-1 or stage-2 key yields an operation
//! (or is blocked, deferred, pending), and how an outcome changes the current graph.
//!
//! Blocking rules: an item is deleted only once every item depending on it is gone, except the
//! dependents that go with it (a cascade), whose own dependents must be gone instead; an item
//! that goes with another is removed once that one is gone; a modify waits for dependents it
//! forces out and for failed or in-progress dependencies; a create waits until every dependency
//! exists, is settled (not failed, in progress or deferred in this run) and satisfies its
//! predicate.

use super::actions::detail;
use super::{Action, Edge, Hold, Seen, Sequencer};
use crate::item::{Item, Key};
use crate::plan::{PlannedOp, Reason};
use crate::state::{ItemState, ItemStatus, Operation};

impl<I: Item, F: Fn(&I, &I) -> bool> Sequencer<'_, I, F> {
    pub(super) fn stage1_step(&mut self, id: usize) -> Option<PlannedOp<I>> {
        let action = self.actions[id].clone()?;
        let key = &self.index.keys[id].clone();
        if self.held.contains_key(key) {
            return None;
        }
        if let Action::Cascade { with } = action {
            if self.cur.contains(key) {
                self.cascade_step(key, with);
            }
            return None;
        }
        let current = self.cur.get(key)?.clone();
        match action {
            Action::Delete { reason, auto: true } => {
                self.remove_auto_deleted(key, reason);
                None
            }
            Action::Delete { reason, auto: false } => {
                if let Some(why) = self.delete_blocker(id) {
                    self.defer(key, why);
                    return None;
                }
                let key = key.clone();
                Some(PlannedOp {
                    op: Operation::Delete,
                    key,
                    before: Some(current),
                    after: None,
                    reason,
                })
            }
            Action::Modify => {
                if let Some(why) = self.modify_blocker(id) {
                    self.defer(key, why);
                    return None;
                }
                let intended = self.index.int_items[id]?.clone();
                Some(PlannedOp {
                    op: Operation::Modify,
                    key: key.clone(),
                    before: Some(current),
                    after: Some(intended),
                    reason: Reason::AttributesDiffer,
                })
            }
            Action::Cascade { .. } => None,
        }
    }

    /// The step of `key`, which goes with item `with`: removed if `with` is gone, else kept
    /// and deferred.
    fn cascade_step(&mut self, key: &Key<I::Kind>, with: usize) {
        let with = self.index.keys[with].clone();
        let why = match self.held.get(&with) {
            Some(hold) => format!("goes with {with}, which {hold}"),
            // Ordered after `with`, so only a loop in the current graph gets here.
            None if self.cur.contains(&with) => format!("goes with {with}, which still exists"),
            None => {
                self.remove(key, Reason::NotIntended);
                self.report.cascaded.push((key.clone(), with));
                return;
            }
        };
        self.defer(key, why);
    }

    pub(super) fn stage2_step(&mut self, id: usize) -> Option<PlannedOp<I>> {
        let intended = self.index.int_items[id]?;
        let key = &self.index.keys[id].clone();
        if intended.is_external() || !(self.in_scope(key) || self.restorable.contains(key)) {
            return None;
        }
        let seen = self.seen(id);
        if seen.present {
            if seen.in_progress() == Some(Operation::Delete) {
                let why = "waits for the delete of its previous instance".to_string();
                self.report.pending.push((key.clone(), why));
            }
            return None;
        }
        if self.held.contains_key(key) {
            return None;
        }
        let problem = self.index.int_deps[id].iter().find_map(|edge| self.create_problem(edge));
        if let Some(why) = problem {
            self.set_pending(key, why);
            return None;
        }
        let reason = match self.deleted.get(key) {
            Some(reason) if reason.is_recreate() => reason.clone(),
            _ => Reason::NewItem,
        };
        Some(PlannedOp {
            op: Operation::Create,
            key: key.clone(),
            before: None,
            after: Some(intended.clone()),
            reason,
        })
    }

    pub(super) fn apply_success(&mut self, op: PlannedOp<I>) {
        let key = op.key;
        match op.op {
            Operation::Delete => {
                self.forget(&key);
                self.cur.take_entry(&key);
                self.cur.drop_state(&key);
                if !self.in_scope(&key) {
                    self.restorable.insert(key.clone());
                }
                self.deleted.insert(key, op.reason);
            }
            operation => {
                let after =
                    op.after.expect("invariant: create and modify carry the intended value");
                let id = self.index.get(&key);
                // A create asked about its own slot just before (stage2_step): no search when
                // the key had no state.
                let stateless = id.is_some_and(|id| self.seen(id).state.is_none());
                let mut state = match stateless {
                    true => ItemState::default(),
                    false => self.cur.state(&key).cloned().unwrap_or_default(),
                };
                state.record(operation, Ok(()));
                let subgraph = self.intended_subgraph(&key);
                let seen = Seen::of(true, Some(&state));
                self.cur.store(after, subgraph, state);
                if let Some(id) = id {
                    self.seen[id].set(Some(seen));
                }
            }
        }
    }

    pub(super) fn apply_failure(&mut self, op: PlannedOp<I>, error: String) {
        self.forget(&op.key);
        if let Some(entry) = self.cur.entry_mut(&op.key) {
            entry.next = None;
        }
        self.cur.state_mut(&op.key).record(op.op, Err(error.clone()));
        self.held.insert(op.key, Hold::Failed(error));
    }

    pub(super) fn apply_background(&mut self, op: PlannedOp<I>, id: u64) {
        let key = op.key;
        self.forget(&key);
        let mut state = self.cur.state(&key).cloned().unwrap_or_default();
        state.state = ItemStatus::InProgress { op: op.op };
        state.async_op = Some(id);
        match (op.op, op.after) {
            (Operation::Create, Some(after)) => {
                let subgraph = self.intended_subgraph(&key);
                self.cur.store(after, subgraph, state);
            }
            (Operation::Modify, Some(after)) => {
                if let Some(entry) = self.cur.entry_mut(&key) {
                    entry.next = Some(after);
                }
                self.cur.set_state(key.clone(), state);
            }
            _ => self.cur.set_state(key.clone(), state),
        }
        self.held.insert(key, Hold::InProgress(op.op));
    }

    /// A dependent that still exists (or still refers to item `id`) and so blocks its delete.
    ///
    /// Shape: a dependent that goes with `id` does not block it (it is removed after), unless
    /// it is held; its own dependents do, and so on down.
    fn delete_blocker(&self, id: usize) -> Option<String> {
        self.find_dependent(id, |dependent, required| {
            if !self.goes_with(dependent, required) {
                return self.still_depends(dependent, required);
            }
            let key = &self.index.keys[dependent];
            let hold = self.held.get(key)?;
            Some(format!("dependent {key} {hold}"))
        })
    }

    /// Dependents forced out by the modify that still exist, or an unsettled dependency.
    fn modify_blocker(&self, id: usize) -> Option<String> {
        let forced_out = self.dependents[id].iter().find_map(|&dependent| {
            let removed = self.actions[dependent].as_ref().is_some_and(Action::removes);
            if removed { self.still_depends(dependent, id) } else { None }
        });
        forced_out.or_else(|| {
            self.index.int_deps[id].iter().find_map(|edge| {
                let hold = self.held.get(&edge.dep.key)?;
                Some(format!("dependency {} {hold}", edge.dep.key))
            })
        })
    }

    /// Whether the current value of `dependent` still depends on item `id`, described.
    fn still_depends(&self, dependent: usize, id: usize) -> Option<String> {
        let (dependent, key) = (&self.index.keys[dependent], &self.index.keys[id]);
        let item = self.cur.get(dependent)?;
        if !item.deps().iter().any(|dep| &dep.key == key) {
            return None;
        }
        Some(match self.held.get(dependent) {
            Some(hold) => format!("dependent {dependent} {hold}"),
            None => format!("dependent {dependent} still exists"),
        })
    }

    /// Why `dep` prevents creating its dependent now, if it does.
    fn create_problem(&self, edge: &Edge<I>) -> Option<String> {
        let dep = &edge.dep;
        let unsatisfied =
            |what: String| Some(format!("dependency {} {}", dep.key, detail(&what, dep)));
        if let Some(hold) = self.held.get(&dep.key) {
            return unsatisfied(hold.to_string());
        }
        let seen = self.seen(edge.to);
        if !seen.present {
            return unsatisfied("is missing".to_string());
        }
        if seen.state.is_some_and(|(usable, _)| !usable) {
            return unsatisfied("is not created".to_string());
        }
        let delete_planned = self.actions[edge.to].as_ref().is_some_and(Action::removes);
        if delete_planned && !self.deleted.contains_key(&dep.key) {
            return unsatisfied("is being deleted".to_string());
        }
        // Without a predicate every item satisfies the dependency: no need to look it up.
        let fails = dep.must_satisfy.is_some()
            && self.cur.get(&dep.key).is_none_or(|required| !dep.is_satisfied_by(required));
        if fails {
            return unsatisfied("does not satisfy the requirement".to_string());
        }
        None
    }

    fn remove_auto_deleted(&mut self, key: &Key<I::Kind>, reason: Reason) {
        self.remove(key, reason);
        self.report.auto_deleted.push(key.clone());
    }

    /// Removes `key` from the current graph without an operation, as deleted for `reason`.
    fn remove(&mut self, key: &Key<I::Kind>, reason: Reason) {
        self.forget(key);
        self.cur.take_entry(key);
        self.cur.drop_state(key);
        if !self.in_scope(key) {
            self.restorable.insert(key.clone());
        }
        self.deleted.insert(key.clone(), reason);
    }

    fn defer(&mut self, key: &Key<I::Kind>, why: String) {
        self.held.insert(key.clone(), Hold::Deferred(why.clone()));
        self.report.deferred.push((key.clone(), why));
    }

    fn set_pending(&mut self, key: &Key<I::Kind>, reason: String) {
        self.forget(key);
        let state = self.cur.state_mut(key);
        state.state = ItemStatus::Pending { reason: reason.clone() };
        state.async_op = None;
        self.report.pending.push((key.clone(), reason));
    }
}
