//! Config generations and the pending confirm (the supervisor issue's "apply with confirm").
//!
//! Every config the daemon applies is kept as a [`GenerationRecord`]: the YAML text exactly as
//! written (comments kept), who applied it, through which channel, why, when, and how it went.
//! An apply with a confirm window also writes a [`PendingConfirm`]; it is durable, so a
//! restart or a reboot inside the window still rolls back when nobody confirms.

use redb::{ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};

use crate::{Ledger, LedgerError};

/// generation number → JSON [`GenerationRecord`].
const GENERATIONS: TableDefinition<u64, &[u8]> = TableDefinition::new("generations");
/// `confirm` → JSON [`PendingConfirm`], absent when nothing waits for a confirm.
const CONFIRM: TableDefinition<&str, &[u8]> = TableDefinition::new("confirm");
const CONFIRM_KEY: &str = "confirm";
/// resource ID → the daemon's JSON status of that resource (opaque to the ledger).
const RESOURCE_STATUS: TableDefinition<&str, &[u8]> = TableDefinition::new("resourceStatus");

/// Through which door a config came in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Channel {
    /// The web UI.
    Web,
    /// `routerctl` on the console.
    Cli,
    /// The control API directly.
    Api,
    /// The config file found at start.
    Boot,
    /// The daemon's confirm timer: an apply not confirmed in time rolled back.
    Timer,
}

impl Channel {
    /// The JSON word: `web`, `cli`, `api`, `boot`, `timer`.
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Web => "web",
            Channel::Cli => "cli",
            Channel::Api => "api",
            Channel::Boot => "boot",
            Channel::Timer => "timer",
        }
    }
}

/// How a generation's apply went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum GenerationResult {
    /// Applied; waiting for the operator's confirm.
    PendingConfirm,
    /// Applied (and confirmed, when a confirm was asked for).
    Applied,
    /// Applied, but some operations failed or some resources are blocked.
    Degraded,
    /// Not confirmed in time (or rolled back by the operator): the previous generation was
    /// applied again.
    RolledBack,
}

/// One applied config.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerationRecord {
    /// The generation number (the engine's counter, grows when the text changes).
    pub generation: u64,
    /// The YAML text as written.
    pub yaml: String,
    /// Hex SHA-256 of `yaml`.
    pub digest: String,
    /// Who applied it (user name, `root` on the console, `boot`).
    pub author: String,
    /// Through which door.
    pub channel: Channel,
    /// The operator's comment.
    pub comment: String,
    /// When it was applied, seconds since the Unix epoch.
    pub applied_at: u64,
    /// How it went.
    pub result: GenerationResult,
}

/// An apply waiting for its confirm.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingConfirm {
    /// The generation that waits.
    pub generation: u64,
    /// The generation to apply again when nobody confirms.
    pub previous: u64,
    /// Deadline, seconds since the Unix epoch.
    pub deadline: u64,
}

impl Ledger {
    /// Stores `record` (replacing one with the same number), and sets or clears the pending
    /// confirm, in one durable transaction.
    ///
    /// Errors: [`LedgerError::ReadOnly`], [`LedgerError::Storage`].
    pub fn record_generation(
        &self,
        record: &GenerationRecord,
        confirm: Option<&PendingConfirm>,
    ) -> Result<(), LedgerError> {
        let txn = self.write_txn()?;
        {
            let mut table = txn.open_table(GENERATIONS).map_err(|e| self.storage("write", e))?;
            let json = serde_json::to_vec(record).expect("invariant: records always serialise");
            table
                .insert(record.generation, json.as_slice())
                .map_err(|e| self.storage("write", e))?;
            let mut pending = txn.open_table(CONFIRM).map_err(|e| self.storage("write", e))?;
            match confirm {
                Some(c) => {
                    let json = serde_json::to_vec(c).expect("invariant: confirms always serialise");
                    pending.insert(CONFIRM_KEY, json.as_slice())
                }
                None => pending.remove(CONFIRM_KEY),
            }
            .map_err(|e| self.storage("write", e))?;
        }
        txn.commit().map_err(|e| self.storage("commit", e))
    }

    /// Sets the result of generation `generation` and clears the pending confirm, in one
    /// durable transaction. A generation that was never recorded is left alone.
    ///
    /// Errors: as [`Ledger::record_generation`].
    pub fn settle_generation(
        &self,
        generation: u64,
        result: GenerationResult,
    ) -> Result<(), LedgerError> {
        let Some(mut record) = self.generation_record(generation)? else {
            return self.clear_confirm();
        };
        record.result = result;
        self.record_generation(&record, None)
    }

    fn clear_confirm(&self) -> Result<(), LedgerError> {
        let txn = self.write_txn()?;
        {
            let mut pending = txn.open_table(CONFIRM).map_err(|e| self.storage("write", e))?;
            pending.remove(CONFIRM_KEY).map_err(|e| self.storage("write", e))?;
        }
        txn.commit().map_err(|e| self.storage("commit", e))
    }

    /// The record of one generation.
    ///
    /// Errors: [`LedgerError::Storage`], [`LedgerError::Decode`].
    pub fn generation_record(
        &self,
        generation: u64,
    ) -> Result<Option<GenerationRecord>, LedgerError> {
        let Some(table) = self.read_table(GENERATIONS)? else { return Ok(None) };
        let Some(value) = table.get(generation).map_err(|e| self.storage("read", e))? else {
            return Ok(None);
        };
        serde_json::from_slice(value.value()).map(Some).map_err(|source| LedgerError::Decode {
            path: self.path().to_path_buf(),
            key: format!("generations/{generation}"),
            source,
        })
    }

