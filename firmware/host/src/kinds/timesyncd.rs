//! `timesyncd.config` (blocks of routerd's drop-in) and `timesyncd.servers` (the servers
//! systemd-timesyncd uses, observed only). Configurator and inventory: [`crate::timesyncd`].

use serde::{Deserialize, Serialize};

use super::orphans::OrphanRule;
use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// `timesyncd.config`, named after its `NTPClient` resource: one block of routerd's drop-in
/// `/etc/systemd/timesyncd.conf.d/90-routerd.conf` (timesyncd.conf(5)), whose `NTP=` line lists
/// the resource's servers. The drop-in resets `NTP=` before routerd's blocks, so the servers of
/// `timesyncd.conf` and earlier drop-ins give way to routerd's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimesyncdSpec {
    /// The NTPClient resource's name, the artifact's name.
    pub name: String,
    /// NTP server host names or addresses, in order; empty: timesyncd's fallback servers.
    pub servers: Vec<String>,
    /// Desired: timesyncd runs with these servers. Observed: it is on the bus and its
    /// `SystemNTPServers` (org.freedesktop.timesync1(5)) contains every one of them, so a
    /// timesyncd not restarted since the file changed, or stopped, shows as drift.
    pub effective: bool,
}

/// `timesyncd.servers`, always named `system`: the servers systemd-timesyncd reports in
/// `SystemNTPServers`, read for an `NTPClient` with `managed: false`, which routerd leaves to
/// the operator. Observed only; desired `servers` must all appear, in any order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimesyncServersSpec {
    /// Desired: the servers the config names. Observed: timesyncd's system servers.
    pub servers: Vec<String>,
}

impl ArtifactType for TimesyncdSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::TimesyncdConfig, self.name.clone())
    }

    observed_as_self!(Timesyncd);

    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare("servers", &self.servers, &o.servers);
        diffs.compare("effective", &self.effective, &o.effective);
    }

    fn in_routerd_namespace(&self) -> bool {
        // A block of routerd's own drop-in.
        true
    }
}

impl ArtifactType for TimesyncServersSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::TimesyncdServers, "system")
    }

    observed_as_self!(TimesyncServers);

    /// Every desired server must be used; timesyncd may use more than the config names (a
    /// drop-in of the operator's).
    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        if !self.servers.iter().all(|s| o.servers.contains(s)) {
            diffs.push("servers", &self.servers, &o.servers);
        }
    }
}

/// Orphans (ADR 0002): a block of routerd's drop-in, deleted when the ledger records it.
pub const ORPHANS: OrphanRule = OrphanRule::RecordedInNamespace {
    deleted: "block of routerd's timesyncd drop-in recorded in the ledger",
    unrecorded: None,
};
