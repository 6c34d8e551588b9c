//! Ownership policy: which observed artifacts are inside a routerd namespace, which of those may
//! be deleted, and what the operator is told about the rest. Seed 000 "Orphans" and "Cleanup
//! Policy"; the choices it leaves open are in `docs/adr/0002-ownership-rules.md`. Each kind
//! states its rule in its module (`routerd_host::kinds::<kind>::ORPHANS`, named in the kind
//! table) and its namespace (`ArtifactType::in_routerd_namespace`); this module applies them
//! with the ledger's proof. Pure.

use routerd_host::Artifact;
use routerd_host::kinds::orphans::{Kept, NO_CLEANUP, OrphanRule, UNRECORDED};

/// Whether an observed artifact is inside one of routerd's namespaces or ranges (the weaker
/// orphan signal): fwmark `0x100-0x1ff`, nft tables `routerd_*`, routes and route tables with
/// routerd's protocol number, units `routerd-*.service`, sections of routerd's dnsmasq file,
/// DHCP client bindings in routerd's `.network` files, blocks of routerd's timesyncd drop-in.
pub fn in_routerd_namespace(artifact: &Artifact) -> bool {
    artifact.spec.in_routerd_namespace()
}

/// Verdict on an orphan: delete it, or report it and leave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cleanup {
    /// Ownership is proven as the cleanup policy requires: reconcile deletes it.
    Delete {
        /// Why deleting is allowed.
        reason: &'static str,
    },
    /// Left on the host, reported with a remediation.
    Keep {
        /// Why it is kept.
        reason: &'static str,
        /// What the operator can do.
        remediation: &'static str,
    },
}

impl From<Kept> for Cleanup {
    fn from(k: Kept) -> Self {
        Cleanup::Keep { reason: k.reason, remediation: k.remediation }
    }
}

