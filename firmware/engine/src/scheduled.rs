//! Inventory of what the supervisor's scheduler produces rather than a configurator
//! (HealthCheck verdicts, StatePolicy variables): artifacts listed from an in-memory store,
//! which nothing creates, modifies or deletes.

use futures::future::BoxFuture;
use routerd_host::{Artifact, ArtifactKey, ArtifactKind, Backend, HostError};

use crate::intent::ApplyWith;

/// A `routerd-scheduler` backend listing `kinds` from a store.
pub struct ScheduledBackend {
    kinds: &'static [ArtifactKind],
    /// What produces the artifacts, for the refusal of an operation (`the scheduler's
    /// probes`).
    source: &'static str,
    list: Box<dyn Fn() -> Vec<Artifact> + Send + Sync>,
}

impl ScheduledBackend {
    /// A backend whose inventory of `kinds` is whatever `list` returns; `source` names what
    /// produces them.
    pub fn new(
        kinds: &'static [ArtifactKind],
        source: &'static str,
        list: impl Fn() -> Vec<Artifact> + Send + Sync + 'static,
    ) -> Self {
        Self { kinds, source, list: Box::new(list) }
    }

    fn refuse(&self, key: &ArtifactKey) -> HostError {
        HostError::Invalid {
            key: key.clone(),
            message: format!("{} produce this; nothing applies it", self.source),
        }
    }
}

impl Backend for ScheduledBackend {
    fn apply_with(&self) -> ApplyWith {
        ApplyWith::Scheduler
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        self.kinds
    }

    fn observe<'a>(
        &'a self,
        _kind: ArtifactKind,
        _wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        let listed = (self.list)();
        Box::pin(async move { Ok(listed) })
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move { Err(self.refuse(&desired.key)) })
    }

    fn modify<'a>(
        &'a self,
        _observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move { Err(self.refuse(&desired.key)) })
    }

    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move { Err(self.refuse(&observed.key)) })
    }
}
