//! systemd backend (`applyWith: systemd`) for `systemd.service`, over D-Bus
//! (org.freedesktop.systemd1(5)).
//!
//! Inventory: the `routerd-*.service` files in the unit directory ([`Target::unit_dir`]) with
//! each unit's `ActiveState`. Configurator, as seed 000 says for units:
//! - create: write the file, `Reload`, `EnableUnitFiles`, `StartUnit`;
//! - modify: a changed file is rewritten, reloaded and the unit restarted; a stopped unit is
//!   started;
//! - delete (orphan cleanup of ledger-owned units): `StopUnit`, `DisableUnitFiles`, remove the
//!   file, `Reload` (`systemctl disable --now`, `rm`, `daemon-reload`).
//!
//! Every job is waited for: an operation returns when systemd's `JobRemoved` says the job
//! ended, and fails unless it ended `done`. [`Systemd`] is shared with the configurators of
//! daemons that run as units (dnsmasq).

mod proxy;

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use tokio::sync::OnceCell;
use zbus::proxy::CacheProperties;

use crate::artifact::{Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, UnitSpec};
use crate::backend::Backend;
use crate::bus::SystemBus;
use crate::error::HostError;
use crate::file::{read_dir_files, write_atomically};
use crate::target::Target;
use proxy::{ManagerProxy, UnitProxy};

/// The `applyWith` name of this backend.
const APPLY_WITH: crate::kinds::ApplyWith = crate::kinds::ApplyWith::Systemd;

/// Units routerd owns by name (seed 000, "Orphans"): `routerd-*.service`.
pub fn is_routerd_unit(name: &str) -> bool {
    name.starts_with("routerd-") && name.ends_with(".service") && !name.contains('/')
}

/// How long a start, stop or restart job may take before the operation fails. systemd's own
/// default start timeout is 90 s (`DefaultTimeoutStartSec=`); a job still queued after that
/// will end by itself, and the next reconcile sees the outcome.
const JOB_DEADLINE: Duration = Duration::from_secs(100);

/// The error systemd answers a job for a unit it has no file for (`bus-common-errors.h`).
const NO_SUCH_UNIT: &str = "org.freedesktop.systemd1.NoSuchUnit";

/// A job on a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Job {
    /// `StartUnit`.
    Start,
    /// `StopUnit`.
    Stop,
    /// `RestartUnit` (starts a unit that is not running).
    Restart,
    /// `TryRestartUnit` (leaves a unit that is not running alone, and one systemd has no
    /// unit file for: `NoSuchUnit` is `done` here, since nothing runs that could read a
    /// changed configuration).
    TryRestart,
}

impl Job {
    fn as_str(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Stop => "stop",
            Self::Restart => "restart",
            Self::TryRestart => "try-restart",
        }
    }
}

/// A connection to systemd's manager, opened on first use and shared.
pub struct Systemd {
    bus: Arc<SystemBus>,
    manager: OnceCell<ManagerProxy<'static>>,
}

impl Systemd {
    /// A client of the manager on `bus` (connected on first use, so a session that touches no
    /// unit needs no bus).
    pub fn new(bus: Arc<SystemBus>) -> Self {
        Self { bus, manager: OnceCell::new() }
    }

