//! Conversions between rtnetlink messages (`netlink-packet-route`) and routerd's artifact specs.
//!
//! This is the only module where kernel structs and our types meet: `*_from_nl` read a message
//! the kernel sent, `*_to_nl` build one to send. Pure: no I/O, no link-name resolution (callers
//! pass and receive interface indexes).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::{IpNet, Ipv6Net};
use rtnetlink::packet_core::{DoneMessage, ErrorMessage};
use rtnetlink::packet_route::address::{
    AddressAttribute, AddressFlags, AddressMessage, AddressScope,
};
use rtnetlink::packet_route::link::{
    InfoData, InfoIpTunnel, InfoKind, InfoVlan, Ip6TunnelFlags, LinkAttribute, LinkExtentMask,
    LinkFlags, LinkInfo, LinkLayerType, LinkMessage, VlanProtocol as NlVlanProtocol,
};
use rtnetlink::packet_route::route::{
    RouteAddress, RouteAttribute, RouteMessage, RouteProtocol, RouteScope, RouteType, RouteVia,
};
use rtnetlink::packet_route::rule::{RuleAction, RuleAttribute, RuleMessage};
use rtnetlink::packet_route::{AddressFamily, IpProtocol, RouteNetlinkMessage};

use super::conn::NlError;
use crate::artifact::{
    EncapLimit, FwmarkRuleSpec, Ip6TunnelMode, Ip6TunnelSpec, LinkKind, LinkSpec, RouteSpec,
    VlanProtocol,
};
use crate::kinds::route::MAIN_ROUTE_TABLE as RT_TABLE_MAIN;

/// `RT_TABLE_LOCAL`: the kernel's table of local and broadcast addresses, never listed.
pub(crate) const RT_TABLE_LOCAL: u32 = 255;

/// `NLMSGERR_ATTR_MSG`: the extended ack's human-readable message (`netlink(7)`).
const NLMSGERR_ATTR_MSG: u16 = 1;

/// Size of `struct nlmsghdr`; with `NETLINK_CAP_ACK` an error echoes only this of the request.
const NLMSGHDR_LEN: usize = 16;

/// IP family of a dump or an artifact kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IpFamily {
    /// `AF_INET`.
    V4,
    /// `AF_INET6`.
    V6,
}

/// Hop limit of the outer IPv6 header of tunnels routerd creates: iproute2's default
/// (`DEFAULT_TNL_HOP_LIMIT` in `ip/ip6tunnel.c`). Sent on every create and change, because the
/// kernel resets every parameter a change does not carry (`ip6_tnl_netlink_parms`).
const TUNNEL_HOP_LIMIT: u8 = 64;

/// A link as the kernel lists it (`RTM_NEWLINK`), with other links still as indexes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NlLink {
    /// `ifi_index`.
    pub index: u32,
    /// `IFLA_IFNAME`.
    pub ifname: String,
    /// `IFF_UP` of `ifi_flags`.
    pub admin_up: bool,
    /// `IFLA_MTU`.
    pub mtu: Option<u32>,
    /// `IFLA_LINKINFO`: the link type and the parameters routerd reads.
    pub info: NlLinkInfo,
}

/// The type of a listed link (`IFLA_INFO_KIND`) and its data (`IFLA_INFO_DATA`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum NlLinkInfo {
    /// No `IFLA_INFO_KIND`: a physical NIC, loopback.
    Untyped,
    /// `vlan`.
    Vlan {
        /// `IFLA_LINK`: index of the parent link; `None` when absent.
        parent: Option<u32>,
        /// `IFLA_VLAN_ID`.
        id: u16,
        /// `IFLA_VLAN_PROTOCOL`.
        protocol: VlanProtocol,
    },
    /// `ip6tnl`.
    Ip6Tnl(NlIp6Tunnel),
    /// Any other kind (or a vlan/ip6tnl without its data), by its `IFLA_INFO_KIND` string.
    Other(String),
}

