//! Engine errors: failures that stop a whole command (per-artifact failures are reported in the
//! Result document instead).

use routerd_host::{ErrorClass, HostError};
use routerd_ledger::LedgerError;

/// A failure that prevents the engine from producing a Result document.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Host access failed before any operation (namespace, sockets, inventory).
    #[error("host: {0}")]
    Host(#[from] HostError),
    /// The ledger could not be opened, read or written.
    #[error("{0}")]
    Ledger(#[from] LedgerError),
    /// The intended graph has a dependency cycle (a renderer bug or a config that loops).
    #[error("dependency cycle between {0}")]
    Cycle(String),
}

impl EngineError {
    /// The documented `routerd` exit code for this failure (see `routerd --help`).
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Host(HostError::Netns { .. }) => 69,
            Self::Host(e) if e.class() == ErrorClass::Transient => 75,
            Self::Host(_) => 69,
            Self::Ledger(LedgerError::Open { .. }) => 75,
            Self::Ledger(_) => 74,
            Self::Cycle(_) => 1,
        }
    }
}
