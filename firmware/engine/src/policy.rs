//! Ownership policy: which observed artifacts are inside a routerd namespace, which of those may
//! be deleted, and what the operator is told about the rest. Seed 000 "Orphans" and "Cleanup
//! Policy"; the choices it leaves open are in `docs/adr/0002-ownership-rules.md`. Pure.

use routerd_host::{
    Artifact, ArtifactKind, ArtifactSpec, ROUTERD_FWMARK_RANGE, ROUTERD_NFT_TABLE_PREFIX,
    ROUTERD_ROUTE_PROTOCOL,
};

/// Whether an observed artifact is inside one of routerd's namespaces or ranges (the weaker
/// orphan signal): fwmark `0x100-0x1ff`, nft tables `routerd_*`, routes and route tables with
/// routerd's protocol number, units `routerd-*.service`, sections of routerd's dnsmasq file,
/// DHCP client bindings in routerd's `.network` files, blocks of routerd's timesyncd drop-in.
pub fn in_routerd_namespace(artifact: &Artifact) -> bool {
    match &artifact.spec {
        ArtifactSpec::FwmarkRule(r) => r.within(&ROUTERD_FWMARK_RANGE),
        ArtifactSpec::NftTableObserved(t) => t.name.starts_with(ROUTERD_NFT_TABLE_PREFIX),
        ArtifactSpec::NftTable(t) => t.name.starts_with(ROUTERD_NFT_TABLE_PREFIX),
        ArtifactSpec::Route(r) => r.protocol == ROUTERD_ROUTE_PROTOCOL,
        ArtifactSpec::RouteTable(_) => true,
        // The whole file is routerd's; a section in it was written by routerd.
        ArtifactSpec::DnsmasqSection(_) => true,
        // Likewise a block of a `10-routerd-*.network` file or of routerd's timesyncd drop-in.
        ArtifactSpec::DhcpClient(_) | ArtifactSpec::Timesyncd(_) => true,
        _ => {
            artifact.key.kind == ArtifactKind::SystemdService
                && artifact.key.name.starts_with("routerd-")
                && artifact.key.name.ends_with(".service")
        }
    }
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

/// Decides what happens to an artifact that no current resource emits. `ledger_owned`: the
/// ledger holds an `owned` entry for it. `foreign_inside`: the host holds artifacts inside this
/// one that the ledger does not record (routes in a route table): such a container stays.
pub fn cleanup(artifact: &Artifact, ledger_owned: bool, foreign_inside: bool) -> Cleanup {
    use ArtifactKind as K;
    let ns = in_routerd_namespace(artifact);
    match artifact.key.kind {
        // Seed 000 lets the range alone prove a rule ours; this firmware has kept a ledger
        // since its first boot, so it needs the ledger here too (ADR 0002).
        K::Ipv4FwmarkRule if ledger_owned => {
            Cleanup::Delete { reason: "fwmark rule recorded in the ledger" }
        }
        K::Ipv4FwmarkRule => Cleanup::Keep {
            reason: "fwmark rule in routerd's range 0x100-0x1ff, not recorded in the ledger",
            remediation: "delete it by hand (ip rule del fwmark MARK) if it is stale, or declare it in the config and run adopt --apply",
        },
        K::NftTable if ns && ledger_owned => {
            Cleanup::Delete { reason: "routerd_* table recorded in the ledger" }
        }
        K::NftTable if ns => Cleanup::Keep {
            reason: "routerd_* table not recorded in the ledger",
            remediation: "delete it by hand if it is stale, or declare it in the config and run adopt --apply",
        },
        K::Ipv4RouteTable if ledger_owned && foreign_inside => Cleanup::Keep {
            reason: "route table recorded in the ledger, but it holds routes the ledger does not record",
            remediation: "the table stays for those routes; delete them by hand if they are stale",
        },
        K::Ipv4RouteTable if ledger_owned => Cleanup::Delete {
            reason: "route table recorded in the ledger; its routes go one by one, as the ledger records them",
        },
        K::Ipv4Route | K::Ipv6Route if ns && ledger_owned => {
            Cleanup::Delete { reason: "routerd-protocol route recorded in the ledger" }
        }
        K::SystemdService | K::Ipip6Tunnel if ledger_owned => {
            Cleanup::Delete { reason: "recorded in the ledger" }
        }
        K::DnsmasqConfig if ns && ledger_owned => {
            Cleanup::Delete { reason: "section of routerd's dnsmasq file recorded in the ledger" }
        }
        K::Dhcp4Client | K::Dhcp6Client | K::Dhcp6PrefixDelegation | K::Dhcp6DelegatedAddress
            if ns && ledger_owned =>
        {
            Cleanup::Delete { reason: "binding in routerd's .network file recorded in the ledger" }
        }
        K::TimesyncdConfig if ns && ledger_owned => Cleanup::Delete {
            reason: "block of routerd's timesyncd drop-in recorded in the ledger",
        },
        // A sink lives in the routerd process: nothing outside it can own one.
        K::LogSink => Cleanup::Delete { reason: "log sink of this routerd process" },
        K::Link => Cleanup::Keep {
            reason: "links are never deleted as orphans",
            remediation: "remove the link by hand if it is no longer needed",
        },
        K::Ipv4Address | K::Ipv6Address => Cleanup::Keep {
            reason: "addresses are never deleted as orphans (management access may depend on them)",
            remediation: "remove the address by hand once nothing reaches the router through it",
        },
        K::Sysctl | K::Hostname => Cleanup::Keep {
            reason: "global host state is reconciled, never deleted",
            remediation: "set the value you want with a Sysctl or Hostname resource",
        },
        // A block routerd wrote; the operator's lines in the file stay, and so does the file.
        K::File | K::PppSecret if ledger_owned => {
            Cleanup::Delete { reason: "block routerd wrote in the file, recorded in the ledger" }
        }
        K::File | K::PppSecret => Cleanup::Keep {
            reason: "routerd deletes only blocks the ledger records, never whole files",
            remediation: "remove the block by hand if it is stale, or declare it and run adopt --apply",
        },
        _ if ledger_owned => Cleanup::Keep {
            reason: "recorded in the ledger, but this kind has no cleanup in this build",
            remediation: "remove it by hand",
        },
        _ => Cleanup::Keep {
            reason: "inside a routerd namespace but not recorded in the ledger",
            remediation: "delete it by hand if it is stale, or declare it in the config and run adopt --apply",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
