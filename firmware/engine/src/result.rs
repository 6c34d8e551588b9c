//! The Result document: what `plan`, `reconcile`, `observe` and `adopt` report, as JSON for
//! tools and the web UI and as an 80-column table for the serial console (see `table.rs`).
//!
//! Shape (camelCase JSON): `{generation, timestamp, phase, resources:[{id, phase, observed,
//! plan, artifacts:[{kind,name,action,applyWith}], warnings, conditions}], orphans:[{kind, name,
//! owner, reason, remediation, observed}], adoptionCandidates:[{kind, name, owner, reason,
//! desired, observed}], adoptedArtifacts, warnings}`, plus `operations` (what apply executed).

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use routerd_graph::Operation;
use routerd_host::{AttributeDiff, ControllerCode};

use crate::intent::{Action, ApplyWith};
pub use crate::reason::Reason;

/// Overall or per-resource phase, worst first: `Blocked` > `Drifted` > `RequiresAdoption` >
/// `Healthy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Phase {
    /// Every artifact is as desired.
    Healthy,
    /// Artifacts exist as desired but some are not in the ledger (adopt them).
    RequiresAdoption,
    /// Operations are pending: the host differs from the config.
    Drifted,
    /// Something cannot be applied: a failed operation, a missing configurator, an unmet
    /// dependency.
    Blocked,
}

impl Phase {
    /// The name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Healthy => "Healthy",
            Self::RequiresAdoption => "RequiresAdoption",
            Self::Drifted => "Drifted",
            Self::Blocked => "Blocked",
        }
    }
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultDocument {
    /// Config generation (increments when the applied config text changes).
    pub generation: u64,
    /// When the report was made, RFC 3339 UTC.
    pub timestamp: String,
    /// Worst resource phase (orphans that will be deleted count as `Drifted`).
    pub phase: Phase,
    /// `plan`, `dry-run`, `reconcile`, `observe`, `adopt`.
    pub mode: String,
    /// Per resource, in config order.
    pub resources: Vec<ResourceResult>,
    /// Artifacts in routerd's namespaces or the ledger that no resource emits.
    pub orphans: Vec<Orphan>,
    /// Desired artifacts present on the host but not in the ledger.
    pub adoption_candidates: Vec<AdoptionCandidate>,
    /// Artifacts recorded by `adopt --apply` in this run.
    pub adopted_artifacts: Vec<ArtifactRef>,
    /// Operations executed (reconcile) or that would be (plan, dry-run), in order.
    pub operations: Vec<Arc<OperationRecord>>,
    /// Document-level warnings.
    pub warnings: Vec<String>,
}

/// One resource's status.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceResult {
    /// `apiVersion/kind/name`.
    pub id: String,
    /// The resource's spec generation, when a daemon tracks it (seed 004).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub generation: Option<u64>,
    /// The generation this report processed, when a daemon tracks it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub observed_generation: Option<u64>,
    /// This resource's phase.
    pub phase: Phase,
    /// Its artifacts as found on the host.
    pub observed: Vec<ObservedArtifact>,
    /// Operations on its artifacts.
    pub plan: Vec<Arc<OperationRecord>>,
    /// Its intents.
    pub artifacts: Vec<ArtifactIntentRef>,
    /// Warnings from rendering.
    pub warnings: Vec<String>,
    /// Kubernetes-style conditions (`Ready`, `Blocked`, ...), then those its controller crate
    /// reports (`Published`, ADR 0013).
    pub conditions: Vec<Condition>,
    /// The kind's own status fields beyond phase and conditions, from its controller crate
    /// ([`crate::registry::KindRender::status`]): a `DNSZone`'s `servers[]`, `recordsCount`
    /// and `foreignRecords`. Absent for built-in kinds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub status: Option<serde_json::Value>,
}

/// An intent as listed in a report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactIntentRef {
    /// Artifact kind.
    pub kind: Cow<'static, str>,
    /// Artifact name.
    pub name: Arc<str>,
    /// ensure / observe / delete.
    pub action: Action,
    /// Configurator family.
    pub apply_with: ApplyWith,
}

