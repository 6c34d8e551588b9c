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
#[path = "store_tests.rs"]
mod tests;
