//! The redb-backed store.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use redb::{
    Database, ReadOnlyDatabase, ReadableDatabase, ReadableTable, ReadableTableMetadata,
    TableDefinition,
};

use std::collections::BTreeSet;

use serde::de::DeserializeOwned;

use crate::{EntryHead, EntryState, LedgerEntry, LedgerError, entry_key};

/// `kind/name` → JSON-encoded [`LedgerEntry`].
const ARTIFACTS: TableDefinition<&str, &[u8]> = TableDefinition::new("artifacts");
/// Store metadata: `schema` → format version, `generation`, `configDigest`, and `pending` →
/// JSON array of the keys of [`EntryState::Pending`] entries (absent when there are none).
const META: TableDefinition<&str, &str> = TableDefinition::new("meta");
/// Format version written by this build. 2: an entry's state is the `pending` key list, not a
/// field of the entry (format 1 files are read as they are: their `state` field still counts).
const SCHEMA_VERSION: &str = "2";
/// redb's page cache. Its default (up to 1 GiB) keeps every page a reconcile wrote or read
/// for the life of the handle: megabytes on a router for data read once per reconcile.
const CACHE_BYTES: usize = 1 << 20;
/// The META key of the pending list.
const PENDING: &str = "pending";

/// One change in a ledger transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LedgerChange {
    /// Insert or replace the entry with this key; its `state` decides whether the key is on
    /// the pending list.
    Put(LedgerEntry),
    /// Mark a pending entry owned (its create succeeded), leaving the stored entry as it is.
    Promote {
        /// Artifact kind string.
        kind: String,
        /// Artifact name.
        name: String,
    },
    /// Mark every entry that was pending before this transaction owned, whatever else the
    /// transaction holds: a commit removes its failed creates and promotes the rest in one
    /// change instead of one per artifact.
    PromoteAll,
    /// Record who declares an entry's artifact now (owner and co-owners), leaving the rest of
    /// the stored entry as it is; nothing when there is no entry.
    SetOwners {
        /// Artifact kind string.
        kind: String,
        /// Artifact name.
        name: String,
        /// Resource ID of the first declarer.
        owner: String,
        /// Further declarers (see [`LedgerEntry::co_owners`]).
        co_owners: Vec<String>,
    },
    /// Remove the entry with this kind and name, if present.
    Remove {
        /// Artifact kind string.
        kind: String,
        /// Artifact name.
        name: String,
    },
    /// Record the config generation last applied and the digest of its text.
    SetGeneration {
        /// Generation number, incremented when the applied config changes.
        generation: u64,
        /// Hex SHA-256 of the config text.
        digest: String,
    },
}

/// The config generation last applied, as the ledger remembers it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AppliedGeneration {
    /// 0 when nothing was ever applied.
    pub generation: u64,
    /// Digest of the config text of that generation.
    pub digest: Option<String>,
}

enum Handle {
    ReadWrite(Database),
    /// `None`: the file does not exist; the ledger reads as empty.
    ReadOnly(Option<ReadOnlyDatabase>),
}

/// An open ledger file.
pub struct Ledger {
    path: PathBuf,
    handle: Handle,
    /// The entry heads as the file holds them, on a read-write handle once [`Ledger::heads`]
    /// has read them; always `None` on a read-only one (see [`Ledger::heads`]).
    heads_cache: Mutex<Option<Arc<Vec<EntryHead>>>>,
}

