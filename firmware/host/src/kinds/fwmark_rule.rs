//! `linux.ipv4.fwmarkRule`: fwmark policy rules (`ip rule ... fwmark`). Configurator and
//! inventory: [`crate::netlink`]'s `rule.rs`.

use serde::{Deserialize, Serialize};

use super::orphans::{Kept, OrphanRule};
use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// The fwmark range routerd treats as its own namespace (seed 000, "Orphans").
pub const ROUTERD_FWMARK_RANGE: std::ops::RangeInclusive<u32> = 0x100..=0x1ff;

/// `linux.ipv4.fwmarkRule`: `ip rule add fwmark MARK/MASK lookup TABLE priority PRIORITY`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FwmarkRuleSpec {
    /// `FRA_FWMARK`.
    pub mark: u32,
    /// `FRA_FWMASK`; `0xffffffff` when the config gives none.
    pub mask: u32,
    /// `FRA_TABLE`.
    pub table: u32,
    /// `FRA_PRIORITY`, 1..=32765 (`ip rule` reserves 0, 32766, 32767).
    pub priority: u32,
}

impl FwmarkRuleSpec {
    /// The artifact name: `0x100` for an exact mark (mask `0xffffffff`, the only kind routerd
    /// writes), `0x150/0xff0` for a masked one, as `ip rule` prints them, so that a hand-made
    /// masked rule is never taken for routerd's rule of the same value.
    pub fn key_name(&self) -> String {
        if self.mask == u32::MAX {
            format!("{:#x}", self.mark)
        } else {
            format!("{:#x}/{:#x}", self.mark, self.mask)
        }
    }

    /// Whether every mark the rule matches lies in `range`, whose marks differ only in their
    /// low byte (as [`ROUTERD_FWMARK_RANGE`]'s do): the mask fixes every bit above the low byte
    /// and the value's are the range's.
    pub fn within(&self, range: &std::ops::RangeInclusive<u32>) -> bool {
        (self.mask | 0xff) == u32::MAX
            && range.contains(&(self.mark & !0xff))
            && range.contains(&(self.mark | 0xff))
    }
}

impl ArtifactType for FwmarkRuleSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::Ipv4FwmarkRule, self.key_name())
    }

    observed_as_self!(FwmarkRule);

    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare("mask", &self.mask, &o.mask);
        diffs.compare("table", &self.table, &o.table);
        diffs.compare("priority", &self.priority, &o.priority);
    }

    fn in_routerd_namespace(&self) -> bool {
        self.within(&ROUTERD_FWMARK_RANGE)
    }
}

/// Orphans (ADR 0002): deleted only when the ledger records it, whatever its range says.
pub const ORPHANS: OrphanRule = OrphanRule::Recorded {
    // Seed 000 lets the range alone prove a rule ours; this firmware has kept a ledger since
    // its first boot, so it needs the ledger here too (ADR 0002).
    deleted: "fwmark rule recorded in the ledger",
    unrecorded: Some(Kept {
        reason: "fwmark rule in routerd's range 0x100-0x1ff, not recorded in the ledger",
        remediation: "delete it by hand (ip rule del fwmark MARK) if it is stale, or declare it in the config and run adopt --apply",
    }),
};
