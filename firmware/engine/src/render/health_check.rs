//! `HealthCheck`: probes the supervisor's scheduler runs on the check's interval. The check's
//! verdict is an external item (`routerd.healthCheck/<name>`, [`crate::health`]); what depends
//! on it being healthy (a default-route candidate) follows it.

use routerd_host::ArtifactSpec;
use routerd_host::artifact::HealthStatusSpec;
use routerd_model::Resource;
use routerd_model::spec::routing::{HealthCheckSpec, TargetSource};

use super::{Out, RenderCtx};

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &HealthCheckSpec, out: &mut Out) {
    if s.interface.as_deref().is_some_and(|i| ctx.interface(i).is_none()) {
        out.warn("interface does not name an Interface resource: the probe is not bound to a link");
    }
    match (s.target_source, s.target.as_deref()) {
        (Some(TargetSource::DsliteRemote), _) => {
            let name = s.interface.as_deref().unwrap_or_default();
            let tunnel = ctx.resources().any(|r| {
                r.name == name && matches!(r.spec, routerd_model::ResourceSpec::DsLiteTunnel(_))
            });
            if !tunnel {
                out.warn(format!(
                    "targetSource dsliteRemote: interface {name:?} is not a DSLiteTunnel: the \
                     check is never healthy"
                ));
            }
        }
        (Some(TargetSource::Static), None) => {
            out.warn("targetSource static without a target: the check is never healthy")
        }
        (Some(TargetSource::DefaultGateway) | None | Some(TargetSource::Auto), None)
            if s.interface.is_none() =>
        {
            out.warn("no target and no interface to take the default gateway of: the check is never healthy")
        }
        _ => {}
    }
    let status =
        HealthStatusSpec { name: res.name.clone(), healthy: true, target: None, detail: None };
    out.observe(ArtifactSpec::Health(status));
}

impl super::Render for routerd_model::spec::all::HealthCheckSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, res, self, out);
    }
}
