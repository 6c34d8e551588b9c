//! Unit tests of the kernel-message conversions: messages are built the way the kernel sends
//! them and read back, and built messages are checked field by field.

use std::num::NonZeroI32;

use rtnetlink::packet_route::address::AddressHeaderFlags;
use rtnetlink::packet_route::route::RouteHeader;

use super::*;
use crate::artifact::ROUTERD_ROUTE_PROTOCOL;

fn net(s: &str) -> IpNet {
    s.parse().expect("test prefix")
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("test address")
}

fn kernel_link(index: u32, name: Option<&str>, flags: LinkFlags, mtu: u32) -> RouteNetlinkMessage {
    let mut link = LinkMessage::default();
    link.header.index = index;
    link.header.flags = flags;
    if let Some(name) = name {
        link.attributes.push(LinkAttribute::IfName(name.to_string()));
    }
    link.attributes.push(LinkAttribute::Mtu(mtu));
    RouteNetlinkMessage::NewLink(link)
}

fn kernel_route(family: AddressFamily, table: u8, attributes: Vec<RouteAttribute>) -> RouteMessage {
    let mut route = RouteMessage::default();
    route.header.address_family = family;
    route.header.table = table;
    route.header.kind = RouteType::Unicast;
    route.header.protocol = RouteProtocol::Static;
    route.attributes = attributes;
    route
}

fn spec(table: u32, destination: &str, gateway: Option<&str>, metric: u32) -> RouteSpec {
    RouteSpec {
        table,
        destination: net(destination),
        gateway: gateway.map(ip),
        oif: None,
        metric,
        protocol: ROUTERD_ROUTE_PROTOCOL,
    }
}

fn tlv(kind: u16, value: &[u8]) -> Vec<u8> {
    let len = u16::try_from(4 + value.len()).expect("small tlv");
    let mut out = [len.to_ne_bytes(), kind.to_ne_bytes()].concat();
    out.extend_from_slice(value);
    out.resize(out.len().next_multiple_of(4), 0);
    out
}

#[test]
fn link_from_nl_reads_name_admin_state_and_mtu() {
    let up = kernel_link(7, Some("lan0"), LinkFlags::Up | LinkFlags::Running, 9000);
    let read = link_from_nl(&up).expect("link");
    assert_eq!(read.index, 7);
    assert_eq!(
        (read.ifname.as_str(), read.admin_up, read.mtu, &read.info),
        ("lan0", true, Some(9000), &NlLinkInfo::Untyped)
    );
    let down = kernel_link(8, Some("wan"), LinkFlags::Broadcast, 1500);
    assert!(!link_from_nl(&down).expect("link").admin_up);
}

#[test]
fn link_from_nl_skips_links_without_a_name_and_other_messages() {
    assert_eq!(link_from_nl(&kernel_link(3, None, LinkFlags::Up, 1500)), None);
    assert_eq!(link_from_nl(&link_dump_request()), None);
}

#[test]
fn link_set_to_nl_touches_only_the_fields_given() {
    let nothing = LinkSpec { ifname: "x".into(), admin_up: None, mtu: None, kind: None };
    assert_eq!(link_set_to_nl(4, &nothing), None);

    let up = LinkSpec { ifname: "x".into(), admin_up: Some(true), mtu: None, kind: None };
    let Some(RouteNetlinkMessage::SetLink(msg)) = link_set_to_nl(4, &up) else {
        panic!("expected RTM_SETLINK")
    };
    assert_eq!(msg.header.index, 4);
    assert_eq!(msg.header.change_mask, LinkFlags::Up);
    assert_eq!(msg.header.flags, LinkFlags::Up);
    assert!(msg.attributes.is_empty());

    let down_mtu =
        LinkSpec { ifname: "x".into(), admin_up: Some(false), mtu: Some(1400), kind: None };
    let Some(RouteNetlinkMessage::SetLink(msg)) = link_set_to_nl(4, &down_mtu) else {
        panic!("expected RTM_SETLINK")
    };
    assert_eq!(msg.header.change_mask, LinkFlags::Up);
    assert_eq!(msg.header.flags, LinkFlags::empty());
    assert_eq!(msg.attributes, vec![LinkAttribute::Mtu(1400)]);

    let mtu_only = LinkSpec { ifname: "x".into(), admin_up: None, mtu: Some(1400), kind: None };
    let Some(RouteNetlinkMessage::SetLink(msg)) = link_set_to_nl(4, &mtu_only) else {
        panic!("expected RTM_SETLINK")
    };
    assert_eq!(msg.header.change_mask, LinkFlags::empty());
}

