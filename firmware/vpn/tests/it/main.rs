//! Integration tests of routerd-vpn: the seed's `netbird.json` parses, every validation rule
//! refuses its input with a located message, the desired objects map onto the API's bodies,
//! and no mutated input panics. One binary (STYLE.md §6).

mod mapping;
mod mutation;
mod parse;

/// Seed 002's example, with `groups` added to its route.
pub const SEED_EXAMPLE: &str = include_str!("../fixtures/netbird.json");

/// The file name the tests pass to `parse`.
pub const FILE: &str = "netbird.json";

/// The seed example with `from` replaced by `to`, which must occur exactly once.
pub fn seed_with(from: &str, to: &str) -> String {
    assert_eq!(SEED_EXAMPLE.matches(from).count(), 1, "`{from}` occurs once in the fixture");
    SEED_EXAMPLE.replacen(from, to, 1)
}

/// The display of every error of `text`, which must be refused.
pub fn errors_of(text: &str) -> Vec<String> {
    match routerd_vpn::parse(text, FILE) {
        Ok(state) => panic!("accepted: {state:?}"),
        Err(errors) => errors.0.iter().map(ToString::to_string).collect(),
    }
}
