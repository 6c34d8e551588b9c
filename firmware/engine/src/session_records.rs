//! What a reconcile writes to the ledger (STYLE.md "Transactions"): which planned creates are
//! recorded `Pending` before they run (write-ahead), the records of what ran, and the entries
//! the ledger holds after it, computed as the store computes them.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use routerd_graph::Operation;
use routerd_host::ArtifactKind;
use routerd_ledger::{EntryHead, EntryState, LedgerChange};
use rustc_hash::FxHashMap;

use crate::intent::{Action, Intent, is_inventory_backed};
use crate::item::{BackendRegistry, HostItem, artifact_key};
use crate::plan::EnginePlan;
use crate::result::{OperationRecord, OperationResult};

/// Whether prepare records the create of `intent`'s artifact as a new `Pending` entry: an
/// inventory-backed `ensure` that can be applied and that the ledger does not already own.
///
/// An owned artifact that is absent (deleted by hand, or a link moved out of the namespace for
/// a while) is created again under the entry it has: ownership, once proven by a create or an
/// adoption, is not given up because the artifact was away (issue 34 §4; ADR 0002). Rewriting
/// the entry as a `Pending` create would turn an adopted artifact into a created one, and a
/// create that then failed, was skipped, or was cut short by a crash would drop the entry, so
/// the artifact, back on the host, would be an adoption candidate again.
pub(super) fn records_create(plan: &EnginePlan, intent: &Intent) -> bool {
    intent.action == Action::Ensure
        && is_inventory_backed(intent.kind())
        && !plan.desired.blocked.contains_key(intent.key())
        && !plan.owned.contains(intent.key())
}

/// The executed operations as records, followed by planned operations that did not run
/// (`skipped` behind a failure, `blocked` without a configurator), then the orphans that
/// went with what was deleted (`cascaded`, `done` with no operation of their own).
pub(super) fn executed_records(
    plan: &EnginePlan,
    log: &[routerd_graph::OpLogEntry<HostItem>],
    cascaded: &[routerd_graph::Cascaded<ArtifactKind>],
    skipped: &[(routerd_graph::Key<ArtifactKind>, Operation, String)],
    registry: &BackendRegistry,
) -> Vec<Arc<OperationRecord>> {
    // A planned record is built only for the operations that did not run, not for every
    // one: after a cold apply the records would double the peak of the reconcile's memory.
    let orphan_reasons = crate::report::orphan_reasons(plan);
    let planned = |i: usize| crate::report::record(plan, &plan.ops.ops[i], &orphan_reasons);
    let position: FxHashMap<(Operation, &routerd_graph::Key<ArtifactKind>), usize> =
        plan.ops.ops.iter().enumerate().map(|(i, op)| ((op.op, &op.key), i)).collect();
    let mut ran = vec![false; plan.ops.ops.len()];
    let mut out = Vec::with_capacity(log.len());
    for e in log {
        let at = position.get(&(e.operation, &e.key)).copied();
        if let Some(i) = at {
            ran[i] = true;
        }
        let key = artifact_key(&e.key);
        let error = e.error.as_ref().map(|err| match registry.failure_reason(&key) {
            Some(reason) => format!("{reason}: {err}"),
            None => err.clone(),
        });
        let result = match (&e.error, plan.desired.blocked.contains_key(&key)) {
            (Some(_), true) => OperationResult::Blocked,
            (Some(_), false) => OperationResult::Failed,
            (None, _) => OperationResult::Done,
        };
        out.push(Arc::new(OperationRecord {
            operation: e.operation,
            kind: Cow::Borrowed(key.kind.as_str()),
            reason: at
                .map(|i| crate::report::reason(plan, &plan.ops.ops[i], &orphan_reasons))
                .unwrap_or_default(),
            name: Arc::clone(&e.key.name),
            owner: Arc::clone(&e.item.owner),
            diff: Vec::new(),
            result,
            error,
        }));
    }
    for (i, ran) in ran.into_iter().enumerate() {
        if ran {
            continue;
        }
        let p = planned(i);
        if p.result == OperationResult::Blocked {
            continue;
        }
        // Why it did not run when a strict run ended at a failure (`not run: delete … failed
        // first`); otherwise something it depends on failed, as the report says.
        let error = skipped
            .iter()
            .find(|(key, op, _)| {
                *op == p.operation && *key.name == *p.name && key.kind.as_str() == p.kind
            })
            .map(|(.., why)| why.strip_prefix("not run: ").unwrap_or(why).to_owned());
        out.push(Arc::new(OperationRecord { result: OperationResult::Skipped, error, ..p }));
    }
    out.extend(cascaded.iter().map(|(item, with)| {
        Arc::new(crate::report::cascade_record(item, with, OperationResult::Done))
    }));
    out
}

