//! The DNS controller's shipped examples (`examples/home-dns.yaml`, `examples/external-dns.yaml`)
//! and the DNS sections of `docs/resources.md`: each parses with the DNS kinds registered and
//! renders the artifacts it is there to show, with no render warning but the documented
//! "not supported yet" ones. The engine's `render/doc_tests.rs` checks the sections of the
//! built-in kinds only: it cannot register these.

use std::collections::BTreeMap;

use routerd_engine::ConfigInput;
use routerd_engine::intent::Intent;
use routerd_engine::registry::Registry;
use routerd_engine::render::{Rendered, render};
use routerd_host::ArtifactSpec;
use routerd_test_kit::router::{self, RouterDoc};

const HOME: &str = include_str!("../../../../examples/home-dns.yaml");
const EXTERNAL: &str = include_str!("../../../../examples/external-dns.yaml");
const DOC: &str = include_str!("../../../../docs/resources.md");

/// The kinds of this crate, each with its `## <Kind>` section in `docs/resources.md`.
const DNS_KINDS: [&str; 12] = [
    "DNSTSIGKey",
    "DNSServer",
    "DNSExternalServer",
    "DNSZone",
    "ARecord",
    "AAAARecord",
    "CNAMERecord",
    "TXTRecord",
    "MXRecord",
    "NSRecord",
    "SRVRecord",
    "CAARecord",
];

/// The render warnings `docs/resources.md` documents as "not supported yet".
const NOT_SUPPORTED_YET: [&str; 2] =
    ["dnssec is not supported yet", "ipv4From and ipv6From are not supported"];

fn parse(text: &str, file: &str) -> ConfigInput {
    let mut registry = Registry::new();
    routerd_dns::register(&mut registry).unwrap_or_else(|e| panic!("the DNS kinds are free: {e}"));
    ConfigInput::parse(text, file).unwrap_or_else(|e| panic!("{file} does not parse:\n{e}"))
}

/// Intents by `kind/name`.
fn by_key(rendered: &Rendered) -> BTreeMap<String, &Intent> {
    rendered.intents.iter().map(|i| (i.artifact.key.to_string(), i)).collect()
}

/// Every render warning that is neither a documented "not supported yet" one nor in `expected`,
/// as `resource: text`.
fn undocumented_warnings(rendered: &Rendered, expected: &[&str]) -> Vec<String> {
    rendered
        .warnings
        .iter()
        .flat_map(|(id, list)| list.iter().map(move |w| (id, w)))
        .filter(|(_, w)| {
            !NOT_SUPPORTED_YET.iter().chain(expected).any(|known| w.starts_with(known))
        })
        .map(|(id, w)| format!("{id}: {w}"))
        .collect()
}

fn attributes(intent: &Intent) -> serde_json::Value {
    match &intent.artifact.spec {
        ArtifactSpec::External(spec) => spec.attributes.clone(),
        other => serde_json::to_value(other).expect("artifact specs serialise"),
    }
}

fn assert_has(keys: &BTreeMap<String, &Intent>, expected: &[&str]) {
    for key in expected {
        assert!(keys.contains_key(*key), "{key} missing from {:#?}", keys.keys());
    }
}

