//! Shared fixtures: a network namespace of the test's own, deleted on drop (also when the
//! test fails).

use std::process::Command;

/// A network namespace `rds-<pid>-<tag>`.
pub struct Netns(pub String);

impl Netns {
    /// Creates it (needs root).
    pub fn new(tag: &str) -> Self {
        let name = format!("rds-{}-{tag}", std::process::id());
        let ok = Command::new("ip").args(["netns", "add", &name]).status().map(|s| s.success());
        assert_eq!(ok.ok(), Some(true), "needs root: ip netns add {name}");
        Self(name)
    }

    /// `ip -n NAME ARGS…`, which must succeed; its stdout.
    pub fn ip(&self, args: &[&str]) -> String {
        let out = Command::new("ip").arg("-n").arg(&self.0).args(args).output().expect("ip");
        assert!(out.status.success(), "ip {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Addresses, routes, rules, the nft ruleset and `ip_forward`, as text to compare.
    pub fn state(&self) -> String {
        let mut s = String::new();
        for args in [&["-j", "addr"][..], &["-j", "route", "show", "table", "all"], &["-j", "rule"]]
        {
            s.push_str(&self.ip(args));
        }
        let nft =
            Command::new("ip").args(["netns", "exec", &self.0, "nft", "list", "ruleset"]).output();
        s.push_str(&String::from_utf8_lossy(&nft.expect("nft").stdout));
        let fwd = Command::new("ip")
            .args(["netns", "exec", &self.0, "cat", "/proc/sys/net/ipv4/ip_forward"])
            .output()
            .expect("cat");
        s.push_str(&String::from_utf8_lossy(&fwd.stdout));
        s
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}
