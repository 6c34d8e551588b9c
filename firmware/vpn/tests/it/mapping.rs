//! The seed example's objects map onto exactly the API request bodies; unresolved names are
//! errors naming the name and its path, except group peers, which are pending.

use routerd_vpn::NetbirdState;
use routerd_vpn::api::{self, Kind, Resolve, ResolveError, Resource, ResourceType};
use serde_json::{Value, json};

use crate::{FILE, SEED_EXAMPLE, seed_with};

fn seed() -> NetbirdState {
    routerd_vpn::parse(SEED_EXAMPLE, FILE).expect("the seed example parses")
}

/// IDs for everything, as after the creates: `grp-<name>`, `peer-<name>`; the Pilot has not
/// enrolled, so it has no peer ID.
fn after_creates(kind: Kind, name: &str) -> Option<String> {
    match kind {
        Kind::Group => Some(format!("grp-{name}")),
        Kind::Peer if name == "Pilot-hawk-72" => None,
        Kind::Peer => Some(format!("peer-{name}")),
        _ => Some(format!("id-{name}")),
    }
}

fn nothing(_: Kind, _: &str) -> Option<String> {
    None
}

fn body(request: &impl serde::Serialize) -> Value {
    serde_json::to_value(request).expect("request bodies serialise")
}

#[test]
fn groups_map_to_peer_ids_with_pending_peers_left_out() {
    let state = seed();
    let gs = api::group_request(
        "ground-stations",
        &state.groups["ground-stations"],
        Vec::new(),
        &after_creates,
    );
    assert_eq!(
        body(&gs.request),
        json!({"name": "ground-stations", "peers": ["peer-GS-hawk-72"], "resources": []})
    );
    assert!(gs.pending.is_empty());
    let resources = vec![Resource { id: "res-1".to_owned(), resource_type: ResourceType::Subnet }];
    let pilots = api::group_request("pilots", &state.groups["pilots"], resources, &after_creates);
    assert_eq!(
        body(&pilots.request),
        json!({"name": "pilots", "peers": [], "resources": [{"id": "res-1", "type": "subnet"}]})
    );
    assert_eq!(pilots.pending, ["Pilot-hawk-72"]);
}

#[test]
fn setup_keys_map_to_create_and_update_bodies() {
    let state = seed();
    let key = &state.setup_keys["GS-hawk-72"];
    let create = api::setup_key_create("GS-hawk-72", key, &after_creates).expect("resolved");
    assert_eq!(
        body(&create),
        json!({
            "name": "GS-hawk-72",
            "type": "one-off",
            "expires_in": 604800,
            "auto_groups": ["grp-ground-stations"],
            "usage_limit": 1
        })
    );
    let update = api::setup_key_update("GS-hawk-72", key, &after_creates).expect("resolved");
    assert_eq!(body(&update), json!({"revoked": false, "auto_groups": ["grp-ground-stations"]}));

    let text = seed_with(
        "\"auto_groups\": [\"pilots\"],",
        "\"auto_groups\": [\"pilots\"],\n      \"ephemeral\": true,\n      \"allow_extra_dns_labels\": false,",
    );
    let state = routerd_vpn::parse(&text, FILE).expect("accepted");
    let create =
        api::setup_key_create("Pilot-hawk-72", &state.setup_keys["Pilot-hawk-72"], &after_creates)
            .expect("resolved");
    assert_eq!(
        body(&create),
        json!({
            "name": "Pilot-hawk-72",
            "type": "one-off",
            "expires_in": 604800,
            "auto_groups": ["grp-pilots"],
            "usage_limit": 1,
            "ephemeral": true,
            "allow_extra_dns_labels": false
        })
    );
}

#[test]
fn policy_maps_to_one_accept_rule_named_after_it() {
    let state = seed();
    let policy = &state.policies["pilots-to-gs"];
    let expected_rule = json!({
        "name": "pilots-to-gs",
        "enabled": true,
        "action": "accept",
        "bidirectional": true,
        "protocol": "all",
        "sources": ["grp-pilots"],
        "destinations": ["grp-ground-stations"]
    });
    let post = api::policy_request("pilots-to-gs", policy, None, &after_creates).expect("resolved");
    assert_eq!(
        body(&post),
        json!({
            "name": "pilots-to-gs",
            "description": "Allow pilots to reach ground stations",
            "enabled": true,
            "rules": [expected_rule]
        })
    );
    let put =
        api::policy_request("pilots-to-gs", policy, Some("rule-1".to_owned()), &after_creates)
            .expect("resolved");
    assert_eq!(body(&put)["rules"][0]["id"], json!("rule-1"));

    let text =
        seed_with("\"protocol\": \"ALL\"", "\"protocol\": \"TCP\",\n      \"ports\": [\"22\"]");
    let state = routerd_vpn::parse(&text, FILE).expect("accepted");
    let post =
        api::policy_request("pilots-to-gs", &state.policies["pilots-to-gs"], None, &after_creates)
            .expect("resolved");
    assert_eq!(body(&post)["rules"][0]["protocol"], json!("tcp"));
    assert_eq!(body(&post)["rules"][0]["ports"], json!(["22"]));
}

