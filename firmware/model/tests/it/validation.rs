//! Semantic validation: addresses, references, uniqueness, ranges, static routes.

use routerd_test_kit::router::RouterDoc;

use crate::support::*;

/// An `IPv4PolicyRoute` item named `office` over interface `lan`, ten lines long, followed by
/// `extra` (fields indented by eight spaces).
fn policy_route(mark: u32, extra: &str) -> String {
    format!(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4PolicyRoute
      metadata:
        name: office-{mark}
      spec:
        outboundInterface: lan
        table: 100
        priority: 1000
        mark: {mark}
{extra}"
    )
}

#[test]
fn bad_cidr_is_reported_at_the_list_item() {
    let source = document(&format!(
        "{}{}",
        interface("lan", "eth1"),
        policy_route(16, "        sourceCIDRs: [10.0.0.0/33]\n")
    ));
    let error = single_error(&source);
    assert_error(
        &error,
        (23, 23),
        Some("net.routerd.net/v1alpha1/IPv4PolicyRoute/office-16"),
        "spec.resources[1].spec.sourceCIDRs[0]",
        "\"10.0.0.0/33\" is not a valid CIDR prefix (expected address/length, like 192.168.1.0/24)",
    );
}

#[test]
fn prefix_with_host_bits_set_says_host_bits_must_be_zero() {
    let extra = "        destinationCIDRs:\n          - 192.168.1.1/24\n";
    let source = document(&format!("{}{}", interface("lan", "eth1"), policy_route(16, extra)));
    let error = single_error(&source);
    assert_error(
        &error,
        (24, 13),
        Some("net.routerd.net/v1alpha1/IPv4PolicyRoute/office-16"),
        "spec.resources[1].spec.destinationCIDRs[0]",
        "prefix \"192.168.1.1/24\" has host bits set; host bits must be zero (did you mean \
         192.168.1.0/24?)",
    );
}

#[test]
fn dangling_interface_reference_names_the_provider_kinds() {
    let source = document(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticAddress
      metadata:
        name: lan-v4
      spec:
        interface: lan
        address: 192.168.1.1/24
",
    );
    let error = single_error(&source);
    assert_error(
        &error,
        (12, 20),
        Some("net.routerd.net/v1alpha1/IPv4StaticAddress/lan-v4"),
        "spec.resources[0].spec.interface",
        "interface \"lan\" is not declared by any Interface, PPPoEInterface, VLANInterface or \
         DSLiteTunnel resource",
    );
}

#[test]
fn reference_to_a_missing_health_check_is_reported() {
    let policy = "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DefaultRoutePolicy
      metadata:
        name: default-v4
      spec:
        candidates:
          - interface: wan
            priority: 10
            healthCheck: wan-ping
";
    let source = document(&format!("{}{policy}", interface("wan", "eth0")));
    let error = single_error(&source);
    assert_error(
        &error,
        (22, 26),
        Some("net.routerd.net/v1alpha1/IPv4DefaultRoutePolicy/default-v4"),
        "spec.resources[1].spec.candidates[0].healthCheck",
        "healthCheck \"wan-ping\" is not declared by any HealthCheck resource",
    );
}

#[test]
fn duplicate_resource_id_is_reported_at_the_second_name() {
    let source = document(&format!("{}{}", interface("lan", "eth1"), interface("lan", "eth2")));
    let error = single_error(&source);
    assert_error(
        &error,
        (17, 15),
        Some("net.routerd.net/v1alpha1/Interface/lan"),
        "spec.resources[1].metadata.name",
        "duplicate resource id net.routerd.net/v1alpha1/Interface/lan, first declared at line 7",
    );
}

#[test]
fn duplicate_ifname_is_reported_at_the_second_ifname() {
    let source = document(&format!("{}{}", interface("lan", "eth1"), interface("lan2", "eth1")));
    let error = single_error(&source);
    assert_error(
        &error,
        (19, 17),
        Some("net.routerd.net/v1alpha1/Interface/lan2"),
        "spec.resources[1].spec.ifname",
        "ifname \"eth1\" is already used by net.routerd.net/v1alpha1/Interface/lan",
    );
}

