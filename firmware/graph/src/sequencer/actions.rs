//! Stage-1 decisions: which existing items are deleted (for good or to be recreated) or
//! modified, and the dependents-first order in which that happens.
//!
//! Decisions are a fixed point: an item's delete forces the delete of every item depending on
//! it, a modify may force the recreate of dependents, and a dependency that goes away makes
//! its dependents pending. An item no longer intended that depends with
//! [`cascade`](crate::Dependency::cascade) on an item deleted for good goes with it instead:
//! after it, with no operation of its own. Pure: only the sequencer's maps are written.

use std::collections::VecDeque;

use super::{Action, Edge, Sequencer, order};
use crate::item::{Dependency, Item};
use crate::plan::Reason;
use crate::state::Operation;

impl<I: Item, F: Fn(&I, &I) -> bool> Sequencer<'_, I, F> {
    /// Decides the stage-1 action of every item of the current graph.
    ///
    /// Shape: actions only escalate (none < modify < delete < cascade), so the worklist
    /// terminates after each item escalated at most three times.
    pub(super) fn compute_actions(&mut self) {
        let mut queue: VecDeque<usize> = self.cur_ids.iter().copied().collect();
        let mut queued = vec![false; self.index.len()];
        for &id in &queue {
            queued[id] = true;
        }
        while let Some(id) = queue.pop_front() {
            queued[id] = false;
            let Some(action) = self.evaluate(id) else { continue };
            if self.actions[id].as_ref().is_some_and(|old| old.rank() >= action.rank()) {
                continue;
            }
            self.actions[id] = Some(action);
            for &dependent in self.dependents[id].iter().chain(&self.int_dependents[id]) {
                if !queued[dependent] {
                    queued[dependent] = true;
                    queue.push_back(dependent);
                }
            }
        }
    }

    /// Stage-1 ids, each after the ids that must be handled before it: dependents being
    /// deleted come before the item they depend on; a modified dependency before its modified
    /// dependents. A dependent that goes with an item (a cascade) comes after it instead, and
    /// its own dependents being deleted before it.
    pub(super) fn stage1_order(&self) -> Vec<usize> {
        let is_modify = |id: usize| matches!(self.actions[id], Some(Action::Modify));
        let before = |&id: &usize| -> Vec<usize> {
            let mut first = Vec::new();
            if let Some(Action::Cascade { with }) = self.actions[id] {
                first.push(with);
            }
            self.find_dependent(id, |dependent, required| {
                let removed = self.actions[dependent].as_ref().is_some_and(Action::removes);
                if removed && !self.goes_with(dependent, required) {
                    first.push(dependent);
                }
                None::<()>
            });
            if is_modify(id) {
                let deps = self.index.int_deps[id].iter().map(|edge| edge.to);
                first.extend(deps.filter(|&dep| is_modify(dep)));
            }
            first
        };
        let mut roots: Vec<usize> =
            (0..self.actions.len()).filter(|&id| self.actions[id].is_some()).collect();
        roots.sort_by(|&a, &b| self.index.keys[a].cmp(&self.index.keys[b]));
        order::post_order(roots, before, false)
            .expect("invariant: post_order without cycle detection never fails")
    }

    fn evaluate(&self, id: usize) -> Option<Action> {
        let key = &self.index.keys[id];
        let fact = &self.cur_facts[id];
        if !fact.present || fact.external || fact.running.is_some() {
            return None;
        }
        if let Some(with) = self.goes_with_deleted(id) {
            return Some(Action::Cascade { with });
        }
        if let Some(reason) = self.cascade_reason(id) {
            return Some(self.delete(id, reason));
        }
        if !self.in_scope(key) {
            return None;
        }
        let Some(intended) = self.index.int_items[id] else {
            return Some(self.delete(id, Reason::NotIntended));
        };
        if intended.is_external() {
            return None;
        }
        if let Some(reason) =
            self.index.int_deps[id].iter().find_map(|edge| self.keep_problem(edge))
        {
            return Some(self.delete(id, reason));
        }
        let current = self.cur.get(key)?;
        if intended.matches(current) {
            None
        } else if (self.needs_recreate)(current, intended) {
            Some(self.delete(id, Reason::NeedsRecreate))
        } else {
            Some(Action::Modify)
        }
    }

    /// The item that the current item `id` goes with, if it goes with one: `id` is not
    /// intended, and one of its current dependencies declared `cascade` is deleted for good
    /// (not to be recreated) or goes with another item, through no loop back to `id`. The
    /// first such dependency in declaration order; `None` as well when `id` already vanished
    /// with an external dependency (`auto_deleted_by_external`: removed at once instead).
    fn goes_with_deleted(&self, id: usize) -> Option<usize> {
        if self.index.int_items[id].is_some() {
            return None;
        }
        let with = self.cur_deps[id].iter().filter(|edge| edge.dep.cascade).find_map(|edge| {
            let gone = match &self.actions[edge.to] {
                Some(Action::Delete { reason, .. }) => !reason.is_recreate(),
                Some(Action::Cascade { .. }) => !self.cascades_into(edge.to, id),
                Some(Action::Modify) | None => false,
            };
            gone.then_some(edge.to)
        })?;
        (!self.auto_deleted(id)).then_some(with)
    }

    /// Whether following the `with` links from `from` reaches `id`.
    ///
    /// Shape: the links form a forest, so the walk ends; it is bounded by the number of ids
    /// all the same.
    fn cascades_into(&self, from: usize, id: usize) -> bool {
        let mut at = from;
        for _ in 0..self.actions.len() {
            if at == id {
                return true;
            }
            match self.actions[at] {
                Some(Action::Cascade { with }) => at = with,
                _ => return false,
            }
        }
        true
    }

    /// The delete of the current item `id`.
    fn delete(&self, id: usize, reason: Reason) -> Action {
        Action::Delete { reason, auto: self.auto_deleted(id) }
    }

    /// Why the existing item `id` must go because of what happens to the items its current
    /// value depends on: one is deleted, or modified in a way the item cannot survive.
    fn cascade_reason(&self, id: usize) -> Option<Reason> {
        self.cur_deps[id].iter().find_map(|edge| {
            let dep = &edge.dep;
            let dependency = || dep.key.to_string();
            match &self.actions[edge.to] {
                Some(Action::Delete { reason, .. }) => Some(self.deleted_dependency(dep, reason)),
                Some(Action::Cascade { .. }) => {
                    Some(self.deleted_dependency(dep, &Reason::NotIntended))
                }
                Some(Action::Modify) if dep.recreate_when_modified => {
                    Some(Reason::DependencyModified { dependency: dependency() })
                }
                Some(Action::Modify) => {
                    let new = self.index.int_items[edge.to]?;
                    (!dep.is_satisfied_by(new)).then(|| Reason::DependencyUnsatisfied {
                        dependency: dependency(),
                        detail: detail("no longer satisfies the requirement once modified", dep),
                    })
                }
                None => {
                    let modified = self.cur_facts[edge.to].externally_modified;
                    (dep.recreate_when_modified && modified && self.was_external(edge.to))
                        .then(|| Reason::DependencyModified { dependency: dependency() })
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
    fn keep_problem(&self, edge: &Edge<I>) -> Option<Reason> {
        let dep = &edge.dep;
        let unsatisfied = |what: &str| {
            Some(Reason::DependencyUnsatisfied {
                dependency: dep.key.to_string(),
                detail: detail(what, dep),
            })
        };
        let fact = &self.cur_facts[edge.to];
        if !fact.present {
            return unsatisfied("is missing");
        }
        if fact.running.is_some_and(|op| op != Operation::Modify) {
            return unsatisfied("has a create or delete in progress");
        }
        match &self.actions[edge.to] {
            Some(Action::Delete { reason, .. }) => {
                return Some(self.deleted_dependency(dep, reason));
            }
            Some(Action::Cascade { .. }) => {
                return Some(self.deleted_dependency(dep, &Reason::NotIntended));
            }
            Some(Action::Modify)
                if self.index.int_items[edge.to].is_some_and(|new| !dep.is_satisfied_by(new)) =>
            {
                return unsatisfied("does not satisfy the requirement once modified");
            }
            Some(Action::Modify) | None => {}
        }
        // Without a predicate every item satisfies the dependency: no need to look it up.
        let entry = dep.must_satisfy.as_ref().and_then(|_| self.cur.entry(&dep.key));
        let fails = entry.is_some_and(|entry| {
            let next_fails = entry.next.as_ref().is_some_and(|next| !dep.is_satisfied_by(next));
            !dep.is_satisfied_by(&entry.item) || next_fails
        });
        if fails {
            return unsatisfied("does not satisfy the requirement");
        }
        None
    }

    /// Whether `id` was external at start of run (the current item, else the intended one).
    fn was_external(&self, id: usize) -> bool {
        let fact = &self.cur_facts[id];
        if fact.present {
            fact.external
        } else {
            self.index.int_items[id].is_some_and(Item::is_external)
        }
    }

    /// Whether the current item `id` already vanished with an external dependency declared
    /// `auto_deleted_by_external` (missing, or no longer satisfying its predicate).
    fn auto_deleted(&self, id: usize) -> bool {
        self.cur_deps[id].iter().any(|edge| {
            let dep = &edge.dep;
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
