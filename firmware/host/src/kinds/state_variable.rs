//! `routerd.stateVariable`: the values of StatePolicy variables, observed only.

use serde::{Deserialize, Serialize};

use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// `routerd.stateVariable`, named after its `StatePolicy`'s `variable`: the value the
/// supervisor's scheduler last evaluated. An external item: present once the scheduler has
/// declared the variable, and nothing of it is compared; a `when.state` dependency reads
/// `status`, `value` and `since` through its own predicate, so dependents are created while
/// their condition holds and withdrawn when it stops holding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateVariableSpec {
    /// The variable's name (`StatePolicy.spec.variable`), the artifact's name.
    pub variable: String,
    /// Whether the variable has been evaluated and, if so, whether a value's `when` held.
    pub status: StateVariableStatus,
    /// The `value` of the first entry whose `when` held; `None` unless `status` is `set`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// When `status` and `value` last changed, in milliseconds since the Unix epoch; what a
    /// `for` duration is measured from. `None` while unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<u64>,
    /// Observed: why the variable has its value (`ipv6Address: wan has 2001:db8::2/64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// [`StateVariableSpec::status`]: the three states `when.state.VAR.status` matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StateVariableStatus {
    /// Not evaluated yet.
    Unknown,
    /// Evaluated: an entry's `when` held, `value` is its value.
    Set,
    /// Evaluated: no entry's `when` held.
    Unset,
}

impl ArtifactType for StateVariableSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::StateVariable, self.variable.clone())
    }

    observed_as_self!(State);

    /// Nothing: the value is read by its dependents' predicates, never applied.
    fn drift(&self, _: &Self, _: &mut Diffs) {}
}
