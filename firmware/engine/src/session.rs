//! The effectful half: a session bound to one network namespace and one ledger, running
//! observe → plan → prepare → apply → commit → verify (STYLE.md "Transactions").
//!
//! ```text
//!  config ──render, dedupe──▶ desired ─┐
//!  ledger ─────────────────────────────┼─▶ plan (pure) ─▶ prepare: ledger Pending ─▶ apply
//!  host ──observe──▶ inventory ────────┘                                            │
//!  host ◀──────────────────────────────────────────── configurators (graph) ◀───────┘
//!  commit: Pending → Owned / dropped, orphans forgotten, generation ─▶ verify: observe + plan
//! ```
//!
//! The desired state depends on the config alone: a reconcile builds it once and verifies
//! against the same one.
//!
//! The session reads no clock: every entry point takes the caller's `now`, which stamps the
//! Result document and the ledger and is the time its plans measure `when.state` `for`
//! durations at ([`PlanInput::now`]), the verification's included.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use routerd_graph::{OnFailure, Operation, ReconcileOptions, Reconciler, Selection};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::drawing::{Drawing, GraphView};
use routerd_host::bus::SystemBus;
use routerd_host::dnsmasq::DnsmasqBackend;
use routerd_host::files::FilesBackend;
use routerd_host::hostnamed::HostnamedBackend;
use routerd_host::logsink::{LogSinkBackend, LogSinks};
use routerd_host::netlink::NetlinkBackend;
use routerd_host::networkd::NetworkdBackend;
use routerd_host::nftables::NftBackend;
use routerd_host::sysctl::SysctlBackend;
use routerd_host::systemd::{Systemd, SystemdBackend};
use routerd_host::timesyncd::TimesyncdBackend;
use routerd_host::{Artifact, ArtifactKey, ArtifactKind, Backend, Netns, Target};
use routerd_ledger::{
    Attributes, EntryHead, EntryState, Ledger, LedgerChange, LedgerEntry, Origin,
};
use routerd_model::{Config, ConfigErrors};
use sha2::{Digest, Sha256};

use crate::aftr::AftrStore;
use crate::error::EngineError;
use crate::health::HealthStore;
use crate::intent::Intent;
use crate::item::{BackendRegistry, HostItem, artifact_key, graph_key};
use crate::listing::{Listing, observe_kinds};
use crate::plan::{Desired, EnginePlan, PlanInput};
use crate::registry::{BackendContext, Registry};
use crate::render::render_with;
use crate::report::{ReportInput, build};
use crate::result::{ArtifactRef, OperationRecord, ResultDocument};
use crate::runtime::{DhcpLease, RuntimeValues};
use crate::state::{StateStore, unix_ms};

use self::records::{entries_after, executed_records, records_create};

/// How long apply waits for operations that continue in the background.
const ASYNC_DEADLINE: Duration = Duration::from_secs(120);

/// Where a session acts.
#[derive(Clone, Debug)]
pub struct SessionOptions {
    /// `/run/netns/NAME`, or `None` for the process's own namespace.
    pub netns: Option<String>,
    /// Ledger file.
    pub ledger_path: PathBuf,
    /// Open the ledger read-only (plan, dry-run, observe, adopt --candidates).
    pub read_only: bool,
    /// Filesystem root of the file-based configurators (units, dnsmasq); `None`: `/`
    /// ([`Target`]).
    pub root: Option<PathBuf>,
    /// D-Bus address of the service manager's bus; `None`: the system bus.
    pub system_bus: Option<String>,
    /// The process exits right after one command (the CLI): the large structures a command
    /// builds (desired state, snapshots, plans) are left to the exit rather than freed one
    /// allocation at a time, which for a config of 10,000 routes costs more than the exit.
    /// What is freed before the command ends still is, so peak memory is the same.
    pub exit_after_command: bool,
}

/// A parsed config and the digest of its text (which decides the generation).
#[derive(Clone, Debug)]
pub struct ConfigInput {
    /// The typed config.
    pub config: Config,
    /// Hex SHA-256 of the file's bytes.
    pub digest: String,
}