#[test]
fn route_maps_with_the_defaults_the_seed_leaves_out() {
    let state = seed();
    let route =
        api::route_request("gs-local-network", &state.routes["gs-local-network"], &after_creates)
            .expect("resolved");
    assert_eq!(
        body(&route),
        json!({
            "description": "Route to GS local subnet",
            "network_id": "gs-local-network",
            "enabled": true,
            "peer_groups": ["grp-ground-stations"],
            "network": "192.168.1.0/24",
            "metric": 9999,
            "masquerade": true,
            "groups": ["grp-pilots"],
            "keep_route": true
        })
    );

    let text = seed_with(
        "\"network\": \"192.168.1.0/24\",\n      \"peer_groups\": [\"ground-stations\"],",
        "\"domains\": [\"example.com\"],\n      \"peer\": \"GS-hawk-72\",\n      \"metric\": 10,\n      \"masquerade\": false,\n      \"keep_route\": false,",
    );
    let state = routerd_vpn::parse(&text, FILE).expect("accepted");
    let route =
        api::route_request("gs-local-network", &state.routes["gs-local-network"], &after_creates)
            .expect("resolved");
    assert_eq!(
        body(&route),
        json!({
            "description": "Route to GS local subnet",
            "network_id": "gs-local-network",
            "enabled": true,
            "peer": "peer-GS-hawk-72",
            "domains": ["example.com"],
            "metric": 10,
            "masquerade": false,
            "groups": ["grp-pilots"],
            "keep_route": false
        })
    );
}

#[test]
fn nameserver_group_maps_with_group_ids() {
    let text = seed_with(
        "\"nameserver_groups\": {}",
        "\"nameserver_groups\": {\"office\": {\"description\": \"d\", \"nameservers\": [{\"ip\": \"192.0.2.53\", \"ns_type\": \"udp\", \"port\": 53}], \"enabled\": true, \"groups\": [\"pilots\"], \"primary\": false, \"domains\": [\"corp.example\"], \"search_domains_enabled\": true}}",
    );
    let state = routerd_vpn::parse(&text, FILE).expect("accepted");
    let group = api::nameserver_group_request(
        "office",
        &state.dns.nameserver_groups["office"],
        &after_creates,
    )
    .expect("resolved");
    assert_eq!(
        body(&group),
        json!({
            "name": "office",
            "description": "d",
            "nameservers": [{"ip": "192.0.2.53", "ns_type": "udp", "port": 53}],
            "enabled": true,
            "groups": ["grp-pilots"],
            "primary": false,
            "domains": ["corp.example"],
            "search_domains_enabled": true
        })
    );
}

#[test]
fn unresolved_names_are_errors_naming_the_name_and_path() {
    let state = seed();
    let error =
        api::policy_request("pilots-to-gs", &state.policies["pilots-to-gs"], None, &nothing)
            .expect_err("nothing resolves");
    assert_eq!(
        error,
        ResolveError {
            kind: Kind::Group,
            name: "pilots".to_owned(),
            path: "policies.pilots-to-gs.sources[0]".to_owned()
        }
    );
    assert_eq!(
        error.to_string(),
        "policies.pilots-to-gs.sources[0]: group `pilots` has no NetBird ID yet"
    );
    let only_groups = |kind: Kind, name: &str| (kind == Kind::Group).then(|| format!("g-{name}"));
    let text = seed_with("\"peer_groups\": [\"ground-stations\"]", "\"peer\": \"Pilot-hawk-72\"");
    let state = routerd_vpn::parse(&text, FILE).expect("accepted");
    let error =
        api::route_request("gs-local-network", &state.routes["gs-local-network"], &only_groups)
            .expect_err("the peer has not enrolled");
    assert_eq!(
        error.to_string(),
        "routes.gs-local-network.peer: peer `Pilot-hawk-72` has no NetBird ID yet"
    );
    let resolve: &dyn Resolve = &nothing;
    assert_eq!(resolve.id(Kind::Route, "x"), None);
}
