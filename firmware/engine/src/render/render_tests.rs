use std::collections::BTreeSet;

use routerd_host::artifact::DhcpBinding;
use routerd_host::nftables::ir::{
    NftAction, NftFamily, NftHashField, NftMatch, NftRule, NftTableSpec,
};
use routerd_host::{ArtifactKind, ArtifactSpec};
use routerd_model::spec::StateMatchSpec;
use routerd_model::{ResourceKind, parse_config};

use routerd_host::Target;

use super::{render, render_with};
use crate::fixtures::{LAN0, WAN_PD_LAN_V6, WAN0, intent, router};
use crate::intent::{Action, ApplyWith, Carried, Intent};
use crate::runtime::RuntimeValues;

const ALL_KINDS: &str = include_str!("../../../model/tests/fixtures/all-kinds.yaml");
const LAB: &str = include_str!("../../../../examples/lab-router.yaml");

#[test]
fn every_resource_kind_emits_at_least_one_intent() {
    let config = parse_config(ALL_KINDS, "all-kinds.yaml").expect("fixture parses");
    let rendered = render(&config);
    let mut silent = Vec::new();
    for kind in ResourceKind::ALL {
        let resources: Vec<_> = config.resources_of(kind).collect();
        assert!(!resources.is_empty(), "fixture lacks {}", kind.as_str());
        for r in resources {
            if !rendered.intents.iter().any(|i| *i.owner == *r.id()) {
                silent.push(r.id());
            }
        }
    }
    assert!(silent.is_empty(), "resources that emit no intent: {silent:?}");
}

#[test]
fn lab_config_renders_the_expected_kernel_artifacts() {
    let config = parse_config(LAB, "lab-router.yaml").expect("lab parses");
    let rendered = render(&config);
    let keys: BTreeSet<String> = rendered.intents.iter().map(|i| i.key().to_string()).collect();
    for expected in [
        "linux.sysctl/net.ipv4.ip_forward",
        "linux.link/wan0",
        "linux.link/lan0",
        "linux.ipv4.address/wan0/198.51.100.2/24",
        "linux.ipv4.address/lan0/192.168.50.1/24",
        "linux.ipv4.route/254:0.0.0.0/0:0",
        "linux.ipv4.routeTable/100",
        "linux.ipv4.route/100:0.0.0.0/0:0",
        "linux.ipv4.fwmarkRule/0x100",
        "linux.sysctl/net.ipv4.conf.wan0.rp_filter",
        "nft.table/ip/routerd_snat_lan_masquerade",
        "nft.table/ip/routerd_policy_guests_via_wan",
        "nft.table/inet/routerd_filter_home",
        "nft.table/ip/routerd_dnat_client_web",
        "nft.table/inet/routerd_mss_wan_mss",
        "routerd.firewallZone/lan",
    ] {
        assert!(keys.contains(expected), "missing {expected}; have {keys:#?}");
    }
    // Only kernel backends in the lab: nothing is left for a later issue's configurator.
    for i in &rendered.intents {
        assert!(
            matches!(
                i.apply_with,
                ApplyWith::Rtnetlink | ApplyWith::Nftnl | ApplyWith::Procfs | ApplyWith::Routerd
            ),
            "{} applies with {}",
            i.key(),
            i.apply_with
        );
    }
}

#[test]
fn policy_route_is_table_then_route_then_rule_then_marks() {
    let config = parse_config(LAB, "lab-router.yaml").expect("lab parses");
    let rendered = render(&config);
    let owned: Vec<_> = rendered
        .intents
        .iter()
        .filter(|i| i.owner.ends_with("/IPv4PolicyRoute/guests-via-wan"))
        .collect();
    let kinds: Vec<ArtifactKind> = owned.iter().map(|i| i.kind()).collect();
    assert_eq!(
        kinds,
        [
            ArtifactKind::Ipv4RouteTable,
            ArtifactKind::Ipv4Route,
            ArtifactKind::Ipv4FwmarkRule,
            ArtifactKind::NftTable
        ]
    );
    // The table's default route takes the gateway of the static default route on wan.
    let ArtifactSpec::Route(r) = &owned[1].artifact.spec else { panic!("route") };
    assert_eq!(r.gateway, Some("198.51.100.1".parse().expect("literal")));
    // The rule waits for the route; the nft table waits for the rule.
    assert_eq!(owned[2].dependencies[0].key, owned[1].artifact.key);
    assert_eq!(owned[3].dependencies[0].key, owned[2].artifact.key);
    let ArtifactSpec::NftTable(t) = &owned[3].artifact.spec else { panic!("table") };
    let rule = &t.chains[0].rules[0];
    assert_eq!(rule.matches, [NftMatch::Ip4Saddr("192.168.50.128/25".parse().expect("literal"))]);
    assert_eq!(rule.actions, [NftAction::SetMark(0x100)]);
}

