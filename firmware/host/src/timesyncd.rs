//! systemd-timesyncd backend (`applyWith: timesyncd`) for `timesyncd.config` and
//! `timesyncd.servers`, over a drop-in file and D-Bus (timesyncd.conf(5),
//! org.freedesktop.timesync1(5)).
//!
//! routerd keeps one drop-in, [`Target::timesyncd_dropin`], with one block per `NTPClient`:
//!
//! ```text
//! [Time]
//! NTP=
//! # routerd block ntp
//! NTP=ntp.example.net 192.0.2.123
//! # routerd end
//! ```
//!
//! The empty `NTP=` before the blocks resets the list, so `timesyncd.conf` and the drop-ins
//! sorted before routerd's give way; timesyncd merges the blocks' `NTP=` lines in file order.
//! timesyncd reads its configuration only when it starts, so every change restarts
//! `systemd-timesyncd.service` through systemd (`RestartUnit`: `managed: true` means routerd
//! keeps time synchronised, so a stopped timesyncd is started) and waits until timesyncd reports
//! the block's servers in `SystemNTPServers`; when it does not, the file is restored and the
//! change fails. Removing the last block removes the file, and timesyncd goes back to its own
//! configuration (a removed block is a ledger-owned part of routerd's own file, so orphan
//! cleanup may remove it, as seed 000 allows for blocks).
//!
//! `timesyncd.servers` (`system`) is what timesyncd reports, for `NTPClient`s routerd only
//! observes (`managed: false`); it cannot be changed through this backend.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use zbus::proxy::CacheProperties;

use crate::artifact::{
    Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, TimesyncServersSpec, TimesyncdSpec,
};
use crate::backend::Backend;
use crate::bus::SystemBus;
use crate::error::HostError;
use crate::file::{Markers, write_or_remove};
use crate::systemd::{Job, Systemd, service};
use crate::target::Target;

/// The `applyWith` name of this backend.
const APPLY_WITH: crate::kinds::ApplyWith = crate::kinds::ApplyWith::Timesyncd;

/// timesyncd's bus name.
const BUS_NAME: &str = "org.freedesktop.timesync1";

/// timesyncd's unit.
pub const UNIT: &str = "systemd-timesyncd.service";

/// The name of the one `timesyncd.servers` artifact.
pub const SYSTEM: &str = "system";

/// How long timesyncd may take after a restart to report the new servers. It reads the
/// configuration before it takes its bus name; this covers a slow start on a loaded router.
const START_DEADLINE: Duration = Duration::from_secs(15);

const MARKERS: Markers = Markers { begin: "# routerd block ", end: "# routerd end" };

/// `org.freedesktop.timesync1.Manager` (private: zbus generates items without docs).
mod proxy {
    #[zbus::proxy(
        interface = "org.freedesktop.timesync1.Manager",
        default_service = "org.freedesktop.timesync1",
        default_path = "/org/freedesktop/timesync1"
    )]
    pub(super) trait Manager {
        /// `SystemNTPServers` (as): the servers of timesyncd.conf and its drop-ins, as read
        /// when timesyncd started.
        #[zbus(property, name = "SystemNTPServers")]
        fn system_ntp_servers(&self) -> zbus::Result<Vec<String>>;
    }
}

/// routerd's timesyncd drop-in for one target, applied by restarting timesyncd through systemd.
pub struct TimesyncdBackend {
    path: PathBuf,
    bus: Arc<SystemBus>,
    systemd: Arc<Systemd>,
    /// One change at a time: each is a read-modify-write of the file and a restart.
    lock: tokio::sync::Mutex<()>,
}

impl TimesyncdBackend {
    /// The drop-in of `target`, with timesyncd on `bus` restarted through `systemd`.
    pub fn new(target: &Target, bus: Arc<SystemBus>, systemd: Arc<Systemd>) -> Self {
        Self { path: target.timesyncd_dropin(), bus, systemd, lock: tokio::sync::Mutex::new(()) }
    }

    /// The servers timesyncd reports, `None` when it is not on the bus.
    async fn system_servers(&self, key: &ArtifactKey) -> Result<Option<Vec<String>>, HostError> {
        // Asked rather than activated: timesyncd is not bus-activated, and a stopped one is
        // reported as such.
        match self.bus.has_owner(BUS_NAME).await {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(e) => return Err(e),
        }
        let p = proxy::ManagerProxy::builder(self.bus.conn().await?)
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(|e| HostError::Bus(e.to_string()))?;
        match p.system_ntp_servers().await {
            Ok(s) => Ok(Some(s)),
            // Gone between the two calls (a restart): not running, for this look.
            Err(zbus::Error::MethodError(..)) => Ok(None),
            Err(e) => Err(service(key, "read SystemNTPServers", e)),
        }
    }

