//! `parse`: the seed example is accepted; every rule refuses its input with the file, the
//! location and the JSON path.

use routerd_vpn::desired::{Protocol, SetupKeyType};

use crate::{FILE, SEED_EXAMPLE, errors_of, seed_with};

/// The seed's route as the seed writes it, without `groups`.
const SEED_ROUTE_GROUPS: &str = "      \"groups\": [\"pilots\"],\n";

#[test]
fn seed_example_with_route_groups_parses() {
    let state = routerd_vpn::parse(SEED_EXAMPLE, FILE).expect("the seed example parses");
    assert_eq!(state.groups.len(), 3);
    assert_eq!(state.setup_keys["GS-hawk-72"].key_type, SetupKeyType::OneOff);
    assert!(state.setup_keys["GS-hawk-72"].enrolled);
    assert_eq!(state.policies["pilots-to-gs"].protocol, Protocol::All);
    let route = &state.routes["gs-local-network"];
    assert_eq!(route.network.map(|n| n.to_string()).as_deref(), Some("192.168.1.0/24"));
    assert_eq!(route.groups, ["pilots"]);
    assert!(state.dns.nameserver_groups.is_empty());
}

#[test]
fn seed_example_as_written_lacks_route_groups() {
    assert_eq!(
        errors_of(&seed_with(SEED_ROUTE_GROUPS, "")),
        ["netbird.json:34:5: routes.gs-local-network.groups: routes need `groups`, the groups \
          that receive the route (NetBird's API requires them)"]
    );
    assert_eq!(
        errors_of(&seed_with(SEED_ROUTE_GROUPS, "      \"groups\": [],\n")),
        ["netbird.json:38:7: routes.gs-local-network.groups: routes need `groups`, the groups \
          that receive the route (NetBird's API requires them)"]
    );
}

#[test]
fn syntax_error_names_line_and_column() {
    let text = seed_with(
        "\"usage_limit\": 1,\n      \"auto_groups\": [\"pilots\"]",
        "\"usage_limit\": 1\n      \"auto_groups\": [\"pilots\"]",
    );
    assert_eq!(
        errors_of(&text),
        ["netbird.json:19:7: setup_keys.Pilot-hawk-72: expected `,` or `}`"]
    );
    assert_eq!(errors_of("{} x"), ["netbird.json:1:4: trailing characters"]);
    assert_eq!(errors_of(""), ["netbird.json:1:1: EOF while parsing a value"]);
}

#[test]
fn unknown_field_is_refused() {
    let text =
        seed_with("\"enabled\": true,\n      \"sources\"", "\"enabeld\": true,\n      \"sources\"");
    assert_eq!(
        errors_of(&text),
        ["netbird.json:26:7: policies.pilots-to-gs.enabeld: unknown field `enabeld`, expected \
          one of `description`, `enabled`, `sources`, `destinations`, `bidirectional`, \
          `protocol`, `ports`"]
    );
    let text = seed_with("\"commanders\": { \"peers\": [] }", "\"commanders\": { \"peer\": [] }");
    assert_eq!(
        errors_of(&text),
        ["netbird.json:5:21: groups.commanders.peer: unknown field `peer`, expected `peers`"]
    );
}

