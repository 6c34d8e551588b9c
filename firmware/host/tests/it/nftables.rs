//! `NftBackend` against the real kernel: every test gets its own namespace and reads the result
//! back with the `nft` CLI (an independent reader) as well as with the backend's own inventory.

use std::net::IpAddr;

use routerd_host::nftables::NftBackend;
use routerd_host::nftables::ir::{
    NftAction, NftBaseChain, NftChainSpec, NftChainType, NftCtState, NftFamily, NftHashField,
    NftHook, NftIpFamily, NftL4Proto, NftMatch, NftPolicy, NftRule, NftTableSpec, NftTableState,
};
use routerd_host::{Artifact, ArtifactKind, ArtifactSpec, Backend, ErrorClass, HostError};

use crate::support::TestNetns;

use NftAction as A;
use NftMatch as M;

fn backend(ns: &TestNetns) -> NftBackend {
    NftBackend::new(&ns.netns()).expect("nftnl backend opens in the test namespace")
}

fn rule(matches: Vec<NftMatch>, actions: Vec<NftAction>) -> NftRule {
    NftRule { matches, actions }
}

fn base(chain_type: NftChainType, hook: NftHook, priority: i32, policy: NftPolicy) -> NftBaseChain {
    NftBaseChain { chain_type, hook, priority, policy }
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("test address")
}

/// `inet routerd_test`: NAT, a filter chain with every match, a jump target, MSS clamping.
fn test_table() -> NftTableSpec {
    NftTableSpec {
        family: NftFamily::Inet,
        name: "routerd_test".into(),
        owner: "routerd.net/v1alpha1/FirewallPolicy/test".into(),
        chains: vec![
            NftChainSpec {
                name: "postrouting".into(),
                base: Some(base(NftChainType::Nat, NftHook::Postrouting, 100, NftPolicy::Accept)),
                rules: vec![
                    rule(vec![M::OifName("wan0".into())], vec![A::Masquerade { ports: None }]),
                    rule(
                        vec![M::L4Proto(NftL4Proto::Udp), M::OifName("wan1".into())],
                        vec![A::Masquerade { ports: Some((1024, 65535)) }],
                    ),
                    rule(
                        vec![
                            M::NfProto(NftIpFamily::Ipv4),
                            M::L4Proto(NftL4Proto::Tcp),
                            M::OifName("wan2".into()),
                        ],
                        vec![A::Snat {
                            address: ip("192.0.2.1"),
                            last: None,
                            ports: Some((1000, 2000)),
                        }],
                    ),
                    rule(
                        vec![M::Ip6Saddr("2001:db8:1::/48".parse().expect("prefix"))],
                        vec![A::Snat { address: ip("2001:db8::1"), last: None, ports: None }],
                    ),
                    rule(
                        vec![M::NfProto(NftIpFamily::Ipv4), M::OifName("wan3".into())],
                        vec![A::Snat {
                            address: ip("192.0.2.10"),
                            last: Some(ip("192.0.2.13")),
                            ports: None,
                        }],
                    ),
                    rule(
                        vec![
                            M::NfProto(NftIpFamily::Ipv4),
                            M::L4Proto(NftL4Proto::Tcp),
                            M::OifName("wan4".into()),
                        ],
                        vec![A::Snat {
                            address: ip("192.0.2.21"),
                            last: Some(ip("192.0.2.24")),
                            ports: Some((1024, 2047)),
                        }],
                    ),
                ],
            },
            NftChainSpec {
                name: "prerouting".into(),
                base: Some(base(NftChainType::Nat, NftHook::Prerouting, -100, NftPolicy::Accept)),
                rules: vec![rule(
                    vec![M::L4Proto(NftL4Proto::Tcp), M::Dport(8080)],
                    vec![A::Dnat { address: ip("10.0.0.2"), port: Some(80) }],
                )],
            },
            NftChainSpec {
                name: "forward".into(),
                base: Some(base(NftChainType::Filter, NftHook::Forward, 0, NftPolicy::Drop)),
                rules: vec![
                    rule(
                        vec![M::CtState(vec![NftCtState::Established, NftCtState::Related])],
                        vec![A::Accept],
                    ),
                    rule(vec![M::L4Proto(NftL4Proto::Tcp), M::TcpSyn], vec![A::ClampMssToPmtu]),
                    rule(vec![M::IifName("lan0".into()), M::TcpSyn], vec![A::SetMss(1400)]),
                    rule(
                        vec![M::IifName("lan0".into()), M::OifName("wan0".into())],
                        vec![A::Accept],
                    ),
                    rule(
                        vec![
                            M::Ip4Saddr("10.0.0.0/8".parse().expect("prefix")),
                            M::Ip4Daddr("192.168.1.0/24".parse().expect("prefix")),
                        ],
                        vec![A::Drop],
                    ),
                    rule(
                        vec![M::Ip4Saddr("172.16.0.0/12".parse().expect("prefix"))],
                        vec![A::Drop],
                    ),
                    rule(
                        vec![M::Ip6Saddr("2001:db8::/32".parse().expect("prefix"))],
                        vec![A::Accept],
                    ),
                    rule(vec![M::Mark(0x100)], vec![A::Jump("marked".into())]),
                    rule(vec![M::L4Proto(NftL4Proto::Icmpv6)], vec![A::Accept]),
                ],
            },
            NftChainSpec {
                name: "mangle".into(),
                base: Some(base(NftChainType::Route, NftHook::Output, -150, NftPolicy::Accept)),
                rules: vec![rule(vec![M::OifName("wan0".into())], vec![A::SetMark(0x101)])],
            },
            NftChainSpec {
                name: "marked".into(),
                base: None,
                rules: vec![
                    rule(vec![M::L4Proto(NftL4Proto::Icmp)], vec![A::Accept]),
                    rule(vec![], vec![A::Return]),
                ],
            },
        ],
    }
}