    /// The drop-in's text, `None` when the file does not exist.
    fn read(&self) -> Result<Option<String>, HostError> {
        match std::fs::read_to_string(&self.path) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(source) => Err(HostError::File { path: self.path.clone(), source }),
        }
    }

    async fn list(
        &self,
        kind: ArtifactKind,
        wanted: &[ArtifactKey],
    ) -> Result<Vec<Artifact>, HostError> {
        let key = ArtifactKey::new(kind, String::new());
        match kind {
            ArtifactKind::TimesyncdConfig => {
                let Some(text) = self.read()? else { return Ok(Vec::new()) };
                let blocks = parse(&text);
                if blocks.is_empty() {
                    return Ok(Vec::new());
                }
                // No bus (a router without timesyncd): every block is without effect, which
                // the plan shows as drift rather than failing the inventory.
                let running = match self.system_servers(&key).await {
                    Ok(s) => s,
                    Err(HostError::Bus(_)) => None,
                    Err(e) => return Err(e),
                };
                Ok(blocks
                    .into_iter()
                    .map(|(name, servers)| {
                        let effective =
                            running.as_ref().is_some_and(|r| servers.iter().all(|s| r.contains(s)));
                        Artifact::new(ArtifactSpec::Timesyncd(TimesyncdSpec {
                            name,
                            servers,
                            effective,
                        }))
                    })
                    .collect())
            }
            ArtifactKind::TimesyncdServers if wanted.iter().any(|k| k.name == SYSTEM) => {
                // Unreachable timesyncd: nothing observed (the resource shows it absent).
                match self.system_servers(&key).await {
                    Ok(Some(servers)) => Ok(vec![Artifact::new(ArtifactSpec::TimesyncServers(
                        TimesyncServersSpec { servers },
                    ))]),
                    Ok(None) | Err(HostError::Bus(_) | HostError::Service { .. }) => Ok(Vec::new()),
                    Err(e) => Err(e),
                }
            }
            _ => Ok(Vec::new()),
        }
    }

    /// Sets (`Some`) or removes one block, restarts timesyncd and, for a set, waits until it
    /// uses the block's servers; a set timesyncd does not take restores the file.
    async fn change(
        &self,
        key: &ArtifactKey,
        name: &str,
        servers: Option<&[String]>,
    ) -> Result<(), HostError> {
        let _guard = self.lock.lock().await;
        let before = self.read()?;
        let mut blocks = before.as_deref().map(parse).unwrap_or_default();
        match servers {
            Some(s) => blocks.insert(name.to_owned(), s.to_vec()),
            None => blocks.remove(name),
        };
        let after = (!blocks.is_empty()).then(|| compose(&blocks));
        write_or_remove(&self.path, after.as_deref())?;
        let Some(servers) = servers else {
            // Back to timesyncd's own configuration, if it runs; done once it is back on the
            // bus, so the next look sees it running.
            self.systemd.run(key, UNIT, Job::TryRestart).await?;
            if self.systemd.active_state(key, UNIT).await? == "active" {
                self.wait_servers(key, &[]).await?;
            }
            return Ok(());
        };
        let applied = match self.systemd.run(key, UNIT, Job::Restart).await {
            Ok(()) => self.wait_servers(key, servers).await,
            Err(e) => Err(e),
        };
        if applied.is_err() {
            write_or_remove(&self.path, before.as_deref())?;
            let _ = self.systemd.run(key, UNIT, Job::TryRestart).await;
        }
        applied
    }

    /// Waits until timesyncd is on the bus and reports every one of `servers`.
    async fn wait_servers(&self, key: &ArtifactKey, servers: &[String]) -> Result<(), HostError> {
        let deadline = Instant::now() + START_DEADLINE;
        let settled = Instant::now() + Duration::from_secs(1);
        loop {
            let got = self.system_servers(key).await?;
            if let Some(got) = &got
                && servers.iter().all(|s| got.contains(s))
            {
                return Ok(());
            }
            // timesyncd reads its configuration once, before it takes its bus name: on the bus
            // without the servers a moment after the restart (the old process's name may
            // linger until the bus sees it gone), it will not take them.
            if (got.is_some() && Instant::now() >= settled) || Instant::now() >= deadline {
                let message = match got {
                    None => format!(
                        "systemd-timesyncd is not on the bus {}s after its restart \
                         (journalctl -u {UNIT} tells why)",
                        START_DEADLINE.as_secs()
                    ),
                    Some(got) => format!(
                        "systemd-timesyncd uses {got:?}, not {servers:?}: a drop-in sorted after \
                         {} resets NTP=",
                        file_name(&self.path)
                    ),
                };
                return Err(HostError::Service {
                    key: key.clone(),
                    op: "restart timesyncd",
                    message,
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The blocks of the drop-in: name → servers of its `NTP=` lines, in order. Other lines in a
/// block (none that routerd writes) are dropped at the next change.
fn parse(text: &str) -> BTreeMap<String, Vec<String>> {
    MARKERS
        .parse(text)
        .into_iter()
        .map(|(name, lines)| {
            let servers = lines
                .iter()
                .filter_map(|l| l.trim().strip_prefix("NTP="))
                .flat_map(str::split_whitespace)
                .map(str::to_owned)
                .collect();
            (name, servers)
        })
        .collect()
}

/// The whole drop-in with `blocks` (at least one).
fn compose(blocks: &BTreeMap<String, Vec<String>>) -> String {
    let mut s = String::from(
        "# routerd's systemd-timesyncd drop-in: the NTPClient resources of router.yaml.\n\
         # routerd rewrites this file on every change: edit router.yaml, not this file.\n\
         [Time]\n\
         # An empty NTP= drops the servers set before this file: routerd's are the ones used.\n\
         NTP=\n",
    );
    for (name, servers) in blocks {
        MARKERS.push(&mut s, name, &[format!("NTP={}", servers.join(" "))]);
    }
    s
}

/// The block of a `timesyncd.config` artifact, checked: a name or server that would break the
/// file's lines is refused.
fn block(a: &Artifact) -> Result<&TimesyncdSpec, HostError> {
    let ArtifactSpec::Timesyncd(t) = &a.spec else {
        return Err(match a.key.kind {
            ArtifactKind::TimesyncdServers => HostError::Invalid {
                key: a.key.clone(),
                message: "timesyncd's servers are only observed (NTPClient managed: false)".into(),
            },
            _ => HostError::WrongBackend { key: a.key.clone(), backend: APPLY_WITH },
        });
    };
    let bad = |message: String| Err(HostError::Invalid { key: a.key.clone(), message });
    if t.name.is_empty() || !MARKERS.fits(&t.name) || t.name.contains(['\r', '\n']) {
        return bad(format!("{:?} cannot name a block of the drop-in", t.name));
    }
    if let Some(s) = t.servers.iter().find(|s| s.is_empty() || s.contains(char::is_whitespace)) {
        return bad(format!("{s:?} is not an NTP server name (NTP= separates names by spaces)"));
    }
    Ok(t)
}

impl Backend for TimesyncdBackend {
    fn apply_with(&self) -> crate::kinds::ApplyWith {
        APPLY_WITH
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        &[ArtifactKind::TimesyncdConfig, ArtifactKind::TimesyncdServers]
    }

    /// `timesyncd.servers` is read only when an intent names it; blocks are always listed.
    fn observes_wanted_only(&self) -> bool {
        true
    }

    fn observe<'a>(
        &'a self,
        kind: ArtifactKind,
        wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        Box::pin(self.list(kind, wanted))
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            let t = block(desired)?;
            self.change(&desired.key, &t.name, Some(&t.servers)).await
        })
    }

    fn modify<'a>(
        &'a self,
        _observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        self.create(desired)
    }

    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            let t = block(observed)?;
            self.change(&observed.key, &t.name, None).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(list: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
        list.iter()
            .map(|(n, s)| (n.to_string(), s.iter().map(|x| x.to_string()).collect()))
            .collect()
    }

    #[test]
    fn the_drop_in_resets_ntp_and_round_trips_its_blocks() {
        let b = blocks(&[("wan", &["192.0.2.123", "ntp.example.net"]), ("fallback", &[])]);
        let text = compose(&b);
        let reset = text.find("\nNTP=\n").expect("a reset before the blocks");
        assert!(text.starts_with("# routerd") && text.contains("[Time]\n"), "{text}");
        assert!(reset < text.find("# routerd block").unwrap_or(0), "{text}");
        assert!(text.contains("# routerd block wan\nNTP=192.0.2.123 ntp.example.net\n"), "{text}");
        assert_eq!(parse(&text), b);
        assert!(parse("[Time]\nNTP=a\n").is_empty(), "lines outside blocks are no block's");
    }

    #[test]
    fn names_and_servers_that_would_break_the_file_are_refused() {
        let a = |name: &str, servers: &[&str]| {
            Artifact::new(ArtifactSpec::Timesyncd(TimesyncdSpec {
                name: name.into(),
                servers: servers.iter().map(|s| s.to_string()).collect(),
                effective: true,
            }))
        };
        assert!(block(&a("ntp", &["a.example", "192.0.2.1"])).is_ok());
        assert!(matches!(block(&a("ntp", &["a b"])), Err(HostError::Invalid { .. })));
        assert!(matches!(block(&a("ntp", &[""])), Err(HostError::Invalid { .. })));
        assert!(matches!(block(&a("x\n[Time]", &[])), Err(HostError::Invalid { .. })));
        let observed_only =
            Artifact::new(ArtifactSpec::TimesyncServers(TimesyncServersSpec { servers: vec![] }));
        assert!(matches!(block(&observed_only), Err(HostError::Invalid { .. })));
    }
}
