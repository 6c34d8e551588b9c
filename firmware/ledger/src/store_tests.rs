//! Tests of the redb-backed store.
use super::*;
use crate::{EntryState, Origin};

fn entry(kind: &str, name: &str, state: EntryState) -> LedgerEntry {
    LedgerEntry {
        kind: kind.into(),
        name: name.into(),
        owner: "net.routerd.net/v1alpha1/IPv4SourceNAT/nat".into(),
        co_owners: Vec::new(),
        origin: Origin::Created,
        state,
        generation: 1,
        recorded_at: 1_700_000_000,
        attributes: crate::Attributes::of(&serde_json::json!({"family": "inet"})),
    }
}

/// `n` entries the size of a DNS RRset's, as `Put`s.
fn rrsets(n: usize, state: EntryState) -> Vec<LedgerChange> {
    (0..n)
        .map(|i| {
            let name = format!("example.org/host{i:05}.example.org/A");
            let mut e = entry("dns.rrset", &name, state);
            e.owner = format!("net.routerd.net/v1alpha1/DNSRecord/host{i:05}");
            e.attributes = crate::Attributes::of(&serde_json::json!({
                "zone": "example.org", "name": format!("host{i:05}.example.org"),
                "type": "A", "ttl": 300, "records": [format!("10.0.{}.{}", i >> 8, i & 255)],
            }));
            LedgerChange::Put(e)
        })
        .collect()
}

/// Times [`Ledger::heads`] on 20,000 entries: decoded (the first call after an apply
/// other than a generation-only one), copied from the cache, shared. Not a check:
/// `cargo test -p routerd-ledger --release --lib -- --ignored --nocapture heads_timing`
#[test]
#[ignore = "timing, not a check"]
fn heads_timing() -> Result<(), LedgerError> {
    const RUNS: u32 = 20;
    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = Ledger::open(&dir.path().join("t.redb"))?;
    ledger.apply(&rrsets(20_000, EntryState::Owned))?;
    let per_call = |runs: u32, mut call: Box<dyn FnMut() -> Result<usize, LedgerError> + '_>| {
        let start = std::time::Instant::now();
        for _ in 0..runs {
            std::hint::black_box(call()?);
        }
        Ok::<_, LedgerError>(start.elapsed() / runs)
    };
    let decode = per_call(RUNS, Box::new(|| Ok(ledger.decode_heads()?.len())))?;
    let first = per_call(1, Box::new(|| Ok(ledger.heads()?.len())))?;
    let copied = per_call(RUNS, Box::new(|| Ok(ledger.heads()?.len())))?;
    let shared = per_call(RUNS, Box::new(|| Ok(ledger.heads_shared()?.len())))?;
    eprintln!("decode: {decode:?}; first heads(): {first:?}");
    eprintln!("then heads() (a copy): {copied:?}; heads_shared(): {shared:?}");
    Ok(())
}

#[test]
fn entries_survive_reopen_and_are_ordered_by_key() -> Result<(), LedgerError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("sub/routerd.redb");
    {
        let ledger = Ledger::open(&path)?;
        ledger.apply(&[
            LedgerChange::Put(entry("nft.table", "inet/routerd_nat", EntryState::Owned)),
            LedgerChange::Put(entry("linux.ipv4.fwmarkRule", "0x100", EntryState::Pending)),
        ])?;
    }
    let ledger = Ledger::open(&path)?;
    let keys: Vec<String> = ledger.entries()?.iter().map(LedgerEntry::key).collect();
    assert_eq!(keys, ["linux.ipv4.fwmarkRule/0x100", "nft.table/inet/routerd_nat"]);
    let got = ledger.get("linux.ipv4.fwmarkRule", "0x100")?.expect("entry");
    assert_eq!(got.state, EntryState::Pending);
    Ok(())
}

#[test]
fn the_ledger_file_is_private_and_so_are_the_directories_made_for_it() -> Result<(), LedgerError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).expect("exists").permissions().mode() & 0o777;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state/routerd.redb");
    drop(Ledger::open(&path)?);
    assert_eq!((mode(&path), mode(&dir.path().join("state"))), (0o600, 0o700));
    // A file left readable by an older build is made private again.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    drop(Ledger::open(&path)?);
    assert_eq!(mode(&path), 0o600);
    Ok(())
}