#[test]
fn route_via_gateway_depends_on_the_address_that_reaches_it() {
    let config = parse_config(LAB, "lab-router.yaml").expect("lab parses");
    let rendered = render(&config);
    let route = intent(&rendered, "linux.ipv4.route/254:0.0.0.0/0:0");
    let deps: Vec<String> = route.dependencies.iter().map(|d| d.key.to_string()).collect();
    assert_eq!(deps, ["linux.link/wan0", "linux.ipv4.address/wan0/198.51.100.2/24"]);
}

#[test]
fn firewall_forwards_exposed_services_and_unmanaged_interfaces_are_observed() {
    let yaml =
        LAB.replace("        managed: true\n        adminUp: true\n", "        managed: false\n");
    let config = parse_config(&yaml, "lab.yaml").expect("parses");
    let rendered = render(&config);
    let link = intent(&rendered, "linux.link/wan0");
    assert_eq!(link.action, Action::Observe);
    let filter = rendered
        .intents
        .iter()
        .find_map(|i| match &i.artifact.spec {
            ArtifactSpec::NftTable(t) if t.name == "routerd_filter_home" => Some(t),
            _ => None,
        })
        .expect("filter table");
    let forward = filter.chains.iter().find(|c| c.name == "forward").expect("forward chain");
    let text: Vec<String> = forward.rules.iter().map(ToString::to_string).collect();
    assert!(
        text.iter().any(|r| r.contains("iifname \"wan0\"")
            && r.contains("192.168.50.10")
            && r.contains("80")),
        "{text:#?}"
    );
}

#[test]
fn pppoe_password_never_reaches_intents() {
    let yaml =
        ALL_KINDS.replace("passwordFile: /run/secrets/pppoe-password", "password: s3cr3t-Pw-77");
    assert_ne!(yaml, ALL_KINDS, "fixture changed: no PPPoE passwordFile to replace");
    let config = parse_config(&yaml, "all-kinds.yaml").expect("fixture parses");
    let rendered = render(&config);
    assert!(rendered.intents.iter().any(|i| i.owner.contains("/PPPoEInterface/")));
    let json = serde_json::to_string(&rendered.intents).expect("serialise");
    assert!(!json.contains("s3cr3t-Pw-77"), "password leaked into intents");
    // Both secrets files get the entry, shown by its digest; the unit redials when it changes.
    let secrets: Vec<&Intent> =
        rendered.intents.iter().filter(|i| i.kind() == ArtifactKind::PppSecret).collect();
    assert_eq!(secrets.len(), 2, "{json}");
    for s in &secrets {
        let shown = serde_json::to_value(&s.artifact.spec).expect("json");
        let digest = shown["secret"]["inline"].as_str().unwrap_or_default();
        assert!(digest.starts_with("hmac-sha256:"), "{shown}");
        assert_eq!(shown["mode"], 0o600, "{shown}");
    }
    let unit = intent(&rendered, "systemd.service/routerd-pppoe-wan-pppoe.service");
    for s in &secrets {
        let dep = unit.dependencies.iter().find(|d| d.key == *s.key()).expect("unit needs it");
        assert!(dep.recreate_when_modified, "{dep:?}");
    }
    let ArtifactSpec::Unit(u) = &unit.artifact.spec else { panic!("{unit:?}") };
    assert!(u.content.contains("ExecStart=/usr/sbin/pppd call routerd-wan-pppoe\n"), "{u:?}");
}

/// The nft table of the fixture's `IPv4PolicyRouteSet/split` rendered from `yaml`, and the
/// resource's warnings.
fn route_set_table(yaml: &str) -> (Option<NftTableSpec>, Vec<String>) {
    let config = parse_config(yaml, "all-kinds.yaml").expect("fixture parses");
    let rendered = render(&config);
    let owner = "net.routerd.net/v1alpha1/IPv4PolicyRouteSet/split";
    let table = rendered.intents.iter().find_map(|i| match &i.artifact.spec {
        ArtifactSpec::NftTable(t) if &*i.owner == owner => Some(t.clone()),
        _ => None,
    });
    (table, rendered.warnings.get(owner).cloned().unwrap_or_default())
}

/// Rule texts as `nft list` prints them, without the digest comment.
fn rule_texts(table: &NftTableSpec) -> Vec<String> {
    let text = |r: &NftRule| r.to_nft(NftFamily::Ip);
    let rules = &table.chains[0].rules;
    rules.iter().map(|r| text(r).split(" comment ").next().unwrap_or_default().into()).collect()
}

