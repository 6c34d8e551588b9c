//! The dependency graph: items by key, each optionally in a named subgraph, plus the
//! reconciliation state of each key when the graph models the current state.
//!
//! Edges are not stored: they are each item's [`Item::deps`]. The graph does no I/O; the
//! background-operation tracker it carries is only read and written by the reconciler.

use std::collections::{BTreeMap, BTreeSet, btree_map};
use std::fmt;
use std::iter::Peekable;
use std::sync::Arc;

use crate::background::Tracker;
use crate::item::{Item, Key};
use crate::sequencer::Index;
use crate::state::{ItemState, ItemStatus, Selection};

/// One item with its subgraph and, while a Modify runs in the background, its next value.
#[derive(Clone, Debug)]
pub(crate) struct Entry<I> {
    pub(crate) item: I,
    pub(crate) subgraph: Option<String>,
    pub(crate) next: Option<I>,
}

/// What a graph holds under one key: the item, its state, or both (never neither).
#[derive(Clone, Debug)]
struct Slot<I> {
    entry: Option<Entry<I>>,
    state: Option<ItemState>,
}

/// A set of items keyed by [`Key`], used for both the intended and the current state.
///
/// Shape: at most one item per key; iteration is in key order. In the current-state graph each
/// key may also carry an [`ItemState`], even without an item (pending or failed creates); item
/// and state share one map slot, so a key is looked up once for both.
/// Clones share the tracker of background operations started from the original.
pub struct Graph<I: Item> {
    slots: BTreeMap<Key<I::Kind>, Slot<I>>,
    /// Number of slots holding an item.
    len: usize,
    tracker: Arc<Tracker>,
}

impl<I: Item> Graph<I> {
    /// An empty graph.
    pub fn new() -> Self {
        Self { slots: BTreeMap::new(), len: 0, tracker: Arc::new(Tracker::new()) }
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
        let entry = self.slots.remove(key)?.entry?;
        self.len -= 1;
        Some(entry.item)
    }

    /// The item stored under `key`.
    pub fn get(&self, key: &Key<I::Kind>) -> Option<&I> {
        self.entry(key).map(|entry| &entry.item)
    }

    /// Whether an item is stored under `key`.
    pub fn contains(&self, key: &Key<I::Kind>) -> bool {
        self.entry(key).is_some()
    }

    /// The reconciliation state of `key`, which may exist without an item (pending, failed).
    pub fn state(&self, key: &Key<I::Kind>) -> Option<&ItemState> {
        self.slots.get(key).and_then(|slot| slot.state.as_ref())
    }

    /// Overrides the state of `key`, for callers that rebuild the current state themselves.
    ///
    /// Side effects: setting a state other than `InProgress` on a key with a background
    /// operation makes the reconciler forget that operation.
    pub fn set_state(&mut self, key: Key<I::Kind>, state: ItemState) {
        *self.state_mut(&key) = state;
    }

