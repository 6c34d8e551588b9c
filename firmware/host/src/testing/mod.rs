//! Test support (feature `test-support`, never in a release build): a private D-Bus system bus,
//! a stand-in for systemd's manager on it, and the real systemd-networkd and systemd-hostnamed
//! in namespaces.
//!
//! systemd cannot run as the service manager of a test process here (it must be PID 1 of a
//! machine; the QEMU image tests the real one). [`FakeSystemd`] implements the part of
//! org.freedesktop.systemd1(5) the unit configurator calls, with systemd's documented
//! semantics for the unit settings routerd writes:
//!
//! - `Reload` re-reads the unit files of the unit directory; `StartUnit`, `StopUnit`,
//!   `RestartUnit`, `TryRestartUnit` act on the definitions of the last reload, return a job
//!   object and emit `JobRemoved` with the job's result; for a unit without a file they fail
//!   with `org.freedesktop.systemd1.NoSuchUnit`, as systemd does;
//! - `ConditionPathExists=`: a start whose condition fails ends `done` and leaves the unit
//!   inactive;
//! - `Type=forking`: `ExecStart=` is run and waited for; exit 0 is `done` and the unit is
//!   active with the PID read from `PIDFile=`; any other exit is `failed`;
//! - `NetworkNamespacePath=/run/netns/NAME`: the command runs inside that namespace;
//! - the default start rate limit (5 starts in 10 s, then the start fails with the unit
//!   `failed`), which `ResetFailedUnit` resets along with the failed state;
//! - `EnableUnitFiles`, `DisableUnitFiles` record the unit as enabled or not;
//! - units expose `ActiveState`.
//!
//! Every call is logged ([`FakeSystemd::calls`]) so tests can assert what the configurator
//! asked for.
//!
//! systemd-networkd, systemd-hostnamed and systemd-timesyncd, which can run here, are the real
//! ones ([`Networkd`], [`Hostnamed`], and [`Timesyncd`] as a unit of the fake manager).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use routerd_test_kit::bus::PrivateBus;

mod hostnamed;
mod networkd;
mod timesyncd;
pub use hostnamed::{HOSTNAMED, Hostnamed};
pub use networkd::{NETWORKD, Networkd};
pub use timesyncd::{TIMESYNCD, Timesyncd};

use zbus::object_server::SignalEmitter;
use zbus::zvariant::{ObjectPath, OwnedObjectPath};
use zbus::{Connection, fdo, interface};

/// A unit as the fake knows it.
#[derive(Clone, Debug, Default)]
struct UnitState {
    /// `[Service]` and `[Unit]` settings of the last reload (last value wins).
    settings: BTreeMap<String, String>,
    /// `ActiveState`.
    active_state: String,
    /// The main process, read from `PIDFile=`.
    pid: Option<i32>,
    enabled: bool,
    /// Times the service was started (restarts included).
    starts: u32,
    /// When the starts of the rate-limit window were, for `StartLimitBurst=`.
    recent_starts: Vec<std::time::Instant>,
}

/// systemd's defaults for a unit that sets none (`DefaultStartLimitIntervalSec=10s`,
/// `DefaultStartLimitBurst=5`, systemd-system.conf(5)): a sixth start within 10 s is refused
/// (`start-limit-hit`) until the window passes or `ResetFailedUnit` zeroes the count.
const START_LIMIT_INTERVAL: Duration = Duration::from_secs(10);
const START_LIMIT_BURST: usize = 5;

#[derive(Default)]
struct State {
    units: BTreeMap<String, UnitState>,
    calls: Vec<String>,
    next_job: u32,
}

/// A stand-in for systemd's manager on a [`PrivateBus`] (see the module docs). Stops every
/// service it started when dropped.
pub struct FakeSystemd {
    state: Arc<Mutex<State>>,
    _conn: Connection,
    bus: PrivateBus,
}

/// The D-Bus objects (private: zbus generates items without docs).
mod server {
    use super::*;

    pub(super) struct Manager {
        pub(super) unit_dir: PathBuf,
        pub(super) state: Arc<Mutex<State>>,
    }

    /// The manager's errors that routerd tells apart by name (systemd's `src/libsystemd/
    /// sd-bus/bus-common-errors.h`); everything else is a `zbus` / `fdo` error.
    #[derive(Debug, zbus::DBusError)]
    #[zbus(prefix = "org.freedesktop.systemd1")]
    pub(super) enum ManagerError {
        #[zbus(error)]
        ZBus(zbus::Error),
        /// `org.freedesktop.systemd1.NoSuchUnit`: no unit file and not loaded, as systemd
        /// answers a job for such a unit ("Unit NAME not found.").
        NoSuchUnit(String),
    }

