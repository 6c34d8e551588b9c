//! `linux.sysctl`: keys under `/proc/sys`. Configurator and inventory: [`crate::sysctl`].

use serde::{Deserialize, Serialize};

use super::orphans::{Kept, OrphanRule};
use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// `linux.sysctl`: a key under `/proc/sys` of the target network namespace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SysctlSpec {
    /// Dotted key (`net.ipv4.conf.wan.rp_filter`); `/` is not accepted.
    pub key: String,
    /// Value as written to the file; compared with runs of whitespace folded.
    pub value: String,
}

impl ArtifactType for SysctlSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::Sysctl, self.key.clone())
    }

    observed_as_self!(Sysctl);

    /// The value, with runs of whitespace folded (the kernel prints tabs where one writes
    /// spaces: `net.ipv4.tcp_rmem`).
    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        if fold_ws(&self.value) != fold_ws(&o.value) {
            diffs.push("value", &self.value, &o.value);
        }
    }
}

fn fold_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Why global host state (sysctls, the hostname) is never deleted as an orphan.
pub const GLOBAL_STATE: Kept = Kept {
    reason: "global host state is reconciled, never deleted",
    remediation: "set the value you want with a Sysctl or Hostname resource",
};

/// Orphans (ADR 0002): global host state is reconciled, never deleted.
pub const ORPHANS: OrphanRule = OrphanRule::Never(GLOBAL_STATE);
