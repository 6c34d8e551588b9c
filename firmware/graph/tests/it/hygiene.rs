//! Crate-level rules: the reconciler core stays free of Linux and of routerd crates.

const ALLOWED: [&str; 5] = ["futures", "rustc-hash", "serde", "thiserror", "tokio"];

#[test]
fn crate_depends_only_on_generic_libraries() {
    let manifest = include_str!("../../Cargo.toml");
    let mut section = "";
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
            continue;
        }
        if section == "[dependencies]" && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['=', '.', ' ']).next().unwrap_or_default();
            found.push(name.to_string());
        }
    }
    for name in &found {
        assert!(ALLOWED.contains(&name.as_str()), "routerd-graph must not depend on {name}");
    }
    assert!(!found.is_empty(), "the manifest was parsed");
}

fn assert_send<T: Send>(_: &T) {}

#[test]
fn reconcile_future_can_run_on_a_multi_threaded_runtime() {
    let mock = crate::support::Mock::new();
    let mut current = crate::support::graph([]);
    let intended = crate::support::graph([]);
    let reconciler = routerd_graph::Reconciler::new(&mock);

    let future = reconciler.reconcile(&mut current, &intended, routerd_graph::Selection::All);

    assert_send(&future);
}