#[test]
fn set_owners_rewrites_the_owners_only() -> Result<(), LedgerError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = Ledger::open(&dir.path().join("o.redb"))?;
    let rule = entry("linux.ipv4.fwmarkRule", "0x10", EntryState::Pending);
    ledger.apply(&[LedgerChange::Put(rule.clone())])?;
    let set = |owner: &str, co_owners: &[&str]| LedgerChange::SetOwners {
        kind: "linux.ipv4.fwmarkRule".into(),
        name: "0x10".into(),
        owner: owner.into(),
        co_owners: co_owners.iter().map(|o| o.to_string()).collect(),
    };
    // Changes to one key keep their order: the last wins.
    ledger.apply(&[set("x", &[]), set("a", &["b"])])?;
    let got = ledger.get("linux.ipv4.fwmarkRule", "0x10")?.expect("entry");
    let want = LedgerEntry { owner: "a".into(), co_owners: vec!["b".into()], ..rule };
    assert_eq!(got, want, "owners changed, state and attributes kept");
    assert_eq!(ledger.heads()?[0].co_owners, ["b"]);
    // No entry, nothing recorded: owners are not proof of anything.
    ledger.apply(&[LedgerChange::SetOwners {
        kind: "nft.table".into(),
        name: "inet/x".into(),
        owner: "a".into(),
        co_owners: Vec::new(),
    }])?;
    assert_eq!(ledger.entries()?.len(), 1);
    Ok(())
}

#[test]
fn promote_clears_the_pending_mark_and_keeps_the_entry() -> Result<(), LedgerError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("p.redb");
    let ledger = Ledger::open(&path)?;
    let a = entry("linux.ipv4.fwmarkRule", "0x100", EntryState::Pending);
    let b = entry("linux.ipv4.fwmarkRule", "0x101", EntryState::Pending);
    ledger.apply(&[LedgerChange::Put(a.clone()), LedgerChange::Put(b.clone())])?;
    let states = |l: &Ledger| -> Result<Vec<EntryState>, LedgerError> {
        Ok(l.entries()?.iter().map(|e| e.state).collect())
    };
    assert_eq!(states(&ledger)?, [EntryState::Pending, EntryState::Pending]);
    ledger.apply(&[LedgerChange::Promote { kind: a.kind.clone(), name: a.name.clone() }])?;
    assert_eq!(states(&ledger)?, [EntryState::Owned, EntryState::Pending]);
    let heads: Vec<EntryHead> = ledger.entries()?.iter().map(EntryHead::from).collect();
    assert_eq!(ledger.heads()?, heads);
    assert_eq!(ledger.get(&a.kind, &a.name)?, Some(LedgerEntry { state: EntryState::Owned, ..a }));
    drop(ledger);
    // The pending list is durable, and removing the last pending entry clears it.
    let ledger = Ledger::open(&path)?;
    assert_eq!(states(&ledger)?, [EntryState::Owned, EntryState::Pending]);
    ledger.apply(&[LedgerChange::Remove { kind: b.kind.clone(), name: b.name.clone() }])?;
    assert_eq!(states(&ledger)?, [EntryState::Owned]);
    Ok(())
}

#[test]
fn promote_all_promotes_what_was_pending_before_the_transaction() -> Result<(), LedgerError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("p.redb");
    let ledger = Ledger::open(&path)?;
    let [a, b, c] =
        ["0x100", "0x101", "0x102"].map(|n| entry("linux.ipv4.fwmarkRule", n, EntryState::Pending));
    ledger.apply(&[LedgerChange::Put(a.clone()), LedgerChange::Put(b.clone())])?;
    // Listed last, the promotion still leaves the put of the same transaction pending.
    ledger.apply(&[
        LedgerChange::Remove { kind: a.kind.clone(), name: a.name.clone() },
        LedgerChange::Put(c.clone()),
        LedgerChange::PromoteAll,
        LedgerChange::SetGeneration { generation: 3, digest: "d".into() },
    ])?;
    drop(ledger);
    let ledger = Ledger::open(&path)?;
    let got: Vec<(String, EntryState)> =
        ledger.heads()?.into_iter().map(|e| (e.name, e.state)).collect();
    assert_eq!(
        got,
        [("0x101".to_string(), EntryState::Owned), ("0x102".to_string(), EntryState::Pending)]
    );
    assert_eq!(ledger.applied_generation()?.generation, 3);
    ledger.apply(&[LedgerChange::PromoteAll])?;
    assert!(ledger.heads()?.iter().all(|e| e.state == EntryState::Owned));
    Ok(())
}