#[test]
fn a_fwmark_shared_across_resources_validates() {
    // routerd accepts it; the engine shares or blocks the one rule (issue 33 §5).
    let second = policy_route(16, "").replace("office-16", "office-b");
    let source = document(&format!("{}{}{second}", interface("lan", "eth1"), policy_route(16, "")));
    let parsed = routerd_model::parse_config(&source, "router.yaml");
    assert!(parsed.is_ok(), "{:?}", parsed.err());
}

#[test]
fn policy_route_ranges_are_checked() {
    let route = policy_route(16, "").replace("table: 100", "table: 0").replace("1000", "32766");
    let errors = errors_of(&document(&format!("{}{route}", interface("lan", "eth1"))));
    let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        vec!["table must be at least 1, got 0", "priority must be between 1 and 32765, got 32766"]
    );
}

#[test]
fn sysctl_key_with_slashes_is_rejected() {
    let source = document(
        "    - apiVersion: system.routerd.net/v1alpha1
      kind: Sysctl
      metadata:
        name: fwd
      spec:
        key: net/ipv4/ip_forward
        value: 1
",
    );
    let error = single_error(&source);
    assert_eq!((error.line, error.column), (12, 14));
    assert_eq!(
        error.message,
        "sysctl key \"net/ipv4/ip_forward\" must use dots, not slashes (write \"net.ipv4.ip_forward\")"
    );
}