/// Decides what happens to an artifact that no current resource emits, by its kind's rule
/// ([`routerd_host::ArtifactKind::orphans`]). `ledger_owned`: the ledger holds an `owned`
/// entry for it. `foreign_inside`: the host holds artifacts inside this one that the ledger
/// does not record (routes in a route table): such a container stays. Nothing is deleted
/// without the ledger's record except what only this process can own (log sinks).
pub fn cleanup(artifact: &Artifact, ledger_owned: bool, foreign_inside: bool) -> Cleanup {
    // What the rule leaves undecided.
    let default = if ledger_owned { NO_CLEANUP } else { UNRECORDED };
    match artifact.key.kind.orphans() {
        OrphanRule::Never(kept) => kept.into(),
        OrphanRule::Always(deleted) => Cleanup::Delete { reason: deleted },
        OrphanRule::Recorded { deleted, .. } if ledger_owned => Cleanup::Delete { reason: deleted },
        OrphanRule::Recorded { unrecorded, .. } => unrecorded.unwrap_or(UNRECORDED).into(),
        OrphanRule::RecordedInNamespace { deleted, unrecorded } => {
            match (in_routerd_namespace(artifact), ledger_owned) {
                (true, true) => Cleanup::Delete { reason: deleted },
                (true, false) => unrecorded.unwrap_or(UNRECORDED).into(),
                (false, _) => default.into(),
            }
        }
        OrphanRule::RecordedAndEmpty { holds_foreign, .. } if ledger_owned && foreign_inside => {
            holds_foreign.into()
        }
        OrphanRule::RecordedAndEmpty { deleted, .. } if ledger_owned => {
            Cleanup::Delete { reason: deleted }
        }
        OrphanRule::RecordedAndEmpty { .. } | OrphanRule::Default => default.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use routerd_host::ArtifactSpec;
    use routerd_host::artifact::{
        AddressSpec, EncapLimit, FwmarkRuleSpec, Ip6TunnelMode, Ip6TunnelSpec, LinkKind, LinkSpec,
        VlanProtocol,
    };
    use routerd_host::nftables::ir::{NftFamily, NftTableState};

    fn table(name: &str) -> Artifact {
        Artifact::new(ArtifactSpec::NftTableObserved(NftTableState {
            family: NftFamily::Inet,
            name: name.into(),
            comment: None,
            chains: vec![],
        }))
    }

    #[test]
    fn a_kind_without_cleanup_is_kept_whatever_the_ledger_says() {
        let ppp = Artifact::new(ArtifactSpec::PppLink(routerd_host::artifact::PppLinkSpec {
            ifname: "ppp0".into(),
            admin_up: None,
            mtu: None,
        }));
        assert_eq!(cleanup(&ppp, true, false), NO_CLEANUP.into());
        assert_eq!(cleanup(&ppp, false, false), UNRECORDED.into());
    }

    #[test]
    fn nft_table_needs_both_the_prefix_and_the_ledger() {
        assert!(matches!(cleanup(&table("routerd_nat"), true, false), Cleanup::Delete { .. }));
        assert!(matches!(cleanup(&table("routerd_foreign"), false, false), Cleanup::Keep { .. }));
        assert!(matches!(cleanup(&table("filter"), true, false), Cleanup::Keep { .. }));
    }

    fn rule(mark: u32, mask: u32) -> Artifact {
        Artifact::new(ArtifactSpec::FwmarkRule(FwmarkRuleSpec {
            mark,
            mask,
            table: 100,
            priority: 10000,
        }))
    }

    #[test]
    fn a_fwmark_rule_is_deleted_only_when_the_ledger_records_it() {
        let keep = |a: &Artifact| matches!(cleanup(a, false, false), Cleanup::Keep { .. });
        let delete = |a: &Artifact| matches!(cleanup(a, true, false), Cleanup::Delete { .. });
        for mark in [0x100, 0x1a0, 0x200] {
            assert!(keep(&rule(mark, u32::MAX)), "{mark:#x} without the ledger");
            assert!(delete(&rule(mark, u32::MAX)), "{mark:#x} in the ledger");
        }
    }

    #[test]
    fn a_masked_rule_is_inside_the_range_only_if_every_mark_it_matches_is() {
        assert!(in_routerd_namespace(&rule(0x1a0, u32::MAX)));
        assert!(in_routerd_namespace(&rule(0x100, 0xffff_ff00)));
        // 0x150/0xff0 also matches 0x1150 and 0xf150.
        assert!(!in_routerd_namespace(&rule(0x150, 0xff0)));
        assert!(!in_routerd_namespace(&rule(0x200, u32::MAX)));
        assert!(!in_routerd_namespace(&rule(0x0, 0xf00)));
        assert_eq!(rule(0x150, 0xff0).key.name, "0x150/0xff0");
        assert_eq!(rule(0x150, u32::MAX).key.name, "0x150");
    }

    #[test]
    fn a_route_table_with_routes_the_ledger_does_not_record_stays() {
        let table =
            Artifact::new(ArtifactSpec::RouteTable(routerd_host::artifact::RouteTableSpec {
                table: 100,
            }));
        assert!(matches!(cleanup(&table, true, false), Cleanup::Delete { .. }));
        assert!(matches!(cleanup(&table, true, true), Cleanup::Keep { .. }));
        assert!(matches!(cleanup(&table, false, false), Cleanup::Keep { .. }));
    }

    #[test]
    fn a_timesyncd_block_is_deleted_only_when_the_ledger_owns_it() {
        let block = Artifact::new(ArtifactSpec::Timesyncd(routerd_host::artifact::TimesyncdSpec {
            name: "ntp".into(),
            servers: vec!["192.0.2.123".into()],
            effective: true,
        }));
        assert!(in_routerd_namespace(&block));
        assert!(matches!(cleanup(&block, true, false), Cleanup::Delete { .. }));
        assert!(matches!(cleanup(&block, false, false), Cleanup::Keep { .. }));
    }

    #[test]
    fn addresses_are_never_deleted_even_when_owned() {
        let addr = Artifact::new(ArtifactSpec::Address(AddressSpec {
            ifname: "lan0".into(),
            address: "192.168.1.1/24".parse().expect("literal"),
        }));
        assert!(matches!(cleanup(&addr, true, false), Cleanup::Keep { .. }));
    }

    #[test]
    fn a_vlan_link_routerd_created_is_never_deleted_but_its_tunnel_is() {
        let vlan = Artifact::new(ArtifactSpec::Link(LinkSpec {
            ifname: "eth1.20".into(),
            admin_up: Some(true),
            mtu: None,
            kind: Some(LinkKind::Vlan {
                parent: "eth1".into(),
                id: 20,
                protocol: VlanProtocol::Ieee8021Q,
            }),
        }));
        assert!(matches!(cleanup(&vlan, true, false), Cleanup::Keep { .. }));
        let tunnel = Artifact::new(ArtifactSpec::Ip6Tunnel(Ip6TunnelSpec {
            ifname: "dslite0".into(),
            mode: Ip6TunnelMode::Ipip6,
            remote: "2001:db8::1".parse().expect("literal"),
            local: None,
            underlying: None,
            encap_limit: EncapLimit::DEFAULT,
            mtu: None,
            admin_up: None,
        }));
        assert!(matches!(cleanup(&tunnel, true, false), Cleanup::Delete { .. }));
        // Not recorded (the kernel's fallback device, someone else's tunnel): never ours.
        assert!(!in_routerd_namespace(&tunnel));
        assert!(matches!(cleanup(&tunnel, false, false), Cleanup::Keep { .. }));
    }
}
