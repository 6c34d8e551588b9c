//! The daemon's status as the control API serves it (`GET /v1/status`, `docs/control-api.md`),
//! shared by `routerd serve`, `routerctl` and the web UI. Kubernetes words: a config
//! `generation` and the `observedGeneration` the last reconcile acted on (seed 004).

use serde::{Deserialize, Serialize};

/// What `routerd serve` is doing and what its last reconcile found.
///
/// Shape (camelCase JSON): `{config, netns, state, generation, observedGeneration, phase,
/// reconciles, lastReconcile, lastError}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DaemonStatus {
    /// Path of the config file the daemon applies.
    pub config: String,
    /// Network namespace name, `None` for the daemon's own.
    pub netns: Option<String>,
    /// What the daemon is doing.
    pub state: DaemonState,
    /// Generation of the loaded config (the ledger's counter: it grows when the text changes).
    pub generation: u64,
    /// Generation the last finished reconcile applied; equal to `generation` once it converged.
    pub observed_generation: Option<u64>,
    /// Phase of the last Result document (`Healthy`, `Drifted`, `Blocked`,
    /// `RequiresAdoption`), `None` before the first reconcile.
    pub phase: Option<String>,
    /// Reconciles finished since the daemon started.
    pub reconciles: u64,
    /// The last finished reconcile.
    pub last_reconcile: Option<ReconcileSummary>,
    /// Error of the last reconcile that could not run (inventory or ledger failure), cleared by
    /// the next one that does.
    pub last_error: Option<String>,
    /// The apply waiting for its confirm, if any.
    pub pending_confirm: Option<ConfirmStatus>,
    /// Why the daemon runs another config than its config file's, when the file was missing or
    /// invalid at start; cleared once a config is applied (which writes the file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_fallback: Option<ConfigFallback>,
    /// The last apply the confirm timer rolled back since the daemon started (the web UI
    /// announces it until dismissed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_timed_out: Option<TimedOutConfirm>,
    /// The last apply or rollback since the daemon started: who, when, why and what it did
    /// (kept apart from `lastReconcile`, which a resync overwrites; issue 34 §2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_apply: Option<LastApply>,
    /// The last reconcile since the daemon started that was not an apply and changed the host:
    /// drift it repaired after a host change or at a resync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_repair: Option<LastRepair>,
}

/// What `routerd serve` is doing (`DaemonStatus::state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DaemonState {
    /// Started; no reconcile has finished yet.
    Starting,
    /// Nothing is applied (no usable config file and no generation in the ledger): no
    /// reconcile runs until a config is applied; the control socket and the web UI answer.
    Unconfigured,
    /// A reconcile has finished; the daemon follows the host and the config.
    Running,
    /// Shutting down.
    Stopping,
}

impl DaemonState {
    /// `starting`, `unconfigured`, `running`, `stopping`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Unconfigured => "unconfigured",
            Self::Running => "running",
            Self::Stopping => "stopping",
        }
    }
}

impl std::fmt::Display for DaemonState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// Why the daemon reconciled. Ordered as the daemon lists coalesced triggers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Trigger {
    /// The daemon just started.
    Start,
    /// The periodic resync.
    Resync,
    /// `POST /v1/reconcile`, an adoption.
    Api,
    /// An apply or a rollback: a new config.
    Apply,
    /// A link changed on the host (`RTM_NEWLINK`, `RTM_DELLINK`).
    Link,
    /// An address changed on the host.
    Address,
    /// A route changed on the host.
    Route,
    /// A routing rule changed on the host.
    Rule,
    /// Something else the host's netlink groups delivered (an overrun notice): look again.
    Other,
    /// A HealthCheck's verdict changed.
    Health,
    /// A StatePolicy variable changed, or a `when.state` condition started or stopped holding.
    State,
    /// A DS-Lite tunnel's AFTR resolved to other addresses.
    Aftr,
    /// Someone else committed an nf_tables transaction touching a `routerd_*` table.
    Nftables,
    /// A controller crate's watcher saw a change (a DNS server's NOTIFY after a hand edit).
    Controller,
}

