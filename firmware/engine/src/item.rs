//! Graph items for host artifacts, and the registry that hands each one to its backend.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use routerd_graph::{Configurator, Dependency, Item, Key, OpContext, OpError, Registry};
use routerd_host::{Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, Backend, HostError};

use crate::intent::{ApplyWith, IntentDep};
use crate::reason::Reason;

/// An artifact as a node of the dependency graph.
///
/// Cheap to clone (the graph clones items into plans and op logs; a config has thousands):
/// the artifact, owner and dependencies are shared. The dependencies are built as graph edges
/// once ([`graph_deps`]), so [`Item::deps`] only clones shared handles.
#[derive(Clone, Debug)]
pub struct HostItem {
    /// The graph key of `artifact.key` ([`graph_key`]), built once.
    pub key: Key<ArtifactKind>,
    /// The artifact: desired attributes in the intended graph, observed ones in the current.
    pub artifact: Arc<Artifact>,
    /// Owner resource ID; empty for orphans no resource emits.
    pub owner: Arc<str>,
    /// Configurator family.
    pub apply_with: ApplyWith,
    /// Dependencies, from the intent, as graph edges ([`graph_deps`]).
    pub deps: Arc<[Dependency<HostItem>]>,
    /// Observed only: never created, modified or deleted.
    pub external: bool,
}

impl Item for HostItem {
    type Kind = ArtifactKind;

    fn key(&self) -> Key<ArtifactKind> {
        self.key.clone()
    }

    fn deps(&self) -> &[Dependency<Self>] {
        &self.deps
    }

    fn is_external(&self) -> bool {
        self.external
    }

    fn matches(&self, current: &Self) -> bool {
        self.artifact.spec.drift(&current.artifact.spec).is_empty()
    }

    fn label(&self) -> String {
        self.artifact.key.to_string()
    }
}

/// The graph edges of an intent's dependencies, in declaration order.
///
/// A `when.state` condition's `for` duration is measured at `now` (milliseconds since the Unix
/// epoch): the predicate captures it, so the graph evaluates it, in the plan and in the apply
/// that follows, at the time the caller planned for. [`crate::plan::plan`] builds the edges
/// that read it ([`reads_clock`]) again for each plan's `now`.
pub fn graph_deps(deps: &[IntentDep], now: u64) -> Arc<[Dependency<HostItem>]> {
    deps.iter()
        .map(|d| {
            let mut dep = Dependency::on(graph_key(&d.key), d.description.as_str());
            if d.recreate_when_modified {
                dep = dep.recreate_when_modified();
            }
            if d.healthy {
                dep = dep
                    .must_satisfy(|item: &HostItem| crate::health::is_healthy(&item.artifact.spec));
            }
            if let Some(value) = d.carries {
                dep = dep.must_satisfy(move |item: &HostItem| value.by(&item.artifact.spec));
            }
            if let Some(condition) = &d.state {
                let condition = condition.clone();
                dep = dep.must_satisfy(move |item: &HostItem| {
                    crate::state::holds(&condition, &item.artifact.spec, now)
                });
            }
            dep
        })
        .collect()
}

