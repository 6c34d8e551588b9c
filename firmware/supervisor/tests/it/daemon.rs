//! `routerd serve` against a namespace of its own: the first reconcile, a hand-made change
//! repaired through the netlink notification (the resync interval is an hour, so nothing else
//! can repair it), the control API through `routerctl`, and a clean stop on SIGTERM.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::Netns;

const ROUTERD: &str = env!("CARGO_BIN_EXE_routerd");

/// The `routerctl` binary next to `routerd` in the same target directory.
fn routerctl() -> PathBuf {
    let dir = Path::new(ROUTERD).parent().expect("target dir");
    let path = dir.join("routerctl");
    assert!(path.exists(), "build routerctl first (cargo build --workspace): {}", path.display());
    path
}

const CONFIG: &str = "apiVersion: routerd.net/v1alpha1
kind: Router
metadata:
  name: t
spec:
  resources:
    - apiVersion: net.routerd.net/v1alpha1
      kind: Interface
      metadata:
        name: lan
      spec:
        ifname: lan0
        managed: true
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticAddress
      metadata:
        name: lan-v4
      spec:
        interface: lan
        address: 10.9.0.1/24
";

/// A namespace with one veth pair (`lan0`/`peer0`).
struct Lab(Netns);

impl Lab {
    fn new(tag: &str) -> Self {
        let ns = Netns::new(tag);
        ns.ip(&["link", "add", "lan0", "type", "veth", "peer", "name", "peer0"]);
        Self(ns)
    }

    fn name(&self) -> &str {
        &self.0.0
    }

    fn ip(&self, args: &[&str]) -> String {
        self.0.ip(args)
    }

    fn has_address(&self) -> bool {
        self.ip(&["-j", "addr", "show", "dev", "lan0"]).contains("\"10.9.0.1\"")
    }
}

/// The daemon process, killed on drop if the test did not stop it.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for(what: &str, deadline: Duration, mut ok: impl FnMut() -> bool) {
    let until = Instant::now() + deadline;
    while !ok() {
        assert!(Instant::now() < until, "timed out after {deadline:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn status(socket: &Path) -> Option<serde_json::Value> {
    let out = Command::new(routerctl())
        .args(["--socket", &socket.to_string_lossy(), "-o", "json", "status"])
        .output()
        .expect("routerctl runs");
    out.status.success().then(|| serde_json::from_slice(&out.stdout).expect("status JSON"))
}

#[test]
fn serve_repairs_a_hand_made_change_from_the_netlink_notification_and_stops_on_sigterm() {
    let lab = Lab::new("drift");
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("router.yaml");
    std::fs::write(&config, CONFIG).expect("config");
    let socket = dir.path().join("run/control.sock");
    let child = Command::new(ROUTERD)
        .args(["serve", "--netns", lab.name(), "--resync", "1h", "--debounce", "50ms"])
        .arg("--config")
        .arg(&config)
        .arg("--ledger")
        .arg(dir.path().join("l.redb"))
        .arg("--control-socket")
        .arg(&socket)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("routerd serve starts");
    let mut daemon = Daemon(child);

    wait_for("the first reconcile", Duration::from_secs(20), || {
        status(&socket).is_some_and(|s| s["reconciles"].as_u64() >= Some(1))
    });
    assert!(lab.has_address(), "the first reconcile created the address");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&socket).expect("socket").permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "the control socket is private");

    // Settle: the daemon's own changes trigger one more (no-op) reconcile.
    std::thread::sleep(Duration::from_millis(300));
    let before = status(&socket).expect("status")["reconciles"].as_u64().expect("count");
    lab.ip(&["addr", "del", "10.9.0.1/24", "dev", "lan0"]);
    assert!(!lab.has_address());
    wait_for("the address to be restored", Duration::from_secs(5), || lab.has_address());
    // The status is published when the reconcile has finished (after its verification).
    wait_for("the repairing reconcile to be reported", Duration::from_secs(5), || {
        status(&socket).is_some_and(|s| s["reconciles"].as_u64() > Some(before))
    });
    let after = status(&socket).expect("status");
    let trigger = after["lastReconcile"]["trigger"].as_str().unwrap_or_default().to_string();
    assert!(trigger.contains("address"), "repaired on the address notification: {after}");
    assert_eq!(after["state"], "running");
    assert_eq!(after["observedGeneration"], after["generation"]);

    // routerctl's table on a serial console.
    let table = Command::new(routerctl())
        .args(["--socket", &socket.to_string_lossy(), "status"])
        .output()
        .expect("routerctl");
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(table.status.success() && text.contains("state       running"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");

    // SIGTERM: exit 0, socket removed.
    let pid = daemon.0.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().expect("kill").success());
    let until = Instant::now() + Duration::from_secs(10);
    let code = loop {
        if let Some(code) = daemon.0.try_wait().expect("wait") {
            break code;
        }
        assert!(Instant::now() < until, "routerd did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(code.success(), "exit {code:?}");
    assert!(!socket.exists(), "the control socket is removed on stop");
    let unreachable = Command::new(routerctl())
        .args(["--socket", &socket.to_string_lossy(), "status"])
        .output()
        .expect("routerctl");
    assert_eq!(unreachable.status.code(), Some(69), "no daemon: exit 69");
}

#[test]
fn a_second_daemon_on_the_same_socket_is_refused() {
    let lab = Lab::new("twice");
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("router.yaml");
    std::fs::write(&config, CONFIG).expect("config");
    let socket = dir.path().join("control.sock");
    let start = |ledger: &str| {
        Command::new(ROUTERD)
            .args(["serve", "--netns", lab.name(), "--resync", "1h"])
            .arg("--config")
            .arg(&config)
            .arg("--ledger")
            .arg(dir.path().join(ledger))
            .arg("--control-socket")
            .arg(&socket)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("routerd serve starts")
    };
    let _first = Daemon(start("a.redb"));
    wait_for("the first daemon", Duration::from_secs(20), || status(&socket).is_some());
    let second = start("b.redb").wait_with_output().expect("second daemon exits");
    assert!(!second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("another routerd answers on"), "{err}");
    assert!(status(&socket).is_some(), "the first daemon still serves");
}
