//! The real systemd-timesyncd, run as the `systemd-timesyncd.service` of a [`super::FakeSystemd`].
//!
//! timesyncd reads its configuration only when it starts, so the configurator restarts it
//! through systemd; the tests therefore hand the distribution's binary to the fake manager as a
//! unit, and the fake starts, stops and restarts it as systemd would. Each start runs it in a
//! mount namespace of its own where
//! - `/etc/systemd` is the target's (`ROOT/etc/systemd`), so it reads routerd's drop-in and no
//!   `timesyncd.conf` of the machine's;
//! - `/run/systemd` and `/var/lib/systemd` are fresh tmpfs (with an empty `timesync` in the
//!   latter, which a machine that never ran timesyncd lacks), so its state files (the clock
//!   stamp) never touch the machine's.
//!
//! It connects to the test's private bus and owns `org.freedesktop.timesync1` there. The test
//! machine has no route to any NTP server, so it never sets the clock. Its log is kept.

use std::path::{Path, PathBuf};

/// Where Debian installs timesyncd (package `systemd-timesyncd`).
pub const TIMESYNCD: &str = "/lib/systemd/systemd-timesyncd";

/// timesyncd as a unit of the fake manager: the unit file and its start script.
pub struct Timesyncd {
    log: PathBuf,
}

impl Timesyncd {
    /// Writes `systemd-timesyncd.service` into `unit_dir` (the fake manager's), with a start
    /// script in `dir` that runs timesyncd on the bus at `bus_address` reading `root`'s
    /// `/etc/systemd`. The fake knows the unit after its next `Reload`.
    ///
    /// Panics (a test fixture) when the files cannot be written.
    pub fn install(dir: &Path, unit_dir: &Path, root: &Path, bus_address: &str) -> Self {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(dir).expect("timesyncd dir");
        std::fs::create_dir_all(unit_dir).expect("unit dir");
        let etc = root.join("etc/systemd");
        std::fs::create_dir_all(&etc).expect("ROOT/etc/systemd");
        let log = dir.join("timesyncd.log");
        let pid = dir.join("timesyncd.pid");
        let script = dir.join("start-timesyncd");
        // `unshare` and `sh` exec timesyncd, so `$!` is timesyncd's PID, which the fake kills
        // on stop.
        let text = format!(
            "#!/bin/sh\n\
             export DBUS_SYSTEM_BUS_ADDRESS='{bus_address}'\n\
             export SYSTEMD_LOG_LEVEL=debug\n\
             unshare --mount --propagation private sh -c \"set -e; \
               mount --bind '{etc}' /etc/systemd; \
               mount -t tmpfs tmpfs /run/systemd; \
               mount -t tmpfs tmpfs /var/lib/systemd; mkdir /var/lib/systemd/timesync; \
               exec {TIMESYNCD}\" >>'{log}' 2>&1 </dev/null &\n\
             echo $! >'{pid}'\n",
            etc = etc.display(),
            log = log.display(),
            pid = pid.display(),
        );
        std::fs::write(&script, text).expect("start script");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .expect("script mode");
        let unit = format!(
            "[Unit]\n\
             Description=Network Time Synchronization (test: the real binary, in a mount namespace)\n\
             [Service]\n\
             Type=forking\n\
             ExecStart={}\n\
             PIDFile={}\n",
            script.display(),
            pid.display(),
        );
        std::fs::write(unit_dir.join("systemd-timesyncd.service"), unit).expect("unit file");
        Self { log }
    }

    /// What timesyncd logged so far (every run).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}
