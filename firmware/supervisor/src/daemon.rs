//! `routerd serve`: the reconcile loop.
//!
//! One task owns the engine [`Session`], the applied config and its desired state; everything
//! else sends it a [`Msg`] (a host change seen on the rtnetlink multicast groups, the periodic
//! resync, an API request) and reads [`Snapshot`]s through a `watch` channel (DESIGN.md,
//! Supervisor).
//!
//! ```text
//! NetlinkMonitor ──Host(change)──┐
//! NftMonitor ──────Nftables───────┤
//! control API ─────Api, Apply,───┼─▶ mpsc ─▶ loop ─▶ reconcile ─▶ watch<Snapshot> ─▶ API
//!                  Confirm, Rollback                  │
//! resync timer, confirm deadline ┘                    └▶ ledger: generations, pending confirm
//!
//! gateway monitor (own task) ─▶ Arc<GatewayStore> ─▶ doctor (G001), charts
//! ```
//!
//! The nftables notifications (`NFNLGRP_NFTABLES`) of a transaction that touched a `routerd_*`
//! table trigger a reconcile, so a table deleted or edited by hand is put back within the
//! debounce and one reconcile. Transactions the daemon committed itself are skipped
//! ([`routerd_engine::host_events::is_foreign_edit`]). No feedback loop either way: a
//! reconcile that finds the tables as desired sends no batch, so causes no notification; where
//! the daemon cannot recognise its own commits (a PID namespace of its own) its apply costs one
//! more, no-op, reconcile.
//!
//! A burst of notifications (a reconcile of its own changes, an operator's `ip` commands) is
//! debounced into one reconcile; a reconcile always observes the host itself, so a lost
//! notification only delays the repair until the next resync. SIGTERM and SIGINT stop the loop
//! between reconciles: a running reconcile finishes and commits its ledger transaction first.
//!
//! Generations: every applied config is recorded with its text, author, channel and comment.
//! An apply with a confirm window records a durable pending confirm; unconfirmed at the
//! deadline (also across a restart) the previous generation's text is applied again. The config
//! file holds the last confirmed text: it is what a reboot without the ledger would apply.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use routerd_engine::Netns;
use routerd_engine::host_events::{NetlinkMonitor, NftMonitor, is_foreign_edit};
use routerd_engine::plan::Desired;
use routerd_engine::registry::Registry;
use routerd_engine::{ConfigInput, ResultDocument, Session, SessionOptions};
use routerd_ledger::{Channel, GenerationRecord, PendingConfirm};
use routerd_model::status::{ConfirmStatus, DaemonState, DaemonStatus, TimedOutConfirm, Triggers};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{mpsc, watch};

use crate::control::{ControlSocket, Snapshot, router};
use crate::metrics::Metrics;
mod changes;

use crate::report::{last_repair, named_operations, summary};
use crate::service::{self, NotifyState};
use crate::status::{StatusTracker, spec_digests};

pub use crate::msg::{
    Actor, ApplyOutcome, ApplyRequest, ChangeRefused, EngineAnswer, EngineQuery, Msg,
    RollbackRequest, STOPPING, Stopping, Trigger, request,
};

/// Options of `routerd serve`.
pub struct ServeOptions {
    /// The config file.
    pub config: PathBuf,
    /// Target namespace (`/run/netns/NAME`), `None` for the daemon's own.
    pub netns: Option<String>,
    /// Ledger file.
    pub ledger: PathBuf,
    /// Filesystem root of the unit and dnsmasq files (`None`: `/`).
    pub host_root: Option<PathBuf>,
    /// D-Bus address of systemd's bus (`None`: the system bus).
    pub systemd_bus: Option<String>,
    /// Control socket path.
    pub control_socket: PathBuf,
    /// Time between two reconciles when nothing triggers one.
    pub resync: Duration,
    /// How long to wait for more triggers after the first, so a burst is one reconcile.
    pub debounce: Duration,
    /// Where the credentials live.
    pub state_dir: PathBuf,
    /// The web UI's address, if it is served.
    pub listen: Option<std::net::SocketAddr>,
    /// RAUC and the health gate.
    pub ota: crate::ota::OtaOptions,
    /// How often the charts' interface counters are read.
    pub sample_interval: Duration,
    /// How often each default route's gateway is probed (the doctor's G001, the charts).
    pub gateway_interval: Duration,
}