    impl From<fdo::Error> for ManagerError {
        fn from(e: fdo::Error) -> Self {
            Self::ZBus(zbus::Error::FDO(Box::new(e)))
        }
    }

    struct UnitObject {
        name: String,
        state: Arc<Mutex<State>>,
    }

    /// systemd's object path of a unit: bytes outside `[A-Za-z0-9]` become `_XX`
    /// (sd_bus_path_encode).
    fn unit_path(name: &str) -> String {
        let mut p = String::from("/org/freedesktop/systemd1/unit/");
        for b in name.bytes() {
            if b.is_ascii_alphanumeric() {
                p.push(b as char);
            } else {
                p.push_str(&format!("_{b:02x}"));
            }
        }
        p
    }

    fn parse_unit(text: &str) -> BTreeMap<String, String> {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.starts_with('#') && !l.starts_with('['))
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect()
    }

    pub(super) fn kill(pid: i32) {
        let pid = nix::unistd::Pid::from_raw(pid);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        // Wait (bounded) until it is gone, so a restart does not race the old process for its
        // sockets.
        for _ in 0..200 {
            if nix::sys::signal::kill(pid, None).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
    }

    impl Manager {
        fn log(&self, call: String) {
            if let Ok(mut s) = self.state.lock() {
                s.calls.push(call);
            }
        }

        /// Runs a start; returns the job result.
        fn start(&self, name: &str) -> &'static str {
            let Ok(mut state) = self.state.lock() else { return "failed" };
            let Some(unit) = state.units.get_mut(name) else { return "failed" };
            if unit.active_state == "active" {
                return "done";
            }
            if let Some(p) = unit.settings.get("ConditionPathExists")
                && !Path::new(p).exists()
            {
                unit.active_state = "inactive".into();
                return "done";
            }
            let now = std::time::Instant::now();
            unit.recent_starts.retain(|t| now.duration_since(*t) < START_LIMIT_INTERVAL);
            if unit.recent_starts.len() >= START_LIMIT_BURST {
                unit.active_state = "failed".into();
                return "failed";
            }
            unit.recent_starts.push(now);
            let Some(exec) = unit.settings.get("ExecStart") else { return "failed" };
            let mut argv: Vec<String> = exec.split_whitespace().map(str::to_owned).collect();
            if let Some(ns) = unit
                .settings
                .get("NetworkNamespacePath")
                .and_then(|p| p.strip_prefix("/run/netns/"))
            {
                argv.splice(
                    0..0,
                    ["ip".to_string(), "netns".into(), "exec".into(), ns.to_string()],
                );
            }
            let Some((cmd, args)) = argv.split_first() else { return "failed" };
            let status = Command::new(cmd).args(args).stdin(Stdio::null()).status();
            unit.starts += 1;
            match status {
                Ok(s) if s.success() => {
                    let pid = unit
                        .settings
                        .get("PIDFile")
                        .and_then(|f| std::fs::read_to_string(f).ok())
                        .and_then(|t| t.trim().parse().ok());
                    unit.pid = pid;
                    unit.active_state = "active".into();
                    "done"
                }
                _ => {
                    unit.active_state = "failed".into();
                    "failed"
                }
            }
        }

        fn stop(&self, name: &str) -> &'static str {
            let Ok(mut state) = self.state.lock() else { return "failed" };
            let Some(unit) = state.units.get_mut(name) else { return "done" };
            if let Some(pid) = unit.pid.take() {
                kill(pid);
            }
            unit.active_state = "inactive".into();
            "done"
        }

        async fn job(
            &self,
            emitter: &SignalEmitter<'_>,
            name: &str,
            result: &str,
        ) -> fdo::Result<OwnedObjectPath> {
            let id = match self.state.lock() {
                Ok(mut s) => {
                    s.next_job += 1;
                    s.next_job
                }
                Err(_) => return Err(fdo::Error::Failed("state poisoned".into())),
            };
            let path = OwnedObjectPath::try_from(format!("/org/freedesktop/systemd1/job/{id}"))
                .map_err(|e| fdo::Error::Failed(e.to_string()))?;
            Self::job_removed(emitter, id, path.as_ref(), name, result)
                .await
                .map_err(|e| fdo::Error::Failed(e.to_string()))?;
            Ok(path)
        }

        fn known(&self, name: &str) -> Result<(), ManagerError> {
            let known = self.state.lock().map(|s| s.units.contains_key(name)).unwrap_or(false);
            if known {
                Ok(())
            } else {
                Err(ManagerError::NoSuchUnit(format!("Unit {name} not found.")))
            }
        }
    }

    #[interface(name = "org.freedesktop.systemd1.Manager")]
    impl Manager {
        async fn subscribe(&self) {
            self.log("Subscribe".into());
        }

        async fn reload(&self) -> fdo::Result<()> {
            self.log("Reload".into());
            let mut files = BTreeMap::new();
            if let Ok(entries) = std::fs::read_dir(&self.unit_dir) {
                for e in entries.flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name.ends_with(".service")
                        && let Ok(text) = std::fs::read_to_string(e.path())
                    {
                        files.insert(name, parse_unit(&text));
                    }
                }
            }
            let mut state = self.state.lock().map_err(|_| fdo::Error::Failed("poisoned".into()))?;
            // A unit whose file is gone stays known while it runs, as in systemd ("not-found").
            state.units.retain(|n, u| files.contains_key(n) || u.active_state == "active");
            for (name, settings) in files {
                let unit = state.units.entry(name).or_insert_with(|| UnitState {
                    active_state: "inactive".into(),
                    ..Default::default()
                });
                unit.settings = settings;
            }
            Ok(())
        }

        async fn load_unit(
            &self,
            name: String,
            #[zbus(object_server)] server: &zbus::ObjectServer,
        ) -> fdo::Result<OwnedObjectPath> {
            let path = unit_path(&name);
            let object = UnitObject { name: name.clone(), state: Arc::clone(&self.state) };
            // `at` returns false when the object is already there.
            server
                .at(path.as_str(), object)
                .await
                .map_err(|e| fdo::Error::Failed(e.to_string()))?;
            OwnedObjectPath::try_from(path).map_err(|e| fdo::Error::Failed(e.to_string()))
        }

        async fn start_unit(
            &self,
            name: String,
            _mode: String,
            #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        ) -> Result<OwnedObjectPath, ManagerError> {
            self.log(format!("StartUnit {name}"));
            self.known(&name)?;
            let result = self.start(&name);
            Ok(self.job(&emitter, &name, result).await?)
        }

        async fn stop_unit(
            &self,
            name: String,
            _mode: String,
            #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        ) -> Result<OwnedObjectPath, ManagerError> {
            self.log(format!("StopUnit {name}"));
            self.known(&name)?;
            let result = self.stop(&name);
            Ok(self.job(&emitter, &name, result).await?)
        }

        async fn restart_unit(
            &self,
            name: String,
            _mode: String,
            #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        ) -> Result<OwnedObjectPath, ManagerError> {
            self.log(format!("RestartUnit {name}"));
            self.known(&name)?;
            self.stop(&name);
            let result = self.start(&name);
            Ok(self.job(&emitter, &name, result).await?)
        }

        async fn reset_failed_unit(&self, name: String) -> fdo::Result<()> {
            self.log(format!("ResetFailedUnit {name}"));
            let mut state = self.state.lock().map_err(|_| fdo::Error::Failed("poisoned".into()))?;
            let Some(unit) = state.units.get_mut(&name) else {
                return Err(fdo::Error::Failed(format!("Unit {name} not loaded.")));
            };
            unit.recent_starts.clear();
            if unit.active_state == "failed" {
                unit.active_state = "inactive".into();
            }
            Ok(())
        }

        async fn try_restart_unit(
            &self,
            name: String,
            _mode: String,
            #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        ) -> Result<OwnedObjectPath, ManagerError> {
            self.log(format!("TryRestartUnit {name}"));
            // systemd loads the unit first: one it has no file for is an error, not a no-op.
            self.known(&name)?;
            let running = self
                .state
                .lock()
                .map(|s| s.units.get(&name).is_some_and(|u| u.active_state == "active"))
                .unwrap_or(false);
            let result = if running {
                self.stop(&name);
                self.start(&name)
            } else {
                "done"
            };
            Ok(self.job(&emitter, &name, result).await?)
        }

        async fn enable_unit_files(
            &self,
            files: Vec<String>,
            _runtime: bool,
            _force: bool,
        ) -> fdo::Result<(bool, Vec<(String, String, String)>)> {
            self.log(format!("EnableUnitFiles {}", files.join(" ")));
            let mut state = self.state.lock().map_err(|_| fdo::Error::Failed("poisoned".into()))?;
            for f in &files {
                if let Some(u) = state.units.get_mut(f) {
                    u.enabled = true;
                }
            }
            Ok((true, Vec::new()))
        }

        async fn disable_unit_files(
            &self,
            files: Vec<String>,
            _runtime: bool,
        ) -> fdo::Result<Vec<(String, String, String)>> {
            self.log(format!("DisableUnitFiles {}", files.join(" ")));
            let mut state = self.state.lock().map_err(|_| fdo::Error::Failed("poisoned".into()))?;
            for f in &files {
                if let Some(u) = state.units.get_mut(f) {
                    u.enabled = false;
                }
            }
            Ok(Vec::new())
        }

        /// `JobRemoved(u id, o job, s unit, s result)`.
        #[zbus(signal)]
        async fn job_removed(
            emitter: &SignalEmitter<'_>,
            id: u32,
            job: ObjectPath<'_>,
            unit: &str,
            result: &str,
        ) -> zbus::Result<()>;
    }

    #[interface(name = "org.freedesktop.systemd1.Unit")]
    impl UnitObject {
        #[zbus(property)]
        async fn active_state(&self) -> String {
            self.state
                .lock()
                .ok()
                .and_then(|s| s.units.get(&self.name).map(|u| u.active_state.clone()))
                .unwrap_or_else(|| "inactive".into())
        }
    }
}

