//! The interface every host backend implements: inventory (observe) plus configurator
//! (create, modify, delete) for a fixed set of artifact kinds.
//!
//! The engine keeps one [`Backend`] per `applyWith` family and routes each artifact to the
//! backend whose [`Backend::kinds`] lists its kind. Backends hold no ownership policy: they list
//! what is on the host and do what they are told. Deciding what may be deleted is the engine's.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::artifact::{Artifact, ArtifactKey, ArtifactKind};
use crate::error::HostError;
use crate::kinds::ApplyWith;

/// Inventory + configurator for some artifact kinds, bound to one network namespace.
pub trait Backend: Send + Sync {
    /// The configurator family this backend is, shown in plans and intents as `applyWith`.
    fn apply_with(&self) -> ApplyWith;

    /// Kinds this backend observes, and configures those of its family
    /// ([`ArtifactKind::apply_with`] is [`Backend::apply_with`]); a kind of another family is
    /// only listed (`linux.ppp.link`, which pppd brings up).
    fn kinds(&self) -> &'static [ArtifactKind];

    /// Lists the host objects of `kind` (one of [`Backend::kinds`]) as they are now.
    ///
    /// `wanted` names the keys the engine asks about (desired and ledger-owned ones). Backends
    /// whose kind can be listed cheaply (links, addresses, routes, rules, nft tables) ignore it
    /// and list every object of the kind, so orphans in routerd's namespaces are seen; backends
    /// that cannot list (sysctl) read exactly the `wanted` keys and omit absent ones.
    ///
    /// Shape: one [`Artifact`] per object, keyed as [`crate::artifact::ArtifactSpec::key`]
    /// derives. The listing never filters by ownership.
    fn observe<'a>(
        &'a self,
        kind: ArtifactKind,
        wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>>;

    /// [`Backend::observe`], the artifacts shared: what the engine calls. A backend that keeps
    /// what it observed (a zone transfer cached by its SOA serial) hands the same artifacts
    /// out again instead of copying them for every reconcile. Default: [`Backend::observe`],
    /// each artifact wrapped.
    fn observe_shared<'a>(
        &'a self,
        kind: ArtifactKind,
        wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Arc<Artifact>>, HostError>> {
        Box::pin(async move {
            Ok(self.observe(kind, wanted).await?.into_iter().map(Arc::new).collect())
        })
    }

    /// Whether [`Backend::observe`] reads `wanted` (a backend that cannot list its kinds);
    /// `false` lets the engine skip collecting the keys for a backend that lists everything.
    fn observes_wanted_only(&self) -> bool {
        false
    }

    /// Whether the futures of [`Backend::observe`] finish when first polled, without an async
    /// runtime: they block on a socket the kernel answers inside the call. The engine may then
    /// drive them on a plain thread while it does other work. Default `false`.
    fn observe_is_synchronous(&self) -> bool {
        false
    }

    /// Creates `desired` on the host.
    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>>;

    /// How many creates of `kind` [`Backend::create_many`] takes at once; 1 (the default):
    /// one at a time through [`Backend::create`].
    fn create_batch_limit(&self, _kind: ArtifactKind) -> usize {
        1
    }

    /// Creates `desired` (artifacts of one kind, none depending on another), in any order or
    /// at the same time.
    ///
    /// Shape: one result per artifact, in the order of `desired`. Default: [`Backend::create`]
    /// for each, one after another.
    fn create_many<'a>(
        &'a self,
        desired: &'a [&'a Artifact],
    ) -> BoxFuture<'a, Vec<Result<(), HostError>>> {
        Box::pin(async move {
            let mut results = Vec::with_capacity(desired.len());
            for artifact in desired {
                results.push(self.create(artifact).await);
            }
            results
        })
    }

    /// Changes `observed` in place into `desired` (same key).
    fn modify<'a>(
        &'a self,
        observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>>;

    /// Removes `observed` from the host.
    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>>;

    /// How many modifies, or deletes, of `kind` [`Backend::change_many`] takes at once; 1 (the
    /// default): one at a time.
    fn change_batch_limit(&self, _kind: ArtifactKind) -> usize {
        1
    }

    /// Runs `changes` (artifacts of one kind, none depending on another), all modifies
    /// `(observed, Some(desired))` or all deletes `(observed, None)`, in any order or at the
    /// same time.
    ///
    /// Shape: one result per change, in the order of `changes`. Default: [`Backend::modify`]
    /// or [`Backend::delete`] for each, one after another.
    fn change_many<'a>(
        &'a self,
        changes: &'a [(&'a Artifact, Option<&'a Artifact>)],
    ) -> BoxFuture<'a, Vec<Result<(), HostError>>> {
        Box::pin(async move {
            let mut results = Vec::with_capacity(changes.len());
            for (observed, desired) in changes {
                results.push(match desired {
                    Some(desired) => self.modify(observed, desired).await,
                    None => self.delete(observed).await,
                });
            }
            results
        })
    }
}