#[test]
fn a_format_1_entry_keeps_its_stored_state() -> Result<(), LedgerError> {
    // Format 1 stored the state inside the entry's JSON.
    let json = r#"{"kind":"nft.table","name":"inet/routerd_a","owner":"o","origin":"created","state":"pending","generation":1,"recordedAt":5,"attributes":null}"#;
    let got: LedgerEntry = serde_json::from_str(json).expect("format 1 entry");
    assert_eq!(got.state, EntryState::Pending);
    let stored = serde_json::to_string(&got).expect("serialise");
    assert!(!stored.contains("state"), "the state is no longer stored in the entry: {stored}");
    Ok(())
}

#[test]
fn remove_deletes_only_the_named_entry() -> Result<(), LedgerError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = Ledger::open(&dir.path().join("l.redb"))?;
    ledger.apply(&[
        LedgerChange::Put(entry("nft.table", "inet/routerd_a", EntryState::Owned)),
        LedgerChange::Put(entry("nft.table", "inet/routerd_b", EntryState::Owned)),
    ])?;
    ledger.apply(&[LedgerChange::Remove {
        kind: "nft.table".into(),
        name: "inet/routerd_a".into(),
    }])?;
    let names: Vec<String> = ledger.entries()?.into_iter().map(|e| e.name).collect();
    assert_eq!(names, ["inet/routerd_b"]);
    Ok(())
}

#[test]
fn generation_is_zero_until_set_and_then_persists() -> Result<(), LedgerError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("g.redb");
    assert_eq!(Ledger::open(&path)?.applied_generation()?, AppliedGeneration::default());
    Ledger::open(&path)?
        .apply(&[LedgerChange::SetGeneration { generation: 4, digest: "ab".into() }])?;
    let got = Ledger::open_read_only(&path)?.applied_generation()?;
    assert_eq!(got, AppliedGeneration { generation: 4, digest: Some("ab".into()) });
    Ok(())
}

#[test]
fn read_only_handle_never_creates_or_writes_the_file() -> Result<(), LedgerError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("absent.redb");
    let ledger = Ledger::open_read_only(&path)?;
    assert!(ledger.entries()?.is_empty());
    assert!(!path.exists());
    let err = ledger.apply(&[LedgerChange::Put(entry("nft.table", "x", EntryState::Owned))]);
    assert!(matches!(err, Err(LedgerError::ReadOnly { .. })));

    // An existing file stays byte-identical through a read-only session.
    Ledger::open(&path)?.apply(&[LedgerChange::Put(entry(
        "nft.table",
        "inet/routerd_nat",
        EntryState::Owned,
    ))])?;
    let before = std::fs::read(&path).expect("read");
    let ro = Ledger::open_read_only(&path)?;
    assert_eq!(ro.entries()?.len(), 1);
    drop(ro);
    assert_eq!(std::fs::read(&path).expect("read"), before);
    Ok(())
}

/// `ledger.heads()`, checked against a decode of the file: the heads a read-write handle
/// keeps are the file's, not older ones.
fn checked_heads(ledger: &Ledger) -> Result<Vec<EntryHead>, LedgerError> {
    let kept = ledger.heads()?;
    assert!(ledger.lock_heads_cache().is_some(), "a read-write handle keeps its heads");
    assert_eq!(kept, ledger.decode_heads()?, "the kept heads are the file's");
    Ok(kept)
}

