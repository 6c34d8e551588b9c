//! Unit tests of the link-type conversions (VLAN, ip6tnl): built messages go through the wire
//! format and are parsed back as the kernel would parse them, and kernel-shaped messages are
//! read into specs.

use rtnetlink::packet_core::NetlinkMessage;
use rtnetlink::packet_route::link::VlanFlags;

use super::*;

/// `message` serialized to bytes and parsed back, as the kernel receives it.
fn through_the_wire(message: RouteNetlinkMessage) -> RouteNetlinkMessage {
    let mut nl = NetlinkMessage::from(message);
    nl.finalize();
    let mut bytes = vec![0; nl.buffer_len()];
    nl.serialize(&mut bytes);
    let parsed = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&bytes).expect("parses back");
    match parsed.payload {
        rtnetlink::packet_core::NetlinkPayload::InnerMessage(inner) => inner,
        other => panic!("not an rtnetlink message: {other:?}"),
    }
}

fn new_link(message: &RouteNetlinkMessage) -> &LinkMessage {
    match message {
        RouteNetlinkMessage::NewLink(link) => link,
        other => panic!("expected RTM_NEWLINK, got {other:?}"),
    }
}

fn link_info(link: &LinkMessage) -> &[LinkInfo] {
    link.attributes
        .iter()
        .find_map(|a| match a {
            LinkAttribute::LinkInfo(infos) => Some(infos.as_slice()),
            _ => None,
        })
        .expect("IFLA_LINKINFO present")
}

fn tunnel_data(link: &LinkMessage) -> &[InfoIpTunnel] {
    let infos = link_info(link);
    assert_eq!(infos[0], LinkInfo::Kind(InfoKind::Ip6Tnl), "IFLA_INFO_KIND first");
    match &infos[1] {
        LinkInfo::Data(InfoData::IpTunnel(data)) => data,
        other => panic!("expected ip6tnl IFLA_INFO_DATA, got {other:?}"),
    }
}

fn ip6(s: &str) -> Ipv6Addr {
    s.parse().expect("test address")
}

fn vlan_spec(id: u16, protocol: VlanProtocol, mtu: Option<u32>) -> LinkSpec {
    LinkSpec {
        ifname: format!("eth1.{id}"),
        admin_up: Some(true),
        mtu,
        kind: Some(LinkKind::Vlan { parent: "eth1".into(), id, protocol }),
    }
}

fn tunnel_spec() -> Ip6TunnelSpec {
    Ip6TunnelSpec {
        ifname: "dslite0".into(),
        mode: Ip6TunnelMode::Ipip6,
        remote: ip6("2001:db8::1"),
        local: Some(ip6("2001:db8::2")),
        underlying: Some("eth0".into()),
        encap_limit: EncapLimit::None,
        mtu: Some(1460),
        admin_up: Some(true),
    }
}

#[test]
fn vlan_create_carries_name_parent_kind_id_protocol_mtu_and_up() {
    let spec = vlan_spec(20, VlanProtocol::Ieee8021Q, Some(1496));
    let sent = through_the_wire(vlan_create_to_nl(&spec, 3).expect("a vlan kind"));
    let link = new_link(&sent);
    assert_eq!(link.header.index, 0, "a new link has no index yet");
    assert_eq!((link.header.flags, link.header.change_mask), (LinkFlags::Up, LinkFlags::Up));
    assert!(link.attributes.contains(&LinkAttribute::IfName("eth1.20".into())));
    assert!(link.attributes.contains(&LinkAttribute::Link(3)), "IFLA_LINK = parent index");
    assert!(link.attributes.contains(&LinkAttribute::Mtu(1496)));
    assert_eq!(
        link_info(link),
        [
            LinkInfo::Kind(InfoKind::Vlan),
            LinkInfo::Data(InfoData::Vlan(vec![
                InfoVlan::Id(20),
                InfoVlan::Protocol(NlVlanProtocol::Ieee8021Q)
            ])),
        ]
    );
    // What we send is what we read back as a listed link.
    let read = link_from_nl(&sent).expect("named link");
    let expected = NlLinkInfo::Vlan { parent: Some(3), id: 20, protocol: VlanProtocol::Ieee8021Q };
    assert_eq!(read.info, expected);
}

#[test]
fn vlan_create_sends_802_1ad_and_leaves_mtu_to_the_kernel_when_absent() {
    let mut spec = vlan_spec(100, VlanProtocol::Ieee8021Ad, None);
    spec.admin_up = Some(false);
    let sent = through_the_wire(vlan_create_to_nl(&spec, 5).expect("a vlan kind"));
    let link = new_link(&sent);
    assert!(!link.attributes.iter().any(|a| matches!(a, LinkAttribute::Mtu(_))));
    assert_eq!((link.header.flags, link.header.change_mask), (LinkFlags::empty(), LinkFlags::Up));
    let read = link_from_nl(&sent).expect("named link");
    assert!(matches!(read.info, NlLinkInfo::Vlan { protocol: VlanProtocol::Ieee8021Ad, .. }));
}

