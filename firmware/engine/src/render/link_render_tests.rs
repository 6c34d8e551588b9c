//! Render of the links routerd creates: `VLANInterface` and a `DSLiteTunnel` with a static
//! AFTR, from `examples/vlan-dslite.yaml`, and a tunnel whose endpoints are runtime values (a
//! resolved AFTR, a delegated address).

use std::collections::BTreeMap;

use routerd_host::artifact::{
    EncapLimit, Ip6TunnelMode, Ip6TunnelSpec, LinkKind, LinkSpec, VlanProtocol,
};
use routerd_host::{ArtifactKind, ArtifactSpec};
use routerd_model::parse_config;

use super::{Rendered, render};
use crate::fixtures::intent;
use crate::intent::{Action, ApplyWith, Carried, Intent};
use crate::runtime::RuntimeValues;

const EXAMPLE: &str = include_str!("../../../../examples/vlan-dslite.yaml");
const ALL_KINDS: &str = include_str!("../../../model/tests/fixtures/all-kinds.yaml");

fn rendered(yaml: &str) -> Rendered {
    render(&parse_config(yaml, "router.yaml").expect("config parses"))
}

fn deps(intent: &Intent) -> Vec<String> {
    intent.dependencies.iter().map(|d| d.key.to_string()).collect()
}

#[test]
fn vlan_link_is_created_on_its_parent_with_id_protocol_and_admin_state() {
    let rendered = rendered(EXAMPLE);
    let vlan = intent(&rendered, "linux.link/eth1.20");
    assert_eq!((vlan.action, vlan.apply_with), (Action::Ensure, ApplyWith::Rtnetlink));
    assert_eq!(&*vlan.owner, "net.routerd.net/v1alpha1/VLANInterface/guest");
    assert_eq!(
        vlan.artifact.spec,
        ArtifactSpec::Link(LinkSpec {
            ifname: "eth1.20".into(),
            admin_up: Some(true),
            mtu: None,
            kind: Some(LinkKind::Vlan {
                parent: "eth1".into(),
                id: 20,
                protocol: VlanProtocol::Ieee8021Q,
            }),
        })
    );
    assert_eq!(deps(vlan), ["linux.link/eth1"]);
}

#[test]
fn address_on_a_vlan_interface_depends_on_the_vlan_link() {
    let rendered = rendered(EXAMPLE);
    let address = intent(&rendered, "linux.ipv4.address/eth1.20/192.168.20.1/24");
    assert_eq!(deps(address), ["linux.link/eth1.20"]);
}

#[test]
fn vlan_declared_before_its_parent_still_resolves_and_takes_ifname_mtu_and_protocol() {
    let yaml = EXAMPLE
        .replace("        vlanID: 20\n", "        vlanID: 7\n        ifname: wan7\n        protocol: 802.1ad\n        adminUp: false\n        mtu: 1496\n")
        .replace("interface: lan\n        vlanID", "interface: wan\n        vlanID");
    let rendered = rendered(&yaml);
    let ArtifactSpec::Link(link) = &intent(&rendered, "linux.link/wan7").artifact.spec else {
        panic!("link spec")
    };
    assert_eq!((link.admin_up, link.mtu), (Some(false), Some(1496)));
    assert_eq!(
        link.kind,
        Some(LinkKind::Vlan { parent: "eth0".into(), id: 7, protocol: VlanProtocol::Ieee8021Ad })
    );
    assert_eq!(
        deps(intent(&rendered, "linux.ipv4.address/wan7/192.168.20.1/24")),
        ["linux.link/wan7"]
    );
}

#[test]
fn ds_lite_with_remote_address_is_a_typed_tunnel_and_the_default_route_depends_on_it() {
    let rendered = rendered(EXAMPLE);
    let tunnel = intent(&rendered, "linux.ipip6.tunnel/dslite0");
    assert_eq!((tunnel.action, tunnel.apply_with), (Action::Ensure, ApplyWith::Rtnetlink));
    assert_eq!(
        tunnel.artifact.spec,
        ArtifactSpec::Ip6Tunnel(Ip6TunnelSpec {
            ifname: "dslite0".into(),
            mode: Ip6TunnelMode::Ipip6,
            remote: "2001:db8::1".parse().expect("literal"),
            local: Some("2001:db8::2".parse().expect("literal")),
            underlying: Some("eth0".into()),
            encap_limit: EncapLimit::DEFAULT,
            mtu: None,
            admin_up: Some(true),
        })
    );
    assert_eq!(deps(tunnel), ["linux.link/eth0"]);
    let route = intent(&rendered, "linux.ipv4.route/254:0.0.0.0/0:100");
    let ArtifactSpec::Route(r) = &route.artifact.spec else { panic!("route spec") };
    assert_eq!(r.oif.as_deref(), Some("dslite0"));
    assert_eq!(deps(route), ["linux.ipip6.tunnel/dslite0"]);
    assert!(rendered.warnings.is_empty(), "{:?}", rendered.warnings);
}