#[test]
fn home_example_serves_its_zone_on_loopback_and_forwards_it_from_dnsmasq() {
    let input = parse(HOME, "examples/home-dns.yaml");
    let rendered = render(&input.config);
    // Rendered without an observation, the WAN lease (a runtime value, ADR 0008) is not known.
    let lease = "dns.upstreamSource dhcp4: the lease on \"wan\" has no DNS servers (yet)";
    assert_eq!(undocumented_warnings(&rendered, &[lease]), Vec::<String>::new());
    let keys = by_key(&rendered);
    let ptr6 = "0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.";
    assert_has(
        &keys,
        &[
            "bind.config/key/routerd-update",
            "bind.config/home/options",
            "systemd.service/routerd-named-home.service",
            "file//etc/routerd/dns/endpoints.conf#local:home",
            "bind.zone/home/home.example.",
            "bind.zone/home/2.0.192.in-addr.arpa.",
            "bind.zone/home/1.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.",
            "dns.rrset/local:home/home.example./router.home.example./A",
            "dns.rrset/local:home/home.example./nas.home.example./A",
            "dns.rrset/local:home/home.example./nas.home.example./AAAA",
            "dns.rrset/local:home/home.example./printer.home.example./A",
            "dns.rrset/local:home/2.0.192.in-addr.arpa./10.2.0.192.in-addr.arpa./PTR",
            &format!("dns.rrset/local:home/1.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa./{ptr6}/PTR"),
            "dns.rrset/local:home/home.example./files.home.example./CNAME",
            "dns.rrset/local:home/home.example./media.home.example./A",
            "dns.rrset/local:home/home.example./_ipp._tcp.home.example./SRV",
            "dns.rrset/local:home/home.example./_ipp._tcp.home.example./TXT",
            "dnsmasq.config/server/home.example",
            "dnsmasq.config/server/2.0.192.in-addr.arpa",
        ],
    );
    let rrset = |name: &str| attributes(keys[&format!("dns.rrset/local:home/{name}")]);
    assert_eq!(
        rrset("home.example./media.home.example./A"),
        serde_json::json!({"ttl": 60, "rdata": ["192.0.2.30", "192.0.2.31"]})
    );
    assert_eq!(
        rrset("home.example./_ipp._tcp.home.example./SRV")["rdata"],
        serde_json::json!(["0 0 631 printer.home.example."])
    );
    assert_eq!(
        rrset("2.0.192.in-addr.arpa./10.2.0.192.in-addr.arpa./PTR")["rdata"],
        serde_json::json!(["nas.home.example."])
    );
    // named answers on loopback port 5300 only, beside dnsmasq's port 53.
    let options = attributes(keys["bind.config/home/options"]);
    let text = options["text"].as_str().expect("named.conf text");
    assert!(text.contains("listen-on port 5300 { 127.0.0.1; };"), "{text}");
    assert!(text.contains("listen-on-v6 { none; };"), "{text}");
    // The generated key's secret is made on the router: the plan shows only where it comes from.
    let key = attributes(keys["bind.config/key/routerd-update"]);
    assert_eq!(key["secret"], serde_json::json!("generated"), "{key}");
    // The zone starts from the SOA the example gives, NS `localhost.` (no nameServers).
    let zone = attributes(keys["bind.zone/home/home.example."]);
    let seed = zone["seed"].as_str().expect("zone seed");
    assert!(seed.contains("@ IN SOA router.home.example. hostmaster.home.example. 1 "), "{seed}");
    assert!(seed.contains("@ IN NS localhost."), "{seed}");
}

#[test]
fn external_example_pushes_records_to_the_remote_primary_only() {
    let input = parse(EXTERNAL, "examples/external-dns.yaml");
    let rendered = render(&input.config);
    assert_eq!(undocumented_warnings(&rendered, &[]), Vec::<String>::new());
    let keys = by_key(&rendered);
    assert_has(
        &keys,
        &[
            "bind.config/key/isp-ddns",
            "file//etc/routerd/dns/endpoints.conf#remote:isp",
            "dns.rrset/remote:isp/branch.example.net./gw.branch.example.net./A",
            "dns.rrset/remote:isp/branch.example.net./gw.branch.example.net./AAAA",
            "dns.rrset/remote:isp/branch.example.net./vpn.branch.example.net./CNAME",
            "dns.rrset/remote:isp/branch.example.net./branch.example.net./MX",
            "dns.rrset/remote:isp/branch.example.net./branch.example.net./TXT",
            "dns.rrset/remote:isp/branch.example.net./branch.example.net./CAA",
        ],
    );
    // Nothing of a local server: no named.conf, zone clause or unit.
    let local: Vec<&String> = keys
        .keys()
        .filter(|k| {
            k.starts_with("bind.zone/")
                || (k.starts_with("bind.config/") && !k.starts_with("bind.config/key/"))
                || k.starts_with("systemd.service/routerd-named-")
                || k.starts_with("dns.rrset/local:")
        })
        .collect();
    assert!(local.is_empty(), "{local:#?}");
    let rrset = |name: &str| attributes(keys[&format!("dns.rrset/remote:isp/{name}")]);
    assert_eq!(
        rrset("branch.example.net./gw.branch.example.net./A"),
        serde_json::json!({"ttl": 600, "rdata": ["198.51.100.2"]})
    );
    assert_eq!(
        rrset("branch.example.net./branch.example.net./MX")["rdata"],
        serde_json::json!(["10 mx1.example.net.", "20 mx2.example.net."])
    );
    assert_eq!(rrset("branch.example.net./branch.example.net./TXT")["ttl"], 3600);
    // UPDATEs go to the provider's address, signed with the key file routerd writes.
    let endpoint =
        serde_json::to_string(&attributes(keys["file//etc/routerd/dns/endpoints.conf#remote:isp"]))
            .expect("json");
    assert!(endpoint.contains("address 203.0.113.53#53"), "{endpoint}");
    assert!(endpoint.contains("key /etc/routerd/dns/keys/isp-ddns.key"), "{endpoint}");
    // The secret stays in its file: the attributes name the file only.
    let key = attributes(keys["bind.config/key/isp-ddns"]);
    assert_eq!(key["secret"], serde_json::json!({"file": "/etc/routerd/secrets/isp-ddns.b64"}));
}

