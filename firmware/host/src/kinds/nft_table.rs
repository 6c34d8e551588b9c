//! `nft.table`: nftables tables, named `family/name`. The typed form is nftables' own IR
//! ([`NftTableSpec`], observed as [`NftTableState`]); configurator and inventory:
//! [`crate::nftables`].

use std::borrow::Cow;

use super::orphans::{Kept, OrphanRule};
use super::{ArtifactSpec, ArtifactType, Diffs};
use crate::artifact::{ArtifactKey, ArtifactKind};
use crate::nftables::ir::{NftTableSpec, NftTableState};

/// Prefix of nftables tables inside routerd's namespace (seed 000).
pub const ROUTERD_NFT_TABLE_PREFIX: &str = "routerd_";

impl ArtifactType for NftTableSpec {
    type Observed = NftTableState;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::NftTable, self.key_name())
    }

    fn observed(spec: &ArtifactSpec) -> Option<Cow<'_, NftTableState>> {
        NftTableState::observed(spec)
    }

    /// The kernel gives back a fingerprint, so the desired table is compared as the state it
    /// should leave.
    fn drift(&self, o: &NftTableState, diffs: &mut Diffs) {
        self.expected_state().drift(o, diffs);
    }

    fn in_routerd_namespace(&self) -> bool {
        self.name.starts_with(ROUTERD_NFT_TABLE_PREFIX)
    }
}

impl ArtifactType for NftTableState {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::NftTable, self.key_name())
    }

    /// The observed fingerprint, or a desired table's expected one.
    fn observed(spec: &ArtifactSpec) -> Option<Cow<'_, Self>> {
        match spec {
            ArtifactSpec::NftTableObserved(o) => Some(Cow::Borrowed(o)),
            ArtifactSpec::NftTable(d) => Some(Cow::Owned(d.expected_state())),
            _ => None,
        }
    }

    /// The comment, the chain names in order, then each chain's hook and rules.
    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare("comment", &self.comment, &o.comment);
        let names = |s: &Self| s.chains.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        if names(self) != names(o) {
            diffs.push("chains", &names(self), &names(o));
            return;
        }
        for (dc, oc) in self.chains.iter().zip(&o.chains) {
            diffs.compare(&format!("chains.{}.hook", dc.name), &dc.base, &oc.base);
            diffs.compare(&format!("chains.{}.rules", dc.name), &dc.rules, &oc.rules);
        }
    }

    fn in_routerd_namespace(&self) -> bool {
        self.name.starts_with(ROUTERD_NFT_TABLE_PREFIX)
    }
}

/// Orphans (ADR 0002): deleted only when it is a `routerd_*` table the ledger records.
pub const ORPHANS: OrphanRule = OrphanRule::RecordedInNamespace {
    deleted: "routerd_* table recorded in the ledger",
    unrecorded: Some(Kept {
        reason: "routerd_* table not recorded in the ledger",
        remediation: "delete it by hand if it is stale, or declare it in the config and run adopt --apply",
    }),
};
