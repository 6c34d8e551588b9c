//! Errors of the graph crate: invalid graphs, operation failures the reconciler itself detects,
//! and the joined error of a reconcile.

use std::error::Error;

/// The graphs cannot be reconciled at all; nothing was executed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    /// The intended graph has a dependency cycle.
    #[error("dependency cycle in the intended graph: {}", .items.join(" -> "))]
    Cycle {
        /// The items of the cycle in dependency order, the first repeated at the end
        /// (`a/x -> b/y -> a/x`).
        items: Vec<String>,
    },
}

/// Failures the reconciler records for an operation without a configurator error behind them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OperationError {
    /// The registry has no configurator for a non-external item.
    #[error("no configurator for kind {kind}")]
    NoConfigurator {
        /// The item kind, as displayed.
        kind: String,
    },
    /// A background task dropped its done handle without delivering a result.
    #[error("background operation ended without reporting a result")]
    DoneHandleDropped,
    /// The operation stopped because it was cancelled; for configurators to return.
    #[error("operation cancelled")]
    Cancelled,
}

/// Joined error of a reconcile whose operations did not all succeed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReconcileError {
    /// One or more operations failed; each entry reads `kind/name: operation: error`.
    #[error("{} operation(s) failed: {}", .failures.len(), .failures.join("; "))]
    OperationsFailed {
        /// One line per failed operation.
        failures: Vec<String>,
    },
}

/// Renders an error with its sources, `outer: inner: root`.
pub(crate) fn error_chain(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
