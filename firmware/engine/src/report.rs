//! Builds the Result document from a plan (and, after apply, the executed operations). Pure.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use routerd_graph::{Operation, PlannedOp};
use routerd_host::{ArtifactKey, ArtifactSpec};
use routerd_model::Config;
use rustc_hash::FxHashMap;

use crate::intent::{Action, Intent};
use crate::item::{HostItem, artifact_key};
use crate::kind_status::KindIndex;
use crate::plan::EnginePlan;
use crate::policy::Cleanup;
use crate::reason::Reason;
use crate::result::{
    AdoptionCandidate, ArtifactIntentRef, ArtifactRef, Condition, ConditionStatus, ConditionType,
    ObservedArtifact, OperationRecord, OperationResult, Orphan, OrphanCleanup, Phase,
    ResourceResult, ResultDocument,
};

/// A condition before it gets its time: `(type, status, reason, message)`.
type Verdict = (ConditionType, ConditionStatus, Reason, String);

/// Inputs of a report beyond the plan.
pub struct ReportInput<'a> {
    /// The config (resource order and IDs).
    pub config: &'a Config,
    /// `plan`, `dry-run`, `reconcile`, `observe`, `adopt`.
    pub mode: &'a str,
    /// Generation to report.
    pub generation: u64,
    /// RFC 3339 time of the report.
    pub timestamp: String,
    /// Operations as executed (reconcile); `None` reports the plan's operations as planned.
    pub executed: Option<Vec<Arc<OperationRecord>>>,
    /// Whether to list operations at all (`observe` does not).
    pub with_operations: bool,
    /// Artifacts adopted in this run.
    pub adopted: Vec<ArtifactRef>,
    /// Document-level warnings.
    pub warnings: Vec<String>,
}