/// `ip routerd_test4`: an `ip` table, whose NAT statements nft prints without the family.
fn ip_table() -> NftTableSpec {
    NftTableSpec {
        family: NftFamily::Ip,
        name: "routerd_test4".into(),
        owner: "routerd.net/v1alpha1/IPv4SourceNAT/wan".into(),
        chains: vec![NftChainSpec {
            name: "postrouting".into(),
            base: Some(base(NftChainType::Nat, NftHook::Postrouting, 105, NftPolicy::Accept)),
            rules: vec![
                rule(
                    vec![M::Ip4Saddr("192.168.0.0/16".parse().expect("prefix"))],
                    vec![A::Snat { address: ip("198.51.100.7"), last: None, ports: None }],
                ),
                rule(vec![], vec![A::Masquerade { ports: None }]),
            ],
        }],
    }
}

/// `ip routerd_hash`: what `IPv4PolicyRouteSet` renders for two targets, in a chain on `hook`:
/// hash the addresses into scratch marks 0x7f000000/0x7f000001, then remap them to 0x300/0x301.
fn hash_table(hook: NftHook, matches: Vec<NftMatch>) -> NftTableSpec {
    let fields = vec![NftHashField::Ip4Saddr, NftHashField::Ip4Daddr];
    let mut rules = vec![rule(
        matches.clone(),
        vec![A::SetMarkHash { fields, modulus: 2, offset: 0x7f00_0000 }],
    )];
    for (bucket, mark) in [(0x7f00_0000, 0x300), (0x7f00_0001, 0x301)] {
        let mut m = matches.clone();
        m.push(M::Mark(bucket));
        rules.push(rule(m, vec![A::SetMark(mark)]));
    }
    NftTableSpec {
        family: NftFamily::Ip,
        name: "routerd_hash".into(),
        owner: "net.routerd.net/v1alpha1/IPv4PolicyRouteSet/split".into(),
        chains: vec![NftChainSpec {
            name: "mark".into(),
            base: Some(base(NftChainType::Filter, hook, -150, NftPolicy::Accept)),
            rules,
        }],
    }
}