/// An artifact of a resource as observed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObservedArtifact {
    /// Artifact kind.
    pub kind: Cow<'static, str>,
    /// Artifact name.
    pub name: Arc<str>,
    /// Present on the host.
    pub present: bool,
    /// Recorded as owned in the ledger.
    pub owned: bool,
    /// Attributes that differ from desired (empty when present and matching).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub drift: Vec<AttributeDiff>,
    /// What the artifact produced on the host, for kinds whose result is known only at run
    /// time: the addresses a DHCP client binding or a delegated address got (CIDR form,
    /// `2001:db8:0:2a::1/64`). Empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub addresses: Vec<String>,
}

/// A planned or executed operation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationRecord {
    /// `create`, `modify`, `delete` (`recreate` runs as a delete and a create).
    pub operation: Operation,
    /// Artifact kind.
    pub kind: Cow<'static, str>,
    /// Artifact name.
    pub name: Arc<str>,
    /// Owning resource ID (empty for orphans no resource emits).
    pub owner: Arc<str>,
    /// Why (`not on the host`, `attributes differ`, `orphan: ...`).
    pub reason: String,
    /// For modify/recreate: the differing attributes.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub diff: Vec<AttributeDiff>,
    /// `planned`, `done`, `failed`, `skipped` (a dependency failed), `blocked` (no configurator).
    pub result: OperationResult,
    /// Error text for failed operations.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

/// A status condition (seed 004; Kubernetes `metav1.Condition` shape).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `Ready`, `Blocked`, `Drifted`, `AdoptionRequired`, ...
    #[serde(rename = "type")]
    pub type_: ConditionType,
    /// `True`, `False`, `Unknown`.
    pub status: ConditionStatus,
    /// Stable CamelCase reason (`ConfiguratorMissing`, `DependencyPending`).
    pub reason: Reason,
    /// Human message.
    pub message: String,
    /// RFC 3339 UTC.
    pub last_transition_time: Arc<str>,
}

/// What became of a planned or executed operation (the Result document's `result`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OperationResult {
    /// In a plan (`plan`, `dry-run`, `observe`): would run.
    Planned,
    /// Ran and succeeded.
    Done,
    /// Ran and failed (the record's `error` says why).
    Failed,
    /// Not run: an operation it depends on failed, or strict mode stopped the apply.
    Skipped,
    /// Never runs: no configurator of this build applies it, or what it depends on is blocked.
    Blocked,
}

impl OperationResult {
    /// `planned`, `done`, `failed`, `skipped`, `blocked`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Planned => "planned",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
            Self::Blocked => "blocked",
        }
    }
}

impl std::fmt::Display for OperationResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// The type of a [`Condition`]; its [`Reason`]s are listed with [`Reason`]'s variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ConditionType {
    /// Every resource has one: `True` while it is `Healthy` or only `RequiresAdoption`.
    Ready,
    /// One per artifact of the resource that cannot be applied now (always `True`).
    Blocked,
    /// Operations on the resource's artifacts are pending (always `True`).
    Drifted,
    /// Artifacts of the resource are present but not recorded as owned (always `True`).
    AdoptionRequired,
    /// A HealthCheck's verdict.
    Healthy,
    /// A StatePolicy variable's value.
    Value,
    /// A SelfAddressPolicy's selected address.
    Selected,
    /// A DHCP client binding's or prefix delegation's lease.
    Bound,
    /// An artifact withdrawn while a HealthCheck it follows fails (`True`).
    Standby,
    /// An artifact gated by `when.state`: `False` while withdrawn because the condition does
    /// not hold.
    Active,
    /// A condition a controller crate reports for its kinds (`Published`, `Loaded`; ADR
    /// 0013), serialized as its word.
    #[serde(untagged)]
    Controller(ControllerCode),
}

