//! `cascade` dependencies: a dependent no longer intended goes with the item it requires when
//! that item is deleted for good (a DNS record with its zone), with no Delete of its own.

use std::sync::Mutex;

use futures::future::BoxFuture;
use routerd_graph::{
    Configurator, Dependency, Graph, Item, Key, OpContext, OpError, Operation, Reconciler,
    Registry, Selection, Status,
};

use crate::support::{
    Kind::{self, *},
    Mock, TestItem, assert_before, create, delete, graph, item, key, steps,
};

/// The zone the records go with.
fn zone() -> TestItem {
    item(Svc, "zone")
}

fn goes_with(kind: Kind, name: &str) -> Dependency<TestItem> {
    Dependency::on(key(kind, name), "goes with its zone").cascade()
}

/// A record of the zone: it goes with it.
fn record(name: &str) -> TestItem {
    item(Route, name).dep_with(goes_with(Svc, "zone"))
}

fn records() -> Vec<TestItem> {
    vec![record("r1"), record("r2"), record("r3")]
}

/// `(record, zone)` pairs as the reports list them.
fn went_with(names: &[&str], with: Key<Kind>) -> Vec<(Key<Kind>, Key<Kind>)> {
    names.iter().map(|name| (key(Route, name), with.clone())).collect()
}

/// A current graph holding the zone and `items`, created by a reconcile.
async fn created(mock: &Mock, items: Vec<TestItem>) -> Graph<TestItem> {
    let mut current = graph([]);
    let status = mock.reconcile(&mut current, &graph(items)).await;
    assert!(status.is_ok() && status.pending.is_empty(), "{:?}", status.pending);
    mock.clear_log();
    current
}

fn with_zone(others: Vec<TestItem>) -> Vec<TestItem> {
    std::iter::once(zone()).chain(others).collect()
}

#[tokio::test]
async fn removing_a_zone_deletes_only_the_zone_and_its_orphan_records_go_with_it() {
    let mock = Mock::new();
    let mut current = created(&mock, with_zone(records())).await;
    let intended = graph([item(Link, "eth0")]);

    let plan = Reconciler::new(&mock).plan(&current, &intended, Selection::All).expect("acyclic");
    let status = mock.reconcile(&mut current, &intended).await;

    let zone_key = key(Svc, "zone");
    assert_eq!(
        plan.steps(),
        vec![(Operation::Delete, zone_key.clone()), (Operation::Create, key(Link, "eth0"))]
    );
    assert_eq!(plan.cascaded, went_with(&["r1", "r2", "r3"], zone_key.clone()));
    let shown = plan.to_string();
    assert!(shown.contains("     cascaded route/r1 with svc/zone\n"), "{shown}");
    // A drawing shows them going with the zone.
    let summary = plan.summary();
    assert_eq!(summary.get(&key(Route, "r1")), Some(&Operation::Delete));
    assert_eq!(summary.get(&zone_key), Some(&Operation::Delete));
    assert!(plan.deferred.is_empty() && plan.pending.is_empty() && plan.auto_deleted.is_empty());

    assert_eq!(mock.log(), vec![delete(Svc, "zone"), create(Link, "eth0")]);
    assert_eq!(status.cascaded, plan.cascaded);
    assert!(status.is_ok() && status.deferred.is_empty() && status.auto_deleted.is_empty());
    assert_eq!(current.keys().cloned().collect::<Vec<_>>(), vec![key(Link, "eth0")]);
    for name in ["r1", "r2", "r3"] {
        assert!(current.state(&key(Route, name)).is_none(), "{name}: no state left");
    }
    let again = mock.reconcile(&mut current, &intended).await;
    assert!(steps(&again).is_empty() && again.cascaded.is_empty());
}

