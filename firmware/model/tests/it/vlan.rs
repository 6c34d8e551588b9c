//! `VLANInterface`, the extension kind of `docs/adr/0004-vlan-interface-kind.md`: defaults,
//! lookups and each validation error at its exact position.

use routerd_model::ResourceKind;
use routerd_model::spec::net::{VlanInterfaceSpec, VlanProtocol};

use crate::support::*;

const GUEST: &str = "net.routerd.net/v1alpha1/VLANInterface/guest";

/// A `VLANInterface` named `guest` on `parent` with `vlanID: id`, seven lines long, followed by
/// `extra` (fields indented by eight spaces). After `interface("lan", ...)` it starts on line
/// 14, so `interface` is on line 19 and `vlanID` on line 20.
fn vlan(parent: &str, id: &str, extra: &str) -> String {
    format!(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: VLANInterface
      metadata:
        name: guest
      spec:
        interface: {parent}
        vlanID: {id}
{extra}"
    )
}

fn lan_and_vlan(id: &str, extra: &str) -> String {
    document(&format!("{}{}", interface("lan", "eth1"), vlan("lan", id, extra)))
}

#[test]
fn vlan_interface_parses_with_its_documented_defaults() {
    let address = "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticAddress
      metadata:
        name: guest-v4
      spec:
        interface: guest
        address: 192.168.20.1/24
";
    let config = config_of(&format!("{}{address}", lan_and_vlan("20", "")));
    let spec = config.spec::<VlanInterfaceSpec>("guest").expect("guest");
    assert_eq!(spec.vlan_id, 20);
    assert_eq!(spec.ifname, None);
    assert_eq!(spec.protocol, VlanProtocol::Ieee8021Q);
    assert!(spec.admin_up, "adminUp defaults to true");
    assert_eq!(spec.mtu, None);
    assert_eq!(config.interface_ifname("guest").as_deref(), Some("eth1.20"));
    let resource = config.interface_resource("guest").expect("provider");
    assert_eq!(resource.kind, ResourceKind::VlanInterface);
}

#[test]
fn vlan_interface_takes_ifname_protocol_admin_state_and_mtu() {
    let extra = "        ifname: guest0\n        protocol: 802.1ad\n        adminUp: false\n        \
                 mtu: 1496\n";
    let config = config_of(&lan_and_vlan("4094", extra));
    let spec = config.spec::<VlanInterfaceSpec>("guest").expect("guest");
    assert_eq!(spec.protocol, VlanProtocol::Ieee8021Ad);
    assert!(!spec.admin_up);
    assert_eq!(spec.mtu, Some(1496));
    assert_eq!(config.interface_ifname("guest").as_deref(), Some("guest0"));
}

#[test]
fn vlan_id_zero_and_4095_are_reported_at_the_value() {
    for id in ["0", "4095"] {
        let error = single_error(&lan_and_vlan(id, ""));
        assert_error(
            &error,
            (20, 17),
            Some(GUEST),
            "spec.resources[1].spec.vlanID",
            &format!("vlanID must be between 1 and 4094, got {id}"),
        );
    }
}

#[test]
fn too_long_ifname_is_reported_at_the_value() {
    let error = single_error(&lan_and_vlan("20", "        ifname: guest-vlan-twenty\n"));
    assert_error(
        &error,
        (21, 17),
        Some(GUEST),
        "spec.resources[1].spec.ifname",
        "interface name \"guest-vlan-twenty\" is longer than 15 bytes",
    );
}

#[test]
fn too_long_default_ifname_asks_for_an_explicit_one() {
    let source =
        document(&format!("{}{}", interface("lan", "enp1s0f0np0x"), vlan("lan", "2000", "")));
    let error = single_error(&source);
    assert_error(
        &error,
        (19, 9),
        Some(GUEST),
        "spec.resources[1].spec.ifname",
        "default ifname (interface ifname.vlanID): interface name \"enp1s0f0np0x.2000\" is \
         longer than 15 bytes; set ifname",
    );
}

#[test]
fn unknown_parent_is_reported_at_the_interface_field() {
    let source = document(&format!("{}{}", interface("lan", "eth1"), vlan("wan", "20", "")));
    let error = single_error(&source);
    assert_error(
        &error,
        (19, 20),
        Some(GUEST),
        "spec.resources[1].spec.interface",
        "interface \"wan\" is not declared by any Interface resource",
    );
}

#[test]
fn default_ifname_must_not_collide_with_another_link() {
    let source = document(&format!(
        "{}{}{}",
        interface("lan", "eth1"),
        vlan("lan", "20", ""),
        interface("other", "eth1.20")
    ));
    let error = single_error(&source);
    assert_error(
        &error,
        (26, 17),
        Some("net.routerd.net/v1alpha1/Interface/other"),
        "spec.resources[2].spec.ifname",
        "ifname \"eth1.20\" is already used by net.routerd.net/v1alpha1/VLANInterface/guest",
    );
}

#[test]
fn unknown_protocol_and_small_mtu_are_reported() {
    let error = single_error(&lan_and_vlan("20", "        protocol: 802.1x\n"));
    assert_error(
        &error,
        (21, 19),
        Some(GUEST),
        "spec.resources[1].spec.protocol",
        "unknown variant `802.1x`, expected `802.1Q` or `802.1ad`",
    );
    let error = single_error(&lan_and_vlan("20", "        mtu: 67\n"));
    assert_eq!(error.message, "mtu must be between 68 and 65535, got 67");
}
