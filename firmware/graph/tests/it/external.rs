//! External items: never touched, but their presence drives their dependents.

use routerd_graph::Dependency;

use crate::support::{Kind::*, Mock, TestItem, create, delete, graph, item, key, steps};

fn uplink(value: &str) -> TestItem {
    item(Link, "eth0").value(value).external()
}

#[tokio::test]
async fn external_item_appearing_lets_dependents_be_created() {
    let mock = Mock::new();
    let mut current = graph([]);
    let intended = graph([uplink("up"), item(Addr, "wan").dep(Link, "eth0")]);

    let status = mock.reconcile(&mut current, &intended).await;
    assert!(steps(&status).is_empty());
    assert_eq!(status.pending.len(), 1);

    current.put(uplink("up"));
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(steps(&status), vec![create(Addr, "wan")]);
    assert!(mock.log().iter().all(|(_, k)| k != "link/eth0"), "{:?}", mock.log());
}

#[tokio::test]
async fn external_item_disappearing_deletes_its_dependents() {
    let mock = Mock::new();
    let mut current = graph([uplink("up")]);
    let intended = graph([uplink("up"), item(Addr, "wan").dep(Link, "eth0")]);
    mock.reconcile(&mut current, &intended).await;

    current.remove(&key(Link, "eth0"));
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(steps(&status), vec![delete(Addr, "wan")]);
    assert!(status.pending[0].1.contains("link/eth0 is missing"), "{:?}", status.pending);
}

#[tokio::test]
async fn auto_deleted_by_external_removes_dependents_without_a_delete() {
    let mock = Mock::new();
    let mut current = graph([uplink("up")]);
    let on_link = Dependency::on(key(Link, "eth0"), "the kernel flushes addresses with the link");
    let intended = graph([
        uplink("up"),
        item(Addr, "wan").dep_with(on_link.auto_deleted_by_external()),
        item(Route, "default").dep(Addr, "wan"),
    ]);
    mock.reconcile(&mut current, &intended).await;
    mock.clear_log();

    current.remove(&key(Link, "eth0"));
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(mock.log(), vec![delete(Route, "default")], "the address is not deleted");
    assert_eq!(status.auto_deleted, vec![key(Addr, "wan")]);
    assert!(current.get(&key(Addr, "wan")).is_none());
    assert_eq!(status.pending.len(), 2);
}

#[tokio::test]
async fn external_must_satisfy_follows_the_observed_state() {
    let mock = Mock::new();
    let mut current = graph([uplink("down")]);
    let carrier = Dependency::on(key(Link, "eth0"), "needs carrier")
        .must_satisfy(|l: &TestItem| l.value == "up");
    let intended = graph([uplink("up"), item(Addr, "wan").dep_with(carrier)]);

    let status = mock.reconcile(&mut current, &intended).await;
    assert!(steps(&status).is_empty(), "the intended value of an external item is not applied");

    current.put(uplink("up"));
    let status = mock.reconcile(&mut current, &intended).await;
    assert_eq!(steps(&status), vec![create(Addr, "wan")]);

    current.put(uplink("down"));
    let status = mock.reconcile(&mut current, &intended).await;
    assert_eq!(steps(&status), vec![delete(Addr, "wan")]);
}

#[tokio::test]
async fn externally_modified_item_recreates_its_recreate_when_modified_dependents() {
    let mock = Mock::new();
    let mut current = graph([uplink("mac 1")]);
    let bound = Dependency::on(key(Link, "eth0"), "bound to the link").recreate_when_modified();
    let intended = graph([uplink("mac 1"), item(Svc, "dhcp").dep_with(bound)]);
    mock.reconcile(&mut current, &intended).await;

    current.put(uplink("mac 2"));
    assert!(current.state(&key(Link, "eth0")).is_some_and(|s| s.externally_modified));
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(steps(&status), vec![delete(Svc, "dhcp"), create(Svc, "dhcp")]);
    assert!(current.state(&key(Link, "eth0")).is_some_and(|s| !s.externally_modified));
    let status = mock.reconcile(&mut current, &intended).await;
    assert!(steps(&status).is_empty());
}

#[tokio::test]
async fn a_recreate_for_an_externally_modified_item_is_retried_after_its_delete_failed() {
    let mock = Mock::new();
    let mut current = graph([uplink("mac 1")]);
    let bound = Dependency::on(key(Link, "eth0"), "bound to the link").recreate_when_modified();
    let intended = graph([uplink("mac 1"), item(Svc, "dhcp").dep_with(bound)]);
    mock.reconcile(&mut current, &intended).await;

    current.put(uplink("mac 2"));
    mock.fail(delete(Svc, "dhcp"));
    let status = mock.reconcile(&mut current, &intended).await;
    assert_eq!(steps(&status), vec![delete(Svc, "dhcp")]);
    // The recreate did not happen: the link's mark stays, so the next run tries it again.
    assert!(current.state(&key(Link, "eth0")).is_some_and(|s| s.externally_modified));

    mock.heal(&delete(Svc, "dhcp"));
    let status = mock.reconcile(&mut current, &intended).await;
    assert_eq!(steps(&status), vec![delete(Svc, "dhcp"), create(Svc, "dhcp")]);
    assert!(current.state(&key(Link, "eth0")).is_some_and(|s| !s.externally_modified));
}