#[test]
fn vlan_create_is_refused_for_links_without_a_vlan_kind() {
    let mut spec = vlan_spec(20, VlanProtocol::Ieee8021Q, None);
    spec.kind = None;
    assert_eq!(vlan_create_to_nl(&spec, 3), None);
    spec.kind = Some(LinkKind::Other { name: "veth".into() });
    assert_eq!(vlan_create_to_nl(&spec, 3), None);
}

#[test]
fn link_from_nl_reads_a_kernel_vlan_link() {
    // As `ip link add link eth1 name eth1.20 type vlan id 20` leaves it in a dump.
    let mut link = LinkMessage::default();
    link.header.index = 9;
    link.header.flags = LinkFlags::Up | LinkFlags::Broadcast;
    link.attributes = vec![
        LinkAttribute::IfName("eth1.20".into()),
        LinkAttribute::Mtu(1500),
        LinkAttribute::Link(2),
        LinkAttribute::LinkInfo(vec![
            LinkInfo::Kind(InfoKind::Vlan),
            LinkInfo::Data(InfoData::Vlan(vec![
                InfoVlan::Protocol(NlVlanProtocol::Ieee8021Q),
                InfoVlan::Id(20),
                InfoVlan::Flags((VlanFlags::ReorderHdr, VlanFlags::all())),
                InfoVlan::EgressQos(Vec::new()),
                InfoVlan::IngressQos(Vec::new()),
            ])),
        ]),
    ];
    let read =
        link_from_nl(&through_the_wire(RouteNetlinkMessage::NewLink(link))).expect("named link");
    assert_eq!((read.index, read.ifname.as_str(), read.admin_up), (9, "eth1.20", true));
    let expected = NlLinkInfo::Vlan { parent: Some(2), id: 20, protocol: VlanProtocol::Ieee8021Q };
    assert_eq!(read.info, expected);
}

#[test]
fn link_from_nl_names_other_link_types_and_untyped_links() {
    let mut veth = LinkMessage::default();
    veth.attributes = vec![
        LinkAttribute::IfName("ve0".into()),
        LinkAttribute::LinkInfo(vec![LinkInfo::Kind(InfoKind::Veth)]),
    ];
    let read =
        link_from_nl(&through_the_wire(RouteNetlinkMessage::NewLink(veth))).expect("named link");
    assert_eq!(read.info, NlLinkInfo::Other("veth".into()));
    let mut nic = LinkMessage::default();
    nic.attributes = vec![LinkAttribute::IfName("eth0".into())];
    let read = link_from_nl(&RouteNetlinkMessage::NewLink(nic)).expect("named link");
    assert_eq!(read.info, NlLinkInfo::Untyped);
}

#[test]
fn ip6_tunnel_create_carries_ipip6_endpoints_link_hop_limit_and_no_encap_limit() {
    let sent = through_the_wire(ip6_tunnel_to_nl(&tunnel_spec(), None, Some(2)));
    let link = new_link(&sent);
    assert_eq!(link.header.index, 0);
    assert_eq!((link.header.flags, link.header.change_mask), (LinkFlags::Up, LinkFlags::Up));
    assert!(link.attributes.contains(&LinkAttribute::IfName("dslite0".into())));
    assert!(link.attributes.contains(&LinkAttribute::Mtu(1460)));
    let data = tunnel_data(link);
    assert!(data.contains(&InfoIpTunnel::Protocol(IpProtocol::Ipip)));
    assert_eq!(u8::from(IpProtocol::Ipip), 4, "IFLA_IPTUN_PROTO = IPPROTO_IPIP");
    assert!(data.contains(&InfoIpTunnel::Local(IpAddr::V6(ip6("2001:db8::2")))));
    assert!(data.contains(&InfoIpTunnel::Remote(IpAddr::V6(ip6("2001:db8::1")))));
    assert!(data.contains(&InfoIpTunnel::Link(2)));
    assert!(data.contains(&InfoIpTunnel::Ttl(64)));
    assert!(data.contains(&InfoIpTunnel::Ipv6Flags(Ip6TunnelFlags::IgnEncapLimit)));
    assert!(!data.iter().any(|a| matches!(a, InfoIpTunnel::EncapLimit(_))), "encaplimit none");
    let read = link_from_nl(&sent).expect("named link");
    let NlLinkInfo::Ip6Tnl(tunnel) = read.info else { panic!("not an ip6tnl: {:?}", read.info) };
    assert_eq!(
        tunnel,
        NlIp6Tunnel {
            mode: Ip6TunnelMode::Ipip6,
            remote: ip6("2001:db8::1"),
            local: Some(ip6("2001:db8::2")),
            underlying: Some(2),
            encap_limit: EncapLimit::None,
        }
    );
}

