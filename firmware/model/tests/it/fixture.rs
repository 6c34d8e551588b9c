//! The all-kinds fixture parses cleanly and covers every kind.

use std::collections::BTreeSet;

use routerd_model::{ResourceKind, parse_config};

use crate::support::ALL_KINDS;

#[test]
fn all_kinds_fixture_parses_without_errors() {
    if let Err(errors) = parse_config(ALL_KINDS, "all-kinds.yaml") {
        panic!("fixture has errors:\n{errors}");
    }
}

#[test]
fn all_kinds_fixture_uses_every_resource_kind() {
    let config = parse_config(ALL_KINDS, "all-kinds.yaml").expect("fixture parses");
    let used: BTreeSet<ResourceKind> = config.spec.resources.iter().map(|r| r.kind).collect();
    let missing: Vec<_> = ResourceKind::ALL.iter().filter(|k| !used.contains(k)).collect();
    assert!(missing.is_empty(), "kinds missing from the fixture: {missing:?}");
}