/// The ledger entries after `prepared` and then `committed` were applied to `before` (sorted
/// by key, as the store lists them), computed as the store computes them.
///
/// `prepared` is consumed: its entries' names move into the heads instead of being copied.
pub(super) fn entries_after(
    before: Vec<EntryHead>,
    prepared: Vec<LedgerChange>,
    committed: &[LedgerChange],
) -> Vec<EntryHead> {
    let mut by_key: BTreeMap<String, EntryHead> =
        before.into_iter().map(|e| (e.key(), e)).collect();
    // As the store applies it: a promotion of everything concerns what was pending before the
    // commit's other changes.
    let promote_all = |by_key: &mut BTreeMap<String, EntryHead>| {
        for e in by_key.values_mut().filter(|e| e.state == EntryState::Pending) {
            e.state = EntryState::Owned;
        }
    };
    put_all(&mut by_key, prepared);
    if committed.contains(&LedgerChange::PromoteAll) {
        promote_all(&mut by_key);
    }
    apply_changes(&mut by_key, committed);
    by_key.into_values().collect()
}

/// Applies `changes` in order, as [`apply_changes`] does, taking each put entry's strings.
///
/// Shape: a run of puts is gathered and goes in at once; into an empty map (the ledger
/// before a first reconcile) as one sorted build, which keeps the last put of a key as the
/// one-by-one inserts would.
pub(super) fn put_all(by_key: &mut BTreeMap<String, EntryHead>, changes: Vec<LedgerChange>) {
    let mut puts: Vec<(String, EntryHead)> = Vec::new();
    let flush = |by_key: &mut BTreeMap<String, EntryHead>, puts: &mut Vec<(String, EntryHead)>| {
        if by_key.is_empty() {
            *by_key = std::mem::take(puts).into_iter().collect();
        } else {
            by_key.extend(puts.drain(..));
        }
    };
    for change in changes {
        match change {
            LedgerChange::Put(e) => {
                let head = EntryHead::from(e);
                puts.push((head.key(), head));
            }
            other => {
                flush(by_key, &mut puts);
                apply_changes(by_key, [&other]);
            }
        }
    }
    flush(by_key, &mut puts);
}

/// Applies ledger `changes` other than [`LedgerChange::PromoteAll`] to entry heads by key.
pub(super) fn apply_changes<'a>(
    by_key: &mut BTreeMap<String, EntryHead>,
    changes: impl IntoIterator<Item = &'a LedgerChange>,
) {
    for change in changes {
        match change {
            LedgerChange::Put(e) => {
                by_key.insert(e.key(), EntryHead::from(e));
            }
            LedgerChange::Promote { kind, name } => {
                if let Some(e) = by_key.get_mut(&routerd_ledger::entry_key(kind, name)) {
                    e.state = EntryState::Owned;
                }
            }
            LedgerChange::SetOwners { kind, name, owner, co_owners } => {
                if let Some(e) = by_key.get_mut(&routerd_ledger::entry_key(kind, name)) {
                    e.owner.clone_from(owner);
                    e.co_owners.clone_from(co_owners);
                }
            }
            LedgerChange::Remove { kind, name } => {
                by_key.remove(&routerd_ledger::entry_key(kind, name));
            }
            LedgerChange::PromoteAll | LedgerChange::SetGeneration { .. } => {}
        }
    }
}