#[test]
fn undeclared_state_variable_is_reported_at_its_key() {
    let tunnel = "    - apiVersion: net.routerd.net/v1alpha1
      kind: DSLiteTunnel
      metadata:
        name: dslite
      spec:
        interface: wan
        remoteAddress: 2001:db8::1
        when:
          state:
            wan-ready: {equals: \"yes\", for: 30s}
";
    let error = single_error(&document(&format!("{}{tunnel}", interface("wan", "eth0"))));
    assert_error(
        &error,
        (23, 13),
        Some("net.routerd.net/v1alpha1/DSLiteTunnel/dslite"),
        "spec.resources[1].spec.when.state.wan-ready",
        "state variable \"wan-ready\" is not declared by any StatePolicy",
    );
}

#[test]
fn durations_and_address_families_are_checked() {
    let scope = "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPServer
      metadata:
        name: dnsmasq
      spec: {}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPScope
      metadata:
        name: pool
      spec:
        server: dnsmasq
        interface: lan
        rangeStart: 192.168.1.200
        rangeEnd: 192.168.1.100
        leaseTime: 1d
        dnsServers: [\"2001:db8::53\"]
";
    let errors = errors_of(&document(&format!("{}{scope}", interface("lan", "eth1"))));
    let summary: Vec<(u32, &str)> = errors.iter().map(|e| (e.line, e.message.as_str())).collect();
    assert_eq!(
        summary,
        vec![
            (27, "rangeEnd 192.168.1.100 is before rangeStart 192.168.1.200"),
            (28, "duration \"1d\" has unknown unit \"d\" (use ns, us, ms, s, m or h)"),
            (29, "\"2001:db8::53\" is an IPv6 address, expected IPv4"),
        ]
    );
}

#[test]
fn protected_zone_must_be_declared() {
    let source = RouterDoc::new("x").reconcile("protectedZones: [mgmt]").to_string();
    let error = single_error(&source);
    assert_error(
        &error,
        (7, 22),
        None,
        "spec.reconcile.protectedZones[0]",
        "protectedZones \"mgmt\" is not declared by any Zone resource",
    );
}

#[test]
fn interface_names_may_not_be_shared_across_provider_kinds() {
    let tunnel = "    - apiVersion: net.routerd.net/v1alpha1
      kind: DSLiteTunnel
      metadata:
        name: wan
      spec:
        interface: wan
        remoteAddress: 2001:db8::1
";
    let error = single_error(&document(&format!("{}{tunnel}", interface("wan", "eth0"))));
    assert_eq!(error.path, "spec.resources[1].metadata.name");
    assert_eq!(
        error.message,
        "name \"wan\" is also used by net.routerd.net/v1alpha1/Interface/wan; interface references \
         would be ambiguous"
    );
}

/// An `IPv4PolicyRouteSet` item named `split` over interface `lan`, eleven lines long; the last
/// is `hashFields: <hash_fields>` (line 24 after one interface), value from column 21.
fn route_set(hash_fields: &str) -> String {
    format!(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4PolicyRouteSet
      metadata:
        name: split
      spec:
        targets:
          - outboundInterface: lan
            table: 300
            priority: 1100
            mark: 768
        hashFields: {hash_fields}
"
    )
}

#[test]
fn route_set_hash_fields_must_be_known_and_distinct() {
    let set = route_set("[sourceAddress, sourcePort, sourceAddress]");
    let errors = errors_of(&document(&format!("{}{set}", interface("lan", "eth1"))));
    assert_eq!(errors.len(), 2, "{errors}");
    let mut errors = errors.into_iter();
    let resource = Some("net.routerd.net/v1alpha1/IPv4PolicyRouteSet/split");
    assert_error(
        &errors.next().expect("first"),
        (24, 37),
        resource,
        "spec.resources[1].spec.hashFields[1]",
        "unknown hashFields entry \"sourcePort\", expected sourceAddress or destinationAddress",
    );
    assert_error(
        &errors.next().expect("second"),
        (24, 49),
        resource,
        "spec.resources[1].spec.hashFields[2]",
        "hashFields entry \"sourceAddress\" is already listed at [0]",
    );
}

#[test]
fn route_set_hash_fields_may_be_empty_or_both_addresses() {
    for fields in ["[]", "[destinationAddress, sourceAddress]"] {
        config_of(&document(&format!("{}{}", interface("lan", "eth1"), route_set(fields))));
    }
}

/// An `IPv4StaticRoute` (or `IPv6StaticRoute` when `v6`) item with the given spec lines.
fn static_route(v6: bool, spec: &str) -> String {
    let kind = if v6 { "IPv6StaticRoute" } else { "IPv4StaticRoute" };
    format!(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: {kind}
      metadata:
        name: r
      spec:
{spec}"
    )
}

#[test]
fn static_routes_parse_with_defaults() {
    let v4 = static_route(false, "        destination: 0.0.0.0/0\n        via: 192.168.1.254\n");
    let config = config_of(&document(&v4));
    let spec = config
        .spec::<routerd_model::spec::net::Ipv4StaticRouteSpec>("r")
        .expect("IPv4StaticRoute r");
    assert_eq!((spec.metric, spec.table), (0, 254));
    assert_eq!(spec.interface, None);
}

#[test]
fn static_route_rejects_default_keyword_and_host_bits() {
    let v4 = static_route(false, "        destination: default\n        via: 192.168.1.254\n");
    let error = single_error(&document(&v4));
    assert_error(
        &error,
        (12, 22),
        Some("net.routerd.net/v1alpha1/IPv4StaticRoute/r"),
        "spec.resources[0].spec.destination",
        "\"default\" is not accepted; write 0.0.0.0/0",
    );
    let v6 = static_route(true, "        destination: 2001:db8::1/64\n        via: fe80::1\n");
    let error = single_error(&document(&v6));
    assert!(error.message.contains("host bits must be zero"), "{error}");
}

#[test]
fn static_route_checks_gateway_family_table_and_next_hop() {
    let v6 = static_route(
        true,
        "        destination: ::/0\n        via: 192.168.1.1\n        table: 255\n",
    );
    let errors = errors_of(&document(&v6));
    let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        vec![
            "\"192.168.1.1\" is an IPv4 address, expected IPv6",
            "table 255 (local) is reserved for the kernel",
        ]
    );
    let bare = static_route(false, "        destination: 10.0.0.0/8\n        table: 0\n");
    let errors = errors_of(&document(&bare));
    let summary: Vec<(&str, &str)> =
        errors.iter().map(|e| (e.path.as_str(), e.message.as_str())).collect();
    assert_eq!(
        summary,
        vec![
            ("spec.resources[0].spec", "at least one of interface or via is required"),
            ("spec.resources[0].spec.table", "table 0 is not a routing table (unspecified)"),
        ]
    );
}

#[test]
fn static_route_interface_must_be_declared() {
    let v4 = static_route(false, "        destination: 10.0.0.0/8\n        interface: lan\n");
    let error = single_error(&document(&v4));
    assert_eq!(
        error.message,
        "interface \"lan\" is not declared by any Interface, PPPoEInterface, VLANInterface or \
         DSLiteTunnel resource"
    );
}

#[test]
fn errors_are_ordered_by_line() {
    let address = "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticAddress
      metadata:
        name: a
      spec:
        interface: nope
        address: 10.0.0.1
";
    let source = document(&format!("{address}{}", interface("lan", "eth1").replace("true", "2")));
    let errors = errors_of(&source);
    let lines: Vec<u32> = errors.iter().map(|e| e.line).collect();
    let mut sorted = lines.clone();
    sorted.sort_unstable();
    assert_eq!(lines, sorted);
    assert_eq!(lines.len(), 3, "got:\n{errors}");
}

#[test]
fn ds_lite_tunnel_name_may_not_be_the_kernel_fallback_device() {
    let tunnel = "    - apiVersion: net.routerd.net/v1alpha1
      kind: DSLiteTunnel
      metadata:
        name: dslite
      spec:
        interface: wan
        tunnelName: ip6tnl0
        remoteAddress: 2001:db8::1
";
    let error = single_error(&document(&format!("{}{tunnel}", interface("wan", "eth0"))));
    assert_error(
        &error,
        (20, 21),
        Some("net.routerd.net/v1alpha1/DSLiteTunnel/dslite"),
        "spec.resources[1].spec.tunnelName",
        "tunnelName \"ip6tnl0\" is the kernel's fallback tunnel device; choose another name",
    );
}

/// A `HealthCheck` item of `type` with `target`, six lines long.
fn health_check(kind: &str, target: &str) -> String {
    format!(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: HealthCheck
      metadata:
        name: hc
      spec: {{type: {kind}, target: \"{target}\"}}
"
    )
}

#[test]
fn health_check_targets_carry_a_port_for_tcp_and_dns_only() {
    for ok in [
        ("ping", "192.0.2.1"),
        ("ping", "2001:db8::1"),
        ("tcp", "192.0.2.1:443"),
        ("tcp", "[2001:db8::1]:443"),
        ("tcp", "example.net:443"),
        ("dns", "192.0.2.53"),
        ("dns", "[2001:db8::53]:5353"),
    ] {
        config_of(&document(&health_check(ok.0, ok.1)));
    }
    for (kind, target, message) in [
        ("tcp", "192.0.2.1", "type tcp needs a port: target host:port"),
        ("ping", "192.0.2.1:80", "a port is meaningful for type tcp or dns only, not ping"),
        ("tcp", "192.0.2.1:0", "port \"0\" is not a number in 1..=65535"),
        ("dns", "[2001:db8::53", "unclosed [ in target"),
    ] {
        let error = single_error(&document(&health_check(kind, target)));
        assert_eq!(error.path, "spec.resources[0].spec.target", "{kind} {target}");
        assert_eq!(error.message, message, "{kind} {target}");
    }
}

#[test]
fn a_delegated_address_candidate_is_refused_in_an_ipv4_self_address_policy() {
    let policy = "    - apiVersion: net.routerd.net/v1alpha1
      kind: SelfAddressPolicy
      metadata:
        name: lan-dns
      spec:
        addressFamily: ipv4
        candidates:
          - source: interfaceAddress
            interface: lan
            matchSuffix: 0.0.0.1
          - source: delegatedAddress
            delegatedAddress: lan-v6
";
    let source = document(&format!("{}{policy}", interface("lan", "eth1")));
    let errors = errors_of(&source);
    let summary: Vec<(&str, &str)> =
        errors.iter().map(|e| (e.path.as_str(), e.message.as_str())).collect();
    assert!(
        summary.contains(&(
            "spec.resources[1].spec.candidates[1].source",
            "delegatedAddress candidates give IPv6 addresses only"
        )),
        "{summary:#?}"
    );
    // The IPv4 candidate itself is fine; the other error is the dangling reference.
    assert!(!summary.iter().any(|(p, _)| p.contains("candidates[0]")), "{summary:#?}");
}

#[test]
fn a_forwarder_taking_its_resolvers_from_a_lease_must_name_the_interface() {
    let source = document(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSConditionalForwarder
      metadata:
        name: isp
      spec:
        domain: isp.example
        upstreamSource: dhcp6
",
    );
    let error = single_error(&source);
    assert_eq!(
        error.resource.as_deref(),
        Some("net.routerd.net/v1alpha1/DNSConditionalForwarder/isp")
    );
    assert_eq!(
        error.message,
        "upstreamInterface is required when upstreamSource is dhcp4 or dhcp6"
    );
}