/// The applied config.
struct Applied {
    yaml: Arc<str>,
    input: ConfigInput,
    desired: Arc<Desired>,
    /// Spec digest per resource ID: a change is a new resource generation.
    digests: BTreeMap<String, String>,
}

impl Applied {
    fn new(session: &Session, yaml: String, input: ConfigInput) -> Self {
        let desired = session.desired_for(&input.config);
        let digests = spec_digests(&input.config);
        Self { yaml: Arc::from(yaml), input, desired, digests }
    }
}

/// The loop's state.
struct Daemon {
    session: Session,
    /// The controller crates' kinds, backends and doctor checks.
    registry: Registry,
    applied: Applied,
    config_path: PathBuf,
    status: DaemonStatus,
    snapshot: watch::Sender<Snapshot>,
    statuses: StatusTracker,
    metrics: Arc<Metrics>,
    auth: crate::auth::AuthStore,
    /// The last Result document and when its reconcile finished.
    last: Option<(Arc<ResultDocument>, SystemTime)>,
    /// Since when each DHCP client binding has been without its lease, by resource ID (the
    /// doctor's B001 and B002).
    unbound_since: std::collections::BTreeMap<String, SystemTime>,
    resync: Duration,
    /// Confirm deadline as a monotonic instant, with the ledger's record of it.
    confirm: Option<(tokio::time::Instant, PendingConfirm)>,
    /// The probes of the applied config's HealthChecks.
    health: crate::health::HealthScheduler,
    /// The evaluation of the applied config's StatePolicies.
    state: crate::state::StateScheduler,
    /// The AFTR lookups of the applied config's DS-Lite tunnels.
    aftr: crate::aftr::AftrScheduler,
    /// The default routes' gateways and their last hour of probes, written by the gateway
    /// monitor task (aborted with the daemon through `_gateway_task`); read with
    /// [`crate::gateway::GatewayStore::all`].
    gateways: Arc<crate::gateway::GatewayStore>,
    _gateway_task: GatewayTask,
    /// The last observation of the host made for the doctor, and when.
    observed: Option<(Instant, Arc<ResultDocument>)>,
    /// The charts' recent history (each reconcile's duration and phase is added here).
    series: crate::series::SharedSeries,
}

/// Stops the gateway monitor with the daemon.
struct GatewayTask(tokio::task::AbortHandle);

