//! The messages of the reconcile loop ([`crate::daemon`]): what triggers a reconcile, and the
//! requests the control API and the web UI send it, each with the channel its answer comes
//! back on.

use std::time::Duration;

use routerd_engine::ResultDocument;
use routerd_engine::host_events::Change;
use routerd_ledger::{Channel, GenerationRecord};
use routerd_model::ConfigErrors;
use routerd_model::status::DoctorCheck;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

pub use routerd_model::status::Trigger;

/// The trigger of a change on the host.
pub(crate) fn host_trigger(change: Change) -> Trigger {
    match change {
        Change::Link => Trigger::Link,
        Change::Address => Trigger::Address,
        Change::Route => Trigger::Route,
        Change::Rule => Trigger::Rule,
        Change::Other => Trigger::Other,
    }
}

/// A new config for the daemon (`POST /v1/apply`).
#[derive(Debug)]
pub struct ApplyRequest {
    /// The YAML text, kept as written.
    pub yaml: String,
    /// The name config errors are located in (`apply`, the config file's path).
    pub source: String,
    /// Who applies it.
    pub author: String,
    /// Through which door.
    pub channel: Channel,
    /// Why.
    pub comment: String,
    /// The confirm window; `None` applies without one.
    pub confirm: Option<Duration>,
    /// The address the requesting client reaches the router from, when known (the web UI's
    /// peer, `SSH_CONNECTION` for `routerctl`): the lockout guard's input.
    pub client: Option<std::net::IpAddr>,
    /// The generation the text was edited from; when another has been applied since, the
    /// apply is refused ([`ChangeRefused::Stale`]) so that it cannot undo that one unseen (issue 34
    /// §1). `None`: not checked (SIGHUP, the file found at start).
    pub base: Option<u64>,
}

/// What an apply, confirm or rollback did.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplyOutcome {
    /// The generation now applied.
    pub generation: u64,
    /// Phase of its Result document.
    pub phase: String,
    /// Operations executed.
    pub operations: usize,
    /// Operations that failed.
    pub failed: usize,
    /// The confirm deadline (RFC 3339) when the apply waits for one.
    pub confirm_deadline: Option<String>,
    /// What the change does to the requesting client's own connection (lockout guard).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Why an apply, confirm or rollback was refused. Nothing changed on the host or in the ledger.
#[derive(Debug)]
pub enum ChangeRefused {
    /// The config does not validate (every error, located).
    Invalid(ConfigErrors),
    /// The request conflicts with the daemon's state (a confirm pending, nothing to confirm).
    Conflict(String),
    /// The text was edited from generation `base`, but `current` has been applied since.
    Stale {
        /// The generation the text was edited from.
        base: u64,
        /// The generation applied now.
        current: u64,
    },
    /// No such generation.
    NotFound(String),
    /// The engine or the ledger failed.
    Failed(String),
}

/// Who asked for a confirm or a rollback, for the security log (issue 33 §4).
#[derive(Clone, Debug)]
pub struct Actor {
    /// The user: `admin` in the web UI; on the control socket, whoever may open it (root).
    pub user: String,
    /// Where the request came in.
    pub channel: Channel,
    /// The web client's address; `None` on the control socket.
    pub client: Option<std::net::IpAddr>,
}

impl Actor {
    /// The web UI's admin at `client`.
    pub fn web(client: std::net::IpAddr) -> Self {
        Self { user: "admin".into(), channel: Channel::Web, client: Some(client) }
    }

    /// A request on the control socket (mode 0600: root) by `user` through `channel`, as the
    /// client says (`routerctl` sends `$USER` and `cli`).
    pub fn control_socket(user: String, channel: Channel) -> Self {
        Self { user, channel, client: None }
    }

    /// The daemon's own confirm timer.
    pub fn timer() -> Self {
        Self { user: "routerd".into(), channel: Channel::Timer, client: None }
    }
}

impl std::fmt::Display for Actor {
    /// `admin (Web) from 192.0.2.7`, `root (Api) on the control socket`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({:?}) ", self.user, self.channel)?;
        match self.client {
            Some(client) => write!(f, "from {client}"),
            None => f.write_str("on the control socket"),
        }
    }
}

