//! The one vocabulary of stable reason codes (STYLE.md §4): every `reason` a condition of the
//! Result document carries, the reasons [`crate::plan::Desired::blocked`] and
//! [`crate::plan::EnginePlan::unavailable`] record, and, as [`Reason::Host`], the host's
//! [`HostReason`] of a failed operation. Serialized as the CamelCase code (`DependencyPending`,
//! `KernelRejected`); does not decide anything, it only names.

use serde::{Deserialize, Serialize};

pub use routerd_host::error::{ControllerCode, HostReason};

/// A stable CamelCase reason code, shown in conditions, the UI and the CLI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Reason {
    // `Ready`.
    /// `Ready` is `True`: the resource is `Healthy` or only `RequiresAdoption`.
    ArtifactsInPlace,
    /// `Ready` is `False` because the resource is [`crate::Phase::Drifted`].
    Drifted,
    /// `Ready` is `False` because the resource is [`crate::Phase::Blocked`].
    Blocked,

    // `Blocked` (the intent cannot be applied now).
    /// Two resources declare one artifact with different attributes: neither is applied.
    Conflict,
    /// No configurator of this build applies the artifact's kind (its `applyWith`).
    ConfiguratorMissing,
    /// The artifact needs values the config alone does not give (resolved at run time).
    AttributesUnresolved,
    /// The artifact depends on one that cannot be applied (blocked itself).
    DependencyBlocked,
    /// A sysctl key without a `/proc/sys` file on this kernel: never created.
    KeyMissing,
    /// An existing link routerd manages but does not create is absent: waits for it.
    LinkMissing,
    /// An operation on the artifact failed in this reconcile.
    OperationFailed,
    /// An operation on the artifact was not run: one it depends on failed, or strict mode
    /// stopped the apply.
    OperationSkipped,
    /// An operation on the artifact waits for a dependency that is not in place yet.
    DependencyPending,
    /// The object is on the host with other data and the ledger does not record it, and its
    /// kind leaves such objects alone (an RRset on a remote primary): never modified until
    /// the config matches it and it is adopted.
    ForeignObject,

    // `Standby` and `Active` (an intent withdrawn on purpose).
    /// `Standby` is `True`: the artifact is withdrawn while a HealthCheck it follows fails.
    HealthCheckFailing,
    /// `Active` is `False`: the artifact is withdrawn while a `when.state` condition it is
    /// gated on does not hold.
    StateConditionUnmet,

    // `Healthy` (a HealthCheck's verdict).
    /// `Healthy` is `True`: the check's probes succeed.
    ProbesSucceed,
    /// `Healthy` is `False`: the check's probes fail.
    ProbesFail,
    /// `Healthy` is `Unknown`: the daemon's scheduler has not probed yet.
    NoVerdict,

    // `Value` (a StatePolicy variable) and `Selected` (a SelfAddressPolicy selection).
    /// `Value` is `True`: the variable has a value.
    Set,
    /// `Value` is `False`: the variable has no value.
    Unset,
    /// `Value` or `Selected` is `Unknown`: not evaluated yet (or, for a selection, its
    /// rendered value unreadable).
    NotEvaluated,
    /// `Selected` is `True`: a candidate address was selected.
    CandidateSelected,
    /// `Selected` is `False`: no candidate has an address yet.
    NoCandidateAvailable,

    // `Bound` (a DHCP client binding or prefix delegation).
    /// `Bound` is `Unknown`: the binding is not configured on the host yet.
    NotObserved,
    /// `Bound` is `True`: networkd holds a lease (or a delegated prefix).
    LeaseBound,
    /// `Bound` is `False`: a prefix delegation has no prefix yet.
    NoPrefix,
    /// `Bound` is `False`: a DHCP client has no lease yet.
    NoLease,

    // `Drifted` and `AdoptionRequired`.
    /// `Drifted` is `True`: operations on the resource's artifacts are pending.
    OperationsPending,
    /// `AdoptionRequired` is `True`: artifacts are present but not recorded as owned.
    NotInLedger,

    /// Why a host operation failed ([`routerd_host::HostError::reason_code`]): prefixed to
    /// the error text of a failed operation. Never [`HostReason::Controller`]: that is
    /// [`Reason::Controller`].
    #[serde(untagged)]
    Host(HostReason),

    /// A word of a controller crate's vocabulary (`Published`'s `TsigBadKey`, ADR 0013): the
    /// reasons of the conditions the crate reports ([`crate::registry::KindRender::status`])
    /// and of its failed operations ([`routerd_host::HostError::Refused`]).
    #[serde(untagged)]
    Controller(ControllerCode),
}

