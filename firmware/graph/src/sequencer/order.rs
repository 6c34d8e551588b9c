//! Ordering: an iterative depth-first post-order shared by both stages (the intended graph's
//! topological order with cycle detection, and the stage-1 order).
//!
//! A pure function over nodes (the sequencer passes dense ids); it reads no other state.

use std::collections::BTreeSet;

/// Depth-first post-order from `roots` (in the order given), where `before(n)` lists the nodes
/// that must be emitted before `n`.
///
/// Shape: every node reachable from a root appears once, after all nodes it reaches.
/// Errors: with `detect_cycles`, the first cycle found as a path `a, b, …, a`; without it,
/// edges closing a cycle are ignored.
pub(crate) fn post_order<N: Ord + Clone>(
    roots: impl IntoIterator<Item = N>,
    before: impl FnMut(&N) -> Vec<N>,
    detect_cycles: bool,
) -> Result<Vec<N>, Vec<N>> {
    post_order_in::<N, BTreeSet<N>>(roots, before, detect_cycles, BTreeSet::new)
}

/// [`post_order`] over dense ids `0..count`, with vectors for the visit marks.
pub(crate) fn post_order_ids(
    count: usize,
    roots: impl IntoIterator<Item = usize>,
    before: impl FnMut(&usize) -> Vec<usize>,
    detect_cycles: bool,
) -> Result<Vec<usize>, Vec<usize>> {
    post_order_in(roots, before, detect_cycles, || vec![false; count])
}

/// A set of nodes, for the visit marks of [`post_order_in`].
pub(crate) trait NodeSet<N> {
    fn contains(&self, node: &N) -> bool;
    fn insert(&mut self, node: N);
    fn remove(&mut self, node: &N);
}

impl<N: Ord> NodeSet<N> for BTreeSet<N> {
    fn contains(&self, node: &N) -> bool {
        BTreeSet::contains(self, node)
    }

    fn insert(&mut self, node: N) {
        BTreeSet::insert(self, node);
    }

    fn remove(&mut self, node: &N) {
        BTreeSet::remove(self, node);
    }
}

/// Dense ids: `set[id]` tells whether `id` is in the set.
impl NodeSet<usize> for Vec<bool> {
    fn contains(&self, node: &usize) -> bool {
        self[*node]
    }

    fn insert(&mut self, node: usize) {
        self[node] = true;
    }

    fn remove(&mut self, node: &usize) {
        self[*node] = false;
    }
}

fn post_order_in<N: Ord + Clone, S: NodeSet<N>>(
    roots: impl IntoIterator<Item = N>,
    mut before: impl FnMut(&N) -> Vec<N>,
    detect_cycles: bool,
    empty: impl Fn() -> S,
) -> Result<Vec<N>, Vec<N>> {
    let mut done = empty();
    let mut on_path = empty();
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
