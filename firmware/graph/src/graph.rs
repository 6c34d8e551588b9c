//! The dependency graph: items by key, each optionally in a named subgraph, plus the
//! reconciliation state of each key when the graph models the current state.
//!
//! Edges are not stored: they are each item's [`Item::deps`]. The graph does no I/O; the
//! background-operation tracker it carries is only read and written by the reconciler.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use crate::background::Tracker;
use crate::item::{Item, Key};
use crate::state::{ItemState, Selection};

/// One item with its subgraph and, while a Modify runs in the background, its next value.
#[derive(Clone, Debug)]
pub(crate) struct Entry<I> {
    pub(crate) item: I,
    pub(crate) subgraph: Option<String>,
    pub(crate) next: Option<I>,
}

/// A set of items keyed by [`Key`], used for both the intended and the current state.
///
/// Shape: at most one item per key; iteration is in key order. In the current-state graph each
/// key may also carry an [`ItemState`], even without an item (pending or failed creates).
/// Clones share the tracker of background operations started from the original.
pub struct Graph<I: Item> {
    entries: BTreeMap<Key<I::Kind>, Entry<I>>,
    states: BTreeMap<Key<I::Kind>, ItemState>,
    tracker: Arc<Tracker>,
}

impl<I: Item> Graph<I> {
    /// An empty graph.
    pub fn new() -> Self {
        Self {
            entries: BTreeMap::new(),
            states: BTreeMap::new(),
            tracker: Arc::new(Tracker::new()),
        }
    }

    /// Inserts or replaces `item` outside any subgraph; returns the previous value.
    ///
    /// Side effects: the key's state becomes [`ItemState::created`] (the caller asserts the item
    /// exists as given), except that a background operation in progress keeps its state. When
    /// an external item changes value, its state is marked `externally_modified`.
    pub fn put(&mut self, item: I) -> Option<I> {
        self.insert(None, item)
    }

    /// Like [`Graph::put`], placing the item in the subgraph named `subgraph`.
    pub fn put_in(&mut self, subgraph: &str, item: I) -> Option<I> {
        self.insert(Some(subgraph.to_string()), item)
    }

    /// Removes the item and its state; returns the item if it was present.
    pub fn remove(&mut self, key: &Key<I::Kind>) -> Option<I> {
        self.states.remove(key);
        self.entries.remove(key).map(|entry| entry.item)
    }

    /// The item stored under `key`.
    pub fn get(&self, key: &Key<I::Kind>) -> Option<&I> {
        self.entries.get(key).map(|entry| &entry.item)
    }

    /// Whether an item is stored under `key`.
    pub fn contains(&self, key: &Key<I::Kind>) -> bool {
        self.entries.contains_key(key)
    }

    /// The reconciliation state of `key`, which may exist without an item (pending, failed).
    pub fn state(&self, key: &Key<I::Kind>) -> Option<&ItemState> {
        self.states.get(key)
    }

    /// Overrides the state of `key`, for callers that rebuild the current state themselves.
    ///
    /// Side effects: setting a state other than `InProgress` on a key with a background
    /// operation makes the reconciler forget that operation.
    pub fn set_state(&mut self, key: Key<I::Kind>, state: ItemState) {
        self.states.insert(key, state);
    }

