//! `routerd serve`: the reconcile loop.
//!
//! One task owns the engine [`Session`] and the config's desired state; everything else sends
//! it a [`Trigger`] (a host change seen on the rtnetlink multicast groups, the periodic resync,
//! an API request) and reads [`Snapshot`]s through a `watch` channel (DESIGN.md, Supervisor).
//!
//! ```text
//! NetlinkMonitor ──Trigger::Host──┐
//! control API ─────Trigger::Api───┼─▶ mpsc ─▶ loop: debounce ─▶ reconcile ─▶ watch<Snapshot>
//! resync timer ────Trigger::Resync┘                                            │
//!                                                   GET /v1/status, /v1/result ◀┘
//! ```
//!
//! A burst of notifications (a reconcile of its own changes, an operator's `ip` commands) is
//! debounced into one reconcile; a reconcile always observes the host itself, so a lost
//! notification only delays the repair until the next resync. SIGTERM and SIGINT stop the loop
//! between reconciles: a running reconcile finishes and commits its ledger transaction first.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use routerd_engine::{ConfigInput, ResultDocument, Session, SessionOptions};
use routerd_host::Netns;
use routerd_host::netlink::{Change, NetlinkMonitor};
use routerd_model::status::{DaemonStatus, ReconcileSummary};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{mpsc, watch};

use crate::control::{ControlSocket, Snapshot, router};

/// Why the loop should reconcile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Trigger {
    /// The daemon just started.
    Start,
    /// The periodic resync.
    Resync,
    /// `POST /v1/reconcile`.
    Api,
    /// A change on the host.
    Host(Change),
}

impl Trigger {
    fn as_str(self) -> &'static str {
        match self {
            Trigger::Start => "start",
            Trigger::Resync => "resync",
            Trigger::Api => "api",
            Trigger::Host(Change::Link) => "link",
            Trigger::Host(Change::Address) => "address",
            Trigger::Host(Change::Route) => "route",
            Trigger::Host(Change::Rule) => "rule",
            Trigger::Host(Change::Other) => "other",
        }
    }
}

/// Options of `routerd serve`.
pub struct ServeOptions {
    /// The config file.
    pub config: PathBuf,
    /// Target namespace (`/run/netns/NAME`), `None` for the daemon's own.
    pub netns: Option<String>,
    /// Ledger file.
    pub ledger: PathBuf,
    /// Control socket path.
    pub control_socket: PathBuf,
    /// Time between two reconciles when nothing triggers one.
    pub resync: Duration,
    /// How long to wait for more triggers after the first, so a burst is one reconcile.
    pub debounce: Duration,
}

/// Runs the daemon until SIGTERM or SIGINT. Returns the exit code: 0 after a clean stop, 1
/// when the config does not validate (nothing was touched).
///
/// Errors: the namespace, the ledger, the netlink sockets or the control socket cannot be
/// opened.
pub async fn serve(opts: ServeOptions) -> anyhow::Result<u8> {
    let input = match ConfigInput::load(&opts.config) {
        Ok(input) => input,
        Err(errors) => {
            eprintln!("{errors}");
            return Ok(1);
        }
    };
    let netns = match &opts.netns {
        Some(name) => Netns::named(name)?,
        None => Netns::current(),
    };
    let mut session = Session::open(SessionOptions {
        netns: opts.netns.clone(),
        ledger_path: opts.ledger.clone(),
        read_only: false,
    })
    .await?;
    let desired = session.desired_for(&input.config);
    let mut monitor = NetlinkMonitor::open(&netns).context("subscribing to netlink changes")?;
    let socket = ControlSocket::bind(&opts.control_socket)
        .with_context(|| format!("control socket {}", opts.control_socket.display()))?;

    let mut status = DaemonStatus {
        config: opts.config.display().to_string(),
        netns: opts.netns.clone(),
        state: "starting".into(),
        generation: 0,
        observed_generation: None,
        phase: None,
        reconciles: 0,
        last_reconcile: None,
        last_error: None,
    };
    let (snapshot_tx, snapshot_rx) =
        watch::channel(Snapshot { status: status.clone(), result: None });
    let (trigger_tx, mut triggers) = mpsc::channel::<Trigger>(64);

    let host_changes = trigger_tx.clone();
    tokio::spawn(async move {
        while let Some(change) = monitor.next().await {
            // A full queue already holds a reconcile that will see this change too.
            let _ = host_changes.try_send(Trigger::Host(change));
        }
    });
    let socket_path = socket.path().to_path_buf();
    let server = tokio::spawn(socket.serve(router(snapshot_rx, trigger_tx)));
    eprintln!(
        "routerd: serving {} (control socket {}, resync every {})",
        opts.config.display(),
        socket_path.display(),
        humantime::format_duration(opts.resync)
    );

    let mut sigterm = signal(SignalKind::terminate()).context("SIGTERM handler")?;
    let mut sigint = signal(SignalKind::interrupt()).context("SIGINT handler")?;
    let start = tokio::time::Instant::now() + opts.resync;
    let mut resync = tokio::time::interval_at(start, opts.resync);
    resync.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);

    let mut reasons = BTreeSet::from([Trigger::Start]);
    loop {
        let trigger = reasons.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(",");
        let started = SystemTime::now();
        let clock = Instant::now();
        match session.reconcile_with(&input, &desired, started).await {
            Ok(doc) => {
                status.last_reconcile = Some(summary(&doc, trigger, started, clock.elapsed()));
                status.generation = doc.generation;
                status.observed_generation = Some(doc.generation);
                status.phase = Some(doc.phase.as_str().to_string());
                status.last_error = None;
                status.reconciles += 1;
                status.state = "running".into();
                let result = Some(Arc::new(doc));
                snapshot_tx.send_replace(Snapshot { status: status.clone(), result });
            }
            Err(e) => {
                eprintln!("routerd: reconcile failed: {e}");
                status.last_error = Some(e.to_string());
                snapshot_tx.send_modify(|s| s.status = status.clone());
            }
        }
        reasons.clear();
        let first = tokio::select! {
            _ = sigterm.recv() => break,
            _ = sigint.recv() => break,
            _ = resync.tick() => Trigger::Resync,
            Some(t) = triggers.recv() => t,
        };
        reasons.insert(first);
        // Coalesce what arrives within the debounce window into the same reconcile.
        let until = tokio::time::Instant::now() + opts.debounce;
        while let Ok(Some(t)) = tokio::time::timeout_at(until, triggers.recv()).await {
            reasons.insert(t);
        }
    }
    status.state = "stopping".into();
    snapshot_tx.send_modify(|s| s.status = status.clone());
    server.abort();
    let _ = server.await;
    let _ = std::fs::remove_file(&socket_path);
    drop(session);
    eprintln!("routerd: stopped");
    Ok(0)
}

fn summary(
    doc: &ResultDocument,
    trigger: String,
    started: SystemTime,
    took: Duration,
) -> ReconcileSummary {
    use routerd_engine::Phase;
    let count = |p: Phase| doc.resources.iter().filter(|r| r.phase == p).count();
    ReconcileSummary {
        trigger,
        started: humantime::format_rfc3339_seconds(started).to_string(),
        duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        operations: doc.operations.len(),
        failed: doc.operations.iter().filter(|o| o.result == "failed").count(),
        resources: doc.resources.len(),
        drifted: count(Phase::Drifted),
        blocked: count(Phase::Blocked),
        requires_adoption: count(Phase::RequiresAdoption),
        orphans: doc.orphans.len(),
    }
}
