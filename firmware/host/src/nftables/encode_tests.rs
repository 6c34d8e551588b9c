//! Tests of [`super`]: every IR construct against the expressions `nft --debug=netlink`
//! generates for it and the text `nft list` prints; batch shapes; refused rules.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::super::ir::{NftBaseChain, NftChainSpec, NftCtState};
use super::super::{sys, transport};
use super::*;

use NftAction as A;
use NftMatch as M;

fn table(family: NftFamily, rules: Vec<NftRule>) -> NftTableSpec {
    NftTableSpec {
        family,
        name: "routerd_t".into(),
        owner: "test/owner".into(),
        chains: vec![
            NftChainSpec { name: "c".into(), base: None, rules },
            NftChainSpec { name: "sub".into(), base: None, rules: vec![] },
        ],
    }
}

fn rule(matches: Vec<NftMatch>, actions: Vec<NftAction>) -> NftRule {
    NftRule { matches, actions }
}

fn hash(fields: Vec<NftHashField>, modulus: u32, offset: u32) -> NftAction {
    NftAction::SetMarkHash { fields, modulus, offset }
}

fn messages(batch: &EncodedBatch, kind: i32) -> Vec<Vec<u8>> {
    let msgs = transport::split(&batch.bytes).expect("well-formed batch");
    msgs.iter().filter(|m| m.kind == transport::nft_type(kind)).map(|m| m.bytes.to_vec()).collect()
}

/// The expressions of the single rule of `family` table `c` chain, as libnftnl prints them
/// (the form `nft --debug=netlink` shows), and its userdata line.
fn encoded(family: NftFamily, r: &NftRule) -> (Vec<String>, String) {
    let batch = create(&table(family, vec![r.clone()])).expect("encodes");
    let rules = messages(&batch, libc::NFT_MSG_NEWRULE);
    assert_eq!(rules.len(), 1);
    let text = sys::rule_debug_text(&rules[0]).expect("libnftnl parses our rule");
    let mut lines = text.lines().skip(1).map(str::trim);
    let exprs: Vec<String> =
        lines.by_ref().take_while(|l| l.starts_with('[')).map(str::to_string).collect();
    let udata = text.lines().last().unwrap_or_default().trim().to_string();
    (exprs, udata)
}

