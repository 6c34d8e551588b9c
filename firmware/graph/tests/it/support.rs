//! Test item type, a recording mock configurator and ordering assertions.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::future::BoxFuture;
use routerd_graph::{
    Configurator, Dependency, Graph, Item, Key, OpContext, OpError, Operation, OperationError,
    Reconciler, Registry, Selection, Status,
};
use tokio::sync::Notify;

/// Kinds of test items, loosely modelled on network configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Link,
    Addr,
    Route,
    Svc,
    /// Kind without a configurator in [`Mock`].
    Orphan,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Link => "link",
            Kind::Addr => "addr",
            Kind::Route => "route",
            Kind::Svc => "svc",
            Kind::Orphan => "orphan",
        })
    }
}

/// A small item: a value compared by `matches`, plus dependencies.
#[derive(Clone, Debug)]
pub struct TestItem {
    pub kind: Kind,
    pub name: String,
    pub value: String,
    pub deps: Vec<Dependency<TestItem>>,
    pub external: bool,
    /// The mock reports `needs_recreate` when the value of such an item changes.
    pub recreate_on_change: bool,
}

impl Item for TestItem {
    type Kind = Kind;

    fn key(&self) -> Key<Kind> {
        Key::new(self.kind, self.name.clone())
    }

    fn deps(&self) -> &[Dependency<Self>] {
        &self.deps
    }

    fn is_external(&self) -> bool {
        self.external
    }

    fn matches(&self, current: &Self) -> bool {
        let keys = |item: &Self| item.deps.iter().map(|d| d.key.clone()).collect::<Vec<_>>();
        self.value == current.value && keys(self) == keys(current)
    }
}

/// An item of `kind` named `name` with value `v1` and no dependencies.
pub fn item(kind: Kind, name: &str) -> TestItem {
    TestItem {
        kind,
        name: name.to_string(),
        value: "v1".to_string(),
        deps: Vec::new(),
        external: false,
        recreate_on_change: false,
    }
}

impl TestItem {
    pub fn value(mut self, value: &str) -> Self {
        self.value = value.to_string();
        self
    }

    pub fn dep(self, kind: Kind, name: &str) -> Self {
        self.dep_with(Dependency::on(key(kind, name), format!("needs {kind}/{name}")))
    }

    pub fn dep_with(mut self, dep: Dependency<TestItem>) -> Self {
        self.deps.push(dep);
        self
    }

    pub fn external(mut self) -> Self {
        self.external = true;
        self
    }

    pub fn recreating(mut self) -> Self {
        self.recreate_on_change = true;
        self
    }
}

pub fn key(kind: Kind, name: &str) -> Key<Kind> {
    Key::new(kind, name)
}

pub fn graph(items: impl IntoIterator<Item = TestItem>) -> Graph<TestItem> {
    items.into_iter().collect()
}

/// One logged step: operation and `kind/name`.
pub type Step = (Operation, String);

pub fn create(kind: Kind, name: &str) -> Step {
    (Operation::Create, key(kind, name).to_string())
}

pub fn modify(kind: Kind, name: &str) -> Step {
    (Operation::Modify, key(kind, name).to_string())
}

pub fn delete(kind: Kind, name: &str) -> Step {
    (Operation::Delete, key(kind, name).to_string())
}

/// Panics unless `first` and `second` are both in `log`, `first` earlier.
pub fn assert_before(log: &[Step], first: Step, second: Step) {
    let at = |step: &Step| log.iter().position(|s| s == step);
    match (at(&first), at(&second)) {
        (Some(a), Some(b)) => assert!(a < b, "{first:?} must come before {second:?} in {log:?}"),
        _ => panic!("both {first:?} and {second:?} must be in {log:?}"),
    }
}

/// The `(operation, key)` steps of a status's operation log (finished and started).
pub fn steps(status: &Status<TestItem>) -> Vec<Step> {
    status.op_log.iter().map(|e| (e.operation, e.key.to_string())).collect()
}