fn desired(spec: &NftTableSpec) -> Artifact {
    Artifact::new(ArtifactSpec::NftTable(spec.clone()))
}

async fn observe(backend: &NftBackend) -> Vec<Artifact> {
    backend.observe(ArtifactKind::NftTable, &[]).await.unwrap_or_else(|e| panic!("observe: {e}"))
}

async fn observed_table(backend: &NftBackend, key_name: &str) -> Option<Artifact> {
    observe(backend).await.into_iter().find(|a| a.key.name == key_name)
}

fn state(a: &Artifact) -> &NftTableState {
    match &a.spec {
        ArtifactSpec::NftTableObserved(s) => s,
        other => panic!("observe returned {other:?}"),
    }
}

/// `nft list table` of our table must be exactly what the IR's Display prints.
fn assert_listed_as_displayed(ns: &TestNetns, spec: &NftTableSpec) {
    let listed = ns.nft(&["list", "table", spec.family.as_str(), &spec.name]);
    assert_eq!(listed, format!("{spec}\n"), "nft list table vs NftTableSpec Display");
}

#[tokio::test]
async fn created_table_lists_back_as_the_ir_displays_it() {
    let ns = TestNetns::new();
    let backend = backend(&ns);
    for spec in [test_table(), ip_table()] {
        backend.create(&desired(&spec)).await.unwrap_or_else(|e| panic!("create: {e}"));
        assert_listed_as_displayed(&ns, &spec);
    }
    // The text listing above includes the table comment; nft decodes rule comments from the
    // userdata TLV for its JSON too (nft 1.0.6 leaves table comments out of JSON).
    let text = ns.nft(&["list", "table", "inet", "routerd_test"]);
    assert!(
        text.contains("\tcomment \"routerd owner=routerd.net/v1alpha1/FirewallPolicy/test\"\n")
    );
    let json = ns.nft(&["-j", "list", "table", "inet", "routerd_test"]);
    let doc: serde_json::Value = serde_json::from_str(&json).expect("nft -j output");
    let items = doc["nftables"].as_array().expect("nftables array");
    let comments: Vec<&str> =
        items.iter().filter_map(|i| i.get("rule")?.get("comment")?.as_str()).collect();
    let spec = test_table();
    let expected: Vec<String> =
        spec.chains.iter().flat_map(|c| c.rules.iter().map(NftRule::comment)).collect();
    assert_eq!(comments, expected);
}

#[tokio::test]
async fn hash_marking_table_lists_back_as_the_ir_displays_it() {
    let ns = TestNetns::new();
    let backend = backend(&ns);
    let matches = vec![
        M::Ip4Saddr("192.168.10.0/24".parse().expect("prefix")),
        M::Ip4Daddr("0.0.0.0/0".parse().expect("prefix")),
    ];
    let spec = hash_table(NftHook::Prerouting, matches);
    backend.create(&desired(&spec)).await.unwrap_or_else(|e| panic!("create: {e}"));
    assert_listed_as_displayed(&ns, &spec);
    let listed = ns.nft(&["list", "table", "ip", "routerd_hash"]);
    assert!(
        listed.contains(
            "\t\tip saddr 192.168.10.0/24 ip daddr 0.0.0.0/0 meta mark set jhash ip saddr . \
             ip daddr mod 2 seed 0x0 offset 2130706432 comment"
        ),
        "{listed}"
    );
    assert!(listed.contains(" meta mark 0x7f000001 meta mark set 0x00000301 comment"), "{listed}");
    let observed = observed_table(&backend, "ip/routerd_hash").await.expect("table observed");
    assert_eq!(desired(&spec).spec.drift(&observed.spec), vec![]);
}

