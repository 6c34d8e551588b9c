//! `StatePolicy`: a state variable the supervisor's scheduler evaluates (an address present, a
//! prefix delegated, a name resolving) and that `when.state` conditions of other resources read. The variable is
//! an external item (`routerd.stateVariable/<variable>`, [`crate::state`]): nothing is
//! applied for it, and what is gated on it follows its value.

use routerd_host::ArtifactSpec;
use routerd_host::artifact::{StateVariableSpec, StateVariableStatus};
use routerd_model::spec::routing::{ResolveUpstreamSource, StatePolicySpec};

use super::{Out, RenderCtx};

pub(super) fn render(ctx: &RenderCtx<'_>, s: &StatePolicySpec, out: &mut Out) {
    // A dnsResolve asking a DHCP client's servers needs that client on the interface.
    for d in s.values.iter().filter_map(|v| v.when.dns_resolve.as_ref()) {
        let v6 = match d.upstream_source {
            Some(ResolveUpstreamSource::Dhcp4) => false,
            Some(ResolveUpstreamSource::Dhcp6) => true,
            _ => continue,
        };
        let iface = d.upstream_interface.as_deref().or(s.interface.as_deref()).unwrap_or_default();
        if ctx.dhcp_client(iface, v6).is_none() {
            out.warn(format!(
                "dnsResolve upstreamSource {}: {iface:?} has no DHCP{} client, so the value \
                 that asks it never holds",
                if v6 { "dhcp6" } else { "dhcp4" },
                if v6 { "v6" } else { "v4" }
            ));
        }
    }
    let variable = StateVariableSpec {
        variable: s.variable.clone(),
        status: StateVariableStatus::Unknown,
        value: None,
        since_ms: None,
        detail: None,
    };
    out.observe(ArtifactSpec::State(variable));
}

impl super::Render for routerd_model::spec::all::StatePolicySpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        _: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, self, out);
    }
}