#[test]
fn wrong_types_and_words_are_refused() {
    let text = seed_with(
        "\"expires_in\": 604800,\n      \"usage_limit\": 1,\n      \"auto_groups\": [\"pilots\"]",
        "\"expires_in\": \"7d\",\n      \"usage_limit\": 1,\n      \"auto_groups\": [\"pilots\"]",
    );
    assert_eq!(
        errors_of(&text),
        ["netbird.json:17:21: setup_keys.Pilot-hawk-72.expires_in: invalid type: string \"7d\", \
          expected u64"]
    );
    let text = seed_with("\"protocol\": \"ALL\"", "\"protocol\": \"SCTP\"");
    assert_eq!(
        errors_of(&text),
        ["netbird.json:30:19: policies.pilots-to-gs.protocol: unknown protocol `SCTP`, expected \
          all, tcp, udp, icmp or netbird-ssh (any case)"]
    );
    let text = seed_with(
        "\"type\": \"one-off\",\n      \"expires_in\": 604800,\n      \"usage_limit\": 1,\n      \"auto_groups\": [\"pilots\"]",
        "\"type\": \"multi\",\n      \"expires_in\": 604800,\n      \"usage_limit\": 1,\n      \"auto_groups\": [\"pilots\"]",
    );
    assert_eq!(
        errors_of(&text),
        ["netbird.json:16:15: setup_keys.Pilot-hawk-72.type: unknown variant `multi`, expected \
          `one-off` or `reusable`"]
    );
    let text = seed_with("\"192.168.1.0/24\"", "\"192.168.1.0\"");
    assert_eq!(
        errors_of(&text),
        ["netbird.json:36:18: routes.gs-local-network.network: invalid IP address syntax"]
    );
}

#[test]
fn protocol_is_read_in_any_case() {
    for (word, protocol) in
        [("tcp", Protocol::Tcp), ("Udp", Protocol::Udp), ("NETBIRD-SSH", Protocol::NetbirdSsh)]
    {
        let text = seed_with("\"protocol\": \"ALL\"", &format!("\"protocol\": \"{word}\""));
        let state = routerd_vpn::parse(&text, FILE).expect("accepted");
        assert_eq!(state.policies["pilots-to-gs"].protocol, protocol);
    }
}

#[test]
fn undefined_groups_are_all_reported_in_order() {
    let text = seed_with("\"auto_groups\": [\"pilots\"]", "\"auto_groups\": [\"pilot\"]")
        .replace("\"sources\": [\"pilots\"]", "\"sources\": [\"All\", \"pilotz\"]")
        .replace("\"destinations\": [\"ground-stations\"]", "\"destinations\": [\"gs\"]")
        .replace("\"peer_groups\": [\"ground-stations\"]", "\"peer_groups\": [\"stations\"]")
        .replace("\"groups\": [\"pilots\"]", "\"groups\": [\"All\", \"everyone\"]");
    assert_eq!(
        errors_of(&text),
        [
            "netbird.json:19:23: setup_keys.Pilot-hawk-72.auto_groups[0]: group `pilot` is not \
             defined in `groups`",
            "netbird.json:27:26: policies.pilots-to-gs.sources[1]: group `pilotz` is not \
             defined in `groups`",
            "netbird.json:28:24: policies.pilots-to-gs.destinations[0]: group `gs` is not \
             defined in `groups`",
            "netbird.json:37:23: routes.gs-local-network.peer_groups[0]: group `stations` is \
             not defined in `groups`",
            "netbird.json:38:25: routes.gs-local-network.groups[1]: group `everyone` is not \
             defined in `groups`",
        ]
    );
}

#[test]
fn group_peers_must_be_setup_key_names() {
    let text = seed_with(
        "\"peers\": [\"Pilot-hawk-72\"]",
        "\"peers\": [\"Pilot-hawk-72\", \"raspberrypi\"]",
    );
    assert_eq!(
        errors_of(&text),
        ["netbird.json:3:44: groups.pilots.peers[1]: peer `raspberrypi` is not defined in \
          `setup_keys` (peers are named by their setup key)"]
    );
}

#[test]
fn duplicate_keys_are_refused() {
    let text = seed_with(
        "\"commanders\": { \"peers\": [] }",
        "\"commanders\": { \"peers\": [] },\n    \"pilots\": { \"peers\": [] }",
    );
    assert_eq!(
        errors_of(&text),
        ["netbird.json:6:5: groups.pilots: duplicate key: only the last one would count"]
    );
}