/// Every IR construct: its IR, the expressions `nft --debug=netlink` (1.0.6) generates for
/// the equivalent nft syntax, and what `nft list` prints for them.
fn cases() -> Vec<(NftFamily, NftRule, &'static [&'static str], &'static str)> {
    let v4 = |s: &str| -> Ipv4Net { s.parse().expect("prefix") };
    let v6 = |s: &str| -> Ipv6Net { s.parse().expect("prefix") };
    let inet = NftFamily::Inet;
    vec![
        (
            inet,
            rule(vec![M::IifName("lan0".into()), M::OifName("wan0".into())], vec![A::Accept]),
            &[
                "[ meta load iifname => reg 1 ]",
                "[ cmp eq reg 1 0x306e616c 0x00000000 0x00000000 0x00000000 ]",
                "[ meta load oifname => reg 1 ]",
                "[ cmp eq reg 1 0x306e6177 0x00000000 0x00000000 0x00000000 ]",
                "[ immediate reg 0 accept ]",
            ],
            "iifname \"lan0\" oifname \"wan0\" accept",
        ),
        (
            inet,
            rule(
                vec![M::Ip4Saddr(v4("10.0.0.0/8")), M::Ip4Daddr(v4("192.168.1.0/24"))],
                vec![A::Drop],
            ),
            &[
                "[ meta load nfproto => reg 1 ]",
                "[ cmp eq reg 1 0x00000002 ]",
                "[ payload load 1b @ network header + 12 => reg 1 ]",
                "[ cmp eq reg 1 0x0000000a ]",
                "[ payload load 3b @ network header + 16 => reg 1 ]",
                "[ cmp eq reg 1 0x0001a8c0 ]",
                "[ immediate reg 0 drop ]",
            ],
            "ip saddr 10.0.0.0/8 ip daddr 192.168.1.0/24 drop",
        ),
        (
            inet,
            rule(
                vec![M::NfProto(NftIpFamily::Ipv4), M::Ip4Saddr(v4("10.1.2.3/32"))],
                vec![A::Drop],
            ),
            &[
                "[ meta load nfproto => reg 1 ]",
                "[ cmp eq reg 1 0x00000002 ]",
                "[ payload load 4b @ network header + 12 => reg 1 ]",
                "[ cmp eq reg 1 0x0302010a ]",
                "[ immediate reg 0 drop ]",
            ],
            "ip saddr 10.1.2.3 drop",
        ),
        (
            inet,
            rule(vec![M::Ip4Saddr(v4("10.16.0.0/12"))], vec![A::Accept]),
            &[
                "[ meta load nfproto => reg 1 ]",
                "[ cmp eq reg 1 0x00000002 ]",
                "[ payload load 4b @ network header + 12 => reg 1 ]",
                "[ bitwise reg 1 = ( reg 1 & 0x0000f0ff ) ^ 0x00000000 ]",
                "[ cmp eq reg 1 0x0000100a ]",
                "[ immediate reg 0 accept ]",
            ],
            "ip saddr 10.16.0.0/12 accept",
        ),
        (
            inet,
            rule(vec![M::Ip4Saddr(v4("0.0.0.0/0"))], vec![A::Accept]),
            &[
                "[ meta load nfproto => reg 1 ]",
                "[ cmp eq reg 1 0x00000002 ]",
                "[ payload load 4b @ network header + 12 => reg 1 ]",
                "[ bitwise reg 1 = ( reg 1 & 0x00000000 ) ^ 0x00000000 ]",
                "[ cmp eq reg 1 0x00000000 ]",
                "[ immediate reg 0 accept ]",
            ],
            "ip saddr 0.0.0.0/0 accept",
        ),
        (
            inet,
            rule(
                vec![M::Ip6Saddr(v6("2001:db8::/32")), M::Ip6Daddr(v6("2001:db8:1::/48"))],
                vec![A::Return],
            ),
            &[
                "[ meta load nfproto => reg 1 ]",
                "[ cmp eq reg 1 0x0000000a ]",
                "[ payload load 4b @ network header + 8 => reg 1 ]",
                "[ cmp eq reg 1 0xb80d0120 ]",
                "[ payload load 6b @ network header + 24 => reg 1 ]",
                "[ cmp eq reg 1 0xb80d0120 0x00000100 ]",
                "[ immediate reg 0 return ]",
            ],
            "ip6 saddr 2001:db8::/32 ip6 daddr 2001:db8:1::/48 return",
        ),
        (
            inet,
            rule(vec![M::Ip6Saddr(v6("2001:db8:8000::/33"))], vec![A::Accept]),
            &[
                "[ meta load nfproto => reg 1 ]",
                "[ cmp eq reg 1 0x0000000a ]",
                "[ payload load 16b @ network header + 8 => reg 1 ]",
                "[ bitwise reg 1 = ( reg 1 & 0xffffffff 0x00000080 0x00000000 0x00000000 ) ^ 0x00000000 0x00000000 0x00000000 0x00000000 ]",
                "[ cmp eq reg 1 0xb80d0120 0x00000080 0x00000000 0x00000000 ]",
                "[ immediate reg 0 accept ]",
            ],
            "ip6 saddr 2001:db8:8000::/33 accept",
        ),
        (
            inet,
            rule(
                vec![M::CtState(vec![NftCtState::Related, NftCtState::Established])],
                vec![A::Accept],
            ),
            &[
                "[ ct load state => reg 1 ]",
                "[ bitwise reg 1 = ( reg 1 & 0x00000006 ) ^ 0x00000000 ]",
                "[ cmp neq reg 1 0x00000000 ]",
                "[ immediate reg 0 accept ]",
            ],
            "ct state established,related accept",
        ),
        (
            inet,
            rule(vec![M::Mark(0x100)], vec![A::Accept]),
            &[
                "[ meta load mark => reg 1 ]",
                "[ cmp eq reg 1 0x00000100 ]",
                "[ immediate reg 0 accept ]",
            ],
            "meta mark 0x00000100 accept",
        ),
        (
            inet,
            rule(vec![], vec![A::SetMark(0x101), A::Jump("sub".into())]),
            &[
                "[ immediate reg 1 0x00000101 ]",
                "[ meta set mark with reg 1 ]",
                "[ immediate reg 0 jump -> sub ]",
            ],
            "meta mark set 0x00000101 jump sub",
        ),
        (
            inet,
            rule(vec![M::L4Proto(NftL4Proto::Tcp), M::TcpSyn], vec![A::ClampMssToPmtu]),
            &[
                "[ meta load l4proto => reg 1 ]",
                "[ cmp eq reg 1 0x00000006 ]",
                "[ payload load 1b @ transport header + 13 => reg 1 ]",
                "[ bitwise reg 1 = ( reg 1 & 0x00000006 ) ^ 0x00000000 ]",
                "[ cmp eq reg 1 0x00000002 ]",
                "[ rt load tcpmss => reg 1 ]",
                "[ byteorder reg 1 = hton(reg 1, 2, 2) ]",
                "[ exthdr write tcpopt reg 1 => 2b @ 2 + 2 ]",
            ],
            "tcp flags syn / syn,rst tcp option maxseg size set rt mtu",
        ),
        (
            inet,
            rule(vec![M::TcpSyn], vec![A::SetMss(1400)]),
            &[
                "[ meta load l4proto => reg 1 ]",
                "[ cmp eq reg 1 0x00000006 ]",
                "[ payload load 1b @ transport header + 13 => reg 1 ]",
                "[ bitwise reg 1 = ( reg 1 & 0x00000006 ) ^ 0x00000000 ]",
                "[ cmp eq reg 1 0x00000002 ]",
                "[ immediate reg 1 0x00007805 ]",
                "[ exthdr write tcpopt reg 1 => 2b @ 2 + 2 ]",
            ],
            "tcp flags syn / syn,rst tcp option maxseg size set 1400",
        ),
        (
            inet,
            rule(vec![M::L4Proto(NftL4Proto::Icmpv6)], vec![A::Accept]),
            &[
                "[ meta load l4proto => reg 1 ]",
                "[ cmp eq reg 1 0x0000003a ]",
                "[ immediate reg 0 accept ]",
            ],
            "meta l4proto ipv6-icmp accept",
        ),
        (
            inet,
            rule(vec![M::NfProto(NftIpFamily::Ipv6)], vec![A::Accept]),
            &[
                "[ meta load nfproto => reg 1 ]",
                "[ cmp eq reg 1 0x0000000a ]",
                "[ immediate reg 0 accept ]",
            ],
            "meta nfproto ipv6 accept",
        ),
        (
            inet,
            rule(vec![M::OifName("wan0".into())], vec![A::Masquerade { ports: None }]),
            &[
                "[ meta load oifname => reg 1 ]",
                "[ cmp eq reg 1 0x306e6177 0x00000000 0x00000000 0x00000000 ]",
                "[ masq ]",
            ],
            "oifname \"wan0\" masquerade",
        ),
        (
            inet,
            rule(
                vec![M::L4Proto(NftL4Proto::Udp), M::OifName("wan0".into())],
                vec![A::Masquerade { ports: Some((1024, 65535)) }],
            ),
            &[
                "[ meta load l4proto => reg 1 ]",
                "[ cmp eq reg 1 0x00000011 ]",
                "[ meta load oifname => reg 1 ]",
                "[ cmp eq reg 1 0x306e6177 0x00000000 0x00000000 0x00000000 ]",
                "[ immediate reg 1 0x00000004 ]",
                "[ immediate reg 2 0x0000ffff ]",
                "[ masq proto_min reg 1 proto_max reg 2 flags 0x2 ]",
            ],
            "meta l4proto udp oifname \"wan0\" masquerade to :1024-65535",
        ),
        (
            inet,
            rule(
                vec![M::NfProto(NftIpFamily::Ipv4), M::L4Proto(NftL4Proto::Tcp)],
                vec![A::Snat {
                    address: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)),
                    last: None,
                    ports: Some((1000, 2000)),
                }],
            ),
            &[
                "[ meta load nfproto => reg 1 ]",
                "[ cmp eq reg 1 0x00000002 ]",
                "[ meta load l4proto => reg 1 ]",
                "[ cmp eq reg 1 0x00000006 ]",
                "[ immediate reg 1 0x010200c0 ]",
                "[ immediate reg 2 0x0000e803 ]",
                "[ immediate reg 3 0x0000d007 ]",
                "[ nat snat ip addr_min reg 1 proto_min reg 2 proto_max reg 3 flags 0x2 ]",
            ],
            "meta nfproto ipv4 meta l4proto tcp snat ip to 192.0.2.1:1000-2000",
        ),
        (
            inet,
            rule(
                vec![],
                vec![A::Snat {
                    address: "2001:db8::1".parse().expect("ip"),
                    last: None,
                    ports: None,
                }],
            ),
            &[
                "[ immediate reg 1 0xb80d0120 0x00000000 0x00000000 0x01000000 ]",
                "[ nat snat ip6 addr_min reg 1 ]",
            ],
            "snat ip6 to 2001:db8::1",
        ),
        (
            inet,
            rule(
                vec![M::L4Proto(NftL4Proto::Tcp), M::Dport(8080)],
                vec![A::Dnat { address: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), port: Some(80) }],
            ),
            &[
                "[ meta load l4proto => reg 1 ]",
                "[ cmp eq reg 1 0x00000006 ]",
                "[ payload load 2b @ transport header + 2 => reg 1 ]",
                "[ cmp eq reg 1 0x0000901f ]",
                "[ immediate reg 1 0x0200000a ]",
                "[ immediate reg 2 0x00005000 ]",
                "[ nat dnat ip addr_min reg 1 proto_min reg 2 flags 0x2 ]",
            ],
            "tcp dport 8080 dnat ip to 10.0.0.2:80",
        ),
        (
            inet,
            rule(
                vec![M::L4Proto(NftL4Proto::Udp), M::Dport(53)],
                vec![A::Dnat {
                    address: IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2)),
                    port: Some(53),
                }],
            ),
            &[
                "[ meta load l4proto => reg 1 ]",
                "[ cmp eq reg 1 0x00000011 ]",
                "[ payload load 2b @ transport header + 2 => reg 1 ]",
                "[ cmp eq reg 1 0x00003500 ]",
                "[ immediate reg 1 0xb80d0120 0x00000000 0x00000000 0x02000000 ]",
                "[ immediate reg 2 0x00003500 ]",
                "[ nat dnat ip6 addr_min reg 1 proto_min reg 2 flags 0x2 ]",
            ],
            "udp dport 53 dnat ip6 to [2001:db8::2]:53",
        ),
        (
            inet,
            rule(
                vec![M::L4Proto(NftL4Proto::Tcp), M::OifName("x".into()), M::Dport(80)],
                vec![A::Accept],
            ),
            &[
                "[ meta load l4proto => reg 1 ]",
                "[ cmp eq reg 1 0x00000006 ]",
                "[ meta load oifname => reg 1 ]",
                "[ cmp eq reg 1 0x00000078 0x00000000 0x00000000 0x00000000 ]",
                "[ payload load 2b @ transport header + 2 => reg 1 ]",
                "[ cmp eq reg 1 0x00005000 ]",
                "[ immediate reg 0 accept ]",
            ],
            "oifname \"x\" tcp dport 80 accept",
        ),
        (
            NftFamily::Ip,
            rule(vec![M::Ip4Saddr(v4("1.2.3.4/32"))], vec![A::Masquerade { ports: None }]),
            &[
                "[ payload load 4b @ network header + 12 => reg 1 ]",
                "[ cmp eq reg 1 0x04030201 ]",
                "[ masq ]",
            ],
            "ip saddr 1.2.3.4 masquerade",
        ),
        (
            NftFamily::Ip,
            rule(
                vec![M::L4Proto(NftL4Proto::Tcp)],
                vec![A::Dnat { address: IpAddr::V4(Ipv4Addr::new(1, 2, 3, 4)), port: Some(80) }],
            ),
            &[
                "[ meta load l4proto => reg 1 ]",
                "[ cmp eq reg 1 0x00000006 ]",
                "[ immediate reg 1 0x04030201 ]",
                "[ immediate reg 2 0x00005000 ]",
                "[ nat dnat ip addr_min reg 1 proto_min reg 2 flags 0x2 ]",
            ],
            "meta l4proto tcp dnat to 1.2.3.4:80",
        ),
        (
            NftFamily::Ip,
            rule(
                vec![M::Ip4Saddr(v4("192.168.10.0/24"))],
                vec![A::SetMarkHash {
                    fields: vec![NftHashField::Ip4Saddr, NftHashField::Ip4Daddr],
                    modulus: 2,
                    offset: 0x7f00_0000,
                }],
            ),
            &[
                "[ payload load 3b @ network header + 12 => reg 1 ]",
                "[ cmp eq reg 1 0x000aa8c0 ]",
                "[ payload load 4b @ network header + 12 => reg 2 ]",
                "[ payload load 4b @ network header + 16 => reg 13 ]",
                "[ hash reg 1 = jhash(reg 2, 8, 0x0) % mod 2 offset 2130706432 ]",
                "[ meta set mark with reg 1 ]",
            ],
            "ip saddr 192.168.10.0/24 meta mark set jhash ip saddr . ip daddr mod 2 seed 0x0 \
             offset 2130706432",
        ),
        (
            inet,
            rule(
                vec![],
                vec![A::SetMarkHash {
                    fields: vec![NftHashField::Ip4Daddr],
                    modulus: 3,
                    offset: 0,
                }],
            ),
            &[
                "[ meta load nfproto => reg 1 ]",
                "[ cmp eq reg 1 0x00000002 ]",
                "[ payload load 4b @ network header + 16 => reg 2 ]",
                "[ hash reg 1 = jhash(reg 2, 4, 0x0) % mod 3 ]",
                "[ meta set mark with reg 1 ]",
            ],
            "meta mark set jhash ip daddr mod 3 seed 0x0",
        ),
        (
            inet,
            rule(
                vec![M::NfProto(NftIpFamily::Ipv4), M::L4Proto(NftL4Proto::Tcp)],
                vec![A::SetMarkHash {
                    fields: vec![NftHashField::Ip4Daddr, NftHashField::Ip4Saddr],
                    modulus: 4,
                    offset: 16,
                }],
            ),
            &[
                "[ meta load nfproto => reg 1 ]",
                "[ cmp eq reg 1 0x00000002 ]",
                "[ meta load l4proto => reg 1 ]",
                "[ cmp eq reg 1 0x00000006 ]",
                "[ payload load 4b @ network header + 16 => reg 2 ]",
                "[ payload load 4b @ network header + 12 => reg 13 ]",
                "[ hash reg 1 = jhash(reg 2, 8, 0x0) % mod 4 offset 16 ]",
                "[ meta set mark with reg 1 ]",
            ],
            "meta l4proto tcp meta mark set jhash ip daddr . ip saddr mod 4 seed 0x0 offset 16",
        ),
        (
            NftFamily::Ip,
            rule(
                vec![],
                vec![A::SetMarkHash {
                    fields: [NftHashField::Ip4Saddr, NftHashField::Ip4Daddr].repeat(3),
                    modulus: 2,
                    offset: 1,
                }],
            ),
            // The sixth field crosses into the next 16-byte register, which nft names `reg 3`.
            &[
                "[ payload load 4b @ network header + 12 => reg 2 ]",
                "[ payload load 4b @ network header + 16 => reg 13 ]",
                "[ payload load 4b @ network header + 12 => reg 14 ]",
                "[ payload load 4b @ network header + 16 => reg 15 ]",
                "[ payload load 4b @ network header + 12 => reg 3 ]",
                "[ payload load 4b @ network header + 16 => reg 17 ]",
                "[ hash reg 1 = jhash(reg 2, 24, 0x0) % mod 2 offset 1 ]",
                "[ meta set mark with reg 1 ]",
            ],
            "meta mark set jhash ip saddr . ip daddr . ip saddr . ip daddr . ip saddr . ip daddr \
             mod 2 seed 0x0 offset 1",
        ),
    ]
}