    async fn manager(&self) -> Result<&ManagerProxy<'static>, HostError> {
        self.manager
            .get_or_try_init(|| async {
                let bus = |e: zbus::Error| HostError::Bus(e.to_string());
                let manager = ManagerProxy::builder(self.bus.conn().await?)
                    .cache_properties(CacheProperties::No)
                    .build()
                    .await
                    .map_err(bus)?;
                manager.subscribe().await.map_err(bus)?;
                Ok(manager)
            })
            .await
    }

    /// `daemon-reload`: systemd re-reads every unit file.
    ///
    /// Errors: [`HostError::Bus`]; [`HostError::Service`] when the manager refuses.
    pub async fn reload(&self, key: &ArtifactKey) -> Result<(), HostError> {
        let m = self.manager().await?;
        m.reload().await.map_err(|e| service(key, "daemon-reload", e))
    }

    /// Runs `job` on `unit` and waits until systemd removes the job.
    ///
    /// A job that starts the unit first resets its failed state and start rate limit
    /// (`ResetFailedUnit`): routerd restarts a unit on each change of its configuration, and
    /// one reconcile may change several parts of it (dnsmasq sections), more than the default
    /// `StartLimitBurst=5` in 10 s allows. The limit still stops a unit's own crash loop
    /// (`Restart=on-failure`).
    ///
    /// Errors: [`HostError::Service`] when the manager refuses the job, the job ends other than
    /// `done` (`failed`: the service exited; `dependency`, `timeout`, `canceled`), or it is
    /// still running after a deadline; [`HostError::Bus`].
    pub async fn run(&self, key: &ArtifactKey, unit: &str, job: Job) -> Result<(), HostError> {
        let m = self.manager().await?;
        let op = job.as_str();
        // Subscribed before the call: the job may end before its reply is read.
        let mut removed = m.receive_job_removed().await.map_err(|e| service(key, op, e))?;
        if job != Job::Stop {
            // Fails only for a unit not loaded, which has no limit to reset.
            let _ = m.reset_failed_unit(unit).await;
        }
        let path = match job {
            Job::Start => m.start_unit(unit, "replace").await,
            Job::Stop => m.stop_unit(unit, "replace").await,
            Job::Restart => m.restart_unit(unit, "replace").await,
            Job::TryRestart => match m.try_restart_unit(unit, "replace").await {
                Err(zbus::Error::MethodError(name, _, _)) if name.as_str() == NO_SUCH_UNIT => {
                    return Ok(());
                }
                other => other,
            },
        }
        .map_err(|e| service(key, op, e))?;
        let wait = async {
            while let Some(signal) = removed.next().await {
                let Ok(args) = signal.args() else { continue };
                if args.job == path {
                    return Some(args.result.clone());
                }
            }
            None
        };
        match tokio::time::timeout(JOB_DEADLINE, wait).await {
            Ok(Some(result)) if result == "done" => Ok(()),
            Ok(Some(result)) => Err(HostError::Service {
                key: key.clone(),
                op,
                message: format!("job {result} (journalctl -u {unit} tells why)"),
            }),
            Ok(None) => Err(HostError::Bus("the manager's connection closed".into())),
            Err(_) => Err(HostError::Service {
                key: key.clone(),
                op,
                message: format!("job still running after {}s", JOB_DEADLINE.as_secs()),
            }),
        }
    }

    /// `systemctl enable` (`EnableUnitFiles`, not runtime, replacing stale links).
    ///
    /// Errors: as [`Systemd::reload`].
    pub async fn enable(&self, key: &ArtifactKey, unit: &str) -> Result<(), HostError> {
        let m = self.manager().await?;
        m.enable_unit_files(&[unit], false, true).await.map_err(|e| service(key, "enable", e))?;
        Ok(())
    }

    /// `systemctl disable` (`DisableUnitFiles`, not runtime).
    ///
    /// Errors: as [`Systemd::reload`].
    pub async fn disable(&self, key: &ArtifactKey, unit: &str) -> Result<(), HostError> {
        let m = self.manager().await?;
        m.disable_unit_files(&[unit], false).await.map_err(|e| service(key, "disable", e))?;
        Ok(())
    }

    /// The unit's `ActiveState` (`active`, `inactive`, `failed`, …).
    ///
    /// Errors: as [`Systemd::reload`].
    pub async fn active_state(&self, key: &ArtifactKey, unit: &str) -> Result<String, HostError> {
        let m = self.manager().await?;
        let path = m.load_unit(unit).await.map_err(|e| service(key, "load", e))?;
        let unit = UnitProxy::builder(m.inner().connection())
            .path(path)
            .map_err(|e| service(key, "load", e))?
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(|e| service(key, "load", e))?;
        unit.active_state().await.map_err(|e| service(key, "read ActiveState", e))
    }
}

pub(crate) fn service(key: &ArtifactKey, op: &'static str, e: zbus::Error) -> HostError {
    match e {
        zbus::Error::InputOutput(_) | zbus::Error::Address(_) | zbus::Error::Handshake(_) => {
            HostError::Bus(e.to_string())
        }
        zbus::Error::MethodError(name, text, _) => HostError::Service {
            key: key.clone(),
            op,
            message: match text {
                Some(t) => format!("{t} ({name})"),
                None => name.to_string(),
            },
        },
        e => HostError::Service { key: key.clone(), op, message: e.to_string() },
    }
}

/// Whether an `ActiveState` counts as running: starting and reloading units are on their way
/// and must not be restarted again.
fn is_running(active_state: &str) -> bool {
    matches!(active_state, "active" | "activating" | "reloading" | "refreshing")
}

