//! The names leases give: the choice of leases (unit) and the zone's render with them.

use std::collections::BTreeMap;

use super::*;

fn apex() -> Name {
    names::zone_apex("lab.example").expect("valid in the test")
}

fn lease(expiry: Option<u64>, address: &str, hostname: Option<&str>) -> DhcpLease {
    DhcpLease {
        expiry,
        address: address.parse().expect("valid in the test"),
        hostname: hostname.map(str::to_owned),
        temporary: false,
    }
}

fn lan() -> Sources {
    Sources { ranges: vec![([192, 168, 50, 100].into(), [192, 168, 50, 150].into())], ipv6: false }
}

fn owners(names: &[LeaseName]) -> Vec<String> {
    names.iter().map(|n| format!("{} {}", n.owner, n.address)).collect()
}

#[test]
fn the_suffix_is_the_zone_a_name_inside_it_or_relative_to_it() {
    let apex = apex();
    let text = |t: Option<&str>| suffix(t, &apex).map(|n| n.to_ascii());
    assert_eq!(text(None), Ok("lab.example.".into()));
    assert_eq!(text(Some("")), Ok("lab.example.".into()));
    assert_eq!(text(Some("@")), Ok("lab.example.".into()));
    assert_eq!(text(Some("lab.example")), Ok("lab.example.".into()));
    assert_eq!(text(Some("Lab.Example.")), Ok("lab.example.".into()));
    assert_eq!(text(Some("dhcp")), Ok("dhcp.lab.example.".into()));
    assert_eq!(text(Some(".dhcp.lab.example")), Ok("dhcp.lab.example.".into()));
    assert_eq!(text(Some("other.example")), Ok("other.example.lab.example.".into()));
    assert!(text(Some("other.example.")).is_err());
    assert!(text(Some("a..b")).is_err());
}

#[test]
fn leases_of_the_sources_give_names_and_others_do_not() {
    let leases = [
        lease(Some(2000), "192.168.50.120", Some("Laptop")),
        lease(Some(2000), "192.168.50.99", Some("outside-the-range")),
        lease(Some(2000), "192.168.50.121", None),
        lease(Some(2000), "192.168.50.122", Some("wpad")),
        lease(Some(2000), "192.168.50.123", Some("___")),
        lease(Some(2000), "2001:db8::5", Some("v6-without-a-v6-source")),
        DhcpLease { temporary: true, ..lease(None, "2001:db8::6", Some("temporary")) },
    ];
    let names = names_of(&leases, &lan(), &apex(), &|_| false);
    assert_eq!(owners(&names), ["laptop.lab.example. 192.168.50.120"]);
    let both = Sources { ipv6: true, ..lan() };
    let names = names_of(&leases, &both, &apex(), &|_| false);
    assert_eq!(
        owners(&names),
        ["laptop.lab.example. 192.168.50.120", "v6-without-a-v6-source.lab.example. 2001:db8::5"]
    );
}

#[test]
fn a_declared_name_wins_and_of_two_leases_the_newest() {
    let leases = [
        lease(Some(1000), "192.168.50.101", Some("pc")),
        lease(Some(3000), "192.168.50.102", Some("PC")),
        lease(Some(2000), "192.168.50.103", Some("pc")),
        lease(Some(5000), "192.168.50.104", Some("nas")),
        lease(None, "192.168.50.105", Some("forever")),
        lease(Some(9000), "192.168.50.106", Some("forever")),
    ];
    let nas = names::absolute("nas", &apex()).expect("valid in the test");
    let names = names_of(&leases, &lan(), &apex(), &|owner| *owner == nas);
    assert_eq!(
        owners(&names),
        ["forever.lab.example. 192.168.50.105", "pc.lab.example. 192.168.50.102"]
    );
    assert_eq!(names[1].expiry, Some(3000));
}

/// A router with DHCP server `dhcp` (pool 192.168.50.100-150 on `lan`), server `auth` and zone
/// `lab.example` taking names from `dhcp`'s leases (TTL 60), with reverse zone
/// `50.168.192.in-addr.arpa`, host `nas` and an `ARecord` `www`.
const ROUTER: &str = "apiVersion: routerd.net/v1alpha1
kind: Router
metadata: {name: leases}
spec:
  resources:
    - apiVersion: net.routerd.net/v1alpha1
      kind: Interface
      metadata: {name: lan}
      spec: {ifname: lan0, managed: true}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPServer
      metadata: {name: dhcp}
      spec: {managed: true, listenInterfaces: [lan]}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPScope
      metadata: {name: pool}
      spec: {server: dhcp, interface: lan, rangeStart: 192.168.50.100, rangeEnd: 192.168.50.150}
    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSTSIGKey
      metadata: {name: routerd-update}
      spec: {generate: true}
    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSServer
      metadata: {name: auth}
      spec: {updateKey: routerd-update}
    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSZone
      metadata: {name: lab}
      spec:
        zone: lab.example
        server: auth
        records: [{hostname: nas, ipv4: 192.168.50.140}]
        reverseZones: [{name: 50.168.192.in-addr.arpa}]
        dhcpDerived: {sources: [IPv4DHCPServer/dhcp], ttl: 60}
    - apiVersion: net.routerd.net/v1alpha1
      kind: ARecord
      metadata: {name: www}
      spec: {zone: lab, name: www, ipv4Addresses: [192.168.50.30]}
";

const A: &str = "dns.rrset/local:auth/lab.example.";
const PTR: &str = "dns.rrset/local:auth/50.168.192.in-addr.arpa.";

