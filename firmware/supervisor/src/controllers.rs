//! The controller crates this build carries (ADR 0010). Each adds its resource kinds, artifact
//! kinds, backends and doctor checks with one line in [`registry`]; nothing else in the
//! supervisor, the engine, the model or host names them.

use anyhow::Context;
use routerd_engine::registry::Registry;

/// The registry of this build's controller crates. Called once at start-up, before any config
/// is parsed: registering a kind makes the whole process know it.
///
/// Errors: two crates claim one kind name (a build mistake, reported before anything runs).
pub fn registry() -> anyhow::Result<Registry> {
    let mut registry = Registry::new();
    // One line per controller crate, in the order their backends take precedence.
    routerd_dns::register(&mut registry).context("DNS controller")?;
    Ok(registry)
}