/// The `IFLA_INFO_DATA` of an `ip6tnl` link, with the underlying link still as an index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NlIp6Tunnel {
    /// From `IFLA_IPTUN_PROTO`.
    pub mode: Ip6TunnelMode,
    /// `IFLA_IPTUN_REMOTE`; `::` when absent.
    pub remote: Ipv6Addr,
    /// `IFLA_IPTUN_LOCAL`; `None` when absent or `::`.
    pub local: Option<Ipv6Addr>,
    /// `IFLA_IPTUN_LINK`; `None` when absent or 0.
    pub underlying: Option<u32>,
    /// `IFLA_IPTUN_ENCAP_LIMIT`, or `none` when `IFLA_IPTUN_FLAGS` has
    /// `IP6_TNL_F_IGN_ENCAP_LIMIT`.
    pub encap_limit: EncapLimit,
}

/// An address as the kernel lists it (`RTM_NEWADDR`), with the link still as an index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NlAddress {
    /// `ifa_index`.
    pub index: u32,
    /// `IFA_LOCAL` (else `IFA_ADDRESS`) with `ifa_prefixlen`.
    pub address: IpNet,
    /// Neither tentative (duplicate address detection still running) nor failed duplicate
    /// address detection (`IFA_F_TENTATIVE`, `IFA_F_DADFAILED` of `IFA_FLAGS`, else of
    /// `ifa_flags`): the address can be used as a source.
    pub usable: bool,
}

/// A unicast route as the kernel lists it (`RTM_NEWROUTE`), with the output link as an index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NlRoute {
    /// `RTA_TABLE`, else `rtm_table`.
    pub table: u32,
    /// `RTA_DST` with `rtm_dst_len`; the family's default route when `RTA_DST` is absent.
    pub destination: IpNet,
    /// `RTA_GATEWAY`, or the address of `RTA_VIA` (IPv4 route via an IPv6 next hop).
    pub gateway: Option<IpAddr>,
    /// `RTA_OIF`.
    pub oif: Option<u32>,
    /// `RTA_PRIORITY`, 0 when absent.
    pub metric: u32,
    /// `rtm_protocol`.
    pub protocol: u8,
}

/// What a route message built by [`route_to_nl`] is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RoutePurpose {
    /// `RTM_NEWROUTE` (add or replace): scope and type as `ip route add` sets them.
    Install,
    /// `RTM_DELROUTE`: scope `RT_SCOPE_NOWHERE` (any), as `ip route del` sends.
    Remove,
}

impl IpFamily {
    /// The family of a prefix.
    pub(crate) fn of_net(net: &IpNet) -> Self {
        match net {
            IpNet::V4(_) => Self::V4,
            IpNet::V6(_) => Self::V6,
        }
    }

    fn to_nl(self) -> AddressFamily {
        match self {
            Self::V4 => AddressFamily::Inet,
            Self::V6 => AddressFamily::Inet6,
        }
    }
}

// ---- links ----

/// `RTM_GETLINK` dump request for every link, without the per-link IPv6 counters.
///
/// Nothing here reads them. `IFLA_EXT_MASK` with `RTEXT_FILTER_SKIP_STATS` leaves
/// `IFLA_INET6_STATS` and `IFLA_INET6_ICMP6STATS` out of each link's `IFLA_AF_SPEC`
/// (`inet6_fill_ifla6_attrs` in `net/ipv6/addrconf.c`; a kernel without the bit ignores it).
/// Each is a sum over every CPU's counters that the kernel folds for each link, and about 300
/// bytes of each link's message to parse.
pub(crate) fn link_dump_request() -> RouteNetlinkMessage {
    let mut message = LinkMessage::default();
    message.attributes.push(LinkAttribute::ExtMask(vec![LinkExtentMask::SkipStats]));
    RouteNetlinkMessage::GetLink(message)
}

/// The link type of PPP units (`ppp_link_ops` in `drivers/net/ppp/ppp_generic.c`).
pub(crate) const PPP_KIND: &str = "ppp";