/// The seed example with the Pilot key's `"expires_in": 604800,\n "usage_limit": 1` replaced.
fn pilot_key(expires_in: &str, key_type: &str, usage_limit: &str) -> String {
    seed_with(
        "\"type\": \"one-off\",\n      \"expires_in\": 604800,\n      \"usage_limit\": 1,\n      \"auto_groups\": [\"pilots\"]",
        &format!(
            "\"type\": \"{key_type}\",\n      \"expires_in\": {expires_in},\n      \"usage_limit\": {usage_limit},\n      \"auto_groups\": [\"pilots\"]"
        ),
    )
}

#[test]
fn setup_key_expiry_must_be_one_to_365_days() {
    for expires_in in ["86400", "31536000"] {
        routerd_vpn::parse(&pilot_key(expires_in, "one-off", "1"), FILE).expect("in range");
    }
    for expires_in in ["86399", "31536001", "0"] {
        assert_eq!(
            errors_of(&pilot_key(expires_in, "one-off", "1")),
            [format!(
                "netbird.json:17:21: setup_keys.Pilot-hawk-72.expires_in: expires_in {expires_in} \
                 is out of range: NetBird accepts 86400 to 31536000 seconds (1 to 365 days)"
            )]
        );
    }
}

#[test]
fn one_off_key_allows_one_use() {
    routerd_vpn::parse(&pilot_key("604800", "one-off", "0"), FILE).expect("0 is accepted");
    routerd_vpn::parse(&pilot_key("604800", "reusable", "5"), FILE).expect("reusable");
    assert_eq!(
        errors_of(&pilot_key("604800", "one-off", "2")),
        ["netbird.json:18:22: setup_keys.Pilot-hawk-72.usage_limit: a one-off key is used once: \
          usage_limit must be 0 or 1, not 2 (NetBird refuses it)"]
    );
}

/// The seed example with its route's body replaced by `body` (the lines after `{`).
fn route(network_id: &str, body: &str) -> String {
    let seed_route = "    \"gs-local-network\": {\n      \"description\": \"Route to GS local subnet\",\n      \"network\": \"192.168.1.0/24\",\n      \"peer_groups\": [\"ground-stations\"],\n      \"groups\": [\"pilots\"],\n      \"enabled\": true\n    }";
    seed_with(
        seed_route,
        &format!(
            "    \"{network_id}\": {{\n      \"description\": \"r\",\n      \"enabled\": true,\n      \"groups\": [\"pilots\"]{body}\n    }}"
        ),
    )
}

#[test]
fn route_rules_are_enforced() {
    let ok = ",\n      \"network\": \"10.0.0.0/8\",\n      \"peer\": \"GS-hawk-72\"";
    routerd_vpn::parse(&route("gs", ok), FILE).expect("network and peer");
    let domains = ",\n      \"domains\": [\"example.com\"],\n      \"peer_groups\": [\"pilots\"],\n      \"metric\": 1,\n      \"masquerade\": false,\n      \"keep_route\": false";
    routerd_vpn::parse(&route("gs", domains), FILE).expect("domains and peer groups");
    let long = "a".repeat(41);
    routerd_vpn::parse(&route(&"a".repeat(40), ok), FILE).expect("40 characters");
    assert_eq!(
        errors_of(&route(&long, ok)),
        [format!(
            "netbird.json:34:5: routes.{long}: the network_id `{long}` has 41 characters; \
             NetBird accepts at most 40"
        )]
    );
    assert_eq!(
        errors_of(&route(
            "gs",
            ",\n      \"domains\": [\"example.com\"],\n      \"network\": \"10.0.0.0/8\",\n      \"peer\": \"GS-hawk-72\""
        )),
        [
            "netbird.json:34:5: routes.gs: a route has exactly one of `network` and `domains`, not both"
        ]
    );
    assert_eq!(
        errors_of(&route("gs", ",\n      \"domains\": [],\n      \"peer\": \"GS-hawk-72\"")),
        [
            "netbird.json:34:5: routes.gs: a route needs exactly one of `network` (a CIDR) and `domains`"
        ]
    );
    assert_eq!(
        errors_of(&route(
            "gs",
            ",\n      \"network\": \"10.0.0.0/8\",\n      \"peer\": \"GS-hawk-72\",\n      \"peer_groups\": [\"pilots\"]"
        )),
        [
            "netbird.json:34:5: routes.gs: a route has exactly one of `peer` and `peer_groups`, not both"
        ]
    );
    assert_eq!(
        errors_of(&route("gs", ",\n      \"network\": \"10.0.0.0/8\"")),
        ["netbird.json:34:5: routes.gs: a route needs exactly one of `peer` and `peer_groups`, \
          the peers that route it"]
    );
    assert_eq!(
        errors_of(&route(
            "gs",
            ",\n      \"network\": \"10.0.0.0/8\",\n      \"peer\": \"router-1\""
        )),
        ["netbird.json:39:15: routes.gs.peer: peer `router-1` is not defined in `setup_keys` \
          (peers are named by their setup key)"]
    );
    for metric in ["0", "10000"] {
        assert_eq!(
            errors_of(&route("gs", &format!("{ok},\n      \"metric\": {metric}"))),
            [format!(
                "netbird.json:40:17: routes.gs.metric: metric {metric} is out of range: NetBird \
                 accepts 1 to 9999"
            )]
        );
    }
    routerd_vpn::parse(&route("gs", &format!("{ok},\n      \"metric\": 9999")), FILE)
        .expect("9999 is accepted");
}

