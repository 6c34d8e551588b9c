//! Orderings: an iterative depth-first post-order shared by both stages, and the topological
//! order of the intended graph with cycle detection.
//!
//! Pure functions over keys; no state is read besides the graph passed in.

use std::collections::BTreeSet;

use crate::error::GraphError;
use crate::graph::Graph;
use crate::item::{Item, Key};

/// Depth-first post-order from `roots` (in the order given), where `before(n)` lists the nodes
/// that must be emitted before `n`.
///
/// Shape: every node reachable from a root appears once, after all nodes it reaches.
/// Errors: with `detect_cycles`, the first cycle found as a path `a, b, …, a`; without it,
/// edges closing a cycle are ignored.
pub(crate) fn post_order<N: Ord + Clone>(
    roots: impl IntoIterator<Item = N>,
    mut before: impl FnMut(&N) -> Vec<N>,
    detect_cycles: bool,
) -> Result<Vec<N>, Vec<N>> {
    let mut done = BTreeSet::new();
    let mut on_path = BTreeSet::new();
    let mut out = Vec::new();
    for root in roots {
        if done.contains(&root) {
            continue;
        }
        let first = before(&root);
        on_path.insert(root.clone());
        let mut stack = vec![(root, first, 0usize)];
        while let Some((node, children, next)) = stack.last_mut() {
            let Some(child) = children.get(*next).cloned() else {
                let node = node.clone();
                stack.pop();
                on_path.remove(&node);
                done.insert(node.clone());
                out.push(node);
                continue;
            };
            *next += 1;
            if done.contains(&child) {
                continue;
            }
            if on_path.contains(&child) {
                if detect_cycles {
                    return Err(cycle_path(&stack, child));
                }
                continue;
            }
            let grandchildren = before(&child);
            on_path.insert(child.clone());
            stack.push((child, grandchildren, 0));
        }
    }
    Ok(out)
}

fn cycle_path<N: Ord + Clone>(stack: &[(N, Vec<N>, usize)], closing: N) -> Vec<N> {
    let start = stack.iter().position(|(node, _, _)| *node == closing).unwrap_or(0);
    let mut path: Vec<N> = stack[start..].iter().map(|(node, _, _)| node.clone()).collect();
    path.push(closing);
    path
}

/// Keys of `intended` with every item after the items it depends on (dependencies first).
///
/// Shape: roots are taken in key order and dependencies in declaration order, so the result is
/// deterministic. Dependencies on keys absent from the graph are ignored here.
/// Errors: [`GraphError::Cycle`] naming the items of the first cycle found.
pub(crate) fn intended_order<I: Item>(
    intended: &Graph<I>,
) -> Result<Vec<Key<I::Kind>>, GraphError> {
    let deps_of = |key: &Key<I::Kind>| -> Vec<Key<I::Kind>> {
        let Some(item) = intended.get(key) else { return Vec::new() };
        let mut seen = BTreeSet::new();
        item.deps()
            .into_iter()
            .map(|dep| dep.key)
            .filter(|dep| intended.contains(dep) && seen.insert(dep.clone()))
            .collect()
    };
    post_order(intended.keys().cloned(), deps_of, true).map_err(|cycle| GraphError::Cycle {
        items: cycle.iter().map(ToString::to_string).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::post_order;

    fn edges(node: &u32) -> Vec<u32> {
        match node {
            1 => vec![2, 3],
            2 => vec![3],
            _ => vec![],
        }
    }

    #[test]
    fn post_order_emits_successors_first() {
        assert_eq!(post_order([1, 2, 3], edges, true), Ok(vec![3, 2, 1]));
    }

    #[test]
    fn post_order_reports_the_cycle_path() {
        let looped = |node: &u32| match node {
            1 => vec![2],
            2 => vec![3],
            3 => vec![1],
            _ => vec![],
        };
        assert_eq!(post_order([1], looped, true), Err(vec![1, 2, 3, 1]));
    }

    #[test]
    fn post_order_ignores_cycles_when_not_detecting() {
        let looped = |node: &u32| if *node == 1 { vec![2] } else { vec![1] };
        assert_eq!(post_order([1], looped, false), Ok(vec![2, 1]));
    }
}