    /// All items, in key order.
    pub fn items(&self) -> impl Iterator<Item = &I> + '_ {
        self.entries.values().map(|entry| &entry.item)
    }

    /// All keys of items, in order.
    pub fn keys(&self) -> impl Iterator<Item = &Key<I::Kind>> + '_ {
        self.entries.keys()
    }

    /// All recorded states, in key order, including keys without an item.
    pub fn states(&self) -> impl Iterator<Item = (&Key<I::Kind>, &ItemState)> + '_ {
        self.states.iter()
    }

    /// Number of items (states without items are not counted).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the graph holds no item.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The subgraph the item under `key` belongs to, if any.
    pub fn subgraph_of(&self, key: &Key<I::Kind>) -> Option<&str> {
        self.entries.get(key).and_then(|entry| entry.subgraph.as_deref())
    }

    /// Names of all subgraphs holding at least one item, sorted.
    pub fn subgraphs(&self) -> BTreeSet<&str> {
        self.entries.values().filter_map(|entry| entry.subgraph.as_deref()).collect()
    }

    /// Keys of the items whose dependencies name `key`, in key order.
    pub fn dependents(&self, key: &Key<I::Kind>) -> Vec<Key<I::Kind>> {
        self.entries
            .iter()
            .filter(|(_, entry)| entry.item.deps().iter().any(|dep| &dep.key == key))
            .map(|(dependent, _)| dependent.clone())
            .collect()
    }

    /// Whether any item has an operation running in the background.
    pub fn async_ops_in_progress(&self) -> bool {
        self.states.values().any(|state| state.in_progress().is_some())
    }

    /// Whether `key` is selected by `selection` in this graph.
    pub fn is_selected(&self, key: &Key<I::Kind>, selection: &Selection) -> bool {
        match selection {
            Selection::All => true,
            Selection::Subgraph(name) => self.subgraph_of(key) == Some(name.as_str()),
        }
    }

    pub(crate) fn entry(&self, key: &Key<I::Kind>) -> Option<&Entry<I>> {
        self.entries.get(key)
    }

    pub(crate) fn entry_mut(&mut self, key: &Key<I::Kind>) -> Option<&mut Entry<I>> {
        self.entries.get_mut(key)
    }

    /// Stores `item` with `subgraph` and `state`, replacing whatever the key held.
    pub(crate) fn store(&mut self, item: I, subgraph: Option<String>, state: ItemState) {
        let key = item.key();
        self.entries.insert(key.clone(), Entry { item, subgraph, next: None });
        self.states.insert(key, state);
    }

    /// Removes the item but keeps the key's state for the caller to update.
    pub(crate) fn take_entry(&mut self, key: &Key<I::Kind>) -> Option<Entry<I>> {
        self.entries.remove(key)
    }

    pub(crate) fn state_mut(&mut self, key: &Key<I::Kind>) -> &mut ItemState {
        self.states.entry(key.clone()).or_default()
    }

    pub(crate) fn drop_state(&mut self, key: &Key<I::Kind>) {
        self.states.remove(key);
    }

    pub(crate) fn tracker(&self) -> &Arc<Tracker> {
        &self.tracker
    }

    fn insert(&mut self, subgraph: Option<String>, item: I) -> Option<I> {
        let key = item.key();
        let previous = self.entries.remove(&key);
        let mut state = ItemState::created();
        if let Some(old) = self.states.get(&key) {
            if old.in_progress().is_some() {
                state = old.clone();
            }
            state.externally_modified = old.externally_modified;
        }
        if let Some(old) = &previous
            && item.is_external()
            && !item.matches(&old.item)
        {
            state.externally_modified = true;
        }
        let next = previous.as_ref().and_then(|old| old.next.clone());
        self.entries.insert(key.clone(), Entry { item, subgraph, next });
        self.states.insert(key, state);
        previous.map(|entry| entry.item)
    }
}

impl<I: Item> Default for Graph<I> {
    fn default() -> Self {
        Self::new()
    }
}

impl<I: Item> Clone for Graph<I> {
    fn clone(&self) -> Self {
        Self {
            entries: self.entries.clone(),
            states: self.states.clone(),
            tracker: Arc::clone(&self.tracker),
        }
    }
}

impl<I: Item> fmt::Debug for Graph<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field("entries", &self.entries)
            .field("states", &self.states)
            .finish()
    }
}

impl<I: Item> FromIterator<I> for Graph<I> {
    fn from_iter<T: IntoIterator<Item = I>>(iter: T) -> Self {
        let mut graph = Graph::new();
        for item in iter {
            graph.put(item);
        }
        graph
    }
}