/// Builds the Result document.
pub fn build(plan: &EnginePlan, input: ReportInput<'_>) -> ResultDocument {
    let planned = planned_records(plan);
    let operations = match (&input.executed, input.with_operations) {
        (_, false) => Vec::new(),
        (Some(done), true) => done.clone(),
        (None, true) => planned.clone(),
    };
    let pending: BTreeMap<ArtifactKey, String> =
        plan.ops.pending.iter().map(|(k, why)| (artifact_key(k), why.clone())).collect();
    let by_result = |result: OperationResult| -> BTreeMap<(&str, &str), &OperationRecord> {
        operations
            .iter()
            .filter(|o| o.result == result)
            .map(|o| ((&*o.kind, &*o.name), &**o))
            .collect()
    };
    let failed = by_result(OperationResult::Failed);
    // Not run because something they depend on failed (or strict mode stopped): blocked too,
    // not merely drifted, so the operator sees the apply stopped them.
    let skipped = by_result(OperationResult::Skipped);
    let candidates: BTreeSet<&ArtifactKey> =
        plan.candidates.iter().map(|c| c.intent.key()).collect();
    // Grouped once: a config has thousands of resources, a scan per resource is quadratic.
    let pairs: Vec<(&Intent, &HostItem)> =
        plan.desired.intents.iter().zip(&plan.desired.items).collect();
    // A shared or conflicting artifact is listed under every resource declaring it.
    let mut intents_of: FxHashMap<&str, Vec<&(&Intent, &HostItem)>> = FxHashMap::default();
    for pair in &pairs {
        for owner in pair.0.owners() {
            intents_of.entry(&**owner).or_default().push(pair);
        }
    }
    let planned_of = group_by_owner(planned.iter(), |o| &*o.owner);
    let operations_of = group_by_owner(operations.iter(), |o| &*o.owner);
    // One allocation for the time every condition carries.
    let now: Arc<str> = Arc::from(input.timestamp.as_str());
    let (no_intents, no_ops) = (Vec::new(), Vec::new());

    let executed = input.executed.is_some();
    let kinds = KindIndex::new(plan);
    let one = |res: &routerd_model::Resource| -> ResourceResult {
        let id = res.id();
        let here: &Vec<&(&Intent, &HostItem)> = intents_of.get(id.as_str()).unwrap_or(&no_intents);
        let intents: Vec<&Intent> = here.iter().map(|(i, _)| *i).collect();
        let planned_here: &Vec<&Arc<OperationRecord>> =
            planned_of.get(id.as_str()).unwrap_or(&no_ops);
        let mut r = ResourceResult {
            id: id.clone(),
            generation: None,
            observed_generation: None,
            phase: Phase::Healthy,
            observed: here.iter().map(|(i, item)| observed(plan, i, item)).collect(),
            plan: planned_here.iter().map(|o| Arc::clone(o)).collect(),
            artifacts: here
                .iter()
                .map(|(i, item)| ArtifactIntentRef {
                    kind: Cow::Borrowed(i.kind().as_str()),
                    name: Arc::clone(&item.key.name),
                    action: i.action,
                    apply_with: i.apply_with,
                })
                .collect(),
            warnings: plan.desired.warnings.get(&id).cloned().unwrap_or_default(),
            conditions: Vec::new(),
            status: None,
        };
        if executed {
            let ran = operations_of.get(id.as_str()).unwrap_or(&no_ops);
            r.plan = ran.iter().map(|o| Arc::clone(o)).collect();
        }
        let mut conds = Vec::new();
        // Informational: a check's verdict, a candidate on standby. Not a block.
        let mut health = Vec::new();
        for i in &intents {
            if i.kind() == routerd_host::ArtifactKind::HealthCheck {
                health.push(verdict(plan, i));
            }
            if i.kind() == routerd_host::ArtifactKind::StateVariable {
                health.push(variable(plan, i));
            }
            if i.kind() == routerd_host::ArtifactKind::AddressSelection {
                health.push(selected(i));
            }
            if matches!(
                i.kind(),
                routerd_host::ArtifactKind::Dhcp4Client
                    | routerd_host::ArtifactKind::Dhcp6Client
                    | routerd_host::ArtifactKind::Dhcp6PrefixDelegation
            ) {
                health.push(bound(plan, i));
            }
            if let Some((reason, msg)) = plan.desired.blocked.get(i.key()) {
                conds.push((ConditionType::Blocked, *reason, format!("{}: {msg}", i.key())));
            } else if let Some((reason, msg)) = plan.unavailable.get(i.key()) {
                conds.push((ConditionType::Blocked, *reason, format!("{}: {msg}", i.key())));
            } else if let Some(o) = failed.get(&(i.kind().as_str(), i.key().name.as_str())) {
                let err = o.error.clone().unwrap_or_default();
                conds.push((
                    ConditionType::Blocked,
                    Reason::OperationFailed,
                    format!("{} {}: {err}", o.operation, i.key()),
                ));
            } else if let Some(o) = skipped.get(&(i.kind().as_str(), i.key().name.as_str())) {
                let why = o.error.as_deref().unwrap_or("an operation it depends on failed");
                conds.push((
                    ConditionType::Blocked,
                    Reason::OperationSkipped,
                    format!("{} {} was not run: {why}", o.operation, i.key()),
                ));
            } else if let Some(why) = pending.get(i.key()) {
                match (failing_check(plan, i), unmet_gate(plan, i)) {
                    (Some(check), _) => health.push((
                        ConditionType::Standby,
                        ConditionStatus::True,
                        Reason::HealthCheckFailing,
                        format!("{} is withdrawn while {check} is not healthy", i.key()),
                    )),
                    (None, Some(gate)) => health.push((
                        ConditionType::Active,
                        ConditionStatus::False,
                        Reason::StateConditionUnmet,
                        format!("{} is withdrawn while {gate}", i.key()),
                    )),
                    (None, None) => conds.push((
                        ConditionType::Blocked,
                        Reason::DependencyPending,
                        format!("{}: {why}", i.key()),
                    )),
                }
            }
        }
        // Drift is what the plan (after apply: the verifying plan) still has to do.
        let drifted: Vec<&OperationRecord> = planned_here
            .iter()
            .map(|o| &***o)
            .filter(|o| o.result == OperationResult::Planned)
            .collect();
        let unowned: Vec<String> = intents
            .iter()
            .filter(|i| candidates.contains(i.key()))
            .map(|i| i.key().to_string())
            .collect();
        r.phase = if !conds.is_empty() {
            Phase::Blocked
        } else if !drifted.is_empty() {
            Phase::Drifted
        } else if !unowned.is_empty() {
            Phase::RequiresAdoption
        } else {
            Phase::Healthy
        };
        r.conditions = conditions(&r, conds, &drifted, &unowned, &now);
        r.conditions.extend(health.into_iter().map(|(type_, status, reason, message)| {
            let last_transition_time = Arc::clone(&now);
            Condition { type_, status, reason, message, last_transition_time }
        }));
        if let Some(render) = kind_render(res) {
            let ops = if executed { operations_of.get(id.as_str()) } else { Some(planned_here) };
            let facts = kinds.facts(here, ops.map_or(&[][..], Vec::as_slice), executed);
            let status = render.status(res, &facts);
            r.conditions.extend(status.conditions.into_iter().map(|c| Condition {
                type_: ConditionType::Controller(c.type_),
                status: c.status,
                reason: Reason::Controller(c.reason),
                message: c.message,
                last_transition_time: Arc::clone(&now),
            }));
            r.status = status.fields;
        }
        r
    };
    let resources: Vec<ResourceResult> = input.config.spec.resources.iter().map(one).collect();

    let orphans = orphans(plan);
    let mut phase = resources.iter().map(|r| r.phase).max().unwrap_or(Phase::Healthy);
    if input.executed.is_none() && orphans.iter().any(|o| o.cleanup == OrphanCleanup::Delete) {
        phase = phase.max(Phase::Drifted);
    }
    ResultDocument {
        generation: input.generation,
        timestamp: input.timestamp,
        phase,
        mode: input.mode.to_string(),
        resources,
        orphans,
        adoption_candidates: adoption_candidates(plan),
        adopted_artifacts: input.adopted,
        operations,
        warnings: input.warnings,
    }
}

