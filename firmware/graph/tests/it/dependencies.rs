//! Unsatisfied dependencies, `must_satisfy` predicates and modified dependencies.

use routerd_graph::{Dependency, ItemStatus};

use crate::support::{
    Kind::*, Mock, TestItem, assert_before, create, delete, graph, item, key, modify, steps,
};

fn needs_link_up() -> Dependency<TestItem> {
    Dependency::on(key(Link, "eth0"), "address needs the link up")
        .must_satisfy(|l: &TestItem| l.value == "up")
}

#[tokio::test]
async fn unsatisfied_dependency_leaves_the_dependent_pending() {
    let mock = Mock::new();
    let mut current = graph([]);
    let mut intended = graph([item(Addr, "wan").dep(Link, "eth0")]);

    let status = mock.reconcile(&mut current, &intended).await;

    assert!(mock.log().is_empty());
    assert!(current.get(&key(Addr, "wan")).is_none());
    let (pending, reason) = &status.pending[0];
    assert_eq!(pending, &key(Addr, "wan"));
    assert!(reason.contains("link/eth0 is missing"), "{reason}");
    let state = current.state(&key(Addr, "wan")).expect("pending state recorded");
    assert!(matches!(&state.state, ItemStatus::Pending { reason } if reason.contains("link/eth0")));

    intended.put(item(Link, "eth0"));
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(steps(&status), vec![create(Link, "eth0"), create(Addr, "wan")]);
    assert!(status.pending.is_empty());
}

#[tokio::test]
async fn must_satisfy_keeps_the_dependent_pending_until_the_predicate_holds() {
    let mock = Mock::new();
    let mut current = graph([]);
    let addr = item(Addr, "wan").dep_with(needs_link_up());
    let mut intended = graph([item(Link, "eth0").value("down"), addr]);

    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(steps(&status), vec![create(Link, "eth0")]);
    assert!(status.pending[0].1.contains("does not satisfy"), "{:?}", status.pending);

    intended.put(item(Link, "eth0").value("up"));
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(steps(&status), vec![modify(Link, "eth0"), create(Addr, "wan")]);
}

#[tokio::test]
async fn dependency_that_stops_satisfying_deletes_the_dependent_first() {
    let mock = Mock::new();
    let mut current = graph([]);
    let addr = item(Addr, "wan").dep_with(needs_link_up());
    let mut intended = graph([item(Link, "eth0").value("up"), addr]);
    mock.reconcile(&mut current, &intended).await;

    intended.put(item(Link, "eth0").value("down"));
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(steps(&status), vec![delete(Addr, "wan"), modify(Link, "eth0")]);
    assert_eq!(status.pending.len(), 1);
    assert!(current.get(&key(Addr, "wan")).is_none());
}

#[tokio::test]
async fn modified_dependency_keeps_its_plain_dependents() {
    let mock = Mock::new();
    let mut current = graph([]);
    let mut intended = graph([item(Link, "eth0"), item(Addr, "wan").dep(Link, "eth0")]);
    mock.reconcile(&mut current, &intended).await;

    intended.put(item(Link, "eth0").value("mtu 1400"));
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(steps(&status), vec![modify(Link, "eth0")]);
}

#[tokio::test]
async fn modified_dependency_is_modified_before_its_modified_dependents() {
    let mock = Mock::new();
    let mut current = graph([]);
    let mut intended = graph([item(Link, "a").dep(Link, "b"), item(Link, "b")]);
    mock.reconcile(&mut current, &intended).await;

    intended.put(item(Link, "a").value("v2").dep(Link, "b"));
    intended.put(item(Link, "b").value("v2"));
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(steps(&status), vec![modify(Link, "b"), modify(Link, "a")]);
}

#[tokio::test]
async fn removed_dependency_deletes_the_dependent_first_and_leaves_it_pending() {
    let mock = Mock::new();
    let mut current = graph([]);
    let mut intended = graph([
        item(Link, "eth0"),
        item(Addr, "wan").dep(Link, "eth0"),
        item(Route, "default").dep(Addr, "wan"),
    ]);
    mock.reconcile(&mut current, &intended).await;

    intended.remove(&key(Link, "eth0"));
    let status = mock.reconcile(&mut current, &intended).await;

    let log = steps(&status);
    assert_eq!(log.len(), 3, "{log:?}");
    assert_before(&log, delete(Route, "default"), delete(Addr, "wan"));
    assert_before(&log, delete(Addr, "wan"), delete(Link, "eth0"));
    let pending: Vec<_> = status.pending.iter().map(|(k, _)| k.to_string()).collect();
    assert_eq!(pending, vec!["addr/wan", "route/default"]);
}
