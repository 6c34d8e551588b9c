//! Integration tests of routerd-ota against a real `rauc service` on a private D-Bus bus, one
//! binary (STYLE.md §6). Each test starts its own bus and RAUC ([`support::RaucFixture`]).
//!
//! Tests that inspect or install need root (RAUC mounts plain bundles on loop devices); they
//! fail loudly when not root, they never skip. The slot, mark and property tests do not.

mod bundles;
mod fetch;
mod gate;
mod service;
mod slots;
mod support;
