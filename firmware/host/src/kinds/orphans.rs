//! What becomes of an artifact no resource declares any more (seed 000, "Orphans" and "Cleanup
//! Policy"; ADR 0002): each kind's rule is a constant in its module, named in the kind table
//! ([`super::ArtifactKind::orphans`]). The engine's `policy::cleanup` applies the rule with the
//! ledger's proof; this module only states it.

/// Why an orphan stays on the host, and what the operator can do about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kept {
    /// Why it is kept (shown as the orphan's reason).
    pub reason: &'static str,
    /// What the operator can do.
    pub remediation: &'static str,
}

/// A kind's orphan rule. Whatever the rule does not decide gets the verdicts of
/// [`OrphanRule::Default`]: kept, with [`NO_CLEANUP`] when the ledger records it and
/// [`UNRECORDED`] otherwise. Nothing is deleted without the ledger's record, except what only
/// this process can own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrphanRule {
    /// Never deleted, even when the ledger records it (links, addresses, global state).
    Never(Kept),
    /// Deleted when the ledger records it (`deleted` says why); otherwise kept, with
    /// `unrecorded` or else [`UNRECORDED`].
    Recorded {
        /// Why deleting is allowed.
        deleted: &'static str,
        /// Why an unrecorded one stays, if the kind says it better than [`UNRECORDED`].
        unrecorded: Option<Kept>,
    },
    /// Deleted when the ledger records it and it lies inside routerd's namespace
    /// ([`super::ArtifactType::in_routerd_namespace`]); one inside the namespace but not
    /// recorded is kept with `unrecorded` or else [`UNRECORDED`].
    RecordedInNamespace {
        /// Why deleting is allowed.
        deleted: &'static str,
        /// Why an unrecorded one stays, if the kind says it better than [`UNRECORDED`].
        unrecorded: Option<Kept>,
    },
    /// Deleted when the ledger records it, unless it holds objects the ledger does not record
    /// (a route table with foreign routes): then kept with `holds_foreign`.
    RecordedAndEmpty {
        /// Why deleting is allowed.
        deleted: &'static str,
        /// Why a container with foreign content stays.
        holds_foreign: Kept,
    },
    /// Always deleted: nothing outside this process can own one (log sinks).
    Always(&'static str),
    /// No cleanup in this build (values of the engine's own, objects another family brings
    /// up): kept, with [`NO_CLEANUP`] or [`UNRECORDED`].
    Default,
}

/// Why an orphan the ledger records is kept when its kind has no cleanup.
pub const NO_CLEANUP: Kept = Kept {
    reason: "recorded in the ledger, but this kind has no cleanup in this build",
    remediation: "remove it by hand",
};

/// Why an orphan the ledger does not record is kept.
pub const UNRECORDED: Kept = Kept {
    reason: "inside a routerd namespace but not recorded in the ledger",
    remediation: "delete it by hand if it is stale, or declare it in the config and run adopt --apply",
};
