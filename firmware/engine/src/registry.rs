//! The registry: how a controller crate (`firmware/dns`, `firmware/vpn`, `firmware/sam`) adds
//! its resource kinds, artifact kinds, configurators, inventories and doctor checks without
//! editing a `match` in this crate, `routerd-model` or `routerd-host` (ADR 0010).
//!
//! A controller crate exposes one function, `register(&mut Registry) -> Result<(), RegistryError>`,
//! and the binary calls it once at start-up, before it parses a config: that call is the one
//! line a crate adds. [`Registry::resource_kind`] and [`Registry::artifact_kind`] make the
//! kinds known to the whole process (parsing, the ledger, Result documents are read anywhere);
//! the backends and doctor checks stay with the [`Registry`] value, which the binary hands to
//! [`crate::Session::open_with`] and to its doctor.
//!
//! The walk-through is `docs/adding-a-kind.md`; `tests/kind-example` is a crate built this way.

use std::sync::{Arc, RwLock};

use routerd_host::bus::SystemBus;
use routerd_host::kinds::external::{self as host_external, ExternalArtifactKind};
use routerd_host::{Backend, HostError, Netns, Target};
use routerd_model::external::{self as model_external, ExternalKind};
use routerd_model::status::DoctorCheck;
use routerd_model::{Config, Resource};

use crate::kind_status::{KindStatus, StatusFacts};
use crate::render::{Out, RenderCtx};
use crate::result::ResultDocument;

/// A controller crate's render of one of its resource kinds: the resource's artifact intents,
/// as a built-in kind's `Render` gives them (seed 000: every resource declares the host state
/// it makes). Pure: reads the config, never the host.
pub trait KindRender: Send + Sync {
    /// Renders `res` (of the kind this render was registered for) into `out`. The typed spec
    /// is `res.external_spec::<T>()`; a reference that does not resolve is a warning
    /// ([`Out::warn`]), never a panic.
    fn render(&self, ctx: &RenderCtx<'_>, res: &Resource, out: &mut Out);

    /// The conditions and status fields of `res` beyond its phase (ADR 0013), from `facts`:
    /// its artifacts as this plan or reconcile found and changed them. Listed after the
    /// engine's own conditions (`Ready`, `Blocked`, ...), which still decide the phase. Pure
    /// and cheap: it runs for every resource of the kind in every Result document. Default:
    /// nothing.
    fn status(&self, res: &Resource, facts: &StatusFacts<'_>) -> KindStatus {
        let _ = (res, facts);
        KindStatus::default()
    }
}

/// A controller crate's doctor checks, run with the built-in ones (`routerctl doctor`, the web
/// UI's doctor page).
pub trait DoctorChecks: Send + Sync {
    /// Appends this crate's checks for `config`; `current` is the host as last observed or
    /// reconciled, if known. Each check's code is the crate's own letter and number (`D001`),
    /// never reused.
    fn run(&self, config: &Config, current: Option<&ResultDocument>, out: &mut Vec<DoctorCheck>);
}

/// What a backend of a controller crate is built from, in the session's namespace.
pub struct BackendContext<'a> {
    /// Where its files and units live.
    pub target: &'a Target,
    /// The network namespace the session works in.
    pub netns: &'a Netns,
    /// The D-Bus connection the configurators share.
    pub bus: &'a Arc<SystemBus>,
}

/// What a controller crate's watcher is started in: the daemon's namespace and files.
pub struct WatchContext<'a> {
    /// Where the router's files live.
    pub target: &'a Target,
    /// The network namespace the daemon works in.
    pub netns: &'a Netns,
}

/// A stream of change notices (each one line, for the log): every notice asks the daemon for
/// a reconcile soon, as a netlink notification does.
pub type Notices = futures::stream::BoxStream<'static, String>;

