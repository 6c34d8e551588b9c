//! Stage-1 decisions: which existing items are deleted (for good or to be recreated) or
//! modified, and the dependents-first order in which that happens.
//!
//! Decisions are a fixed point: an item's delete forces the delete of every item depending on
//! it, a modify may force the recreate of dependents, and a dependency that goes away makes
//! its dependents pending. Pure: only the engine's maps are written.

use std::collections::{BTreeSet, VecDeque};

use super::{Action, Engine, order};
use crate::item::{Dependency, Item, Key};
use crate::plan::Reason;
use crate::state::{ItemState, Operation};

impl<I: Item, F: Fn(&I, &I) -> bool> Engine<'_, I, F> {
    /// Decides the stage-1 action of every item of the current graph.
    ///
    /// Shape: actions only escalate (none < modify < delete), so the worklist terminates after
    /// each item escalated at most twice.
    pub(super) fn compute_actions(&mut self) {
        let mut queue: VecDeque<Key<I::Kind>> = self.cur.keys().cloned().collect();
        let mut queued: BTreeSet<Key<I::Kind>> = queue.iter().cloned().collect();
        while let Some(key) = queue.pop_front() {
            queued.remove(&key);
            let Some(action) = self.evaluate(&key) else { continue };
            if self.actions.get(&key).is_some_and(|old| old.rank() >= action.rank()) {
                continue;
            }
            self.actions.insert(key.clone(), action);
            let current = self.dependents.get(&key).into_iter().flatten();
            let intended = self.int_dependents.get(&key).into_iter().flatten();
            for dependent in current.chain(intended) {
                if queued.insert(dependent.clone()) {
                    queue.push_back(dependent.clone());
                }
            }
        }
    }

    /// Stage-1 keys, each after the keys that must be handled before it: dependents being
    /// deleted come before the item they depend on; a modified dependency before its modified
    /// dependents.
    pub(super) fn stage1_order(&self) -> Vec<Key<I::Kind>> {
        let before = |key: &Key<I::Kind>| -> Vec<Key<I::Kind>> {
            let deleted_dependents = self
                .dependents
                .get(key)
                .into_iter()
                .flatten()
                .filter(|dep| matches!(self.actions.get(*dep), Some(Action::Delete { .. })))
                .cloned();
            let mut first: Vec<Key<I::Kind>> = deleted_dependents.collect();
            if matches!(self.actions.get(key), Some(Action::Modify)) {
                let deps = self.int.get(key).map(Item::deps).unwrap_or_default();
                first.extend(
                    deps.into_iter()
                        .map(|dep| dep.key)
                        .filter(|dep| matches!(self.actions.get(dep), Some(Action::Modify))),
                );
            }
            first
        };
        order::post_order(self.actions.keys().cloned(), before, false)
            .expect("invariant: post_order without cycle detection never fails")
    }

    fn evaluate(&self, key: &Key<I::Kind>) -> Option<Action> {
        let entry = self.cur.entry(key)?;
        let in_progress = self.cur.state(key).is_some_and(|state| state.in_progress().is_some());
        if entry.item.is_external() || in_progress {
            return None;
        }
        if let Some(reason) = self.cascade_reason(&entry.item) {
            return Some(self.delete(&entry.item, reason));
        }
        if !self.in_scope(key) {
            return None;
        }
        let Some(intended) = self.int.get(key) else {
            return Some(self.delete(&entry.item, Reason::NotIntended));
        };
        if intended.is_external() {
            return None;
        }
        if let Some(reason) = intended.deps().iter().find_map(|dep| self.keep_problem(dep)) {
            return Some(self.delete(&entry.item, reason));
        }
        if intended.matches(&entry.item) {
            None
        } else if (self.needs_recreate)(&entry.item, intended) {
            Some(self.delete(&entry.item, Reason::NeedsRecreate))
        } else {
            Some(Action::Modify)
        }
    }

    fn delete(&self, current: &I, reason: Reason) -> Action {
        Action::Delete { reason, auto: self.auto_deleted(current) }
    }

    /// Why an existing item must go because of what happens to the items its current value
    /// depends on: one is deleted, or modified in a way the item cannot survive.
    fn cascade_reason(&self, current: &I) -> Option<Reason> {
        current.deps().iter().find_map(|dep| {
            let dependency = dep.key.to_string();
            match self.actions.get(&dep.key) {
                Some(Action::Delete { reason, .. }) => Some(self.deleted_dependency(dep, reason)),
                Some(Action::Modify) if dep.recreate_when_modified => {
                    Some(Reason::DependencyModified { dependency })
                }
                Some(Action::Modify) => {
                    let new = self.int.get(&dep.key)?;
                    (!dep.is_satisfied_by(new)).then(|| Reason::DependencyUnsatisfied {
                        dependency,
                        detail: detail("no longer satisfies the requirement once modified", dep),
                    })
                }
                None => {
                    let modified = self.cur.state(&dep.key).is_some_and(|s| s.externally_modified);
                    (dep.recreate_when_modified && modified && self.is_external(&dep.key))
                        .then_some(Reason::DependencyModified { dependency })
                }
            }
        })
    }

    fn deleted_dependency(&self, dep: &Dependency<I>, reason: &Reason) -> Reason {
        if reason.is_recreate() {
            Reason::DependencyRecreated { dependency: dep.key.to_string() }
        } else {
            Reason::DependencyUnsatisfied {
                dependency: dep.key.to_string(),
                detail: detail("is being deleted", dep),
            }
        }
    }

    /// Why an existing item cannot stay given one of its intended dependencies, if it cannot.
    fn keep_problem(&self, dep: &Dependency<I>) -> Option<Reason> {
        let unsatisfied = |what: &str| {
            Some(Reason::DependencyUnsatisfied {
                dependency: dep.key.to_string(),
                detail: detail(what, dep),
            })
        };
        let Some(entry) = self.cur.entry(&dep.key) else {
            return unsatisfied("is missing");
        };
        let running = self.cur.state(&dep.key).and_then(ItemState::in_progress);
        if running.is_some_and(|op| op != Operation::Modify) {
            return unsatisfied("has a create or delete in progress");
        }
        match self.actions.get(&dep.key) {
            Some(Action::Delete { reason, .. }) => {
                return Some(self.deleted_dependency(dep, reason));
            }
            Some(Action::Modify)
                if self.int.get(&dep.key).is_some_and(|new| !dep.is_satisfied_by(new)) =>
            {
                return unsatisfied("does not satisfy the requirement once modified");
            }
            Some(Action::Modify) | None => {}
        }
        let next_fails = entry.next.as_ref().is_some_and(|next| !dep.is_satisfied_by(next));
        if !dep.is_satisfied_by(&entry.item) || next_fails {
            return unsatisfied("does not satisfy the requirement");
        }
        None
    }

    /// Whether `current` already vanished with an external dependency declared
    /// `auto_deleted_by_external` (missing, or no longer satisfying its predicate).
    fn auto_deleted(&self, current: &I) -> bool {
        current.deps().iter().any(|dep| {
            dep.auto_deleted_by_external
                && self.is_external(&dep.key)
                && self.cur.get(&dep.key).is_none_or(|external| !dep.is_satisfied_by(external))
        })
    }
}

/// `what`, followed by the dependency's description in parentheses when it has one.
pub(super) fn detail<I: Item>(what: &str, dep: &Dependency<I>) -> String {
    if dep.description.is_empty() {
        what.to_string()
    } else {
        format!("{what} ({})", dep.description)
    }
}