use server::{Manager, kill};

impl FakeSystemd {
    /// Starts a private bus with its socket in `dir` and the fake manager on it, serving the
    /// unit files of `unit_dir`.
    pub async fn start(dir: &Path, unit_dir: &Path) -> Self {
        let bus = PrivateBus::start(dir);
        let state = Arc::new(Mutex::new(State::default()));
        let manager = Manager { unit_dir: unit_dir.to_path_buf(), state: Arc::clone(&state) };
        let conn = zbus::connection::Builder::address(bus.address())
            .expect("bus address")
            .name("org.freedesktop.systemd1")
            .expect("well-known name")
            .serve_at("/org/freedesktop/systemd1", manager)
            .expect("manager object")
            .build()
            .await
            .expect("connect the fake manager");
        Self { state, _conn: conn, bus }
    }

    /// The bus address, for `SessionOptions::system_bus` or `routerd --systemd-bus`.
    pub fn address(&self) -> &str {
        self.bus.address()
    }

    /// Every call so far, in order (`StartUnit routerd-dnsmasq.service`, `Reload`, …).
    pub fn calls(&self) -> Vec<String> {
        self.state.lock().map(|s| s.calls.clone()).unwrap_or_default()
    }

    /// `ActiveState` of `unit` (`inactive` when unknown).
    pub fn active_state(&self, unit: &str) -> String {
        self.state
            .lock()
            .ok()
            .and_then(|s| s.units.get(unit).map(|u| u.active_state.clone()))
            .unwrap_or_else(|| "inactive".into())
    }

