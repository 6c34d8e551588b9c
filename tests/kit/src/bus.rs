//! A private `dbus-daemon` of type `system`, so tests never touch the machine's own bus (the
//! systemd stand-in of `routerd-host`, the RAUC fixture of `routerd-ota`).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long the bus may take to come up.
const START_DEADLINE: Duration = Duration::from_secs(20);

/// A `dbus-daemon` of type `system` on a socket in a directory of its own; killed on drop.
pub struct PrivateBus {
    child: Child,
    address: String,
}

impl PrivateBus {
    /// Starts the bus with its socket in `dir` (keep the path short: `sun_path` holds 108
    /// bytes). Panics when `dbus-daemon` (package `dbus-daemon`) is missing or prints no
    /// address within a deadline.
    pub fn start(dir: &Path) -> Self {
        let socket = dir.join("bus.sock");
        assert!(socket.as_os_str().len() < 100, "socket path too long: {socket:?}");
        let conf = format!(
            r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"#,
            socket.display()
        );
        let conf_path = dir.join("bus.conf");
        std::fs::write(&conf_path, conf).expect("bus.conf");
        let log = std::fs::File::create(dir.join("dbus.log")).expect("dbus.log");
        let mut child = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", conf_path.display()))
            .args(["--print-address", "--nofork"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("spawn dbus-daemon (package dbus-daemon)");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(START_DEADLINE).unwrap_or_default();
        let address = line.trim().to_string();
        if !address.starts_with("unix:") {
            let _ = child.kill();
            let _ = child.wait();
            let log = std::fs::read_to_string(dir.join("dbus.log")).unwrap_or_default();
            panic!("dbus-daemon printed no address within {START_DEADLINE:?}: {line:?}\n{log}");
        }
        Self { child, address }
    }

    /// The bus address (`unix:path=…,guid=…`).
    pub fn address(&self) -> &str {
        &self.address
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