#[tokio::test]
async fn hash_marks_keep_each_flow_on_one_target_and_use_every_target() {
    let ns = TestNetns::new();
    let backend = backend(&ns);
    let spec = hash_table(NftHook::Output, vec![M::Ip4Daddr("127.0.0.0/8".parse().expect("p"))]);
    backend.create(&desired(&spec)).await.unwrap_or_else(|e| panic!("create: {e}"));
    // A foreign table after ours counts locally sent UDP datagrams by the mark they left with.
    ns.nft(&["add", "table", "ip", "count"]);
    ns.nft(&["add", "chain", "ip", "count", "out", "{ type filter hook output priority 0; }"]);
    for mark in ["0x300", "0x301", "0x7f000000", "0x7f000001"] {
        let rule = ["add", "rule", "ip", "count", "out", "meta", "l4proto", "udp"];
        ns.nft(&[&rule[..], &["meta", "mark", mark, "counter"]].concat());
    }
    let send = |daddrs: &str| {
        let script = format!("for d in {daddrs}; do echo x > /dev/udp/127.0.0.$d/9; done");
        ns.exec(&["bash", "-c", &script]);
    };
    let counts = || -> Vec<u64> {
        let json = ns.nft(&["-j", "list", "table", "ip", "count"]);
        let doc: serde_json::Value = serde_json::from_str(&json).expect("nft -j output");
        let items = doc["nftables"].as_array().expect("nftables array").clone();
        items
            .iter()
            .filter_map(|i| i.get("rule")?.get("expr")?.as_array().cloned())
            .filter_map(|e| e.iter().find_map(|x| x.get("counter")?.get("packets")?.as_u64()))
            .collect()
    };

    send(&(1..=32).map(|d| d.to_string()).collect::<Vec<_>>().join(" "));
    let spread = counts();
    assert_eq!(spread.len(), 4);
    assert_eq!(spread[0] + spread[1], 32, "every datagram reaches a target mark: {spread:?}");
    assert!(spread[0] > 0 && spread[1] > 0, "both targets are used: {spread:?}");
    assert_eq!(&spread[2..], [0, 0], "no scratch mark leaves the chain");

    send("7 7 7 7 7");
    let again = counts();
    let grown: Vec<u64> = again.iter().zip(&spread).map(|(a, b)| a - b).collect();
    assert!(grown == [5, 0, 0, 0] || grown == [0, 5, 0, 0], "one flow, one target: {grown:?}");
}

#[tokio::test]
async fn observe_right_after_create_shows_no_drift() {
    let ns = TestNetns::new();
    let backend = backend(&ns);
    let spec = test_table();
    backend.create(&desired(&spec)).await.unwrap_or_else(|e| panic!("create: {e}"));

    let observed = observed_table(&backend, "inet/routerd_test").await.expect("table observed");
    assert_eq!(observed.key, desired(&spec).key);
    assert_eq!(state(&observed), &spec.expected_state());
    assert_eq!(desired(&spec).spec.drift(&observed.spec), vec![]);
}

#[tokio::test]
async fn rule_deleted_by_hand_is_drift_that_modify_repairs() {
    let ns = TestNetns::new();
    let backend = backend(&ns);
    let spec = test_table();
    let want = desired(&spec);
    backend.create(&want).await.unwrap_or_else(|e| panic!("create: {e}"));

    // The second rule of `forward`, by its handle.
    let listing = ns.nft(&["-a", "list", "chain", "inet", "routerd_test", "forward"]);
    let handle = listing
        .lines()
        .filter_map(|l| l.split_once("# handle ").map(|(_, h)| h.trim().to_string()))
        .nth(2) // the chain line comes first; the table line has no handle
        .expect("rule handle in nft -a output");
    ns.nft(&["delete", "rule", "inet", "routerd_test", "forward", "handle", &handle]);

    let observed = observed_table(&backend, "inet/routerd_test").await.expect("table observed");
    let drift = want.spec.drift(&observed.spec);
    assert_eq!(drift.len(), 1, "{drift:?}");
    assert_eq!(drift[0].attribute, "chains.forward.rules");

    backend.modify(&observed, &want).await.unwrap_or_else(|e| panic!("modify: {e}"));
    let observed = observed_table(&backend, "inet/routerd_test").await.expect("table observed");
    assert_eq!(want.spec.drift(&observed.spec), vec![]);
    assert_listed_as_displayed(&ns, &spec);
}

