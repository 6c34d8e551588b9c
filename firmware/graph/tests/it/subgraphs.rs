//! Selective reconciliation of one subgraph.

use routerd_graph::{Graph, Selection};

use crate::support::{Kind::*, Mock, TestItem, assert_before, create, delete, item, key, steps};

fn intended() -> Graph<TestItem> {
    let mut intended = Graph::new();
    intended.put_in("lan", item(Link, "lan0"));
    intended.put_in("lan", item(Addr, "lan").dep(Link, "lan0"));
    intended.put_in("wan", item(Link, "wan0"));
    intended.put_in("wan", item(Addr, "wan").dep(Link, "wan0"));
    intended
}

#[tokio::test]
async fn subgraph_reconcile_touches_only_the_selected_items() {
    let mock = Mock::new();
    let mut current = Graph::new();

    let status =
        mock.reconcile_selected(&mut current, &intended(), Selection::subgraph("lan")).await;

    assert_eq!(steps(&status), vec![create(Link, "lan0"), create(Addr, "lan")]);
    assert_eq!(current.subgraph_of(&key(Link, "lan0")), Some("lan"));
    assert!(!current.contains(&key(Link, "wan0")));
    assert!(status.pending.is_empty(), "unselected items are not reported pending");
}

#[tokio::test]
async fn unselected_items_are_neither_deleted_nor_modified() {
    let mock = Mock::new();
    let mut current = Graph::new();
    mock.reconcile(&mut current, &intended()).await;
    let mut changed = intended();
    changed.remove(&key(Addr, "wan"));
    changed.put_in("wan", item(Link, "wan0").value("v2"));
    changed.put_in("lan", item(Link, "lan0").value("v2"));

    let status = mock.reconcile_selected(&mut current, &changed, Selection::subgraph("lan")).await;

    assert_eq!(steps(&status), vec![(routerd_graph::Operation::Modify, "link/lan0".into())]);
    assert!(current.contains(&key(Addr, "wan")));
}

#[tokio::test]
async fn unselected_items_still_satisfy_dependencies() {
    let mock = Mock::new();
    let mut current = Graph::new();
    mock.reconcile_selected(&mut current, &intended(), Selection::subgraph("wan")).await;
    let mut with_route = intended();
    with_route.put_in("lan", item(Route, "uplink").dep(Link, "wan0"));
    with_route.put_in("lan", item(Route, "pending").dep(Link, "nowhere"));

    let status =
        mock.reconcile_selected(&mut current, &with_route, Selection::subgraph("lan")).await;

    assert!(steps(&status).contains(&create(Route, "uplink")), "{:?}", steps(&status));
    assert_eq!(
        status.pending,
        vec![(
            key(Route, "pending"),
            "dependency link/nowhere is missing (needs link/nowhere)".into()
        )]
    );
}

#[tokio::test]
async fn recreate_in_the_selection_recreates_dependents_outside_it() {
    let mock = Mock::new();
    let build = |value: &str| {
        let mut graph = intended();
        graph.put_in("lan", item(Link, "lan0").value(value).recreating());
        graph.put_in("svc", item(Svc, "dhcp").dep(Link, "lan0"));
        graph
    };
    let mut current = Graph::new();
    mock.reconcile(&mut current, &build("v1")).await;

    let status =
        mock.reconcile_selected(&mut current, &build("v2"), Selection::subgraph("lan")).await;

    let log = steps(&status);
    assert_eq!(log.len(), 6, "{log:?}");
    assert_before(&log, delete(Svc, "dhcp"), delete(Link, "lan0"));
    assert_before(&log, create(Link, "lan0"), create(Svc, "dhcp"));
    assert_eq!(current.subgraph_of(&key(Svc, "dhcp")), Some("svc"));
}

#[tokio::test]
async fn item_moved_to_another_subgraph_is_relabelled_without_operations() {
    let mock = Mock::new();
    let mut current = Graph::new();
    mock.reconcile(&mut current, &intended()).await;
    let mut moved = intended();
    moved.put_in("wan", item(Link, "lan0"));

    let status = mock.reconcile_selected(&mut current, &moved, Selection::subgraph("lan")).await;

    assert!(steps(&status).is_empty(), "{:?}", steps(&status));
    assert_eq!(current.subgraph_of(&key(Link, "lan0")), Some("wan"));
}
