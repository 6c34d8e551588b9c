//! The real systemd-hostnamed, in UTS and mount namespaces of its own.
//!
//! hostnamed is an ordinary daemon: the tests run the distribution's binary on the test's
//! private bus. It sets the kernel's hostname of its UTS namespace (not the machine's), and
//! writes `/etc/hostname` by renaming a temporary file over it, so `/etc` is an overlay whose
//! upper layer is the test's directory: what it writes lands there, the machine's `/etc` is not
//! touched. It exits after 30 s without calls (as bus activation expects); tests finish first.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where Debian installs hostnamed.
pub const HOSTNAMED: &str = "/lib/systemd/systemd-hostnamed";

/// A running systemd-hostnamed; killed when dropped.
pub struct Hostnamed {
    child: Child,
    upper: PathBuf,
}

impl Hostnamed {
    /// Starts hostnamed on the bus at `bus_address`, with `/etc/hostname` reading `initial`;
    /// its writes to `/etc` land in `dir/etc`. Returns once it owns its bus name.
    ///
    /// Panics (a test fixture) when hostnamed is missing or does not come up within 10 s.
    pub fn start(dir: &Path, bus_address: &str, initial: &str) -> Self {
        let upper = dir.join("etc");
        let work = dir.join("etc-work");
        for d in [&upper, &work] {
            std::fs::create_dir_all(d).expect("overlay directory");
        }
        std::fs::write(upper.join("hostname"), format!("{initial}\n")).expect("/etc/hostname");
        let log = std::fs::File::create(dir.join("hostnamed.log")).expect("hostnamed.log");
        let script = format!(
            "set -e\n\
             mount -t overlay overlay -o lowerdir=/etc,upperdir='{}',workdir='{}' /etc\n\
             hostname '{initial}'\n\
             exec {HOSTNAMED}\n",
            upper.display(),
            work.display(),
        );
        let child = Command::new("unshare")
            .args(["--uts", "--mount", "--propagation", "private", "sh", "-c", &script])
            .env("DBUS_SYSTEM_BUS_ADDRESS", bus_address)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .spawn()
            .expect("start systemd-hostnamed");
        let mut me = Self { child, upper };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !super::networkd::owns_name(bus_address, "org.freedesktop.hostname1") {
            if let Ok(Some(status)) = me.child.try_wait() {
                panic!("systemd-hostnamed exited ({status})");
            }
            assert!(Instant::now() < deadline, "systemd-hostnamed not on the bus in 10 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        me
    }

    /// The kernel's hostname in hostnamed's UTS namespace (read with `nsenter`, not through
    /// hostnamed).
    pub fn kernel_hostname(&self) -> String {
        let out = Command::new("nsenter")
            .args(["-t", &self.child.id().to_string(), "--uts", "hostname"])
            .output()
            .expect("nsenter hostname");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// `/etc/hostname` as hostnamed left it (the overlay's upper layer).
    pub fn etc_hostname(&self) -> String {
        std::fs::read_to_string(self.upper.join("hostname")).unwrap_or_default()
    }
}

impl Drop for Hostnamed {
    fn drop(&mut self) {
        // hostnamed is the child itself (`unshare` and `sh` exec it).
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
