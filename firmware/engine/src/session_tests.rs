//! Unit tests of the engine session ([`super`]).

use routerd_ledger::{Attributes, EntryState, Ledger, LedgerChange, LedgerEntry, Origin};

use super::entries_after;

fn entry(name: &str, state: EntryState) -> LedgerEntry {
    LedgerEntry {
        kind: "linux.ipv4.route".into(),
        name: name.into(),
        owner: "o".into(),
        co_owners: Vec::new(),
        origin: Origin::Created,
        state,
        generation: 1,
        recorded_at: 0,
        attributes: Attributes::of(&name),
    }
}

/// The verification plans against the ledger computed in memory; it must be exactly what
/// the store holds after the same two transactions.
#[test]
fn entries_after_matches_the_store() -> Result<(), routerd_ledger::LedgerError> {
    let name = |n: &str| ("linux.ipv4.route".to_string(), n.to_string());
    let one_by_one = vec![
        LedgerChange::Promote { kind: name("b-created").0, name: name("b-created").1 },
        LedgerChange::Remove { kind: name("a-failed").0, name: name("a-failed").1 },
        LedgerChange::Promote { kind: name("c-created").0, name: name("c-created").1 },
        LedgerChange::Remove { kind: name("forgotten").0, name: name("forgotten").1 },
        LedgerChange::SetGeneration { generation: 2, digest: "d".into() },
    ];
    entries_after_matches_the_store_for(one_by_one)?;
    // As reconcile commits: the failed create removed, then everything else promoted (the
    // promotion listed after the removals, as the store ignores the order).
    let at_once = vec![
        LedgerChange::Remove { kind: name("a-failed").0, name: name("a-failed").1 },
        LedgerChange::PromoteAll,
        LedgerChange::Remove { kind: name("forgotten").0, name: name("forgotten").1 },
        LedgerChange::SetGeneration { generation: 2, digest: "d".into() },
    ];
    entries_after_matches_the_store_for(at_once)
}

fn entries_after_matches_the_store_for(
    committed: Vec<LedgerChange>,
) -> Result<(), routerd_ledger::LedgerError> {
    let before = [entry("kept", EntryState::Owned), entry("forgotten", EntryState::Owned)];
    let prepared: Vec<LedgerChange> = ["b-created", "a-failed", "c-created"]
        .into_iter()
        .map(|n| LedgerChange::Put(entry(n, EntryState::Pending)))
        .collect();
    let stored = computed_equals_stored(&before, prepared, committed)?;
    let names: Vec<&str> = stored.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["b-created", "c-created", "kept"]);
    assert!(stored.iter().all(|e| e.state == EntryState::Owned));
    Ok(())
}

/// A first reconcile starts from an empty ledger, where the view is built in one go from
/// the puts: a key put twice keeps its last entry, and a change between puts still
/// applies in its place.
#[test]
fn entries_after_a_first_reconcile_matches_the_store() -> Result<(), routerd_ledger::LedgerError> {
    let owned_by = |name: &str, owner: &str| {
        LedgerChange::Put(LedgerEntry { owner: owner.into(), ..entry(name, EntryState::Pending) })
    };
    let prepared = vec![
        owned_by("b", "first"),
        owned_by("a", "o"),
        LedgerChange::Remove { kind: "linux.ipv4.route".into(), name: "a".into() },
        owned_by("c", "o"),
        owned_by("b", "last"),
    ];
    let committed = vec![
        LedgerChange::PromoteAll,
        LedgerChange::SetGeneration { generation: 1, digest: "d".into() },
    ];
    let stored = computed_equals_stored(&[], prepared, committed)?;
    let heads: Vec<(&str, &str)> =
        stored.iter().map(|e| (e.name.as_str(), e.owner.as_str())).collect();
    assert_eq!(heads, [("b", "last"), ("c", "o")]);
    assert!(stored.iter().all(|e| e.state == EntryState::Owned));
    Ok(())
}

/// Writes `before`, computes the view after `prepared` and `committed`, applies both to
/// the store and asserts that the two agree; returns what the store lists.
fn computed_equals_stored(
    before: &[LedgerEntry],
    prepared: Vec<LedgerChange>,
    committed: Vec<LedgerChange>,
) -> Result<Vec<routerd_ledger::EntryHead>, routerd_ledger::LedgerError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = Ledger::open(&dir.path().join("l.redb"))?;
    ledger.apply(&before.iter().cloned().map(LedgerChange::Put).collect::<Vec<_>>())?;
    let computed = entries_after(ledger.heads()?, prepared.clone(), &committed);
    ledger.apply(&prepared)?;
    ledger.apply(&committed)?;
    let stored = ledger.heads()?;
    assert_eq!(computed, stored);
    Ok(stored)
}

#[test]
fn lease_files_are_read_and_one_that_cannot_be_read_is_a_warning() {
    use std::collections::BTreeSet;
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("dnsmasq.leases");
    std::fs::write(&good, "0 aa 192.0.2.7 host *\nnot a lease\n").expect("written");
    let missing = dir.path().join("missing.leases");
    let not_a_file = dir.path().to_path_buf();
    let files = BTreeSet::from([good.clone(), missing.clone(), not_a_file.clone()]);
    let mut warnings = Vec::new();
    let leases = super::read_leases(&files, &mut warnings);
    assert_eq!(leases[&good].len(), 1, "{leases:?}");
    assert!(leases[&missing].is_empty(), "no file yet: no leases, no warning");
    assert!(!leases.contains_key(&not_a_file), "{leases:?}");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("DHCP lease file "), "{warnings:?}");
}