#[test]
fn every_construct_encodes_as_nft_does() {
    for (family, r, want, _) in cases() {
        let (exprs, udata) = encoded(family, &r);
        assert_eq!(exprs, want, "{}", r.to_nft(family));
        let want_udata = format!("userdata = {{ \\x00\\x19{}\\x00 }}", r.comment());
        assert_eq!(udata, want_udata, "{}", r.to_nft(family));
    }
}

#[test]
fn every_construct_displays_as_nft_lists_it() {
    for (family, r, _, want) in cases() {
        assert_eq!(r.to_nft(family), format!("{want} comment \"{}\"", r.comment()));
    }
}

#[test]
fn every_variant_is_covered() {
    let all = cases();
    let has_match =
        |f: fn(&NftMatch) -> bool| all.iter().any(|(_, r, _, _)| r.matches.iter().any(f));
    let has_action =
        |f: fn(&NftAction) -> bool| all.iter().any(|(_, r, _, _)| r.actions.iter().any(f));
    assert!(has_match(|m| matches!(m, M::IifName(_))));
    assert!(has_match(|m| matches!(m, M::OifName(_))));
    assert!(has_match(|m| matches!(m, M::NfProto(_))));
    assert!(has_match(|m| matches!(m, M::Ip4Saddr(_))));
    assert!(has_match(|m| matches!(m, M::Ip4Daddr(_))));
    assert!(has_match(|m| matches!(m, M::Ip6Saddr(_))));
    assert!(has_match(|m| matches!(m, M::Ip6Daddr(_))));
    assert!(has_match(|m| matches!(m, M::L4Proto(_))));
    assert!(has_match(|m| matches!(m, M::Dport(_))));
    assert!(has_match(|m| matches!(m, M::CtState(_))));
    assert!(has_match(|m| matches!(m, M::Mark(_))));
    assert!(has_match(|m| matches!(m, M::TcpSyn)));
    assert!(has_action(|a| matches!(a, A::Accept)));
    assert!(has_action(|a| matches!(a, A::Drop)));
    assert!(has_action(|a| matches!(a, A::Return)));
    assert!(has_action(|a| matches!(a, A::Jump(_))));
    assert!(has_action(|a| matches!(a, A::Masquerade { ports: None })));
    assert!(has_action(|a| matches!(a, A::Masquerade { ports: Some(_) })));
    assert!(has_action(|a| matches!(a, A::Snat { ports: Some(_), .. })));
    assert!(has_action(|a| matches!(a, A::Snat { ports: None, .. })));
    assert!(has_action(|a| matches!(a, A::Dnat { .. })));
    assert!(has_action(|a| matches!(a, A::SetMark(_))));
    assert!(has_action(|a| matches!(a, A::SetMarkHash { .. })));
    assert!(has_action(|a| matches!(a, A::ClampMssToPmtu)));
    assert!(has_action(|a| matches!(a, A::SetMss(_))));
}