/// Reads one `RTM_NEWLINK`; `None` for other messages or a link without `IFLA_IFNAME`.
pub(crate) fn link_from_nl(message: &RouteNetlinkMessage) -> Option<NlLink> {
    let RouteNetlinkMessage::NewLink(link) = message else { return None };
    let mut ifname = None;
    let mut mtu = None;
    let mut parent = None;
    let mut infos: &[LinkInfo] = &[];
    for attribute in &link.attributes {
        match attribute {
            LinkAttribute::IfName(name) => ifname = Some(name.clone()),
            LinkAttribute::Mtu(m) => mtu = Some(*m),
            LinkAttribute::Link(index) => parent = Some(*index),
            LinkAttribute::LinkInfo(i) => infos = i,
            _ => {}
        }
    }
    let mut info = link_info_from_nl(infos, parent);
    // A PPP unit made by pppd (PPPIOCNEWUNIT) may carry no IFLA_INFO_KIND; its hardware type
    // (ARPHRD_PPP) says what it is.
    if info == NlLinkInfo::Untyped && link.header.link_layer_type == LinkLayerType::Ppp {
        info = NlLinkInfo::Other(PPP_KIND.into());
    }
    Some(NlLink {
        index: link.header.index,
        ifname: ifname?,
        admin_up: link.header.flags.contains(LinkFlags::Up),
        mtu,
        info,
    })
}

/// Reads `IFLA_LINKINFO`; `parent` is the message's `IFLA_LINK`.
fn link_info_from_nl(infos: &[LinkInfo], parent: Option<u32>) -> NlLinkInfo {
    let mut kind = None;
    let mut data = None;
    for info in infos {
        match info {
            LinkInfo::Kind(k) => kind = Some(k),
            LinkInfo::Data(d) => data = Some(d),
            _ => {}
        }
    }
    match (kind, data) {
        (None, _) => NlLinkInfo::Untyped,
        (Some(InfoKind::Vlan), Some(InfoData::Vlan(vlan))) => vlan_from_nl(vlan, parent),
        (Some(InfoKind::Ip6Tnl), Some(InfoData::IpTunnel(tunnel))) => {
            NlLinkInfo::Ip6Tnl(ip6_tunnel_from_nl(tunnel))
        }
        (Some(other), _) => NlLinkInfo::Other(other.to_string()),
    }
}

fn vlan_from_nl(vlan: &[InfoVlan], parent: Option<u32>) -> NlLinkInfo {
    let mut id = None;
    // The kernel always sends IFLA_VLAN_PROTOCOL; 802.1Q is its default when creating.
    let mut protocol = VlanProtocol::Ieee8021Q;
    for attribute in vlan {
        match attribute {
            InfoVlan::Id(i) => id = Some(*i),
            InfoVlan::Protocol(NlVlanProtocol::Ieee8021Ad) => protocol = VlanProtocol::Ieee8021Ad,
            InfoVlan::Protocol(_) => protocol = VlanProtocol::Ieee8021Q,
            _ => {}
        }
    }
    match id {
        Some(id) => NlLinkInfo::Vlan { parent, id, protocol },
        None => NlLinkInfo::Other(InfoKind::Vlan.to_string()),
    }
}

fn ip6_tunnel_from_nl(tunnel: &[InfoIpTunnel]) -> NlIp6Tunnel {
    let mut out = NlIp6Tunnel {
        mode: Ip6TunnelMode::Any,
        remote: Ipv6Addr::UNSPECIFIED,
        local: None,
        underlying: None,
        encap_limit: EncapLimit::DEFAULT,
    };
    let mut ignore_limit = false;
    for attribute in tunnel {
        match attribute {
            InfoIpTunnel::Protocol(IpProtocol::Ipip) => out.mode = Ip6TunnelMode::Ipip6,
            InfoIpTunnel::Protocol(IpProtocol::Ipv6) => out.mode = Ip6TunnelMode::Ip6ip6,
            InfoIpTunnel::Protocol(_) => out.mode = Ip6TunnelMode::Any,
            InfoIpTunnel::Remote(IpAddr::V6(r)) => out.remote = *r,
            InfoIpTunnel::Local(IpAddr::V6(l)) if !l.is_unspecified() => out.local = Some(*l),
            InfoIpTunnel::Link(index) if *index != 0 => out.underlying = Some(*index),
            InfoIpTunnel::EncapLimit(limit) => out.encap_limit = EncapLimit::Limit(*limit),
            InfoIpTunnel::Ipv6Flags(flags) => {
                ignore_limit = flags.contains(Ip6TunnelFlags::IgnEncapLimit);
            }
            _ => {}
        }
    }
    if ignore_limit {
        out.encap_limit = EncapLimit::None;
    }
    out
}