impl Trigger {
    /// The lowercase name (`address`), as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Resync => "resync",
            Self::Api => "api",
            Self::Apply => "apply",
            Self::Link => "link",
            Self::Address => "address",
            Self::Route => "route",
            Self::Rule => "rule",
            Self::Other => "other",
            Self::Health => "health",
            Self::State => "state",
            Self::Aftr => "aftr",
            Self::Nftables => "nftables",
            Self::Controller => "controller",
        }
    }
}

impl std::fmt::Display for Trigger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// The triggers of one reconcile, in [`Trigger`] order. JSON: the names comma-separated
/// (`address,route`), as the status has always carried them; displayed the same way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Triggers(pub Vec<Trigger>);

impl std::ops::Deref for Triggers {
    type Target = [Trigger];
    fn deref(&self) -> &[Trigger] {
        &self.0
    }
}

impl FromIterator<Trigger> for Triggers {
    fn from_iter<I: IntoIterator<Item = Trigger>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl std::fmt::Display for Triggers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|t| t.as_str()).collect();
        f.pad(&names.join(","))
    }
}

impl Serialize for Triggers {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Triggers {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::IntoDeserializer;
        let text = String::deserialize(d)?;
        let names = text.split(',').filter(|name| !name.is_empty());
        names.map(|name| Trigger::deserialize(name.into_deserializer())).collect()
    }
}

/// An apply (or rollback) and what its reconcile did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastApply {
    /// The generation it made.
    pub generation: u64,
    /// Who asked (`admin`, the console user, `routerd` for the confirm timer).
    pub author: String,
    /// Through which door (`web`, `cli`, `api`, `timer`, …).
    pub channel: String,
    /// Why, as typed.
    pub comment: String,
    /// RFC 3339 time it was applied.
    pub at: String,
    /// Its operations, the first [`NAMED_OPERATIONS`].
    pub operations: Vec<OperationSummary>,
    /// How many operations it ran in all.
    pub operations_total: usize,
}

/// A reconcile that repaired drift: when, why and what.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastRepair {
    /// RFC 3339 time it started.
    pub at: String,
    /// What triggered it (as [`ReconcileSummary::trigger`]).
    pub trigger: Triggers,
    /// Its operations, the first [`NAMED_OPERATIONS`].
    pub operations: Vec<OperationSummary>,
    /// How many operations it ran in all.
    pub operations_total: usize,
}

/// One executed operation, by artifact name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationSummary {
    /// `create`, `modify`, `delete`.
    pub operation: String,
    /// `kind/name` (`nft.table/inet/routerd_filter_home`).
    pub artifact: String,
    /// `done`, `failed`, `skipped`, `blocked`.
    pub result: String,
}

/// How many operations [`LastApply`] and [`LastRepair`] name.
pub const NAMED_OPERATIONS: usize = 20;

/// An apply not confirmed in time: generation `generation` was rolled back to `restored`'s
/// text at `at`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimedOutConfirm {
    /// The generation that was not confirmed.
    pub generation: u64,
    /// The generation whose text came back.
    pub restored: u64,
    /// RFC 3339 time of the rollback.
    pub at: String,
}

/// The config file could not be used at start: what was wrong, and what runs instead.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigFallback {
    /// The file's errors, each `file:line:column: message` (the first [`FALLBACK_ERRORS`]).
    pub errors: Vec<String>,
    /// The generation from the ledger that runs instead; `None`: no generation could be used,
    /// nothing is applied and no reconcile runs until a config is applied.
    pub running: Option<u64>,
}

/// How many of the file's errors a [`ConfigFallback`] keeps.
pub const FALLBACK_ERRORS: usize = 20;

/// An apply waiting for the operator's confirm; unconfirmed at `deadline`, the daemon applies
/// generation `previous` again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfirmStatus {
    /// The generation that waits.
    pub generation: u64,
    /// The generation restored when nobody confirms.
    pub previous: u64,
    /// RFC 3339 deadline.
    pub deadline: String,
    /// The deadline in seconds since the Unix epoch (for countdowns).
    pub deadline_unix: u64,
}