#[tokio::test]
async fn a_failed_zone_delete_keeps_its_records_and_defers_them() {
    let mock = Mock::new();
    let mut current = created(&mock, with_zone(records())).await;
    mock.fail(delete(Svc, "zone"));

    let status = mock.reconcile(&mut current, &graph([])).await;

    assert_eq!(mock.log(), vec![delete(Svc, "zone")]);
    assert!(status.cascaded.is_empty(), "{:?}", status.cascaded);
    assert_eq!(current.len(), 4, "the zone and its records stay");
    let deferred: Vec<_> = status.deferred.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(deferred, vec![key(Route, "r1"), key(Route, "r2"), key(Route, "r3")]);
    for (_, why) in &status.deferred {
        assert_eq!(why, "goes with svc/zone, which failed: delete svc/zone rejected");
    }
    for name in ["r1", "r2", "r3"] {
        let state = current.state(&key(Route, name)).expect("record kept with its state");
        assert!(state.last_error.is_none() && state.is_usable(), "{name} untouched: {state:?}");
    }

    mock.heal(&delete(Svc, "zone"));
    mock.clear_log();
    let status = mock.reconcile(&mut current, &graph([])).await;

    assert_eq!(mock.log(), vec![delete(Svc, "zone")]);
    assert_eq!(status.cascaded, went_with(&["r1", "r2", "r3"], key(Svc, "zone")));
    assert!(current.is_empty());
}

#[tokio::test]
async fn a_zone_delete_in_the_background_keeps_its_records_in_the_run() {
    let mock = Mock::new();
    let mut current = created(&mock, with_zone(records())).await;
    mock.in_background(&key(Svc, "zone"));

    let status = mock.reconcile(&mut current, &graph([])).await;

    assert_eq!(mock.log(), vec![delete(Svc, "zone")]);
    assert!(status.cascaded.is_empty());
    assert_eq!(current.len(), 4);
    assert_eq!(status.deferred.len(), 3);
    assert_eq!(status.deferred[0].1, "goes with svc/zone, which has a delete in progress");
    let cancel = status.cancel.expect("the zone's delete runs");
    cancel.cancel();
    cancel.wait().await;
}

#[tokio::test]
async fn a_recreated_zone_deletes_its_records_first_as_without_cascade() {
    let mock = Mock::new();
    let recreating_zone = |value: &str| zone().value(value).recreating();
    let mut current =
        created(&mock, std::iter::once(recreating_zone("v1")).chain(records()).collect()).await;
    // r1 stays declared, r2 and r3 are orphans: none of them goes with a recreated zone.
    let intended = graph([recreating_zone("v2"), record("r1")]);

    let plan = Reconciler::new(&mock).plan(&current, &intended, Selection::All).expect("acyclic");
    let status = mock.reconcile(&mut current, &intended).await;

    let log = steps(&status);
    assert_eq!(
        log,
        vec![
            delete(Route, "r1"),
            delete(Route, "r2"),
            delete(Route, "r3"),
            delete(Svc, "zone"),
            create(Svc, "zone"),
            create(Route, "r1"),
        ]
    );
    assert_eq!(plan.steps().len(), log.len());
    assert!(plan.cascaded.is_empty() && status.cascaded.is_empty());
    assert_eq!(current.len(), 2);
}

#[tokio::test]
async fn a_zone_recreated_for_its_own_dependency_takes_no_record_along() {
    let mock = Mock::new();
    let bound = Dependency::on(key(Link, "srv"), "zone on its server").recreate_when_modified();
    let served = |value: &str| vec![item(Link, "srv").value(value), zone().dep_with(bound.clone())];
    let mut current = created(&mock, served("v1").into_iter().chain(records()).collect()).await;

    let status = mock.reconcile(&mut current, &graph(served("v2"))).await;

    let log = steps(&status);
    for name in ["r1", "r2", "r3"] {
        assert_before(&log, delete(Route, name), delete(Svc, "zone"));
    }
    assert_before(&log, delete(Svc, "zone"), create(Svc, "zone"));
    assert_eq!(log.len(), 6, "{log:?}");
    assert!(status.cascaded.is_empty());
    assert_eq!(current.len(), 2);
}

#[tokio::test]
async fn plain_dependents_are_deleted_before_the_zone_and_block_it() {
    let mock = Mock::new();
    // The monitor needs the zone; the alias needs record r1 (which goes with the zone).
    let monitor = item(Addr, "monitor").dep(Svc, "zone");
    let alias = item(Addr, "alias").dep(Route, "r1");
    let mut current = created(&mock, with_zone(vec![record("r1"), monitor, alias])).await;

    let status = mock.reconcile(&mut current, &graph([])).await;

    let log = mock.log();
    assert_eq!(log.len(), 3, "{log:?}");
    assert_before(&log, delete(Addr, "monitor"), delete(Svc, "zone"));
    assert_before(&log, delete(Addr, "alias"), delete(Svc, "zone"));
    assert_eq!(status.cascaded, went_with(&["r1"], key(Svc, "zone")));
    assert!(current.is_empty());
}

