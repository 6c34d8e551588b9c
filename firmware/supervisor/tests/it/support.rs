//! Shared fixtures: a network namespace of the test's own (the kit's, deleted on drop, also
//! when the test fails) and its kernel state as text to compare.

use std::ops::Deref;

use routerd_test_kit::netns;

/// A network namespace `rds-<tag>-<pid>-<counter>` with its loopback up. The kit's helpers
/// (`name`, `ip`, `nft`, `veth_to`, …) are reached through `Deref`.
pub struct Netns(netns::Netns);

impl Netns {
    /// Creates it. Panics with "needs root" when not root, and when `ip netns add` fails.
    pub fn new(tag: &str) -> Self {
        Self(netns::Netns::new(&format!("rds-{tag}")))
    }

    /// Addresses, routes, rules, the nft ruleset and `ip_forward`, as text to compare.
    pub fn state(&self) -> String {
        let mut s = String::new();
        for args in [&["-j", "addr"][..], &["-j", "route", "show", "table", "all"], &["-j", "rule"]]
        {
            s.push_str(&self.ip(args));
        }
        s.push_str(&self.nft(&["list", "ruleset"]));
        s.push_str(&self.exec(&["cat", "/proc/sys/net/ipv4/ip_forward"]));
        s
    }
}

impl Deref for Netns {
    type Target = netns::Netns;

    fn deref(&self) -> &netns::Netns {
        &self.0
    }
}
