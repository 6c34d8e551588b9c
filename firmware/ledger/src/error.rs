//! Ledger errors.

use std::path::PathBuf;

/// A ledger failure, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The ledger file's mode could not be set to 0600.
    #[error("ledger {path}: cannot make it private (mode 0600): {source}")]
    Permissions {
        /// Ledger path.
        path: PathBuf,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The directory holding the ledger could not be created.
    #[error("ledger {path}: cannot create directory: {source}")]
    Directory {
        /// Ledger path.
        path: PathBuf,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The database could not be opened (locked by another process, corrupt, wrong format).
    #[error("ledger {path}: cannot open: {source}")]
    Open {
        /// Ledger path.
        path: PathBuf,
        /// Underlying error.
        #[source]
        source: redb::DatabaseError,
    },
    /// A transaction failed.
    #[error("ledger {path}: {op}: {message}")]
    Storage {
        /// Ledger path.
        path: PathBuf,
        /// What was being done (`record`, `read`).
        op: &'static str,
        /// redb's message.
        message: String,
    },
    /// An entry could not be decoded (written by an incompatible version).
    #[error("ledger {path}: entry {key}: {source}")]
    Decode {
        /// Ledger path.
        path: PathBuf,
        /// Entry key.
        key: String,
        /// Underlying error.
        #[source]
        source: serde_json::Error,
    },
    /// A write was attempted on a read-only handle: an engine bug (dry-run must not write).
    #[error("ledger {path}: opened read-only, refusing to write")]
    ReadOnly {
        /// Ledger path.
        path: PathBuf,
    },
}