#[test]
fn table_carries_comment_and_chains_their_hooks() {
    let mut spec = table(NftFamily::Inet, vec![rule(vec![], vec![A::Accept])]);
    let base = NftBaseChain {
        chain_type: NftChainType::Filter,
        hook: NftHook::Forward,
        priority: -5,
        policy: NftPolicy::Drop,
    };
    spec.chains[0].base = Some(base);
    let batch = create(&spec).expect("encodes");

    let tables = messages(&batch, libc::NFT_MSG_NEWTABLE);
    assert_eq!(tables.len(), 1);
    let t = sys::parse_table(&tables[0]).expect("parses");
    assert_eq!((t.name.as_str(), t.family), ("routerd_t", libc::NFPROTO_INET as u32));
    let comment = t.userdata.as_deref().and_then(udata::decode_comment);
    assert_eq!(comment.as_deref(), Some("routerd owner=test/owner"));

    let chains: Vec<_> = messages(&batch, libc::NFT_MSG_NEWCHAIN)
        .iter()
        .map(|m| sys::parse_chain(m).expect("parses"))
        .collect();
    assert_eq!(chains.len(), 2);
    assert_eq!(chains[0].name, "c");
    assert_eq!(chains[0].hook, Some(libc::NF_INET_FORWARD as u32));
    assert_eq!(chains[0].priority, Some(-5));
    assert_eq!(chains[0].chain_type.as_deref(), Some("filter"));
    assert_eq!(chains[0].policy, Some(libc::NF_DROP as u32));
    assert_eq!((chains[1].name.as_str(), chains[1].hook), ("sub", None));

    let rules = messages(&batch, libc::NFT_MSG_NEWRULE);
    let r = sys::parse_rule(&rules[0]).expect("parses");
    assert_eq!((r.table.as_str(), r.chain.as_str()), ("routerd_t", "c"));
    let comment = r.userdata.as_deref().and_then(udata::decode_comment);
    assert_eq!(comment, Some(spec.chains[0].rules[0].comment()));

    assert_eq!(batch.labels.len(), 4);
    assert_eq!(batch.label(batch.seqs.start), "add table inet/routerd_t");
    assert_eq!(batch.label(batch.seqs.end), "commit");
}