#[tokio::test]
async fn a_failed_plain_dependent_of_a_record_blocks_the_zone() {
    let mock = Mock::new();
    let alias = item(Addr, "alias").dep(Route, "r1");
    let mut current = created(&mock, with_zone(vec![record("r1"), record("r2"), alias])).await;
    mock.fail(delete(Addr, "alias"));

    let status = mock.reconcile(&mut current, &graph([])).await;

    assert_eq!(mock.log(), vec![delete(Addr, "alias")]);
    assert!(status.cascaded.is_empty());
    assert_eq!(current.len(), 4);
    let why =
        |k: &Key<Kind>| status.deferred.iter().find(|(d, _)| d == k).map(|(_, why)| why.clone());
    let zone_why = why(&key(Svc, "zone")).expect("zone deferred");
    assert!(zone_why.contains("dependent addr/alias failed"), "{zone_why}");
    let record_why = why(&key(Route, "r2")).expect("r2 deferred");
    assert!(record_why.starts_with("goes with svc/zone, which waits ("), "{record_why}");
}

#[tokio::test]
async fn a_plain_dependency_still_deletes_its_dependent_first() {
    let mock = Mock::new();
    let plain = |name: &str| item(Route, name).dep(Svc, "zone");
    let mut current = created(&mock, with_zone(vec![plain("r1"), plain("r2")])).await;
    mock.fail(delete(Route, "r2"));

    let status = mock.reconcile(&mut current, &graph([])).await;

    assert_eq!(mock.log(), vec![delete(Route, "r1"), delete(Route, "r2")]);
    assert!(status.cascaded.is_empty());
    let (deferred, why) = &status.deferred[0];
    assert_eq!(deferred, &key(Svc, "zone"));
    assert!(why.contains("dependent route/r2 failed"), "{why}");
    assert!(current.contains(&key(Svc, "zone")) && current.contains(&key(Route, "r2")));
}

#[tokio::test]
async fn an_intended_record_is_deleted_first_and_left_pending_when_its_zone_goes() {
    let mock = Mock::new();
    let mut current = created(&mock, with_zone(records())).await;
    // r1 is still declared; r2 and r3 are not.
    let intended = graph([record("r1")]);

    let plan = Reconciler::new(&mock).plan(&current, &intended, Selection::All).expect("acyclic");
    let status = mock.reconcile(&mut current, &intended).await;

    assert_eq!(mock.log(), vec![delete(Route, "r1"), delete(Svc, "zone")]);
    assert_eq!(status.cascaded, went_with(&["r2", "r3"], key(Svc, "zone")));
    assert_eq!(plan.cascaded, status.cascaded);
    let pending: Vec<_> = status.pending.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(pending, vec![key(Route, "r1")]);
    assert!(status.pending[0].1.contains("svc/zone is missing"), "{:?}", status.pending);
    assert!(current.is_empty());
}

#[tokio::test]
async fn records_go_with_a_zone_that_goes_with_its_server() {
    let mock = Mock::new();
    let on_server = Dependency::on(key(Link, "srv"), "zone on its server").cascade();
    let items = vec![item(Link, "srv"), zone().dep_with(on_server), record("r1"), record("r2")];
    let mut current = created(&mock, items).await;

    let plan = Reconciler::new(&mock).plan(&current, &graph([]), Selection::All).expect("acyclic");
    let status = mock.reconcile(&mut current, &graph([])).await;

    assert_eq!(plan.steps(), vec![(Operation::Delete, key(Link, "srv"))]);
    assert_eq!(mock.log(), vec![delete(Link, "srv")]);
    let mut expected = vec![(key(Svc, "zone"), key(Link, "srv"))];
    expected.extend(went_with(&["r1", "r2"], key(Svc, "zone")));
    let mut cascaded = status.cascaded.clone();
    cascaded.sort();
    expected.sort();
    assert_eq!(cascaded, expected);
    assert_eq!(plan.cascaded, status.cascaded);
    assert!(current.is_empty());
}