/// `RTM_NEWLINK` creating the VLAN link `spec` on the parent link `parent` (an index), as
/// `ip link add link PARENT name IFNAME [mtu MTU] type vlan id ID protocol PROTO [up]` sends
/// it: `IFLA_IFNAME`, `IFLA_LINK`, `IFLA_LINKINFO` {`IFLA_INFO_KIND "vlan"`,
/// `IFLA_INFO_DATA` {`IFLA_VLAN_ID`, `IFLA_VLAN_PROTOCOL`}}, `IFLA_MTU` when given, `IFF_UP`
/// through `ifi_change` when `admin_up` is given. The caller sends it with
/// `NLM_F_CREATE | NLM_F_EXCL`.
///
/// `None` when `spec` has no `vlan` kind (routerd creates no other link type).
pub(crate) fn vlan_create_to_nl(spec: &LinkSpec, parent: u32) -> Option<RouteNetlinkMessage> {
    let Some(LinkKind::Vlan { id, protocol, .. }) = &spec.kind else { return None };
    let mut link = LinkMessage::default();
    set_admin_state(&mut link, spec.admin_up);
    link.attributes.push(LinkAttribute::IfName(spec.ifname.clone()));
    link.attributes.push(LinkAttribute::Link(parent));
    if let Some(mtu) = spec.mtu {
        link.attributes.push(LinkAttribute::Mtu(mtu));
    }
    let protocol = match protocol {
        VlanProtocol::Ieee8021Q => NlVlanProtocol::Ieee8021Q,
        VlanProtocol::Ieee8021Ad => NlVlanProtocol::Ieee8021Ad,
    };
    link.attributes.push(LinkAttribute::LinkInfo(vec![
        LinkInfo::Kind(InfoKind::Vlan),
        LinkInfo::Data(InfoData::Vlan(vec![InfoVlan::Id(*id), InfoVlan::Protocol(protocol)])),
    ]));
    Some(RouteNetlinkMessage::NewLink(link))
}

/// `RTM_NEWLINK` for the ip6tnl `spec`, as `ip -6 tunnel add` (`existing: None`, sent with
/// `NLM_F_CREATE | NLM_F_EXCL`) or `ip -6 tunnel change` (`existing: Some(index)`, no create
/// flags: the kernel calls the driver's `changelink`) would.
///
/// Shape: `IFLA_IFNAME` (create only), `IFLA_LINKINFO` {`IFLA_INFO_KIND "ip6tnl"`,
/// `IFLA_INFO_DATA` {`IFLA_IPTUN_PROTO`, `_LOCAL` (`::` for any), `_REMOTE`, `_LINK`
/// (`underlying`, 0 for none), `_TTL` (64), `_ENCAP_LIMIT` (numeric limit only),
/// `_FLAGS` (`IP6_TNL_F_IGN_ENCAP_LIMIT` for `none`)}}, `IFLA_MTU` when given, `IFF_UP`
/// through `ifi_change` when `admin_up` is given. Every tunnel parameter is sent because the
/// kernel resets those a change leaves out (`ip6_tnl_netlink_parms` in
/// `net/ipv6/ip6_tunnel.c`).
pub(crate) fn ip6_tunnel_to_nl(
    spec: &Ip6TunnelSpec,
    existing: Option<u32>,
    underlying: Option<u32>,
) -> RouteNetlinkMessage {
    let mut link = LinkMessage::default();
    set_admin_state(&mut link, spec.admin_up);
    match existing {
        Some(index) => link.header.index = index,
        None => link.attributes.push(LinkAttribute::IfName(spec.ifname.clone())),
    }
    if let Some(mtu) = spec.mtu {
        link.attributes.push(LinkAttribute::Mtu(mtu));
    }
    let protocol = match spec.mode {
        Ip6TunnelMode::Ipip6 => IpProtocol::Ipip,
        Ip6TunnelMode::Ip6ip6 => IpProtocol::Ipv6,
        // Protocol 0 (IPPROTO_IP, which this crate names after the IPv6 hop-by-hop header).
        Ip6TunnelMode::Any => IpProtocol::Hopopts,
    };
    let mut data = vec![
        InfoIpTunnel::Protocol(protocol),
        InfoIpTunnel::Local(IpAddr::V6(spec.local.unwrap_or(Ipv6Addr::UNSPECIFIED))),
        InfoIpTunnel::Remote(IpAddr::V6(spec.remote)),
        InfoIpTunnel::Link(underlying.unwrap_or(0)),
        InfoIpTunnel::Ttl(TUNNEL_HOP_LIMIT),
    ];
    let flags = match spec.encap_limit {
        EncapLimit::Limit(limit) => {
            data.push(InfoIpTunnel::EncapLimit(limit));
            Ip6TunnelFlags::empty()
        }
        EncapLimit::None => Ip6TunnelFlags::IgnEncapLimit,
    };
    data.push(InfoIpTunnel::Ipv6Flags(flags));
    link.attributes.push(LinkAttribute::LinkInfo(vec![
        LinkInfo::Kind(InfoKind::Ip6Tnl),
        LinkInfo::Data(InfoData::IpTunnel(data)),
    ]));
    RouteNetlinkMessage::NewLink(link)
}