fn keys_and_states(heads: &[EntryHead]) -> Vec<(String, EntryState)> {
    heads.iter().map(|h| (h.key(), h.state)).collect()
}

fn remove(e: &LedgerEntry) -> LedgerChange {
    LedgerChange::Remove { kind: e.kind.clone(), name: e.name.clone() }
}

fn promote(e: &LedgerEntry) -> LedgerChange {
    LedgerChange::Promote { kind: e.kind.clone(), name: e.name.clone() }
}

#[test]
fn kept_heads_follow_puts_and_removals() -> Result<(), LedgerError> {
    use EntryState::Owned;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("h.redb");
    let ledger = Ledger::open(&path)?;
    assert!(checked_heads(&ledger)?.is_empty());
    // Kinds where `kind/name` order is not (kind, name) order: "nft.table/…" < "nft/…".
    let (a, b) = (entry("nft", "a", Owned), entry("nft.table", "inet/b", Owned));
    let c = entry("nft.table", "inet/c", Owned);
    ledger.apply(&[LedgerChange::Put(a.clone())])?;
    ledger.apply(&[LedgerChange::Put(b.clone())])?;
    let want = |keys: &[&str]| keys.iter().map(|k| (k.to_string(), Owned)).collect::<Vec<_>>();
    assert_eq!(keys_and_states(&checked_heads(&ledger)?), want(&["nft.table/inet/b", "nft/a"]));
    // A put replacing an entry.
    let b2 = LedgerEntry { owner: "other".into(), generation: 2, ..b.clone() };
    ledger.apply(&[LedgerChange::Put(b2.clone())])?;
    assert_eq!(checked_heads(&ledger)?[0], EntryHead::from(&b2));
    ledger.apply(&[remove(&a)])?;
    assert_eq!(keys_and_states(&checked_heads(&ledger)?), want(&["nft.table/inet/b"]));
    // Changes to one key in one transaction: the last wins; removing nothing is nothing.
    ledger.apply(&[LedgerChange::Put(c.clone()), remove(&c), remove(&a)])?;
    assert_eq!(keys_and_states(&checked_heads(&ledger)?), want(&["nft.table/inet/b"]));
    ledger.apply(&[remove(&c), LedgerChange::Put(c.clone()), LedgerChange::Put(a.clone())])?;
    let all = want(&["nft.table/inet/b", "nft.table/inet/c", "nft/a"]);
    assert_eq!(keys_and_states(&checked_heads(&ledger)?), all);
    ledger.apply(&[remove(&b), remove(&c), remove(&a)])?;
    assert!(checked_heads(&ledger)?.is_empty());
    ledger.apply(&[LedgerChange::Put(a.clone())])?;
    let kept = checked_heads(&ledger)?;
    drop(ledger);
    assert_eq!(Ledger::open(&path)?.heads()?, kept, "as a fresh handle reads the file");
    Ok(())
}

#[test]
fn kept_heads_follow_pending_marks_and_their_resolution() -> Result<(), LedgerError> {
    use EntryState::{Owned, Pending};
    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = Ledger::open(&dir.path().join("p.redb"))?;
    let [a, b, c, d] = ["0x1", "0x2", "0x3", "0x4"]
        .map(|n| entry("linux.ipv4.fwmarkRule", n, EntryState::Pending));
    let o = entry("nft.table", "inet/o", Owned);
    assert!(checked_heads(&ledger)?.is_empty());
    let states = |l: &Ledger| -> Result<Vec<EntryState>, LedgerError> {
        Ok(checked_heads(l)?.iter().map(|h| h.state).collect())
    };
    // Prepare: the creates are marked pending.
    ledger.apply(&[
        LedgerChange::Put(a.clone()),
        LedgerChange::Put(b.clone()),
        LedgerChange::Put(o.clone()),
    ])?;
    assert_eq!(states(&ledger)?, [Pending, Pending, Owned]);
    // Resolution after a crash: present is promoted, absent removed.
    ledger.apply(&[promote(&a), remove(&b)])?;
    assert_eq!(states(&ledger)?, [Owned, Owned]);
    // Commit: what was pending before is promoted, a put of the same transaction is not.
    ledger.apply(&[LedgerChange::Put(c.clone())])?;
    assert_eq!(states(&ledger)?, [Owned, Pending, Owned]);
    ledger.apply(&[LedgerChange::PromoteAll, LedgerChange::Put(d.clone())])?;
    assert_eq!(states(&ledger)?, [Owned, Owned, Pending, Owned]);
    // A pending put over an owned entry marks it; an owned put over a pending one clears.
    ledger.apply(&[
        LedgerChange::Put(a.clone()),
        LedgerChange::Put(LedgerEntry { state: Owned, ..d.clone() }),
    ])?;
    assert_eq!(states(&ledger)?, [Pending, Owned, Owned, Owned]);
    ledger.apply(&[LedgerChange::PromoteAll])?;
    assert_eq!(states(&ledger)?, [Owned, Owned, Owned, Owned]);
    // Nothing pending: a promotion of everything changes nothing.
    ledger.apply(&[LedgerChange::PromoteAll])?;
    assert_eq!(states(&ledger)?, [Owned, Owned, Owned, Owned]);
    Ok(())
}