    /// Every recorded generation, oldest first.
    ///
    /// Errors: as [`Ledger::generation_record`].
    pub fn generation_records(&self) -> Result<Vec<GenerationRecord>, LedgerError> {
        let Some(table) = self.read_table(GENERATIONS)? else { return Ok(Vec::new()) };
        let mut out = Vec::new();
        for row in table.iter().map_err(|e| self.storage("read", e))? {
            let (key, value) = row.map_err(|e| self.storage("read", e))?;
            out.push(serde_json::from_slice(value.value()).map_err(|source| {
                LedgerError::Decode {
                    path: self.path().to_path_buf(),
                    key: format!("generations/{}", key.value()),
                    source,
                }
            })?);
        }
        Ok(out)
    }

    /// The apply waiting for its confirm, if any.
    ///
    /// Errors: as [`Ledger::generation_record`].
    pub fn pending_confirm(&self) -> Result<Option<PendingConfirm>, LedgerError> {
        let Some(table) = self.read_table(CONFIRM)? else { return Ok(None) };
        let Some(value) = table.get(CONFIRM_KEY).map_err(|e| self.storage("read", e))? else {
            return Ok(None);
        };
        serde_json::from_slice(value.value()).map(Some).map_err(|source| LedgerError::Decode {
            path: self.path().to_path_buf(),
            key: "confirm".into(),
            source,
        })
    }
}

impl Ledger {
    /// `definition` in a fresh read transaction; `None` when the file or the table does not
    /// exist yet (reads as empty).
    fn read_table<K: redb::Key + 'static, V: redb::Value + 'static>(
        &self,
        definition: TableDefinition<K, V>,
    ) -> Result<Option<redb::ReadOnlyTable<K, V>>, LedgerError> {
        let Some(txn) = self.read_txn()? else { return Ok(None) };
        match txn.open_table(definition) {
            Ok(t) => Ok(Some(t)),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
            Err(e) => Err(self.storage("read", e)),
        }
    }

    /// Every stored resource status as `(resource ID, JSON text)`, ordered by ID.
    ///
    /// Errors: [`LedgerError::Storage`].
    pub fn status_records(&self) -> Result<Vec<(String, String)>, LedgerError> {
        let Some(table) = self.read_table(RESOURCE_STATUS)? else { return Ok(Vec::new()) };
        let mut out = Vec::new();
        for row in table.iter().map_err(|e| self.storage("read", e))? {
            let (key, value) = row.map_err(|e| self.storage("read", e))?;
            out.push((
                key.value().to_string(),
                String::from_utf8_lossy(value.value()).into_owned(),
            ));
        }
        Ok(out)
    }

    /// Replaces the statuses in `put` (ID, JSON text) and removes those in `remove`, in one
    /// durable transaction (nothing when both are empty).
    ///
    /// Errors: [`LedgerError::ReadOnly`], [`LedgerError::Storage`].
    pub fn write_status_records(
        &self,
        put: &[(String, String)],
        remove: &[String],
    ) -> Result<(), LedgerError> {
        if put.is_empty() && remove.is_empty() {
            return Ok(());
        }
        let txn = self.write_txn()?;
        {
            let mut table =
                txn.open_table(RESOURCE_STATUS).map_err(|e| self.storage("write", e))?;
            for (id, json) in put {
                table.insert(id.as_str(), json.as_bytes()).map_err(|e| self.storage("write", e))?;
            }
            for id in remove {
                table.remove(id.as_str()).map_err(|e| self.storage("write", e))?;
            }
        }
        txn.commit().map_err(|e| self.storage("commit", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(generation: u64, result: GenerationResult) -> GenerationRecord {
        GenerationRecord {
            generation,
            yaml: format!("# generation {generation}\napiVersion: routerd.net/v1alpha1\n"),
            digest: format!("d{generation}"),
            author: "root".into(),
            channel: Channel::Cli,
            comment: "test".into(),
            applied_at: 1_790_000_000 + generation,
            result,
        }
    }

    #[test]
    fn generations_and_the_pending_confirm_survive_reopen() -> Result<(), LedgerError> {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("g.redb");
        let confirm = PendingConfirm { generation: 2, previous: 1, deadline: 1_790_000_090 };
        {
            let ledger = Ledger::open(&path)?;
            ledger.record_generation(&record(1, GenerationResult::Applied), None)?;
            ledger
                .record_generation(&record(2, GenerationResult::PendingConfirm), Some(&confirm))?;
        }
        let ledger = Ledger::open(&path)?;
        assert_eq!(ledger.pending_confirm()?, Some(confirm));
        let all = ledger.generation_records()?;
        assert_eq!(all.iter().map(|r| r.generation).collect::<Vec<_>>(), [1, 2]);
        assert!(all[1].yaml.starts_with("# generation 2\n"), "text kept as written");

        ledger.settle_generation(2, GenerationResult::RolledBack)?;
        assert_eq!(ledger.pending_confirm()?, None);
        let two = ledger.generation_record(2)?.expect("recorded");
        assert_eq!(two.result, GenerationResult::RolledBack);
        ledger.write_status_records(
            &[("a".into(), "{\"x\":1}".into()), ("b".into(), "{}".into())],
            &[],
        )?;
        ledger.write_status_records(&[], &["a".into()])?;
        drop(ledger);
        let ro = Ledger::open_read_only(&path)?;
        assert_eq!(ro.generation_records()?.len(), 2);
        assert_eq!(ro.status_records()?, [("b".to_string(), "{}".to_string())]);
        Ok(())
    }
}