impl Reason {
    /// The CamelCase code (`DependencyPending`), as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ArtifactsInPlace => "ArtifactsInPlace",
            Self::Drifted => "Drifted",
            Self::Blocked => "Blocked",
            Self::Conflict => "Conflict",
            Self::ConfiguratorMissing => "ConfiguratorMissing",
            Self::AttributesUnresolved => "AttributesUnresolved",
            Self::DependencyBlocked => "DependencyBlocked",
            Self::KeyMissing => "KeyMissing",
            Self::LinkMissing => "LinkMissing",
            Self::OperationFailed => "OperationFailed",
            Self::OperationSkipped => "OperationSkipped",
            Self::DependencyPending => "DependencyPending",
            Self::ForeignObject => "ForeignObject",
            Self::HealthCheckFailing => "HealthCheckFailing",
            Self::StateConditionUnmet => "StateConditionUnmet",
            Self::ProbesSucceed => "ProbesSucceed",
            Self::ProbesFail => "ProbesFail",
            Self::NoVerdict => "NoVerdict",
            Self::Set => "Set",
            Self::Unset => "Unset",
            Self::NotEvaluated => "NotEvaluated",
            Self::CandidateSelected => "CandidateSelected",
            Self::NoCandidateAvailable => "NoCandidateAvailable",
            Self::NotObserved => "NotObserved",
            Self::LeaseBound => "LeaseBound",
            Self::NoPrefix => "NoPrefix",
            Self::NoLease => "NoLease",
            Self::OperationsPending => "OperationsPending",
            Self::NotInLedger => "NotInLedger",
            Self::Controller(c) => c.as_str(),
            Self::Host(r) => r.as_str(),
        }
    }
}

impl From<HostReason> for Reason {
    fn from(r: HostReason) -> Self {
        match r {
            HostReason::Controller(c) => Self::Controller(c),
            r => Self::Host(r),
        }
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reason, the engine's and the host's.
    const ALL: [Reason; 42] = [
        Reason::ArtifactsInPlace,
        Reason::Drifted,
        Reason::Blocked,
        Reason::Conflict,
        Reason::ConfiguratorMissing,
        Reason::AttributesUnresolved,
        Reason::DependencyBlocked,
        Reason::KeyMissing,
        Reason::LinkMissing,
        Reason::OperationFailed,
        Reason::OperationSkipped,
        Reason::DependencyPending,
        Reason::ForeignObject,
        Reason::HealthCheckFailing,
        Reason::StateConditionUnmet,
        Reason::ProbesSucceed,
        Reason::ProbesFail,
        Reason::NoVerdict,
        Reason::Set,
        Reason::Unset,
        Reason::NotEvaluated,
        Reason::CandidateSelected,
        Reason::NoCandidateAvailable,
        Reason::NotObserved,
        Reason::LeaseBound,
        Reason::NoPrefix,
        Reason::NoLease,
        Reason::OperationsPending,
        Reason::NotInLedger,
        Reason::Host(HostReason::NamespaceUnavailable),
        Reason::Host(HostReason::NetlinkUnavailable),
        Reason::Host(HostReason::KernelRejected),
        Reason::Host(HostReason::DependencyMissing),
        Reason::Host(HostReason::ArtifactConflict),
        Reason::Host(HostReason::InvalidArtifact),
        Reason::Host(HostReason::InventoryFailed),
        Reason::Host(HostReason::InternalError),
        Reason::Host(HostReason::ServiceFailed),
        Reason::Host(HostReason::BusUnavailable),
        Reason::Host(HostReason::FileFailed),
        Reason::Host(HostReason::SysctlFailed),
        Reason::Controller(ControllerCode::new("TsigBadKey")),
    ];

    #[test]
    fn every_reason_serializes_as_its_code_and_reads_back() {
        let mut seen = std::collections::BTreeSet::new();
        for r in ALL {
            let json = serde_json::to_value(r).expect("serializes");
            assert_eq!(json, serde_json::Value::from(r.as_str()));
            assert_eq!(serde_json::from_value::<Reason>(json).expect("reads back"), r);
            assert!(seen.insert(r.as_str()), "{r} twice: one code, one meaning");
        }
    }

    #[test]
    fn an_unknown_word_is_a_controller_reason_and_a_non_word_is_refused() {
        let sunny = serde_json::from_str::<Reason>("\"Sunny\"").expect("a CamelCase word");
        assert_eq!(sunny, Reason::Controller(ControllerCode::new("Sunny")));
        for bad in ["\"sunny\"", "\"Sun ny\"", "\"\"", "3"] {
            assert!(serde_json::from_str::<Reason>(bad).is_err(), "{bad}");
        }
        let host = Reason::from(HostReason::Controller(ControllerCode::new("TsigBadKey")));
        assert_eq!(host, Reason::Controller(ControllerCode::new("TsigBadKey")));
    }
}
