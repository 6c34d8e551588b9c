//! The pure half of reconciliation: which operations would run, in which order, and why.
//!
//! [`plan`] drives the same ordering core as [`Reconciler::reconcile`](crate::Reconciler), with
//! every operation assumed to succeed synchronously. It reads no clock, calls no configurator
//! and leaves both graphs untouched.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::GraphError;
use crate::graph::Graph;
use crate::item::{Item, Key};
use crate::sequencer::{Current, Index, Outcome, Sequencer};
use crate::state::{Operation, Selection};

/// Why an operation is planned. Codes ([`Reason::as_str`]) are stable; `Display` adds detail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code")]
pub enum Reason {
    /// Create: the item is intended and does not exist.
    NewItem,
    /// Modify: the current item does not match the intended one.
    AttributesDiffer,
    /// Delete + create: the item differs and its configurator cannot modify it in place.
    NeedsRecreate,
    /// Delete: the item is no longer intended.
    NotIntended,
    /// Delete: a dependency is missing, being deleted or no longer satisfies its predicate; the
    /// item becomes pending.
    DependencyUnsatisfied {
        /// The dependency's key, as displayed.
        dependency: String,
        /// What is wrong with it.
        detail: String,
    },
    /// Delete + create: a dependency is being deleted and created again.
    DependencyRecreated {
        /// The dependency's key, as displayed.
        dependency: String,
    },
    /// Delete + create: a dependency declared `recreate_when_modified` is modified.
    DependencyModified {
        /// The dependency's key, as displayed.
        dependency: String,
    },
}

impl Reason {
    /// Stable code of the reason (`NewItem`, `DependencyRecreated`, …).
    pub fn as_str(&self) -> &'static str {
        match self {
            Reason::NewItem => "NewItem",
            Reason::AttributesDiffer => "AttributesDiffer",
            Reason::NeedsRecreate => "NeedsRecreate",
            Reason::NotIntended => "NotIntended",
            Reason::DependencyUnsatisfied { .. } => "DependencyUnsatisfied",
            Reason::DependencyRecreated { .. } => "DependencyRecreated",
            Reason::DependencyModified { .. } => "DependencyModified",
        }
    }

    /// Whether the item deleted for this reason is created again once it can be.
    pub fn is_recreate(&self) -> bool {
        matches!(
            self,
            Reason::NeedsRecreate
                | Reason::DependencyRecreated { .. }
                | Reason::DependencyModified { .. }
        )
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::NewItem => f.write_str("new item"),
            Reason::AttributesDiffer => f.write_str("attributes differ"),
            Reason::NeedsRecreate => f.write_str("attributes differ and need a recreate"),
            Reason::NotIntended => f.write_str("not intended"),
            Reason::DependencyUnsatisfied { dependency, detail } => {
                write!(f, "dependency {dependency} {detail}")
            }
            Reason::DependencyRecreated { dependency } => {
                write!(f, "dependency {dependency} is recreated")
            }
            Reason::DependencyModified { dependency } => {
                write!(f, "dependency {dependency} is modified (recreate when modified)")
            }
        }
    }
}

/// An item removed from the current state without a Delete, with the item it went with (its
/// dependency declared [`cascade`](crate::Dependency::cascade)): `(item, went with)`.
pub type Cascaded<K> = (Key<K>, Key<K>);

/// One operation of a plan.
///
/// Shape: `before` is set for Modify and Delete, `after` for Create and Modify. `op` is never
/// [`Operation::Recreate`]: a recreate is a Delete and, later, a Create of the same key.
#[derive(Clone, Debug, Serialize)]
#[serde(bound(serialize = "I: Serialize, I::Kind: Serialize"))]
pub struct PlannedOp<I: Item> {
    /// What runs: Create, Modify or Delete.
    pub op: Operation,
    /// The item operated on.
    pub key: Key<I::Kind>,
    /// The current value (Modify, Delete).
    pub before: Option<I>,
    /// The intended value (Create, Modify).
    pub after: Option<I>,
    /// Why the operation is needed.
    pub reason: Reason,
}

