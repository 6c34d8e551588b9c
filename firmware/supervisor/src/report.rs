//! What the daemon reports of a reconcile (`docs/control-api.md`): the status's
//! `lastReconcile` summary, `lastApply` and `lastRepair` with their operations by artifact name,
//! and the log line's named operations (issue 34 §2: what a resync or a notification repaired,
//! not "1 operations").

use std::time::{Duration, SystemTime};

use routerd_engine::{OperationResult, Phase, ResultDocument};
use routerd_ledger::GenerationRecord;
use routerd_model::status::{LastApply, LastRepair, OperationSummary, ReconcileSummary, Triggers};

use crate::daemon::rfc3339;

/// How many operations a reconcile's log line names.
const NAMED_OPERATIONS: usize = 5;

/// The operations of `doc` by name for the log (issue 34 §2: what a resync or a notification
/// repaired, not "1 operations"): `create linux.ipv4.address/lan0/10.9.0.1/24 (done)`, the
/// first [`NAMED_OPERATIONS`], then how many more.
pub(crate) fn named_operations(doc: &ResultDocument) -> String {
    let mut names: Vec<String> = doc
        .operations
        .iter()
        .take(NAMED_OPERATIONS)
        .map(|o| format!("{} {}/{} ({})", o.operation, o.kind, o.name, o.result))
        .collect();
    if doc.operations.len() > NAMED_OPERATIONS {
        names.push(format!("and {} more", doc.operations.len() - NAMED_OPERATIONS));
    }
    names.join(", ")
}

/// The first [`NAMED_OPERATIONS`](routerd_model::status::NAMED_OPERATIONS) operations of `doc`
/// by artifact name, for the status (the Overview's last apply and last repair).
pub(crate) fn operation_summaries(doc: &ResultDocument) -> Vec<OperationSummary> {
    doc.operations
        .iter()
        .take(routerd_model::status::NAMED_OPERATIONS)
        .map(|o| OperationSummary {
            operation: o.operation.to_string(),
            artifact: format!("{}/{}", o.kind, o.name),
            result: o.result.to_string(),
        })
        .collect()
}

/// The status's record of a reconcile that repaired drift (`doc` has operations and was not
/// an apply), triggered by `trigger`, started at `started`.
pub(crate) fn last_repair(
    doc: &ResultDocument,
    trigger: &Triggers,
    started: SystemTime,
) -> LastRepair {
    LastRepair {
        at: humantime::format_rfc3339_seconds(started).to_string(),
        trigger: trigger.clone(),
        operations: operation_summaries(doc),
        operations_total: doc.operations.len(),
    }
}

/// The status's record of the apply (or rollback) `record` whose reconcile made `doc`.
pub(crate) fn last_apply(doc: &ResultDocument, record: &GenerationRecord) -> LastApply {
    LastApply {
        generation: record.generation,
        author: record.author.clone(),
        channel: record.channel.as_str().to_string(),
        comment: record.comment.clone(),
        at: rfc3339(record.applied_at),
        operations: operation_summaries(doc),
        operations_total: doc.operations.len(),
    }
}

pub(crate) fn summary(
    doc: &ResultDocument,
    trigger: Triggers,
    started: SystemTime,
    took: Duration,
) -> ReconcileSummary {
    let count = |p: Phase| doc.resources.iter().filter(|r| r.phase == p).count();
    ReconcileSummary {
        trigger,
        started: humantime::format_rfc3339_seconds(started).to_string(),
        duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        operations: doc.operations.len(),
        failed: doc.operations.iter().filter(|o| o.result == OperationResult::Failed).count(),
        resources: doc.resources.len(),
        drifted: count(Phase::Drifted),
        blocked: count(Phase::Blocked),
        requires_adoption: count(Phase::RequiresAdoption),
        orphans: doc.orphans.len(),
    }
}