/// Items grouped by their owner resource ID.
fn group_by_owner<'a, T>(
    items: impl Iterator<Item = &'a T>,
    owner: impl Fn(&'a T) -> &'a str,
) -> FxHashMap<&'a str, Vec<&'a T>>
where
    T: 'a,
{
    let mut out: FxHashMap<&'a str, Vec<&'a T>> = FxHashMap::default();
    for item in items {
        out.entry(owner(item)).or_default().push(item);
    }
    out
}

/// The plan's operations as records (`planned`, or `blocked` for intents without a
/// configurator and their dependents).
pub fn planned_records(plan: &EnginePlan) -> Vec<Arc<OperationRecord>> {
    let orphan_reasons = orphan_reasons(plan);
    let cascaded = plan
        .ops
        .cascaded
        .iter()
        .map(|(item, with)| Arc::new(cascade_record(item, with, OperationResult::Planned)));
    plan.ops
        .ops
        .iter()
        .map(|op| Arc::new(record(plan, op, &orphan_reasons)))
        .chain(cascaded)
        .collect()
}

/// The record of an orphan that goes with `with` (the graph's `cascade`: an RRset with its
/// zone): a delete with no operation of its own, `planned` or `done` (`result`).
pub(crate) fn cascade_record(
    item: &routerd_graph::Key<routerd_host::ArtifactKind>,
    with: &routerd_graph::Key<routerd_host::ArtifactKind>,
    result: OperationResult,
) -> OperationRecord {
    OperationRecord {
        operation: Operation::Delete,
        kind: Cow::Borrowed(item.kind.as_str()),
        name: Arc::clone(&item.name),
        owner: Arc::from(""),
        reason: format!("orphan: goes with {}", artifact_key(with)),
        diff: Vec::new(),
        result,
        error: None,
    }
}

/// The cleanup reason of each orphan the plan deletes, by key: looked up once per orphan
/// delete, and removing much of a config makes thousands of both.
pub(crate) fn orphan_reasons(plan: &EnginePlan) -> FxHashMap<&ArtifactKey, &'static str> {
    plan.orphans
        .iter()
        .filter_map(|o| match &o.cleanup {
            Some(Cleanup::Delete { reason }) => Some((&o.key, *reason)),
            _ => None,
        })
        .collect()
}

/// The record of one planned operation (result `planned`, or `blocked`).
pub(crate) fn record(
    plan: &EnginePlan,
    op: &PlannedOp<HostItem>,
    orphan_reasons: &FxHashMap<&ArtifactKey, &'static str>,
) -> OperationRecord {
    let key = artifact_key(&op.key);
    let diff = match (&op.before, &op.after, op.op) {
        (Some(b), Some(a), Operation::Modify) => a.artifact.spec.drift(&b.artifact.spec),
        _ => Vec::new(),
    };
    let blocked = plan.desired.blocked.contains_key(&key);
    OperationRecord {
        operation: op.op,
        kind: Cow::Borrowed(key.kind.as_str()),
        owner: owner(op),
        reason: reason(plan, op, orphan_reasons),
        name: Arc::clone(&op.key.name),
        diff,
        result: if blocked { OperationResult::Blocked } else { OperationResult::Planned },
        error: None,
    }
}