#[test]
fn kept_heads_follow_owner_changes() -> Result<(), LedgerError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = Ledger::open(&dir.path().join("o.redb"))?;
    let rule = entry("linux.ipv4.fwmarkRule", "0x10", EntryState::Pending);
    ledger.apply(&[LedgerChange::Put(rule.clone())])?;
    assert_eq!(checked_heads(&ledger)?[0].owner, rule.owner);
    let set = |kind: &str, owner: &str| LedgerChange::SetOwners {
        kind: kind.into(),
        name: "0x10".into(),
        owner: owner.into(),
        co_owners: vec!["c".into()],
    };
    ledger.apply(&[set("linux.ipv4.fwmarkRule", "a"), set("nft.table", "b")])?;
    let heads = checked_heads(&ledger)?;
    assert_eq!(heads.len(), 1, "no entry, no owners recorded");
    assert_eq!((heads[0].owner.as_str(), heads[0].co_owners.as_slice()), ("a", &["c".into()][..]));
    assert_eq!(heads[0].state, EntryState::Pending, "an owner change keeps the mark");
    Ok(())
}

#[test]
fn generation_only_applies_and_other_writes_keep_the_kept_heads() -> Result<(), LedgerError> {
    use crate::{Channel, GenerationRecord, GenerationResult};
    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = Ledger::open(&dir.path().join("g.redb"))?;
    ledger.apply(&[LedgerChange::Put(entry("nft.table", "inet/a", EntryState::Owned))])?;
    let before = ledger.heads_shared()?;
    let set_generation =
        |generation| LedgerChange::SetGeneration { generation, digest: "d".into() };
    ledger.apply(&[set_generation(1)])?;
    ledger.apply(&[set_generation(1), set_generation(2)])?;
    let record = GenerationRecord {
        generation: 2,
        yaml: String::new(),
        digest: "d".into(),
        author: "root".into(),
        channel: Channel::Cli,
        comment: String::new(),
        applied_at: 1,
        result: GenerationResult::Applied,
    };
    ledger.record_generation(&record, None)?;
    ledger.settle_generation(2, GenerationResult::Degraded)?;
    ledger.write_status_records(&[("a".into(), "{}".into())], &[])?;
    ledger.apply(&[])?;
    assert!(Arc::ptr_eq(&before, &ledger.heads_shared()?), "kept, not decoded again");
    assert_eq!(checked_heads(&ledger)?, *before);
    assert_eq!(ledger.applied_generation()?.generation, 2);
    // Any other apply drops them, even one that changes nothing.
    ledger.apply(&[LedgerChange::PromoteAll, set_generation(3)])?;
    assert!(ledger.lock_heads_cache().is_none(), "dropped");
    let after = ledger.heads_shared()?;
    assert!(!Arc::ptr_eq(&before, &after), "decoded again");
    assert_eq!(*after, *before);
    Ok(())
}