#[test]
fn ip6_tunnel_change_targets_the_index_and_resets_what_the_spec_leaves_out() {
    let spec = Ip6TunnelSpec {
        local: None,
        underlying: None,
        encap_limit: EncapLimit::Limit(4),
        mtu: None,
        admin_up: None,
        ..tunnel_spec()
    };
    let sent = through_the_wire(ip6_tunnel_to_nl(&spec, Some(12), None));
    let link = new_link(&sent);
    assert_eq!(link.header.index, 12);
    assert_eq!(link.header.change_mask, LinkFlags::empty(), "admin state left as found");
    assert!(!link.attributes.iter().any(|a| matches!(a, LinkAttribute::IfName(_))));
    let data = tunnel_data(link);
    // Any local address and no underlying link are sent, so a change clears earlier ones.
    assert!(data.contains(&InfoIpTunnel::Local(IpAddr::V6(Ipv6Addr::UNSPECIFIED))));
    assert!(data.contains(&InfoIpTunnel::Link(0)));
    assert!(data.contains(&InfoIpTunnel::EncapLimit(4)));
    assert!(data.contains(&InfoIpTunnel::Ipv6Flags(Ip6TunnelFlags::empty())));
}

#[test]
fn link_from_nl_reads_a_kernel_ip6tnl_link() {
    // As `ip -6 tunnel add dslite0 mode ipip6 remote 2001:db8::1` leaves it in a dump.
    let mut link = LinkMessage::default();
    link.header.index = 14;
    link.attributes = vec![
        LinkAttribute::IfName("dslite0".into()),
        LinkAttribute::Mtu(1452),
        LinkAttribute::LinkInfo(vec![
            LinkInfo::Kind(InfoKind::Ip6Tnl),
            LinkInfo::Data(InfoData::IpTunnel(vec![
                InfoIpTunnel::Link(0),
                InfoIpTunnel::Local(IpAddr::V6(Ipv6Addr::UNSPECIFIED)),
                InfoIpTunnel::Remote(IpAddr::V6(ip6("2001:db8::1"))),
                InfoIpTunnel::Ttl(64),
                InfoIpTunnel::EncapLimit(4),
                InfoIpTunnel::FlowInfo(0),
                InfoIpTunnel::Ipv6Flags(Ip6TunnelFlags::CapXmit | Ip6TunnelFlags::CapRcv),
                InfoIpTunnel::Protocol(IpProtocol::Ipip),
                InfoIpTunnel::FwMark(0),
            ])),
        ]),
    ];
    let read =
        link_from_nl(&through_the_wire(RouteNetlinkMessage::NewLink(link))).expect("named link");
    assert_eq!((read.index, read.mtu), (14, Some(1452)));
    assert_eq!(
        read.info,
        NlLinkInfo::Ip6Tnl(NlIp6Tunnel {
            mode: Ip6TunnelMode::Ipip6,
            remote: ip6("2001:db8::1"),
            local: None,
            underlying: None,
            encap_limit: EncapLimit::Limit(4),
        })
    );
}

#[test]
fn link_delete_names_the_index_only() {
    let sent = through_the_wire(link_delete_to_nl(14));
    let RouteNetlinkMessage::DelLink(link) = sent else { panic!("expected RTM_DELLINK") };
    assert_eq!(link.header.index, 14);
    assert!(link.attributes.is_empty());
}

#[test]
fn a_ppp_unit_is_known_by_its_hardware_type_with_or_without_a_link_kind() {
    let ppp = |infos: Vec<LinkInfo>| {
        let mut link = LinkMessage::default();
        link.header.index = 7;
        link.header.link_layer_type = LinkLayerType::Ppp;
        link.header.flags = LinkFlags::Up;
        link.attributes = vec![LinkAttribute::IfName("ppp0".into()), LinkAttribute::Mtu(1492)];
        if !infos.is_empty() {
            link.attributes.push(LinkAttribute::LinkInfo(infos));
        }
        through_the_wire(RouteNetlinkMessage::NewLink(link))
    };
    let kinded = ppp(vec![LinkInfo::Kind(InfoKind::Other("ppp".into()))]);
    for message in [ppp(Vec::new()), kinded] {
        let listed = link_from_nl(&message).expect("a link");
        assert_eq!(listed.info, NlLinkInfo::Other(PPP_KIND.into()), "{message:?}");
        let artifacts = super::super::link::ppp_from_links(&[listed]);
        assert_eq!(artifacts.len(), 1);
        assert_eq!(artifacts[0].key.to_string(), "linux.ppp.link/ppp0");
        let crate::artifact::ArtifactSpec::PppLink(spec) = &artifacts[0].spec else {
            panic!("{artifacts:?}")
        };
        assert_eq!((spec.admin_up, spec.mtu), (Some(true), Some(1492)));
    }
    // An Ethernet link without a kind stays untyped.
    let mut eth = LinkMessage::default();
    eth.header.link_layer_type = LinkLayerType::Ether;
    eth.attributes = vec![LinkAttribute::IfName("eth0".into())];
    let listed = link_from_nl(&through_the_wire(RouteNetlinkMessage::NewLink(eth))).expect("link");
    assert_eq!(listed.info, NlLinkInfo::Untyped);
}