/// Starts a watcher in a daemon.
pub type WatcherFactory =
    Box<dyn Fn(&WatchContext<'_>) -> Result<Notices, HostError> + Send + Sync>;

/// Builds a backend for a session.
pub type BackendFactory =
    Box<dyn Fn(&BackendContext<'_>) -> Result<Arc<dyn Backend>, HostError> + Send + Sync>;

/// Why the registry refused a kind.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The resource kind's name is taken.
    #[error(transparent)]
    ResourceKind(#[from] model_external::RegisterError),
    /// The artifact kind's string or family is taken.
    #[error(transparent)]
    ArtifactKind(#[from] host_external::RegisterError),
}

/// The controller crates' kinds, backends and doctor checks (module doc).
#[derive(Default)]
pub struct Registry {
    backends: Vec<BackendFactory>,
    doctor: Vec<Arc<dyn DoctorChecks>>,
    watchers: Vec<WatcherFactory>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("backends", &self.backends.len())
            .field("doctor", &self.doctor.len())
            .field("watchers", &self.watchers.len())
            .finish()
    }
}

/// Renders by resource kind name. Append-only: a registered kind keeps its render.
static RENDERS: RwLock<Vec<(&'static ExternalKind, Arc<dyn KindRender>)>> = RwLock::new(Vec::new());

impl Registry {
    /// An empty registry: the built-in kinds only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the resource kind `kind`, rendered by `render`. From now on the process parses it
    /// (`routerd_model::parse_config`) and renders it.
    ///
    /// Errors: its name is a built-in kind's or another crate's.
    pub fn resource_kind(
        &mut self,
        kind: &'static ExternalKind,
        render: impl KindRender + 'static,
    ) -> Result<&mut Self, RegistryError> {
        model_external::register(kind)?;
        let mut renders = RENDERS.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !renders.iter().any(|(k, _)| std::ptr::eq(*k, kind)) {
            renders.push((kind, Arc::new(render)));
        }
        Ok(self)
    }

    /// Adds the artifact kind `kind`. From now on the process reads it in ledgers, plans and
    /// Result documents; a backend of its family ([`Registry::backend`]) applies it.
    ///
    /// Errors: its string is a built-in kind's or another crate's, or its family is built in.
    pub fn artifact_kind(
        &mut self,
        kind: &'static ExternalArtifactKind,
    ) -> Result<&mut Self, RegistryError> {
        host_external::register(kind)?;
        Ok(self)
    }

    /// Adds a backend (inventory and configurator of a family), built for each session. The
    /// built-in backends come first: a kind two backends serve goes to the first.
    pub fn backend(
        &mut self,
        factory: impl Fn(&BackendContext<'_>) -> Result<Arc<dyn Backend>, HostError>
        + Send
        + Sync
        + 'static,
    ) -> &mut Self {
        self.backends.push(Box::new(factory));
        self
    }

    /// Adds a watcher: what the crate listens to on the host between resyncs (a DNS server's
    /// NOTIFY), started once by the daemon ([`Registry::watchers`]). A notice only says that
    /// something changed; the reconcile it triggers observes the host itself.
    pub fn watcher(
        &mut self,
        factory: impl Fn(&WatchContext<'_>) -> Result<Notices, HostError> + Send + Sync + 'static,
    ) -> &mut Self {
        self.watchers.push(Box::new(factory));
        self
    }

    /// Starts every watcher in `cx`.
    ///
    /// Errors: the first watcher that could not start (its socket was refused).
    pub fn watchers(&self, cx: &WatchContext<'_>) -> Result<Vec<Notices>, HostError> {
        self.watchers.iter().map(|f| f(cx)).collect()
    }

    /// Adds doctor checks.
    pub fn doctor_checks(&mut self, checks: impl DoctorChecks + 'static) -> &mut Self {
        self.doctor.push(Arc::new(checks));
        self
    }

    /// The backends for a session in `cx`.
    ///
    /// Errors: the first backend that could not be built.
    pub fn backends(&self, cx: &BackendContext<'_>) -> Result<Vec<Arc<dyn Backend>>, HostError> {
        self.backends.iter().map(|f| f(cx)).collect()
    }

    /// Runs every registered doctor check, in registration order.
    pub fn run_doctor(
        &self,
        config: &Config,
        current: Option<&ResultDocument>,
        out: &mut Vec<DoctorCheck>,
    ) {
        for checks in &self.doctor {
            checks.run(config, current, out);
        }
    }
}

/// The render registered for `kind`.
pub(crate) fn render_of(kind: &'static ExternalKind) -> Option<Arc<dyn KindRender>> {
    let renders = RENDERS.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    renders.iter().find(|(k, _)| std::ptr::eq(*k, kind)).map(|(_, r)| Arc::clone(r))
}
