//! A network namespace of the test's own: created with `ip netns add` under a name no other
//! test (of this process or another) uses, deleted with `ip netns del` on drop, also when the
//! test panics. Set-up and read-back go through `ip` and `nft`, independently of the code
//! under test.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::command::{require_root, run, succeeds};

/// Namespaces made by this process so far: the last part of each name.
static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Temporary names of the far ends [`Netns::veth_to`] moves (unique within the process).
static VETH_COUNTER: AtomicU32 = AtomicU32::new(0);

/// A named network namespace `<prefix>-<pid>-<counter>` with its loopback up; deleted on drop.
///
/// Every method that must succeed panics with the command's stderr when it does not.
#[derive(Debug)]
pub struct Netns {
    name: String,
}

impl Netns {
    /// Creates namespace `<prefix>-<pid>-<counter>` (`rdt-4242-0`) and brings its loopback up.
    /// Keep `prefix` short and free of `/`; it names the crate or fixture (`rdt`, `rde-r`).
    ///
    /// Panics with "needs root" when not run as root, and when `ip netns add` fails.
    pub fn new(prefix: &str) -> Self {
        require_root();
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let name = format!("{prefix}-{}-{n}", std::process::id());
        run("ip", &["netns", "add", &name]);
        let ns = Self { name };
        ns.ip(&["link", "set", "lo", "up"]);
        ns
    }

    /// The namespace's name, as `ip -n` and `ip netns exec` take it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The namespace's bind mount, `/run/netns/NAME` (what `NetworkNamespacePath=` names).
    pub fn path(&self) -> PathBuf {
        PathBuf::from("/run/netns").join(&self.name)
    }

    /// Runs `ip -n NAME ARGS…`; returns its stdout. Panics with stderr when it fails.
    pub fn ip(&self, args: &[&str]) -> String {
        run("ip", &self.ip_args(args))
    }

    /// Whether `ip -n NAME ARGS…` succeeds (`link show dev X`: whether X exists).
    pub fn ip_ok(&self, args: &[&str]) -> bool {
        succeeds("ip", &self.ip_args(args))
    }

    /// Runs `CMD…` inside the namespace (`ip netns exec NAME CMD…`); returns its stdout.
    /// Panics with stderr when it fails.
    pub fn exec(&self, cmd: &[&str]) -> String {
        run("ip", &self.exec_args(cmd))
    }

    /// Whether `CMD…` inside the namespace exits 0 (a ping that must or must not get through).
    pub fn exec_ok(&self, cmd: &[&str]) -> bool {
        succeeds("ip", &self.exec_args(cmd))
    }

    /// A [`Command`] that runs `program` inside the namespace (`ip netns exec NAME program`),
    /// for the caller to add arguments and stdio to and to spawn (a resolver, a DHCP client) or
    /// to run for its output.
    pub fn command(&self, program: &str) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.name, program]);
        command
    }

    /// Runs `nft ARGS…` inside the namespace; returns its stdout. Panics with stderr when it
    /// fails.
    pub fn nft(&self, args: &[&str]) -> String {
        let mut cmd = vec!["nft"];
        cmd.extend_from_slice(args);
        self.exec(&cmd)
    }

    /// Whether `nft ARGS…` succeeds inside the namespace (`list table inet t`: whether the table
    /// exists).
    pub fn nft_ok(&self, args: &[&str]) -> bool {
        let mut cmd = vec!["nft"];
        cmd.extend_from_slice(args);
        self.exec_ok(&cmd)
    }

    /// Whether the namespace has a link named `ifname`.
    pub fn has_link(&self, ifname: &str) -> bool {
        self.ip_ok(&["link", "show", "dev", ifname])
    }

    /// Creates a veth pair `a` ↔ `b` inside the namespace, both ends down.
    pub fn add_veth(&self, a: &str, b: &str) {
        self.ip(&["link", "add", a, "type", "veth", "peer", "name", b]);
    }

    /// Creates a veth pair `a` ↔ `b` inside the namespace, brings both ends up and puts
    /// `address` (CIDR, `10.0.0.1/24`) on `a`.
    pub fn add_veth_with_address(&self, a: &str, b: &str, address: &str) {
        self.add_veth(a, b);
        self.ip(&["link", "set", a, "up"]);
        self.ip(&["link", "set", b, "up"]);
        self.ip(&["address", "add", address, "dev", a]);
    }

    /// Cables this namespace to `peer`: a veth pair with end `here` in this namespace and end
    /// `there` in `peer`, both down. Nothing is made in the test process's own namespace.
    ///
    /// The pair is made here and its far end moved (keeping its interface index, renamed on the
    /// way), so the two ends' indexes differ: a veth whose index equals its peer's (what making
    /// the far end directly in a fresh `peer` gives) has its carrier changes applied by the
    /// kernel's link watch up to a second late, and its `operstate` lags behind its flags.
    pub fn veth_to(&self, here: &str, peer: &Netns, there: &str) {
        let far = format!("rdk-veth{}", VETH_COUNTER.fetch_add(1, Ordering::SeqCst));
        self.ip(&["link", "add", here, "type", "veth", "peer", "name", &far]);
        self.ip(&["link", "set", &far, "netns", &peer.name, "name", there]);
    }

    fn ip_args<'a>(&'a self, args: &[&'a str]) -> Vec<&'a str> {
        let mut full = vec!["-n", self.name.as_str()];
        full.extend_from_slice(args);
        full
    }

    fn exec_args<'a>(&'a self, cmd: &[&'a str]) -> Vec<&'a str> {
        let mut full = vec!["netns", "exec", self.name.as_str()];
        full.extend_from_slice(cmd);
        full
    }
}

impl Drop for Netns {
    /// Deletes the namespace; panics when that fails, unless the test is already panicking.
    fn drop(&mut self) {
        let status = Command::new("ip").args(["netns", "del", &self.name]).status();
        if !matches!(status, Ok(s) if s.success()) && !std::thread::panicking() {
            panic!("could not delete namespace {}: {status:?}", self.name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_is_unique_cabled_and_gone_after_drop_also_on_a_panic() {
        let (a, b) = (Netns::new("rdk"), Netns::new("rdk"));
        assert_ne!(a.name(), b.name());
        assert!(a.name().starts_with(&format!("rdk-{}-", std::process::id())), "{}", a.name());
        assert!(a.path().exists());
        a.veth_to("x0", &b, "y0");
        assert!(a.has_link("x0") && b.has_link("y0") && !a.has_link("y0"));
        assert!(a.ip(&["link", "show", "lo"]).contains("UP"), "loopback up");
        assert!(a.nft_ok(&["list", "ruleset"]) && !a.nft_ok(&["list", "table", "ip", "none"]));
        let path = a.path();
        drop(a);
        assert!(!path.exists(), "deleted on drop");

        let inside = std::panic::catch_unwind(|| {
            let ns = Netns::new("rdk");
            let path = ns.path();
            std::panic::panic_any(path);
        });
        let path = inside.expect_err("panicked").downcast::<PathBuf>().expect("the path");
        assert!(!path.exists(), "deleted while the test panicked: {}", path.display());
    }
}