/// `RTM_DELLINK` for link `index` (`ip link del`).
pub(crate) fn link_delete_to_nl(index: u32) -> RouteNetlinkMessage {
    let mut link = LinkMessage::default();
    link.header.index = index;
    RouteNetlinkMessage::DelLink(link)
}

fn set_admin_state(link: &mut LinkMessage, admin_up: Option<bool>) {
    if let Some(up) = admin_up {
        link.header.change_mask = LinkFlags::Up;
        link.header.flags = if up { LinkFlags::Up } else { LinkFlags::empty() };
    }
}

/// `RTM_SETLINK` for link `index` that sets what `spec` gives (`IFF_UP` through
/// `ifi_change`, `IFLA_MTU`); `None` when `spec` leaves everything as found.
pub(crate) fn link_set_to_nl(index: u32, spec: &LinkSpec) -> Option<RouteNetlinkMessage> {
    if spec.admin_up.is_none() && spec.mtu.is_none() {
        return None;
    }
    let mut link = LinkMessage::default();
    link.header.index = index;
    set_admin_state(&mut link, spec.admin_up);
    if let Some(mtu) = spec.mtu {
        link.attributes.push(LinkAttribute::Mtu(mtu));
    }
    Some(RouteNetlinkMessage::SetLink(link))
}

// ---- addresses ----

/// `RTM_GETADDR` dump request for one family.
pub(crate) fn address_dump_request(family: IpFamily) -> RouteNetlinkMessage {
    let mut address = AddressMessage::default();
    address.header.family = family.to_nl();
    RouteNetlinkMessage::GetAddress(address)
}

/// Reads one `RTM_NEWADDR`.
///
/// `None` for other messages, for IPv6 link-local addresses (`fe80::/10`, made by the kernel
/// for every IPv6 link) and for messages without an address.
pub(crate) fn address_from_nl(message: &RouteNetlinkMessage) -> Option<NlAddress> {
    let RouteNetlinkMessage::NewAddress(msg) = message else { return None };
    let mut local = None;
    let mut address = None;
    // IFA_FLAGS carries all 32 bits; the header's byte is the old, truncated copy.
    let mut flags = AddressFlags::from_bits_retain(u32::from(msg.header.flags.bits()));
    for attribute in &msg.attributes {
        match attribute {
            AddressAttribute::Local(ip) => local = Some(*ip),
            AddressAttribute::Address(ip) => address = Some(*ip),
            AddressAttribute::Flags(f) => flags = *f,
            _ => {}
        }
    }
    // IFA_ADDRESS is the peer on point-to-point links; IFA_LOCAL is ours when present.
    let ip = local.or(address)?;
    if let IpAddr::V6(v6) = ip
        && is_ipv6_link_local(&v6)
    {
        return None;
    }
    let address = IpNet::new(ip, msg.header.prefix_len).ok()?;
    let usable = !flags.intersects(AddressFlags::Tentative | AddressFlags::Dadfailed);
    Some(NlAddress { index: msg.header.index, address, usable })
}

