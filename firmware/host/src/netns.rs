//! Network namespace handles: every backend targets one.
//!
//! A socket belongs to the network namespace of the thread that created it, for its whole life
//! (`socket(7)`, `network_namespaces(7)`); `/proc/sys/net` shows the namespace of the thread that
//! opens the file. So a backend bound to a namespace creates its sockets, and opens its sysctl
//! files, inside [`Netns::run`], which runs a closure on a short-lived thread that has joined the
//! namespace with `setns(2)`. The process's other threads never change namespace.

use std::fs::File;
use std::path::{Path, PathBuf};

use nix::sched::{CloneFlags, setns};

use crate::error::HostError;

/// Where `ip netns add NAME` bind-mounts named namespaces.
pub const NETNS_RUN_DIR: &str = "/run/netns";

/// A network namespace: the caller's own, or one named under `/run/netns`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Netns {
    name: String,
    path: Option<PathBuf>,
}

impl Netns {
    /// The namespace the process runs in; [`Netns::run`] calls the closure directly.
    pub fn current() -> Self {
        Self { name: "(current)".to_string(), path: None }
    }

    /// The namespace `ip netns` calls `name` (`/run/netns/NAME`).
    ///
    /// Errors: [`HostError::Netns`] when the name is not a plain file name or the file does not
    /// exist.
    pub fn named(name: &str) -> Result<Self, HostError> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(HostError::Netns {
                name: name.to_string(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "not a namespace name",
                ),
            });
        }
        Self::at_path(name, Path::new(NETNS_RUN_DIR).join(name))
    }

    /// A namespace given by a path (`/proc/PID/ns/net`, a bind mount).
    ///
    /// Errors: [`HostError::Netns`] when the path does not exist.
    pub fn at_path(name: &str, path: PathBuf) -> Result<Self, HostError> {
        if let Err(source) = std::fs::metadata(&path) {
            return Err(HostError::Netns { name: name.to_string(), source });
        }
        Ok(Self { name: name.to_string(), path: Some(path) })
    }

    /// The name for messages (`lab-router`, or `(current)`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The bind-mount path, `None` for the current namespace.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Runs `f` with the calling thread's view of the network set to this namespace.
    ///
    /// For a named namespace `f` runs on a new OS thread that entered it with `setns(2)` and ends
    /// with `f`; sockets and files `f` opens stay bound to the namespace afterwards. Blocks the
    /// caller until `f` returns: keep `f` short (open sockets, read a file).
    ///
    /// Errors: [`HostError::Netns`] when the namespace cannot be opened or entered (not root,
    /// namespace deleted).
    pub fn run<T, F>(&self, f: F) -> Result<T, HostError>
    where
        T: Send,
        F: FnOnce() -> T + Send,
    {
        let Some(path) = &self.path else {
            return Ok(f());
        };
        let ns_err = |source: std::io::Error| HostError::Netns { name: self.name.clone(), source };
        let file = File::open(path).map_err(ns_err)?;
        std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    setns(&file, CloneFlags::CLONE_NEWNET)
                        .map_err(|e| ns_err(std::io::Error::from(e)))?;
                    Ok(f())
                })
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }
}
