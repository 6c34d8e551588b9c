//! `OnFailure::AbortRun`: the first failure ends the run, what would still have run is
//! reported `skipped` in order, and a rerun finishes exactly that; `BlockDependents` (the
//! default) goes on around the failure.

use std::collections::BTreeSet;
use std::sync::Mutex;

use futures::future::BoxFuture;
use routerd_graph::{
    Configurator, Dependency, Graph, Item, ItemState, ItemStatus, Key, OnFailure, OpContext,
    OpError, Operation, ReconcileOptions, Reconciler, Registry, Selection, Status,
};

use crate::support::{
    Kind::{self, *},
    Mock, Step, TestItem, create, delete, graph, item, key, modify, steps,
};

const ABORT: ReconcileOptions = ReconcileOptions { on_failure: OnFailure::AbortRun };
const BLOCK: ReconcileOptions = ReconcileOptions { on_failure: OnFailure::BlockDependents };

/// A full reconcile through `registry` with `options`.
async fn run(
    registry: &dyn Registry<TestItem>,
    options: ReconcileOptions,
    current: &mut Graph<TestItem>,
    intended: &Graph<TestItem>,
) -> Status<TestItem> {
    Reconciler::with_options(registry, options)
        .reconcile(current, intended, Selection::All)
        .await
        .expect("test graphs have no cycle")
}

/// The skipped operations as steps.
fn skipped(status: &Status<TestItem>) -> Vec<Step> {
    status.skipped.iter().map(|(key, op, _)| (*op, key.to_string())).collect()
}

/// The keys of a report list.
fn keys_of<T>(list: &[(Key<Kind>, T)]) -> Vec<Key<Kind>> {
    list.iter().map(|(key, _)| key.clone()).collect()
}

fn keys(current: &Graph<TestItem>) -> Vec<Key<Kind>> {
    current.keys().cloned().collect()
}

/// Five independent links, created l1 … l5, and a service on l3 and one on l5 (created after
/// every link: services come later in key order).
fn links() -> Graph<TestItem> {
    graph([
        item(Link, "l1"),
        item(Link, "l2"),
        item(Link, "l3"),
        item(Link, "l4"),
        item(Link, "l5"),
        item(Svc, "on-l3").dep(Link, "l3"),
        item(Svc, "on-l5").dep(Link, "l5"),
    ])
}

#[tokio::test]
async fn abort_run_stops_at_the_failure_and_skips_the_rest_in_order() {
    let mock = Mock::new();
    mock.fail(create(Link, "l3"));
    let mut current = graph([]);

    let status = run(&mock, ABORT, &mut current, &links()).await;

    assert_eq!(mock.log(), vec![create(Link, "l1"), create(Link, "l2"), create(Link, "l3")]);
    assert_eq!(
        skipped(&status),
        vec![create(Link, "l4"), create(Link, "l5"), create(Svc, "on-l5")],
        "the dependent of a skipped create is skipped too"
    );
    for (_, _, reason) in &status.skipped {
        assert_eq!(reason, "not run: create link/l3 failed first");
    }
    assert_eq!(status.errors, vec![(key(Link, "l3"), "create: create link/l3 rejected".into())]);
    // What the failure blocks is pending as usual, and only that.
    assert_eq!(keys_of(&status.pending), vec![key(Svc, "on-l3")]);
    assert!(status.pending[0].1.contains("link/l3 failed"), "{:?}", status.pending);
    assert!(status.deferred.is_empty(), "{:?}", status.deferred);
    assert_eq!(keys(&current), vec![key(Link, "l1"), key(Link, "l2")]);
    assert_eq!(current.state(&key(Link, "l3")).map(|s| s.state.clone()), Some(ItemStatus::Failed));
    let pending = current.state(&key(Svc, "on-l3")).map(|s| s.state.clone());
    assert!(matches!(pending, Some(ItemStatus::Pending { .. })), "{pending:?}");
    for name in ["l4", "l5"] {
        assert!(current.state(&key(Link, name)).is_none(), "{name} untouched");
    }
    assert!(current.state(&key(Svc, "on-l5")).is_none(), "on-l5 untouched");
}