/// `RTM_NEWADDR` (`delete == false`) or `RTM_DELADDR` for `address` on link `index`.
///
/// Sets `IFA_LOCAL` and `IFA_ADDRESS` to the same address, as `ip address add` does without
/// `peer`; scope host for `127.0.0.0/8`, universe otherwise.
pub(crate) fn address_to_nl(index: u32, address: &IpNet, delete: bool) -> RouteNetlinkMessage {
    let mut msg = AddressMessage::default();
    msg.header.family = IpFamily::of_net(address).to_nl();
    msg.header.prefix_len = address.prefix_len();
    msg.header.index = index;
    msg.header.scope = match address.addr() {
        IpAddr::V4(v4) if v4.is_loopback() => AddressScope::Host,
        _ => AddressScope::Universe,
    };
    msg.attributes.push(AddressAttribute::Local(address.addr()));
    msg.attributes.push(AddressAttribute::Address(address.addr()));
    if delete { RouteNetlinkMessage::DelAddress(msg) } else { RouteNetlinkMessage::NewAddress(msg) }
}

// ---- routes ----

/// `RTM_GETROUTE` dump request for every table of one family.
pub(crate) fn route_dump_request(family: IpFamily) -> RouteNetlinkMessage {
    let mut route = RouteMessage::default();
    route.header.address_family = family.to_nl();
    RouteNetlinkMessage::GetRoute(route)
}

/// Reads one `RTM_NEWROUTE`.
///
/// `None` for other messages and for routes routerd never lists: types other than
/// `RTN_UNICAST`, table `local` (255), and kernel-made IPv6 routes (`proto kernel` to
/// `fe80::/64` or into `ff00::/8`). Multipath routes (`RTA_MULTIPATH`) are listed with gateway
/// and output link `None`: routerd installs single-path routes only.
pub(crate) fn route_from_nl(message: &RouteNetlinkMessage) -> Option<NlRoute> {
    let RouteNetlinkMessage::NewRoute(msg) = message else { return None };
    if msg.header.kind != RouteType::Unicast {
        return None;
    }
    let mut table = u32::from(msg.header.table);
    let mut destination = None;
    let mut gateway = None;
    let mut oif = None;
    let mut metric = 0;
    for attribute in &msg.attributes {
        match attribute {
            RouteAttribute::Table(t) => table = *t,
            RouteAttribute::Destination(a) => destination = ip_from_route_address(a),
            RouteAttribute::Gateway(a) => gateway = ip_from_route_address(a),
            RouteAttribute::Via(RouteVia::Inet(v4)) => gateway = Some(IpAddr::V4(*v4)),
            RouteAttribute::Via(RouteVia::Inet6(v6)) => gateway = Some(IpAddr::V6(*v6)),
            RouteAttribute::Oif(index) => oif = Some(*index),
            RouteAttribute::Priority(p) => metric = *p,
            _ => {}
        }
    }
    if table == RT_TABLE_LOCAL {
        return None;
    }
    let unspecified = match msg.header.address_family {
        AddressFamily::Inet => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        AddressFamily::Inet6 => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        _ => return None,
    };
    let destination =
        IpNet::new(destination.unwrap_or(unspecified), msg.header.destination_prefix_length)
            .ok()?;
    let protocol = u8::from(msg.header.protocol);
    if msg.header.protocol == RouteProtocol::Kernel && is_kernel_ipv6_route(&destination) {
        return None;
    }
    Some(NlRoute { table, destination, gateway, oif, metric, protocol })
}

/// The destination of one `RTM_NEWROUTE` that marks an IPv6 prefix delegated to this router:
/// type `RTN_UNREACHABLE`, protocol `RTPROT_DHCP`, table `main`. A DHCPv6 client installs one
/// per delegated prefix so that traffic to its unassigned parts is dropped (RFC 7084 WPD-5);
/// systemd-networkd does (`unreachable 2001:db8:a0ff::/56 dev lo proto dhcp`).
pub(crate) fn delegated_prefix_from_nl(message: &RouteNetlinkMessage) -> Option<Ipv6Net> {
    let RouteNetlinkMessage::NewRoute(msg) = message else { return None };
    let header = &msg.header;
    if header.kind != RouteType::Unreachable
        || header.protocol != RouteProtocol::Dhcp
        || header.address_family != AddressFamily::Inet6
    {
        return None;
    }
    let mut table = u32::from(header.table);
    let mut destination = None;
    for attribute in &msg.attributes {
        match attribute {
            RouteAttribute::Table(t) => table = *t,
            RouteAttribute::Destination(a) => destination = ip_from_route_address(a),
            _ => {}
        }
    }
    match destination {
        Some(IpAddr::V6(a)) if table == RT_TABLE_MAIN => {
            Ipv6Net::new(a, header.destination_prefix_length).ok()
        }
        _ => None,
    }
}

