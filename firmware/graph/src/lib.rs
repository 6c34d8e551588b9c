//! Dependency graph and state reconciler with the semantics of EVE's reconciler (seed 003).
//!
//! The current and the intended state are each a [`Graph`] of items; an item declares the items
//! it depends on. [`plan`] computes, purely, the ordered operations that move the current state
//! to the intended one; [`Reconciler::reconcile`] executes them through [`Configurator`]s and
//! updates the current graph in place. Both share one ordering core:
//!
//! 1. deletes and modifies, dependents before what they depend on (a recreate deletes its
//!    dependents first);
//! 2. creates, dependencies before their dependents, once every dependency exists and satisfies
//!    its predicate; the rest stays pending.
//!
//! External items are observed facts that are never touched; their presence only decides
//! whether dependents can exist. A failed operation blocks only what depends on it, or, with
//! [`OnFailure::AbortRun`] ([`Reconciler::with_options`]), ends the run and leaves the rest
//! for the next one ([`Status::skipped`]). Operations may continue in the background
//! ([`OpContext::continue_in_background`]); a later reconcile finishes their transition.
//!
//! This crate knows nothing of Linux, netlink or routerd kinds: it is generic over [`Item`].
//! It spawns no task and keeps no state between calls besides the current-state graph.
//!
//! ```no_run
//! use std::fmt;
//!
//! use futures::future::BoxFuture;
//! use routerd_graph::{
//!     Configurator, Dependency, Graph, GraphError, Item, Key, KindRegistry, OpContext, OpError,
//!     Reconciler, Selection,
//! };
//!
//! #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
//! enum Kind {
//!     Link,
//!     Addr,
//! }
//!
//! impl fmt::Display for Kind {
//!     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
//!         f.write_str(if *self == Kind::Link { "link" } else { "addr" })
//!     }
//! }
//!
//! #[derive(Clone, Debug)]
//! struct Node {
//!     kind: Kind,
//!     name: String,
//!     /// Built once with the node: `deps` is asked for on every run.
//!     deps: Vec<Dependency<Node>>,
//! }
//!
//! impl Item for Node {
//!     type Kind = Kind;
//!
//!     fn key(&self) -> Key<Kind> {
//!         Key::new(self.kind, self.name.clone())
//!     }
//!
//!     fn deps(&self) -> &[Dependency<Self>] {
//!         &self.deps
//!     }
//!
//!     fn matches(&self, current: &Self) -> bool {
//!         self.key() == current.key()
//!     }
//! }
//!
//! struct Print;
//!
//! fn say(op: &str, node: &Node) -> Result<(), OpError> {
//!     println!("{op} {}", node.key());
//!     Ok(())
//! }
//!
//! impl Configurator<Node> for Print {
//!     fn create<'a>(&'a self, _: &'a OpContext, n: &'a Node) -> BoxFuture<'a, Result<(), OpError>> {
//!         Box::pin(async move { say("create", n) })
//!     }
//!
//!     fn modify<'a>(
//!         &'a self,
//!         _: &'a OpContext,
//!         _: &'a Node,
//!         n: &'a Node,
//!     ) -> BoxFuture<'a, Result<(), OpError>> {
//!         Box::pin(async move { say("modify", n) })
//!     }
//!
//!     fn delete<'a>(&'a self, _: &'a OpContext, n: &'a Node) -> BoxFuture<'a, Result<(), OpError>> {
//!         Box::pin(async move { say("delete", n) })
//!     }
//! }
//!
//! async fn apply() -> Result<(), GraphError> {
//!     let registry = KindRegistry::new().with(Kind::Link, Print).with(Kind::Addr, Print);
//!     let node = |kind, name: &str, on_link: Option<&str>| Node {
//!         kind,
//!         name: name.to_string(),
//!         deps: on_link
//!             .map(|link| Dependency::on(Key::new(Kind::Link, link), "needs its link"))
//!             .into_iter()
//!             .collect(),
//!     };
//!     let intended: Graph<Node> =
//!         [node(Kind::Addr, "wan", Some("eth0")), node(Kind::Link, "eth0", None)].into_iter().collect();
//!     let mut current = Graph::new();
//!     let reconciler = Reconciler::new(&registry);
//!     // Prints "create link/eth0" then "create addr/wan".
//!     let status = reconciler.reconcile(&mut current, &intended, Selection::All).await?;
//!     assert!(status.is_ok() && current.len() == 2);
//!     Ok(())
//! }
//! ```

mod background;
mod configurator;
pub mod dot;
mod error;
mod graph;
mod item;
mod plan;
mod reconciler;
mod sequencer;
mod state;

pub use background::{CancelHandle, CancelToken, DoneHandle, OpContext, ResumeSignal};
pub use configurator::{Configurator, KindRegistry, OpError, Registry};
pub use error::{GraphError, OperationError, ReconcileError};
pub use graph::Graph;
pub use item::{Dependency, Item, Key, MustSatisfy};
pub use plan::{Cascaded, Plan, PlannedOp, Reason, plan};
pub use reconciler::{OnFailure, OpLogEntry, ReconcileOptions, Reconciler, Status};
pub use state::{ItemState, ItemStatus, Operation, Selection};