/// A rollback: to `target`, or (with `None`) the pending apply's previous generation.
///
/// A rollback to a named generation while no apply waits for its confirm is an apply of that
/// generation's text: with `confirm`, it opens a confirm window like any apply (issue 34 §2), and
/// the lockout guard sees the asker's address. Rolling back a pending apply restores at once.
#[derive(Debug)]
pub struct RollbackRequest {
    /// The generation whose text comes back; `None`: the one before the pending apply.
    pub target: Option<u64>,
    /// Who asks.
    pub by: Actor,
    /// The confirm window of a rollback to a named generation; `None`: none.
    pub confirm: Option<std::time::Duration>,
    /// Why, recorded with the new generation; empty: "rollback to generation N".
    pub comment: String,
}

impl RollbackRequest {
    /// A rollback of the pending apply, at once.
    pub fn pending(by: Actor) -> Self {
        Self { target: None, by, confirm: None, comment: String::new() }
    }
}

/// The answer to a request that changes the config.
pub type Reply = oneshot::Sender<Result<ApplyOutcome, ChangeRefused>>;

/// A message to the loop.
#[derive(Debug)]
pub enum Msg {
    /// Reconcile (coalesced with others arriving within the debounce window).
    Reconcile(Trigger),
    /// Apply a new config.
    Apply(ApplyRequest, Reply),
    /// Confirm the pending apply.
    Confirm(Actor, Reply),
    /// Roll back: to a generation, or the pending apply.
    Rollback(RollbackRequest, Reply),
    /// Recorded generations: all (without their text), or one (with it).
    Generations(Option<u64>, oneshot::Sender<Result<Vec<GenerationRecord>, ChangeRefused>>),
    /// Run the doctor's checks.
    Doctor(oneshot::Sender<Vec<DoctorCheck>>),
    /// Set the admin password (`routerctl passwd`).
    Passwd(String, oneshot::Sender<Result<(), ChangeRefused>>),
    /// A read-mostly engine request.
    Engine(EngineQuery, oneshot::Sender<Result<EngineAnswer, ChangeRefused>>),
}

/// Engine requests the control API forwards.
#[derive(Debug)]
pub enum EngineQuery {
    /// What a reconcile of this YAML (or, with `None`, of the applied config) would do.
    Plan(Option<String>),
    /// Adoption candidates; with `apply`, record the matching ones as owned (ledger only).
    Adopt {
        /// Record them.
        apply: bool,
        /// Only these (`kind/name`); all matching ones when `None`.
        only: Option<Vec<String>>,
    },
    /// Every ledger entry.
    Ledger,
    /// The planned transition of the applied config as Graphviz DOT.
    Graph,
    /// The planned transition of the applied config drawn as the view asks (the graph page).
    Drawing(routerd_engine::drawing::GraphView),
}

/// The engine's answer.
#[derive(Debug)]
pub enum EngineAnswer {
    /// A Result document.
    Document(Box<ResultDocument>),
    /// Ledger entries.
    Entries(Vec<routerd_ledger::LedgerEntry>),
    /// DOT text.
    Dot(String),
    /// A drawing's DOT text and what it shows.
    Drawing(Box<routerd_engine::drawing::Drawing>),
}

/// The daemon loop is gone: it is stopping.
#[derive(Debug)]
pub struct Stopping;

/// What the control API and the web UI say when the loop is gone.
pub const STOPPING: &str = "the daemon is stopping";

/// Sends the message `make` builds around a reply channel to the loop, and waits for the reply.
///
/// Errors: [`Stopping`] when the loop no longer takes messages or dropped the reply.
pub async fn request<T>(
    loop_tx: &mpsc::Sender<Msg>,
    make: impl FnOnce(oneshot::Sender<T>) -> Msg,
) -> Result<T, Stopping> {
    let (tx, rx) = oneshot::channel();
    loop_tx.send(make(tx)).await.map_err(|_| Stopping)?;
    rx.await.map_err(|_| Stopping)
}