impl ConditionType {
    /// The CamelCase name (`Ready`), as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ready => "Ready",
            Self::Blocked => "Blocked",
            Self::Drifted => "Drifted",
            Self::AdoptionRequired => "AdoptionRequired",
            Self::Healthy => "Healthy",
            Self::Value => "Value",
            Self::Selected => "Selected",
            Self::Bound => "Bound",
            Self::Standby => "Standby",
            Self::Active => "Active",
            Self::Controller(c) => c.as_str(),
        }
    }
}

impl std::fmt::Display for ConditionType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// Whether a [`Condition`] holds (Kubernetes `metav1.ConditionStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ConditionStatus {
    /// It holds.
    True,
    /// It does not hold.
    False,
    /// Not known yet (not probed, not evaluated, not observed).
    Unknown,
}

impl ConditionStatus {
    /// `True`, `False`, `Unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::True => "True",
            Self::False => "False",
            Self::Unknown => "Unknown",
        }
    }
}

impl From<bool> for ConditionStatus {
    fn from(holds: bool) -> Self {
        if holds { Self::True } else { Self::False }
    }
}

impl std::fmt::Display for ConditionStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// What reconcile does with an orphan (the Result document's `cleanup`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OrphanCleanup {
    /// routerd owns it: reconcile deletes it from the host.
    Delete,
    /// Not provably routerd's, or a kind routerd never deletes: left on the host.
    Keep,
    /// Recorded in the ledger but gone from the host: reconcile drops the ledger entry.
    Forget,
}

impl OrphanCleanup {
    /// `delete`, `keep`, `forget`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Delete => "delete",
            Self::Keep => "keep",
            Self::Forget => "forget",
        }
    }
}

impl std::fmt::Display for OrphanCleanup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// An orphan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Orphan {
    /// Artifact kind.
    pub kind: String,
    /// Artifact name.
    pub name: String,
    /// Owner recorded in the ledger, or empty.
    pub owner: String,
    /// Why it is (or is not) deleted.
    pub reason: String,
    /// What happens or what the operator can do.
    pub remediation: String,
    /// What reconcile does with it.
    pub cleanup: OrphanCleanup,
    /// Attributes as observed (`null` when only the ledger knows it).
    pub observed: serde_json::Value,
}

/// An adoption candidate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdoptionCandidate {
    /// Artifact kind.
    pub kind: String,
    /// Artifact name.
    pub name: String,
    /// Resource that declares it.
    pub owner: String,
    /// `matches desired` or `differs: mtu, ...`.
    pub reason: String,
    /// Whether `adopt --apply` would record it.
    pub adoptable: bool,
    /// Desired attributes.
    pub desired: serde_json::Value,
    /// Observed attributes.
    pub observed: serde_json::Value,
    /// Differing attributes (empty when adoptable).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub diff: Vec<AttributeDiff>,
}

/// A kind + name reference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactRef {
    /// Artifact kind.
    pub kind: String,
    /// Artifact name.
    pub name: String,
    /// Owner resource ID.
    pub owner: String,
}

impl ResultDocument {
    /// Operations that change the host (everything but `blocked` entries).
    pub fn operation_count(&self) -> usize {
        self.operations.iter().filter(|o| o.result != OperationResult::Blocked).count()
    }