/// Whether the edges [`graph_deps`] builds of `deps` depend on its `now`: a `when.state`
/// condition with a `for` duration.
pub fn reads_clock(deps: &[IntentDep]) -> bool {
    deps.iter().any(|d| d.state.as_ref().is_some_and(|s| s.r#for.is_some()))
}

/// The graph key of an artifact key.
pub fn graph_key(key: &ArtifactKey) -> Key<ArtifactKind> {
    Key::new(key.kind, key.name.as_str())
}

/// The artifact key of a graph key.
pub fn artifact_key(key: &Key<ArtifactKind>) -> ArtifactKey {
    ArtifactKey::new(key.kind, &*key.name)
}

/// Whether this build can apply an intent ([`BackendRegistry::support`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    /// A configurator applies it.
    Applied,
    /// No backend of this build serves the kind with the intent's `applyWith`.
    NoConfigurator,
    /// A backend serves the kind, but the intent is opaque: its attributes need values known
    /// only at run time (an AFTR to resolve), which the resource's warnings name.
    Unresolved,
}

/// Configurators for the backends of this build, by artifact kind.
pub struct BackendRegistry {
    by_kind: BTreeMap<ArtifactKind, BackendConfigurator>,
    backends: Vec<Arc<dyn Backend>>,
    shared: Arc<Shared>,
}

/// State every configurator of a registry shares during one apply.
#[derive(Default)]
struct Shared {
    /// Stable reason of the last failure per artifact.
    failures: Mutex<BTreeMap<ArtifactKey, Reason>>,
    /// `reconcile.mode: strict`: operations one at a time, so that the run ends right at the
    /// first failure (the graph's `OnFailure::AbortRun` ends it after the failed batch).
    strict: AtomicBool,
}

struct BackendConfigurator {
    kind: ArtifactKind,
    backend: Arc<dyn Backend>,
    shared: Arc<Shared>,
}

impl BackendRegistry {
    /// A registry over `backends`; a kind served by two backends goes to the first.
    pub fn new(backends: Vec<Arc<dyn Backend>>) -> Self {
        let shared = Arc::new(Shared::default());
        let mut by_kind = BTreeMap::new();
        for b in &backends {
            for kind in b.kinds() {
                by_kind.entry(*kind).or_insert_with(|| BackendConfigurator {
                    kind: *kind,
                    backend: Arc::clone(b),
                    shared: Arc::clone(&shared),
                });
            }
        }
        Self { by_kind, backends, shared }
    }

    /// Starts an apply: clears failures; with `strict`, operations run one at a time (the
    /// session ends a strict run at its first failure: `OnFailure::AbortRun`).
    pub fn begin_apply(&self, strict: bool) {
        self.shared.strict.store(strict, Ordering::SeqCst);
        if let Ok(mut f) = self.shared.failures.lock() {
            f.clear();
        }
    }

    /// The backends, for inventory.
    pub fn backends(&self) -> &[Arc<dyn Backend>] {
        &self.backends
    }

    /// Whether an artifact of this kind and spec has a configurator in this build.
    pub fn supports(&self, artifact: &Artifact) -> bool {
        self.support(artifact) == Support::Applied
    }

    /// Whether and why not an artifact of this kind and spec can be applied by this build: its
    /// backend must be of the kind's family (the kind table's `applyWith`). A backend may list
    /// a kind another family applies (rtnetlink lists the `linux.ppp.link` pppd brings up):
    /// that kind is observed, not applied.
    pub fn support(&self, artifact: &Artifact) -> Support {
        let kind = artifact.key.kind;
        let served =
            self.by_kind.get(&kind).is_some_and(|c| c.backend.apply_with() == kind.apply_with());
        match (served, &artifact.spec) {
            (false, _) => Support::NoConfigurator,
            (true, ArtifactSpec::Opaque(_)) => Support::Unresolved,
            (true, _) => Support::Applied,
        }
    }

    /// Whether the kind can be listed on the host.
    pub fn observes(&self, kind: ArtifactKind) -> bool {
        self.by_kind.contains_key(&kind)
    }

    /// The stable reason of the last failure of `key` (`KernelRejected`, ...), if any.
    pub fn failure_reason(&self, key: &ArtifactKey) -> Option<Reason> {
        self.shared.failures.lock().ok().and_then(|f| f.get(key).copied())
    }
}

impl Registry<HostItem> for BackendRegistry {
    fn configurator(&self, item: &HostItem) -> Option<&dyn Configurator<HostItem>> {
        if !self.supports(&item.artifact) {
            return None;
        }
        self.by_kind.get(&item.artifact.key.kind).map(|c| c as &dyn Configurator<HostItem>)
    }
}

impl BackendConfigurator {
    fn record(&self, key: &ArtifactKey, result: Result<(), HostError>) -> Result<(), OpError> {
        result.map_err(|e| {
            if let Ok(mut f) = self.shared.failures.lock() {
                f.insert(key.clone(), Reason::from(e.reason_code()));
            }
            Box::new(e) as OpError
        })
    }
}

impl Configurator<HostItem> for BackendConfigurator {
    fn create<'a>(
        &'a self,
        _ctx: &'a OpContext,
        item: &'a HostItem,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move {
            let r = self.backend.create(&item.artifact).await;
            self.record(&item.artifact.key, r)
        })
    }

    /// One at a time in strict mode, so that the first failure stops every later operation.
    fn create_batch_limit(&self) -> usize {
        if self.shared.strict.load(Ordering::SeqCst) {
            return 1;
        }
        self.backend.create_batch_limit(self.kind)
    }

    fn create_many<'a>(
        &'a self,
        _ctx: &'a OpContext,
        items: &'a [&'a HostItem],
    ) -> BoxFuture<'a, Vec<Result<(), OpError>>> {
        Box::pin(async move {
            let artifacts: Vec<&Artifact> = items.iter().map(|item| &*item.artifact).collect();
            let results = self.backend.create_many(&artifacts).await;
            results
                .into_iter()
                .zip(items)
                .map(|(r, item)| self.record(&item.artifact.key, r))
                .collect()
        })
    }

    fn modify<'a>(
        &'a self,
        _ctx: &'a OpContext,
        current: &'a HostItem,
        intended: &'a HostItem,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move {
            let r = self.backend.modify(&current.artifact, &intended.artifact).await;
            self.record(&intended.artifact.key, r)
        })
    }

    fn delete<'a>(
        &'a self,
        _ctx: &'a OpContext,
        item: &'a HostItem,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move {
            let r = self.backend.delete(&item.artifact).await;
            self.record(&item.artifact.key, r)
        })
    }

    /// One at a time in strict mode, as creates.
    fn change_batch_limit(&self) -> usize {
        if self.shared.strict.load(Ordering::SeqCst) {
            return 1;
        }
        self.backend.change_batch_limit(self.kind)
    }

    fn change_many<'a>(
        &'a self,
        _ctx: &'a OpContext,
        changes: &'a [(&'a HostItem, Option<&'a HostItem>)],
    ) -> BoxFuture<'a, Vec<Result<(), OpError>>> {
        Box::pin(async move {
            let artifacts: Vec<(&Artifact, Option<&Artifact>)> = changes
                .iter()
                .map(|(current, intended)| (&*current.artifact, intended.map(|i| &*i.artifact)))
                .collect();
            let results = self.backend.change_many(&artifacts).await;
            results
                .into_iter()
                .zip(changes)
                .map(|(r, (current, intended))| {
                    let key = &intended.unwrap_or(current).artifact.key;
                    self.record(key, r)
                })
                .collect()
        })
    }

    fn needs_recreate(&self, current: &HostItem, intended: &HostItem) -> bool {
        intended.artifact.spec.needs_recreate(&current.artifact.spec)
    }
}
