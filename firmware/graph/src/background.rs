//! Operations that continue in the background (EVE's `ContinueInBackground`).
//!
//! A configurator that needs long work calls [`OpContext::continue_in_background`], spawns its
//! own tokio task that eventually calls [`DoneHandle::finish`], and returns `Ok(())` at once. The
//! reconciler spawns nothing: it records the item as in progress, and a later reconcile reads
//! the delivered result from the [`Tracker`] stored in the current-state graph.
//!
//! ```text
//! configurator task ──finish(result)──▶ Tracker ──completions (watch)──▶ ResumeSignal::wait
//! CancelHandle::cancel ──▶ CancelToken (one per op) ──▶ task stops early, finish(Err)
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use tokio::sync::watch;

use crate::configurator::OpError;
use crate::error::{OperationError, error_chain};

/// Cooperative cancellation flag shared between the reconciler and a background task.
///
/// Shape: cheap to clone; all clones observe the same flag.
#[derive(Clone, Debug)]
pub struct CancelToken {
    flag: Arc<watch::Sender<bool>>,
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self { flag: Arc::new(watch::Sender::new(false)) }
    }

    /// Requests cancellation; every waiter of [`CancelToken::cancelled`] wakes up.
    pub fn cancel(&self) {
        self.flag.send_replace(true);
    }

    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        *self.flag.borrow()
    }

    /// Resolves once cancellation is requested (at once if it already was).
    pub async fn cancelled(&self) {
        let mut rx = self.flag.subscribe();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = rx.wait_for(|cancelled| *cancelled).await;
    }
}

impl Default for CancelToken {
    fn default() -> Self {
        Self::new()
    }
}

/// What a finished background operation delivered.
#[derive(Clone, Debug)]
pub(crate) struct Finished {
    pub(crate) started: SystemTime,
    pub(crate) ended: SystemTime,
    pub(crate) result: Result<(), String>,
    pub(crate) cancelled: bool,
}

#[derive(Debug)]
struct AsyncOp {
    started: SystemTime,
    token: CancelToken,
    finished: Option<Finished>,
}

#[derive(Debug, Default)]
struct TrackerState {
    next_id: u64,
    ops: BTreeMap<u64, AsyncOp>,
}

/// Registry of background operations, shared by a current-state graph and the tasks it started.
#[derive(Debug)]
pub(crate) struct Tracker {
    state: Mutex<TrackerState>,
    completions: watch::Sender<u64>,
}

impl Tracker {
    pub(crate) fn new() -> Self {
        Self { state: Mutex::new(TrackerState::default()), completions: watch::Sender::new(0) }
    }

    fn lock(&self) -> MutexGuard<'_, TrackerState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn register(&self, started: SystemTime, token: CancelToken) -> u64 {
        let mut state = self.lock();
        state.next_id += 1;
        let id = state.next_id;
        state.ops.insert(id, AsyncOp { started, token, finished: None });
        id
    }

    fn finish(&self, id: u64, result: Result<(), String>) {
        {
            let mut state = self.lock();
            let Some(op) = state.ops.get_mut(&id) else { return };
            if op.finished.is_some() {
                return;
            }
            let cancelled = op.token.is_cancelled();
            let result = match result {
                Err(error) if cancelled => Err(format!("cancelled: {error}")),
                other => other,
            };
            op.finished =
                Some(Finished { started: op.started, ended: SystemTime::now(), result, cancelled });
        }
        self.completions.send_modify(|count| *count += 1);
    }

    /// Removes and returns the result of operation `id` if it has finished.
    pub(crate) fn take_finished(&self, id: u64) -> Option<Finished> {
        let mut state = self.lock();
        let finished = state.ops.get(&id)?.finished.clone()?;
        state.ops.remove(&id);
        Some(finished)
    }

    /// Drops finished operations no item refers to any more.
    pub(crate) fn prune(&self, live: &BTreeSet<u64>) {
        self.lock().ops.retain(|id, op| op.finished.is_none() || live.contains(id));
    }

    /// Number of completions delivered so far.
    pub(crate) fn completions(&self) -> u64 {
        *self.completions.borrow()
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.completions.subscribe()
    }

    pub(crate) fn running(&self) -> usize {
        self.lock().ops.values().filter(|op| op.finished.is_none()).count()
    }

    pub(crate) fn cancel_all(&self) {
        for op in self.lock().ops.values().filter(|op| op.finished.is_none()) {
            op.token.cancel();
        }
    }

    pub(crate) async fn wait_idle(&self) {
        let mut rx = self.subscribe();
        // `self` owns the sender, so the channel stays open while we wait.
        let _ = rx.wait_for(|_| self.running() == 0).await;
    }
}

/// Context handed to every configurator call.
///
/// Lets the operation continue in the background and tells it when to stop early.
#[derive(Debug)]
pub struct OpContext {
    tracker: Arc<Tracker>,
    token: CancelToken,
    started: SystemTime,
    background: Mutex<Option<u64>>,
}

