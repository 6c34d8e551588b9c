//! Where a session's host state lives: the network namespace of the kernel backends and the
//! filesystem root under which the file-based configurators (systemd units, dnsmasq) keep
//! their files.

use std::path::{Path, PathBuf};

/// The network namespace and filesystem root one engine session works on.
///
/// `root` is `/` on a router. Tests and several routers on one host (one per namespace) give
/// each its own root, so unit files and dnsmasq configurations do not collide; the paths
/// written into unit files are then the rooted ones, because the services run on the same
/// filesystem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// `/run/netns/NAME` name; `None`: the process's own namespace.
    pub netns: Option<String>,
    /// Filesystem root of the file-based configurators (absolute).
    pub root: PathBuf,
}

impl Default for Target {
    fn default() -> Self {
        Self { netns: None, root: PathBuf::from("/") }
    }
}

impl Target {
    /// A target in `netns` (or this process's namespace) with files under `root` (default `/`).
    pub fn new(netns: Option<String>, root: Option<PathBuf>) -> Self {
        Self { netns, root: root.unwrap_or_else(|| PathBuf::from("/")) }
    }

    /// `abs` (an absolute path on a router) under this target's root.
    pub fn path(&self, abs: &str) -> PathBuf {
        self.root.join(abs.trim_start_matches('/'))
    }

    /// Where routerd writes its units: `/etc/systemd/system`, the administrator's unit
    /// directory (systemd.unit(5), "Unit File Load Path").
    pub fn unit_dir(&self) -> PathBuf {
        self.path("/etc/systemd/system")
    }

    /// Where routerd writes its `.network` files: `/etc/systemd/network`, the administrator's
    /// directory of systemd-networkd (systemd.network(5)).
    pub fn network_dir(&self) -> PathBuf {
        self.path("/etc/systemd/network")
    }

    /// routerd's dnsmasq directory (configuration, leases, pid file): on the data partition,
    /// so leases survive reboots and updates.
    pub fn dnsmasq_dir(&self) -> PathBuf {
        self.path("/var/lib/routerd/dnsmasq")
    }

    /// The lease file of routerd's dnsmasq (`--dhcp-leasefile`), in [`Target::dnsmasq_dir`].
    pub fn dnsmasq_leases(&self) -> PathBuf {
        self.dnsmasq_dir().join("dnsmasq.leases")
    }

    /// routerd's dnsmasq configuration file.
    pub fn dnsmasq_conf(&self) -> PathBuf {
        self.dnsmasq_dir().join("dnsmasq.conf")
    }

    /// routerd's systemd-timesyncd drop-in (timesyncd.conf(5)): `90-` sorts it after the
    /// drop-ins packages ship, so its `NTP=` reset applies to theirs too.
    pub fn timesyncd_dropin(&self) -> PathBuf {
        self.path("/etc/systemd/timesyncd.conf.d/90-routerd.conf")
    }

    /// The namespace's bind mount (`/run/netns/NAME`), for `NetworkNamespacePath=` of units
    /// that must run inside it; `None` for the process's own namespace.
    pub fn netns_path(&self) -> Option<PathBuf> {
        self.netns.as_ref().map(|n| Path::new("/run/netns").join(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_below_the_root() {
        let t = Target::new(Some("lab".into()), Some("/tmp/r1".into()));
        assert_eq!(t.unit_dir(), Path::new("/tmp/r1/etc/systemd/system"));
        assert_eq!(t.dnsmasq_conf(), Path::new("/tmp/r1/var/lib/routerd/dnsmasq/dnsmasq.conf"));
        assert_eq!(t.dnsmasq_leases(), Path::new("/tmp/r1/var/lib/routerd/dnsmasq/dnsmasq.leases"));
        assert_eq!(t.netns_path().as_deref(), Some(Path::new("/run/netns/lab")));
        assert_eq!(Target::default().unit_dir(), Path::new("/etc/systemd/system"));
    }
}