/// `RTM_NEWROUTE` or `RTM_DELROUTE` body for `spec`, output link `oif` (already resolved).
///
/// Install: `rtm_protocol` = `spec.protocol`, type `RTN_UNICAST`, scope universe with a
/// gateway and link without (as `ip route add` chooses). Remove: scope `RT_SCOPE_NOWHERE`,
/// type unicast, `rtm_protocol` = `spec.protocol` (0 matches any), the gateway when known, no
/// `RTA_OIF`. The table goes in `RTA_TABLE` (and in `rtm_table` when it fits in a byte); the
/// metric in `RTA_PRIORITY`. A gateway of the other family goes in `RTA_VIA`.
/// The kernel stores IPv6 metric 0 as 1024 (`IP6_RT_PRIO_USER`).
pub(crate) fn route_to_nl(
    spec: &RouteSpec,
    oif: Option<u32>,
    purpose: RoutePurpose,
) -> RouteMessage {
    let family = IpFamily::of_net(&spec.destination);
    let mut msg = RouteMessage::default();
    msg.header.address_family = family.to_nl();
    msg.header.destination_prefix_length = spec.destination.prefix_len();
    msg.header.table = u8::try_from(spec.table).unwrap_or(0);
    msg.header.protocol = RouteProtocol::from(spec.protocol);
    msg.header.kind = RouteType::Unicast;
    msg.header.scope = match (purpose, spec.gateway) {
        (RoutePurpose::Remove, _) => RouteScope::NoWhere,
        (RoutePurpose::Install, Some(_)) => RouteScope::Universe,
        (RoutePurpose::Install, None) => RouteScope::Link,
    };
    msg.attributes.push(RouteAttribute::Table(spec.table));
    if spec.destination.prefix_len() > 0 {
        let dst = RouteAddress::from(spec.destination.addr());
        msg.attributes.push(RouteAttribute::Destination(dst));
    }
    if let Some(gateway) = spec.gateway {
        msg.attributes.push(gateway_attribute(family, gateway));
    }
    if let (RoutePurpose::Install, Some(index)) = (purpose, oif) {
        msg.attributes.push(RouteAttribute::Oif(index));
    }
    msg.attributes.push(RouteAttribute::Priority(spec.metric));
    msg
}

// ---- rules ----

/// `RTM_GETRULE` dump request for IPv4 rules.
pub(crate) fn rule_dump_request() -> RouteNetlinkMessage {
    let mut rule = RuleMessage::default();
    rule.header.family = AddressFamily::Inet;
    RouteNetlinkMessage::GetRule(rule)
}

/// Reads one `RTM_NEWRULE` that has `FRA_FWMARK`; `None` for any other message.
///
/// Mask: `FRA_FWMASK`, `0xffffffff` when absent. Table: `FRA_TABLE`, else `frh_table` (0 for
/// actions other than `lookup`). Priority: `FRA_PRIORITY`, 0 when absent.
pub(crate) fn rule_from_nl(message: &RouteNetlinkMessage) -> Option<FwmarkRuleSpec> {
    let RouteNetlinkMessage::NewRule(rule) = message else { return None };
    if rule.header.family != AddressFamily::Inet {
        return None;
    }
    let mut mark = None;
    let mut mask = u32::MAX;
    let mut table = u32::from(rule.header.table);
    let mut priority = 0;
    for attribute in &rule.attributes {
        match attribute {
            RuleAttribute::FwMark(m) => mark = Some(*m),
            RuleAttribute::FwMask(m) => mask = *m,
            RuleAttribute::Table(t) => table = *t,
            RuleAttribute::Priority(p) => priority = *p,
            _ => {}
        }
    }
    Some(FwmarkRuleSpec { mark: mark?, mask, table, priority })
}

