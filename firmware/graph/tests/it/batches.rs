//! Creates, modifies and deletes of a configurator that takes batches
//! ([`Configurator::create_batch_limit`], [`Configurator::change_batch_limit`]): which
//! operations run together, and that the run's outcome is the same as one at a time.

use std::sync::Mutex;

use futures::future::BoxFuture;
use routerd_graph::{
    Configurator, Graph, Item, OpContext, OpError, Operation, Reconciler, Registry, Selection,
    Status,
};

use crate::support::{Kind::*, Mock, TestItem, create, graph, item, key, steps};

/// Routes go to a configurator that takes batches of `limit` creates and records each batch;
/// every other kind to a plain [`Mock`].
struct Batching {
    others: Mock,
    routes: Routes,
}

struct Routes {
    limit: usize,
    batches: Mutex<Vec<Vec<String>>>,
    failing: Vec<String>,
}

impl Batching {
    fn new(limit: usize) -> Self {
        let routes = Routes { limit, batches: Mutex::default(), failing: Vec::new() };
        Self { others: Mock::new(), routes }
    }

    fn failing(mut self, name: &str) -> Self {
        self.routes.failing.push(key(Route, name).to_string());
        self
    }

    /// The batches handed to `create_many`, as `kind/name` lists.
    fn batches(&self) -> Vec<Vec<String>> {
        self.routes.batches.lock().expect("test mutex").clone()
    }

    async fn reconcile(
        &self,
        current: &mut Graph<TestItem>,
        intended: &Graph<TestItem>,
    ) -> Status<TestItem> {
        Reconciler::new(self)
            .reconcile(current, intended, Selection::All)
            .await
            .expect("test graphs have no cycle")
    }
}

impl Routes {
    fn outcome(&self, item: &TestItem) -> Result<(), OpError> {
        let key = item.key().to_string();
        if self.failing.contains(&key) {
            Err(format!("create {key} rejected").into())
        } else {
            Ok(())
        }
    }
}

impl Configurator<TestItem> for Routes {
    fn create<'a>(
        &'a self,
        _: &'a OpContext,
        item: &'a TestItem,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move {
            self.batches.lock().expect("test mutex").push(vec![item.key().to_string()]);
            self.outcome(item)
        })
    }

    fn modify<'a>(
        &'a self,
        _: &'a OpContext,
        _: &'a TestItem,
        _: &'a TestItem,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async { Ok(()) })
    }

    fn delete<'a>(
        &'a self,
        _: &'a OpContext,
        _: &'a TestItem,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async { Ok(()) })
    }

    fn create_batch_limit(&self) -> usize {
        self.limit
    }

    fn create_many<'a>(
        &'a self,
        _: &'a OpContext,
        items: &'a [&'a TestItem],
    ) -> BoxFuture<'a, Vec<Result<(), OpError>>> {
        Box::pin(async move {
            let names = items.iter().map(|i| i.key().to_string()).collect();
            self.batches.lock().expect("test mutex").push(names);
            items.iter().map(|i| self.outcome(i)).collect()
        })
    }

    fn change_batch_limit(&self) -> usize {
        self.limit
    }

    /// Records `modify route/r1` or `delete route/r1` for each change.
    fn change_many<'a>(
        &'a self,
        _: &'a OpContext,
        changes: &'a [(&'a TestItem, Option<&'a TestItem>)],
    ) -> BoxFuture<'a, Vec<Result<(), OpError>>> {
        Box::pin(async move {
            let names = changes
                .iter()
                .map(|(current, intended)| {
                    let op = if intended.is_some() { "modify" } else { "delete" };
                    format!("{op} {}", current.key())
                })
                .collect();
            self.batches.lock().expect("test mutex").push(names);
            changes.iter().map(|_| Ok(())).collect()
        })
    }
}

impl Registry<TestItem> for Batching {
    fn configurator(&self, item: &TestItem) -> Option<&dyn Configurator<TestItem>> {
        match item.kind {
            Route => Some(&self.routes),
            _ => self.others.configurator(item),
        }
    }
}

fn route(name: &str) -> TestItem {
    item(Route, name).dep(Link, "eth0")
}

#[tokio::test]
async fn independent_creates_go_in_batches_of_at_most_the_limit_in_the_run_order() {
    let intended = graph([
        item(Link, "eth0"),
        route("r1"),
        route("r2"),
        route("r3"),
        route("r4"),
        route("r5"),
    ]);
    let mut sequential = graph([]);
    let one_at_a_time = Batching::new(1).reconcile(&mut sequential, &intended).await;
    let batching = Batching::new(3);
    let mut current = graph([]);

    let status = batching.reconcile(&mut current, &intended).await;

    assert_eq!(
        batching.batches(),
        vec![vec!["route/r1", "route/r2", "route/r3"], vec!["route/r4", "route/r5"],]
    );
    assert_eq!(steps(&status), steps(&one_at_a_time), "same operations, same order");
    assert!(status.is_ok());
    assert_all_present(&current, &intended);
}

