//! D-Bus proxies of the systemd service manager, as org.freedesktop.systemd1(5) documents them
//! (<https://www.freedesktop.org/software/systemd/man/latest/org.freedesktop.systemd1.html>).
//! Only what the unit configurator calls.

use zbus::zvariant::OwnedObjectPath;

/// `org.freedesktop.systemd1.Manager` at [`PATH`].
#[zbus::proxy(
    interface = "org.freedesktop.systemd1.Manager",
    default_service = "org.freedesktop.systemd1",
    default_path = "/org/freedesktop/systemd1"
)]
pub(crate) trait Manager {
    /// `Subscribe()`: without it the manager sends no `JobRemoved` to this client.
    fn subscribe(&self) -> zbus::Result<()>;

    /// `Reload()`: `systemctl daemon-reload`, returns once the unit files are re-read.
    fn reload(&self) -> zbus::Result<()>;

    /// `LoadUnit(s name) -> o unit`: the unit's object, loading it if needed.
    fn load_unit(&self, name: &str) -> zbus::Result<OwnedObjectPath>;

    /// `StartUnit(s name, s mode) -> o job`.
    fn start_unit(&self, name: &str, mode: &str) -> zbus::Result<OwnedObjectPath>;

    /// `StopUnit(s name, s mode) -> o job`.
    fn stop_unit(&self, name: &str, mode: &str) -> zbus::Result<OwnedObjectPath>;

    /// `RestartUnit(s name, s mode) -> o job`: starts the unit when it is not running.
    fn restart_unit(&self, name: &str, mode: &str) -> zbus::Result<OwnedObjectPath>;

    /// `TryRestartUnit(s name, s mode) -> o job`: restarts the unit only when it runs.
    fn try_restart_unit(&self, name: &str, mode: &str) -> zbus::Result<OwnedObjectPath>;

    /// `ResetFailedUnit(s name)`: `systemctl reset-failed NAME`, which also zeroes the unit's
    /// start rate limit counter.
    fn reset_failed_unit(&self, name: &str) -> zbus::Result<()>;

    /// `EnableUnitFiles(as files, b runtime, b force) -> (b carries_install_info,
    /// a(sss) changes)`.
    fn enable_unit_files(
        &self,
        files: &[&str],
        runtime: bool,
        force: bool,
    ) -> zbus::Result<(bool, Vec<(String, String, String)>)>;

    /// `DisableUnitFiles(as files, b runtime) -> a(sss) changes`.
    fn disable_unit_files(
        &self,
        files: &[&str],
        runtime: bool,
    ) -> zbus::Result<Vec<(String, String, String)>>;

    /// `JobRemoved(u id, o job, s unit, s result)`: a job finished; `result` is `done`,
    /// `canceled`, `timeout`, `failed`, `dependency` or `skipped`.
    #[zbus(signal)]
    fn job_removed(
        &self,
        id: u32,
        job: OwnedObjectPath,
        unit: String,
        result: String,
    ) -> zbus::Result<()>;
}

/// `org.freedesktop.systemd1.Unit` at a unit's object.
#[zbus::proxy(
    interface = "org.freedesktop.systemd1.Unit",
    default_service = "org.freedesktop.systemd1"
)]
pub(crate) trait Unit {
    /// `ActiveState` (s): `active`, `reloading`, `inactive`, `failed`, `activating`,
    /// `deactivating`, `maintenance`, `refreshing`.
    #[zbus(property)]
    fn active_state(&self) -> zbus::Result<String>;
}