#[test]
fn address_to_nl_and_back_round_trips_for_both_families() {
    for prefix in ["192.0.2.1/24", "2001:db8::1/64"] {
        let RouteNetlinkMessage::NewAddress(msg) = address_to_nl(5, &net(prefix), false) else {
            panic!("expected RTM_NEWADDR")
        };
        let read = address_from_nl(&RouteNetlinkMessage::NewAddress(msg)).expect("address");
        assert_eq!(read, NlAddress { index: 5, address: net(prefix), usable: true });
    }
    assert!(matches!(
        address_to_nl(5, &net("192.0.2.1/24"), true),
        RouteNetlinkMessage::DelAddress(_)
    ));
}

#[test]
fn address_to_nl_gives_loopback_host_scope() {
    let RouteNetlinkMessage::NewAddress(msg) = address_to_nl(1, &net("127.0.0.2/8"), false) else {
        panic!("expected RTM_NEWADDR")
    };
    assert_eq!(msg.header.scope, AddressScope::Host);
}

#[test]
fn address_from_nl_prefers_local_over_peer_address() {
    let mut msg = AddressMessage::default();
    msg.header.family = AddressFamily::Inet;
    msg.header.prefix_len = 32;
    msg.header.index = 9;
    msg.attributes.push(AddressAttribute::Address(ip("10.9.9.9")));
    msg.attributes.push(AddressAttribute::Local(ip("10.0.0.1")));
    let read = address_from_nl(&RouteNetlinkMessage::NewAddress(msg)).expect("address");
    assert_eq!(read.address, net("10.0.0.1/32"));
}

#[test]
fn address_from_nl_reads_tentative_and_failed_addresses_as_unusable() {
    let message = |flags: Option<AddressFlags>| {
        let mut msg = AddressMessage::default();
        msg.header.family = AddressFamily::Inet6;
        msg.header.prefix_len = 64;
        msg.header.flags = AddressHeaderFlags::Permanent;
        msg.attributes.push(AddressAttribute::Address(ip("2001:db8::2")));
        msg.attributes.extend(flags.map(AddressAttribute::Flags));
        address_from_nl(&RouteNetlinkMessage::NewAddress(msg)).expect("address")
    };
    assert!(message(None).usable, "permanent");
    assert!(!message(Some(AddressFlags::Tentative | AddressFlags::Permanent)).usable);
    assert!(!message(Some(AddressFlags::Dadfailed)).usable);
    assert!(message(Some(AddressFlags::Permanent | AddressFlags::Noprefixroute)).usable);
}

#[test]
fn address_from_nl_skips_ipv6_link_local() {
    let mut msg = AddressMessage::default();
    msg.header.family = AddressFamily::Inet6;
    msg.header.prefix_len = 64;
    msg.attributes.push(AddressAttribute::Address(ip("fe80::1")));
    assert_eq!(address_from_nl(&RouteNetlinkMessage::NewAddress(msg)), None);
}

#[test]
fn route_from_nl_reads_table_destination_gateway_oif_metric_protocol() {
    let mut msg = kernel_route(
        AddressFamily::Inet,
        RouteHeader::RT_TABLE_UNSPEC,
        vec![
            RouteAttribute::Table(1000),
            RouteAttribute::Destination(RouteAddress::Inet("10.1.0.0".parse().expect("ip"))),
            RouteAttribute::Gateway(RouteAddress::Inet("192.0.2.1".parse().expect("ip"))),
            RouteAttribute::Oif(3),
            RouteAttribute::Priority(50),
        ],
    );
    msg.header.destination_prefix_length = 16;
    msg.header.protocol = RouteProtocol::Other(ROUTERD_ROUTE_PROTOCOL);
    let read = route_from_nl(&RouteNetlinkMessage::NewRoute(msg)).expect("route");
    assert_eq!(
        read,
        NlRoute {
            table: 1000,
            destination: net("10.1.0.0/16"),
            gateway: Some(ip("192.0.2.1")),
            oif: Some(3),
            metric: 50,
            protocol: ROUTERD_ROUTE_PROTOCOL,
        }
    );
}

#[test]
fn route_from_nl_defaults_destination_table_and_metric() {
    let msg = kernel_route(AddressFamily::Inet6, RouteHeader::RT_TABLE_MAIN, vec![]);
    let read = route_from_nl(&RouteNetlinkMessage::NewRoute(msg)).expect("route");
    assert_eq!(read.destination, net("::/0"));
    assert_eq!(read.table, 254);
    assert_eq!(read.metric, 0);
    assert_eq!(read.protocol, 4);
}