    /// All items, in key order.
    pub fn items(&self) -> impl Iterator<Item = &I> + '_ {
        self.entries().map(|(_, entry)| &entry.item)
    }

    /// All keys of items, in order.
    pub fn keys(&self) -> impl Iterator<Item = &Key<I::Kind>> + '_ {
        self.entries().map(|(key, _)| key)
    }

    /// All recorded states, in key order, including keys without an item.
    pub fn states(&self) -> impl Iterator<Item = (&Key<I::Kind>, &ItemState)> + '_ {
        self.slots.iter().filter_map(|(key, slot)| Some((key, slot.state.as_ref()?)))
    }

    /// Number of items (states without items are not counted).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the graph holds no item.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The subgraph the item under `key` belongs to, if any.
    pub fn subgraph_of(&self, key: &Key<I::Kind>) -> Option<&str> {
        self.entry(key).and_then(|entry| entry.subgraph.as_deref())
    }

    /// Names of all subgraphs holding at least one item, sorted.
    pub fn subgraphs(&self) -> BTreeSet<&str> {
        self.entries().filter_map(|(_, entry)| entry.subgraph.as_deref()).collect()
    }

    /// Keys of the items whose dependencies name `key`, in key order.
    pub fn dependents(&self, key: &Key<I::Kind>) -> Vec<Key<I::Kind>> {
        self.entries()
            .filter(|(_, entry)| entry.item.deps().iter().any(|dep| &dep.key == key))
            .map(|(dependent, _)| dependent.clone())
            .collect()
    }

    /// Whether any item has an operation running in the background.
    pub fn async_ops_in_progress(&self) -> bool {
        self.states().any(|(_, state)| state.in_progress().is_some())
    }

    /// Whether `key` is selected by `selection` in this graph.
    pub fn is_selected(&self, key: &Key<I::Kind>, selection: &Selection) -> bool {
        match selection {
            Selection::All => true,
            Selection::Subgraph(name) => self.subgraph_of(key) == Some(name.as_str()),
        }
    }

    /// Items with their keys, in key order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&Key<I::Kind>, &Entry<I>)> + '_ {
        self.slots.iter().filter_map(|(key, slot)| Some((key, slot.entry.as_ref()?)))
    }

    /// Whether an item is stored under `key`, and the key's state: one search for both.
    pub(crate) fn slot(&self, key: &Key<I::Kind>) -> (bool, Option<&ItemState>) {
        match self.slots.get(key) {
            Some(slot) => (slot.entry.is_some(), slot.state.as_ref()),
            None => (false, None),
        }
    }

    pub(crate) fn entry(&self, key: &Key<I::Kind>) -> Option<&Entry<I>> {
        self.slots.get(key).and_then(|slot| slot.entry.as_ref())
    }

    pub(crate) fn entry_mut(&mut self, key: &Key<I::Kind>) -> Option<&mut Entry<I>> {
        self.slots.get_mut(key).and_then(|slot| slot.entry.as_mut())
    }

    /// Stores `item` with `subgraph` and `state`, replacing whatever the key held.
    pub(crate) fn store(&mut self, item: I, subgraph: Option<String>, state: ItemState) {
        let key = item.key();
        let slot = Slot { entry: Some(Entry { item, subgraph, next: None }), state: Some(state) };
        let replaced = self.slots.insert(key, slot).is_some_and(|old| old.entry.is_some());
        if !replaced {
            self.len += 1;
        }
    }

    /// Removes the item but keeps the key's state for the caller to update.
    pub(crate) fn take_entry(&mut self, key: &Key<I::Kind>) -> Option<Entry<I>> {
        let btree_map::Entry::Occupied(mut slot) = self.slots.entry(key.clone()) else {
            return None;
        };
        let entry = slot.get_mut().entry.take()?;
        self.len -= 1;
        if slot.get().state.is_none() {
            slot.remove();
        }
        Some(entry)
    }

    pub(crate) fn state_mut(&mut self, key: &Key<I::Kind>) -> &mut ItemState {
        let slot = self.slots.entry(key.clone()).or_insert(Slot { entry: None, state: None });
        slot.state.get_or_insert_with(ItemState::default)
    }

    pub(crate) fn drop_state(&mut self, key: &Key<I::Kind>) {
        if let btree_map::Entry::Occupied(mut slot) = self.slots.entry(key.clone()) {
            slot.get_mut().state = None;
            if slot.get().entry.is_none() {
                slot.remove();
            }
        }
    }

    /// End-of-run cleanup of the selected keys (those passing `selected`): clears
    /// `externally_modified` on external items, moves items also in `intended` into their
    /// intended subgraph, and drops the states of keys that are neither present nor intended
    /// (as a non-external item).
    pub(crate) fn settle(&mut self, intended: &Graph<I>, selected: impl Fn(&Key<I::Kind>) -> bool) {
        let mut wanted = intended.entries().peekable();
        self.slots.retain(|key, slot| {
            let want = seek(&mut wanted, key);
            let Some(state) = slot.state.as_mut() else { return true };
            if !selected(key) {
                return true;
            }
            match (slot.entry.as_mut(), want) {
                (Some(entry), _) if entry.item.is_external() => {
                    state.externally_modified = false;
                    true
                }
                (Some(entry), Some(want)) => {
                    if entry.subgraph != want.subgraph {
                        entry.subgraph.clone_from(&want.subgraph);
                    }
                    true
                }
                (Some(_), None) => true,
                // A slot without item nor state is removed.
                (None, want) => want.is_some_and(|want| !want.item.is_external()),
            }
        });
    }

    /// Whether this (current) graph already is `intended`: the same keys, each intended item
    /// [`Item::matches`] its current one with the same externality, every dependency of every
    /// item (current and intended) present here and satisfying its predicate, and no key with a
    /// state other than a plain `Created` (nothing failed, running, pending or externally
    /// modified). Nothing then needs an operation.
    ///
    /// `index` is [`Index::new`] of `intended`: once the keys are known to be the same, the
    /// item a dependency names is found by its id, without searching the map.
    /// Shape: one walk over both maps in key order, then one pass over the dependencies.
    pub(crate) fn is_converged_to(&self, intended: &Graph<I>, index: &Index<'_, I>) -> bool {
        if self.len != intended.len || self.slots.len() != self.len {
            return false;
        }
        // The current items by id: ids 0..len are the intended keys in key order.
        let mut have_items: Vec<&I> = Vec::with_capacity(self.len);
        let same =
            self.slots.iter().zip(intended.entries()).all(|((key, slot), (int_key, want))| {
                let (Some(have), Some(state)) = (&slot.entry, &slot.state) else { return false };
                have_items.push(&have.item);
                key == int_key
                    && state.state == ItemStatus::Created
                    && !state.externally_modified
                    && have.next.is_none()
                    && have.item.is_external() == want.item.is_external()
                    && want.item.matches(&have.item)
            });
        if !same {
            return false;
        }
        let count = have_items.len();
        // A dependency on a key outside the graph is missing; one without a predicate is
        // satisfied by any item.
        let satisfied = |to: Option<usize>, dep: &crate::item::Dependency<I>| {
            to.is_some_and(|to| {
                to < count && (dep.must_satisfy.is_none() || dep.is_satisfied_by(have_items[to]))
            })
        };
        have_items.iter().enumerate().all(|(id, have)| {
            let want_deps = &index.int_deps[id];
            want_deps.iter().all(|edge| satisfied(Some(edge.to), &edge.dep))
                // Items built from one declaration share their list: checked once.
                && (index.int_items[id].is_some_and(|want| std::ptr::eq(want.deps(), have.deps()))
                    || have.deps().iter().all(|dep| satisfied(index.get(&dep.key), dep)))
        })
    }

    pub(crate) fn tracker(&self) -> &Arc<Tracker> {
        &self.tracker
    }

    fn insert(&mut self, subgraph: Option<String>, item: I) -> Option<I> {
        let slot = self.slots.entry(item.key()).or_insert(Slot { entry: None, state: None });
        let mut state = ItemState::created();
        if let Some(old) = &slot.state {
            if old.in_progress().is_some() {
                state = old.clone();
            }
            state.externally_modified = old.externally_modified;
        }
        if let Some(old) = &slot.entry
            && item.is_external()
            && !item.matches(&old.item)
        {
            state.externally_modified = true;
        }
        slot.state = Some(state);
        let next = slot.entry.as_mut().and_then(|old| old.next.take());
        let previous = slot.entry.replace(Entry { item, subgraph, next });
        if previous.is_none() {
            self.len += 1;
        }
        previous.map(|entry| entry.item)
    }
}

