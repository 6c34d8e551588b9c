//! `StatePolicy`: a state variable the supervisor evaluates (prefix delegation available, an
//! address present, a name resolving) and that `when.state` conditions of other resources read.
//! Evaluation arrives in a later issue; until then dependents stay pending.

use routerd_host::ArtifactKind;
use routerd_model::Resource;
use routerd_model::spec::routing::StatePolicySpec;

use super::Out;
use crate::intent::ApplyWith;

pub(super) fn render(_res: &Resource, s: &StatePolicySpec, out: &mut Out) {
    out.ensure_opaque(
        ArtifactKind::StateVariable,
        s.variable.clone(),
        s,
        ApplyWith::Scheduler,
        Vec::new(),
    );
}
