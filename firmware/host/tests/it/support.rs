//! Test fixture: a fresh, uniquely named network namespace per test (the kit's
//! [`routerd_test_kit::netns::Netns`], removed on drop, also when the test panics), plus the
//! handle the code under test targets and JSON read-back with `ip`, independently of the code
//! under test.

use std::ops::Deref;

use routerd_host::Netns;
use routerd_test_kit::netns;
use serde_json::Value;

/// A network namespace `rdt-<pid>-<counter>` with its loopback up, deleted on drop. The kit's
/// helpers (`ip`, `exec`, `add_veth`, …) are reached through `Deref`.
pub struct TestNetns(netns::Netns);

impl TestNetns {
    /// Creates the namespace and brings its loopback up.
    ///
    /// Panics with "needs root" when not run as root, and when `ip netns add` fails.
    pub fn new() -> Self {
        Self(netns::Netns::new("rdt"))
    }

    /// The handle the code under test targets.
    pub fn netns(&self) -> Netns {
        Netns::named(self.name()).expect("namespace created by the fixture exists")
    }

    /// Runs `ip -j -n NAME ARGS…` and parses the JSON array it prints (empty output: `[]`).
    pub fn ip_json(&self, args: &[&str]) -> Vec<Value> {
        let mut full = vec!["-j"];
        full.extend_from_slice(args);
        let out = self.ip(&full);
        if out.trim().is_empty() {
            return Vec::new();
        }
        match serde_json::from_str(&out) {
            Ok(Value::Array(items)) => items,
            other => panic!("ip {full:?}: not a JSON array: {other:?}\n{out}"),
        }
    }

    /// `ip -j link show DEV` of one link.
    pub fn link(&self, dev: &str) -> Value {
        self.ip_json(&["link", "show", "dev", dev]).into_iter().next().expect("link listed")
    }
}

impl Deref for TestNetns {
    type Target = netns::Netns;

    fn deref(&self) -> &netns::Netns {
        &self.0
    }
}
