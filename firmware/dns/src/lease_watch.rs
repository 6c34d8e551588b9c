//! The lease watcher: when the names routerd's dnsmasq's leases give change (a lease granted,
//! released or expired), it asks the daemon for a reconcile, so a `DNSZone`'s `dhcpDerived`
//! names follow the leases within about a second instead of at the next resync. The reconcile
//! reads the file again (the session, ADR 0008); a notice only says that something changed.
//!
//! It polls the file's metadata every [`POLL`] rather than asking inotify: the file, and the
//! directory dnsmasq keeps it in, may not exist yet when the daemon starts (an inotify watch
//! needs an existing path, so it would have to follow the directories as they appear), dnsmasq
//! rewrites it in place, and a lease that runs out needs a timer anyway. One `stat` a second
//! is nothing beside a reconcile.
//!
//! A change that cannot change a name (a renewal, which only moves a lease's end; a client
//! without a host name) asks for nothing: a router whose config names no lease pays only the
//! poll. A renewal that makes a lease outlive another one of the same name shows at the next
//! resync, or when the other one runs out.

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use futures::StreamExt;
use routerd_engine::registry::Notices;
use routerd_host::dnsmasq::leases::{self, DhcpLease};

/// Time between two looks at the lease file.
pub const POLL: Duration = Duration::from_secs(1);

/// The file as a poll sees it: length, modification time and inode; `None` while it does not
/// exist (or cannot be read).
type Stamp = Option<(u64, SystemTime, u64)>;

/// What of the leases can change a name: each live lease with a host name, as `(address,
/// host name)`, ignoring when it ends.
type Named = BTreeSet<(IpAddr, String)>;

/// What the watcher knows between two polls.
struct Watch {
    path: PathBuf,
    stamp: Stamp,
    named: Named,
    /// The earliest end of a live named lease, seconds since the Unix epoch.
    next_end: Option<u64>,
}

/// Watches the lease file at `path` (routerd's dnsmasq's:
/// [`routerd_host::Target::dnsmasq_leases`]), yielding `DHCP leases changed in <path>` when
/// the named leases differ from the last look, and `a DHCP lease in <path> ran out` when one
/// of them ends. What the file holds when the watcher starts is the baseline: the daemon
/// reconciles at start anyway. The stream polls on the tokio runtime that drives it.
pub fn watch(path: PathBuf) -> Notices {
    let stamp = stamp_of(&path);
    let (named, next_end) = named_leases(&path, now());
    let state = Watch { path, stamp, named, next_end };
    futures::stream::unfold(state, |mut w| async move {
        loop {
            tokio::time::sleep(POLL).await;
            if let Some(notice) = w.poll(now()) {
                return Some((notice, w));
            }
        }
    })
    .boxed()
}

impl Watch {
    /// One look at the file at `now` (seconds since the Unix epoch): the notice to give, if any.
    fn poll(&mut self, now: u64) -> Option<String> {
        let stamp = stamp_of(&self.path);
        let rewritten = stamp != self.stamp;
        let ran_out = self.next_end.is_some_and(|end| now > end);
        if !rewritten && !ran_out {
            return None;
        }
        self.stamp = stamp;
        let (named, next_end) = named_leases(&self.path, now);
        self.next_end = next_end;
        if named == self.named {
            return None;
        }
        self.named = named;
        let path = self.path.display();
        Some(if rewritten {
            format!("DHCP leases changed in {path}")
        } else {
            format!("a DHCP lease in {path} ran out")
        })
    }
}

/// The named live leases of the file at `path` at `now`, and the earliest end among them.
fn named_leases(path: &Path, now: u64) -> (Named, Option<u64>) {
    let read = leases::read(path).unwrap_or_default();
    let live = || read.iter().filter(|l| l.is_live(now) && l.hostname.is_some() && !l.temporary);
    let named = live().filter_map(|l| Some((l.address, l.hostname.clone()?))).collect();
    let next_end = live().filter_map(|l: &DhcpLease| l.expiry).min();
    (named, next_end)
}

fn stamp_of(path: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?, meta.ino()))
}

/// Seconds since the Unix epoch.
fn now() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch_of(path: &Path, now: u64) -> Watch {
        let (named, next_end) = named_leases(path, now);
        Watch { path: path.to_owned(), stamp: stamp_of(path), named, next_end }
    }

    #[test]
    fn grants_releases_and_ends_are_noticed_and_renewals_are_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("dnsmasq.leases");
        let mut w = watch_of(&path, 1000);
        assert_eq!(w.poll(1000), None, "no file, nothing changed");

        std::fs::write(&path, "2000 aa 192.168.50.100 laptop *\n").expect("granted");
        assert!(w.poll(1000).is_some_and(|n| n.starts_with("DHCP leases changed")));
        assert_eq!(w.poll(1000), None);

        // A renewal moves the end only; a client without a name gives none.
        std::fs::write(&path, "3000 aa 192.168.50.100 laptop *\n4000 bb 192.168.50.101 * *\n")
            .expect("renewed");
        assert_eq!(w.poll(1000), None);

        // The lease runs out without dnsmasq rewriting the file.
        assert_eq!(w.poll(3000), None, "live through its last second");
        assert!(w.poll(3001).is_some_and(|n| n.contains("ran out")), "{:?}", w.next_end);
        assert_eq!(w.poll(3002), None);

        std::fs::write(&path, "9000 aa 192.168.50.100 laptop *\n").expect("granted again");
        assert!(w.poll(3002).is_some());
        std::fs::remove_file(&path).expect("released");
        assert!(w.poll(3002).is_some_and(|n| n.starts_with("DHCP leases changed")));
    }
}