impl Drop for GatewayTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs the daemon until SIGTERM or SIGINT, with the controller crates of `registry` (their
/// backends in its session, their doctor checks in its doctor). Returns the exit code: 0 after
/// a clean stop, 1 when the config does not validate (nothing was touched).
///
/// Errors: the namespace, the ledger, the netlink sockets or the control socket cannot be
/// opened.
pub async fn serve(opts: ServeOptions, registry: Registry) -> anyhow::Result<u8> {
    let netns = match &opts.netns {
        Some(name) => Netns::named(name)?,
        None => Netns::current(),
    };
    let session = Session::open_with(
        SessionOptions {
            netns: opts.netns.clone(),
            ledger_path: opts.ledger.clone(),
            read_only: false,
            root: opts.host_root.clone(),
            system_bus: opts.systemd_bus.clone(),
            exit_after_command: false,
        },
        &registry,
    )
    .await?;
    crate::service::forward_logs(session.log_sinks());
    // A confirm pending from before a restart: its generation is what runs until the deadline.
    let pending = session.ledger().pending_confirm()?;
    let start = crate::startup::startup_config(
        session.ledger(),
        pending.as_ref().map(|p| p.generation),
        &opts.config,
    )?;
    let applied = Applied::new(&session, start.yaml, start.input);
    let health_store = session.health();
    let auth = crate::auth::AuthStore::new(&opts.state_dir);
    announce_setup_token(&auth);
    let statuses = StatusTracker::load(session.ledger());
    let mut monitor = NetlinkMonitor::open(&netns).context("subscribing to netlink changes")?;
    // Without nftables notifications (a kernel without nf_tables netlink) the daemon still
    // runs: the periodic resync repairs what a notification would have.
    let nft_monitor = NftMonitor::open(&netns)
        .inspect_err(|e| tracing::warn!("nftables changes are not watched: {e}"))
        .ok();
    let socket = ControlSocket::bind(&opts.control_socket)
        .with_context(|| format!("control socket {}", opts.control_socket.display()))?;

    let status = DaemonStatus {
        config: opts.config.display().to_string(),
        netns: opts.netns.clone(),
        state: DaemonState::Starting,
        generation: 0,
        observed_generation: None,
        phase: None,
        reconciles: 0,
        last_reconcile: None,
        last_error: None,
        pending_confirm: None,
        config_fallback: start.fallback,
        last_timed_out: None,
        last_apply: None,
        last_repair: None,
    };
    let (snapshot_tx, snapshot_rx) = watch::channel(Snapshot {
        status: status.clone(),
        result: None,
        resources: Arc::new(statuses.all()),
        yaml: Arc::clone(&applied.yaml),
    });
    let (msg_tx, mut msgs) = mpsc::channel::<Msg>(64);

    let host_changes = msg_tx.clone();
    tokio::spawn(async move {
        while let Some(change) = monitor.next().await {
            // A full queue already holds a reconcile that will see this change too.
            let _ = host_changes.try_send(Msg::Reconcile(crate::msg::host_trigger(change)));
        }
    });
    let nft_changes = msg_tx.clone();
    tokio::spawn(async move {
        let Some(mut nft_monitor) = nft_monitor else { return };
        while let Some(change) = nft_monitor.next().await {
            if !is_foreign_edit(&change) {
                continue;
            }
            tracing::debug!(
                "nftables: {} changed {:?}",
                change.process.as_deref().unwrap_or("someone"),
                change.tables
            );
            let _ = nft_changes.try_send(Msg::Reconcile(Trigger::Nftables));
        }
    });
    let target = routerd_engine::Target::new(opts.netns.clone(), opts.host_root.clone());
    let watch = routerd_engine::registry::WatchContext { target: &target, netns: &netns };
    // A watcher that cannot start (its port is taken) leaves the periodic resync to repair
    // what it would have seen.
    let notices = registry
        .watchers(&watch)
        .inspect_err(|e| tracing::warn!("a controller's changes are not watched: {e}"))
        .unwrap_or_default();
    for mut notices in notices {
        let controller_changes = msg_tx.clone();
        tokio::spawn(async move {
            use futures::StreamExt;
            while let Some(notice) = notices.next().await {
                tracing::debug!("controller: {notice}");
                let _ = controller_changes.try_send(Msg::Reconcile(Trigger::Controller));
            }
        });
    }
    let gateways = Arc::new(crate::gateway::GatewayStore::new(
        crate::gateway::interval(opts.gateway_interval),
        session.state(),
    ));
    let gateway_task = GatewayTask(crate::gateway::spawn(netns.clone(), Arc::clone(&gateways)));
    let socket_path = socket.path().to_path_buf();
    let metrics = Arc::new(Metrics::new());
    let updates = Arc::new(crate::ota::Updates::new(opts.ota.clone()));
    let series = crate::series::Series::shared(opts.sample_interval);
    crate::series::spawn_sampler(netns.clone(), Arc::clone(&series));
    let web = opts.listen.map(|addr| crate::web::WebOptions {
        series: Arc::clone(&series),
        gateways: Arc::clone(&gateways),
        addr,
        snapshot: snapshot_rx.clone(),
        loop_tx: msg_tx.clone(),
        metrics: Arc::clone(&metrics),
        state_dir: opts.state_dir.clone(),
        updates: Arc::clone(&updates),
    });
    if opts.ota.health_gate {
        crate::ota::spawn_gate(opts.ota.clone(), msg_tx.clone());
    }
    let state = crate::state::StateScheduler::new(
        netns.clone(),
        session.bus(),
        session.state(),
        msg_tx.clone(),
    );
    let aftr = crate::aftr::AftrScheduler::new(netns.clone(), session.aftr(), msg_tx.clone());
    let health = crate::health::HealthScheduler::new(
        netns,
        health_store,
        session.state(),
        session.aftr(),
        msg_tx.clone(),
    );
    let control = router(snapshot_rx, msg_tx, Arc::clone(&metrics), updates);
    let servers = crate::http::Servers::start(socket, control, web)?;
    tracing::info!(
        "serving {} (control socket {}, resync every {})",
        opts.config.display(),
        socket_path.display(),
        humantime::format_duration(opts.resync)
    );

    let mut daemon = Daemon {
        session,
        registry,
        applied,
        config_path: opts.config.clone(),
        status,
        snapshot: snapshot_tx,
        statuses,
        metrics,
        auth,
        last: None,
        unbound_since: Default::default(),
        resync: opts.resync,
        confirm: pending.map(|p| (instant_of(p.deadline), p)),
        health,
        state,
        aftr,
        series,
        gateways,
        _gateway_task: gateway_task,
        observed: None,
    };
    let mut sigterm = signal(SignalKind::terminate()).context("SIGTERM handler")?;
    let mut sigint = signal(SignalKind::interrupt()).context("SIGINT handler")?;
    let mut sighup = signal(SignalKind::hangup()).context("SIGHUP handler")?;
    let start = tokio::time::Instant::now() + opts.resync;
    let mut resync = tokio::time::interval_at(start, opts.resync);
    resync.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);

    // Pings only when systemd asks for them (a never-firing timer otherwise).
    let ping_every = service::watchdog_interval();
    let mut watchdog = tokio::time::interval(ping_every.unwrap_or(Duration::from_secs(3600)));

    let mut reasons = BTreeSet::from([Trigger::Start]);
    loop {
        if daemon.unconfigured() && !reasons.is_empty() {
            // Nothing applied: no reconcile may run (an empty config would make every owned
            // artifact an orphan); the control socket and the web UI still answer.
            if reasons.contains(&Trigger::Start) {
                daemon.status.state = DaemonState::Unconfigured;
                daemon.publish(None);
                service::notify(&[NotifyState::Ready]);
            }
            reasons.clear();
        }
        if !reasons.is_empty() {
            let _ = daemon.reconcile(&reasons).await;
            if daemon.status.reconciles == 1 {
                daemon.record_boot();
                service::notify(&[NotifyState::Ready]);
            }
            let line = daemon.status_line();
            service::notify(&[NotifyState::Status(&line)]);
            reasons.clear();
        }
        let confirm_at = daemon.confirm.as_ref().map(|(at, _)| *at);
        let msg = tokio::select! {
            _ = sigterm.recv() => break,
            _ = sigint.recv() => break,
            _ = sighup.recv() => {
                daemon.reload().await;
                continue;
            }
            _ = watchdog.tick(), if ping_every.is_some() => {
                service::notify(&[NotifyState::Watchdog]);
                continue;
            }
            _ = resync.tick() => Msg::Reconcile(Trigger::Resync),
            _ = sleep_until_some(confirm_at) => {
                let waited = daemon.confirm.as_ref().map(|(_, p)| (p.generation, p.previous));
                let rolled = daemon.rollback(None, &Actor::timer(), "not confirmed in time").await;
                if let (Some((generation, restored)), Ok(_)) = (waited, rolled) {
                    let at = rfc3339(unix_now());
                    daemon.status.last_timed_out =
                        Some(TimedOutConfirm { generation, restored, at });
                    daemon.publish(None);
                }
                continue;
            }
            Some(m) = msgs.recv() => m,
        };
        match msg {
            Msg::Reconcile(first) => {
                reasons.insert(first);
                // Coalesce what arrives within the debounce window into the same reconcile.
                let until = tokio::time::Instant::now() + opts.debounce;
                while let Ok(Some(m)) = tokio::time::timeout_at(until, msgs.recv()).await {
                    match m {
                        Msg::Reconcile(t) => {
                            reasons.insert(t);
                        }
                        other => {
                            daemon.handle(other).await;
                            break;
                        }
                    }
                }
            }
            other => daemon.handle(other).await,
        }
    }
    service::notify(&[NotifyState::Stopping]);
    daemon.status.state = DaemonState::Stopping;
    daemon.publish(None);
    servers.stop();
    let _ = std::fs::remove_file(&socket_path);
    drop(daemon);
    tracing::info!("stopped");
    Ok(0)
}