#[test]
fn route_from_nl_skips_local_table_and_non_unicast_routes() {
    let local = kernel_route(AddressFamily::Inet, 255, vec![]);
    assert_eq!(route_from_nl(&RouteNetlinkMessage::NewRoute(local)), None);
    let local_attr = kernel_route(AddressFamily::Inet, 0, vec![RouteAttribute::Table(255)]);
    assert_eq!(route_from_nl(&RouteNetlinkMessage::NewRoute(local_attr)), None);
    let mut blackhole = kernel_route(AddressFamily::Inet, 254, vec![]);
    blackhole.header.kind = RouteType::BlackHole;
    assert_eq!(route_from_nl(&RouteNetlinkMessage::NewRoute(blackhole)), None);
}

#[test]
fn route_from_nl_skips_kernel_ipv6_link_local_and_multicast_routes_only() {
    let v6 = |dst: &str, len: u8, protocol: RouteProtocol| {
        let addr = RouteAddress::Inet6(dst.parse().expect("ip"));
        let mut msg =
            kernel_route(AddressFamily::Inet6, 254, vec![RouteAttribute::Destination(addr)]);
        msg.header.destination_prefix_length = len;
        msg.header.protocol = protocol;
        route_from_nl(&RouteNetlinkMessage::NewRoute(msg))
    };
    assert_eq!(v6("fe80::", 64, RouteProtocol::Kernel), None);
    assert_eq!(v6("ff00::", 8, RouteProtocol::Kernel), None);
    assert!(v6("fe80::", 64, RouteProtocol::Static).is_some());
    assert!(v6("2001:db8::", 64, RouteProtocol::Kernel).is_some());
}

#[test]
fn route_from_nl_reads_an_ipv6_via_gateway_of_an_ipv4_route() {
    let via = RouteAttribute::Via(RouteVia::Inet6("fe80::1".parse().expect("ip")));
    let msg = kernel_route(AddressFamily::Inet, 254, vec![via]);
    let read = route_from_nl(&RouteNetlinkMessage::NewRoute(msg)).expect("route");
    assert_eq!(read.gateway, Some(ip("fe80::1")));
}

#[test]
fn route_to_nl_install_sets_protocol_scope_table_and_metric() {
    let with_gw = spec(100, "10.1.0.0/16", Some("192.0.2.1"), 20);
    let msg = route_to_nl(&with_gw, Some(4), RoutePurpose::Install);
    assert_eq!(msg.header.address_family, AddressFamily::Inet);
    assert_eq!(msg.header.destination_prefix_length, 16);
    assert_eq!(msg.header.table, 100);
    assert_eq!(msg.header.protocol, RouteProtocol::Other(ROUTERD_ROUTE_PROTOCOL));
    assert_eq!(msg.header.scope, RouteScope::Universe);
    assert_eq!(msg.header.kind, RouteType::Unicast);
    assert!(msg.attributes.contains(&RouteAttribute::Table(100)));
    assert!(msg.attributes.contains(&RouteAttribute::Oif(4)));
    assert!(msg.attributes.contains(&RouteAttribute::Priority(20)));
    let read = route_from_nl(&RouteNetlinkMessage::NewRoute(msg)).expect("route");
    assert_eq!(spec_fields(&read), (100, net("10.1.0.0/16"), Some(ip("192.0.2.1")), 20));

    let device = spec(70000, "0.0.0.0/0", None, 0);
    let msg = route_to_nl(&device, Some(4), RoutePurpose::Install);
    assert_eq!(msg.header.scope, RouteScope::Link);
    assert_eq!(msg.header.table, RouteHeader::RT_TABLE_UNSPEC);
    assert!(msg.attributes.contains(&RouteAttribute::Table(70000)));
    assert!(!msg.attributes.iter().any(|a| matches!(a, RouteAttribute::Destination(_))));
}

#[test]
fn route_to_nl_remove_matches_any_scope_and_names_protocol_without_oif() {
    let observed =
        RouteSpec { oif: Some("lan".into()), ..spec(100, "10.1.0.0/16", Some("192.0.2.1"), 20) };
    let msg = route_to_nl(&observed, Some(4), RoutePurpose::Remove);
    assert_eq!(msg.header.scope, RouteScope::NoWhere);
    assert_eq!(msg.header.protocol, RouteProtocol::Other(ROUTERD_ROUTE_PROTOCOL));
    assert!(!msg.attributes.iter().any(|a| matches!(a, RouteAttribute::Oif(_))));
    assert!(msg.attributes.contains(&RouteAttribute::Priority(20)));
}

