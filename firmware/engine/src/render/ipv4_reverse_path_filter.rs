//! `IPv4ReversePathFilter`: `net.ipv4.conf.{all,default,IFNAME}.rp_filter` = 0 (disabled),
//! 1 (strict, RFC 3704) or 2 (loose). See `Documentation/networking/ip-sysctl.rst`.

use routerd_host::ArtifactSpec;
use routerd_host::artifact::SysctlSpec;
use routerd_model::spec::routing::{Ipv4ReversePathFilterSpec, RpFilterMode, RpFilterTarget};

use super::ctx::dep;
use super::{Out, RenderCtx};

pub(super) fn render(ctx: &RenderCtx<'_>, s: &Ipv4ReversePathFilterSpec, out: &mut Out) {
    let value = match s.mode {
        RpFilterMode::Disabled => "0",
        RpFilterMode::Strict => "1",
        RpFilterMode::Loose => "2",
    };
    let (scope, deps) = match s.target {
        RpFilterTarget::All => ("all".to_string(), Vec::new()),
        RpFilterTarget::Default => ("default".to_string(), Vec::new()),
        RpFilterTarget::Interface => {
            let Some(name) = s.interface.as_deref() else {
                return out.warn("target interface needs interface");
            };
            let Some(link) = ctx.interface(name) else { return out.unresolved("interface", name) };
            let d = dep(
                &link.key,
                format!("the conf/{} directory exists only with the link", link.ifname),
            );
            (link.ifname, vec![d])
        }
    };
    let spec = SysctlSpec { key: format!("net.ipv4.conf.{scope}.rp_filter"), value: value.into() };
    out.ensure(ArtifactSpec::Sysctl(spec), deps);
}

impl super::Render for routerd_model::spec::all::Ipv4ReversePathFilterSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        _: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, self, out);
    }
}
