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
        ArtifactSpec::FwmarkRule(r) => ROUTERD_FWMARK_RANGE.contains(&r.mark),
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
/// ledger holds an `owned` entry for it.
pub fn cleanup(artifact: &Artifact, ledger_owned: bool) -> Cleanup {
    use ArtifactKind as K;
    let ns = in_routerd_namespace(artifact);
    match artifact.key.kind {
        K::Ipv4FwmarkRule if ns => {
            Cleanup::Delete { reason: "fwmark in routerd's range 0x100-0x1ff" }
        }
        K::Ipv4FwmarkRule if ledger_owned => {
            Cleanup::Delete { reason: "fwmark rule recorded in the ledger" }
        }
        K::NftTable if ns && ledger_owned => {
            Cleanup::Delete { reason: "routerd_* table recorded in the ledger" }
        }
        K::NftTable if ns => Cleanup::Keep {
            reason: "routerd_* table not recorded in the ledger",
            remediation: "delete it by hand if it is stale, or declare it in the config and run adopt --apply",
        },
        K::Ipv4RouteTable if ledger_owned => Cleanup::Delete {
            reason: "route table recorded in the ledger; flushes only routerd-protocol routes",
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
        assert!(matches!(cleanup(&table("routerd_nat"), true), Cleanup::Delete { .. }));
        assert!(matches!(cleanup(&table("routerd_foreign"), false), Cleanup::Keep { .. }));
        assert!(matches!(cleanup(&table("filter"), true), Cleanup::Keep { .. }));
    }

    #[test]
    fn fwmark_rule_in_range_is_deleted_without_the_ledger() {
        let rule = |mark| {
            Artifact::new(ArtifactSpec::FwmarkRule(FwmarkRuleSpec {
                mark,
                mask: u32::MAX,
                table: 100,
                priority: 10000,
            }))
        };
        assert!(matches!(cleanup(&rule(0x100), false), Cleanup::Delete { .. }));
        assert!(matches!(cleanup(&rule(0x200), false), Cleanup::Keep { .. }));
        assert!(matches!(cleanup(&rule(0x200), true), Cleanup::Delete { .. }));
    }

    #[test]
    fn a_timesyncd_block_is_deleted_only_when_the_ledger_owns_it() {
        let block = Artifact::new(ArtifactSpec::Timesyncd(routerd_host::artifact::TimesyncdSpec {
            name: "ntp".into(),
            servers: vec!["192.0.2.123".into()],
            effective: true,
        }));
        assert!(in_routerd_namespace(&block));
        assert!(matches!(cleanup(&block, true), Cleanup::Delete { .. }));
        assert!(matches!(cleanup(&block, false), Cleanup::Keep { .. }));
    }

    #[test]
    fn addresses_are_never_deleted_even_when_owned() {
        let addr = Artifact::new(ArtifactSpec::Address(AddressSpec {
            ifname: "lan0".into(),
            address: "192.168.1.1/24".parse().expect("literal"),
        }));
        assert!(matches!(cleanup(&addr, true), Cleanup::Keep { .. }));
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
        assert!(matches!(cleanup(&vlan, true), Cleanup::Keep { .. }));
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
        assert!(matches!(cleanup(&tunnel, true), Cleanup::Delete { .. }));
        // Not recorded (the kernel's fallback device, someone else's tunnel): never ours.
        assert!(!in_routerd_namespace(&tunnel));
        assert!(matches!(cleanup(&tunnel, false), Cleanup::Keep { .. }));
    }
}
