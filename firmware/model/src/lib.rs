//! routerd-model: the `router.yaml` config model.
//!
//! Owns the typed form of every resource kind (schema `routerd-config-v1alpha1` plus the
//! extension kinds of `docs/adr/0004-vlan-interface-kind.md`: `VLANInterface` and the static
//! route kinds), parsing with `file:line:column` errors, and semantic
//! validation (addresses, ranges, durations, unique IDs/ifnames/marks, references).
//!
//! Does no I/O except [`load`], which reads one file. Knows nothing about Linux, the
//! reconciler or the ledger.
//!
//! ```no_run
//! let config = routerd_model::load(std::path::Path::new("/etc/routerd/router.yaml"))?;
//! for resource in config.resources_of(routerd_model::ResourceKind::Interface) {
//!     println!("{}", resource.id());
//! }
//! # Ok::<(), routerd_model::ConfigErrors>(())
//! ```

pub mod addr;
mod config;
mod diag;
pub mod dns_view;
pub mod duration;
mod error;
pub mod external;
mod kind;
mod parse;
pub mod spec;
pub mod status;
mod validate;
mod yaml;

pub use config::{Config, Metadata, ReconcileMode, ReconcileSpec, Resource, RouterSpec};
pub use diag::join_path;
pub use duration::parse_duration;
pub use error::{ConfigError, ConfigErrors, Location};
pub use kind::{
    FIREWALL_API_VERSION, KindSpec, NET_API_VERSION, ROUTER_API_VERSION, ROUTER_KIND, ResourceKind,
    ResourceSpec, SYSTEM_API_VERSION, UnknownKindError,
};
pub use parse::{load, parse_config, read_source, source_from_bytes};
pub use yaml::{Located, LocatedProblem, locate_json};
