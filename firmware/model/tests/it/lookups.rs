//! Lookups the engine uses on a parsed config.

use routerd_model::spec::net::{DsLiteTunnelSpec, InterfaceSpec};
use routerd_model::spec::system::SysctlSpec;
use routerd_model::{Location, ReconcileMode, ResourceKind, ResourceSpec};

use crate::support::*;

#[test]
fn resource_id_is_api_version_kind_and_name() {
    let config = config_of(ALL_KINDS);
    let resource = config.resource(ResourceKind::Ipv4StaticAddress, "lan-v4").expect("lan-v4");
    assert_eq!(resource.id(), "net.routerd.net/v1alpha1/IPv4StaticAddress/lan-v4");
    assert!(
        matches!(resource.spec, ResourceSpec::Ipv4StaticAddress(ref s) if s.address == "192.168.10.1/24")
    );
}

#[test]
fn interface_ifname_resolves_all_provider_kinds() {
    let config = config_of(ALL_KINDS);
    assert_eq!(config.interface_ifname("wan").as_deref(), Some("enp1s0"));
    assert_eq!(config.interface_ifname("wan-pppoe").as_deref(), Some("ppp0"));
    assert_eq!(config.interface_ifname("dslite").as_deref(), Some("ds-lite0"));
    // The fixture's VLAN has no ifname: parent `lan` (enp2s0) plus its vlanID.
    assert_eq!(config.interface_ifname("guest").as_deref(), Some("enp2s0.20"));
    assert_eq!(config.interface_ifname("nope"), None);
}

#[test]
fn typed_iteration_returns_specs_in_file_order() {
    let config = config_of(ALL_KINDS);
    let ifnames: Vec<&str> =
        config.specs::<InterfaceSpec>().map(|(_, spec)| spec.ifname.as_str()).collect();
    assert_eq!(ifnames, vec!["enp1s0", "enp2s0"]);
    let zones: Vec<&str> =
        config.resources_of(ResourceKind::Zone).map(|r| r.name.as_str()).collect();
    assert_eq!(zones, vec!["lan", "wan"]);
    let tunnel = config.spec::<DsLiteTunnelSpec>("dslite").expect("dslite");
    assert_eq!(tunnel.aftr_fqdn.as_deref(), Some("gw.transix.jp"));
}

#[test]
fn reconcile_settings_and_locations_are_kept() {
    let config = config_of(ALL_KINDS);
    assert_eq!(config.spec.reconcile.mode, ReconcileMode::Progressive);
    assert_eq!(config.spec.reconcile.protected_interfaces, vec!["mgmt0".to_owned()]);
    let first = &config.spec.resources[0];
    assert_eq!(first.location, Location::new(15, 7));
}

#[test]
fn lenient_string_fields_accept_yaml_integers() {
    let config = config_of(ALL_KINDS);
    let sysctl = config.spec::<SysctlSpec>("ipv4-forwarding").expect("sysctl");
    assert_eq!(sysctl.value, "1");
    assert_eq!(sysctl.runtime, None);
}

#[test]
fn serialized_config_parses_back_to_the_same_resources() {
    let config = config_of(ALL_KINDS);
    let json = serde_json::to_string(&config).expect("serializes");
    // JSON is YAML, so the serialized document goes through the same parser.
    let again = config_of(&json);
    let strip = |c: &routerd_model::Config| -> Vec<(String, ResourceSpec)> {
        c.spec.resources.iter().map(|r| (r.id(), r.spec.clone())).collect()
    };
    assert_eq!(strip(&again), strip(&config));
}
