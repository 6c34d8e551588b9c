//! `HealthCheck`: a probe the supervisor's scheduler runs (ICMP, later TCP and DNS), whose
//! result is an external item policies depend on. Scheduler in a later issue.

use routerd_host::ArtifactKind;
use routerd_model::Resource;
use routerd_model::spec::routing::HealthCheckSpec;

use super::ctx::dep;
use super::{Out, RenderCtx};
use crate::intent::ApplyWith;

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &HealthCheckSpec, out: &mut Out) {
    let mut deps = Vec::new();
    if let Some(i) = s.interface.as_deref().and_then(|i| ctx.interface(i)) {
        deps.push(dep(&i.key, format!("probes through {}", i.ifname)));
    }
    out.ensure_opaque(ArtifactKind::HealthCheck, res.name.clone(), s, ApplyWith::Scheduler, deps);
}
