//! Tests of [`super`]: the line of every option form routerd writes, and the names that need
//! quoting. The lines are those `dnsmasq --test` accepts (dnsmasq 2.90).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use super::*;

fn v4(s: &str) -> Ipv4Addr {
    s.parse().expect("test address")
}

fn v6(s: &str) -> Ipv6Addr {
    s.parse().expect("test address")
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("test address")
}

fn hours(h: u64) -> Duration {
    Duration::from_secs(h * 3600)
}

#[test]
fn options_without_a_value_are_their_name() {
    assert_eq!(DnsmasqOption::NoResolv.to_string(), "no-resolv");
    assert_eq!(DnsmasqOption::EnableRa.to_string(), "enable-ra");
    assert_eq!(DnsmasqOption::DhcpAuthoritative.to_string(), "dhcp-authoritative");
}

#[test]
fn interface_port_and_cache_size_take_their_value() {
    assert_eq!(DnsmasqOption::Interface("lan0".into()).to_string(), "interface=lan0");
    assert_eq!(DnsmasqOption::Port(0).to_string(), "port=0");
    assert_eq!(DnsmasqOption::CacheSize(0).to_string(), "cache-size=0");
    assert_eq!(DnsmasqOption::CacheSize(1500).line(), "cache-size=1500");
}

#[test]
fn a_server_for_every_name_is_its_address_of_either_family() {
    let server = |a| DnsmasqOption::Server { domain: None, address: ip(a) };
    assert_eq!(server("1.1.1.1").to_string(), "server=1.1.1.1");
    assert_eq!(server("2606:4700:4700::1111").to_string(), "server=2606:4700:4700::1111");
}

#[test]
fn a_domain_server_writes_an_ipv6_address_bare() {
    // dnsmasq refuses `server=/d/[2001:db8::1]` ("Name or service not known").
    let server = |d: &str, a| DnsmasqOption::Server { domain: Some(d.into()), address: ip(a) };
    assert_eq!(server("corp.example", "10.0.0.1").to_string(), "server=/corp.example/10.0.0.1");
    assert_eq!(
        server("flets-east.jp", "2001:db8::53").to_string(),
        "server=/flets-east.jp/2001:db8::53"
    );
    // An empty domain: unqualified names.
    assert_eq!(server("", "10.0.0.1").to_string(), "server=//10.0.0.1");
}

#[test]
fn addresses_are_written_in_their_canonical_form() {
    let a = DnsmasqOption::Server { domain: None, address: ip("2001:DB8:0:0::54") };
    assert_eq!(a.to_string(), "server=2001:db8::54");
    let a = DnsmasqOption::Server { domain: None, address: ip("::ffff:192.0.2.1") };
    assert_eq!(a.to_string(), "server=::ffff:192.0.2.1");
}

#[test]
fn an_ipv4_range_sets_its_tag_and_writes_the_lease_in_seconds() {
    let range = |lease| DnsmasqOption::DhcpRange {
        tag: "lan-pool".into(),
        start: v4("192.168.10.100"),
        end: v4("192.168.10.199"),
        lease,
    };
    assert_eq!(range(None).to_string(), "dhcp-range=set:lan-pool,192.168.10.100,192.168.10.199");
    assert_eq!(
        range(Some(hours(12))).to_string(),
        "dhcp-range=set:lan-pool,192.168.10.100,192.168.10.199,43200"
    );
}

#[test]
fn a_lease_shorter_than_two_minutes_is_written_as_two_minutes_and_fractions_are_dropped() {
    let range = |secs: f64| {
        DnsmasqOption::DhcpRange {
            tag: "p".into(),
            start: v4("10.0.0.10"),
            end: v4("10.0.0.20"),
            lease: Some(Duration::from_secs_f64(secs)),
        }
        .to_string()
    };
    assert_eq!(range(30.0), "dhcp-range=set:p,10.0.0.10,10.0.0.20,120");
    assert_eq!(range(0.0), "dhcp-range=set:p,10.0.0.10,10.0.0.20,120");
    assert_eq!(range(120.0), "dhcp-range=set:p,10.0.0.10,10.0.0.20,120");
    assert_eq!(range(5400.5), "dhcp-range=set:p,10.0.0.10,10.0.0.20,5400");
}