#[tokio::test]
async fn block_dependents_goes_on_around_the_same_failure() {
    let mock = Mock::new();
    mock.fail(create(Link, "l3"));
    let mut current = graph([]);

    let status = run(&mock, BLOCK, &mut current, &links()).await;
    let mut by_default = graph([]);
    let default = mock.reconcile(&mut by_default, &links()).await;

    let ran = vec![
        create(Link, "l1"),
        create(Link, "l2"),
        create(Link, "l3"),
        create(Link, "l4"),
        create(Link, "l5"),
        create(Svc, "on-l5"),
    ];
    assert_eq!(steps(&status), ran);
    assert_eq!(steps(&default), ran, "Reconciler::new blocks dependents");
    assert!(status.skipped.is_empty() && default.skipped.is_empty());
    assert_eq!(keys_of(&status.pending), vec![key(Svc, "on-l3")]);
    assert_eq!(current.len(), 5);
    assert!(current.contains(&key(Link, "l4")) && current.contains(&key(Svc, "on-l5")));
    assert_eq!(Reconciler::new(&mock).options(), ReconcileOptions::default());
    assert_eq!(ReconcileOptions::default(), BLOCK);
}

/// Routes go to a configurator taking batches of up to `limit` creates, which records each
/// batch; every other kind to a plain [`Mock`].
struct Batching {
    others: Mock,
    limit: usize,
    batches: Mutex<Vec<Vec<String>>>,
    failing: BTreeSet<String>,
}

impl Batching {
    fn new(limit: usize, failing: &[&str]) -> Self {
        let failing = failing.iter().map(|name| key(Route, name).to_string()).collect();
        Self { others: Mock::new(), limit, batches: Mutex::default(), failing }
    }

    fn batches(&self) -> Vec<Vec<String>> {
        self.batches.lock().expect("test mutex").clone()
    }

    fn outcome(&self, item: &TestItem) -> Result<(), OpError> {
        let key = item.key().to_string();
        match self.failing.contains(&key) {
            true => Err(format!("create {key} rejected").into()),
            false => Ok(()),
        }
    }
}

impl Configurator<TestItem> for Batching {
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
}

impl Registry<TestItem> for Batching {
    fn configurator(&self, item: &TestItem) -> Option<&dyn Configurator<TestItem>> {
        match item.kind {
            Route => Some(self),
            _ => self.others.configurator(item),
        }
    }
}

/// A link, six routes over it (created in batches) and a service created after them.
fn routes() -> Graph<TestItem> {
    let route = |name: &str| item(Route, name).dep(Link, "eth0");
    graph([
        item(Link, "eth0"),
        route("r1"),
        route("r2"),
        route("r3"),
        route("r4"),
        route("r5"),
        route("r6"),
        item(Svc, "after"),
    ])
}

#[tokio::test]
async fn a_failure_in_a_batch_ends_the_run_after_that_batch() {
    let batching = Batching::new(3, &["r2"]);
    let mut current = graph([]);

    let status = run(&batching, ABORT, &mut current, &routes()).await;

    assert_eq!(batching.batches(), vec![vec!["route/r1", "route/r2", "route/r3"]]);
    assert_eq!(batching.others.log(), vec![create(Link, "eth0")]);
    assert_eq!(
        skipped(&status),
        vec![create(Route, "r4"), create(Route, "r5"), create(Route, "r6"), create(Svc, "after")]
    );
    assert!(
        status.skipped.iter().all(|(_, _, why)| why == "not run: create route/r2 failed first")
    );
    assert_eq!(status.errors, vec![(key(Route, "r2"), "create: create route/r2 rejected".into())]);
    // The rest of the batch ran and is kept.
    assert_eq!(keys(&current), vec![key(Link, "eth0"), key(Route, "r1"), key(Route, "r3")]);
    assert!(status.pending.is_empty() && status.deferred.is_empty());

    // Blocking dependents, the same failure lets the other batches run.
    let batching = Batching::new(3, &["r2"]);
    let mut current = graph([]);
    let status = run(&batching, BLOCK, &mut current, &routes()).await;
    assert_eq!(batching.batches().len(), 2, "{:?}", batching.batches());
    assert!(status.skipped.is_empty());
    assert_eq!(current.len(), 7);
}

