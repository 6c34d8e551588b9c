//! Operations that continue in the background: in progress, resume, cancel.

use routerd_graph::{Dependency, ItemStatus, OpContext, Operation};

use crate::support::{Kind::*, Mock, TestItem, create, delete, graph, item, key, modify, steps};

fn link_with_address() -> Vec<TestItem> {
    vec![item(Link, "eth0"), item(Addr, "wan").dep(Link, "eth0"), item(Svc, "ntp")]
}

#[tokio::test]
async fn async_create_leaves_the_item_in_progress_and_its_dependent_waits() {
    let mock = Mock::new();
    mock.in_background(&key(Link, "eth0"));
    let mut current = graph([]);
    let intended = graph(link_with_address());

    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(steps(&status), vec![create(Link, "eth0"), create(Svc, "ntp")]);
    assert!(status.op_log[0].in_progress && status.op_log[0].end.is_none());
    assert!(status.async_ops_in_progress);
    let running = ItemStatus::InProgress { op: Operation::Create };
    assert_eq!(current.state(&key(Link, "eth0")).map(|s| s.state.clone()), Some(running));
    assert!(
        status.pending[0].1.contains("link/eth0 has a create in progress"),
        "{:?}",
        status.pending
    );
    let mut resume = status.ready_to_resume.expect("resume signal while ops run");
    assert!(!resume.is_ready());

    mock.release(&key(Link, "eth0"));
    resume.wait().await;
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(steps(&status), vec![create(Link, "eth0"), create(Addr, "wan")]);
    let finished = &status.op_log[0];
    assert!(!finished.in_progress && finished.end.is_some() && finished.error.is_none());
    assert!(!status.async_ops_in_progress && status.ready_to_resume.is_none());
    assert_eq!(
        current.state(&key(Link, "eth0")).map(|s| s.state.clone()),
        Some(ItemStatus::Created)
    );
}

#[tokio::test]
async fn async_delete_completes_on_resume_before_its_dependency_is_deleted() {
    let mock = Mock::new();
    let mut current = graph([]);
    mock.reconcile(&mut current, &graph(link_with_address())).await;
    mock.in_background(&key(Addr, "wan"));

    let status = mock.reconcile(&mut current, &graph([])).await;

    assert_eq!(steps(&status), vec![delete(Addr, "wan"), delete(Svc, "ntp")]);
    assert_eq!(status.deferred[0].0, key(Link, "eth0"));
    assert!(current.contains(&key(Addr, "wan")) && current.contains(&key(Link, "eth0")));

    mock.release(&key(Addr, "wan"));
    status.ready_to_resume.expect("resume signal").wait().await;
    let status = mock.reconcile(&mut current, &graph([])).await;

    assert_eq!(steps(&status), vec![delete(Addr, "wan"), delete(Link, "eth0")]);
    assert!(current.is_empty());
}

#[tokio::test]
async fn async_modify_keeps_the_old_value_until_resumed() {
    let mock = Mock::new();
    let mut current = graph([]);
    mock.reconcile(&mut current, &graph([item(Link, "eth0")])).await;
    mock.in_background(&key(Link, "eth0"));
    let v2 =
        Dependency::on(key(Link, "eth0"), "needs v2").must_satisfy(|l: &TestItem| l.value == "v2");
    let intended = graph([item(Link, "eth0").value("v2"), item(Addr, "wan").dep_with(v2)]);

    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(steps(&status), vec![modify(Link, "eth0")]);
    assert_eq!(current.get(&key(Link, "eth0")).map(|l| l.value.as_str()), Some("v1"));
    assert!(status.pending[0].1.contains("has a modify in progress"), "{:?}", status.pending);

    mock.release(&key(Link, "eth0"));
    status.ready_to_resume.expect("resume signal").wait().await;
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(steps(&status), vec![modify(Link, "eth0"), create(Addr, "wan")]);
    assert_eq!(current.get(&key(Link, "eth0")).map(|l| l.value.as_str()), Some("v2"));
}