#[test]
fn an_ipv6_range_is_built_from_the_constructor_links_addresses() {
    let range = |mode, lease| DnsmasqOption::DhcpRange6 {
        tag: "lan-ra".into(),
        start: Ipv6Addr::UNSPECIFIED,
        constructor: "lan0".into(),
        mode,
        lease,
    };
    assert_eq!(
        range(Ipv6RangeMode::RaStateless, Some(hours(1))).to_string(),
        "dhcp-range=set:lan-ra,::,constructor:lan0,ra-stateless,3600"
    );
    assert_eq!(
        range(Ipv6RangeMode::RaOnly, None).to_string(),
        "dhcp-range=set:lan-ra,::,constructor:lan0,ra-only"
    );
}

#[test]
fn an_ipv6_lease_dnsmasq_would_read_as_a_prefix_length_follows_the_prefix_length() {
    // `ra-only,120` is "prefix length must be exactly 64 for RA subnets" to dnsmasq.
    let range = |secs| {
        DnsmasqOption::DhcpRange6 {
            tag: "r".into(),
            start: Ipv6Addr::UNSPECIFIED,
            constructor: "lan0".into(),
            mode: Ipv6RangeMode::RaOnly,
            lease: Some(Duration::from_secs(secs)),
        }
        .to_string()
    };
    assert_eq!(range(60), "dhcp-range=set:r,::,constructor:lan0,ra-only,64,120");
    assert_eq!(range(128), "dhcp-range=set:r,::,constructor:lan0,ra-only,64,128");
    assert_eq!(range(129), "dhcp-range=set:r,::,constructor:lan0,ra-only,129");
}

#[test]
fn an_ipv4_option_lists_its_addresses_and_without_any_is_sent_empty() {
    let opt = |option, addresses: &[&str]| DnsmasqOption::DhcpOption {
        tag: "pool".into(),
        option,
        addresses: addresses.iter().map(|a| v4(a)).collect(),
    };
    assert_eq!(
        opt(Dhcp4OptionName::Router, &["192.168.1.1"]).to_string(),
        "dhcp-option=tag:pool,option:router,192.168.1.1"
    );
    assert_eq!(opt(Dhcp4OptionName::Router, &[]).to_string(), "dhcp-option=tag:pool,option:router");
    assert_eq!(
        opt(Dhcp4OptionName::DnsServer, &["192.0.2.53", "192.0.2.54"]).to_string(),
        "dhcp-option=tag:pool,option:dns-server,192.0.2.53,192.0.2.54"
    );
    assert_eq!(
        opt(Dhcp4OptionName::DnsServer, &[]).to_string(),
        "dhcp-option=tag:pool,option:dns-server"
    );
}

#[test]
fn an_ipv6_option_brackets_its_addresses() {
    let opt = |addresses: &[&str]| DnsmasqOption::DhcpOption6 {
        tag: "lan-ra".into(),
        option: Dhcp6OptionName::DnsServer,
        addresses: addresses.iter().map(|a| v6(a)).collect(),
    };
    assert_eq!(
        opt(&["2001:db8::53", "2001:db8::54"]).to_string(),
        "dhcp-option=tag:lan-ra,option6:dns-server,[2001:db8::53],[2001:db8::54]"
    );
    assert_eq!(opt(&["::"]).to_string(), "dhcp-option=tag:lan-ra,option6:dns-server,[::]");
    assert_eq!(opt(&[]).to_string(), "dhcp-option=tag:lan-ra,option6:dns-server");
}

#[test]
fn option_names_and_codes_are_dnsmasqs() {
    assert_eq!((Dhcp4OptionName::Router.as_str(), Dhcp4OptionName::Router.code()), ("router", 3));
    assert_eq!(Dhcp4OptionName::DnsServer.code(), 6);
    assert_eq!(
        (Dhcp6OptionName::DnsServer.as_str(), Dhcp6OptionName::DnsServer.code()),
        ("dns-server", 23)
    );
}