#[test]
fn route_set_with_two_targets_hashes_then_remaps_each_bucket() {
    let (table, warnings) = route_set_table(ALL_KINDS);
    let table = table.expect("route set renders its nft table");
    assert_eq!(table.key_name(), "ip/routerd_policyset_split");
    assert_eq!(
        rule_texts(&table),
        [
            "ip saddr 192.168.10.0/24 meta mark set jhash ip saddr . ip daddr mod 2 seed 0x0 \
             offset 2130706432",
            "ip saddr 192.168.10.0/24 meta mark 0x7f000000 meta mark set 0x00000300",
            "ip saddr 192.168.10.0/24 meta mark 0x7f000001 meta mark set 0x00000301",
        ]
    );
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn route_set_hashes_the_source_address_when_hash_fields_are_empty() {
    let yaml = ALL_KINDS.replace("hashFields: [sourceAddress, destinationAddress]", "");
    assert_ne!(yaml, ALL_KINDS, "fixture changed: no hashFields to remove");
    let (table, _) = route_set_table(&yaml);
    let rule = &table.expect("nft table").chains[0].rules[0];
    let fields = vec![NftHashField::Ip4Saddr];
    assert_eq!(rule.actions, [NftAction::SetMarkHash { fields, modulus: 2, offset: 0x7f00_0000 }]);
}

#[test]
fn route_set_with_one_target_sets_its_mark() {
    let second = "          - name: pppoe
            outboundInterface: wan-pppoe
            table: 301
            priority: 1101
            mark: 769
";
    let yaml = ALL_KINDS.replace(second, "");
    assert_ne!(yaml, ALL_KINDS, "fixture changed: no second target to remove");
    let (table, _) = route_set_table(&yaml);
    let table = table.expect("nft table");
    assert_eq!(rule_texts(&table), ["ip saddr 192.168.10.0/24 meta mark set 0x00000300"]);
}

/// The spec of the intent with `key`, rendered from the all-kinds fixture.
fn fixture_spec(key: &str) -> ArtifactSpec {
    let config = parse_config(ALL_KINDS, "all-kinds.yaml").expect("fixture parses");
    let rendered = render(&config);
    intent(&rendered, key).artifact.spec.clone()
}

#[test]
fn dhcp_client_bindings_render_networkd_blocks_on_the_upstream_link() {
    let ArtifactSpec::DhcpClient(v4) = fixture_spec("dhcp.ipv4.client/enp1s0") else {
        panic!("not a DHCP client binding")
    };
    assert_eq!(
        v4.settings,
        [
            "[DHCPv4]",
            "ClientIdentifier=mac",
            "UseHostname=no",
            "UseDNS=no",
            "UseRoutes=no",
            "RouteMetric=200"
        ]
    );
    assert!(v4.effective);
    let ArtifactSpec::DhcpClient(pd) = fixture_spec("dhcp.ipv6.prefixDelegation/enp1s0") else {
        panic!("not a DHCP client binding")
    };
    assert_eq!(
        pd.settings,
        ["[DHCPv6]", "PrefixDelegationHint=::/60", "IAID=1", "DUIDType=link-layer"]
    );
    // The delegated LAN address: a binding of the downstream link naming the uplink, which
    // waits on the delegation there.
    let config = parse_config(ALL_KINDS, "all-kinds.yaml").expect("fixture parses");
    let rendered = render(&config);
    let lan = rendered
        .intents
        .iter()
        .find(|i| i.key().to_string().starts_with("dhcp.ipv6.delegatedAddress/"))
        .expect("delegated address");
    assert!(
        lan.dependencies.iter().any(|d| d.key.to_string() == "dhcp.ipv6.prefixDelegation/enp1s0"),
        "{:#?}",
        lan.dependencies
    );
    let ArtifactSpec::DhcpClient(da) = &lan.artifact.spec else { panic!("not a binding") };
    assert_eq!(da.binding, DhcpBinding::DelegatedAddress);
    for line in ["DHCPPrefixDelegation=yes", "UplinkInterface=enp1s0", "Assign=yes"] {
        assert!(da.settings.iter().any(|l| l == line), "{line}: {:?}", da.settings);
    }
    assert!(
        da.settings.iter().any(|l| l.starts_with("Token=static:") && l.ends_with("::1")),
        "{:?}",
        da.settings
    );
    assert!(da.settings.iter().any(|l| l.starts_with("SubnetId=0x")), "{:?}", da.settings);
}

#[test]
fn a_delegated_address_takes_its_subnet_and_suffix_and_refuses_a_subnet_networkd_does_not() {
    let config = |subnet: &str| {
        let delegated =
            WAN_PD_LAN_V6.replace("subnetID: \"2a\"", &format!("subnetID: {subnet}")).replace(
                "addressSuffix: \"::1\"",
                "addressSuffix: \"::1:0:0:1\"\n        sendRA: true",
            );
        router(&format!("{WAN0}{LAN0}{delegated}"))
    };
    let rendered = render(&config("\"a0\""));
    let i = intent(&rendered, "dhcp.ipv6.delegatedAddress/lan0");
    let ArtifactSpec::DhcpClient(da) = &i.artifact.spec else { panic!("not a binding") };
    assert_eq!(
        da.settings,
        [
            "[Network]",
            "DHCPPrefixDelegation=yes",
            "IPv6SendRA=yes",
            "[DHCPPrefixDelegation]",
            "UplinkInterface=wan0",
            "SubnetId=0xa0",
            "Assign=yes",
            "Token=static:::1:0:0:1",
            "Announce=no",
        ]
    );
    // Beyond networkd's range: not applied, and the resource says why.
    let rendered = render(&config("\"ffffffffffffffff\""));
    let i = intent(&rendered, "dhcp.ipv6.delegatedAddress/lan0");
    assert!(matches!(i.artifact.spec, ArtifactSpec::Opaque(_)));
    let warnings = &rendered.warnings["net.routerd.net/v1alpha1/IPv6DelegatedAddress/lan-v6"];
    assert!(warnings.iter().any(|w| w.contains("subnetID")), "{warnings:?}");
}

#[test]
fn a_dhcp_client_other_than_networkd_is_applied_through_networkd_with_a_warning() {
    let yaml = ALL_KINDS.replace(
        "        interface: wan\n        required: false\n",
        "        interface: wan\n        client: dhclient\n        required: false\n",
    );
    assert_ne!(yaml, ALL_KINDS, "fixture changed: no IPv4DHCPAddress to give a client");
    let config = parse_config(&yaml, "all-kinds.yaml").expect("fixture parses");
    let rendered = render(&config);
    let i = intent(&rendered, "dhcp.ipv4.client/enp1s0");
    assert!(matches!(i.artifact.spec, ArtifactSpec::DhcpClient(_)), "{:?}", i.artifact.spec);
    assert_eq!(i.apply_with, ApplyWith::Networkd);
    let warnings = &rendered.warnings["net.routerd.net/v1alpha1/IPv4DHCPAddress/wan-v4-dhcp"];
    assert!(
        warnings.iter().any(|w| w.contains(
            "client \"dhclient\" is not in this firmware; systemd-networkd runs the binding"
        )),
        "{warnings:?}"
    );
}

#[test]
fn dhcp_scope_renders_a_tagged_range_with_its_lease_time() {
    let ArtifactSpec::DnsmasqSection(s) = fixture_spec("dnsmasq.config/dhcpv4-range/lan-pool")
    else {
        panic!("not a dnsmasq section")
    };
    // 12h in seconds; routerSource interfaceAddress and dnsSource self are dnsmasq's
    // defaults, so no option lines.
    assert_eq!(
        s.lines,
        ["dhcp-range=set:lan-pool,192.168.10.100,192.168.10.199,43200", "dhcp-authoritative"]
    );
}

#[test]
fn an_unmanaged_dhcp_server_and_its_scopes_declare_nothing_and_say_so() {
    let servers = |managed: bool| {
        router(&format!(
            "{LAN0}    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPServer
      metadata: {{name: dhcp}}
      spec: {{managed: {managed}, listenInterfaces: [lan]}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPScope
      metadata: {{name: pool}}
      spec: {{server: dhcp, interface: lan, rangeStart: 192.168.1.100, rangeEnd: 192.168.1.200}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6DHCPServer
      metadata: {{name: ra}}
      spec: {{managed: {managed}, listenInterfaces: [lan]}}
"
        ))
    };
    let keys = |managed: bool| -> Vec<String> {
        render(&servers(managed)).intents.iter().map(|i| i.key().to_string()).collect()
    };
    let managed = keys(true);
    for key in [
        "systemd.service/routerd-dnsmasq.service",
        "dnsmasq.config/dhcpv4-server/dhcp",
        "dnsmasq.config/dhcpv4-range/pool",
        "dnsmasq.config/dhcpv6-server/ra",
    ] {
        assert!(managed.iter().any(|k| k == key), "{key} missing from {managed:?}");
    }
    // managed: false: another tool runs the server; routerd runs no dnsmasq for it.
    let unmanaged = keys(false);
    assert!(!unmanaged.iter().any(|k| k.starts_with("dnsmasq.config/")), "{unmanaged:?}");
    assert!(!unmanaged.iter().any(|k| k.contains("dnsmasq.service")), "{unmanaged:?}");
    let warnings = render(&servers(false)).warnings;
    for id in ["IPv4DHCPServer/dhcp", "IPv4DHCPScope/pool", "IPv6DHCPServer/ra"] {
        let said = &warnings[&format!("net.routerd.net/v1alpha1/{id}")];
        assert!(said.iter().any(|w| w.contains("managed: false")), "{id}: {said:?}");
    }
}

#[test]
fn a_health_checked_candidate_gets_a_gated_preferred_route_and_a_standby_route() {
    let config = router(
        "    - {apiVersion: net.routerd.net/v1alpha1, kind: Interface, metadata: {name: wan}, spec: {ifname: wan0, managed: true}}
    - {apiVersion: net.routerd.net/v1alpha1, kind: Interface, metadata: {name: lte}, spec: {ifname: wwan0, managed: true}}
    - {apiVersion: net.routerd.net/v1alpha1, kind: HealthCheck, metadata: {name: wan-gw}, spec: {interface: wan}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DefaultRoutePolicy
      metadata: {name: up}
      spec:
        candidates:
          - {interface: wan, gatewaySource: static, gateway: 198.51.100.1, priority: 10, healthCheck: wan-gw}
          - {interface: lte, priority: 20}
",
    );
    let rendered = render(&config);
    let route = |metric: u32| {
        let name = format!("254:0.0.0.0/0:{metric}");
        rendered
            .intents
            .iter()
            .find(|i| i.kind() == ArtifactKind::Ipv4Route && i.key().name == name)
            .unwrap_or_else(|| panic!("no route {name}"))
    };
    let gated = |metric| {
        route(metric)
            .dependencies
            .iter()
            .filter(|d| d.healthy)
            .map(|d| d.key.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(gated(10), ["routerd.healthCheck/wan-gw"], "preferred: while the check is healthy");
    assert_eq!(gated(1_000_010), Vec::<String>::new(), "standby: always");
    assert_eq!(gated(20), Vec::<String>::new(), "no check: one route, always");
    assert!(
        rendered.intents.iter().all(|i| i.key().name != "254:0.0.0.0/0:1000020"),
        "no standby without a check"
    );
    let check = rendered
        .intents
        .iter()
        .find(|i| i.kind() == ArtifactKind::HealthCheck)
        .expect("the check's verdict");
    assert_eq!(check.action, Action::Observe, "a verdict is an external item");
    assert_eq!(check.apply_with, ApplyWith::Scheduler);
}

#[test]
fn a_dhcp4_candidate_routes_through_the_lease_router_and_waits_for_it() {
    let with_binding = |binding: &str| {
        router(&format!(
            "{WAN0}{binding}    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DefaultRoutePolicy
      metadata: {{name: up}}
      spec:
        candidates:
          - {{name: isp, interface: wan, gatewaySource: dhcp4, priority: 50}}
"
        ))
    };
    let binding = "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPAddress
      metadata: {name: wan-v4}
      spec: {interface: wan}
";
    let config = with_binding(binding);
    let warnings = |config| {
        let id = "net.routerd.net/v1alpha1/IPv4DefaultRoutePolicy/up";
        render(config).warnings.get(id).cloned().unwrap_or_default()
    };
    let route = |runtime: &RuntimeValues| {
        let rendered = render_with(&config, &Target::default(), runtime);
        let route = intent(&rendered, "linux.ipv4.route/254:0.0.0.0/0:50").clone();
        let ArtifactSpec::Route(spec) = &route.artifact.spec else { panic!("a route") };
        (spec.gateway, route.dependencies)
    };
    // The render asks for the lease's router on wan0, and for nothing else.
    let reads = render(&config).reads;
    assert_eq!(reads.lease_gateways, BTreeSet::from(["wan0".to_string()]));
    assert!(reads.address_links.is_empty() && reads.health_checks.is_empty(), "{reads:?}");
    // Before the lease: no gateway, and a dependency met only once the lease has a router.
    let (gateway, deps) = route(&RuntimeValues::default());
    assert_eq!(gateway, None);
    let waits: Vec<_> = deps.iter().filter(|d| d.carries == Some(Carried::Gateway)).collect();
    assert_eq!(waits.len(), 1, "{deps:?}");
    assert_eq!(waits[0].key.to_string(), "dhcp.ipv4.client/wan0");
    // With it: the route goes through the router, and follows it when it changes.
    let leased = |g: [u8; 4]| RuntimeValues {
        lease_gateways: [("wan0".to_string(), g.into())].into(),
        ..Default::default()
    };
    assert_eq!(route(&leased([10, 0, 2, 2])).0, Some("10.0.2.2".parse().expect("ip")));
    assert_eq!(route(&leased([10, 0, 3, 1])).0, Some("10.0.3.1".parse().expect("ip")));
    // The dependency's predicate: a lease without router does not carry it.
    let lease = |gateway: Option<[u8; 4]>| {
        ArtifactSpec::DhcpClient(routerd_host::artifact::DhcpClientSpec {
            binding: DhcpBinding::Ipv4,
            ifname: "wan0".into(),
            settings: Vec::new(),
            effective: true,
            addresses: vec!["10.0.2.15/24".into()],
            gateway: gateway.map(Into::into),
            dns_servers: Vec::new(),
        })
    };
    assert!(Carried::Gateway.by(&lease(Some([10, 0, 2, 2]))));
    assert!(!Carried::Gateway.by(&lease(None)));
    assert_eq!(warnings(&config), Vec::<String>::new());
    // A lease networkd routes through no router is warned about, as is no lease at all.
    let no_routes =
        with_binding(&binding.replace("{interface: wan}", "{interface: wan, useRoutes: false}"));
    let said = warnings(&no_routes);
    assert!(said.len() == 1 && said[0].contains("useRoutes: false"), "{said:?}");
    let said = warnings(&with_binding(""));
    assert!(said.len() == 1 && said[0].contains("no IPv4DHCPAddress is on wan"), "{said:?}");
}

/// Interfaces `wan` and `lte`, the resources `extra`, `IPv4DefaultRoutePolicy` `up` marking
/// 192.168.1.0/24 with the `candidates` list items, and StatePolicy `wan.mode` whose one value is
/// `value`; with the gate `when.state.wan.mode.equals: value` the candidates use.
fn gated_by_wan_mode(
    value: &str,
    extra: &str,
    candidates: &str,
) -> (routerd_model::Config, (String, StateMatchSpec)) {
    let config = router(&format!(
        "{WAN0}    - {{apiVersion: net.routerd.net/v1alpha1, kind: Interface, metadata: {{name: lte}}, spec: {{ifname: wwan0, managed: true}}}}
{extra}    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DefaultRoutePolicy
      metadata: {{name: up}}
      spec:
        sourceCIDRs: [192.168.1.0/24]
        candidates:
{candidates}    - apiVersion: net.routerd.net/v1alpha1
      kind: StatePolicy
      metadata: {{name: mode}}
      spec:
        variable: wan.mode
        values: [{{value: {value}, when: {{ipv6Address: {{interface: wan}}}}}}]
"
    ));
    let condition = StateMatchSpec { equals: Some(value.into()), ..Default::default() };
    (config, ("wan.mode".to_string(), condition))
}

#[test]
fn a_candidates_when_gates_its_own_routes_and_the_mark_skips_it_while_off() {
    let (config, gate) = gated_by_wan_mode(
        "fiber",
        "",
        "          - {name: fiber, interface: wan, priority: 10, table: 101, mark: 257, when: {state: {wan.mode: {equals: fiber}}}}
          - {name: lte, interface: lte, priority: 20, table: 102, mark: 258}
",
    );
    assert_eq!(render(&config).reads.state_gates, std::slice::from_ref(&gate));
    // The scheduler re-checks it, so a `for` running out asks for a reconcile.
    assert_eq!(crate::state::state_gates(&config), std::slice::from_ref(&gate));
    let mark_with = |holds: Option<bool>| {
        let runtime = RuntimeValues {
            gates: holds.map(|h| (gate.0.clone(), gate.1.clone(), h)).into_iter().collect(),
            ..Default::default()
        };
        let rendered = render_with(&config, &Target::default(), &runtime);
        let table = intent(&rendered, "nft.table/ip/routerd_default_route_up");
        let ArtifactSpec::NftTable(t) = &table.artifact.spec else { panic!("a table") };
        (rule_texts(t), rendered)
    };
    // The fiber candidate's route and rule wait for the condition; the LTE one's do not.
    let (marks, rendered) = mark_with(Some(true));
    let gated = |key: &str| {
        intent(&rendered, key)
            .dependencies
            .iter()
            .filter_map(|d| d.state.as_ref().map(|s| (d.key.to_string(), (**s).clone())))
            .collect::<Vec<_>>()
    };
    let on_state = vec![("routerd.stateVariable/wan.mode".to_string(), gate.1.clone())];
    assert_eq!(gated("linux.ipv4.route/101:0.0.0.0/0:0"), on_state);
    assert_eq!(gated("linux.ipv4.fwmarkRule/0x101"), on_state);
    assert_eq!(gated("linux.ipv4.route/102:0.0.0.0/0:0"), []);
    assert_eq!(gated("linux.ipv4.fwmarkRule/0x102"), []);
    // While it holds, the traffic is marked for the fiber table; while it does not, for LTE's.
    assert!(marks.iter().all(|r| r.ends_with("meta mark set 0x00000101")), "{marks:?}");
    let (marks, _) = mark_with(Some(false));
    assert!(marks.iter().all(|r| r.ends_with("meta mark set 0x00000102")), "{marks:?}");
}

#[test]
fn lease_dns_servers_feed_a_forwarder_the_dhcp_servers_upstream_and_a_scopes_option() {
    let config = router(&format!(
        "{WAN0}{LAN0}    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPAddress
      metadata: {{name: wan-v4}}
      spec: {{interface: wan}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPServer
      metadata: {{name: dhcp}}
      spec:
        managed: true
        listenInterfaces: [lan]
        dns: {{enabled: true, upstreamSource: dhcp4, upstreamInterface: wan}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPScope
      metadata: {{name: pool}}
      spec:
        server: dhcp
        interface: lan
        rangeStart: 192.168.1.100
        rangeEnd: 192.168.1.200
        dnsSource: dhcp4
        dnsInterface: wan
    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSConditionalForwarder
      metadata: {{name: isp}}
      spec: {{domain: isp.example, upstreamSource: dhcp4, upstreamInterface: wan}}
"
    ));
    let client = routerd_host::ArtifactKey::new(ArtifactKind::Dhcp4Client, "wan0");
    assert_eq!(render(&config).reads.lease_dns, BTreeSet::from([client.clone()]));
    let sections = |runtime: &RuntimeValues| {
        let rendered = render_with(&config, &Target::default(), runtime);
        let lines = |key: &str| {
            let i = intent(&rendered, key);
            let ArtifactSpec::DnsmasqSection(d) = &i.artifact.spec else { panic!("{i:?}") };
            (d.lines.clone(), i.dependencies.clone())
        };
        let (forwarder, deps) = lines("dnsmasq.config/server/isp.example");
        let (server, _) = lines("dnsmasq.config/dhcpv4-server/dhcp");
        let (scope, _) = lines("dnsmasq.config/dhcpv4-range/pool");
        (forwarder, deps, [server, scope], rendered.warnings)
    };
    // No lease yet: the forwarder waits on the client's DNS servers; the DHCP server keeps
    // the system's resolvers, and says so.
    let (forwarder, deps, [server, scope], warnings) = sections(&RuntimeValues::default());
    assert!(forwarder.is_empty(), "{forwarder:?}");
    let waits: Vec<_> = deps.iter().filter(|d| d.carries == Some(Carried::DnsServers)).collect();
    assert_eq!(waits.len(), 1, "{deps:?}");
    assert_eq!(waits[0].key, client);
    assert!(!server.iter().any(|l| l == "no-resolv"), "{server:?}");
    let said = &warnings["net.routerd.net/v1alpha1/IPv4DHCPServer/dhcp"];
    assert!(said.iter().any(|w| w.contains("has no DNS servers")), "{said:?}");
    assert!(!scope.iter().any(|l| l.contains("dns-server")), "dnsmasq's default: {scope:?}");
    let said = &warnings["net.routerd.net/v1alpha1/IPv4DHCPScope/pool"];
    assert!(said.iter().any(|w| w.contains("has no DNS servers")), "{said:?}");
    // With the lease's servers: both use them.
    let leased = RuntimeValues {
        lease_dns: [(client.clone(), vec!["10.0.2.3".parse().expect("ip")])].into(),
        ..Default::default()
    };
    let (forwarder, _, [server, scope], warnings) = sections(&leased);
    assert_eq!(forwarder, ["server=/isp.example/10.0.2.3"]);
    assert!(server.ends_with(&["no-resolv".to_string(), "server=10.0.2.3".into()]), "{server:?}");
    assert!(scope.contains(&"dhcp-option=tag:pool,option:dns-server,10.0.2.3".into()), "{scope:?}");
    assert!(!warnings.contains_key("net.routerd.net/v1alpha1/IPv4DHCPServer/dhcp"), "{warnings:?}");
    assert!(!warnings.contains_key("net.routerd.net/v1alpha1/IPv4DHCPScope/pool"), "{warnings:?}");
}

#[test]
fn a_hairpin_service_reflects_the_exposed_links_addresses_to_the_other_zones() {
    let config = parse_config(
        &LAB.replace(
            "        internalPort: 80\n",
            "        internalPort: 80\n        hairpin: true\n",
        ),
        "lab.yaml",
    )
    .expect("parses");
    assert_eq!(render(&config).reads.address_links, BTreeSet::from(["wan0".to_string()]));
    let table = |runtime: &RuntimeValues| {
        let rendered = render_with(&config, &Target::default(), runtime);
        let i = intent(&rendered, "nft.table/ip/routerd_dnat_client_web");
        let ArtifactSpec::NftTable(t) = &i.artifact.spec else { panic!("a table") };
        let texts = |c: usize| -> Vec<String> {
            t.chains
                .get(c)
                .map(|chain| {
                    chain
                        .rules
                        .iter()
                        .map(|r| {
                            r.to_nft(NftFamily::Ip)
                                .split(" comment ")
                                .next()
                                .unwrap_or_default()
                                .to_string()
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        (texts(0), texts(1), rendered.warnings)
    };
    // No address on wan0 yet: only the WAN's forward, and a warning.
    let (prerouting, postrouting, warnings) = table(&RuntimeValues::default());
    assert_eq!(prerouting.len(), 1, "{prerouting:?}");
    assert!(postrouting.is_empty(), "{postrouting:?}");
    let said = &warnings["firewall.routerd.net/v1alpha1/ExposeService/client-web"];
    assert!(said.iter().any(|w| w.contains("no address on wan0")), "{said:?}");
    // With the WAN address: the LAN's traffic to it is reflected and masqueraded back.
    let runtime = RuntimeValues {
        interface_addresses: [("wan0".to_string(), vec!["198.51.100.2/24".parse().expect("net")])]
            .into(),
        ..Default::default()
    };
    let (prerouting, postrouting, _) = table(&runtime);
    assert_eq!(prerouting.len(), 2, "{prerouting:?}");
    assert!(prerouting[1].starts_with("iifname \"lan0\" ip daddr 198.51.100.2 "), "{prerouting:?}");
    assert!(prerouting[1].contains("dport 8080 dnat"), "{prerouting:?}");
    assert_eq!(postrouting.len(), 1, "{postrouting:?}");
    assert!(
        postrouting[0].starts_with("iifname \"lan0\" oifname \"lan0\" ip daddr 192.168.50.10 "),
        "{postrouting:?}"
    );
    assert!(postrouting[0].ends_with("masquerade"), "{postrouting:?}");
}

#[test]
fn a_route_set_candidate_spreads_the_marked_traffic_over_the_sets_targets() {
    let route_set = "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4PolicyRouteSet
      metadata: {name: both}
      spec:
        hashFields: [sourceAddress]
        targets:
          - {outboundInterface: wan, table: 101, priority: 10101, mark: 257}
          - {outboundInterface: lte, table: 102, priority: 10102, mark: 258}
";
    let (config, gate) = gated_by_wan_mode(
        "both",
        route_set,
        "          - {name: balanced, routeSet: both, priority: 10, when: {state: {wan.mode: {equals: both}}}}
          - {name: lte, interface: lte, priority: 20, table: 103, mark: 259}
",
    );
    assert_eq!(render(&config).reads.state_gates, std::slice::from_ref(&gate));
    let table = |holds: bool| {
        let runtime = RuntimeValues {
            gates: vec![(gate.0.clone(), gate.1.clone(), holds)],
            ..Default::default()
        };
        let rendered = render_with(&config, &Target::default(), &runtime);
        let i = intent(&rendered, "nft.table/ip/routerd_default_route_up").clone();
        let ArtifactSpec::NftTable(t) = &i.artifact.spec else { panic!("a table") };
        let deps: Vec<String> = i.dependencies.iter().map(|d| d.key.to_string()).collect();
        (rule_texts(t), deps)
    };
    // The set is eligible: the hash over its targets' marks, after their rules exist.
    let (rules, deps) = table(true);
    assert_eq!(
        rules,
        [
            "ip saddr 192.168.1.0/24 meta mark set jhash ip saddr mod 2 seed 0x0 offset 2130706432",
            "ip saddr 192.168.1.0/24 meta mark 0x7f000000 meta mark set 0x00000101",
            "ip saddr 192.168.1.0/24 meta mark 0x7f000001 meta mark set 0x00000102",
        ]
    );
    assert_eq!(deps, ["linux.ipv4.fwmarkRule/0x101", "linux.ipv4.fwmarkRule/0x102"]);
    // Gated off: the next candidate's mark.
    let (rules, deps) = table(false);
    assert_eq!(rules, ["ip saddr 192.168.1.0/24 meta mark set 0x00000103"]);
    assert_eq!(deps, ["linux.ipv4.fwmarkRule/0x103"]);
}

#[test]
fn a_pool_translation_snats_to_the_range_of_its_addresses() {
    let snat = |addresses: &str| {
        let config = router(&format!(
            "{WAN0}    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4SourceNAT
      metadata: {{name: pool}}
      spec:
        outboundInterface: wan
        sourceCIDRs: [192.168.1.0/24]
        translation: {{type: pool, addresses: [{addresses}]}}
"
        ));
        let rendered = render(&config);
        let i = intent(&rendered, "nft.table/ip/routerd_snat_pool");
        let ArtifactSpec::NftTable(t) = &i.artifact.spec else { panic!("a table") };
        let warnings = rendered.warnings.values().flatten().cloned().collect::<Vec<_>>();
        (rule_texts(t), warnings)
    };
    // Any order: one range.
    let (rules, warnings) = snat("203.0.113.3, 203.0.113.1, 203.0.113.2");
    assert!(rules[0].ends_with("snat to 203.0.113.1-203.0.113.3"), "{rules:?}");
    assert!(warnings.is_empty(), "{warnings:?}");
    // A gap: the first run, with a warning.
    let (rules, warnings) = snat("203.0.113.1, 203.0.113.2, 203.0.113.9");
    assert!(rules[0].ends_with("snat to 203.0.113.1-203.0.113.2"), "{rules:?}");
    assert!(warnings.iter().any(|w| w.contains("not one contiguous range")), "{warnings:?}");
    // One address: no range.
    let (rules, _) = snat("203.0.113.7");
    assert!(rules[0].ends_with("snat to 203.0.113.7"), "{rules:?}");
}

#[test]
fn a_dhcpv6_client_on_an_interface_the_home_router_preset_closes_is_warned_about() {
    let config = |wan_zone: bool| {
        let zone = if wan_zone {
            "    - apiVersion: firewall.routerd.net/v1alpha1
      kind: Zone
      metadata:
        name: wan
      spec:
        interfaces: [wan]
"
        } else {
            ""
        };
        router(&format!(
            "{WAN0}    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPAddress
      metadata:
        name: wan-v4
      spec:
        interface: wan
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6PrefixDelegation
      metadata:
        name: wan-pd
      spec:
        interface: wan
    - apiVersion: firewall.routerd.net/v1alpha1
      kind: FirewallPolicy
      metadata:
        name: default
      spec:
        preset: home-router
{zone}"
        ))
    };
    let warned = |rendered: &super::Rendered, kind: &str| {
        let id = format!("net.routerd.net/v1alpha1/{kind}");
        rendered
            .warnings
            .get(&id)
            .is_some_and(|w| w.iter().any(|w| w.contains("UDP 546") && w.contains("wan0")))
    };
    let open = render(&config(false));
    assert!(warned(&open, "IPv6PrefixDelegation/wan-pd"), "{:?}", open.warnings);
    // DHCPv4 reads a packet socket, which the input chain does not filter.
    assert!(!warned(&open, "IPv4DHCPAddress/wan-v4"), "{:?}", open.warnings);
    let zoned = render(&config(true));
    assert!(!warned(&zoned, "IPv6PrefixDelegation/wan-pd"), "{:?}", zoned.warnings);
}
