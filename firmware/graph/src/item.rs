//! Items, their keys and their dependencies: the vocabulary the graph is built from.
//!
//! This module owns the [`Item`] trait the caller implements for its own item type, the [`Key`]
//! that identifies an item, and the [`Dependency`] edges an item declares. It knows nothing of
//! what an item stands for (a link, a route, a file): the crate is generic over the item type.

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Identity of an item: its kind plus a name unique within that kind.
///
/// Shape: ordered by kind, then by name; displayed as `kind/name`. The name is shared, so
/// clones are cheap (the reconciler clones keys freely); it serializes as a plain string.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Key<K> {
    /// The item kind (an enum of the caller's kinds).
    pub kind: K,
    /// The name, unique among items of the same kind.
    pub name: Arc<str>,
}

impl<K> Key<K> {
    /// Builds the key of the item of `kind` named `name` (a `&str`, `String` or `Arc<str>`).
    pub fn new(kind: K, name: impl Into<Arc<str>>) -> Self {
        Self { kind, name: name.into() }
    }
}

impl<K: fmt::Display> fmt::Display for Key<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.kind, self.name)
    }
}

/// A configuration item: one node of the dependency graph.
///
/// The same type models both the intended state (what should exist) and the current state (what
/// exists). The reconciler never looks inside an item; it only asks the questions below.
pub trait Item: Clone + fmt::Debug + Send + Sync + 'static {
    /// The kind of an item; [`Registry`](crate::Registry) implementations usually map a kind to
    /// one [`Configurator`](crate::Configurator).
    type Kind: Copy + Ord + Hash + fmt::Debug + fmt::Display + Send + Sync + 'static;

    /// The identity of this item.
    fn key(&self) -> Key<Self::Kind>;

    /// Items required by this item, AND-ed.
    ///
    /// A dependency may name an item that does not exist (yet); the item then stays pending.
    /// Called for every item at the start of each run, so the list is kept in the item (built
    /// once), not built per call.
    fn deps(&self) -> &[Dependency<Self>];

    /// Whether this item is an observed fact the reconciler never creates, modifies or deletes
    /// (carrier up, a DHCP lease, a link owned by someone else).
    fn is_external(&self) -> bool {
        false
    }

    /// Whether `current` already is what `self` (the intended item) asks for.
    ///
    /// `false` leads to a Modify, or to a delete + create when
    /// [`Configurator::needs_recreate`](crate::Configurator::needs_recreate) says so.
    fn matches(&self, current: &Self) -> bool;

    /// Label of the node in DOT exports; the key by default.
    fn label(&self) -> String {
        self.key().to_string()
    }
}

/// Predicate a dependency must satisfy, evaluated on the required item.
pub type MustSatisfy<I> = Arc<dyn Fn(&I) -> bool + Send + Sync>;

/// A directed edge from an item to an item it requires.
///
/// Shape: build with [`Dependency::on`] and the builder methods, e.g.
/// `Dependency::on(link_key, "route needs its link").must_satisfy(|l| l.is_up())`.
pub struct Dependency<I: Item> {
    /// The required item.
    pub key: Key<I::Kind>,
    /// Why the dependency exists; shown in pending reasons and DOT exports. Shared, so that
    /// items can hand out their dependencies cheaply.
    pub description: Arc<str>,
    /// The dependency is satisfied only if the item exists and this returns true for it.
    pub must_satisfy: Option<MustSatisfy<I>>,
    /// When the required item is modified, the dependent is recreated (delete + create).
    pub recreate_when_modified: bool,
    /// When the required item (an external item) disappears or stops satisfying, the dependent
    /// is gone too: no Delete is called, it is simply removed from the current state.
    pub auto_deleted_by_external: bool,
    /// The dependent goes with the required item (an owner reference with garbage collection):
    /// when a run deletes the required item for good, the dependent is not deleted by an
    /// operation of its own but removed from the current state once that delete succeeded.
    ///
    /// Shape: applies when the required item's stage-1 action is a delete whose reason is not a
    /// recreate ([`Reason::is_recreate`](crate::Reason::is_recreate)), or is itself the removal
    /// of an item that goes with another (chains), and the dependent is present, not intended
    /// (an intended dependent is deleted first and left pending, as without the flag), not
    /// external, with no operation in progress and not already gone with an external
    /// dependency declared `auto_deleted_by_external`.
    /// The dependent then comes after the required item in the run, does not block its delete
    /// (its own plain dependents still do: they are deleted first), and is listed in
    /// [`Plan::cascaded`](crate::Plan::cascaded) and
    /// [`Status::cascaded`](crate::Status::cascaded) with the item it went with. If the
    /// required item's delete fails, is deferred or continues in the background, the dependent
    /// stays in the current state, reported deferred. A recreate of the required item (delete,
    /// then create) is not a cascade: the dependent is deleted first, as without the flag. An
    /// item with several such dependencies goes with one of them; for the others it is a plain
    /// dependent being deleted. No effect on a dependency on an external item (see
    /// `auto_deleted_by_external`).
    pub cascade: bool,
}

