//! nftnl backend for `nft.table`: routerd's nftables tables, each applied as one atomic batch.
//!
//! - [`ir`]: the typed IR the engine renders ([`ir::NftTableSpec`]) and the fingerprint the
//!   kernel gives back ([`ir::NftTableState`]).
//! - [`NftBackend`]: the [`crate::Backend`] for `applyWith: nftnl`.
//! - [`NftMonitor`]: nf_tables change notifications (`NFNLGRP_NFTABLES`), for the supervisor.
//!
//! Inside: `encode` turns the IR into the expression sequences nft itself generates,
//! `inventory` lists tables through nf_tables dumps, `transport` frames netlink, `udata` is the
//! comment TLV, and `sys` holds every FFI call (the only file allowed `unsafe`).

mod backend;
mod encode;
mod inventory;
pub mod ir;
mod monitor;
mod sys;
mod transport;
mod udata;

pub use backend::NftBackend;
pub use monitor::{NftChange, NftMonitor};