/// A zone whose records go with it, an address no longer intended, and a service that must be
/// recreated (its value changes); the intended state adds a link and an address on it.
async fn with_a_zone(mock: &Mock) -> (Graph<TestItem>, Graph<TestItem>) {
    let goes_with = || Dependency::on(key(Svc, "zone"), "goes with its zone").cascade();
    let record = |name: &str| item(Route, name).dep_with(goes_with());
    let recreated = |value: &str| item(Svc, "zz").value(value).recreating();
    let before =
        graph([item(Addr, "old"), item(Svc, "zone"), record("r1"), record("r2"), recreated("v1")]);
    let mut current = graph([]);
    let status = mock.reconcile(&mut current, &before).await;
    assert!(status.is_ok() && current.len() == 5, "{:?}", status.errors);
    mock.clear_log();
    let intended = graph([recreated("v2"), item(Link, "eth0"), item(Addr, "a").dep(Link, "eth0")]);
    (current, intended)
}

#[tokio::test]
async fn a_failed_delete_in_stage_one_skips_the_creates_of_stage_two() {
    let mock = Mock::new();
    let (mut current, intended) = with_a_zone(&mock).await;
    mock.fail(delete(Svc, "zone"));

    let status = run(&mock, ABORT, &mut current, &intended).await;

    assert_eq!(mock.log(), vec![delete(Addr, "old"), delete(Svc, "zone")]);
    assert_eq!(
        skipped(&status),
        vec![delete(Svc, "zz"), create(Link, "eth0"), create(Addr, "a"), create(Svc, "zz"),]
    );
    assert!(
        status.skipped.iter().all(|(_, _, why)| why == "not run: delete svc/zone failed first")
    );
    // The records wait for their zone as without the abort; the recreated service is only
    // skipped (its create, behind its skipped delete, is not also pending).
    assert_eq!(keys_of(&status.deferred), vec![key(Route, "r1"), key(Route, "r2")]);
    assert_eq!(status.deferred[0].1, "goes with svc/zone, which failed: delete svc/zone rejected");
    assert!(status.pending.is_empty() && status.cascaded.is_empty(), "{:?}", status.pending);
    // The successful delete before the failure is kept; nothing after it happened.
    assert_eq!(
        keys(&current),
        vec![key(Route, "r1"), key(Route, "r2"), key(Svc, "zone"), key(Svc, "zz")]
    );
    let zone = current.state(&key(Svc, "zone")).expect("zone kept");
    assert_eq!((zone.state.clone(), zone.last_op), (ItemStatus::Failed, Some(Operation::Delete)));
    assert_eq!(current.get(&key(Svc, "zz")).map(|s| s.value.as_str()), Some("v1"));
    assert_eq!(current.state(&key(Svc, "zz")).and_then(|s| s.last_op), Some(Operation::Create));
    assert!(
        current.state(&key(Link, "eth0")).is_none() && current.state(&key(Addr, "a")).is_none()
    );
}

