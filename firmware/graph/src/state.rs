//! Per-item reconciliation state kept in the current-state graph, and the small enums shared by
//! planning and reconciliation (operations, selections).
//!
//! Nothing here performs an operation; the reconciler writes these values, callers read them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// An operation on an item.
///
/// `Recreate` appears only in per-item summaries ([`Plan::summary`](crate::Plan::summary), DOT
/// exports): it executes as a Delete in the first stage and a Create in the second, and the
/// operation log and plan list those two halves separately.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    /// Create an intended item that does not exist.
    Create,
    /// Change an existing item in place into the intended one.
    Modify,
    /// Remove an existing item.
    Delete,
    /// Delete then create (summary only).
    Recreate,
}

impl Operation {
    /// Stable lowercase name (`create`, `modify`, `delete`, `recreate`).
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "create",
            Operation::Modify => "modify",
            Operation::Delete => "delete",
            Operation::Recreate => "recreate",
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an item stands with respect to reconciliation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum ItemStatus {
    /// The item exists as recorded in the current graph.
    Created,
    /// The item is intended but not created: a dependency is missing, unsatisfied, failed or
    /// still in progress. The item is absent from the current graph's items.
    Pending {
        /// The unsatisfied dependency, described.
        reason: String,
    },
    /// The last operation failed; see [`ItemState::last_op`] and [`ItemState::last_error`].
    /// After a failed Create the item is absent; after a failed Modify or Delete it is present
    /// with its previous value.
    Failed,
    /// An operation continues in the background; a later reconcile finishes the transition.
    InProgress {
        /// The operation running (Create, Modify or Delete).
        op: Operation,
    },
}

/// Reconciliation state of one key in the current-state graph.
///
/// Shape: exists for every item of the current graph, and also for keys without an item
/// (pending items, items whose Create failed). The intended graph's states are ignored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemState {
    /// Where the item stands.
    pub state: ItemStatus,
    /// The last operation the reconciler ran for the item, if any.
    pub last_op: Option<Operation>,
    /// The error of the last operation, kept until an operation on the item succeeds.
    pub last_error: Option<String>,
    /// Set by [`Graph::put`](crate::Graph::put) when an external item changes value; lets
    /// `recreate_when_modified` dependents be recreated. Cleared by the next reconcile.
    pub externally_modified: bool,
    /// Identifier of the background operation while `state` is `InProgress`.
    #[serde(skip)]
    pub(crate) async_op: Option<u64>,
}

impl ItemState {
    /// State of an item that exists and has had no operation from this reconciler.
    pub fn created() -> Self {
        Self {
            state: ItemStatus::Created,
            last_op: None,
            last_error: None,
            externally_modified: false,
            async_op: None,
        }
    }

    /// Whether the item is usable as it stands: created, or present after a failed Modify or
    /// Delete (it still exists with its previous value).
    pub fn is_usable(&self) -> bool {
        match self.state {
            ItemStatus::Created => true,
            ItemStatus::Failed => self.last_op != Some(Operation::Create),
            ItemStatus::Pending { .. } | ItemStatus::InProgress { .. } => false,
        }
    }

    /// The operation running in the background, if any.
    pub fn in_progress(&self) -> Option<Operation> {
        match self.state {
            ItemStatus::InProgress { op } => Some(op),
            _ => None,
        }
    }

    /// Records a finished operation: `Created` on success, `Failed` with the error otherwise.
    pub(crate) fn record(&mut self, op: Operation, result: Result<(), String>) {
        self.last_op = Some(op);
        self.async_op = None;
        match result {
            Ok(()) => {
                self.state = ItemStatus::Created;
                self.last_error = None;
            }
            Err(error) => {
                self.state = ItemStatus::Failed;
                self.last_error = Some(error);
            }
        }
    }
}

impl Default for ItemState {
    fn default() -> Self {
        Self::created()
    }
}

/// Which part of the graphs a reconcile or plan acts on.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Selection {
    /// Every item.
    #[default]
    All,
    /// Only items in the named subgraph, in either graph.
    ///
    /// Items elsewhere are not created or modified but still count for dependency satisfaction;
    /// they are deleted only when a change inside the selection breaks their dependencies, and
    /// such items are re-created in the same run when they can be.
    Subgraph(String),
}

impl Selection {
    /// Selection of the subgraph named `name`.
    pub fn subgraph(name: impl Into<String>) -> Self {
        Selection::Subgraph(name.into())
    }
}