/// `RTM_NEWRULE` (`delete == false`) or `RTM_DELRULE` for
/// `fwmark MARK/MASK lookup TABLE priority PRIORITY`, action `FR_ACT_TO_TBL`.
pub(crate) fn rule_to_nl(spec: &FwmarkRuleSpec, delete: bool) -> RouteNetlinkMessage {
    let mut rule = RuleMessage::default();
    rule.header.family = AddressFamily::Inet;
    rule.header.action = RuleAction::ToTable;
    rule.header.table = u8::try_from(spec.table).unwrap_or(0);
    rule.attributes.push(RuleAttribute::Priority(spec.priority));
    rule.attributes.push(RuleAttribute::FwMark(spec.mark));
    rule.attributes.push(RuleAttribute::FwMask(spec.mask));
    rule.attributes.push(RuleAttribute::Table(spec.table));
    if delete { RouteNetlinkMessage::DelRule(rule) } else { RouteNetlinkMessage::NewRule(rule) }
}

// ---- errors ----

/// Reads an `NLMSG_ERROR` that carries an errno: errno plus the extended ack message.
///
/// Shape of the payload after the errno (socket has `NETLINK_CAP_ACK`): the request's
/// `nlmsghdr` (16 bytes), then `NLMSGERR_ATTR_*` TLVs.
pub(crate) fn error_from_nl(error: &ErrorMessage) -> NlError {
    let tlvs = error.header.get(NLMSGHDR_LEN..).unwrap_or_default();
    kernel_error(error.raw_code(), ext_ack_message(tlvs))
}

/// Reads an `NLMSG_DONE` that ends a dump with an errno.
pub(crate) fn done_error_from_nl(done: &DoneMessage) -> NlError {
    kernel_error(done.code, ext_ack_message(&done.extended_ack))
}

fn kernel_error(code: i32, ext_ack: Option<String>) -> NlError {
    let errno = code.saturating_abs();
    let strerror = std::io::Error::from_raw_os_error(errno).to_string();
    let message = match ext_ack {
        Some(ext) => format!("{ext}: {strerror}"),
        None => strerror,
    };
    NlError::Kernel { errno, message }
}

/// The `NLMSGERR_ATTR_MSG` string among netlink TLVs, without its NUL.
fn ext_ack_message(mut tlvs: &[u8]) -> Option<String> {
    while tlvs.len() >= 4 {
        let len = usize::from(u16::from_ne_bytes([tlvs[0], tlvs[1]]));
        let kind = u16::from_ne_bytes([tlvs[2], tlvs[3]]) & 0x3fff;
        if len < 4 || len > tlvs.len() {
            return None;
        }
        if kind == NLMSGERR_ATTR_MSG {
            let value = &tlvs[4..len];
            let text = value.split(|b| *b == 0).next().unwrap_or_default();
            return Some(String::from_utf8_lossy(text).into_owned());
        }
        tlvs = tlvs.get(len.next_multiple_of(4)..).unwrap_or_default();
    }
    None
}

// ---- helpers ----

fn ip_from_route_address(address: &RouteAddress) -> Option<IpAddr> {
    match address {
        RouteAddress::Inet(v4) => Some(IpAddr::V4(*v4)),
        RouteAddress::Inet6(v6) => Some(IpAddr::V6(*v6)),
        _ => None,
    }
}

fn gateway_attribute(family: IpFamily, gateway: IpAddr) -> RouteAttribute {
    match (family, gateway) {
        (IpFamily::V4, IpAddr::V6(v6)) => RouteAttribute::Via(RouteVia::Inet6(v6)),
        (IpFamily::V6, IpAddr::V4(v4)) => RouteAttribute::Via(RouteVia::Inet(v4)),
        (_, ip) => RouteAttribute::Gateway(RouteAddress::from(ip)),
    }
}

/// `fe80::/10`.
fn is_ipv6_link_local(ip: &Ipv6Addr) -> bool {
    ip.segments()[0] & 0xffc0 == 0xfe80
}

/// `fe80::/64` or inside `ff00::/8`: routes the kernel adds on every IPv6 link.
fn is_kernel_ipv6_route(destination: &IpNet) -> bool {
    let IpNet::V6(net) = destination else { return false };
    let link_local = net.prefix_len() == 64 && net.addr().segments()[..4] == [0xfe80, 0, 0, 0];
    let multicast = net.prefix_len() >= 8 && net.addr().octets()[0] == 0xff;
    link_local || multicast
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "convert_link_tests.rs"]
mod link_tests;
