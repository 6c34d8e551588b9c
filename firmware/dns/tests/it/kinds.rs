//! The DNS kinds through the registry: a file with every kind parses and renders into the
//! artifacts the design brief lists (§1), and every rule between resources refuses its case
//! with the file, line and column.

use std::collections::BTreeMap;

use routerd_engine::ConfigInput;
use routerd_engine::intent::Intent;
use routerd_engine::registry::Registry;
use routerd_engine::render::render;
use routerd_host::ArtifactSpec;

const ALL_KINDS: &str = include_str!("../fixtures/all-kinds.yaml");

fn registered() {
    let mut registry = Registry::new();
    routerd_dns::register(&mut registry).expect("the DNS kinds are free");
}

fn parse(text: &str) -> Result<ConfigInput, String> {
    registered();
    ConfigInput::parse(text, "router.yaml").map_err(|e| e.to_string())
}

/// Intents by `kind/name`.
fn intents(text: &str) -> BTreeMap<String, Intent> {
    let input = parse(text).expect("valid");
    let rendered = render(&input.config);
    rendered.intents.into_iter().map(|i| (i.artifact.key.to_string(), i)).collect()
}

fn attributes(intent: &Intent) -> serde_json::Value {
    match &intent.artifact.spec {
        ArtifactSpec::External(spec) => spec.attributes.clone(),
        other => serde_json::to_value(other).expect("json"),
    }
}

#[test]
fn every_kind_renders_its_artifacts() {
    let intents = intents(ALL_KINDS);
    let keys: Vec<&str> = intents.keys().map(String::as_str).collect();
    for expected in [
        "bind.config/key/routerd-update",
        "bind.config/key/isp-ddns",
        "bind.config/auth/options",
        "systemd.service/routerd-named-auth.service",
        "file//etc/routerd/dns/endpoints.conf#local:auth",
        "file//etc/routerd/dns/endpoints.conf#remote:isp",
        "bind.zone/auth/lab.example.",
        "bind.zone/auth/2.0.192.in-addr.arpa.",
        "dns.rrset/local:auth/lab.example./www.lab.example./A",
        "dns.rrset/local:auth/lab.example./www.lab.example./AAAA",
        "dns.rrset/local:auth/lab.example./ftp.lab.example./CNAME",
        "dns.rrset/local:auth/lab.example./lab.example./TXT",
        "dns.rrset/local:auth/lab.example./lab.example./MX",
        "dns.rrset/local:auth/lab.example./sub.lab.example./NS",
        "dns.rrset/local:auth/lab.example./_sip._tcp.lab.example./SRV",
        "dns.rrset/local:auth/lab.example./lab.example./CAA",
        "dns.rrset/local:auth/lab.example./nas.lab.example./A",
        "dns.rrset/local:auth/lab.example./ns1.lab.example./A",
        "dns.rrset/local:auth/lab.example./nas.lab.example./AAAA",
        "dns.rrset/local:auth/2.0.192.in-addr.arpa./20.2.0.192.in-addr.arpa./PTR",
        "dns.rrset/local:auth/2.0.192.in-addr.arpa./21.2.0.192.in-addr.arpa./PTR",
        "dns.rrset/remote:isp/home.example.com./router.home.example.com./A",
    ] {
        assert!(keys.contains(&expected), "{expected} missing from {keys:#?}");
    }
    let rrset = |name: &str| attributes(&intents[&format!("dns.rrset/{name}")]);
    assert_eq!(
        rrset("local:auth/lab.example./www.lab.example./A"),
        serde_json::json!({"ttl": 60, "rdata": ["192.0.2.10", "192.0.2.11"]})
    );
    assert_eq!(
        rrset("local:auth/lab.example./lab.example./MX"),
        serde_json::json!({"ttl": 300, "rdata": ["10 mx1.lab.example.", "20 mx2.other.example."]})
    );
    assert_eq!(
        rrset("local:auth/lab.example./nas.lab.example./A"),
        serde_json::json!({"ttl": 300, "rdata": ["192.0.2.20", "192.0.2.21"]})
    );
    assert_eq!(
        rrset("local:auth/2.0.192.in-addr.arpa./20.2.0.192.in-addr.arpa./PTR")["rdata"],
        serde_json::json!(["nas.lab.example."])
    );
    // A record waits for its zone and its endpoint; a zone for its server's config and unit.
    let deps = |key: &str| -> Vec<String> {
        intents[key].dependencies.iter().map(|d| d.key.to_string()).collect()
    };
    assert_eq!(
        deps("dns.rrset/local:auth/lab.example./www.lab.example./A"),
        ["bind.zone/auth/lab.example.", "file//etc/routerd/dns/endpoints.conf#local:auth"]
    );
    assert_eq!(
        deps("bind.zone/auth/lab.example."),
        ["bind.config/auth/options", "systemd.service/routerd-named-auth.service"]
    );
    assert_eq!(deps("bind.config/auth/options"), ["bind.config/key/routerd-update"]);
    // The inline secret shows as a digest only.
    let key = serde_json::to_string(&attributes(&intents["bind.config/key/routerd-update"]))
        .expect("valid in the test");
    assert!(key.contains("hmac-sha256:") && !key.contains("c2VjcmV0"), "{key}");
    let zone = attributes(&intents["bind.zone/auth/lab.example."]);
    let clause = zone["clause"].as_str().expect("valid in the test");
    assert!(clause.contains("grant \"routerd-update\" zonesub ANY;"), "{clause}");
    let seed = zone["seed"].as_str().expect("valid in the test");
    assert!(
        seed.contains("@ IN SOA ns1.lab.example. hostmaster.lab.example. 1 3600 600 1209600 300"),
        "{seed}"
    );
    assert!(seed.contains("ns1.lab.example. IN A 192.0.2.1"), "{seed}");
}

