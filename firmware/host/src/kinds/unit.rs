//! `systemd.service`: units routerd writes and runs. Configurator and inventory:
//! [`crate::systemd`].

use serde::{Deserialize, Serialize};

use super::orphans::OrphanRule;
use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// `systemd.service`: a unit file routerd writes into the unit directory, enabled, and (when
/// `active`) running. Seed 000: ledger-owned `routerd-*.service` units are orphan-cleaned
/// (stopped, disabled, file removed, manager reloaded).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnitSpec {
    /// Unit name with its suffix (`routerd-dnsmasq.service`); also the file name.
    pub unit: String,
    /// The unit file's whole text (systemd.unit(5)), compared byte for byte.
    pub content: String,
    /// Desired: the unit runs. Observed: its `ActiveState` is `active`, `activating` or
    /// `reloading` (org.freedesktop.systemd1(5)).
    pub active: bool,
}

impl ArtifactType for UnitSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::SystemdService, self.unit.clone())
    }

    observed_as_self!(Unit);

    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare("content", &self.content, &o.content);
        diffs.compare("active", &self.active, &o.active);
    }

    fn in_routerd_namespace(&self) -> bool {
        self.unit.starts_with("routerd-") && self.unit.ends_with(".service")
    }
}

/// Orphans (ADR 0002): deleted when the ledger records it.
pub const ORPHANS: OrphanRule =
    OrphanRule::Recorded { deleted: "recorded in the ledger", unrecorded: None };