/// The owner resource ID of a planned operation's item; empty for an orphan.
fn owner(op: &PlannedOp<HostItem>) -> Arc<str> {
    let item = op.after.as_ref().or(op.before.as_ref());
    item.map_or_else(|| Arc::from(""), |i| Arc::clone(&i.owner))
}

/// Why a planned operation runs: the engine's reason, an orphan's cleanup reason, or what
/// blocks it.
pub(crate) fn reason(
    plan: &EnginePlan,
    op: &PlannedOp<HostItem>,
    orphan_reasons: &FxHashMap<&ArtifactKey, &'static str>,
) -> String {
    let key = artifact_key(&op.key);
    if let Some((_, message)) = plan.desired.blocked.get(&key) {
        return message.clone();
    }
    if op.op == Operation::Delete && owner(op).is_empty() {
        return orphan_reasons
            .get(&key)
            .map_or_else(|| "orphan".to_string(), |reason| format!("orphan: {reason}"));
    }
    op.reason.to_string()
}

/// The `Healthy` condition of a HealthCheck's verdict item: `(type, status, reason, message)`.
fn verdict(plan: &EnginePlan, i: &Intent) -> Verdict {
    let current = plan.current.get(&crate::item::graph_key(i.key()));
    match current.map(|c| &c.artifact.spec) {
        Some(routerd_host::ArtifactSpec::Health(h)) => {
            let target = h.target.as_deref().unwrap_or("target unresolved");
            let detail = h.detail.as_deref().unwrap_or("");
            let message = format!("{target}: {detail}");
            if h.healthy {
                (ConditionType::Healthy, ConditionStatus::True, Reason::ProbesSucceed, message)
            } else {
                (ConditionType::Healthy, ConditionStatus::False, Reason::ProbesFail, message)
            }
        }
        _ => (
            ConditionType::Healthy,
            ConditionStatus::Unknown,
            Reason::NoVerdict,
            "no verdict yet: the daemon's scheduler has not probed (reconcile --once runs no \
             probes)"
                .to_string(),
        ),
    }
}

/// The `Value` condition of a StatePolicy's variable item: `(type, status, reason, message)`.
fn variable(plan: &EnginePlan, i: &Intent) -> Verdict {
    use routerd_host::artifact::StateVariableStatus as S;
    let current = plan.current.get(&crate::item::graph_key(i.key()));
    let Some(routerd_host::ArtifactSpec::State(v)) = current.map(|c| &c.artifact.spec) else {
        let msg = "not evaluated: the daemon's scheduler evaluates state policies (reconcile \
                   --once does not)";
        return (
            ConditionType::Value,
            ConditionStatus::Unknown,
            Reason::NotEvaluated,
            msg.to_string(),
        );
    };
    let detail = v.detail.as_deref().unwrap_or("");
    match (v.status, v.value.as_deref()) {
        (S::Set, Some(value)) => (
            ConditionType::Value,
            ConditionStatus::True,
            Reason::Set,
            format!("{} = {value}: {detail}", v.variable),
        ),
        (S::Unknown, _) => (
            ConditionType::Value,
            ConditionStatus::Unknown,
            Reason::NotEvaluated,
            format!("{}: {detail}", v.variable),
        ),
        _ => (
            ConditionType::Value,
            ConditionStatus::False,
            Reason::Unset,
            format!("{} has no value: {detail}", v.variable),
        ),
    }
}

/// The `Selected` condition of a SelfAddressPolicy's selection item: `(type, status, reason,
/// message)`. The selection is rendered (ADR 0008), so the intent itself carries it.
fn selected(i: &Intent) -> Verdict {
    use crate::render::SelectedAddress;
    let routerd_host::ArtifactSpec::Opaque(o) = &i.artifact.spec else {
        return (
            ConditionType::Selected,
            ConditionStatus::Unknown,
            Reason::NotEvaluated,
            String::new(),
        );
    };
    match serde_json::from_value::<SelectedAddress>(o.attributes.clone()) {
        Ok(SelectedAddress { address: Some(address), candidate, .. }) => {
            let from = candidate.map(|(n, what)| format!(" from candidates[{n}], {what}"));
            (
                ConditionType::Selected,
                ConditionStatus::True,
                Reason::CandidateSelected,
                format!("{address}{}", from.unwrap_or_default()),
            )
        }
        Ok(_) => (
            ConditionType::Selected,
            ConditionStatus::False,
            Reason::NoCandidateAvailable,
            "no candidate has an address yet (see the warnings)".to_string(),
        ),
        Err(e) => {
            (ConditionType::Selected, ConditionStatus::Unknown, Reason::NotEvaluated, e.to_string())
        }
    }
}