/// Replaces `from` by `to` in the fixture, once.
fn edited(from: &str, to: &str) -> String {
    assert!(ALL_KINDS.contains(from), "fixture lacks {from:?}");
    ALL_KINDS.replacen(from, to, 1)
}

/// The error of parsing `text`, which must name file, line and column.
fn refused(text: &str) -> String {
    let err = parse(text).expect_err("refused");
    assert!(err.contains("router.yaml:"), "no location: {err}");
    err
}

#[test]
fn two_resources_owning_one_rrset_are_refused() {
    let extra = "    - apiVersion: net.routerd.net/v1alpha1\n      kind: MXRecord\n      metadata: {name: mail2}\n      spec: {zone: lab, name: \"@\", exchanges: [{priority: 30, mailServer: mx3}]}\n";
    let err = refused(&format!("{ALL_KINDS}{extra}"));
    assert!(
        err.contains("MXRecord/mail2")
            && err.contains("already owned by net.routerd.net/v1alpha1/MXRecord/mail"),
        "{err}"
    );
    // routerd's records list and an ARecord on one name.
    let err = refused(&edited("name: www, ipv4Addresses", "name: nas, ipv4Addresses"));
    assert!(
        err.contains("nas.lab.example. A is already owned by net.routerd.net/v1alpha1/DNSZone/lab"),
        "{err}"
    );
}

#[test]
fn cname_rules_are_enforced() {
    let err = refused(&edited("name: ftp, target: www", "name: www, target: ftp"));
    assert!(err.contains("www.lab.example. has a CNAME and"), "{err}");
    let err = refused(&edited("name: ftp, target: www", "name: \"@\", target: www"));
    assert!(err.contains("cannot be at the zone apex"), "{err}");
}

#[test]
fn apex_ns_and_names_outside_the_zone_are_refused() {
    let err = refused(&edited("name: sub, nameservers", "name: \"@\", nameservers"));
    assert!(err.contains("the apex NS set is the zone's nameServers"), "{err}");
    let err =
        refused(&edited("name: www, ipv6Addresses", "name: www.elsewhere.example., ipv6Addresses"));
    assert!(err.contains("www.elsewhere.example. is outside zone lab.example."), "{err}");
}

#[test]
fn server_and_key_mistakes_are_refused() {
    let err = refused(&edited(
        "listen: [{address: 127.0.0.1, port: 5300}]",
        "listen: [{address: 127.0.0.1, port: 53}]",
    ));
    assert!(err.contains("dnsmasq, the router's resolver, holds port 53 on loopback"), "{err}");
    let err = refused(&edited(
        "zone: home.example.com, externalServer: isp",
        "zone: home.example.com, externalServer: isp, server: auth",
    ));
    assert!(err.contains("give exactly one of server and externalServer"), "{err}");
    let err = refused(&edited(
        "{secretFile: /run/secrets/isp-ddns.b64}",
        "{secretFile: /run/secrets/isp-ddns.b64, generate: true}",
    ));
    assert!(err.contains("give exactly one of secret, secretFile and generate"), "{err}");
    let err = refused(&edited("secret: \"c2Vj", "secret: \"!!Vj"));
    assert!(err.contains("the secret is base64"), "{err}");
    let err = refused(&edited("updateKey: routerd-update", "updateKey: nope"));
    assert!(err.contains("\"nope\" is not declared by any DNSTSIGKey resource"), "{err}");
    let err = refused(
        &edited(
            "kind: DNSServer\n      metadata: {name: auth}",
            "kind: DNSServer\n      metadata: {name: key}",
        )
        .replace("server: auth", "server: key"),
    );
    assert!(err.contains("\"key\" is reserved"), "{err}");
    let secondary = "    - apiVersion: net.routerd.net/v1alpha1\n      kind: DNSServer\n      metadata: {name: sec}\n      spec: {role: secondary, listen: [{address: 127.0.0.1, port: 5301}], control: {port: 954}, statistics: {port: 8054}, primaries: [{address: 127.0.0.1, port: 5300}]}\n";
    let err = refused(&format!(
        "{}{secondary}",
        edited("zone: lab.example\n        server: auth", "zone: lab.example\n        server: sec")
    ));
    assert!(err.contains("server \"sec\" is a secondary"), "{err}");
    let err = refused(&edited(
        "reverseZones: [{name: 2.0.192.in-addr.arpa}]",
        "reverseZones: [{name: lab.example}]",
    ));
    assert!(err.contains("a reverse zone is below in-addr.arpa or ip6.arpa"), "{err}");
}

#[test]
fn a_listen_socket_dnsmasq_holds_is_refused() {
    let lan = "    - apiVersion: net.routerd.net/v1alpha1\n      kind: Interface\n      metadata: {name: lan}\n      spec: {ifname: lan0}\n    - apiVersion: net.routerd.net/v1alpha1\n      kind: IPv4DHCPServer\n      metadata: {name: dhcp}\n      spec: {listenInterfaces: [lan]}\n";
    let text = edited(
        "listen: [{address: 127.0.0.1, port: 5300}]",
        "listen: [{address: 127.0.0.1, port: 5300}, {interface: lan, port: 53}]",
    );
    let err = refused(&format!("{text}{lan}"));
    assert!(err.contains("dnsmasq answers DNS on port 53 of \"lan\""), "{err}");
}
