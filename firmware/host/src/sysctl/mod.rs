//! procfs sysctl backend (`applyWith: procfs`) for `linux.sysctl`.
//!
//! Reads and writes `/proc/sys` files of the target network namespace: every open happens inside
//! [`Netns::run`], so `net.*` keys are the namespace's own (`/proc/sys/net` shows the namespace
//! of the thread that opens the file). Other keys (`kernel.*`, `vm.*`) are system-wide whatever
//! the namespace. Sysctls cannot be listed cheaply, so observe reads exactly the keys asked for.
//! Sysctls are reconciled, never deleted.

mod path;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use futures::future::BoxFuture;

use crate::artifact::{Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, SysctlSpec};
use crate::backend::Backend;
use crate::error::HostError;
use crate::netns::Netns;

/// The `applyWith` name of this backend.
const APPLY_WITH: crate::kinds::ApplyWith = crate::kinds::ApplyWith::Procfs;

/// Where procfs shows sysctls.
const PROC_SYS: &str = "/proc/sys";

/// `linux.sysctl` of one network namespace, through `/proc/sys`.
#[derive(Clone, Debug)]
pub struct SysctlBackend {
    netns: Netns,
}

impl SysctlBackend {
    /// A backend for the sysctls of `netns`. Opens nothing yet: each operation enters the
    /// namespace for its file opens.
    pub fn new(netns: &Netns) -> Self {
        Self { netns: netns.clone() }
    }

    /// Reads the `wanted` keys of kind `linux.sysctl` in one trip into the namespace.
    ///
    /// Shape: one [`SysctlSpec`] per key whose file exists, the value with trailing whitespace
    /// removed; keys without a file are omitted.
    /// Errors: [`HostError::Invalid`] for a malformed key; [`HostError::Sysctl`] when a file
    /// exists but cannot be read; [`HostError::Netns`].
    fn read(&self, wanted: &[ArtifactKey]) -> Result<Vec<Artifact>, HostError> {
        let keys: Vec<&ArtifactKey> =
            wanted.iter().filter(|k| k.kind == ArtifactKind::Sysctl).collect();
        self.netns.run(|| {
            let mut out = Vec::with_capacity(keys.len());
            for key in keys {
                let path = resolve(key)?;
                match std::fs::read_to_string(&path) {
                    Ok(value) => out.push(Artifact::new(ArtifactSpec::Sysctl(SysctlSpec {
                        key: key.name.clone(),
                        value: value.trim_end().to_string(),
                    }))),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(source) => return Err(HostError::Sysctl { key: key.name.clone(), source }),
                }
            }
            Ok(out)
        })?
    }

    /// Writes `spec.value` to the file of `spec.key` (no newline added).
    ///
    /// Errors: [`HostError::Invalid`] for a malformed key or a spec of another kind;
    /// [`HostError::Sysctl`] when the file is missing (`NotFound`, class Rejected) or the kernel
    /// refuses the value (`EINVAL`, class Invalid); [`HostError::Netns`].
    fn write(&self, artifact: &Artifact) -> Result<(), HostError> {
        let ArtifactSpec::Sysctl(spec) = &artifact.spec else {
            return Err(HostError::WrongBackend { key: artifact.key.clone(), backend: APPLY_WITH });
        };
        let key = ArtifactKey::new(ArtifactKind::Sysctl, spec.key.clone());
        self.netns.run(|| {
            let path = resolve(&key)?;
            let sysctl_err = |source| HostError::Sysctl { key: spec.key.clone(), source };
            let mut file =
                std::fs::OpenOptions::new().write(true).open(&path).map_err(sysctl_err)?;
            file.write_all(spec.value.as_bytes()).map_err(sysctl_err)
        })?
    }
}

impl Backend for SysctlBackend {
    fn apply_with(&self) -> crate::kinds::ApplyWith {
        APPLY_WITH
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        &[ArtifactKind::Sysctl]
    }

    fn observes_wanted_only(&self) -> bool {
        true
    }

    /// Reads exactly the `wanted` sysctl keys; absent files are omitted.
    fn observe<'a>(
        &'a self,
        kind: ArtifactKind,
        wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        Box::pin(async move {
            if kind != ArtifactKind::Sysctl {
                let key = ArtifactKey::new(kind, "*");
                return Err(HostError::WrongBackend { key, backend: APPLY_WITH });
            }
            self.read(wanted)
        })
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move { self.write(desired) })
    }

    fn modify<'a>(
        &'a self,
        _observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move { self.write(desired) })
    }

    /// Refused: a sysctl has no absent state to return to.
    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            Err(HostError::Invalid {
                key: observed.key.clone(),
                message: "sysctls are reconciled, never deleted".to_string(),
            })
        })
    }
}

/// The file of `key` as seen by the calling thread: the first candidate path that exists, else
/// the first candidate (whose open then fails with `NotFound`).
fn resolve(key: &ArtifactKey) -> Result<PathBuf, HostError> {
    let candidates = path::candidates(Path::new(PROC_SYS), &key.name)
        .map_err(|e| HostError::Invalid { key: key.clone(), message: e.to_string() })?;
    let found = candidates.iter().find(|p| p.exists()).or(candidates.first()).cloned();
    found.ok_or_else(|| HostError::Invalid { key: key.clone(), message: "no path".to_string() })
}