#[test]
fn ds_lite_local_endpoint_is_any_without_local_address_and_encap_limit_is_read() {
    let yaml = EXAMPLE
        .replace("        localAddressSource: static\n        localAddress: 2001:db8::2\n", "")
        .replace(
            "        routeMetric: 100\n",
            "        encapsulationLimit: none\n        mtu: 1460\n",
        );
    let rendered = rendered(&yaml);
    let ArtifactSpec::Ip6Tunnel(t) = &intent(&rendered, "linux.ipip6.tunnel/dslite0").artifact.spec
    else {
        panic!("typed tunnel")
    };
    assert_eq!((t.local, t.encap_limit, t.mtu), (None, EncapLimit::None, Some(1460)));
}

#[test]
fn ds_lite_with_an_aftr_fqdn_waits_for_its_answer_and_takes_the_ordinal() {
    // The fixture's tunnel resolves aftrFQDN (ordinal 1, modulo) and takes its local address
    // from a delegation: both runtime values (ADR 0008).
    let config = parse_config(ALL_KINDS, "all-kinds.yaml").expect("fixture parses");
    let render = |runtime: &RuntimeValues| {
        super::render_with(&config, &routerd_host::Target::default(), runtime)
    };
    let rendered = render(&RuntimeValues::default());
    let lookup = intent(&rendered, "routerd.aftrAddress/ds-lite0");
    assert_eq!((lookup.action, lookup.apply_with), (Action::Observe, ApplyWith::Scheduler));
    let tunnel = intent(&rendered, "linux.ipip6.tunnel/ds-lite0");
    let ArtifactSpec::Ip6Tunnel(t) = &tunnel.artifact.spec else {
        panic!("a typed tunnel waiting for its values: {:?}", tunnel.artifact)
    };
    assert_eq!(t.remote, std::net::Ipv6Addr::UNSPECIFIED, "a placeholder until answered");
    let waits: Vec<_> =
        tunnel.dependencies.iter().filter(|d| d.carries == Some(Carried::Addresses)).collect();
    let on: Vec<String> = waits.iter().map(|d| d.key.to_string()).collect();
    assert!(on.contains(&"routerd.aftrAddress/ds-lite0".to_string()), "{on:?}");
    assert!(!rendered.warnings.values().flatten().any(|w| w.contains("aftrFQDN")));

    let lan = lan_ifname(&config);
    let answered = |aftr: &[&str]| RuntimeValues {
        delegated: BTreeMap::from([(
            lan.clone(),
            vec!["2001:db8:0:2a::1/64".parse().expect("net")],
        )]),
        aftr: BTreeMap::from([(
            "ds-lite0".to_string(),
            aftr.iter().map(|a| a.parse().expect("address")).collect(),
        )]),
        ..Default::default()
    };
    let remote = |runtime: &RuntimeValues| {
        let rendered = render(runtime);
        match &intent(&rendered, "linux.ipip6.tunnel/ds-lite0").artifact.spec {
            ArtifactSpec::Ip6Tunnel(t) => t.remote.to_string(),
            other => panic!("typed tunnel: {other:?}"),
        }
    };
    assert_eq!(remote(&answered(&["2001:db8:f::1", "2001:db8:f::2"])), "2001:db8:f::1");
    // A new answer: the tunnel follows it.
    assert_eq!(remote(&answered(&["2001:db8:e::1"])), "2001:db8:e::1");
    // Its default route still waits for it (and for the `when` gate's state variable).
    let route = rendered
        .intents
        .iter()
        .find(|i| i.owner.ends_with("/DSLiteTunnel/dslite") && i.kind() == ArtifactKind::Ipv4Route)
        .expect("default route");
    assert_eq!(deps(route)[0], "linux.ipip6.tunnel/ds-lite0");
}

/// The link of the fixture's `IPv6DelegatedAddress` `lan-v6`.
fn lan_ifname(config: &routerd_model::Config) -> String {
    let target = routerd_host::Target::default();
    let runtime = RuntimeValues::default();
    let ctx = super::RenderCtx::new(config, &target, &runtime);
    ctx.delegated_link("lan-v6").expect("lan-v6 resolves").ifname
}