#[test]
fn shared_heads_stay_as_they_were_through_later_applies() -> Result<(), LedgerError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = Ledger::open(&dir.path().join("s.redb"))?;
    let a = entry("nft.table", "inet/a", EntryState::Pending);
    ledger.apply(&[LedgerChange::Put(a.clone())])?;
    let shared = ledger.heads_shared()?;
    ledger.apply(&[LedgerChange::PromoteAll])?;
    ledger.apply(&[LedgerChange::Put(entry("nft.table", "inet/b", EntryState::Owned))])?;
    assert_eq!(keys_and_states(&shared), [(a.key(), EntryState::Pending)]);
    assert_eq!(checked_heads(&ledger)?.len(), 2);
    Ok(())
}

#[test]
fn a_failed_apply_drops_the_kept_heads() -> Result<(), LedgerError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = Ledger::open(&dir.path().join("f.redb"))?;
    ledger.apply(&[LedgerChange::Put(entry("nft.table", "inet/a", EntryState::Owned))])?;
    assert_eq!(checked_heads(&ledger)?.len(), 1);
    // A value no build wrote, behind the cache's back (only tests write so).
    let txn = ledger.write_txn()?;
    {
        let mut table = txn.open_table(ARTIFACTS).map_err(|e| ledger.storage("write", e))?;
        table
            .insert("nft.table/inet/bad", b"not json".as_slice())
            .map_err(|e| ledger.storage("write", e))?;
    }
    txn.commit().map_err(|e| ledger.storage("commit", e))?;
    let set_owners = LedgerChange::SetOwners {
        kind: "nft.table".into(),
        name: "inet/bad".into(),
        owner: "o".into(),
        co_owners: Vec::new(),
    };
    assert!(matches!(ledger.apply(&[set_owners]), Err(LedgerError::Decode { .. })));
    assert!(ledger.lock_heads_cache().is_none(), "dropped");
    assert!(matches!(ledger.heads(), Err(LedgerError::Decode { .. })), "decoded again");
    ledger.apply(&[LedgerChange::Remove { kind: "nft.table".into(), name: "inet/bad".into() }])?;
    assert_eq!(checked_heads(&ledger)?.len(), 1);
    Ok(())
}

#[test]
fn kept_heads_keep_a_format_1_pending_entry_pending_until_it_is_rewritten()
-> Result<(), LedgerError> {
    use EntryState::{Owned, Pending};
    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = Ledger::open(&dir.path().join("f1.redb"))?;
    let format_1 = |name: &str| {
        format!(
            r#"{{"kind":"nft.table","name":"{name}","owner":"o","origin":"created","state":"pending","generation":1,"recordedAt":5,"attributes":null}}"#
        )
    };
    let txn = ledger.write_txn()?;
    {
        let mut table = txn.open_table(ARTIFACTS).map_err(|e| ledger.storage("write", e))?;
        for name in ["inet/a", "inet/b", "inet/c"] {
            let key = entry_key("nft.table", name);
            table
                .insert(key.as_str(), format_1(name).as_bytes())
                .map_err(|e| ledger.storage("write", e))?;
        }
    }
    txn.commit().map_err(|e| ledger.storage("commit", e))?;
    let states = |l: &Ledger| -> Result<Vec<EntryState>, LedgerError> {
        Ok(checked_heads(l)?.iter().map(|h| h.state).collect())
    };
    assert_eq!(states(&ledger)?, [Pending, Pending, Pending]);
    // Off the list is not enough: the stored value still says pending.
    let a = entry("nft.table", "inet/a", Owned);
    let b = entry("nft.table", "inet/b", Owned);
    ledger.apply(&[promote(&a), promote(&b)])?;
    ledger.apply(&[LedgerChange::PromoteAll])?;
    assert_eq!(states(&ledger)?, [Pending, Pending, Pending]);
    // Rewritten (an owner change, a put), it is what the list says.
    ledger.apply(&[LedgerChange::SetOwners {
        kind: a.kind.clone(),
        name: a.name.clone(),
        owner: "o2".into(),
        co_owners: Vec::new(),
    }])?;
    ledger.apply(&[LedgerChange::Put(b.clone())])?;
    assert_eq!(states(&ledger)?, [Owned, Owned, Pending]);
    ledger.apply(&[LedgerChange::Put(LedgerEntry { state: Pending, ..b })])?;
    assert_eq!(states(&ledger)?, [Owned, Pending, Pending]);
    ledger.apply(&[LedgerChange::PromoteAll])?;
    assert_eq!(states(&ledger)?, [Owned, Owned, Pending]);
    Ok(())
}