#[test]
fn route_to_nl_puts_a_gateway_of_the_other_family_in_via() {
    let msg =
        route_to_nl(&spec(254, "10.0.0.0/8", Some("fe80::1"), 0), None, RoutePurpose::Install);
    assert!(msg.attributes.iter().any(|a| matches!(a, RouteAttribute::Via(RouteVia::Inet6(_)))));
}

#[test]
fn rule_to_nl_and_back_round_trips() {
    let rule = FwmarkRuleSpec { mark: 0x100, mask: 0xff00, table: 100, priority: 1000 };
    let RouteNetlinkMessage::NewRule(msg) = rule_to_nl(&rule, false) else {
        panic!("expected RTM_NEWRULE")
    };
    assert_eq!(msg.header.action, RuleAction::ToTable);
    assert_eq!(rule_from_nl(&RouteNetlinkMessage::NewRule(msg)), Some(rule.clone()));
    assert!(matches!(rule_to_nl(&rule, true), RouteNetlinkMessage::DelRule(_)));
}

#[test]
fn rule_from_nl_defaults_mask_and_reads_table_from_header() {
    let mut msg = RuleMessage::default();
    msg.header.family = AddressFamily::Inet;
    msg.header.table = 42;
    msg.attributes.push(RuleAttribute::FwMark(0x101));
    msg.attributes.push(RuleAttribute::Priority(900));
    let read = rule_from_nl(&RouteNetlinkMessage::NewRule(msg)).expect("rule");
    assert_eq!(read, FwmarkRuleSpec { mark: 0x101, mask: u32::MAX, table: 42, priority: 900 });
}

#[test]
fn rule_from_nl_skips_rules_without_fwmark() {
    let mut msg = RuleMessage::default();
    msg.header.family = AddressFamily::Inet;
    msg.attributes.push(RuleAttribute::Table(254));
    msg.attributes.push(RuleAttribute::Priority(32766));
    assert_eq!(rule_from_nl(&RouteNetlinkMessage::NewRule(msg)), None);
}

#[test]
fn error_from_nl_keeps_errno_and_extended_ack_message() {
    let mut error = ErrorMessage::default();
    error.code = NonZeroI32::new(-libc::ENETUNREACH);
    let mut payload = vec![0u8; NLMSGHDR_LEN];
    payload.extend(tlv(3, &[0, 0, 0, 0]));
    payload.extend(tlv(NLMSGERR_ATTR_MSG, b"Nexthop has invalid gateway\0"));
    error.header = payload;
    let NlError::Kernel { errno, message } = error_from_nl(&error) else {
        panic!("expected a kernel error")
    };
    assert_eq!(errno, libc::ENETUNREACH);
    assert!(message.starts_with("Nexthop has invalid gateway: "), "{message}");
    assert!(message.contains("unreachable"), "{message}");
}

#[test]
fn error_from_nl_without_extended_ack_gives_strerror() {
    let mut error = ErrorMessage::default();
    error.code = NonZeroI32::new(-libc::EEXIST);
    error.header = vec![0u8; NLMSGHDR_LEN];
    let NlError::Kernel { errno, message } = error_from_nl(&error) else {
        panic!("expected a kernel error")
    };
    assert_eq!(errno, libc::EEXIST);
    assert!(message.contains("exists"), "{message}");
}

#[test]
fn done_error_from_nl_reads_errno_and_message() {
    let mut done = DoneMessage::default();
    done.code = -libc::EINTR;
    done.extended_ack = tlv(NLMSGERR_ATTR_MSG, b"dump interrupted\0");
    assert!(matches!(
        done_error_from_nl(&done),
        NlError::Kernel { errno, ref message } if errno == libc::EINTR && message.starts_with("dump interrupted")
    ));
}

#[test]
fn ext_ack_message_stops_at_truncated_tlvs() {
    assert_eq!(ext_ack_message(&[8, 0, 1, 0]), None);
    assert_eq!(ext_ack_message(&[]), None);
}

fn spec_fields(route: &NlRoute) -> (u32, IpNet, Option<IpAddr>, u32) {
    (route.table, route.destination, route.gateway, route.metric)
}