impl ConfigInput {
    /// Reads and parses `path`.
    ///
    /// Errors: every parse and validation error, with file:line:column.
    pub fn load(path: &Path) -> Result<Self, ConfigErrors> {
        // One read: the digest must be of exactly the text that was parsed, even if the file is
        // rewritten meanwhile.
        let text = routerd_model::read_source(path)?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses `text` as the file `file`.
    ///
    /// Errors: as [`ConfigInput::load`].
    pub fn parse(text: &str, file: &str) -> Result<Self, ConfigErrors> {
        let config = routerd_model::parse_config(text, file)?;
        Ok(Self { config, digest: hex_digest(text.as_bytes()) })
    }
}

/// An engine bound to a namespace and a ledger.
pub struct Session {
    registry: BackendRegistry,
    health: Arc<HealthStore>,
    state: Arc<StateStore>,
    aftr: Arc<AftrStore>,
    log_sinks: Arc<LogSinks>,
    /// The D-Bus connection the configurators share.
    bus: Arc<SystemBus>,
    target: Target,
    ledger: Ledger,
    timings: std::sync::Mutex<Vec<(&'static str, Duration)>>,
    /// [`SessionOptions::exit_after_command`].
    leave_to_exit: bool,
}

/// Measures one phase into the session's timings (instrumentation only: nothing decides on it).
macro_rules! timed {
    ($self:ident, $phase:literal, $e:expr) => {{
        let start = std::time::Instant::now();
        let out = $e;
        $self.record_timing($phase, start.elapsed());
        out
    }};
}

/// What [`Session::apply`] did: the current graph after it, the operations run, and the
/// orphans that went with an artifact deleted for good (the graph's `cascade`: no operation
/// of their own), as `(orphan, went with)`.
struct Applied {
    current: routerd_graph::Graph<HostItem>,
    log: Vec<routerd_graph::OpLogEntry<HostItem>>,
    cascaded: Vec<routerd_graph::Cascaded<ArtifactKind>>,
    /// What a strict run did not run after its first failure, with why
    /// (`OnFailure::AbortRun`).
    skipped: Vec<(routerd_graph::Key<ArtifactKind>, Operation, String)>,
}

struct Snapshot {
    /// Shared with the ledger's own copy ([`routerd_ledger::Ledger::heads_shared`]).
    entries: Arc<Vec<EntryHead>>,
    observed: BTreeMap<ArtifactKey, Arc<Artifact>>,
    /// The leases of the lease files the desired state reads
    /// ([`crate::runtime::RuntimeReads::dhcp_leases`]), as read with this observation.
    leases: BTreeMap<PathBuf, Vec<DhcpLease>>,
    warnings: Vec<String>,
}

impl Session {
    /// Opens the built-in backends inside the namespace and the ledger.
    ///
    /// Errors: [`EngineError::Host`] (namespace missing, sockets), [`EngineError::Ledger`].
    pub async fn open(opts: SessionOptions) -> Result<Self, EngineError> {
        Self::open_with(opts, &Registry::new()).await
    }

    /// [`Session::open`] with the backends of the controller crates in `registry` after the
    /// built-in ones (ADR 0010).
    ///
    /// Errors: as [`Session::open`], and a registered backend that could not be built.
    pub async fn open_with(opts: SessionOptions, registry: &Registry) -> Result<Self, EngineError> {
        let netns = match &opts.netns {
            Some(name) => Netns::named(name)?,
            None => Netns::current(),
        };
        let target = Target::new(opts.netns.clone(), opts.root.clone());
        // One connection for every D-Bus configurator, opened when one needs it.
        let bus = Arc::new(SystemBus::new(opts.system_bus.clone()));
        let systemd = Arc::new(Systemd::new(Arc::clone(&bus)));
        let log_sinks = Arc::new(LogSinks::default());
        let mut backends: Vec<Arc<dyn Backend>> = vec![
            Arc::new(NetlinkBackend::new(&netns)?),
            Arc::new(NftBackend::new(&netns)?),
            Arc::new(SysctlBackend::new(&netns)),
            Arc::new(SystemdBackend::new(&target, Arc::clone(&systemd))),
            Arc::new(DnsmasqBackend::new(&target, Arc::clone(&systemd))),
            Arc::new(NetworkdBackend::new(&target, Arc::clone(&bus))),
            Arc::new(TimesyncdBackend::new(&target, Arc::clone(&bus), systemd)),
            Arc::new(FilesBackend::new(&target)),
            Arc::new(HostnamedBackend::new(Arc::clone(&bus))),
            Arc::new(LogSinkBackend::new(&netns, Arc::clone(&log_sinks))),
        ];
        let cx = BackendContext { target: &target, netns: &netns, bus: &bus };
        backends.extend(registry.backends(&cx)?);
        let ledger = if opts.read_only {
            Ledger::open_read_only(&opts.ledger_path)?
        } else {
            Ledger::open(&opts.ledger_path)?
        };
        let mut session = Self::with_backends(backends, ledger, target);
        session.bus = bus;
        session.log_sinks = log_sinks;
        session.leave_to_exit = opts.exit_after_command;
        Ok(session)
    }