    /// The main PID of `unit`, when it runs.
    pub fn main_pid(&self, unit: &str) -> Option<i32> {
        self.state.lock().ok().and_then(|s| s.units.get(unit).and_then(|u| u.pid))
    }

    /// Whether `unit` is enabled.
    pub fn is_enabled(&self, unit: &str) -> bool {
        self.state.lock().ok().and_then(|s| s.units.get(unit).map(|u| u.enabled)).unwrap_or(false)
    }

    /// How many times `unit` was started (restarts included).
    pub fn starts(&self, unit: &str) -> u32 {
        self.state.lock().ok().and_then(|s| s.units.get(unit).map(|u| u.starts)).unwrap_or(0)
    }

    /// Stops `unit`'s process behind the manager's back, as a crash would (the unit shows
    /// `failed`).
    pub fn crash(&self, unit: &str) {
        if let Ok(mut s) = self.state.lock()
            && let Some(u) = s.units.get_mut(unit)
        {
            if let Some(pid) = u.pid.take() {
                kill(pid);
            }
            u.active_state = "failed".into();
        }
    }
}

impl Drop for FakeSystemd {
    fn drop(&mut self) {
        if let Ok(mut s) = self.state.lock() {
            for u in s.units.values_mut() {
                if let Some(pid) = u.pid.take() {
                    kill(pid);
                }
            }
        }
    }
}
