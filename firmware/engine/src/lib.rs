//! The routerd engine: render resources into artifact intents, observe the host, plan,
//! apply, clean up proven orphans, adopt, and report the Result document.
//!
//! Pure: [`render::render`], [`plan::plan`], [`report::build`]; the time is an input
//! ([`plan::PlanInput::now`]), not read from a clock. Effectful: [`Session`] (inventory and
//! configurators through `routerd-host`, the ledger through `routerd-ledger`; its callers pass
//! the time).
//! Ownership policy (seed 000) lives in [`policy`] and in what [`plan::plan`] lets into the
//! current-state graph; see `docs/adr/0002-ownership-rules.md`.

pub mod aftr;
pub mod counters;
pub mod drawing;
mod error;
#[cfg(test)]
mod fixtures;
pub mod gateway;
pub mod health;
pub mod host_events;
pub mod intent;
pub mod item;
pub mod kind_status;
mod listing;

pub mod plan;
pub mod policy;
pub mod reason;
pub mod registry;
pub mod render;
pub mod report;
pub mod result;
pub mod runtime;
pub mod scheduled;
mod session;
pub mod state;
pub mod table;

pub use error::EngineError;
pub use reason::Reason;
pub use result::{
    ConditionStatus, ConditionType, OperationResult, OrphanCleanup, Phase, ResultDocument,
};
pub use session::{ConfigInput, Session, SessionOptions, config_warnings};

// Host vocabulary the engine's API hands out: the namespace its probes and monitors run in,
// the session's bus ([`Session::bus`]) and log sinks ([`Session::log_sinks`]), the drift of a
// Result document. The binaries take them from here and never depend on `routerd-host`.
pub use routerd_host::artifact::LogSeverity;
pub use routerd_host::bus::SystemBus;
pub use routerd_host::logsink::{LogEvent, LogSinks};
pub use routerd_host::{AttributeDiff, Netns, Target};