/// Advances the sorted `iter` past keys below `key`; the value under `key`, if any.
fn seek<'a, K: Ord + 'a, V>(
    iter: &mut Peekable<impl Iterator<Item = (&'a K, V)>>,
    key: &K,
) -> Option<V> {
    while iter.next_if(|(next, _)| *next < key).is_some() {}
    iter.next_if(|(next, _)| *next == key).map(|(_, value)| value)
}

impl<I: Item> Default for Graph<I> {
    fn default() -> Self {
        Self::new()
    }
}

impl<I: Item> Clone for Graph<I> {
    fn clone(&self) -> Self {
        Self { slots: self.slots.clone(), len: self.len, tracker: Arc::clone(&self.tracker) }
    }
}

impl<I: Item> fmt::Debug for Graph<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field("entries", &self.entries().collect::<BTreeMap<_, _>>())
            .field("states", &self.states().collect::<BTreeMap<_, _>>())
            .finish()
    }
}

/// A graph of fresh items, each in state `Created` and in no subgraph; of items with the same
/// key the last one is kept. Built in one pass (linear when the items come in key order).
impl<I: Item> FromIterator<I> for Graph<I> {
    fn from_iter<T: IntoIterator<Item = I>>(iter: T) -> Self {
        let slots: BTreeMap<Key<I::Kind>, Slot<I>> = iter
            .into_iter()
            .map(|item| {
                let entry = Entry { item, subgraph: None, next: None };
                (entry.item.key(), Slot { entry: Some(entry), state: Some(ItemState::created()) })
            })
            .collect();
        Self { len: slots.len(), slots, tracker: Arc::new(Tracker::new()) }
    }
}
