//! `StatePolicy`: a state variable the supervisor's scheduler evaluates (an address present, a
//! prefix delegated, a name resolving) and that `when.state` conditions of other resources read. The variable is
//! an external item (`routerd.stateVariable/<variable>`, [`crate::state`]): nothing is
//! applied for it, and what is gated on it follows its value.

use routerd_host::ArtifactSpec;
use routerd_host::artifact::{StateVariableSpec, StateVariableStatus};
use routerd_model::spec::routing::{ResolveUpstreamSource, StatePolicySpec};

use super::Out;
use crate::intent::ApplyWith;

pub(super) fn render(s: &StatePolicySpec, out: &mut Out) {
    let lease_dns = s.values.iter().filter_map(|v| v.when.dns_resolve.as_ref()).any(|d| {
        matches!(
            d.upstream_source,
            Some(ResolveUpstreamSource::Dhcp4 | ResolveUpstreamSource::Dhcp6)
        )
    });
    if lease_dns {
        out.warn(
            "dnsResolve with upstreamSource dhcp4 or dhcp6 is not evaluated by this build (lease \
             DNS servers are not read yet): values that use one never hold",
        );
    }
    let variable = StateVariableSpec {
        variable: s.variable.clone(),
        status: StateVariableStatus::Unknown,
        value: None,
        since_ms: None,
        detail: None,
    };
    out.observe(ArtifactSpec::State(variable), ApplyWith::Scheduler);
}
