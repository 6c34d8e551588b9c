//! Dense ids for one run: every key the run looks at gets a `usize` once, and the edges of
//! both graphs are resolved to ids, so the hot loops index vectors instead of searching maps
//! keyed by (often long) names and call [`Item::deps`] once per item instead of per question.
//!
//! Ids `0..intended.len()` are the intended items in key order; keys only named by a
//! dependency, and current items that are not intended, come after in discovery order.

use rustc_hash::FxHashMap;

use super::order;
use crate::error::GraphError;
use crate::graph::Graph;
use crate::item::{Dependency, Item, Key};

/// A dependency with the id of the item it requires.
pub(crate) struct Edge<I: Item> {
    pub(crate) to: usize,
    pub(crate) dep: Dependency<I>,
}

/// Keys, ids and intended edges of a run, with the intended graph's topological order.
///
/// Shape: built by [`Index::new`] before anything changes (so a cycle is reported first);
/// the sequencer adds the current graph's keys and edges when the run starts.
pub(crate) struct Index<'a, I: Item> {
    /// Key of each id.
    pub(crate) keys: Vec<Key<I::Kind>>,
    ids: FxHashMap<Key<I::Kind>, usize>,
    /// The intended item of each id, if any.
    pub(crate) int_items: Vec<Option<&'a I>>,
    /// The subgraph of the intended item of each id, if any.
    pub(crate) int_subgraphs: Vec<Option<&'a str>>,
    /// Intended dependencies of each id, in declaration order (empty without an item).
    pub(crate) int_deps: Vec<Vec<Edge<I>>>,
    /// Intended ids, every item after the items it depends on (dependencies first).
    pub(crate) order: Vec<usize>,
}

impl<'a, I: Item> Index<'a, I> {
    /// Indexes `intended` and orders it.
    ///
    /// Shape: roots are taken in key order and dependencies in declaration order, so the order
    /// is deterministic. Dependencies on keys absent from the graph are ignored for ordering.
    /// Errors: [`GraphError::Cycle`] naming the items of the first cycle found.
    pub(crate) fn new(intended: &'a Graph<I>) -> Result<Self, GraphError> {
        let count = intended.len();
        let mut index = Index {
            keys: Vec::with_capacity(count),
            ids: FxHashMap::with_capacity_and_hasher(count, Default::default()),
            int_items: Vec::with_capacity(count),
            int_subgraphs: Vec::with_capacity(count),
            int_deps: Vec::with_capacity(count),
            order: Vec::new(),
        };
        for (key, entry) in intended.entries() {
            index.ids.insert(key.clone(), index.keys.len());
            index.keys.push(key.clone());
            index.int_items.push(Some(&entry.item));
            index.int_subgraphs.push(entry.subgraph.as_deref());
        }
        for item in intended.items() {
            let edges = index.edges(item);
            index.int_deps.push(edges);
        }
        index.grow();
        let deps_of = |&id: &usize| -> Vec<usize> {
            let mut seen: Vec<usize> = Vec::new();
            for edge in &index.int_deps[id] {
                if edge.to < count && !seen.contains(&edge.to) {
                    seen.push(edge.to);
                }
            }
            seen
        };
        let order = order::post_order_ids(count, 0..count, deps_of, true).map_err(|cycle| {
            GraphError::Cycle {
                items: cycle.iter().map(|&id| index.keys[id].to_string()).collect(),
            }
        })?;
        index.order = order;
        Ok(index)
    }

    /// Number of ids.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// The id of `key`, if it has one.
    pub(crate) fn get(&self, key: &Key<I::Kind>) -> Option<usize> {
        self.ids.get(key).copied()
    }

    /// The id of `key`, assigning the next one if it has none yet.
    ///
    /// Shape: per-id vectors are not grown here; call [`Index::grow`] afterwards.
    pub(crate) fn id(&mut self, key: &Key<I::Kind>) -> usize {
        if let Some(&id) = self.ids.get(key) {
            return id;
        }
        let id = self.keys.len();
        self.ids.insert(key.clone(), id);
        self.keys.push(key.clone());
        id
    }

    /// The dependencies of `item`, resolved to ids (assigning ids to new keys).
    pub(crate) fn edges(&mut self, item: &I) -> Vec<Edge<I>> {
        item.deps().iter().map(|dep| Edge { to: self.id(&dep.key), dep: dep.clone() }).collect()
    }

    /// Extends the per-id vectors of the intended graph to every id assigned so far.
    pub(crate) fn grow(&mut self) {
        let len = self.keys.len();
        self.int_items.resize(len, None);
        self.int_subgraphs.resize(len, None);
        self.int_deps.resize_with(len, Vec::new);
    }
}