/// `EXAMPLE` with a delegation on the WAN, a delegated address on the LAN, and the tunnel's
/// local end taken from it (with `suffix`, when given).
fn delegated_local(suffix: Option<&str>) -> routerd_model::Config {
    let suffix =
        suffix.map(|s| format!("        localAddressSuffix: \"{s}\"\n")).unwrap_or_default();
    let yaml = EXAMPLE.replace(
        "        localAddressSource: static\n        localAddress: 2001:db8::2\n",
        &format!(
            "        localAddressSource: delegatedAddress\n        localDelegatedAddress: lan-v6\n{suffix}"
        ),
    ) + crate::fixtures::WAN_PD_LAN_V6;
    parse_config(&yaml, "router.yaml").expect("config parses")
}

#[test]
fn ds_lite_local_end_from_a_delegated_address_waits_for_it_and_follows_it() {
    let target = routerd_host::Target::default();
    // Before networkd has derived the address: a typed tunnel that waits on the LAN's binding
    // until the binding has an address.
    let rendered = super::render_with(&delegated_local(None), &target, &Default::default());
    let tunnel = intent(&rendered, "linux.ipip6.tunnel/dslite0");
    let ArtifactSpec::Ip6Tunnel(t) = &tunnel.artifact.spec else { panic!("typed tunnel") };
    assert_eq!(t.local, None);
    let waits = tunnel
        .dependencies
        .iter()
        .find(|d| d.key.to_string() == "dhcp.ipv6.delegatedAddress/eth1")
        .expect("depends on the delegated address binding");
    assert_eq!(waits.carries, Some(Carried::Addresses), "{waits:?}");

    // With the address: its own, or its prefix with the suffix.
    let mut runtime = crate::runtime::RuntimeValues::default();
    runtime.delegated.insert(
        "eth1".into(),
        vec![
            "2001:db8:a0:2a::1/64".parse().expect("net"),
            "2001:db8:b0:2a::1/64".parse().expect("net"),
        ],
    );
    let local = |suffix| {
        let rendered = super::render_with(&delegated_local(suffix), &target, &runtime);
        match &intent(&rendered, "linux.ipip6.tunnel/dslite0").artifact.spec {
            ArtifactSpec::Ip6Tunnel(t) => t.local,
            other => panic!("typed tunnel: {other:?}"),
        }
    };
    assert_eq!(local(None), "2001:db8:a0:2a::1".parse().ok());
    assert_eq!(local(Some("::100")), "2001:db8:a0:2a::100".parse().ok());
}

#[test]
fn ds_lite_local_end_as_a_suffix_on_the_underlying_links_prefix_waits_for_a_global_address() {
    let yaml = EXAMPLE.replace(
        "        localAddressSource: static\n        localAddress: 2001:db8::2\n",
        "        localAddressSource: interface\n        localAddressSuffix: \"::1:0:0:1\"\n",
    );
    let config = parse_config(&yaml, "router.yaml").expect("config parses");
    let target = routerd_host::Target::default();
    let rendered = super::render_with(&config, &target, &RuntimeValues::default());
    assert!(rendered.reads.address_links.contains("eth0"), "{:?}", rendered.reads);
    // No global address on eth0 yet: not created, and the warning says what it waits for.
    let tunnel = intent(&rendered, "linux.ipip6.tunnel/dslite0");
    assert!(matches!(tunnel.artifact.spec, ArtifactSpec::Opaque(_)), "{tunnel:?}");
    let said: Vec<&String> = rendered.warnings.values().flatten().collect();
    assert!(said.iter().any(|w| w.contains("eth0 has none yet")), "{said:?}");
    let on_eth0 = |addresses: &[&str]| RuntimeValues {
        interface_addresses: BTreeMap::from([(
            "eth0".to_string(),
            addresses.iter().map(|a| a.parse().expect("net")).collect(),
        )]),
        ..Default::default()
    };
    // A unique local address is not the ISP's prefix.
    let rendered = super::render_with(&config, &target, &on_eth0(&["fd00::1/64"]));
    let tunnel = intent(&rendered, "linux.ipip6.tunnel/dslite0");
    assert!(matches!(tunnel.artifact.spec, ArtifactSpec::Opaque(_)), "{tunnel:?}");
    // With a global one: the suffix on its /64.
    let runtime = on_eth0(&["2001:db8:5:6::77/64", "fd00::1/64"]);
    let rendered = super::render_with(&config, &target, &runtime);
    let ArtifactSpec::Ip6Tunnel(t) = &intent(&rendered, "linux.ipip6.tunnel/dslite0").artifact.spec
    else {
        panic!("typed tunnel")
    };
    assert_eq!(t.local, "2001:db8:5:6:1::1".parse().ok());
}