/// Mock configurator for every kind but [`Kind::Orphan`]; records each call.
#[derive(Default)]
pub struct Mock {
    log: Mutex<Vec<Step>>,
    failing: Mutex<BTreeSet<Step>>,
    background: Mutex<BTreeSet<String>>,
    gates: Mutex<BTreeMap<String, Arc<Notify>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().expect("invariant: test mutex not poisoned")
}

impl Mock {
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls made so far.
    pub fn log(&self) -> Vec<Step> {
        lock(&self.log).clone()
    }

    pub fn clear_log(&self) {
        lock(&self.log).clear();
    }

    /// Makes `step` fail (synchronously, or when released if it runs in the background).
    pub fn fail(&self, step: Step) {
        lock(&self.failing).insert(step);
    }

    pub fn heal(&self, step: &Step) {
        lock(&self.failing).remove(step);
    }

    /// Makes every operation on `key` continue in the background until released.
    pub fn in_background(&self, key: &Key<Kind>) {
        lock(&self.background).insert(key.to_string());
    }

    pub fn synchronous(&self, key: &Key<Kind>) {
        lock(&self.background).remove(&key.to_string());
    }

    /// Lets the background operation on `key` finish (now or when it starts).
    pub fn release(&self, key: &Key<Kind>) {
        self.gate(&key.to_string()).notify_one();
    }

    /// Runs a full reconcile of `current` towards `intended`.
    pub async fn reconcile(
        &self,
        current: &mut Graph<TestItem>,
        intended: &Graph<TestItem>,
    ) -> Status<TestItem> {
        self.reconcile_selected(current, intended, Selection::All).await
    }

    pub async fn reconcile_selected(
        &self,
        current: &mut Graph<TestItem>,
        intended: &Graph<TestItem>,
        selection: Selection,
    ) -> Status<TestItem> {
        Reconciler::new(self)
            .reconcile(current, intended, selection)
            .await
            .expect("test graphs have no cycle")
    }

    fn gate(&self, key: &str) -> Arc<Notify> {
        Arc::clone(lock(&self.gates).entry(key.to_string()).or_default())
    }

    fn run(&self, ctx: &OpContext, op: Operation, item: &TestItem) -> Result<(), OpError> {
        let step = (op, item.key().to_string());
        lock(&self.log).push(step.clone());
        let fails = lock(&self.failing).contains(&step);
        if !lock(&self.background).contains(&step.1) {
            return outcome(fails, &step);
        }
        let done = ctx.continue_in_background();
        let token = done.cancel_token();
        let gate = self.gate(&step.1);
        tokio::spawn(async move {
            tokio::select! {
                () = gate.notified() => done.finish(outcome(fails, &step)),
                () = token.cancelled() => done.finish(Err(Box::new(OperationError::Cancelled))),
            }
        });
        Ok(())
    }
}

/// The result of `step`: the mock's rejection error when it `fails`.
fn outcome(fails: bool, step: &Step) -> Result<(), OpError> {
    if fails { Err(format!("{} {} rejected", step.0, step.1).into()) } else { Ok(()) }
}

impl Configurator<TestItem> for Mock {
    fn create<'a>(
        &'a self,
        ctx: &'a OpContext,
        item: &'a TestItem,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move { self.run(ctx, Operation::Create, item) })
    }

    fn modify<'a>(
        &'a self,
        ctx: &'a OpContext,
        _current: &'a TestItem,
        intended: &'a TestItem,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move { self.run(ctx, Operation::Modify, intended) })
    }

    fn delete<'a>(
        &'a self,
        ctx: &'a OpContext,
        item: &'a TestItem,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move { self.run(ctx, Operation::Delete, item) })
    }

    fn needs_recreate(&self, current: &TestItem, intended: &TestItem) -> bool {
        intended.recreate_on_change && current.value != intended.value
    }
}

impl Registry<TestItem> for Mock {
    fn configurator(&self, item: &TestItem) -> Option<&dyn Configurator<TestItem>> {
        (item.kind != Kind::Orphan).then_some(self as &dyn Configurator<TestItem>)
    }
}
