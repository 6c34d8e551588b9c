//! Configurators (the drivers that create, modify and delete items) and the registry that maps an
//! item to its configurator.
//!
//! The crate defines the interfaces only; implementations live with the item types (in routerd:
//! the `host` crate). Nothing here runs an operation by itself.

use std::collections::BTreeMap;
use std::fmt;

use futures::future::BoxFuture;

use crate::background::OpContext;
use crate::item::Item;

/// Error returned by a configurator operation.
pub type OpError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Driver of one or more item kinds: performs the state transitions the reconciler orders.
///
/// Operations may finish synchronously (return the result) or continue in the background via
/// [`OpContext::continue_in_background`]. The reconciler guarantees that an operation runs only
/// after everything it depends on is in place (creates, modifies) or gone (deletes).
pub trait Configurator<I: Item>: Send + Sync {
    /// Creates `item`, which does not exist yet.
    ///
    /// Errors: any; the item is recorded as failed and its dependents stay pending.
    fn create<'a>(&'a self, ctx: &'a OpContext, item: &'a I) -> BoxFuture<'a, Result<(), OpError>>;

    /// Changes `current` in place into `intended` (same key).
    ///
    /// Errors: any; the item keeps its previous value and is recorded as failed.
    fn modify<'a>(
        &'a self,
        ctx: &'a OpContext,
        current: &'a I,
        intended: &'a I,
    ) -> BoxFuture<'a, Result<(), OpError>>;

    /// Removes `item` (its current value).
    ///
    /// Errors: any; the item stays in the current state, recorded as failed.
    fn delete<'a>(&'a self, ctx: &'a OpContext, item: &'a I) -> BoxFuture<'a, Result<(), OpError>>;

    /// How many creates [`Configurator::create_many`] takes at once; 1 (the default): one at a
    /// time through [`Configurator::create`].
    fn create_batch_limit(&self) -> usize {
        1
    }

    /// Creates `items`, none of which depends on another, in any order or at the same time;
    /// one result per item, in the order of `items`.
    ///
    /// Called instead of [`Configurator::create`] for two or more items when
    /// [`Configurator::create_batch_limit`] allows it. The items cannot continue in the
    /// background (`ctx` is shared by the batch; a background id set on it is ignored).
    /// Default: [`Configurator::create`] for each item, one after another.
    fn create_many<'a>(
        &'a self,
        ctx: &'a OpContext,
        items: &'a [&'a I],
    ) -> BoxFuture<'a, Vec<Result<(), OpError>>> {
        Box::pin(async move {
            let mut results = Vec::with_capacity(items.len());
            for item in items {
                results.push(self.create(ctx, item).await);
            }
            results
        })
    }

    /// How many modifies, or deletes, [`Configurator::change_many`] takes at once; 1 (the
    /// default): one at a time through [`Configurator::modify`] and [`Configurator::delete`].
    fn change_batch_limit(&self) -> usize {
        1
    }

    /// Runs `changes`, all modifies or all deletes, none depending on another, in any order or
    /// at the same time: `(current, Some(intended))` modifies `current` into `intended`,
    /// `(current, None)` deletes it. One result per change, in the order of `changes`.
    ///
    /// Called instead of [`Configurator::modify`] or [`Configurator::delete`] for two or more
    /// items when [`Configurator::change_batch_limit`] allows it; as for
    /// [`Configurator::create_many`], they cannot continue in the background. Default: one
    /// after another.
    fn change_many<'a>(
        &'a self,
        ctx: &'a OpContext,
        changes: &'a [(&'a I, Option<&'a I>)],
    ) -> BoxFuture<'a, Vec<Result<(), OpError>>> {
        Box::pin(async move {
            let mut results = Vec::with_capacity(changes.len());
            for (current, intended) in changes {
                results.push(match intended {
                    Some(intended) => self.modify(ctx, current, intended).await,
                    None => self.delete(ctx, current).await,
                });
            }
            results
        })
    }

    /// Whether going from `current` to `intended` needs delete + create instead of modify.
    ///
    /// Called only when `intended` does not match `current`. A recreate also deletes every item
    /// that depends on this one first and creates them again afterwards.
    fn needs_recreate(&self, current: &I, intended: &I) -> bool {
        let _ = (current, intended);
        false
    }
}

/// Maps items to their configurators.
pub trait Registry<I: Item>: Send + Sync {
    /// The configurator for `item`; `None` makes any operation on it fail with
    /// "no configurator for kind …" (external items are never asked for).
    fn configurator(&self, item: &I) -> Option<&dyn Configurator<I>>;
}

/// A [`Registry`] with one configurator per item kind.
pub struct KindRegistry<I: Item> {
    by_kind: BTreeMap<I::Kind, Box<dyn Configurator<I>>>,
}

impl<I: Item> KindRegistry<I> {
    /// An empty registry.
    pub fn new() -> Self {
        Self { by_kind: BTreeMap::new() }
    }

    /// Registers `configurator` for items of `kind`, replacing any previous one.
    pub fn register(&mut self, kind: I::Kind, configurator: impl Configurator<I> + 'static) {
        self.by_kind.insert(kind, Box::new(configurator));
    }

    /// Builder form of [`KindRegistry::register`].
    pub fn with(mut self, kind: I::Kind, configurator: impl Configurator<I> + 'static) -> Self {
        self.register(kind, configurator);
        self
    }

    /// Kinds with a registered configurator, sorted.
    pub fn kinds(&self) -> impl Iterator<Item = I::Kind> + '_ {
        self.by_kind.keys().copied()
    }
}

impl<I: Item> Default for KindRegistry<I> {
    fn default() -> Self {
        Self::new()
    }
}

impl<I: Item> fmt::Debug for KindRegistry<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KindRegistry")
            .field("kinds", &self.by_kind.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl<I: Item> Registry<I> for KindRegistry<I> {
    fn configurator(&self, item: &I) -> Option<&dyn Configurator<I>> {
        self.by_kind.get(&item.key().kind).map(|boxed| boxed.as_ref())
    }
}
