//! `when.state` gating: a resource with conditions depends on the state variables they read,
//! so its artifacts are applied only once the supervisor has evaluated them (a later issue);
//! until then they stay pending and the resource says why.

use routerd_host::{ArtifactKey, ArtifactKind};
use routerd_model::ResourceSpec;
use routerd_model::spec::WhenSpec;

use super::Out;
use super::ctx::dep;

/// The `when` block of a resource, for the kinds that have one.
pub(super) fn when_of(spec: &ResourceSpec) -> Option<&WhenSpec> {
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

/// Makes every intent of the resource depend on the state variables its `when` reads.
pub(super) fn gate_on_state(when: &WhenSpec, out: &mut Out) {
    for var in when.state.keys() {
        let key = ArtifactKey::new(ArtifactKind::StateVariable, var.clone());
        out.depend_all(dep(&key, format!("when.state.{var} must be evaluated and hold")));
    }
}