/// One finished reconcile, in numbers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReconcileSummary {
    /// Why it ran: every trigger coalesced into it, in [`Trigger`] order (JSON: the names
    /// comma-separated, `address,route`).
    pub trigger: Triggers,
    /// RFC 3339 time it started.
    pub started: String,
    /// Wall time, milliseconds.
    pub duration_ms: u64,
    /// Operations executed (any result).
    pub operations: usize,
    /// Operations that failed.
    pub failed: usize,
    /// Resources in the config.
    pub resources: usize,
    /// Resources `Drifted`.
    pub drifted: usize,
    /// Resources `Blocked`.
    pub blocked: usize,
    /// Resources `RequiresAdoption`.
    pub requires_adoption: usize,
    /// Orphans reported.
    pub orphans: usize,
}

/// One resource's status, Kubernetes style (seed 004): `generation` counts changes of its
/// spec, `observedGeneration` is the generation the last reconcile processed, and each
/// condition's `lastTransitionTime` is when its `status` last changed (not when it was last
/// computed). Kept in the ledger file, so it survives restarts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceStatus {
    /// `apiVersion/kind/name`.
    pub id: String,
    /// Hex SHA-256 of the resource's spec as JSON: what decides a new generation.
    pub spec_digest: String,
    /// 1 when first seen, +1 on every spec change.
    pub generation: u64,
    /// The generation the last reconcile processed.
    pub observed_generation: u64,
    /// `Healthy`, `RequiresAdoption`, `Drifted`, `Blocked`.
    pub phase: String,
    /// Current conditions.
    pub conditions: Vec<ResourceCondition>,
}

/// A condition as kept in [`ResourceStatus`] (Kubernetes `metav1.Condition`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceCondition {
    /// `Ready`, `Blocked`, `Drifted`, `AdoptionRequired`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False`, `Unknown`.
    pub status: String,
    /// Stable CamelCase reason.
    pub reason: String,
    /// Human message.
    pub message: String,
    /// RFC 3339 time the status last changed.
    pub last_transition_time: String,
}

/// The outcome of one doctor check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    /// Fine.
    Pass,
    /// Not broken, but worth a look.
    Warn,
    /// Broken: needs the operator.
    Fail,
    /// Could not be checked (not applicable here, or no data yet).
    Skip,
}

impl CheckStatus {
    /// `pass`, `warn`, `fail`, `skip`.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Pass => "pass",
            CheckStatus::Warn => "warn",
            CheckStatus::Fail => "fail",
            CheckStatus::Skip => "skip",
        }
    }
}

/// One doctor check (`GET /v1/doctor`, `routerctl doctor`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DoctorCheck {
    /// `reconcile`, `ledger`, `routes`, `firewall`, `mgmt`, `leases`, `disk`, `runtime`.
    pub area: String,
    /// Stable code (`R002`): area letter and number, never reused.
    pub code: String,
    /// What is checked, short.
    pub name: String,
    /// The outcome.
    pub status: CheckStatus,
    /// What was found.
    pub detail: String,
    /// What to do about a warn or fail; empty on pass.
    pub remedy: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triggers_are_one_comma_separated_string_in_json() {
        let t = Triggers(vec![Trigger::Address, Trigger::Route]);
        let json = serde_json::to_string(&t).expect("serializes");
        assert_eq!(json, r#""address,route""#);
        assert_eq!(t.to_string(), "address,route");
        assert_eq!(serde_json::from_str::<Triggers>(&json).expect("reads back"), t);
        assert_eq!(serde_json::from_str::<Triggers>(r#""""#).expect("none"), Triggers::default());
        assert!(serde_json::from_str::<Triggers>(r#""address,weather""#).is_err());
    }

    #[test]
    fn daemon_states_are_lowercase_words() {
        for (state, word) in [
            (DaemonState::Starting, "starting"),
            (DaemonState::Unconfigured, "unconfigured"),
            (DaemonState::Running, "running"),
            (DaemonState::Stopping, "stopping"),
        ] {
            assert_eq!(serde_json::to_value(state).expect("serializes"), word);
            assert_eq!(state.as_str(), word);
        }
    }
}