#[tokio::test]
async fn a_create_never_shares_a_batch_with_one_it_depends_on() {
    // r2 needs r1 (a gateway behind it), r3 needs nothing but the link.
    let intended = graph([
        item(Link, "eth0"),
        route("r1"),
        route("r2").dep(Route, "r1"),
        route("r3"),
        route("r4").dep(Route, "r3"),
    ]);
    let batching = Batching::new(8);
    let mut current = graph([]);

    let status = batching.reconcile(&mut current, &intended).await;

    for batch in batching.batches() {
        for name in &batch {
            let item =
                intended.get(&key(Route, name.trim_start_matches("route/"))).expect("intended");
            for dep in item.deps() {
                assert!(
                    !batch.contains(&dep.key.to_string()),
                    "{name} ran with its dependency in {batch:?}"
                );
            }
        }
    }
    let created: usize = batching.batches().iter().map(Vec::len).sum();
    assert_eq!(created, 4, "every route created once");
    assert!(batching.batches().iter().any(|b| b.len() > 1), "some routes did run together");
    assert!(status.is_ok());
    assert_all_present(&current, &intended);
}

#[tokio::test]
async fn a_failure_in_a_batch_blocks_only_its_own_dependents() {
    let intended = graph([
        item(Link, "eth0"),
        route("r1"),
        route("r2"),
        route("r3"),
        item(Svc, "on-r1").dep(Route, "r1"),
        item(Svc, "on-r2").dep(Route, "r2"),
    ]);
    let batching = Batching::new(8).failing("r1");
    let mut current = graph([]);

    let status = batching.reconcile(&mut current, &intended).await;

    assert_eq!(batching.batches(), vec![vec!["route/r1", "route/r2", "route/r3"]]);
    assert_eq!(status.errors, vec![(key(Route, "r1"), "create: create route/r1 rejected".into())]);
    assert_eq!(status.pending.len(), 1);
    assert_eq!(status.pending[0].0, key(Svc, "on-r1"));
    assert!(status.pending[0].1.contains("route/r1 failed"), "{}", status.pending[0].1);
    assert!(steps(&status).contains(&create(Svc, "on-r2")));
    assert!(current.get(&key(Route, "r1")).is_none(), "a failed create leaves no item");
    assert!(current.get(&key(Route, "r2")).is_some());
    let failed = status.op_log.iter().find(|e| e.key == key(Route, "r1")).expect("logged");
    assert_eq!(failed.operation, Operation::Create);
    assert_eq!(failed.error.as_deref(), Some("create route/r1 rejected"));
}

#[tokio::test]
async fn a_batch_holds_the_creates_of_one_configurator_only() {
    // In the run's order the routes come between two addresses of another configurator.
    let intended = graph([
        item(Link, "eth0"),
        item(Addr, "a").dep(Link, "eth0"),
        route("r1"),
        route("r2"),
        item(Svc, "s1"),
        item(Svc, "s2"),
    ]);
    let batching = Batching::new(8);
    let mut current = graph([]);

    let status = batching.reconcile(&mut current, &intended).await;

    assert_eq!(batching.batches(), vec![vec!["route/r1", "route/r2"]]);
    let log = batching.others.log();
    for other in [create(Link, "eth0"), create(Addr, "a"), create(Svc, "s1"), create(Svc, "s2")] {
        assert!(log.contains(&other), "{other:?} created one at a time: {log:?}");
    }
    assert!(status.is_ok());
}

#[tokio::test]
async fn independent_modifies_and_deletes_go_in_batches_of_their_own_kind() {
    let mut current = graph([
        item(Link, "eth0"),
        route("r1").value("old"),
        route("r2").value("old"),
        route("r3").value("old"),
        route("gone1"),
        route("gone2"),
    ]);
    let intended = graph([
        item(Link, "eth0"),
        route("r1").value("new"),
        route("r2").value("new"),
        route("r3").value("new"),
    ]);
    let mut sequential = current.clone();
    let one_at_a_time = Batching::new(1).reconcile(&mut sequential, &intended).await;
    let batching = Batching::new(8);

    let status = batching.reconcile(&mut current, &intended).await;

    assert_eq!(
        batching.batches(),
        vec![
            vec!["delete route/gone1", "delete route/gone2"],
            vec!["modify route/r1", "modify route/r2", "modify route/r3"],
        ]
    );
    assert_eq!(steps(&status), steps(&one_at_a_time), "same operations, same order");
    assert!(status.is_ok());
    assert_eq!(current.get(&key(Route, "r2")).map(|r| r.value.clone()), Some("new".into()));
    assert!(current.get(&key(Route, "gone1")).is_none());
    assert_eq!(current.len(), intended.len());
}

#[tokio::test]
async fn a_delete_never_shares_a_batch_with_one_that_depends_on_it() {
    // gone2 runs over gone1 (its gateway): gone2 goes first, in a batch without gone1.
    let mut current = graph([
        item(Link, "eth0"),
        route("gone1"),
        route("gone2").dep(Route, "gone1"),
        route("gone3"),
    ]);
    let intended = graph([item(Link, "eth0")]);
    let batching = Batching::new(8);

    let status = batching.reconcile(&mut current, &intended).await;

    let batches = batching.batches();
    let position = |name: &str| batches.iter().position(|b| b.iter().any(|n| n.ends_with(name)));
    assert!(position("gone2") < position("gone1"), "{batches:?}");
    assert!(
        batches
            .iter()
            .all(|b| !(b.iter().any(|n| n.ends_with("gone1"))
                && b.iter().any(|n| n.ends_with("gone2")))),
        "{batches:?}"
    );
    assert!(status.is_ok());
    assert_eq!(current.len(), 1);
}

fn assert_all_present(current: &Graph<TestItem>, intended: &Graph<TestItem>) {
    for key in intended.keys() {
        assert!(current.contains(key), "{key} was not created");
    }
    assert_eq!(current.len(), intended.len());
}
