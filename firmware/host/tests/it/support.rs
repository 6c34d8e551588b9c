//! Test fixture: a fresh, uniquely named network namespace per test, removed on drop (also
//! when the test panics), plus helpers that set up and read back state with `ip`, independently
//! of the code under test.

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use routerd_host::Netns;
use serde_json::Value;

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A network namespace `rdt-<pid>-<counter>` created with `ip netns add`, deleted in `Drop`.
pub struct TestNetns {
    name: String,
}

impl TestNetns {
    /// Creates the namespace and brings its loopback up.
    ///
    /// Panics with "needs root" when not run as root, and when `ip netns add` fails.
    pub fn new() -> Self {
        require_root();
        let name = format!("rdt-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::SeqCst));
        run("ip", &["netns", "add", &name]);
        let ns = Self { name };
        ns.ip(&["link", "set", "lo", "up"]);
        ns
    }

    /// The namespace's name (`rdt-…`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The handle the code under test targets.
    pub fn netns(&self) -> Netns {
        Netns::named(&self.name).expect("namespace created by the fixture exists")
    }

    /// Runs `ip -n NAME ARGS…`; panics with stderr on failure; returns stdout.
    pub fn ip(&self, args: &[&str]) -> String {
        let mut full = vec!["-n", self.name.as_str()];
        full.extend_from_slice(args);
        run("ip", &full)
    }

    /// Runs `ip -j -n NAME ARGS…` and parses the JSON array it prints (empty output: `[]`).
    pub fn ip_json(&self, args: &[&str]) -> Vec<Value> {
        let mut full = vec!["-j", "-n", self.name.as_str()];
        full.extend_from_slice(args);
        let out = run("ip", &full);
        if out.trim().is_empty() {
            return Vec::new();
        }
        match serde_json::from_str(&out) {
            Ok(Value::Array(items)) => items,
            other => panic!("ip {full:?}: not a JSON array: {other:?}\n{out}"),
        }
    }

    /// Runs `ip netns exec NAME CMD…` (e.g. `cat /proc/sys/...` inside the namespace).
    pub fn exec(&self, cmd: &[&str]) -> String {
        let mut full = vec!["netns", "exec", self.name.as_str()];
        full.extend_from_slice(cmd);
        run("ip", &full)
    }

    /// Creates a veth pair `a` ↔ `b` inside the namespace (both down).
    pub fn add_veth(&self, a: &str, b: &str) {
        self.ip(&["link", "add", a, "type", "veth", "peer", "name", b]);
    }

    /// Creates a veth pair, brings both ends up and puts `addr` (CIDR) on `a`.
    pub fn add_veth_with_address(&self, a: &str, b: &str, addr: &str) {
        self.add_veth(a, b);
        self.ip(&["link", "set", a, "up"]);
        self.ip(&["link", "set", b, "up"]);
        self.ip(&["address", "add", addr, "dev", a]);
    }

    /// `ip -j link show DEV` of one link.
    pub fn link(&self, dev: &str) -> Value {
        self.ip_json(&["link", "show", "dev", dev]).into_iter().next().expect("link listed")
    }
}

impl Drop for TestNetns {
    fn drop(&mut self) {
        let status = Command::new("ip").args(["netns", "del", &self.name]).status();
        if !matches!(status, Ok(s) if s.success()) && !std::thread::panicking() {
            panic!("could not delete namespace {}: {status:?}", self.name);
        }
    }
}

/// Panics unless the effective uid is 0: these tests need root and never skip.
pub fn require_root() {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .expect("Uid line in /proc/self/status");
    assert_eq!(euid, "0", "routerd-host integration tests needs root (network namespaces)");
}

/// Runs a command to completion; panics with its stderr on failure.
pub fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} {args:?}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
