//! The VPN controller (seed 002, issue 37), first slice: NetBird's desired state and its
//! request bodies. Owns the typed `netbird.json` ([`desired`]), its validation ([`parse`]) and
//! the mapping of each desired object onto a NetBird API v0.77.1 request body ([`api`]).
//!
//! Sources: seed 002 (`seeds/002_c402e6d833fc5d9c.txt`, "State File Format": the file, its
//! conventions) and the design brief `reference/netbird-gitops.md` §1 (the API's request
//! fields, and "Where the seed differs from the API", which sets every default used here).
//!
//! Does no I/O: no HTTP, no files, no clock. The reconciler (artifact kinds, inventory,
//! configurators, enrollment) comes in later slices and calls these functions.

pub mod api;
pub mod desired;
mod error;
mod validate;

pub use desired::{NetbirdState, parse};
pub use error::{Location, NetbirdStateError, NetbirdStateErrors};