#[test]
fn ra_param_writes_the_default_interval_as_zero_and_the_lifetime_when_given() {
    let param = |mtu, router_lifetime| DnsmasqOption::RaParam {
        interface: "lan0".into(),
        mtu,
        interval: None,
        router_lifetime,
    };
    let none = Some(Duration::ZERO);
    assert_eq!(param(None, none).to_string(), "ra-param=lan0,0,0");
    assert_eq!(param(Some(RaMtu::Value(1454)), none).to_string(), "ra-param=lan0,mtu:1454,0,0");
    assert_eq!(param(Some(RaMtu::Value(1454)), None).to_string(), "ra-param=lan0,mtu:1454,0");
    assert_eq!(
        param(Some(RaMtu::Interface("wan0".into())), None).to_string(),
        "ra-param=lan0,mtu:wan0,0"
    );
    let set = DnsmasqOption::RaParam {
        interface: "lan0".into(),
        mtu: Some(RaMtu::Value(1280)),
        interval: Some(Duration::from_secs(60)),
        router_lifetime: Some(Duration::from_secs(1200)),
    };
    assert_eq!(set.to_string(), "ra-param=lan0,mtu:1280,60,1200");
}

#[test]
fn a_tag_with_a_comma_or_a_quote_is_quoted_with_quotes_and_backslashes_escaped() {
    let range = |tag: &str| DnsmasqOption::DhcpRange {
        tag: tag.into(),
        start: v4("10.0.0.10"),
        end: v4("10.0.0.20"),
        lease: None,
    };
    assert_eq!(range("lan,guest").to_string(), r#"dhcp-range=set:"lan,guest",10.0.0.10,10.0.0.20"#);
    assert_eq!(range(r#"a"b\c"#).to_string(), r#"dhcp-range=set:"a\"b\\c",10.0.0.10,10.0.0.20"#);
    // Neither `\` alone nor the other characters of a resource name need quotes.
    assert_eq!(range(r"a\b#c:d.e*").to_string(), r"dhcp-range=set:a\b#c:d.e*,10.0.0.10,10.0.0.20");
    let opt = DnsmasqOption::DhcpOption {
        tag: "lan,guest".into(),
        option: Dhcp4OptionName::Router,
        addresses: vec![],
    };
    assert_eq!(opt.to_string(), r#"dhcp-option=tag:"lan,guest",option:router"#);
    let opt6 = DnsmasqOption::DhcpOption6 {
        tag: "r,1".into(),
        option: Dhcp6OptionName::DnsServer,
        addresses: vec![v6("2001:db8::1")],
    };
    assert_eq!(opt6.to_string(), r#"dhcp-option=tag:"r,1",option6:dns-server,[2001:db8::1]"#);
}

#[test]
fn interface_names_with_a_comma_are_quoted_wherever_they_appear() {
    assert_eq!(DnsmasqOption::Interface("lan,0".into()).to_string(), r#"interface="lan,0""#);
    let range = DnsmasqOption::DhcpRange6 {
        tag: "r".into(),
        start: Ipv6Addr::UNSPECIFIED,
        constructor: "lan,0".into(),
        mode: Ipv6RangeMode::RaStateless,
        lease: None,
    };
    assert_eq!(range.to_string(), r#"dhcp-range=set:r,::,constructor:"lan,0",ra-stateless"#);
    let param = DnsmasqOption::RaParam {
        interface: "lan,0".into(),
        mtu: Some(RaMtu::Interface("wan,0".into())),
        interval: None,
        router_lifetime: Some(Duration::ZERO),
    };
    assert_eq!(param.to_string(), r#"ra-param="lan,0",mtu:"wan,0",0,0"#);
}

#[test]
fn name_is_the_text_before_the_equals_sign() {
    let lines = [
        DnsmasqOption::Interface("lan0".into()),
        DnsmasqOption::Port(0),
        DnsmasqOption::Server { domain: Some("x".into()), address: ip("10.0.0.1") },
        DnsmasqOption::CacheSize(1),
        DnsmasqOption::DhcpRange {
            tag: "t".into(),
            start: v4("10.0.0.1"),
            end: v4("10.0.0.2"),
            lease: None,
        },
        DnsmasqOption::DhcpOption6 {
            tag: "t".into(),
            option: Dhcp6OptionName::DnsServer,
            addresses: vec![],
        },
        DnsmasqOption::RaParam {
            interface: "l".into(),
            mtu: None,
            interval: None,
            router_lifetime: None,
        },
    ];
    for o in lines {
        assert_eq!(o.to_string().split('=').next(), Some(o.name()), "{o:?}");
    }
    assert_eq!(DnsmasqOption::EnableRa.name(), "enable-ra");
}
