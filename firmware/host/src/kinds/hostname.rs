//! `linux.hostname`: the system's hostname. Configurator and inventory: [`crate::hostnamed`].

use serde::{Deserialize, Serialize};

use super::orphans::OrphanRule;
use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// `linux.hostname`, always named `system`: the system's hostname, as systemd-hostnamed keeps
/// it (org.freedesktop.hostname1(5)). Reconciled, never deleted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemHostnameSpec {
    /// The static hostname (`/etc/hostname`, `StaticHostname`).
    pub hostname: String,
    /// The kernel's hostname (`uname -n`, `Hostname`); desired: the static one.
    pub kernel: String,
}

impl ArtifactType for SystemHostnameSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::Hostname, "system")
    }

    observed_as_self!(Hostname);

    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare("hostname", &self.hostname, &o.hostname);
        diffs.compare("kernel", &self.kernel, &o.kernel);
    }
}

/// Orphans (ADR 0002): global host state is reconciled, never deleted.
pub const ORPHANS: OrphanRule = OrphanRule::Never(super::sysctl::GLOBAL_STATE);