#[tokio::test]
async fn modify_replaces_changed_table_and_recreates_a_vanished_one() {
    let ns = TestNetns::new();
    let backend = backend(&ns);
    let old = desired(&test_table());
    backend.create(&old).await.unwrap_or_else(|e| panic!("create: {e}"));
    let observed = observed_table(&backend, "inet/routerd_test").await.expect("table observed");

    let mut spec = test_table();
    spec.owner = "routerd.net/v1alpha1/FirewallPolicy/other".into();
    spec.chains.remove(3);
    spec.chains[2].rules.swap(0, 1);
    let new = desired(&spec);
    assert!(!new.spec.drift(&observed.spec).is_empty());
    backend.modify(&observed, &new).await.unwrap_or_else(|e| panic!("modify: {e}"));
    assert_listed_as_displayed(&ns, &spec);

    ns.nft(&["delete", "table", "inet", "routerd_test"]);
    backend.modify(&observed, &new).await.unwrap_or_else(|e| panic!("modify of absent: {e}"));
    let observed = observed_table(&backend, "inet/routerd_test").await.expect("table observed");
    assert_eq!(new.spec.drift(&observed.spec), vec![]);
}

#[tokio::test]
async fn foreign_tables_are_listed_and_left_alone() {
    let ns = TestNetns::new();
    ns.nft(&["add", "table", "ip", "foreign"]);
    ns.nft(&["add", "chain", "ip", "foreign", "input", "{ type filter hook input priority 0; }"]);
    ns.nft(&["add", "rule", "ip", "foreign", "input", "tcp", "dport", "22", "accept"]);
    ns.nft(&["add", "rule", "ip", "foreign", "input", "accept", "comment", "\"by hand\""]);
    ns.nft(&["add", "table", "inet", "commented", "{ comment \"hello\"; }"]);
    ns.nft(&["add", "table", "bridge", "br"]);
    ns.nft(&["add", "table", "netdev", "nd"]);
    let foreign_before = ns.nft(&["list", "table", "ip", "foreign"]);

    let backend = backend(&ns);
    let spec = test_table();
    let ours = desired(&spec);
    backend.create(&ours).await.unwrap_or_else(|e| panic!("create: {e}"));

    let listed = observe(&backend).await;
    let names: Vec<&str> = listed.iter().map(|a| a.key.name.as_str()).collect();
    assert_eq!(names, ["ip/foreign", "inet/commented", "inet/routerd_test"], "kernel order");
    let foreign = state(&listed[0]);
    assert_eq!(foreign.comment, None);
    assert_eq!(foreign.chains.len(), 1);
    assert_eq!(
        foreign.chains[0].base,
        Some(base(NftChainType::Filter, NftHook::Input, 0, NftPolicy::Accept))
    );
    assert_eq!(foreign.chains[0].rules, vec![None, Some("by hand".to_string())]);
    assert_eq!(state(&listed[1]).comment.as_deref(), Some("hello"));

    let observed = listed[2].clone();
    backend.modify(&observed, &ours).await.unwrap_or_else(|e| panic!("modify: {e}"));
    backend.delete(&observed).await.unwrap_or_else(|e| panic!("delete: {e}"));

    assert!(!ns.nft_ok(&["list", "table", "inet", "routerd_test"]), "our table is gone");
    assert_eq!(ns.nft(&["list", "table", "ip", "foreign"]), foreign_before);
    for (family, name) in [("inet", "commented"), ("bridge", "br"), ("netdev", "nd")] {
        assert!(ns.nft_ok(&["list", "table", family, name]), "{family} {name} kept");
    }
    // Deleting what is already gone is not an error.
    backend.delete(&observed).await.unwrap_or_else(|e| panic!("second delete: {e}"));
}