/// `systemd.service` units of one target, through systemd's D-Bus API.
pub struct SystemdBackend {
    unit_dir: PathBuf,
    systemd: Arc<Systemd>,
}

impl SystemdBackend {
    /// Units in `target`'s unit directory, driven through `systemd`.
    pub fn new(target: &Target, systemd: Arc<Systemd>) -> Self {
        Self { unit_dir: target.unit_dir(), systemd }
    }

    async fn list(&self) -> Result<Vec<Artifact>, HostError> {
        let mut out = Vec::new();
        for (unit, content) in read_units(&self.unit_dir)? {
            let key = ArtifactKey::new(ArtifactKind::SystemdService, unit.clone());
            let state = self.systemd.active_state(&key, &unit).await?;
            let active = is_running(&state);
            out.push(Artifact::new(ArtifactSpec::Unit(UnitSpec { unit, content, active })));
        }
        Ok(out)
    }

    fn spec<'a>(&self, a: &'a Artifact) -> Result<&'a UnitSpec, HostError> {
        match &a.spec {
            ArtifactSpec::Unit(u) if is_routerd_unit(&u.unit) => Ok(u),
            ArtifactSpec::Unit(u) => Err(HostError::Invalid {
                key: a.key.clone(),
                message: format!("{} is not a routerd-*.service unit name", u.unit),
            }),
            _ => Err(HostError::WrongBackend { key: a.key.clone(), backend: APPLY_WITH }),
        }
    }

    async fn write_and_reload(&self, key: &ArtifactKey, u: &UnitSpec) -> Result<(), HostError> {
        write_atomically(&self.unit_dir.join(&u.unit), u.content.as_bytes(), 0o644)?;
        self.systemd.reload(key).await
    }
}

/// The `routerd-*.service` files of `dir` with their text, sorted by name; none when the
/// directory does not exist.
fn read_units(dir: &Path) -> Result<Vec<(String, String)>, HostError> {
    read_dir_files(dir, |name| is_routerd_unit(name).then(|| name.to_owned()))
}

impl Backend for SystemdBackend {
    fn apply_with(&self) -> crate::kinds::ApplyWith {
        APPLY_WITH
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        &[ArtifactKind::SystemdService]
    }

    fn observe<'a>(
        &'a self,
        _kind: ArtifactKind,
        _wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        Box::pin(self.list())
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            let u = self.spec(desired)?;
            let key = &desired.key;
            self.write_and_reload(key, u).await?;
            self.systemd.enable(key, &u.unit).await?;
            if u.active { self.systemd.run(key, &u.unit, Job::Start).await } else { Ok(()) }
        })
    }

    fn modify<'a>(
        &'a self,
        observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            let (o, d) = (self.spec(observed)?, self.spec(desired)?);
            let key = &desired.key;
            if o.content != d.content {
                self.write_and_reload(key, d).await?;
                self.systemd.enable(key, &d.unit).await?;
                let job = if d.active { Job::Restart } else { Job::Stop };
                return self.systemd.run(key, &d.unit, job).await;
            }
            match (o.active, d.active) {
                (false, true) => self.systemd.run(key, &d.unit, Job::Start).await,
                (true, false) => self.systemd.run(key, &d.unit, Job::Stop).await,
                _ => Ok(()),
            }
        })
    }

    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            let u = self.spec(observed)?;
            let key = &observed.key;
            self.systemd.run(key, &u.unit, Job::Stop).await?;
            self.systemd.disable(key, &u.unit).await?;
            let path = self.unit_dir.join(&u.unit);
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(source) => return Err(HostError::File { path, source }),
            }
            self.systemd.reload(key).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_routerd_service_files_are_listed() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("routerd-dnsmasq.service"), "[Service]\n").expect("w");
        std::fs::write(dir.path().join("sshd.service"), "[Service]\n").expect("w");
        std::fs::write(dir.path().join("routerd-x.timer"), "[Timer]\n").expect("w");
        std::os::unix::fs::symlink("/dev/null", dir.path().join("routerd-masked.service"))
            .expect("symlink");
        let units = read_units(dir.path()).expect("reads");
        assert_eq!(units, vec![("routerd-dnsmasq.service".to_string(), "[Service]\n".into())]);
        assert!(read_units(&dir.path().join("missing")).expect("absent dir").is_empty());
    }
}
