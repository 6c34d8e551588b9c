//! Failed operations block only what depends on them.

use routerd_graph::{ItemStatus, Operation};

use crate::support::{Kind::*, Mock, create, delete, graph, item, key, modify, steps};

fn two_stacks() -> routerd_graph::Graph<crate::support::TestItem> {
    graph([
        item(Link, "eth0"),
        item(Addr, "wan").dep(Link, "eth0"),
        item(Link, "eth1"),
        item(Addr, "lan").dep(Link, "eth1"),
    ])
}

#[tokio::test]
async fn failed_create_blocks_only_its_dependents() {
    let mock = Mock::new();
    mock.fail(create(Link, "eth0"));
    let mut current = graph([]);

    let status = mock.reconcile(&mut current, &two_stacks()).await;

    assert_eq!(
        steps(&status),
        vec![create(Link, "eth0"), create(Link, "eth1"), create(Addr, "lan")]
    );
    assert_eq!(status.pending.len(), 1);
    let (pending, reason) = &status.pending[0];
    assert_eq!(pending, &key(Addr, "wan"));
    assert!(reason.contains("link/eth0 failed: create link/eth0 rejected"), "{reason}");
}

#[tokio::test]
async fn failed_item_error_is_in_the_status_and_the_item_state() {
    let mock = Mock::new();
    mock.fail(create(Link, "eth0"));
    let mut current = graph([]);

    let status = mock.reconcile(&mut current, &two_stacks()).await;

    assert!(!status.is_ok());
    assert_eq!(
        status.errors,
        vec![(key(Link, "eth0"), "create: create link/eth0 rejected".into())]
    );
    let joined = status.error().expect("joined error").to_string();
    assert_eq!(joined, "1 operation(s) failed: link/eth0: create: create link/eth0 rejected");
    let entry = status.op_log.iter().find(|e| e.key == key(Link, "eth0")).expect("logged");
    assert_eq!(entry.error.as_deref(), Some("create link/eth0 rejected"));
    let state = current.state(&key(Link, "eth0")).expect("state kept for the failed item");
    assert_eq!(state.state, ItemStatus::Failed);
    assert_eq!(state.last_op, Some(Operation::Create));
    assert_eq!(state.last_error.as_deref(), Some("create link/eth0 rejected"));
    assert!(current.get(&key(Link, "eth0")).is_none(), "a failed create leaves no item");
}

#[tokio::test]
async fn failed_item_is_retried_by_the_next_reconcile() {
    let mock = Mock::new();
    mock.fail(create(Link, "eth0"));
    let mut current = graph([]);
    mock.reconcile(&mut current, &two_stacks()).await;

    mock.heal(&create(Link, "eth0"));
    let status = mock.reconcile(&mut current, &two_stacks()).await;

    assert_eq!(steps(&status), vec![create(Link, "eth0"), create(Addr, "wan")]);
    let retry = &status.op_log[0];
    assert_eq!(retry.previous_error.as_deref(), Some("create link/eth0 rejected"));
    assert!(retry.error.is_none());
    assert_eq!(current.state(&key(Link, "eth0")).and_then(|s| s.last_error.clone()), None);
}

#[tokio::test]
async fn failed_delete_keeps_the_item_and_defers_deleting_its_dependency() {
    let mock = Mock::new();
    let mut current = graph([]);
    mock.reconcile(&mut current, &two_stacks()).await;
    mock.fail(delete(Addr, "wan"));
    mock.clear_log();

    let status = mock.reconcile(&mut current, &graph([])).await;

    let log = mock.log();
    assert!(log.contains(&delete(Addr, "wan")) && !log.contains(&delete(Link, "eth0")), "{log:?}");
    assert!(log.contains(&delete(Addr, "lan")) && log.contains(&delete(Link, "eth1")));
    let (deferred, why) = &status.deferred[0];
    assert_eq!(deferred, &key(Link, "eth0"));
    assert!(why.contains("dependent addr/wan failed"), "{why}");
    let state = current.state(&key(Addr, "wan")).expect("item kept");
    assert_eq!((state.state.clone(), state.last_op), (ItemStatus::Failed, Some(Operation::Delete)));
    assert!(current.contains(&key(Addr, "wan")) && current.contains(&key(Link, "eth0")));
}

#[tokio::test]
async fn failed_modify_keeps_the_previous_value_and_blocks_new_dependents() {
    let mock = Mock::new();
    let mut current = graph([]);
    mock.reconcile(&mut current, &graph([item(Link, "eth0")])).await;
    mock.fail(modify(Link, "eth0"));

    let intended = graph([item(Link, "eth0").value("v2"), item(Addr, "wan").dep(Link, "eth0")]);
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(steps(&status), vec![modify(Link, "eth0")]);
    assert_eq!(current.get(&key(Link, "eth0")).map(|l| l.value.as_str()), Some("v1"));
    assert!(status.pending[0].1.contains("link/eth0 failed"), "{:?}", status.pending);
}

#[tokio::test]
async fn missing_configurator_fails_only_the_item_and_its_dependents() {
    let mock = Mock::new();
    let mut current = graph([]);
    let intended =
        graph([item(Orphan, "x"), item(Route, "r").dep(Orphan, "x"), item(Link, "eth0")]);

    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(mock.log(), vec![create(Link, "eth0")]);
    assert_eq!(
        status.errors,
        vec![(key(Orphan, "x"), "create: no configurator for kind orphan".into())]
    );
    assert_eq!(status.pending[0].0, key(Route, "r"));
}