    /// A session over `backends` (the host's inventories and configurators, in order of
    /// precedence: a kind two of them serve goes to the first) and the scheduler's stores
    /// (health checks, state variables, AFTR lookups), whose backends come after them. For a
    /// host other than the kernel's: the golden plan cases plan against a recorded one
    /// (`tests/golden`).
    pub fn with_backends(backends: Vec<Arc<dyn Backend>>, ledger: Ledger, target: Target) -> Self {
        let health = Arc::new(HealthStore::default());
        let state = Arc::new(StateStore::default());
        let aftr = Arc::new(AftrStore::default());
        let mut backends = backends;
        backends.push(Arc::new(crate::health::backend(Arc::clone(&health))));
        backends.push(Arc::new(crate::state::backend(Arc::clone(&state))));
        backends.push(Arc::new(crate::aftr::backend(Arc::clone(&aftr))));
        Self {
            registry: BackendRegistry::new(backends),
            health,
            state,
            aftr,
            log_sinks: Arc::new(LogSinks::default()),
            bus: Arc::new(SystemBus::new(None)),
            target,
            ledger,
            timings: Default::default(),
            leave_to_exit: false,
        }
    }

    /// The ledger this session records ownership in (the daemon also keeps its generations
    /// there).
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The log sinks this session's `LogSink` resources install; the supervisor's log layer
    /// hands routerd's events to them ([`LogSinks::emit`]). They live as long as the session:
    /// a process that reconciles once forwards only its own run's events.
    pub fn log_sinks(&self) -> Arc<LogSinks> {
        Arc::clone(&self.log_sinks)
    }

    /// The HealthCheck verdicts this session's inventory reports; the supervisor's scheduler
    /// writes them. Empty in a session nobody probes for (`reconcile --once`): checks then
    /// have no verdict and what depends on their health waits.
    pub fn health(&self) -> Arc<HealthStore> {
        Arc::clone(&self.health)
    }

    /// The StatePolicy variables this session's inventory reports; the supervisor's scheduler
    /// evaluates them. Empty in a session nobody evaluates for (`reconcile --once`): what a
    /// `when.state` gates then waits.
    pub fn state(&self) -> Arc<StateStore> {
        Arc::clone(&self.state)
    }

    /// The AFTR answers this session's inventory reports; the supervisor's scheduler resolves
    /// them. Empty in a session nobody resolves for (`reconcile --once`): a DS-Lite tunnel
    /// that names its AFTR by `aftrFQDN` then waits.
    pub fn aftr(&self) -> Arc<AftrStore> {
        Arc::clone(&self.aftr)
    }

    /// The system bus connection this session's configurators share (opened on first use),
    /// for the supervisor's schedulers that ask D-Bus services too.
    pub fn bus(&self) -> Arc<SystemBus> {
        Arc::clone(&self.bus)
    }

