//! `when.state` gating: a resource with conditions depends on the state variables they read,
//! each dependency carrying its condition ([`crate::state::holds`]), so its artifacts exist
//! only while the supervisor's evaluation makes every condition hold; before the first
//! evaluation they stay pending and the resource says why.

use routerd_host::{ArtifactKey, ArtifactKind};
use routerd_model::ResourceSpec;
use routerd_model::spec::WhenSpec;

use super::Out;
use super::ctx::dep;

/// The `when` block of a resource, for the kinds that have one.
pub(crate) fn when_of(spec: &ResourceSpec) -> Option<&WhenSpec> {
    use ResourceSpec as S;
    match spec {
        S::Ipv4DhcpScope(s) => s.when.as_ref(),
        S::Ipv6DelegatedAddress(s) => s.when.as_ref(),
        S::Ipv6DhcpScope(s) => s.when.as_ref(),
        S::DsLiteTunnel(s) => s.when.as_ref(),
        S::HealthCheck(s) => s.when.as_ref(),
        S::Ipv4SourceNat(s) => s.when.as_ref(),
        S::Ipv4PolicyRouteSet(s) => s.when.as_ref(),
        _ => None,
    }
    .filter(|w| !w.state.is_empty())
}

/// Makes every intent of the resource depend on the state variables its `when` reads, each
/// with the condition it must meet.
pub(super) fn gate_on_state(when: &WhenSpec, out: &mut Out) {
    gate_on_state_from(when, out, 0);
}

/// [`gate_on_state`] for the intents rendered since there were `start` of them: one part of
/// a resource (a default-route candidate with its own `when`).
pub(super) fn gate_on_state_from(when: &WhenSpec, out: &mut Out, start: usize) {
    for (var, condition) in &when.state {
        let key = ArtifactKey::new(ArtifactKind::StateVariable, var.clone());
        let mut d = dep(&key, format!("active while when.state.{var} holds"));
        d.state = Some(Box::new(condition.clone()));
        out.depend_from(start, d);
    }
}
