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

use routerd_host::AttributeDiff;

use crate::intent::{Action, ApplyWith};

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
    /// Kubernetes-style conditions (`Ready`, `Blocked`, ...).
    pub conditions: Vec<Condition>,
}

/// An intent as listed in a report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactIntentRef {
    /// Artifact kind.
    pub kind: Cow<'static, str>,
    /// Artifact name.
    pub name: String,
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
    pub name: String,
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
    /// `create`, `modify`, `delete`, `recreate`.
    pub operation: Cow<'static, str>,
    /// Artifact kind.
    pub kind: Cow<'static, str>,
    /// Artifact name.
    pub name: String,
    /// Owning resource ID (empty for orphans no resource emits).
    pub owner: Arc<str>,
    /// Why (`not on the host`, `attributes differ`, `orphan: ...`).
    pub reason: String,
    /// For modify/recreate: the differing attributes.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub diff: Vec<AttributeDiff>,
    /// `planned`, `done`, `failed`, `skipped` (a dependency failed), `blocked` (no configurator).
    pub result: Cow<'static, str>,
    /// Error text for failed operations.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

/// A status condition (seed 004; Kubernetes `metav1.Condition` shape).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `Ready`, `Blocked`, `Drifted`, `AdoptionRequired`.
    #[serde(rename = "type")]
    pub type_: Cow<'static, str>,
    /// `True`, `False`, `Unknown`.
    pub status: Cow<'static, str>,
    /// Stable CamelCase reason (`ConfiguratorMissing`, `KernelRejected`).
    pub reason: Cow<'static, str>,
    /// Human message.
    pub message: String,
    /// RFC 3339 UTC.
    pub last_transition_time: Arc<str>,
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
    /// `delete` when reconcile removes it, `keep` otherwise.
    pub cleanup: String,
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
        self.operations.iter().filter(|o| o.result != "blocked").count()
    }
}