/// The section `## <kind>` of the reference: its lines up to the next `## ` heading.
fn section(kind: &str) -> Option<Vec<&'static str>> {
    let lines: Vec<&'static str> = DOC.lines().collect();
    let heading = format!("## {kind}");
    let start = lines.iter().position(|l| l.trim_end() == heading)?;
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with("## "))
        .map_or(lines.len(), |i| start + 1 + i);
    Some(lines[start..end].to_vec())
}

/// The body of the first fenced YAML block of `section`.
fn first_yaml_block(section: &[&str]) -> Option<String> {
    let open = section.iter().position(|l| l.trim_end() == "```yaml")?;
    let len = section[open + 1..].iter().position(|l| l.trim_end() == "```")?;
    Some(section[open + 1..open + 1 + len].join("\n"))
}

/// Whether `text` names `token` as a whole name (`file` is not found in `profile`).
fn names_token(text: &str, token: &str) -> bool {
    let part_of_name = |c: char| c.is_ascii_alphanumeric() || c == '.' || c == '_';
    text.match_indices(token).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + token.len()..].chars().next();
        !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name)
    })
}

/// Every problem of the section of `kind`.
fn check_section(kind: &str, failures: &mut Vec<String>) {
    let Some(section) = section(kind) else {
        return failures.push(format!("{kind}: no \"## {kind}\" section"));
    };
    let Some(block) = first_yaml_block(&section) else {
        return failures.push(format!("{kind}: the section has no ```yaml example"));
    };
    let text = RouterDoc::new("doc").raw(&router::indent(&block, 4)).to_string();
    let mut registry = Registry::new();
    routerd_dns::register(&mut registry).unwrap_or_else(|e| panic!("the DNS kinds are free: {e}"));
    let input = match ConfigInput::parse(&text, &format!("docs/resources.md#{kind}")) {
        Ok(input) => input,
        Err(e) => return failures.push(format!("{kind}: the example does not parse:\n{e}")),
    };
    let rendered = render(&input.config);
    for warning in undocumented_warnings(&rendered, &[]) {
        failures.push(format!("{kind}: the example warns: {warning}"));
    }
    let documented: Vec<String> = input
        .config
        .spec
        .resources
        .iter()
        .filter(|r| r.kind.as_str() == kind)
        .map(|r| r.id())
        .collect();
    if documented.is_empty() {
        failures.push(format!("{kind}: the example has no {kind} resource"));
    }
    let body = section.join("\n");
    for id in documented {
        let mut artifacts: Vec<&str> = rendered
            .intents
            .iter()
            .filter(|i| *i.owner == *id)
            .map(|i| i.kind().as_str())
            .collect();
        if artifacts.is_empty() {
            failures.push(format!("{kind}: {id} renders no artifact in the example"));
        }
        artifacts.sort_unstable();
        artifacts.dedup();
        for artifact in artifacts {
            if !names_token(&body, artifact) {
                failures.push(format!(
                    "{kind}: {id} renders {artifact}, which the section does not name"
                ));
            }
        }
    }
}

#[test]
fn resources_doc_sections_of_the_dns_kinds_parse_and_name_their_artifacts() {
    let mut failures = Vec::new();
    for kind in DNS_KINDS {
        check_section(kind, &mut failures);
    }
    assert!(
        failures.is_empty(),
        "docs/resources.md is out of date for the DNS kinds ({} problems):\n- {}",
        failures.len(),
        failures.join("\n- ")
    );
}