impl Daemon {
    async fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Reconcile(t) => {
                self.reconcile(&BTreeSet::from([t])).await;
            }
            Msg::Apply(request, reply) => {
                let _ = reply.send(self.apply(request).await);
            }
            Msg::Confirm(by, reply) => {
                let _ = reply.send(self.confirm(&by));
            }
            Msg::Rollback(request, reply) => {
                let _ = reply.send(self.rollback_request(request).await);
            }
            Msg::Generations(which, reply) => {
                let ledger = self.session.ledger();
                let found = match which {
                    Some(n) => match ledger.generation_record(n) {
                        Ok(Some(r)) => Ok(vec![r]),
                        Ok(None) => Err(ChangeRefused::NotFound(format!("no generation {n}"))),
                        Err(e) => Err(ChangeRefused::Failed(e.to_string())),
                    },
                    None => ledger
                        .generation_records()
                        .map(|all| {
                            all.into_iter()
                                .map(|r| GenerationRecord { yaml: String::new(), ..r })
                                .collect()
                        })
                        .map_err(|e| ChangeRefused::Failed(e.to_string())),
                };
                let _ = reply.send(found);
            }
            Msg::Passwd(password, reply) => {
                let set = self.auth.set_password(&password).map_err(|e| match e {
                    crate::auth::AuthError::TooShort | crate::auth::AuthError::Weak(_) => {
                        ChangeRefused::Conflict(e.to_string())
                    }
                    other => ChangeRefused::Failed(other.to_string()),
                });
                if set.is_ok() {
                    tracing::info!("password set for admin from the console (routerctl passwd)");
                }
                let _ = reply.send(set);
            }
            Msg::Engine(query, reply) => {
                let _ = reply.send(self.engine(query).await);
            }
            Msg::Doctor(reply) => {
                let observed = self.observe_for_doctor().await;
                let gateways = self.gateways.all();
                let input = crate::doctor::DoctorInput {
                    status: &self.status,
                    result: self.last.as_ref().map(|(doc, _)| &**doc),
                    observed: observed.as_deref(),
                    gateways: &gateways,
                    config: &self.applied.input.config,
                    ledger: self.session.ledger(),
                    resync: self.resync,
                    last_finished: self.last.as_ref().map(|(_, at)| *at),
                    unbound_since: &self.unbound_since,
                    registry: &self.registry,
                };
                let _ = reply.send(crate::doctor::run(&input));
            }
        }
    }

    /// The host as it is now, for the doctor: a plan of the applied config (observes, changes
    /// nothing), made again when the last one is older than
    /// [`crate::doctor::OBSERVED_MAX_AGE`]. `None` when nothing is applied or the inventory
    /// fails (the doctor then reads the last reconcile's document and says so).
    async fn observe_for_doctor(&mut self) -> Option<Arc<ResultDocument>> {
        if self.unconfigured() {
            return None;
        }
        if let Some((at, doc)) = &self.observed
            && at.elapsed() < crate::doctor::OBSERVED_MAX_AGE
        {
            return Some(Arc::clone(doc));
        }
        match self.session.plan(&self.applied.input, SystemTime::now(), false).await {
            Ok(doc) => {
                let doc = Arc::new(doc);
                self.observed = Some((Instant::now(), Arc::clone(&doc)));
                Some(doc)
            }
            Err(e) => {
                tracing::warn!("doctor: observing the host: {e}");
                None
            }
        }
    }

    async fn engine(&mut self, query: EngineQuery) -> Result<EngineAnswer, ChangeRefused> {
        let failed = |e: routerd_engine::EngineError| ChangeRefused::Failed(e.to_string());
        let now = SystemTime::now();
        match query {
            EngineQuery::Plan(Some(yaml)) => {
                let input = ConfigInput::parse(&yaml, "plan").map_err(ChangeRefused::Invalid)?;
                let doc = self.session.plan(&input, now, false).await.map_err(failed)?;
                Ok(EngineAnswer::Document(Box::new(doc)))
            }
            EngineQuery::Plan(None) => {
                let doc =
                    self.session.plan(&self.applied.input, now, false).await.map_err(failed)?;
                Ok(EngineAnswer::Document(Box::new(doc)))
            }
            EngineQuery::Adopt { apply, only } => {
                let only: Option<BTreeSet<String>> = only.map(|o| o.into_iter().collect());
                let doc = self
                    .session
                    .adopt_only(&self.applied.input, now, apply, only.as_ref())
                    .await
                    .map_err(failed)?;
                if apply {
                    // Ownership changed: the next reconcile reports it.
                    let _ = self.reconcile(&BTreeSet::from([Trigger::Api])).await;
                }
                Ok(EngineAnswer::Document(Box::new(doc)))
            }
            EngineQuery::Ledger => self
                .session
                .ledger()
                .entries()
                .map(EngineAnswer::Entries)
                .map_err(|e| ChangeRefused::Failed(e.to_string())),
            EngineQuery::Graph => self
                .session
                .dot(&self.applied.input, now)
                .await
                .map(EngineAnswer::Dot)
                .map_err(failed),
            EngineQuery::Drawing(view) => self
                .session
                .drawing(&self.applied.input, &view, now)
                .await
                .map(|d| EngineAnswer::Drawing(Box::new(d)))
                .map_err(failed),
        }
    }

    /// One reconcile of the applied config; publishes the outcome.
    async fn reconcile(&mut self, reasons: &BTreeSet<Trigger>) -> Option<Arc<ResultDocument>> {
        let trigger: Triggers = reasons.iter().copied().collect();
        let started = SystemTime::now();
        let clock = Instant::now();
        let applied = &self.applied;
        let result = self.session.reconcile_with(&applied.input, &applied.desired, started).await;
        // Probes follow the config just reconciled, and a new check's first probe (which
        // decides its verdict at once) finds its link and routes in place.
        self.health.sync(&self.applied.input.digest, &self.applied.input.config);
        self.state.sync(&self.applied.input.digest, &self.applied.input.config);
        self.aftr.sync(&self.applied.input.digest, &self.applied.input.config);
        self.gateways.follow(&self.applied.input.config);
        // Links and addresses are what `ipv6Address` conditions read.
        if reasons.iter().any(|t| matches!(t, Trigger::Link | Trigger::Address)) {
            self.state.wake();
        }
        match result {
            Ok(mut doc) => {
                self.metrics.reconciled(&doc, clock.elapsed());
                self.series
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .record_reconcile(crate::series::ReconcilePoint {
                        at_unix_ms: started
                            .duration_since(SystemTime::UNIX_EPOCH)
                            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                        duration_ms: u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX),
                        phase: doc.phase.as_str().to_string(),
                    });
                let changes = self.statuses.observe(&mut doc, &self.applied.digests);
                if let Err(e) =
                    self.session.ledger().write_status_records(&changes.put, &changes.remove)
                {
                    tracing::error!("recording resource statuses: {e}");
                }
                let s = &mut self.status;
                if !reasons.contains(&Trigger::Apply) && !doc.operations.is_empty() {
                    s.last_repair = Some(last_repair(&doc, &trigger, started));
                }
                s.last_reconcile = Some(summary(&doc, trigger, started, clock.elapsed()));
                s.generation = doc.generation;
                s.observed_generation = Some(doc.generation);
                s.phase = Some(doc.phase.as_str().to_string());
                s.last_error = None;
                s.reconciles += 1;
                s.state = DaemonState::Running;
                if let Some(r) = &self.status.last_reconcile
                    && r.operations > 0
                {
                    tracing::info!(
                        "reconciled generation {} ({}): {} operations, {} failed, phase {}: {}",
                        doc.generation,
                        r.trigger,
                        r.operations,
                        r.failed,
                        doc.phase.as_str(),
                        named_operations(&doc)
                    );
                }
                let doc = Arc::new(doc);
                let now = SystemTime::now();
                crate::doctor::track_unbound(&mut self.unbound_since, &doc, now);
                self.last = Some((Arc::clone(&doc), now));
                self.publish(Some(Arc::clone(&doc)));
                Some(doc)
            }
            Err(e) => {
                self.metrics.failed();
                tracing::error!("reconcile failed: {e}");
                self.status.last_error = Some(e.to_string());
                self.publish(None);
                None
            }
        }
    }

    /// Publishes the status (and, when given, a new Result document).
    fn publish(&mut self, result: Option<Arc<ResultDocument>>) {
        self.status.pending_confirm = self.confirm.as_ref().map(|(_, p)| ConfirmStatus {
            generation: p.generation,
            previous: p.previous,
            deadline: rfc3339(p.deadline),
            deadline_unix: p.deadline,
        });
        let status = self.status.clone();
        let resources = result.as_ref().map(|_| Arc::new(self.statuses.all()));
        let yaml = Arc::clone(&self.applied.yaml);
        self.snapshot.send_modify(|s| {
            s.status = status;
            s.yaml = yaml;
            if result.is_some() {
                s.result = result;
            }
            if let Some(resources) = resources {
                s.resources = resources;
            }
        });
    }

    /// Records the config found at start as a generation, unless it already is one.
    fn record_boot(&mut self) {
        let generation = self.status.generation;
        let ledger = self.session.ledger();
        if generation == 0 || !matches!(ledger.generation_record(generation), Ok(None)) {
            return;
        }
        let record = GenerationRecord {
            generation,
            yaml: self.applied.yaml.to_string(),
            digest: self.applied.input.digest.clone(),
            author: "routerd".into(),
            channel: Channel::Boot,
            comment: format!("found in {} at start", self.config_path.display()),
            applied_at: unix_now(),
            result: self.result_of_phase(),
        };
        let pending = self.confirm.as_ref().map(|(_, p)| p.clone());
        if let Err(e) = ledger.record_generation(&record, pending.as_ref()) {
            tracing::error!("recording generation {generation}: {e}");
        }
    }

    /// Whether nothing is applied (no usable file or generation at start, none applied since).
    fn unconfigured(&self) -> bool {
        self.status.config_fallback.as_ref().is_some_and(|f| f.running.is_none())
    }

    /// Replaces the config file with the applied text (write to a sibling, then rename). A file
    /// that did not load at start is kept beside it as `<file>.invalid` first: the operator's
    /// edit is not lost.
    fn write_config_file(&mut self) {
        if self.status.config_fallback.is_some() && self.config_path.exists() {
            let mut keep = self.config_path.clone().into_os_string();
            keep.push(".invalid");
            match std::fs::copy(&self.config_path, &keep) {
                Ok(_) => tracing::warn!(
                    "kept the config file that did not load as {}",
                    Path::new(&keep).display()
                ),
                Err(e) => tracing::error!("keeping {}: {e}", Path::new(&keep).display()),
            }
        }
        match write_atomically(&self.config_path, &self.applied.yaml) {
            Ok(()) => self.status.config_fallback = None,
            Err(e) => tracing::error!("writing {}: {e}", self.config_path.display()),
        }
    }

    /// The one-line status for `systemctl status`.
    fn status_line(&self) -> String {
        let s = &self.status;
        let mut line = format!(
            "generation {}, {}, {} reconciles",
            s.generation,
            s.phase.as_deref().unwrap_or("not reconciled"),
            s.reconciles
        );
        if let Some((_, p)) = &self.confirm {
            line.push_str(&format!(", generation {} awaits its confirm", p.generation));
        }
        if let Some(e) = &s.last_error {
            line.push_str(&format!(", last error: {e}"));
        }
        line
    }
}

fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Without an admin password, issues a one-time setup token and shows it on the console and in
/// the log (the journal under systemd): nobody can log in to the web UI before that.
fn announce_setup_token(auth: &crate::auth::AuthStore) {
    match auth.issue_setup_token() {
        Ok(Some(token)) => {
            let line = format!(
                "no admin password is set; one-time setup token: {token} \
                 (web UI setup page), or set one with `routerctl passwd` on the console"
            );
            tracing::warn!("{line}");
            // Under systemd the log goes to the journal; the operator on the serial console
            // sees this line too.
            if std::env::var_os("INVOCATION_ID").is_some()
                && let Ok(mut console) =
                    std::fs::OpenOptions::new().write(true).open("/dev/console")
            {
                let _ = std::io::Write::write_all(
                    &mut console,
                    format!("routerd: {line}\n").as_bytes(),
                );
            }
        }
        Ok(None) => {}
        Err(e) => tracing::error!("issuing the setup token: {e}"),
    }
}

async fn sleep_until_some(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// The monotonic instant of a wall-clock deadline (now, when it has passed).
fn instant_of(deadline: u64) -> tokio::time::Instant {
    let left = deadline.saturating_sub(unix_now());
    tokio::time::Instant::now() + Duration::from_secs(left)
}

pub(crate) fn rfc3339(unix: u64) -> String {
    humantime::format_rfc3339_seconds(SystemTime::UNIX_EPOCH + Duration::from_secs(unix))
        .to_string()
}