/// The `Bound` condition of a DHCP client binding (`dhcp.ipv4.client`, `dhcp.ipv6.client`,
/// `dhcp.ipv6.prefixDelegation`): `True` while networkd holds a lease for it, as the observed
/// addresses (for a delegation: the delegated prefixes, or, when networkd does not say which
/// uplink a prefix came through, an address derived from it on a downstream link). What
/// `required` and `convergenceTimeout` act on (the supervisor's doctor, checks B001 and B002).
fn bound(plan: &EnginePlan, i: &Intent) -> Verdict {
    let observed = |key: &ArtifactKey| match plan
        .current
        .get(&crate::item::graph_key(key))
        .map(|c| &c.artifact.spec)
    {
        Some(ArtifactSpec::DhcpClient(d)) => Some(d.addresses.clone()),
        _ => None,
    };
    let Some(addresses) = observed(i.key()) else {
        return (
            ConditionType::Bound,
            ConditionStatus::Unknown,
            Reason::NotObserved,
            format!("{} is not configured on the host yet", i.key()),
        );
    };
    let pd = i.kind() == routerd_host::ArtifactKind::Dhcp6PrefixDelegation;
    if !addresses.is_empty() {
        let what = if pd { "delegated" } else { "leased" };
        return (
            ConditionType::Bound,
            ConditionStatus::True,
            Reason::LeaseBound,
            format!("{what} {}", addresses.join(", ")),
        );
    }
    if pd {
        // The downstream addresses derived from this delegation (their intents depend on it).
        let derived: Vec<String> = plan
            .desired
            .intents
            .iter()
            .filter(|d| d.kind() == routerd_host::ArtifactKind::Dhcp6DelegatedAddress)
            .filter(|d| d.dependencies.iter().any(|dep| dep.key == *i.key()))
            .filter_map(|d| observed(d.key()))
            .flatten()
            .collect();
        if !derived.is_empty() {
            let message = format!("delegated; derived {}", derived.join(", "));
            return (ConditionType::Bound, ConditionStatus::True, Reason::LeaseBound, message);
        }
        return (
            ConditionType::Bound,
            ConditionStatus::False,
            Reason::NoPrefix,
            "no prefix delegated yet".to_string(),
        );
    }
    (ConditionType::Bound, ConditionStatus::False, Reason::NoLease, "no lease yet".to_string())
}

/// The `when.state` condition `i` waits on that does not hold at the time planned for
/// ([`EnginePlan::now`]), described, if any. Only a variable that is there counts: one not
/// evaluated yet is an ordinary pending dependency.
fn unmet_gate(plan: &EnginePlan, i: &Intent) -> Option<String> {
    use routerd_host::artifact::StateVariableStatus as S;
    i.dependencies.iter().find_map(|d| {
        let condition = d.state.as_ref()?;
        let spec = &plan.current.get(&crate::item::graph_key(&d.key))?.artifact.spec;
        let routerd_host::ArtifactSpec::State(v) = spec else { return None };
        if crate::state::holds(condition, spec, plan.now) {
            return None;
        }
        let value = match (v.status, v.value.as_deref()) {
            (S::Set, Some(value)) => format!("it is {value:?}"),
            (S::Unknown, _) => "it is not evaluated yet".to_string(),
            _ => "it has no value".to_string(),
        };
        Some(format!("when.state.{} does not hold ({value})", v.variable))
    })
}

/// The HealthCheck `i` waits on that is not healthy now, if any.
fn failing_check<'a>(plan: &EnginePlan, i: &'a Intent) -> Option<&'a str> {
    i.dependencies
        .iter()
        .filter(|d| d.healthy)
        .find(|d| {
            !plan
                .current
                .get(&crate::item::graph_key(&d.key))
                .is_some_and(|c| crate::health::is_healthy(&c.artifact.spec))
        })
        .map(|d| d.key.name.as_str())
}

/// The render of a controller crate's resource, which may report its status.
fn kind_render(
    res: &routerd_model::Resource,
) -> Option<std::sync::Arc<dyn crate::registry::KindRender>> {
    match &res.spec {
        routerd_model::ResourceSpec::External(spec) => {
            crate::registry::render_of(spec.descriptor())
        }
        _ => None,
    }
}