impl OpContext {
    pub(crate) fn new(tracker: Arc<Tracker>) -> Self {
        Self {
            tracker,
            token: CancelToken::new(),
            started: SystemTime::now(),
            background: Mutex::new(None),
        }
    }

    /// A context outside any reconciler, for calling configurators directly in tests.
    ///
    /// Use [`OpContext::background_result`] to await what a background task delivered.
    pub fn standalone() -> Self {
        Self::new(Arc::new(Tracker::new()))
    }

    /// Marks the operation as continuing in the background.
    ///
    /// Shape: the configurator spawns its own task that calls [`DoneHandle::finish`] exactly
    /// once, then returns `Ok(())`. Call this at most once per operation; a second call returns
    /// a handle to the same operation.
    /// Side effects: registers the operation with the graph's tracker.
    pub fn continue_in_background(&self) -> DoneHandle {
        let mut background = self.background.lock().unwrap_or_else(PoisonError::into_inner);
        let id = *background
            .get_or_insert_with(|| self.tracker.register(self.started, self.token.clone()));
        DoneHandle {
            tracker: Arc::clone(&self.tracker),
            id,
            token: self.token.clone(),
            done: false,
        }
    }

    /// The cancellation token of this operation; clone it into the background task.
    pub fn cancel_token(&self) -> CancelToken {
        self.token.clone()
    }

    /// Resolves once the reconciler's caller cancels this operation.
    ///
    /// Only background operations are ever cancelled ([`CancelHandle::cancel`]); a synchronous
    /// operation awaiting this waits forever.
    pub async fn cancelled(&self) {
        self.token.cancelled().await;
    }

    /// Identifier of the background operation, if the configurator called
    /// [`OpContext::continue_in_background`].
    pub(crate) fn background_id(&self) -> Option<u64> {
        *self.background.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for the background task and returns what it delivered; `None` when the operation
    /// did not continue in the background.
    ///
    /// Side effects: consumes the result, so a reconciler would not see it.
    pub async fn background_result(&self) -> Option<Result<(), String>> {
        let id = self.background_id()?;
        let mut rx = self.tracker.subscribe();
        loop {
            if let Some(finished) = self.tracker.take_finished(id) {
                return Some(finished.result);
            }
            if rx.changed().await.is_err() {
                return None;
            }
        }
    }
}

/// Handle a background task uses to deliver its result.
///
/// Dropping it without [`DoneHandle::finish`] records the operation as failed.
#[derive(Debug)]
pub struct DoneHandle {
    tracker: Arc<Tracker>,
    id: u64,
    token: CancelToken,
    done: bool,
}

impl DoneHandle {
    /// Delivers the result of the background operation.
    ///
    /// Side effects: wakes [`ResumeSignal::wait`]. An error delivered after cancellation is
    /// recorded as `cancelled: <error>`.
    pub fn finish(mut self, result: Result<(), OpError>) {
        self.done = true;
        self.tracker.finish(self.id, result.map_err(|error| error_chain(error.as_ref())));
    }

    /// The cancellation token of the operation this handle finishes.
    pub fn cancel_token(&self) -> CancelToken {
        self.token.clone()
    }
}

impl Drop for DoneHandle {
    fn drop(&mut self) {
        if !self.done {
            self.tracker.finish(self.id, Err(OperationError::DoneHandleDropped.to_string()));
        }
    }
}

/// Fires when some background operation has finished and a reconcile can resume.
///
/// Shape: returned in [`Status`](crate::Status) when operations are in progress; resuming means
/// calling `reconcile` again with the same current-state graph.
#[derive(Clone, Debug)]
pub struct ResumeSignal {
    rx: watch::Receiver<u64>,
    seen: u64,
}

impl ResumeSignal {
    pub(crate) fn new(tracker: &Tracker, seen: u64) -> Self {
        Self { rx: tracker.subscribe(), seen }
    }

    /// Whether an operation finished since the reconcile that returned this signal read results.
    pub fn is_ready(&self) -> bool {
        *self.rx.borrow() > self.seen
    }

    /// Resolves once an operation has finished since that reconcile read results.
    pub async fn wait(&mut self) {
        let seen = self.seen;
        let _ = self.rx.wait_for(|count| *count > seen).await;
    }
}

/// Cancels the background operations of a current-state graph and waits for them.
#[derive(Clone, Debug)]
pub struct CancelHandle {
    tracker: Arc<Tracker>,
}

impl CancelHandle {
    pub(crate) fn new(tracker: Arc<Tracker>) -> Self {
        Self { tracker }
    }

    /// Requests cancellation of every running background operation.
    ///
    /// Side effects: the operations' tokens fire; their results are recorded as failed by the
    /// next reconcile.
    pub fn cancel(&self) {
        self.tracker.cancel_all();
    }

    /// Resolves once no background operation is running.
    pub async fn wait(&self) {
        self.tracker.wait_idle().await;
    }

    /// Number of background operations that have not delivered a result.
    pub fn running(&self) -> usize {
        self.tracker.running()
    }
}