#[tokio::test]
async fn a_record_already_gone_with_an_external_item_is_auto_deleted() {
    let mock = Mock::new();
    let uplink = item(Link, "eth0").external();
    let flushed =
        Dependency::on(key(Link, "eth0"), "gone with the link").auto_deleted_by_external();
    let items = vec![uplink.clone(), record("r1").dep_with(flushed), record("r2")];
    let mut current = graph([uplink.clone()]);
    let status = mock.reconcile(&mut current, &graph(with_zone(items))).await;
    assert!(status.is_ok() && status.pending.is_empty(), "{:?}", status.pending);
    mock.clear_log();
    current.remove(&key(Link, "eth0"));

    let status = mock.reconcile(&mut current, &graph([uplink])).await;

    assert_eq!(mock.log(), vec![delete(Svc, "zone")]);
    assert_eq!(status.auto_deleted, vec![key(Route, "r1")]);
    assert_eq!(status.cascaded, went_with(&["r2"], key(Svc, "zone")));
    assert!(current.is_empty());
}

/// Every kind goes to a configurator that takes batches of `limit` changes and records each
/// call, one operation or a batch, as `operation kind/name` lists.
struct Batches {
    limit: usize,
    calls: Mutex<Vec<Vec<String>>>,
}

impl Batches {
    fn new(limit: usize) -> Self {
        Self { limit, calls: Mutex::default() }
    }

    fn calls(&self) -> Vec<Vec<String>> {
        self.calls.lock().expect("test mutex").clone()
    }

    fn record(&self, op: Operation, items: &[&TestItem]) {
        let names = items.iter().map(|i| format!("{op} {}", i.key())).collect();
        self.calls.lock().expect("test mutex").push(names);
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

impl Configurator<TestItem> for Batches {
    fn create<'a>(
        &'a self,
        _: &'a OpContext,
        item: &'a TestItem,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move {
            self.record(Operation::Create, &[item]);
            Ok(())
        })
    }

    fn modify<'a>(
        &'a self,
        _: &'a OpContext,
        _: &'a TestItem,
        item: &'a TestItem,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move {
            self.record(Operation::Modify, &[item]);
            Ok(())
        })
    }

    fn delete<'a>(
        &'a self,
        _: &'a OpContext,
        item: &'a TestItem,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move {
            self.record(Operation::Delete, &[item]);
            Ok(())
        })
    }

    fn change_batch_limit(&self) -> usize {
        self.limit
    }

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
            self.calls.lock().expect("test mutex").push(names);
            changes.iter().map(|_| Ok(())).collect()
        })
    }
}

impl Registry<TestItem> for Batches {
    fn configurator(&self, _: &TestItem) -> Option<&dyn Configurator<TestItem>> {
        Some(self)
    }
}

/// Two zones with records, an orphan with no edge, and an alias on a record of the first
/// zone (deleted before that zone): all of one configurator.
fn zones() -> Graph<TestItem> {
    let in_zone = |name: &str, zone: &str| item(Route, name).dep_with(goes_with(Svc, zone));
    graph([
        item(Svc, "z1"),
        item(Svc, "z2"),
        in_zone("z1.a", "z1"),
        in_zone("z1.b", "z1"),
        in_zone("z2.a", "z2"),
        item(Addr, "alias").dep(Route, "z1.a"),
        item(Addr, "gone"),
    ])
}

#[tokio::test]
async fn batched_deletes_take_the_same_course_as_one_at_a_time() {
    let mut sequential = zones();
    let one_at_a_time = Batches::new(1).reconcile(&mut sequential, &graph([])).await;
    let batches = Batches::new(8);
    let mut current = zones();

    let status = batches.reconcile(&mut current, &graph([])).await;

    assert_eq!(steps(&status), steps(&one_at_a_time), "same operations, same order");
    assert_eq!(status.cascaded, one_at_a_time.cascaded);
    let mut cascaded = status.cascaded.clone();
    cascaded.sort();
    let expected = vec![
        (key(Route, "z1.a"), key(Svc, "z1")),
        (key(Route, "z1.b"), key(Svc, "z1")),
        (key(Route, "z2.a"), key(Svc, "z2")),
    ];
    assert_eq!(cascaded, expected);
    assert!(status.is_ok() && status.deferred.is_empty(), "{:?}", status.deferred);
    assert!(current.is_empty() && sequential.is_empty());
    let calls = batches.calls();
    assert!(calls.iter().any(|c| c.len() > 1), "some deletes did run together: {calls:?}");
    let position = |name: &str| calls.iter().position(|c| c.iter().any(|n| n.ends_with(name)));
    assert!(position("addr/alias") < position("svc/z1"), "{calls:?}");
    let deleted: Vec<&String> = calls.iter().flatten().collect();
    assert_eq!(deleted.len(), 4, "alias, gone and the two zones: {calls:?}");
}