    /// Writes the document as pretty JSON (two-space indents, no trailing newline), streamed
    /// into `w` (about 14 MB for 10,000 routes, never held as one string).
    ///
    /// Errors: those of `w`, and a serialization error (none of the document's types
    /// produces one).
    pub fn write_json_pretty<W: std::io::Write>(&self, w: W) -> serde_json::Result<()> {
        serde_json::to_writer_pretty(w, self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(i: usize) -> Arc<OperationRecord> {
        Arc::new(OperationRecord {
            operation: if i.is_multiple_of(3) { Operation::Modify } else { Operation::Create },
            kind: Cow::Borrowed("linux.ipv4.route"),
            name: Arc::from(format!("1000:10.{}.{}.0/24:0", i / 256, i % 256)),
            owner: Arc::from(format!("net.routerd.net/v1alpha1/IPv4StaticRoute/r{i}")),
            reason: "new item".into(),
            diff: if i.is_multiple_of(3) {
                vec![AttributeDiff {
                    attribute: "mtu".into(),
                    desired: serde_json::json!({"v": [i, "a\nb \"q\" é"], "e": {}}),
                    observed: serde_json::Value::Null,
                }]
            } else {
                Vec::new()
            },
            result: OperationResult::Done,
            error: i.is_multiple_of(7).then(|| format!("line one\nline two {i}")),
        })
    }

    /// A document with every field set and `resources` and `operations` of `n` entries.
    fn document(n: usize) -> ResultDocument {
        let ops: Vec<_> = (0..n).map(record).collect();
        let now: Arc<str> = Arc::from("2026-11-22T00:00:00Z");
        let resources = (0..n)
            .map(|i| ResourceResult {
                id: format!("net.routerd.net/v1alpha1/IPv4StaticRoute/r{i}"),
                generation: i.is_multiple_of(2).then_some(i as u64),
                observed_generation: None,
                phase: if i.is_multiple_of(5) { Phase::Drifted } else { Phase::Healthy },
                observed: vec![ObservedArtifact {
                    kind: Cow::Borrowed("linux.ipv4.route"),
                    name: ops[i].name.clone(),
                    present: true,
                    owned: i % 2 == 1,
                    drift: ops[i].diff.clone(),
                    addresses: if i.is_multiple_of(4) {
                        vec!["192.0.2.1/24".into()]
                    } else {
                        Vec::new()
                    },
                }],
                plan: vec![Arc::clone(&ops[i])],
                artifacts: vec![ArtifactIntentRef {
                    kind: Cow::Borrowed("linux.ipv4.route"),
                    name: ops[i].name.clone(),
                    action: Action::Ensure,
                    apply_with: ApplyWith::Rtnetlink,
                }],
                warnings: if i.is_multiple_of(9) { vec!["tab\there".into()] } else { Vec::new() },
                conditions: vec![Condition {
                    type_: ConditionType::Ready,
                    status: ConditionStatus::True,
                    reason: Reason::ArtifactsInPlace,
                    message: "1 artifacts".into(),
                    last_transition_time: Arc::clone(&now),
                }]
                .into_iter()
                .chain(i.is_multiple_of(7).then(|| Condition {
                    type_: ConditionType::Controller(ControllerCode::new("Published")),
                    status: ConditionStatus::False,
                    reason: Reason::Controller(ControllerCode::new("TsigBadKey")),
                    message: "refused".into(),
                    last_transition_time: Arc::clone(&now),
                }))
                .collect(),
                status: i.is_multiple_of(3).then(|| serde_json::json!({"serial": i})),
            })
            .collect();
        ResultDocument {
            generation: 3,
            timestamp: now.to_string(),
            phase: Phase::Drifted,
            mode: "reconcile".into(),
            resources,
            orphans: vec![Orphan {
                kind: "linux.ipv4.rule".into(),
                name: "100:fwmark".into(),
                owner: String::new(),
                reason: "orphan".into(),
                remediation: "delete".into(),
                cleanup: OrphanCleanup::Delete,
                observed: serde_json::json!({"priority": 100, "nested": [[], {}, [1, {"x": null}]]}),
            }],
            adoption_candidates: Vec::new(),
            adopted_artifacts: vec![ArtifactRef {
                kind: "linux.link".into(),
                name: "eth0".into(),
                owner: "net.routerd.net/v1alpha1/Interface/wan".into(),
            }],
            operations: ops,
            warnings: vec!["a document warning".into()],
        }
    }

    #[test]
    fn a_write_error_is_reported() {
        struct Full(usize);
        impl std::io::Write for Full {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                if self.0 < buf.len() {
                    return Err(std::io::Error::other("no space left"));
                }
                self.0 -= buf.len();
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let doc = document(2000);
        let err = doc.write_json_pretty(Full(300_000)).expect_err("the writer fills up");
        assert!(err.is_io() && err.to_string().contains("no space left"), "{err}");
    }
}