#[test]
fn kept_heads_match_the_file_through_random_changes() -> Result<(), LedgerError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("r.redb");
    let ledger = Ledger::open(&path)?;
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let kinds = ["nft", "nft.table", "linux.ipv4.fwmarkRule"];
    let names = ["a", "b", "inet/a", "z"];
    let mut held = Vec::new();
    for round in 0..400 {
        let mut changes = Vec::new();
        for _ in 0..=next(6) {
            let kind = kinds[next(3) as usize];
            let name = names[next(4) as usize];
            let (kind_s, name_s) = (kind.to_string(), name.to_string());
            changes.push(match next(7) {
                0 | 1 => {
                    let state = if next(2) == 0 { EntryState::Pending } else { EntryState::Owned };
                    let mut e = entry(kind, name, state);
                    e.generation = round;
                    LedgerChange::Put(e)
                }
                2 => LedgerChange::Promote { kind: kind_s, name: name_s },
                3 => LedgerChange::PromoteAll,
                4 => LedgerChange::SetOwners {
                    kind: kind_s,
                    name: name_s,
                    owner: format!("owner{round}"),
                    co_owners: vec![format!("co{round}")],
                },
                5 => LedgerChange::Remove { kind: kind_s, name: name_s },
                _ => LedgerChange::SetGeneration { generation: round, digest: "d".into() },
            });
        }
        ledger.apply(&changes)?;
        let shared = ledger.heads_shared()?;
        let kept = checked_heads(&ledger)?;
        if next(4) == 0 {
            // Held across the next applies: they must not change it.
            held.push((Arc::clone(&shared), kept));
        }
    }
    for (shared, copy) in held {
        assert_eq!(*shared, copy);
    }
    let kept = checked_heads(&ledger)?;
    drop(ledger);
    assert_eq!(Ledger::open(&path)?.heads()?, kept, "as a fresh handle reads the file");
    Ok(())
}

#[test]
fn no_other_handle_opens_the_file_while_a_writer_holds_it() -> Result<(), LedgerError> {
    // What the kept heads rely on: nobody else writes the file under a read-write handle.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("l.redb");
    let writer = Ledger::open(&path)?;
    assert!(matches!(Ledger::open(&path), Err(LedgerError::Open { .. })));
    assert!(matches!(Ledger::open_read_only(&path), Err(LedgerError::Open { .. })));
    drop(writer);
    let reader = Ledger::open_read_only(&path)?;
    assert!(matches!(Ledger::open(&path), Err(LedgerError::Open { .. })));
    drop(reader);
    Ok(())
}

#[test]
fn a_read_only_handle_keeps_no_heads_and_reads_what_was_written() -> Result<(), LedgerError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("ro.redb");
    let a = entry("nft.table", "inet/a", EntryState::Pending);
    let writer = Ledger::open(&path)?;
    writer.apply(&[LedgerChange::Put(a.clone())])?;
    assert_eq!(checked_heads(&writer)?.len(), 1);
    drop(writer);
    let reader = Ledger::open_read_only(&path)?;
    assert_eq!(keys_and_states(&reader.heads()?), [(a.key(), EntryState::Pending)]);
    assert!(reader.lock_heads_cache().is_none(), "a read-only handle keeps nothing");
    drop(reader);
    let writer = Ledger::open(&path)?;
    writer.apply(&[LedgerChange::PromoteAll, remove(&a)])?;
    writer.apply(&[LedgerChange::Put(entry("nft.table", "inet/b", EntryState::Owned))])?;
    drop(writer);
    let reader = Ledger::open_read_only(&path)?;
    let want = [(entry_key("nft.table", "inet/b"), EntryState::Owned)];
    assert_eq!(keys_and_states(&reader.heads()?), want);
    Ok(())
}
