//! The pure plan: cycles, equality with the executed log, no side effects.

use routerd_graph::{Dependency, GraphError, Reason, Reconciler, Selection, plan};

use crate::support::{Kind::*, Mock, TestItem, graph, item, key, steps};

fn initial() -> Vec<TestItem> {
    vec![
        item(Link, "eth0").recreating(),
        item(Addr, "wan").dep(Link, "eth0"),
        item(Route, "default").dep(Addr, "wan"),
        item(Link, "eth1"),
        item(Addr, "lan")
            .dep_with(Dependency::on(key(Link, "eth1"), "lan").recreate_when_modified()),
        item(Svc, "old"),
        item(Svc, "dns").dep(Addr, "lan"),
    ]
}

fn changed() -> Vec<TestItem> {
    vec![
        item(Link, "eth0").value("v2").recreating(),
        item(Addr, "wan").dep(Link, "eth0"),
        item(Route, "default").dep(Addr, "wan").value("metric 10"),
        item(Link, "eth1").value("v2"),
        item(Addr, "lan")
            .dep_with(Dependency::on(key(Link, "eth1"), "lan").recreate_when_modified()),
        item(Svc, "dns").dep(Addr, "lan").value("v2"),
        item(Svc, "ntp").dep(Route, "default"),
        item(Svc, "vpn").dep(Link, "wg0"),
    ]
}

#[tokio::test]
async fn plan_equals_the_executed_operation_log_when_every_operation_succeeds() {
    let mock = Mock::new();
    let mut current = graph([]);
    mock.reconcile(&mut current, &graph(initial())).await;
    let intended = graph(changed());

    let planned =
        Reconciler::new(&mock).plan(&current, &intended, Selection::All).expect("acyclic");
    let status = mock.reconcile(&mut current, &intended).await;

    let planned: Vec<_> = planned.steps().into_iter().map(|(op, k)| (op, k.to_string())).collect();
    assert_eq!(planned, steps(&status));
    assert_eq!(planned.len(), 13, "{planned:?}");
}

#[tokio::test]
async fn plan_has_no_side_effects() {
    let mock = Mock::new();
    let mut current = graph([]);
    mock.reconcile(&mut current, &graph(initial())).await;
    mock.clear_log();
    let before = format!("{current:?}");

    let planned =
        plan(&current, &graph(changed()), &|_, _| false, Selection::All).expect("acyclic");

    assert!(!planned.is_empty());
    assert_eq!(format!("{current:?}"), before);
    assert!(mock.log().is_empty());
}

#[tokio::test]
async fn plan_explains_operations_and_lists_pending_items() {
    let current = graph([item(Svc, "old")]);
    let intended = graph([item(Link, "eth0"), item(Svc, "vpn").dep(Link, "wg0")]);

    let planned = plan(&current, &intended, &|_, _| false, Selection::All).expect("acyclic");

    let reasons: Vec<_> =
        planned.ops.iter().map(|op| (op.key.to_string(), op.reason.clone())).collect();
    assert_eq!(
        reasons,
        vec![
            ("svc/old".to_string(), Reason::NotIntended),
            ("link/eth0".to_string(), Reason::NewItem)
        ]
    );
    assert_eq!(
        planned.pending,
        vec![(key(Svc, "vpn"), "dependency link/wg0 is missing (needs link/wg0)".into())]
    );
    let text = planned.to_string();
    assert!(text.contains("1. delete svc/old (not intended)"), "{text}");
    assert!(text.contains("pending svc/vpn"), "{text}");
}

#[tokio::test]
async fn cycle_is_reported_with_its_items_and_nothing_runs() {
    let mock = Mock::new();
    let mut current = graph([item(Svc, "old")]);
    let intended = graph([
        item(Link, "a").dep(Link, "b"),
        item(Link, "b").dep(Link, "c"),
        item(Link, "c").dep(Link, "a"),
        item(Svc, "free"),
    ]);

    let result = Reconciler::new(&mock).reconcile(&mut current, &intended, Selection::All).await;

    let error = result.expect_err("cycle detected");
    let items: Vec<String> = ["link/a", "link/b", "link/c", "link/a"].map(String::from).to_vec();
    assert_eq!(error, GraphError::Cycle { items });
    assert_eq!(
        error.to_string(),
        "dependency cycle in the intended graph: link/a -> link/b -> link/c -> link/a"
    );
    assert!(mock.log().is_empty());
    assert!(current.contains(&key(Svc, "old")));
    assert!(plan(&current, &intended, &|_, _| false, Selection::All).is_err());
}

#[test]
fn self_dependency_is_a_cycle() {
    let intended = graph([item(Link, "loop").dep(Link, "loop")]);

    let error = plan(&graph([]), &intended, &|_, _| false, Selection::All).expect_err("cycle");

    assert_eq!(error, GraphError::Cycle { items: vec!["link/loop".into(), "link/loop".into()] });
}

#[test]
fn reasons_serialize_with_their_stable_code() {
    let reason = Reason::DependencyRecreated { dependency: "link/eth0".into() };

    let json = serde_json::to_string(&reason).expect("serializable");

    assert_eq!(json, r#"{"code":"DependencyRecreated","dependency":"link/eth0"}"#);
    assert_eq!(
        serde_json::to_string(&Reason::NewItem).expect("serializable"),
        r#"{"code":"NewItem"}"#
    );
}