/// The ordered operations that move the current state to the intended state.
///
/// Shape: `ops` in execution order: first all deletes and modifies with dependents before their
/// dependencies, then all creates with dependencies before their dependents.
#[derive(Clone, Debug, Serialize)]
#[serde(bound(serialize = "I: Serialize, I::Kind: Serialize"))]
pub struct Plan<I: Item> {
    /// Operations in execution order.
    pub ops: Vec<PlannedOp<I>>,
    /// Intended items that would not be created, with the unsatisfied dependency described.
    pub pending: Vec<(Key<I::Kind>, String)>,
    /// Deletes and modifies that wait for another operation (one in progress, or failed).
    pub deferred: Vec<(Key<I::Kind>, String)>,
    /// Items removed from the current state without a Delete, because an external dependency
    /// declared `auto_deleted_by_external` disappeared.
    pub auto_deleted: Vec<Key<I::Kind>>,
    /// Items removed from the current state without a Delete, with the item they went with
    /// (a dependency declared [`cascade`](crate::Dependency::cascade), deleted for good), as
    /// `(item, went with)`, in execution order; the item they went with has its Delete in
    /// `ops` (or went itself with another item, listed before).
    pub cascaded: Vec<Cascaded<I::Kind>>,
}

impl<I: Item> Plan<I> {
    /// Whether the plan executes nothing.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The operations as `(operation, key)` pairs, in order; comparable with an operation log.
    pub fn steps(&self) -> Vec<(Operation, Key<I::Kind>)> {
        self.ops.iter().map(|op| (op.op, op.key.clone())).collect()
    }

    /// One operation per key: a Delete followed by a Create of the same key is a Recreate; an
    /// item that goes with another ([`Plan::cascaded`]) counts as deleted, though no operation
    /// of its own runs (a drawing shows it going).
    pub fn summary(&self) -> BTreeMap<Key<I::Kind>, Operation> {
        let mut summary: BTreeMap<Key<I::Kind>, Operation> =
            self.cascaded.iter().map(|(key, _)| (key.clone(), Operation::Delete)).collect();
        for op in &self.ops {
            summary
                .entry(op.key.clone())
                .and_modify(|seen| {
                    if *seen == Operation::Delete && op.op == Operation::Create {
                        *seen = Operation::Recreate;
                    }
                })
                .or_insert(op.op);
        }
        summary
    }
}

impl<I: Item> fmt::Display for Plan<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, op) in self.ops.iter().enumerate() {
            writeln!(f, "{:>3}. {} {} ({})", index + 1, op.op, op.key, op.reason)?;
        }
        for (key, reason) in &self.pending {
            writeln!(f, "     pending {key}: {reason}")?;
        }
        for (key, reason) in &self.deferred {
            writeln!(f, "     deferred {key}: {reason}")?;
        }
        for key in &self.auto_deleted {
            writeln!(f, "     auto-deleted {key}")?;
        }
        for (key, with) in &self.cascaded {
            writeln!(f, "     cascaded {key} with {with}")?;
        }
        Ok(())
    }
}

/// Computes the operations that move `current` to `intended`.
///
/// Shape: the operations [`Reconciler::reconcile`](crate::Reconciler::reconcile) would execute,
/// in the same order, if every operation succeeded synchronously. Items with a background
/// operation in progress are treated as still in progress (results not yet read by a reconcile
/// are not looked at).
/// Errors: [`GraphError::Cycle`] naming the items of a dependency cycle in `intended`.
/// Side effects: none; `needs_recreate(current, intended)` is called for items that differ.
pub fn plan<I: Item>(
    current: &Graph<I>,
    intended: &Graph<I>,
    needs_recreate: &dyn Fn(&I, &I) -> bool,
    selection: Selection,
) -> Result<Plan<I>, GraphError> {
    let index = Index::new(intended)?;
    // A converged host (the daemon's periodic resync, a reconcile's verification) needs no
    // operation: skip the sequencer, which would walk every item and edge to find nothing.
    if current.is_converged_to(intended, &index) {
        return Ok(Plan {
            ops: Vec::new(),
            pending: Vec::new(),
            deferred: Vec::new(),
            auto_deleted: Vec::new(),
            cascaded: Vec::new(),
        });
    }
    engine_plan(current, intended, needs_recreate, &selection, index)
}

