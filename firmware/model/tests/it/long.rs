//! A long resource list, whose items the YAML front end hands over one by one as they are
//! read: every resource, error and position must come out in order and at its place.

use routerd_model::Location;

use crate::support::*;

/// Interfaces in the list: about 450 KB of YAML.
const COUNT: usize = 3000;

/// `COUNT` interfaces `if0`, `if1`, … (seven lines each from line 7), then `after`.
fn long_document(after: &str) -> String {
    let items: String =
        (0..COUNT).map(|i| interface(&format!("if{i}"), &format!("e{i}"))).collect();
    document(&format!("{items}{after}"))
}

/// First line of interface `i`.
fn line_of(i: usize) -> u32 {
    u32::try_from(7 + 7 * i).expect("small")
}

#[test]
fn every_resource_of_a_long_list_is_read_in_order_at_its_line() {
    let config = config_of(&long_document("  reconcile:\n    mode: strict\n"));
    assert_eq!(config.spec.resources.len(), COUNT);
    for (i, resource) in config.spec.resources.iter().enumerate() {
        assert_eq!(resource.name, format!("if{i}"));
        // The item node starts after `    - `.
        assert_eq!(resource.location, Location::new(line_of(i), 7), "location of if{i}");
    }
    assert_eq!(config.spec.reconcile.mode, routerd_model::ReconcileMode::Strict);
}

#[test]
fn errors_late_in_a_long_list_and_after_it_are_located() {
    let source = long_document("  reconcile: sometimes\n").replacen(
        "name: if2500\n      spec:\n        ifname: e2500\n        managed: true",
        "name: if2500\n      spec:\n        ifname: e2500\n        managed: \"yes\"",
        1,
    );
    let all = errors_of(&source);
    let errors: Vec<_> = all.iter().collect();
    assert_eq!(errors.len(), 2, "{all}");
    assert_error(
        errors[0],
        (line_of(2500) + 6, 18),
        Some("net.routerd.net/v1alpha1/Interface/if2500"),
        "spec.resources[2500].spec.managed",
        "invalid type: string \"yes\", expected a boolean",
    );
    // A path near the root, after the list: its position is one of the shallow ones.
    assert_eq!((errors[1].line, errors[1].column), (line_of(COUNT), 14), "{}", errors[1]);
    assert_eq!(errors[1].path, "spec.reconcile");
}