    /// Wall time per phase of the commands run so far (`render`, `observe`, `plan`, `apply`,
    /// ...), in order; a phase run twice appears twice.
    pub fn timings(&self) -> Vec<(&'static str, Duration)> {
        self.timings.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// Frees what a command built, or leaves it to the process exit
    /// ([`SessionOptions::exit_after_command`]).
    fn release<T>(&self, built: T) {
        if self.leave_to_exit {
            std::mem::forget(built);
        } else {
            drop(built);
        }
    }

    fn record_timing(&self, phase: &'static str, took: Duration) {
        if let Ok(mut t) = self.timings.lock() {
            t.push((phase, took));
        }
    }

    /// Each resource's artifacts as found on the host; no operations listed.
    ///
    /// Errors: inventory and ledger failures.
    pub async fn observe(
        &self,
        input: &ConfigInput,
        now: SystemTime,
    ) -> Result<ResultDocument, EngineError> {
        let (desired, listing) = self.desired_listing(&input.config);
        let snap = self.snapshot(&desired, listing).await?;
        let now_ms = unix_ms(now);
        let desired = self.bound(&input.config, &desired, &snap, now_ms);
        let plan = self.plan_of(&desired, &snap, now_ms)?;
        let doc = self.report(&plan, &snap, input, now, "observe", None, false, Vec::new());
        self.release((plan, snap, desired));
        doc
    }

    /// What reconcile would do (`dry_run` only changes the reported mode). Changes nothing.
    ///
    /// Errors: inventory and ledger failures, dependency cycles.
    pub async fn plan(
        &self,
        input: &ConfigInput,
        now: SystemTime,
        dry_run: bool,
    ) -> Result<ResultDocument, EngineError> {
        let (desired, listing) = self.desired_listing(&input.config);
        let snap = self.snapshot(&desired, listing).await?;
        let now_ms = unix_ms(now);
        let desired = self.bound(&input.config, &desired, &snap, now_ms);
        let plan = self.plan_of(&desired, &snap, now_ms)?;
        let mode = if dry_run { "dry-run" } else { "plan" };
        let doc = self.report(&plan, &snap, input, now, mode, None, true, Vec::new());
        self.release((plan, snap, desired));
        doc
    }

    /// The planned transition as Graphviz DOT: every artifact, coloured by the operation the
    /// plan runs on it (created green, modified blue, deleted red, pending gray).
    ///
    /// Errors: inventory and ledger failures, dependency cycles.
    pub async fn dot(&self, input: &ConfigInput, now: SystemTime) -> Result<String, EngineError> {
        Ok(self.drawing(input, &GraphView::Whole, now).await?.dot)
    }

    /// The planned transition drawn as `view` asks (see [`crate::drawing`]).
    ///
    /// Errors: as [`Session::dot`].
    pub async fn drawing(
        &self,
        input: &ConfigInput,
        view: &GraphView,
        now: SystemTime,
    ) -> Result<Drawing, EngineError> {
        let (desired, listing) = self.desired_listing(&input.config);
        let snap = self.snapshot(&desired, listing).await?;
        let now_ms = unix_ms(now);
        let desired = self.bound(&input.config, &desired, &snap, now_ms);
        let plan = self.plan_of(&desired, &snap, now_ms)?;
        Ok(crate::drawing::draw(&plan, &input.config.metadata.name, view))
    }

    /// Applies the config. See the module docs for the steps.
    ///
    /// Errors: inventory and ledger failures, cycles. Failed operations are not errors: they
    /// are in the document, with everything that depends on them skipped.
    pub async fn reconcile(
        &mut self,
        input: &ConfigInput,
        now: SystemTime,
    ) -> Result<ResultDocument, EngineError> {
        let (desired, listing) = self.desired_listing(&input.config);
        let doc = self.reconcile_listed(input, &desired, now, listing).await;
        self.release(desired);
        doc
    }

    /// [`Session::reconcile`] against a desired state built earlier by
    /// [`Session::desired_for`] from `input.config` (a daemon builds it once per config, not
    /// per resync).
    ///
    /// Errors: as [`Session::reconcile`].
    pub async fn reconcile_with(
        &mut self,
        input: &ConfigInput,
        desired: &Arc<Desired>,
        now: SystemTime,
    ) -> Result<ResultDocument, EngineError> {
        self.reconcile_listed(input, desired, now, None).await
    }

    /// [`Session::reconcile_with`], with the host's listing already started.
    async fn reconcile_listed(
        &mut self,
        input: &ConfigInput,
        desired: &Arc<Desired>,
        now: SystemTime,
        listing: Option<Listing>,
    ) -> Result<ResultDocument, EngineError> {
        let mut snap = self.snapshot(desired, listing).await?;
        let now_ms = unix_ms(now);
        let desired = self.bound(&input.config, desired, &snap, now_ms);
        if self.resolve_pending(&snap)? {
            snap.entries = self.ledger.heads_shared()?;
        }
        let mut plan = self.plan_of(&desired, &snap, now_ms)?;

        let (created_keys, prepared) = timed!(self, "prepare", self.prepare(&plan, input, now)?);
        let strict = input.config.spec.reconcile.mode == routerd_model::ReconcileMode::Strict;
        self.registry.begin_apply(strict);
        let on_failure = if strict { OnFailure::AbortRun } else { OnFailure::BlockDependents };
        let Applied { current, log, cascaded, skipped } =
            timed!(self, "apply", self.apply(&mut plan, on_failure).await?);
        // The verification's listing of the kernel starts now, on a helper thread, while the
        // ledger is committed and the records are built (none of that touches the host).
        let listing = if log.is_empty() { None } else { Listing::start(self.registry.backends()) };

        // Prepare recorded the creates of what the ledger did not own as the only pending
        // entries (resolve_pending cleared any older ones): those that did not run or failed
        // go, the rest are promoted at once. An owned entry is never among them, so a failed
        // re-create of an owned artifact leaves its entry as it was.
        let mut changes = Vec::new();
        for (key, put) in created_keys.iter().zip(&prepared) {
            let LedgerChange::Put(entry) = put else { continue };
            if !current.contains(&graph_key(key)) {
                let (kind, name) = (entry.kind.clone(), entry.name.clone());
                changes.push(LedgerChange::Remove { kind, name });
            }
        }
        if !prepared.is_empty() {
            changes.push(LedgerChange::PromoteAll);
        }
        let deleted = |e: &&routerd_graph::OpLogEntry<HostItem>| {
            e.operation == Operation::Delete && e.error.is_none()
        };
        let known: BTreeSet<String> = if log.iter().any(|e| deleted(&e)) || !cascaded.is_empty() {
            snap.entries.iter().map(EntryHead::key).collect()
        } else {
            BTreeSet::new()
        };
        for e in log.iter().filter(deleted) {
            let key = artifact_key(&e.key);
            let still_desired = desired.intended.contains(&e.key);
            if !still_desired
                && known.contains(&routerd_ledger::entry_key(key.kind.as_str(), &key.name))
            {
                changes
                    .push(LedgerChange::Remove { kind: key.kind.as_str().into(), name: key.name });
            }
        }
        // Gone with what they went with: out of the ledger like a deleted orphan.
        for (item, _) in &cascaded {
            let key = artifact_key(item);
            if known.contains(&routerd_ledger::entry_key(key.kind.as_str(), &key.name)) {
                changes
                    .push(LedgerChange::Remove { kind: key.kind.as_str().into(), name: key.name });
            }
        }
        for o in plan.orphans.iter().filter(|o| o.cleanup.is_none()) {
            changes.push(LedgerChange::Remove {
                kind: o.key.kind.as_str().into(),
                name: o.key.name.clone(),
            });
        }
        changes.extend(crate::plan::owner_changes(&desired, &snap.entries));
        let applied = self.ledger.applied_generation()?;
        // A resync that changed nothing of an applied config has nothing to commit: no write
        // transaction, no fsync.
        if !changes.is_empty() || applied.digest.as_deref() != Some(input.digest.as_str()) {
            let generation = self.generation(&input.digest)?;
            changes.push(LedgerChange::SetGeneration { generation, digest: input.digest.clone() });
            timed!(self, "commit", self.ledger.apply(&changes)?);
        }

        let reconciled = |plan: &EnginePlan, snap: &Snapshot, executed| {
            self.report(plan, snap, input, now, "reconcile", Some(executed), true, Vec::new())
        };
        if log.is_empty() {
            // Nothing ran: the host is as observed, and the plan already is the verification.
            let executed = executed_records(&plan, &log, &cascaded, &skipped, &self.registry);
            plan.current = current;
            let doc = reconciled(&plan, &snap, executed);
            self.release((plan, snap, desired, prepared, changes, created_keys));
            return doc;
        }
        // Only the desired state, the executed records and the ledger carry over to the
        // verification: the plan, the operation log and the graph are large.
        // (Built on two threads at once, the records and the ledger view took longer than one
        // after the other: both allocate and free thousands of small blocks.)
        let executed = timed!(
            self,
            "records",
            executed_records(&plan, &log, &cascaded, &skipped, &self.registry)
        );
        drop((plan, log, current, created_keys));
        // The ledger as just committed, without reading it back (apply is all or nothing).
        let entries = timed!(
            self,
            "ledger-view",
            entries_after(
                Arc::unwrap_or_clone(std::mem::take(&mut snap.entries)),
                prepared,
                &changes,
            )
        );
        drop(changes);
        let after = self.snapshot_with(&desired, Arc::new(entries), listing).await?;
        let verified = self.plan_of(&desired, &after, now_ms)?;
        let doc = reconciled(&verified, &after, executed);
        self.release((verified, after, desired, snap));
        doc
    }

    /// Lists adoption candidates, and with `apply` records the matching ones as owned (ledger
    /// only; the host is not touched). Drifted candidates are refused and stay listed.
    ///
    /// Errors: inventory and ledger failures.
    pub async fn adopt(
        &self,
        input: &ConfigInput,
        now: SystemTime,
        apply: bool,
    ) -> Result<ResultDocument, EngineError> {
        self.adopt_only(input, now, apply, None).await
    }

    /// [`Session::adopt`], recording only the candidates named in `only` (`kind/name`, as the
    /// Result document lists them) when given. Drifted candidates are refused either way.
    ///
    /// Errors: as [`Session::adopt`].
    pub async fn adopt_only(
        &self,
        input: &ConfigInput,
        now: SystemTime,
        apply: bool,
        only: Option<&BTreeSet<String>>,
    ) -> Result<ResultDocument, EngineError> {
        let (desired, listing) = self.desired_listing(&input.config);
        let snap = self.snapshot(&desired, listing).await?;
        let now_ms = unix_ms(now);
        let desired = self.bound(&input.config, &desired, &snap, now_ms);
        let plan = self.plan_of(&desired, &snap, now_ms)?;
        if !apply {
            return self.report(&plan, &snap, input, now, "adopt", None, false, Vec::new());
        }
        let recorded_at = unix_secs(now);
        let generation = self.ledger.applied_generation()?.generation;
        let mut changes = Vec::new();
        let mut adopted = Vec::new();
        let chosen = |c: &&crate::plan::Candidate| {
            only.is_none_or(|only| {
                only.contains(&format!("{}/{}", c.intent.kind(), c.intent.key().name))
            })
        };
        for c in plan.candidates.iter().filter(|c| c.diff.is_empty()).filter(chosen) {
            changes.push(LedgerChange::Put(LedgerEntry {
                kind: c.intent.kind().as_str().into(),
                name: c.intent.key().name.clone(),
                owner: c.intent.owner.to_string(),
                co_owners: c.intent.co_owners.iter().map(|o| o.to_string()).collect(),
                origin: Origin::Adopted,
                state: EntryState::Owned,
                generation,
                recorded_at,
                attributes: Attributes::of(&c.intent.artifact.spec),
            }));
            adopted.push(ArtifactRef {
                kind: c.intent.kind().as_str().into(),
                name: c.intent.key().name.clone(),
                owner: c.intent.owner.to_string(),
            });
        }
        self.ledger.apply(&changes)?;
        drop(plan);
        let snap = self.snapshot(&desired, None).await?;
        let plan = self.plan_of(&desired, &snap, now_ms)?;
        self.report(&plan, &snap, input, now, "adopt", None, false, adopted)
    }

    /// Renders `config` and builds its desired state (depends on the config and this build's
    /// configurators only: reusable for every reconcile of the same config).
    pub fn desired_for(&self, config: &Config) -> Arc<Desired> {
        self.desired(config)
    }

    /// Renders `config` from the config alone and builds its desired state.
    fn desired(&self, config: &Config) -> Arc<Desired> {
        self.desired_with(config, RuntimeValues::default())
    }

    /// Renders `config` from the config alone and builds its desired state, with the kernel's
    /// listing for the snapshot started in between: render keeps both CPUs busy, building the
    /// desired state one, and neither reads the host.
    fn desired_listing(&self, config: &Config) -> (Arc<Desired>, Option<Listing>) {
        let mut listing = None;
        let desired = self.desired_then(config, RuntimeValues::default(), || {
            listing = Listing::start(self.registry.backends());
        });
        (desired, listing)
    }

    /// Renders `config` with `runtime` values and builds its desired state.
    fn desired_with(&self, config: &Config, runtime: RuntimeValues) -> Arc<Desired> {
        self.desired_then(config, runtime, || ())
    }

    /// [`Session::desired_with`], calling `after_render` between the render and the desired state.
    fn desired_then(
        &self,
        config: &Config,
        runtime: RuntimeValues,
        after_render: impl FnOnce(),
    ) -> Arc<Desired> {
        let rendered = timed!(self, "render", render_with(config, &self.target, &runtime));
        after_render();
        let protected = protected_ifnames(config);
        let registry = &self.registry;
        let support = |i: &Intent| registry.support(&i.artifact);
        let mut desired = timed!(self, "desired", Desired::new(rendered, &protected, &support));
        desired.runtime = runtime;
        Arc::new(desired)
    }

    /// `desired` with the runtime values of `snap` at `now_ms` (ADR 0008): the same when they
    /// are the ones it was rendered with (always, on a host where nothing produced any), else
    /// `config` rendered again with them.
    fn bound(
        &self,
        config: &Config,
        desired: &Arc<Desired>,
        snap: &Snapshot,
        now_ms: u64,
    ) -> Arc<Desired> {
        let runtime = RuntimeValues::from_observed(&snap.observed, &desired.reads, now_ms)
            .with_dhcp_leases(&snap.leases, now_ms);
        if runtime == desired.runtime {
            return Arc::clone(desired);
        }
        self.desired_with(config, runtime)
    }

    async fn snapshot(
        &self,
        desired: &Desired,
        listing: Option<Listing>,
    ) -> Result<Snapshot, EngineError> {
        let entries = timed!(self, "ledger-read", self.ledger.heads_shared()?);
        self.snapshot_with(desired, entries, listing).await
    }

    /// Observes the host for `desired` and the ledger `entries`; the backends `listing` covers
    /// come from it (started earlier, [`Listing::start`]), the others are observed here first.
    async fn snapshot_with(
        &self,
        desired: &Desired,
        entries: Arc<Vec<EntryHead>>,
        listing: Option<Listing>,
    ) -> Result<Snapshot, EngineError> {
        let start = std::time::Instant::now();
        // Only backends that cannot list their kinds read the wanted keys (sysctls).
        let wanted_kinds: BTreeSet<ArtifactKind> = self
            .registry
            .backends()
            .iter()
            .filter(|b| b.observes_wanted_only())
            .flat_map(|b| b.kinds().iter().copied())
            .collect();
        let mut wanted: BTreeMap<ArtifactKind, BTreeSet<ArtifactKey>> = BTreeMap::new();
        for i in desired.intents.iter().filter(|i| wanted_kinds.contains(&i.kind())) {
            wanted.entry(i.kind()).or_default().insert(i.key().clone());
        }
        for e in entries.iter() {
            if let Some(kind) = ArtifactKind::parse(&e.kind).filter(|k| wanted_kinds.contains(k)) {
                wanted.entry(kind).or_default().insert(ArtifactKey::new(kind, e.name.clone()));
            }
        }
        let backends = self.registry.backends();
        let elsewhere = listing.as_ref().map(|l| l.backends.clone()).unwrap_or_default();
        let mut lists: Vec<Vec<Arc<Artifact>>> = Vec::with_capacity(backends.len());
        for (i, backend) in backends.iter().enumerate() {
            let mut list = Vec::new();
            if !elsewhere.contains(&i) {
                observe_kinds(backend.as_ref(), &wanted, &mut list).await?;
            }
            lists.push(list);
        }
        if let Some(listing) = listing {
            match listing.finish().await? {
                Some(found) => {
                    for (i, list) in elsewhere.iter().zip(found) {
                        lists[*i] = list;
                    }
                }
                // The thread died: list its backends here.
                None => {
                    for i in &elsewhere {
                        observe_kinds(backends[*i].as_ref(), &wanted, &mut lists[*i]).await?;
                    }
                }
            }
        }
        let mut listed: Vec<Arc<Artifact>> = Vec::with_capacity(lists.iter().map(Vec::len).sum());
        listed.extend(lists.into_iter().flatten());
        // Sorted once and built in one pass (the map would otherwise be searched per insert);
        // the stable sort keeps the first of duplicate keys first.
        listed.sort_by(|a, b| a.key.cmp(&b.key));
        let mut warnings = Vec::new();
        let mut unique: Vec<(ArtifactKey, Arc<Artifact>)> = Vec::with_capacity(listed.len());
        for a in listed {
            if unique.last().is_some_and(|(key, _)| *key == a.key) {
                warnings
                    .push(format!("{} is on the host more than once; the first is used", a.key));
                continue;
            }
            unique.push((a.key.clone(), a));
        }
        let observed: BTreeMap<ArtifactKey, Arc<Artifact>> = unique.into_iter().collect();
        let leases = read_leases(&desired.reads.dhcp_leases, &mut warnings);
        self.record_timing("observe", start.elapsed());
        let pending = entries.iter().filter(|e| e.state == EntryState::Pending).count();
        if pending > 0 && self.ledger.is_read_only() {
            warnings.push(format!(
                "the ledger holds {pending} entries from an interrupted reconcile; the next reconcile resolves them"
            ));
        }
        Ok(Snapshot { entries, observed, leases, warnings })
    }

    /// Plans `desired` against `snap` for the time `now_ms` ([`PlanInput::now`]).
    fn plan_of(
        &self,
        desired: &Arc<Desired>,
        snap: &Snapshot,
        now_ms: u64,
    ) -> Result<EnginePlan, EngineError> {
        let registry = &self.registry;
        let observes = |k: ArtifactKind| registry.observes(k);
        timed!(
            self,
            "plan",
            crate::plan::plan(
                desired,
                &PlanInput {
                    observed: &snap.observed,
                    ledger: &snap.entries,
                    observes: &observes,
                    now: now_ms,
                }
            )
        )
    }

    /// A crash between prepare and commit leaves `Pending` entries: present on the host means
    /// the create ran (we created it), absent means it did not.
    /// Returns whether the ledger changed.
    fn resolve_pending(&self, snap: &Snapshot) -> Result<bool, EngineError> {
        let changes: Vec<LedgerChange> = snap
            .entries
            .iter()
            .filter(|e| e.state == EntryState::Pending)
            .map(|e| {
                let present = ArtifactKind::parse(&e.kind).is_some_and(|k| {
                    snap.observed.contains_key(&ArtifactKey::new(k, e.name.clone()))
                });
                if present {
                    LedgerChange::Promote { kind: e.kind.clone(), name: e.name.clone() }
                } else {
                    LedgerChange::Remove { kind: e.kind.clone(), name: e.name.clone() }
                }
            })
            .collect();
        self.ledger.apply(&changes)?;
        Ok(!changes.is_empty())
    }

    /// Records every create the plan is about to run as `Pending`, in one transaction, except
    /// the creates of artifacts the ledger already owns (see [`records_create`]).
    /// Returns the keys and, at the same positions, the `Put` changes written.
    fn prepare(
        &self,
        plan: &EnginePlan,
        input: &ConfigInput,
        now: SystemTime,
    ) -> Result<(Vec<ArtifactKey>, Vec<LedgerChange>), EngineError> {
        let generation = self.generation(&input.digest)?;
        let by_key: FxHashMap<&ArtifactKey, &Intent> =
            plan.desired.intents.iter().map(|i| (i.key(), i)).collect();
        // Sized once: a cold reconcile records thousands, and growth slack would be the
        // reconcile's peak memory.
        let creates = plan.ops.ops.iter().filter(|o| o.op == Operation::Create).count();
        let (mut keys, mut intents) = (Vec::with_capacity(creates), Vec::with_capacity(creates));
        let mut seen = FxHashSet::with_capacity_and_hasher(creates, Default::default());
        for op in plan.ops.ops.iter().filter(|o| o.op == Operation::Create) {
            let key = artifact_key(&op.key);
            let Some(intent) = by_key.get(&key) else { continue };
            if !records_create(plan, intent) || !seen.insert(key.clone()) {
                continue;
            }
            keys.push(key);
            intents.push(*intent);
        }
        let recorded_at = unix_secs(now);
        let puts: Vec<LedgerChange> = intents
            .iter()
            .map(|intent| {
                let key = intent.key();
                LedgerChange::Put(LedgerEntry {
                    kind: key.kind.as_str().into(),
                    name: key.name.clone(),
                    owner: intent.owner.to_string(),
                    co_owners: intent.co_owners.iter().map(|o| o.to_string()).collect(),
                    origin: Origin::Created,
                    state: EntryState::Pending,
                    generation,
                    recorded_at,
                    attributes: Attributes::of(&intent.artifact.spec),
                })
            })
            .collect();
        self.ledger.apply(&puts)?;
        Ok((keys, puts))
    }

    /// Runs the plan; the current graph is moved out of `plan` and returned updated.
    async fn apply(
        &self,
        plan: &mut EnginePlan,
        on_failure: OnFailure,
    ) -> Result<Applied, EngineError> {
        let mut current = std::mem::take(&mut plan.current);
        if plan.ops.ops.is_empty() && !current.async_ops_in_progress() {
            return Ok(Applied {
                current,
                log: Vec::new(),
                cascaded: Vec::new(),
                skipped: Vec::new(),
            });
        }
        let reconciler = Reconciler::with_options(&self.registry, ReconcileOptions { on_failure });
        let deadline = tokio::time::Instant::now() + ASYNC_DEADLINE;
        let mut log = Vec::new();
        let mut cascaded = Vec::new();
        let mut skipped = Vec::new();
        loop {
            let status = reconciler
                .reconcile(&mut current, plan.intended(), Selection::All)
                .await
                .map_err(|e| EngineError::Cycle(e.to_string()))?;
            log.extend(status.op_log);
            cascaded.extend(status.cascaded);
            if !status.skipped.is_empty() {
                // Strict mode ended the run: another pass would run what it skipped.
                skipped = status.skipped;
                break;
            }
            let Some(mut resume) = status.ready_to_resume.filter(|_| status.async_ops_in_progress)
            else {
                break;
            };
            if tokio::time::timeout_at(deadline, resume.wait()).await.is_err() {
                if let Some(cancel) = status.cancel {
                    cancel.cancel();
                    cancel.wait().await;
                }
                break;
            }
        }
        Ok(Applied { current, log, cascaded, skipped })
    }

    fn generation(&self, digest: &str) -> Result<u64, EngineError> {
        let applied = self.ledger.applied_generation()?;
        Ok(if applied.digest.as_deref() == Some(digest) {
            applied.generation
        } else {
            applied.generation + 1
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn report(
        &self,
        plan: &EnginePlan,
        snap: &Snapshot,
        input: &ConfigInput,
        now: SystemTime,
        mode: &str,
        executed: Option<Vec<Arc<OperationRecord>>>,
        with_operations: bool,
        adopted: Vec<ArtifactRef>,
    ) -> Result<ResultDocument, EngineError> {
        Ok(timed!(
            self,
            "report",
            build(
                plan,
                ReportInput {
                    config: &input.config,
                    mode,
                    generation: self.generation(&input.digest)?,
                    timestamp: humantime::format_rfc3339_seconds(now).to_string(),
                    executed,
                    with_operations,
                    adopted,
                    warnings: snap.warnings.clone(),
                },
            )
        ))
    }
}

/// The warnings of `config`'s render and de-duplication by resource ID, from the config alone
/// (no host, no ledger): two resources sharing or conflicting on an artifact, an ensure on a
/// protected interface, a value routerd replaces. What `routerd validate` and the web editor
/// show besides errors; a plan's Result document carries the same per resource.
pub fn config_warnings(config: &Config) -> BTreeMap<String, Vec<String>> {
    let rendered = crate::render::render(config);
    Desired::new(rendered, &protected_ifnames(config), &|_| crate::item::Support::Applied).warnings
}

/// Kernel names of `spec.reconcile.protectedInterfaces` (interface resource names or kernel
/// names) and of every interface of `spec.reconcile.protectedZones`.
fn protected_ifnames(config: &Config) -> BTreeSet<String> {
    let ifname = |name: &str| {
        config.interface_ifname(name).map_or_else(|| name.to_string(), |i| i.into_owned())
    };
    let mut out: BTreeSet<String> =
        config.spec.reconcile.protected_interfaces.iter().map(|p| ifname(p)).collect();
    for zone in &config.spec.reconcile.protected_zones {
        if let Some(z) = config.spec::<routerd_model::spec::firewall::ZoneSpec>(zone) {
            out.extend(z.interfaces.iter().map(|i| ifname(i)));
        }
    }
    out
}

/// The leases of each lease file in `files` (dnsmasq's format, `routerd_host::dnsmasq::leases`).
/// A file that does not exist has none; one that cannot be read has none too, with a warning
/// in `warnings`: the names taken from it are withdrawn until it reads again.
fn read_leases(
    files: &BTreeSet<PathBuf>,
    warnings: &mut Vec<String>,
) -> BTreeMap<PathBuf, Vec<DhcpLease>> {
    let mut leases = BTreeMap::new();
    for path in files {
        match routerd_host::dnsmasq::leases::read(path) {
            Ok(read) => {
                leases.insert(path.clone(), read);
            }
            Err(e) => warnings.push(format!(
                "DHCP lease file {}: {e}; no names are taken from it",
                path.display()
            )),
        }
    }
    leases
}

fn hex_digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

#[path = "session_records.rs"]
mod records;
#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
