//! Reconciler scenarios with a recording mock configurator (one test binary, see STYLE §6).

mod abort;
mod async_ops;
mod basic;
mod batches;
mod cascade;
mod dependencies;
mod dot;
mod external;
mod failures;
mod hygiene;
mod planning;
mod recreate;
mod subgraphs;
mod support;