#[test]
fn replace_deletes_then_adds_in_one_batch() {
    let spec = table(NftFamily::Ip6, vec![]);
    let batch = replace(&spec).expect("encodes");
    let kinds: Vec<u16> =
        transport::split(&batch.bytes).expect("well-formed").iter().map(|m| m.kind).collect();
    let t = transport::nft_type;
    let (begin, end) = (libc::NFNL_MSG_BATCH_BEGIN as u16, libc::NFNL_MSG_BATCH_END as u16);
    assert_eq!(
        kinds,
        [
            begin,
            t(libc::NFT_MSG_NEWTABLE),
            t(libc::NFT_MSG_DELTABLE),
            t(libc::NFT_MSG_NEWTABLE),
            t(libc::NFT_MSG_NEWCHAIN),
            t(libc::NFT_MSG_NEWCHAIN),
            end
        ]
    );
    assert_eq!(batch.labels[1], "delete table ip6/routerd_t");
}

#[test]
fn delete_is_one_message() {
    let batch = delete(NftFamily::Inet, "routerd_t").expect("encodes");
    assert_eq!(messages(&batch, libc::NFT_MSG_DELTABLE).len(), 1);
    assert_eq!(batch.labels, ["delete table inet/routerd_t"]);
}

#[test]
fn unencodable_rules_are_refused() {
    let bad = [
        (NftFamily::Inet, rule(vec![M::IifName("a-very-long-name".into())], vec![])),
        (NftFamily::Inet, rule(vec![M::IifName(String::new())], vec![])),
        (NftFamily::Inet, rule(vec![M::Dport(80)], vec![])),
        (NftFamily::Inet, rule(vec![M::L4Proto(NftL4Proto::Icmp), M::Dport(80)], vec![])),
        (NftFamily::Inet, rule(vec![M::L4Proto(NftL4Proto::Udp), M::TcpSyn], vec![])),
        (NftFamily::Inet, rule(vec![M::CtState(vec![])], vec![])),
        (NftFamily::Inet, rule(vec![], vec![A::Jump("nowhere".into())])),
        (NftFamily::Inet, rule(vec![], vec![A::Masquerade { ports: Some((2, 1)) }])),
        (
            NftFamily::Inet,
            rule(
                vec![M::NfProto(NftIpFamily::Ipv6), M::Ip4Saddr("10.0.0.0/8".parse().expect("p"))],
                vec![],
            ),
        ),
        (NftFamily::Ip, rule(vec![M::Ip6Saddr("::1/128".parse().expect("p"))], vec![])),
        (NftFamily::Ip6, rule(vec![M::Ip4Daddr("10.0.0.0/8".parse().expect("p"))], vec![])),
        (
            NftFamily::Ip,
            rule(
                vec![],
                vec![A::Snat {
                    address: "2001:db8::1".parse().expect("ip"),
                    last: None,
                    ports: None,
                }],
            ),
        ),
        (NftFamily::Ip, rule(vec![], vec![hash(vec![], 2, 0)])),
        (NftFamily::Ip, rule(vec![], vec![hash(vec![NftHashField::Ip4Saddr], 0, 0)])),
        (NftFamily::Ip, rule(vec![], vec![hash(vec![NftHashField::Ip4Saddr], 2, u32::MAX)])),
        (NftFamily::Ip, rule(vec![], vec![hash(vec![NftHashField::Ip4Saddr; 13], 2, 0)])),
        (NftFamily::Ip6, rule(vec![], vec![hash(vec![NftHashField::Ip4Saddr], 2, 0)])),
    ];
    for (family, r) in bad {
        assert!(create(&table(family, vec![r.clone()])).is_err(), "{r:?} in {family:?}");
    }
}

#[test]
fn hash_fills_every_register_up_to_the_last() {
    let twelve = rule(vec![], vec![hash(vec![NftHashField::Ip4Daddr; 12], 7, 0x7f00_0000)]);
    let (exprs, _) = encoded(NftFamily::Ip, &twelve);
    assert_eq!(exprs[11], "[ payload load 4b @ network header + 16 => reg 23 ]");
    assert_eq!(exprs[12], "[ hash reg 1 = jhash(reg 2, 48, 0x0) % mod 7 offset 2130706432 ]");
    let top = rule(vec![], vec![hash(vec![NftHashField::Ip4Saddr], 2, u32::MAX - 1)]);
    assert!(create(&table(NftFamily::Ip, vec![top])).is_ok(), "offset + modulus - 1 fits");
}

#[test]
fn overlong_table_comment_is_refused() {
    let mut spec = table(NftFamily::Inet, vec![]);
    spec.owner = "x".repeat(200);
    assert!(create(&spec).is_err());
}