impl<I: Item> Dependency<I> {
    /// A plain "must exist" dependency on `key`, described by a `&str`, `String` or `Arc<str>`.
    pub fn on(key: Key<I::Kind>, description: impl Into<Arc<str>>) -> Self {
        Self {
            key,
            description: description.into(),
            must_satisfy: None,
            recreate_when_modified: false,
            auto_deleted_by_external: false,
            cascade: false,
        }
    }

    /// Adds a predicate the required item must satisfy besides existing.
    pub fn must_satisfy(mut self, check: impl Fn(&I) -> bool + Send + Sync + 'static) -> Self {
        self.must_satisfy = Some(Arc::new(check));
        self
    }

    /// Makes the dependent be recreated whenever the required item is modified.
    pub fn recreate_when_modified(mut self) -> Self {
        self.recreate_when_modified = true;
        self
    }

    /// Marks the dependent as removed together with the (external) required item.
    pub fn auto_deleted_by_external(mut self) -> Self {
        self.auto_deleted_by_external = true;
        self
    }

    /// Makes the dependent go with the required item: when a run deletes the required item for
    /// good, the dependent is removed from the current state with it, without a Delete of its
    /// own, and reported in `cascaded` (e.g. a DNS record with its zone, whose removal drops
    /// the records).
    ///
    /// Shape: only for a dependent that is no longer intended, and only when the required item
    /// goes for good: a recreate of the required item, or an intended dependent, behave as
    /// without the flag (the dependent is deleted first); a failed, deferred or background
    /// delete of the required item keeps the dependent (reported deferred). The field of the
    /// same name has the full rules.
    pub fn cascade(mut self) -> Self {
        self.cascade = true;
        self
    }

    /// Whether `required` satisfies this dependency's predicate (true without a predicate).
    ///
    /// Side effects: none besides running the caller's predicate.
    pub fn is_satisfied_by(&self, required: &I) -> bool {
        self.must_satisfy.as_ref().is_none_or(|check| check(required))
    }
}

impl<I: Item> Clone for Dependency<I> {
    fn clone(&self) -> Self {
        Self {
            key: self.key.clone(),
            description: self.description.clone(),
            must_satisfy: self.must_satisfy.clone(),
            recreate_when_modified: self.recreate_when_modified,
            auto_deleted_by_external: self.auto_deleted_by_external,
            cascade: self.cascade,
        }
    }
}

impl<I: Item> fmt::Debug for Dependency<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dependency")
            .field("key", &self.key)
            .field("description", &self.description)
            .field("must_satisfy", &self.must_satisfy.as_ref().map(|_| "<predicate>"))
            .field("recreate_when_modified", &self.recreate_when_modified)
            .field("auto_deleted_by_external", &self.auto_deleted_by_external)
            .field("cascade", &self.cascade)
            .finish()
    }
}