/// `ROUTER` rendered with the leases `leases` in routerd's dnsmasq's lease file, observed at
/// second 1000: the `dns.rrset` intents' attributes by key, and the warnings.
fn render_leases(
    text: &str,
    leases: Vec<DhcpLease>,
) -> (BTreeMap<String, serde_json::Value>, routerd_engine::render::Rendered) {
    let mut registry = routerd_engine::registry::Registry::new();
    crate::register(&mut registry).expect("the DNS kinds are free");
    let input = routerd_engine::ConfigInput::parse(text, "router.yaml").expect("valid");
    let target = routerd_host::Target::default();
    let files = BTreeMap::from([(target.dnsmasq_leases(), leases)]);
    let runtime =
        routerd_engine::runtime::RuntimeValues::default().with_dhcp_leases(&files, 1_000_000);
    let rendered = routerd_engine::render::render_with(&input.config, &target, &runtime);
    let rrsets = rendered
        .intents
        .iter()
        .filter(|i| i.artifact.key.kind.as_str() == "dns.rrset")
        .filter_map(|i| match &i.artifact.spec {
            routerd_host::ArtifactSpec::External(spec) => {
                Some((i.artifact.key.to_string(), spec.attributes.clone()))
            }
            _ => None,
        })
        .collect();
    (rrsets, rendered)
}

#[test]
fn a_lease_gives_an_a_rrset_and_a_ptr_and_the_render_reads_the_lease_file() {
    let (rrsets, rendered) =
        render_leases(ROUTER, vec![lease(Some(5000), "192.168.50.120", Some("Laptop"))]);
    assert_eq!(
        rrsets[&format!("{A}/laptop.lab.example./A")],
        serde_json::json!({"ttl": 60, "rdata": ["192.168.50.120"]})
    );
    assert_eq!(
        rrsets[&format!("{PTR}/120.50.168.192.in-addr.arpa./PTR")],
        serde_json::json!({"ttl": 60, "rdata": ["laptop.lab.example."]})
    );
    assert_eq!(rendered.warnings, BTreeMap::new());
    let file = routerd_host::Target::default().dnsmasq_leases();
    assert_eq!(rendered.reads.dhcp_leases, [file].into());
}

#[test]
fn a_declared_name_wins_over_a_lease() {
    let leases = vec![
        lease(Some(5000), "192.168.50.120", Some("nas")),
        lease(Some(5000), "192.168.50.121", Some("www")),
        lease(Some(5000), "192.168.50.140", Some("thief")),
    ];
    let (rrsets, rendered) = render_leases(ROUTER, leases);
    assert_eq!(
        rrsets[&format!("{A}/nas.lab.example./A")],
        serde_json::json!({"ttl": 300, "rdata": ["192.168.50.140"]})
    );
    assert_eq!(
        rrsets[&format!("{A}/www.lab.example./A")],
        serde_json::json!({"ttl": 300, "rdata": ["192.168.50.30"]})
    );
    // The address of `nas` leased to another name: the name, but the declared PTR stays.
    assert_eq!(
        rrsets[&format!("{PTR}/140.50.168.192.in-addr.arpa./PTR")],
        serde_json::json!({"ttl": 300, "rdata": ["nas.lab.example."]})
    );
    assert!(rrsets.contains_key(&format!("{A}/thief.lab.example./A")), "{rrsets:#?}");
    for address in ["120", "121"] {
        let ptr = format!("{PTR}/{address}.50.168.192.in-addr.arpa./PTR");
        assert!(!rrsets.contains_key(&ptr), "{ptr} in {rrsets:#?}");
    }
    assert_eq!(rendered.warnings, BTreeMap::new(), "skipped without a warning");
}

#[test]
fn an_expired_lease_gives_no_name() {
    let (rrsets, _) =
        render_leases(ROUTER, vec![lease(Some(999), "192.168.50.120", Some("laptop"))]);
    let keys: Vec<&String> = rrsets.keys().collect();
    assert!(!keys.iter().any(|k| k.contains("laptop") || k.contains("120.50")), "{keys:#?}");
    // Through its last second, it still gives its name.
    let (rrsets, _) =
        render_leases(ROUTER, vec![lease(Some(1000), "192.168.50.120", Some("laptop"))]);
    assert!(rrsets.contains_key(&format!("{A}/laptop.lab.example./A")), "{rrsets:#?}");
}

#[test]
fn a_zone_without_dhcp_derived_reads_no_leases_and_unknown_sources_warn() {
    let plain =
        ROUTER.replace("        dhcpDerived: {sources: [IPv4DHCPServer/dhcp], ttl: 60}\n", "");
    assert_ne!(plain, ROUTER);
    let (rrsets, rendered) =
        render_leases(&plain, vec![lease(None, "192.168.50.120", Some("laptop"))]);
    assert!(rendered.reads.dhcp_leases.is_empty(), "{:?}", rendered.reads);
    assert!(!rrsets.keys().any(|k| k.contains("laptop")), "{rrsets:#?}");

    let unknown = ROUTER.replace("[IPv4DHCPServer/dhcp]", "[DHCPv4Server/lan-dhcpv4]");
    let (rrsets, rendered) =
        render_leases(&unknown, vec![lease(None, "192.168.50.120", Some("laptop"))]);
    assert!(!rrsets.keys().any(|k| k.contains("laptop")), "{rrsets:#?}");
    assert!(rendered.reads.dhcp_leases.is_empty(), "{:?}", rendered.reads);
    let warnings = &rendered.warnings["net.routerd.net/v1alpha1/DNSZone/lab"];
    assert!(
        warnings[0].starts_with("dhcpDerived.sources[0]: \"DHCPv4Server/lan-dhcpv4\" names no")
    );
}