impl Ledger {
    /// Opens (or creates, with its parent directories) the ledger at `path` for reading and
    /// writing. Holds redb's file lock until dropped.
    ///
    /// The file holds every generation's YAML, so it is made (or made again) mode 0600, and the
    /// directories created for it 0700.
    ///
    /// Errors: [`LedgerError::Directory`], [`LedgerError::Open`] (locked, corrupt),
    /// [`LedgerError::Permissions`], [`LedgerError::Storage`].
    pub fn open(path: &Path) -> Result<Self, LedgerError> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        let dir_error = |source| LedgerError::Directory { path: path.to_path_buf(), source };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(dir_error)?;
        }
        let db = Database::builder()
            .set_cache_size(CACHE_BYTES)
            .create(path)
            .map_err(|source| LedgerError::Open { path: path.to_path_buf(), source })?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|source| LedgerError::Permissions { path: path.to_path_buf(), source })?;
        let ledger = Self {
            path: path.to_path_buf(),
            handle: Handle::ReadWrite(db),
            heads_cache: Mutex::new(None),
        };
        ledger.init_schema()?;
        Ok(ledger)
    }

    /// Opens the ledger at `path` without ever writing it; a missing file reads as empty and is
    /// not created. For `plan`, `adopt --candidates` and `reconcile --dry-run`.
    ///
    /// Errors: [`LedgerError::Open`] when the file exists but cannot be opened.
    pub fn open_read_only(path: &Path) -> Result<Self, LedgerError> {
        let db = if path.exists() {
            Some(
                Database::builder()
                    .set_cache_size(CACHE_BYTES)
                    .open_read_only(path)
                    .map_err(|source| LedgerError::Open { path: path.to_path_buf(), source })?,
            )
        } else {
            None
        };
        Ok(Self {
            path: path.to_path_buf(),
            handle: Handle::ReadOnly(db),
            heads_cache: Mutex::new(None),
        })
    }

    /// The file path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether writes are refused.
    pub fn is_read_only(&self) -> bool {
        matches!(self.handle, Handle::ReadOnly(_))
    }

    /// Every entry, ordered by key.
    ///
    /// Errors: [`LedgerError::Storage`], [`LedgerError::Decode`].
    pub fn entries(&self) -> Result<Vec<LedgerEntry>, LedgerError> {
        self.read_all(|e: &mut LedgerEntry| e.state = EntryState::Pending)
    }

    /// Every entry without its attributes, ordered by key: what planning needs, for a
    /// fraction of the memory and time of [`Ledger::entries`].
    ///
    /// Every reconcile reads them, and decoding every stored entry is most of a reconcile that
    /// changes nothing (16–18 ms for 20,000 entries; a copy of them takes ~2 ms). So a
    /// read-write handle decodes them once and keeps them: only it writes the file (it holds
    /// redb's lock). A [`Ledger::apply`] that only sets the generation (what a reconcile that
    /// changes nothing commits) keeps them; any other apply, failed or not, drops them, and the
    /// next call decodes again. Not merging the changes into them costs one decode (~18 ms at
    /// 20,000 entries) on the reconcile after a change. A read-only handle decodes on every
    /// call: another process may be writing the file.
    ///
    /// This returns a copy of the kept heads; [`Ledger::heads_shared`] shares them.
    ///
    /// Errors: as [`Ledger::entries`].
    pub fn heads(&self) -> Result<Vec<EntryHead>, LedgerError> {
        Ok(Arc::unwrap_or_clone(self.heads_shared()?))
    }

    /// [`Ledger::heads`] without copying them: the heads a read-write handle keeps, shared.
    /// They are never changed in place: a later [`Ledger::apply`] drops the handle's reference
    /// (or keeps it), so the returned ones stay as they were.
    ///
    /// Errors: as [`Ledger::entries`].
    pub fn heads_shared(&self) -> Result<Arc<Vec<EntryHead>>, LedgerError> {
        if self.is_read_only() {
            return Ok(Arc::new(self.decode_heads()?));
        }
        let mut cache = self.lock_heads_cache();
        if let Some(heads) = cache.as_ref() {
            return Ok(Arc::clone(heads));
        }
        // Decoded with the lock held: an apply waits, so what is kept is never older than
        // its commit.
        let heads = Arc::new(self.decode_heads()?);
        *cache = Some(Arc::clone(&heads));
        Ok(heads)
    }

    /// The heads as the file holds them now.
    fn decode_heads(&self) -> Result<Vec<EntryHead>, LedgerError> {
        self.read_all(|e: &mut EntryHead| e.state = EntryState::Pending)
    }

    /// The heads cache, locked. A panic while it was held may have left it behind the file:
    /// then it is dropped (and the next [`Ledger::heads`] decodes).
    fn lock_heads_cache(&self) -> MutexGuard<'_, Option<Arc<Vec<EntryHead>>>> {
        self.heads_cache.lock().unwrap_or_else(|poisoned| {
            let mut cache = poisoned.into_inner();
            *cache = None;
            self.heads_cache.clear_poison();
            cache
        })
    }

    /// Decodes every stored value as `T`, marking the pending ones with `mark_pending`.
    fn read_all<T: DeserializeOwned>(
        &self,
        mark_pending: impl Fn(&mut T),
    ) -> Result<Vec<T>, LedgerError> {
        let Some(txn) = self.read_txn()? else { return Ok(Vec::new()) };
        let table = match txn.open_table(ARTIFACTS) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(e) => return Err(self.storage("read", e)),
        };
        let pending = self.pending_keys(&txn)?;
        // Sized at once: the heads a read-write handle keeps stay in this vector.
        let len = table.len().map_err(|e| self.storage("read", e))?;
        let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        for row in table.iter().map_err(|e| self.storage("read", e))? {
            let (key, value) = row.map_err(|e| self.storage("read", e))?;
            let mut entry: T =
                serde_json::from_slice(value.value()).map_err(|source| LedgerError::Decode {
                    path: self.path.clone(),
                    key: key.value().to_string(),
                    source,
                })?;
            if pending.contains(key.value()) {
                mark_pending(&mut entry);
            }
            out.push(entry);
        }
        Ok(out)
    }

    /// The config generation last applied.
    ///
    /// Errors: [`LedgerError::Storage`].
    pub fn applied_generation(&self) -> Result<AppliedGeneration, LedgerError> {
        let Some(txn) = self.read_txn()? else { return Ok(AppliedGeneration::default()) };
        let meta = match txn.open_table(META) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(AppliedGeneration::default()),
            Err(e) => return Err(self.storage("read", e)),
        };
        let get = |k: &str| -> Result<Option<String>, LedgerError> {
            Ok(meta.get(k).map_err(|e| self.storage("read", e))?.map(|v| v.value().to_string()))
        };
        let generation = get("generation")?.and_then(|g| g.parse().ok()).unwrap_or(0);
        Ok(AppliedGeneration { generation, digest: get("configDigest")? })
    }

    /// The entry for one artifact.
    ///
    /// Errors: as [`Ledger::entries`].
    pub fn get(&self, kind: &str, name: &str) -> Result<Option<LedgerEntry>, LedgerError> {
        let Some(txn) = self.read_txn()? else { return Ok(None) };
        let table = match txn.open_table(ARTIFACTS) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(self.storage("read", e)),
        };
        let key = entry_key(kind, name);
        let Some(value) = table.get(key.as_str()).map_err(|e| self.storage("read", e))? else {
            return Ok(None);
        };
        let mut entry: LedgerEntry = serde_json::from_slice(value.value()).map_err(|source| {
            LedgerError::Decode { path: self.path.clone(), key: key.clone(), source }
        })?;
        if self.pending_keys(&txn)?.contains(&key) {
            entry.state = EntryState::Pending;
        }
        Ok(Some(entry))
    }

    /// The pending list of a read transaction.
    fn pending_keys(&self, txn: &redb::ReadTransaction) -> Result<BTreeSet<String>, LedgerError> {
        let meta = match txn.open_table(META) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(BTreeSet::new()),
            Err(e) => return Err(self.storage("read", e)),
        };
        let Some(list) = meta.get(PENDING).map_err(|e| self.storage("read", e))? else {
            return Ok(BTreeSet::new());
        };
        serde_json::from_str(list.value()).map_err(|source| LedgerError::Decode {
            path: self.path.clone(),
            key: format!("meta/{PENDING}"),
            source,
        })
    }

    /// A read transaction; `None` for a read-only handle on a file that does not exist.
    pub(crate) fn read_txn(&self) -> Result<Option<redb::ReadTransaction>, LedgerError> {
        let txn = match &self.handle {
            Handle::ReadWrite(db) => db.begin_read(),
            Handle::ReadOnly(Some(db)) => db.begin_read(),
            Handle::ReadOnly(None) => return Ok(None),
        };
        txn.map(Some).map_err(|e| self.storage("read", e))
    }

    /// Applies `changes` in one durable transaction: all or nothing.
    ///
    /// The heads kept by [`Ledger::heads`] stay when every change is a
    /// [`LedgerChange::SetGeneration`]; otherwise, and whenever the apply fails, they are
    /// dropped (the next read decodes again).
    ///
    /// Errors: [`LedgerError::ReadOnly`] on a read-only handle; [`LedgerError::Storage`].
    pub fn apply(&self, changes: &[LedgerChange]) -> Result<(), LedgerError> {
        let Handle::ReadWrite(db) = &self.handle else {
            return Err(LedgerError::ReadOnly { path: self.path.clone() });
        };
        if changes.is_empty() {
            return Ok(());
        }
        let generation_only =
            changes.iter().all(|c| matches!(c, LedgerChange::SetGeneration { .. }));
        // Held across the transaction, so that a concurrent `heads` cannot keep an older read.
        let mut cache = self.lock_heads_cache();
        let written = self.write_changes(db, changes);
        // A failed commit is not necessarily a rolled-back one: dropped then too.
        if !generation_only || written.is_err() {
            *cache = None;
        }
        written
    }

    /// [`Ledger::apply`]'s transaction.
    fn write_changes(&self, db: &Database, changes: &[LedgerChange]) -> Result<(), LedgerError> {
        let txn = db.begin_write().map_err(|e| self.storage("write", e))?;
        {
            let mut table = txn.open_table(ARTIFACTS).map_err(|e| self.storage("write", e))?;
            let mut meta = txn.open_table(META).map_err(|e| self.storage("write", e))?;
            // The stored pending list is read only if a change needs it: a commit that promotes
            // everything replaces it without reading thousands of keys.
            let mut pending: Option<BTreeSet<String>> = None;
            let stored_pending = |meta: &redb::Table<&str, &str>| -> Result<_, LedgerError> {
                match meta.get(PENDING) {
                    Ok(Some(list)) => {
                        serde_json::from_str(list.value()).map_err(|source| LedgerError::Decode {
                            path: self.path.clone(),
                            key: format!("meta/{PENDING}"),
                            source,
                        })
                    }
                    Ok(None) => Ok(BTreeSet::new()),
                    Err(e) => Err(self.storage("write", e)),
                }
            };
            let mut pending_changed = false;
            // Entries go in in key order (B-tree friendly); changes to one key keep their order.
            let mut ordered: Vec<(String, &LedgerChange)> = changes
                .iter()
                .map(|c| {
                    let key = match c {
                        LedgerChange::Put(e) => e.key(),
                        LedgerChange::Promote { kind, name }
                        | LedgerChange::SetOwners { kind, name, .. }
                        | LedgerChange::Remove { kind, name } => entry_key(kind, name),
                        LedgerChange::PromoteAll | LedgerChange::SetGeneration { .. } => {
                            String::new()
                        }
                    };
                    (key, c)
                })
                .collect();
            ordered.sort_by(|a, b| a.0.cmp(&b.0));
            let mut json = Vec::new();
            for (key, change) in ordered {
                if let LedgerChange::SetGeneration { generation, digest } = change {
                    let generation = generation.to_string();
                    meta.insert("generation", generation.as_str())
                        .map_err(|e| self.storage("write", e))?;
                    meta.insert("configDigest", digest.as_str())
                        .map_err(|e| self.storage("write", e))?;
                    continue;
                }
                let list = match &mut pending {
                    Some(list) => list,
                    None if *change == LedgerChange::PromoteAll => pending.insert(BTreeSet::new()),
                    None => pending.insert(stored_pending(&meta)?),
                };
                match change {
                    LedgerChange::Put(entry) => {
                        json.clear();
                        serde_json::to_writer(&mut json, entry)
                            .expect("invariant: ledger entries always serialise");
                        table
                            .insert(key.as_str(), json.as_slice())
                            .map_err(|e| self.storage("write", e))?;
                        pending_changed |= if entry.state == EntryState::Pending {
                            list.insert(key)
                        } else {
                            list.remove(&key)
                        };
                    }
                    LedgerChange::Promote { .. } => {
                        pending_changed |= list.remove(&key);
                    }
                    LedgerChange::SetOwners { owner, co_owners, .. } => {
                        let stored = table
                            .get(key.as_str())
                            .map_err(|e| self.storage("write", e))?
                            .map(|v| v.value().to_vec());
                        let Some(stored) = stored else { continue };
                        let mut entry: LedgerEntry =
                            serde_json::from_slice(&stored).map_err(|source| {
                                LedgerError::Decode {
                                    path: self.path.clone(),
                                    key: key.clone(),
                                    source,
                                }
                            })?;
                        entry.owner.clone_from(owner);
                        entry.co_owners.clone_from(co_owners);
                        json.clear();
                        serde_json::to_writer(&mut json, &entry)
                            .expect("invariant: ledger entries always serialise");
                        table
                            .insert(key.as_str(), json.as_slice())
                            .map_err(|e| self.storage("write", e))?;
                    }
                    LedgerChange::PromoteAll => {
                        list.clear();
                        pending_changed = true;
                    }
                    LedgerChange::Remove { .. } => {
                        table.remove(key.as_str()).map_err(|e| self.storage("write", e))?;
                        pending_changed |= list.remove(&key);
                    }
                    LedgerChange::SetGeneration { .. } => {}
                }
            }
            let pending = pending.unwrap_or_default();
            if pending_changed && pending.is_empty() {
                meta.remove(PENDING).map_err(|e| self.storage("write", e))?;
            } else if pending_changed {
                let list = serde_json::to_string(&pending)
                    .expect("invariant: a set of strings always serialises");
                meta.insert(PENDING, list.as_str()).map_err(|e| self.storage("write", e))?;
            }
        }
        txn.commit().map_err(|e| self.storage("commit", e))
    }

    /// A write transaction, for the tables of `generations.rs`. Not for the entries nor the
    /// pending list: [`Ledger::apply`] writes those, dropping the heads [`Ledger::heads`] keeps.
    ///
    /// Errors: [`LedgerError::ReadOnly`] on a read-only handle; [`LedgerError::Storage`].
    pub(crate) fn write_txn(&self) -> Result<redb::WriteTransaction, LedgerError> {
        let Handle::ReadWrite(db) = &self.handle else {
            return Err(LedgerError::ReadOnly { path: self.path.clone() });
        };
        db.begin_write().map_err(|e| self.storage("write", e))
    }

    fn init_schema(&self) -> Result<(), LedgerError> {
        let Handle::ReadWrite(db) = &self.handle else { return Ok(()) };
        let txn = db.begin_write().map_err(|e| self.storage("init", e))?;
        {
            let mut meta = txn.open_table(META).map_err(|e| self.storage("init", e))?;
            let current = meta
                .get("schema")
                .map_err(|e| self.storage("init", e))?
                .map(|v| v.value().to_string());
            // Format 1 reads as it is (see SCHEMA_VERSION); the first writer marks it 2.
            if current.as_deref() != Some(SCHEMA_VERSION) {
                meta.insert("schema", SCHEMA_VERSION).map_err(|e| self.storage("init", e))?;
            }
            txn.open_table(ARTIFACTS).map_err(|e| self.storage("init", e))?;
        }
        txn.commit().map_err(|e| self.storage("init", e))
    }

    pub(crate) fn storage(&self, op: &'static str, e: impl std::fmt::Display) -> LedgerError {
        LedgerError::Storage { path: self.path.clone(), op, message: e.to_string() }
    }
}

#[cfg(test)]
mod tests {
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
        let per_call =
            |runs: u32, mut call: Box<dyn FnMut() -> Result<usize, LedgerError> + '_>| {
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
    fn the_ledger_file_is_private_and_so_are_the_directories_made_for_it() -> Result<(), LedgerError>
    {
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
        assert_eq!(
            ledger.get(&a.kind, &a.name)?,
            Some(LedgerEntry { state: EntryState::Owned, ..a })
        );
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
        let [a, b, c] = ["0x100", "0x101", "0x102"]
            .map(|n| entry("linux.ipv4.fwmarkRule", n, EntryState::Pending));
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
        assert_eq!(
            (heads[0].owner.as_str(), heads[0].co_owners.as_slice()),
            ("a", &["c".into()][..])
        );
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
        ledger
            .apply(&[LedgerChange::Remove { kind: "nft.table".into(), name: "inet/bad".into() }])?;
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
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
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
                        let state =
                            if next(2) == 0 { EntryState::Pending } else { EntryState::Owned };
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
}