fn observed(plan: &EnginePlan, i: &Intent, item: &HostItem) -> ObservedArtifact {
    let current = plan.current.get(&item.key);
    ObservedArtifact {
        kind: i.kind().as_str().into(),
        name: Arc::clone(&item.key.name),
        present: current.is_some(),
        owned: plan.owned.contains(i.key()),
        drift: current.map(|c| i.artifact.spec.drift(&c.artifact.spec)).unwrap_or_default(),
        addresses: match current.map(|c| &c.artifact.spec) {
            Some(ArtifactSpec::DhcpClient(d)) => d.addresses.clone(),
            _ => Vec::new(),
        },
    }
}

fn conditions(
    r: &ResourceResult,
    blocked: Vec<(ConditionType, Reason, String)>,
    drifted: &[&OperationRecord],
    unowned: &[String],
    now: &Arc<str>,
) -> Vec<Condition> {
    let cond = |type_: ConditionType, status: bool, reason: Reason, message: String| Condition {
        type_,
        status: ConditionStatus::from(status),
        reason,
        message,
        last_transition_time: Arc::clone(now),
    };
    let (ready, reason) = match r.phase {
        Phase::Healthy | Phase::RequiresAdoption => (true, Reason::ArtifactsInPlace),
        Phase::Drifted => (false, Reason::Drifted),
        Phase::Blocked => (false, Reason::Blocked),
    };
    let mut out = vec![cond(
        ConditionType::Ready,
        ready,
        reason,
        format!("{} artifacts, phase {}", r.artifacts.len(), r.phase.as_str()),
    )];
    for (type_, reason, message) in blocked {
        out.push(cond(type_, true, reason, message));
    }
    if !drifted.is_empty() {
        let list: Vec<String> =
            drifted.iter().map(|o| format!("{} {}/{}", o.operation, o.kind, o.name)).collect();
        out.push(cond(ConditionType::Drifted, true, Reason::OperationsPending, list.join(", ")));
    }
    if !unowned.is_empty() {
        out.push(cond(
            ConditionType::AdoptionRequired,
            true,
            Reason::NotInLedger,
            format!("present but not recorded as owned: {}", unowned.join(", ")),
        ));
    }
    out
}

fn orphans(plan: &EnginePlan) -> Vec<Orphan> {
    plan.orphans
        .iter()
        .map(|o| {
            let (reason, remediation, cleanup) = match &o.cleanup {
                Some(Cleanup::Delete { reason }) => {
                    (reason.to_string(), "reconcile deletes it".to_string(), OrphanCleanup::Delete)
                }
                Some(Cleanup::Keep { reason, remediation }) => {
                    (reason.to_string(), remediation.to_string(), OrphanCleanup::Keep)
                }
                None => (
                    "recorded in the ledger but absent from the host".to_string(),
                    "reconcile drops the ledger entry".to_string(),
                    OrphanCleanup::Forget,
                ),
            };
            Orphan {
                kind: o.key.kind.as_str().into(),
                name: o.key.name.clone(),
                owner: o.owner.clone().unwrap_or_default(),
                reason,
                remediation,
                cleanup,
                observed: o
                    .observed
                    .as_ref()
                    .and_then(|a| serde_json::to_value(&a.spec).ok())
                    .unwrap_or(serde_json::Value::Null),
            }
        })
        .collect()
}

fn adoption_candidates(plan: &EnginePlan) -> Vec<AdoptionCandidate> {
    plan.candidates
        .iter()
        .filter(|c| c.intent.action == Action::Ensure)
        .map(|c| {
            let adoptable = c.diff.is_empty();
            let reason = if adoptable {
                "present on the host and matches the config".to_string()
            } else {
                let attrs: Vec<&str> = c.diff.iter().map(|d| d.attribute.as_str()).collect();
                format!("present but differs: {}", attrs.join(", "))
            };
            AdoptionCandidate {
                kind: c.intent.kind().as_str().into(),
                name: c.intent.key().name.clone(),
                owner: c.intent.owner.to_string(),
                reason,
                adoptable,
                desired: serde_json::to_value(&c.intent.artifact.spec).unwrap_or_default(),
                observed: serde_json::to_value(&c.observed.spec).unwrap_or_default(),
                diff: c.diff.clone(),
            }
        })
        .collect()
}