#[tokio::test]
async fn failed_async_create_is_reported_on_resume() {
    let mock = Mock::new();
    mock.in_background(&key(Link, "eth0"));
    mock.fail(create(Link, "eth0"));
    let mut current = graph([]);
    let intended = graph(link_with_address());
    let status = mock.reconcile(&mut current, &intended).await;

    mock.release(&key(Link, "eth0"));
    status.ready_to_resume.expect("resume signal").wait().await;
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(
        status.errors,
        vec![(key(Link, "eth0"), "create: create link/eth0 rejected".into())]
    );
    assert!(steps(&status).iter().all(|(op, k)| !(op == &Operation::Create && k == "addr/wan")));
    assert!(current.get(&key(Link, "eth0")).is_none());
    assert_eq!(
        current.state(&key(Link, "eth0")).map(|s| s.state.clone()),
        Some(ItemStatus::Failed)
    );
}

#[tokio::test]
async fn cancelled_async_operations_are_recorded_as_failed() {
    let mock = Mock::new();
    mock.in_background(&key(Link, "eth0"));
    mock.in_background(&key(Svc, "ntp"));
    let mut current = graph([]);
    let intended = graph(link_with_address());
    let status = mock.reconcile(&mut current, &intended).await;
    let cancel = status.cancel.expect("cancel handle while ops run");
    assert_eq!(cancel.running(), 2);

    cancel.cancel();
    cancel.wait().await;
    assert_eq!(cancel.running(), 0);
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(status.errors.len(), 2, "{:?}", status.errors);
    for entry in &status.op_log {
        assert!(entry.cancelled, "{entry}");
        assert_eq!(entry.error.as_deref(), Some("cancelled: operation cancelled"));
    }
    let state = current.state(&key(Link, "eth0")).expect("state kept");
    assert_eq!((state.state.clone(), state.last_op), (ItemStatus::Failed, Some(Operation::Create)));
    assert!(status.pending.iter().any(|(k, _)| k == &key(Addr, "wan")));
    assert!(!status.async_ops_in_progress);
}

#[tokio::test]
async fn recreate_waits_for_dependents_deleted_asynchronously() {
    let mock = Mock::new();
    let stack = |value: &str| {
        graph([item(Link, "eth0").value(value).recreating(), item(Addr, "wan").dep(Link, "eth0")])
    };
    let mut current = graph([]);
    mock.reconcile(&mut current, &stack("v1")).await;
    mock.in_background(&key(Addr, "wan"));

    let status = mock.reconcile(&mut current, &stack("v2")).await;

    assert_eq!(steps(&status), vec![delete(Addr, "wan")]);
    assert!(status.deferred[0].1.contains("dependent addr/wan has a delete in progress"));
    assert!(status.pending[0].1.contains("waits for the delete"), "{:?}", status.pending);

    mock.release(&key(Addr, "wan"));
    mock.synchronous(&key(Addr, "wan"));
    status.ready_to_resume.expect("resume signal").wait().await;
    let status = mock.reconcile(&mut current, &stack("v2")).await;

    assert_eq!(
        steps(&status),
        vec![delete(Addr, "wan"), delete(Link, "eth0"), create(Link, "eth0"), create(Addr, "wan")]
    );
    assert_eq!(current.get(&key(Link, "eth0")).map(|l| l.value.as_str()), Some("v2"));
}

#[tokio::test]
async fn configurator_called_outside_a_reconciler_can_await_its_background_result() {
    let mock = Mock::new();
    mock.in_background(&key(Link, "eth0"));
    let ctx = OpContext::standalone();

    let call = routerd_graph::Configurator::create(&mock, &ctx, &item(Link, "eth0")).await;
    mock.release(&key(Link, "eth0"));

    assert!(call.is_ok());
    assert_eq!(ctx.background_result().await, Some(Ok(())));
}