#[tokio::test]
async fn creating_an_existing_table_is_rejected_with_eexist() {
    let ns = TestNetns::new();
    let backend = backend(&ns);
    let spec = test_table();
    backend.create(&desired(&spec)).await.unwrap_or_else(|e| panic!("create: {e}"));

    let mut other = test_table();
    other.chains.truncate(1);
    let err = backend.create(&desired(&other)).await.expect_err("second create must fail");
    match &err {
        HostError::Rejected { key, op, errno, message } => {
            assert_eq!(key.name, "inet/routerd_test");
            assert_eq!(*op, "create");
            assert_eq!(*errno, Some(libc::EEXIST), "{message}");
            assert!(message.contains("(in add table inet/routerd_test)"), "{message}");
        }
        other => panic!("expected Rejected, got {other:?}"),
    }
    assert_eq!(err.class(), ErrorClass::Conflict);
    assert_listed_as_displayed(&ns, &spec);

    // A table created by hand without our comment is refused the same way.
    ns.nft(&["add", "table", "ip", "routerd_test4"]);
    let err = backend.create(&desired(&ip_table())).await.expect_err("exists");
    assert!(matches!(err, HostError::Rejected { errno: Some(libc::EEXIST), .. }), "{err:?}");
}

#[tokio::test]
async fn a_rule_the_kernel_refuses_fails_the_whole_batch() {
    let ns = TestNetns::new();
    let backend = backend(&ns);
    let mut spec = test_table();
    // `rt mtu` is only valid on forward, output and postrouting hooks.
    spec.chains.push(NftChainSpec {
        name: "input".into(),
        base: Some(base(NftChainType::Filter, NftHook::Input, 0, NftPolicy::Accept)),
        rules: vec![rule(vec![M::TcpSyn], vec![A::ClampMssToPmtu])],
    });
    let err = backend.create(&desired(&spec)).await.expect_err("kernel refuses");
    match &err {
        HostError::Rejected { op, errno, message, .. } => {
            assert_eq!(*op, "create");
            assert_eq!(*errno, Some(libc::EOPNOTSUPP), "{message}");
            assert!(message.contains("in chain input"), "{message}");
        }
        other => panic!("expected Rejected, got {other:?}"),
    }
    assert!(!ns.nft_ok(&["list", "table", "inet", "routerd_test"]), "nothing was applied");
    assert!(observe(&backend).await.is_empty());

    // The backend keeps its batch socket across calls: the refused batch's replies must not
    // be taken for the next batch's.
    let good = test_table();
    backend.create(&desired(&good)).await.unwrap_or_else(|e| panic!("create after a refusal: {e}"));
    backend.clone().create(&desired(&ip_table())).await.unwrap_or_else(|e| panic!("clone: {e}"));
    assert_listed_as_displayed(&ns, &good);
    assert_listed_as_displayed(&ns, &ip_table());
}

#[tokio::test]
async fn backend_is_bound_to_its_namespace() {
    let a = TestNetns::new();
    let b = TestNetns::new();
    let backend_a = backend(&a);
    backend_a.create(&desired(&test_table())).await.unwrap_or_else(|e| panic!("create: {e}"));
    assert!(a.nft_ok(&["list", "table", "inet", "routerd_test"]));
    assert!(!b.nft_ok(&["list", "table", "inet", "routerd_test"]));
    assert!(observe(&backend(&b)).await.is_empty());
    assert_eq!(backend_a.apply_with(), routerd_host::ApplyWith::Nftnl);
    assert_eq!(backend_a.kinds(), [ArtifactKind::NftTable]);
}