/// The seed example with one nameserver group `body` (the lines after `{`).
fn nameserver_group(body: &str) -> String {
    seed_with(
        "\"nameserver_groups\": {}",
        &format!(
            "\"nameserver_groups\": {{\n      \"office\": {{\n        \"description\": \"d\",\n        \"nameservers\": [{{\"ip\": \"192.0.2.53\", \"ns_type\": \"udp\", \"port\": 53}}],\n        \"enabled\": true,\n        \"search_domains_enabled\": false,\n{body}\n      }}\n    }}"
        ),
    )
}

#[test]
fn nameserver_group_is_primary_exactly_without_domains() {
    let primary =
        "        \"groups\": [\"pilots\"],\n        \"primary\": true,\n        \"domains\": []";
    routerd_vpn::parse(&nameserver_group(primary), FILE).expect("primary");
    let matching = "        \"groups\": [\"pilots\"],\n        \"primary\": false,\n        \"domains\": [\"corp.example\"]";
    routerd_vpn::parse(&nameserver_group(matching), FILE).expect("match domains");
    assert_eq!(
        errors_of(&nameserver_group(
            "        \"groups\": [\"pilots\"],\n        \"primary\": true,\n        \"domains\": [\"corp.example\"]"
        )),
        ["netbird.json:51:20: dns.nameserver_groups.office.domains: a primary nameserver group \
          resolves every domain: `domains` must be empty"]
    );
    assert_eq!(
        errors_of(&nameserver_group(
            "        \"groups\": [\"crew\"],\n        \"primary\": false,\n        \"domains\": []"
        )),
        [
            "netbird.json:49:20: dns.nameserver_groups.office.groups[0]: group `crew` is not \
             defined in `groups`",
            "netbird.json:51:9: dns.nameserver_groups.office.domains: a nameserver group that \
             is not primary needs `domains`",
        ]
    );
}

#[test]
fn policy_ports_are_port_numbers() {
    let text = seed_with(
        "\"protocol\": \"ALL\"",
        "\"protocol\": \"tcp\",\n      \"ports\": [\"22\", \"0\", \"http\"]",
    );
    assert_eq!(
        errors_of(&text),
        [
            "netbird.json:31:23: policies.pilots-to-gs.ports[1]: port `0` is not a number from 1 \
             to 65535",
            "netbird.json:31:28: policies.pilots-to-gs.ports[2]: port `http` is not a number \
             from 1 to 65535",
        ]
    );
}
