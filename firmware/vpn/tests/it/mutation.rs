//! Seeded mutations of the seed example: `parse` and the mapping never panic, and every error
//! names the file.

use routerd_vpn::api::{self, Kind};

use crate::{FILE, SEED_EXAMPLE};

/// Iterations; the seed makes every run see the same inputs.
const ROUNDS: usize = 10_000;

/// Bytes and tokens that stress the JSON and the schema.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "\\u00e9",
    "é",
    "\n",
    "0",
    "-1",
    "1e999",
    "99999999999999999999",
    "true",
    "null",
    "\"x\"",
    "[]",
    "{}",
    "\"All\"",
    "\"ALL\"",
    "\"tcp\"",
    "\"one-off\"",
    "\"reusable\"",
    "\"10.0.0.0/8\"",
    "\"::/0\"",
    "\"domains\": [\"a\"],",
    "\"peer\": \"GS-hawk-72\",",
];

fn mutate(rng: &mut fastrand::Rng, text: &mut Vec<u8>) {
    let at = rng.usize(..=text.len());
    match rng.u8(..5) {
        0 if !text.is_empty() => {
            let at = rng.usize(..text.len());
            text[at] = rng.u8(..);
        }
        1 if !text.is_empty() => {
            let end = (at + rng.usize(1..16)).min(text.len());
            text.drain(at.min(end)..end);
        }
        2 => {
            let token = TOKENS[rng.usize(..TOKENS.len())];
            text.splice(at..at, token.bytes());
        }
        3 if !text.is_empty() => {
            let from = rng.usize(..text.len());
            let end = (from + rng.usize(1..64)).min(text.len());
            let copy = text[from..end].to_vec();
            text.splice(at..at, copy);
        }
        _ => {
            let depth = rng.usize(1..200);
            text.splice(at..at, std::iter::repeat_n(b'[', depth));
        }
    }
}

fn some_id(kind: Kind, name: &str) -> Option<String> {
    Some(format!("{kind}-{name}"))
}

#[test]
fn mutated_inputs_never_panic() {
    let mut rng = fastrand::Rng::with_seed(0x002c_402e_6d83);
    let mut accepted = 0;
    for _ in 0..ROUNDS {
        let mut bytes = SEED_EXAMPLE.as_bytes().to_vec();
        for _ in 0..rng.usize(1..4) {
            mutate(&mut rng, &mut bytes);
        }
        let text = String::from_utf8_lossy(&bytes);
        match routerd_vpn::parse(&text, FILE) {
            Ok(state) => {
                accepted += 1;
                map_everything(&state);
            }
            Err(errors) => {
                assert!(!errors.0.is_empty(), "an error is reported");
                for error in &errors.0 {
                    assert!(error.to_string().starts_with("netbird.json"), "{error}");
                }
            }
        }
    }
    assert!(accepted > 0, "some mutations keep the state valid");
}

fn map_everything(state: &routerd_vpn::NetbirdState) {
    for (name, group) in &state.groups {
        let _group = api::group_request(name, group, Vec::new(), &some_id);
    }
    for (name, key) in &state.setup_keys {
        api::setup_key_create(name, key, &some_id).expect("everything resolves");
        api::setup_key_update(name, key, &some_id).expect("everything resolves");
    }
    for (name, policy) in &state.policies {
        api::policy_request(name, policy, None, &some_id).expect("everything resolves");
    }
    for (network_id, route) in &state.routes {
        let request = api::route_request(network_id, route, &some_id).expect("resolves");
        serde_json::to_string(&request).expect("serialises");
    }
    for (name, group) in &state.dns.nameserver_groups {
        api::nameserver_group_request(name, group, &some_id).expect("everything resolves");
    }
}