/// The sequencer's plan, without the converged shortcut.
fn engine_plan<'a, I: Item>(
    current: &'a Graph<I>,
    intended: &'a Graph<I>,
    needs_recreate: &dyn Fn(&I, &I) -> bool,
    selection: &Selection,
    index: Index<'a, I>,
) -> Result<Plan<I>, GraphError> {
    let current = Current::Shared(current);
    let mut seq =
        Sequencer::new(current, intended, needs_recreate, selection, index, BTreeMap::new());
    let mut ops = Vec::new();
    while let Some(op) = seq.next_op() {
        ops.push(op);
        seq.complete(Outcome::Done);
    }
    // The plan lives through the apply; without its growth slack (up to half the list).
    ops.shrink_to_fit();
    let report = seq.finish();
    Ok(Plan {
        ops,
        pending: report.pending,
        deferred: report.deferred,
        auto_deleted: report.auto_deleted,
        cascaded: report.cascaded,
    })
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::*;
    use crate::item::Dependency;

    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    struct K;

    impl fmt::Display for K {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("k")
        }
    }

    #[derive(Clone, Debug)]
    struct Node {
        name: String,
        value: u8,
        external: bool,
        deps: Vec<Dependency<Node>>,
    }

    impl Item for Node {
        type Kind = K;

        fn key(&self) -> Key<K> {
            Key::new(K, self.name.as_str())
        }

        fn deps(&self) -> &[Dependency<Self>] {
            &self.deps
        }

        fn is_external(&self) -> bool {
            self.external
        }

        fn matches(&self, current: &Self) -> bool {
            self.value == current.value
        }
    }

    /// A small deterministic generator (the test must not depend on a seed of the day).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }

    /// The shortcut never hides an operation: whenever it calls a pair of graphs converged,
    /// the sequencer, run on the same pair, finds nothing to do either. Random graphs with
    /// dependencies (also on missing keys, and with predicates), external items and every kind
    /// of difference; both outcomes must occur often, or the test proves nothing.
    #[test]
    fn converged_shortcut_agrees_with_the_engine() {
        let mut rng = Lcg(7);
        let (mut converged, mut differing) = (0, 0);
        for _ in 0..3000 {
            let n = 1 + rng.below(8) as usize;
            let mut intended = Graph::new();
            let mut nodes = Vec::new();
            for i in 0..n {
                let mut deps = Vec::new();
                for _ in 0..rng.below(3) {
                    // Dependencies on earlier items (acyclic) or on a key never declared.
                    let target = if i > 0 && rng.below(6) > 0 {
                        format!("n{}", rng.below(i as u64))
                    } else {
                        "missing".to_string()
                    };
                    let mut dep = Dependency::on(Key::new(K, target.as_str()), "needs");
                    if rng.below(5) == 0 {
                        dep = dep.must_satisfy(|n: &Node| n.value.is_multiple_of(2));
                    }
                    deps.push(dep);
                }
                let node = Node {
                    name: format!("n{i}"),
                    value: rng.below(2) as u8 * 2,
                    external: rng.below(6) == 0,
                    deps,
                };
                nodes.push(node.clone());
                intended.put(node);
            }
            let mut current = Graph::new();
            for node in &nodes {
                let mut node = node.clone();
                match rng.below(30) {
                    0 => continue,
                    1 => node.value += 1,
                    2 => node.external = !node.external,
                    _ => {}
                }
                current.put(node);
            }
            if rng.below(10) == 0 {
                current.put(Node { name: "extra".into(), value: 0, external: false, deps: vec![] });
            }
            let index = Index::new(&intended).expect("acyclic by construction");
            let shortcut = current.is_converged_to(&intended, &index);
            let never = |_: &Node, _: &Node| false;
            let plan =
                engine_plan(&current, &intended, &never, &Selection::All, index).expect("acyclic");
            if shortcut {
                converged += 1;
                assert!(plan.ops.is_empty(), "shortcut would hide {plan}");
                assert!(plan.pending.is_empty() && plan.deferred.is_empty());
                assert!(plan.auto_deleted.is_empty() && plan.cascaded.is_empty());
            } else {
                differing += 1;
            }
        }
        assert!(converged > 300 && differing > 300, "{converged} converged, {differing} not");
    }
}
