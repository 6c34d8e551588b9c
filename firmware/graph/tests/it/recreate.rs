//! Recreates: `needs_recreate` and `recreate_when_modified`.

use routerd_graph::{Dependency, Operation, Reason, Selection};

use crate::support::{Kind::*, Mock, TestItem, create, delete, graph, item, key, modify, steps};

fn stack(link_value: &str) -> Vec<TestItem> {
    vec![
        item(Link, "eth0").value(link_value).recreating(),
        item(Addr, "wan").dep(Link, "eth0"),
        item(Route, "default").dep(Addr, "wan"),
        item(Svc, "ntp"),
    ]
}

#[tokio::test]
async fn recreate_deletes_dependents_first_and_creates_them_after() {
    let mock = Mock::new();
    let mut current = graph([]);
    mock.reconcile(&mut current, &graph(stack("v1"))).await;
    let intended = graph(stack("v2"));

    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(
        steps(&status),
        vec![
            delete(Route, "default"),
            delete(Addr, "wan"),
            delete(Link, "eth0"),
            create(Link, "eth0"),
            create(Addr, "wan"),
            create(Route, "default"),
        ]
    );
    assert_eq!(current.get(&key(Link, "eth0")).map(|l| l.value.as_str()), Some("v2"));
}

#[tokio::test]
async fn recreate_is_explained_in_the_plan() {
    let mock = Mock::new();
    let mut current = graph([]);
    mock.reconcile(&mut current, &graph(stack("v1"))).await;
    let reconciler = routerd_graph::Reconciler::new(&mock);

    let plan = reconciler.plan(&current, &graph(stack("v2")), Selection::All).expect("no cycle");

    let link = &plan.ops[2];
    assert_eq!((link.op, link.reason.clone()), (Operation::Delete, Reason::NeedsRecreate));
    let dependency = "link/eth0".to_string();
    assert_eq!(plan.ops[1].reason, Reason::DependencyRecreated { dependency });
    assert_eq!(plan.ops[4].reason.as_str(), "DependencyRecreated");
    assert_eq!(plan.summary().get(&key(Link, "eth0")), Some(&Operation::Recreate));
    assert_eq!(plan.summary().get(&key(Svc, "ntp")), None);
}

#[tokio::test]
async fn recreate_when_modified_cascades_to_transitive_dependents() {
    let mock = Mock::new();
    let mut current = graph([]);
    let bound = Dependency::on(key(Link, "eth0"), "address is bound to the link");
    let addr = item(Addr, "wan").dep_with(bound.recreate_when_modified());
    let mut intended = graph([item(Link, "eth0"), addr, item(Route, "default").dep(Addr, "wan")]);
    mock.reconcile(&mut current, &intended).await;

    intended.put(item(Link, "eth0").value("v2"));
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(
        steps(&status),
        vec![
            delete(Route, "default"),
            delete(Addr, "wan"),
            modify(Link, "eth0"),
            create(Addr, "wan"),
            create(Route, "default"),
        ]
    );
    let log = &status.op_log;
    assert!(log.iter().all(|entry| entry.error.is_none() && !entry.in_progress));
}