#[tokio::test]
async fn an_item_with_a_skipped_operation_is_neither_pending_nor_cascaded() {
    let mock = Mock::new();
    let (mut current, mut intended) = with_a_zone(&mock).await;
    // A service on the zone that stays intended: deleted before the zone, then pending.
    current.put(item(Svc, "on-zone").dep(Svc, "zone"));
    intended.put(item(Svc, "on-zone").dep(Svc, "zone"));
    let mut blocking = current.clone();
    mock.fail(delete(Addr, "old"));

    let status = run(&mock, ABORT, &mut current, &intended).await;
    let went_on = run(&mock, BLOCK, &mut blocking, &intended).await;

    assert_eq!(status.op_log.len(), 1, "only the failed delete ran");
    assert_eq!(&skipped(&status)[..2], &[delete(Svc, "on-zone"), delete(Svc, "zone")]);
    assert!(status.pending.is_empty(), "{:?}", status.pending);
    assert!(status.deferred.is_empty(), "{:?}", status.deferred);
    assert!(status.cascaded.is_empty(), "the zone was not deleted: {:?}", status.cascaded);
    assert_eq!(current.len(), 6, "nothing but the failure recorded");
    assert!(current.contains(&key(Route, "r1")) && current.contains(&key(Svc, "on-zone")));
    // Going on, the same run deletes the service, leaves it pending and removes the records.
    assert_eq!(keys_of(&went_on.pending), vec![key(Svc, "on-zone")]);
    assert_eq!(went_on.cascaded.len(), 2);
}

#[tokio::test]
async fn a_rerun_after_healing_finishes_exactly_the_skipped_work() {
    let mock = Mock::new();
    let (mut current, intended) = with_a_zone(&mock).await;
    mock.fail(delete(Svc, "zone"));
    let aborted = run(&mock, ABORT, &mut current, &intended).await;
    let failed = delete(Svc, "zone");
    assert!(!aborted.skipped.is_empty());

    mock.heal(&failed);
    mock.clear_log();
    let status = run(&mock, ABORT, &mut current, &intended).await;

    let expected: Vec<Step> = std::iter::once(failed).chain(skipped(&aborted)).collect();
    assert_eq!(mock.log(), expected, "the failed operation, then what was skipped");
    assert!(status.is_ok() && status.skipped.is_empty() && status.pending.is_empty());
    let records = vec![(key(Route, "r1"), key(Svc, "zone")), (key(Route, "r2"), key(Svc, "zone"))];
    assert_eq!(status.cascaded, records);
    assert_eq!(keys(&current), intended.keys().cloned().collect::<Vec<_>>());
    let plan = Reconciler::new(&mock).plan(&current, &intended, Selection::All).expect("acyclic");
    assert!(plan.is_empty(), "{plan}");
}

#[tokio::test]
async fn a_rerun_still_recreates_a_dependent_of_a_modified_external_item() {
    let mock = Mock::new();
    let uplink = |value: &str| item(Link, "up").value(value).external();
    let bound = Dependency::on(key(Link, "up"), "bound to the uplink").recreate_when_modified();
    let tunnel = item(Svc, "tun").dep_with(bound);
    // A second external item, modified too, that no skipped operation is for.
    let other = |value: &str| item(Link, "other").value(value).external();
    let mut current = graph([uplink("v1"), other("v1")]);
    let before = graph([uplink("v1"), other("v1"), item(Addr, "old"), tunnel.clone()]);
    mock.reconcile(&mut current, &before).await;
    mock.clear_log();
    current.put(uplink("v2"));
    current.put(other("v2"));
    mock.fail(delete(Addr, "old"));
    let intended = graph([uplink("v2"), other("v2"), tunnel]);

    let aborted = run(&mock, ABORT, &mut current, &intended).await;

    assert_eq!(mock.log(), vec![delete(Addr, "old")]);
    assert_eq!(skipped(&aborted), vec![delete(Svc, "tun"), create(Svc, "tun")]);
    let up = current.state(&key(Link, "up")).expect("external item has a state");
    assert!(up.externally_modified, "kept for the skipped recreate");
    let other = current.state(&key(Link, "other")).expect("external item has a state");
    assert!(!other.externally_modified, "settled as any run settles it");

    mock.heal(&delete(Addr, "old"));
    mock.clear_log();
    let status = run(&mock, ABORT, &mut current, &intended).await;

    assert_eq!(mock.log(), vec![delete(Addr, "old"), delete(Svc, "tun"), create(Svc, "tun")]);
    assert!(status.is_ok());
    let up = current.state(&key(Link, "up")).expect("external item has a state");
    assert!(!up.externally_modified, "cleared once the run went through");
}

