//! The real systemd-networkd, run inside a test's network namespace.
//!
//! networkd is an ordinary daemon (unlike systemd's manager it need not be PID 1), so the tests
//! run the distribution's binary rather than a stand-in. It reads fixed paths, so it runs in a
//! mount namespace of its own where
//! - `/etc/systemd/network` is the target's `.network` directory (`Target::network_dir`);
//! - `/etc/systemd/networkd.conf` is the firmware's networkd drop-in (the rootfs overlay's
//!   `networkd.conf.d/routerd.conf`), so the tests run networkd as the image does;
//! - `/run/systemd` is a fresh tmpfs for its state;
//! - `/sys` (the namespace's own, as `ip netns exec` mounts it) is read-only: networkd then knows
//!   there is no udev to wait for (systemd's container interface), and takes links as they come.
//!
//! It connects to the test's private bus (`DBUS_SYSTEM_BUS_ADDRESS`) and owns
//! `org.freedesktop.network1` there. Its log (stderr) is kept for failure messages.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where Debian installs networkd.
pub const NETWORKD: &str = "/lib/systemd/systemd-networkd";

/// A running systemd-networkd serving one network namespace; killed when dropped.
pub struct Networkd {
    child: Child,
    log: PathBuf,
}

impl Networkd {
    /// Starts networkd in `netns`, reading `.network` files from `network_dir` (created) and
    /// `conf` as its `networkd.conf`, on the bus at `bus_address`; returns once it owns its bus
    /// name. `log_dir` receives `networkd.log`.
    ///
    /// Panics (a test fixture) when networkd is missing or does not come up within 10 s.
    pub fn start(
        netns: &str,
        network_dir: &Path,
        conf: &Path,
        bus_address: &str,
        log_dir: &Path,
    ) -> Self {
        std::fs::create_dir_all(network_dir).expect("the .network directory");
        let log = log_dir.join("networkd.log");
        let out = std::fs::File::create(&log).expect("networkd.log");
        let script = format!(
            "set -e\n\
             mount -o remount,ro /sys\n\
             mount --bind '{dir}' /etc/systemd/network\n\
             mount --bind '{conf}' /etc/systemd/networkd.conf\n\
             mount -t tmpfs tmpfs /run/systemd\n\
             mkdir -p /run/systemd/netif\n\
             chown systemd-network:systemd-network /run/systemd/netif\n\
             exec {NETWORKD}\n",
            dir = network_dir.display(),
            conf = conf.display(),
        );
        let child = Command::new("ip")
            .args(["netns", "exec", netns, "unshare", "--mount", "--propagation", "private"])
            .args(["sh", "-c", &script])
            .env("DBUS_SYSTEM_BUS_ADDRESS", bus_address)
            .env("SYSTEMD_LOG_LEVEL", "debug")
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("log handle"))
            .stderr(out)
            .spawn()
            .expect("start systemd-networkd");
        let mut me = Self { child, log };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !owns_name(bus_address, "org.freedesktop.network1") {
            if let Ok(Some(status)) = me.child.try_wait() {
                panic!("systemd-networkd exited ({status}):\n{}", me.log());
            }
            assert!(
                Instant::now() < deadline,
                "systemd-networkd not on the bus in 10 s:\n{}",
                me.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        me
    }

    /// What networkd logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// Whether `name` has an owner on the bus at `bus_address` (busctl, not the code under test).
pub(super) fn owns_name(bus_address: &str, name: &str) -> bool {
    Command::new("busctl")
        .args(["--address", bus_address, "status", name])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl Drop for Networkd {
    fn drop(&mut self) {
        // networkd is the child itself (`ip netns exec`, `unshare` and `sh` exec it).
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
