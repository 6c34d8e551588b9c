//! Creating and deleting items, with and without dependencies.

use routerd_graph::{ItemStatus, Operation};

use crate::support::{Kind::*, Mock, assert_before, create, delete, graph, item, key, steps};

#[tokio::test]
async fn items_without_dependencies_are_all_created() {
    let mock = Mock::new();
    let mut current = graph([]);
    let intended = graph([item(Link, "eth0"), item(Link, "eth1"), item(Svc, "dns")]);

    let status = mock.reconcile(&mut current, &intended).await;

    assert!(status.is_ok(), "{:?}", status.error());
    assert_eq!(mock.log().len(), 3);
    for created in [create(Link, "eth0"), create(Link, "eth1"), create(Svc, "dns")] {
        assert!(mock.log().contains(&created));
    }
    assert_eq!(current.len(), 3);
    let state = current.state(&key(Svc, "dns")).expect("state recorded");
    assert_eq!(state.state, ItemStatus::Created);
    assert_eq!(state.last_op, Some(Operation::Create));
    assert!(!status.async_ops_in_progress);
    assert!(status.ready_to_resume.is_none() && status.cancel.is_none());
}

#[tokio::test]
async fn dependency_is_created_before_its_dependent() {
    let mock = Mock::new();
    let mut current = graph([]);
    // "a" sorts before "b", so key order alone would create the dependent first.
    let intended = graph([item(Link, "a").dep(Link, "b"), item(Link, "b")]);

    mock.reconcile(&mut current, &intended).await;

    assert_before(&mock.log(), create(Link, "b"), create(Link, "a"));
}

#[tokio::test]
async fn transitive_dependencies_are_created_in_order() {
    let mock = Mock::new();
    let mut current = graph([]);
    let intended = graph([
        item(Svc, "dns").dep(Route, "default"),
        item(Route, "default").dep(Addr, "wan"),
        item(Addr, "wan").dep(Link, "eth0"),
        item(Link, "eth0"),
    ]);

    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(
        steps(&status),
        vec![
            create(Link, "eth0"),
            create(Addr, "wan"),
            create(Route, "default"),
            create(Svc, "dns")
        ]
    );
}

#[tokio::test]
async fn items_no_longer_intended_are_deleted_dependents_first() {
    let mock = Mock::new();
    let intended = graph([
        item(Link, "eth0"),
        item(Addr, "wan").dep(Link, "eth0"),
        item(Route, "default").dep(Addr, "wan"),
    ]);
    let mut current = graph([]);
    mock.reconcile(&mut current, &intended).await;
    mock.clear_log();

    let status = mock.reconcile(&mut current, &graph([])).await;

    assert_eq!(
        steps(&status),
        vec![delete(Route, "default"), delete(Addr, "wan"), delete(Link, "eth0")]
    );
    assert!(current.is_empty());
    assert_eq!(current.states().count(), 0, "no state is left for deleted items");
}

#[tokio::test]
async fn second_reconcile_without_changes_executes_nothing() {
    let mock = Mock::new();
    let intended = graph([
        item(Link, "eth0"),
        item(Addr, "wan").dep(Link, "eth0"),
        item(Route, "default").dep(Addr, "wan").dep(Link, "missing"),
    ]);
    let mut current = graph([]);
    mock.reconcile(&mut current, &intended).await;
    mock.clear_log();

    let status = mock.reconcile(&mut current, &intended).await;

    assert!(status.op_log.is_empty(), "{:?}", steps(&status));
    assert!(mock.log().is_empty());
    assert_eq!(status.pending.len(), 1, "the route still waits for link/missing");
}

#[tokio::test]
async fn modified_item_is_modified_in_place() {
    let mock = Mock::new();
    let mut current = graph([]);
    mock.reconcile(&mut current, &graph([item(Link, "eth0")])).await;

    let status = mock.reconcile(&mut current, &graph([item(Link, "eth0").value("mtu 9000")])).await;

    assert_eq!(steps(&status), vec![(Operation::Modify, "link/eth0".to_string())]);
    assert_eq!(current.get(&key(Link, "eth0")).map(|i| i.value.as_str()), Some("mtu 9000"));
    let state = current.state(&key(Link, "eth0")).expect("state recorded");
    assert_eq!(state.last_op, Some(Operation::Modify));
}