#[tokio::test]
async fn background_operations_started_before_the_failure_go_on() {
    let mock = Mock::new();
    mock.in_background(&key(Link, "l1"));
    mock.fail(create(Link, "l2"));
    let intended = graph([item(Link, "l1"), item(Link, "l2"), item(Link, "l3")]);
    let mut current = graph([]);

    let status = run(&mock, ABORT, &mut current, &intended).await;

    assert_eq!(mock.log(), vec![create(Link, "l1"), create(Link, "l2")]);
    assert_eq!(skipped(&status), vec![create(Link, "l3")]);
    assert!(status.async_ops_in_progress);
    let running = ItemStatus::InProgress { op: Operation::Create };
    assert_eq!(current.state(&key(Link, "l1")).map(|s| s.state.clone()), Some(running));
    let mut resume = status.ready_to_resume.expect("l1 runs in the background");

    mock.release(&key(Link, "l1"));
    resume.wait().await;
    mock.heal(&create(Link, "l2"));
    mock.clear_log();
    let status = run(&mock, ABORT, &mut current, &intended).await;

    assert_eq!(mock.log(), vec![create(Link, "l2"), create(Link, "l3")]);
    assert_eq!(steps(&status)[0], create(Link, "l1"), "the background result is read first");
    assert!(status.is_ok() && !status.async_ops_in_progress);
    assert_eq!(current.len(), 3);
}

/// Everything a run leaves behind that the policy could change.
fn outcome(status: &Status<TestItem>, current: &Graph<TestItem>) -> String {
    let items: Vec<(String, String)> =
        current.items().map(|i| (i.key().to_string(), i.value.clone())).collect();
    let states: Vec<(String, ItemState)> =
        current.states().map(|(k, s)| (k.to_string(), s.clone())).collect();
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        steps(status),
        status.errors,
        status.pending,
        status.deferred,
        status.auto_deleted,
        status.cascaded,
        status.skipped,
        items,
        states,
    )
}

#[tokio::test]
async fn without_a_failure_abort_run_changes_nothing() {
    // Deletes, a cascade, a modify, a recreate, creates and a pending item.
    let reference = Mock::new();
    let (mut start, mut intended) = with_a_zone(&reference).await;
    start.put(item(Link, "m"));
    intended.put(item(Link, "m").value("v2"));
    intended.put(item(Addr, "stuck").dep(Link, "missing"));
    let mut outcomes = Vec::new();
    for options in [ABORT, BLOCK] {
        let mock = Mock::new();
        let mut current = start.clone();
        let status = run(&mock, options, &mut current, &intended).await;
        assert_eq!(mock.log(), steps(&status));
        outcomes.push(outcome(&status, &current));
    }
    assert_eq!(outcomes[0], outcomes[1]);
    let mock = Mock::new();
    let mut current = start.clone();
    let status = run(&mock, ABORT, &mut current, &intended).await;
    assert!(status.skipped.is_empty() && status.is_ok());
    let log = mock.log();
    for step in [delete(Addr, "old"), modify(Link, "m"), delete(Svc, "zz"), create(Svc, "zz")] {
        assert!(log.contains(&step), "{step:?} ran: {log:?}");
    }
    assert_eq!(status.cascaded.len(), 2, "the records went with their zone");
    assert_eq!(keys_of(&status.pending), vec![key(Addr, "stuck")]);

    // Batches, with no failure: the same batches, the same outcome.
    let mut batch_outcomes = Vec::new();
    for options in [ABORT, BLOCK] {
        let batching = Batching::new(3, &[]);
        let mut current = graph([]);
        let status = run(&batching, options, &mut current, &routes()).await;
        batch_outcomes.push((batching.batches(), outcome(&status, &current)));
    }
    assert_eq!(batch_outcomes[0], batch_outcomes[1]);
    assert_eq!(batch_outcomes[0].0.len(), 2, "{:?}", batch_outcomes[0].0);
}
