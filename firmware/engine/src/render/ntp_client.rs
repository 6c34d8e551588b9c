//! `NTPClient`: systemd-timesyncd's servers. `managed: true` writes them as a block of
//! routerd's timesyncd drop-in (`timesyncd.config`, named after the resource); `managed: false`
//! leaves timesyncd to the operator and only observes that it uses the servers
//! (`timesyncd.servers`).

use routerd_host::ArtifactSpec;
use routerd_host::artifact::{TimesyncServersSpec, TimesyncdSpec};
use routerd_model::Resource;
use routerd_model::spec::system::NtpClientSpec;

use super::ctx::dep;
use super::{Out, RenderCtx};

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &NtpClientSpec, out: &mut Out) {
    if !s.managed {
        let spec = TimesyncServersSpec { servers: s.servers.clone() };
        out.observe(ArtifactSpec::TimesyncServers(spec));
        return;
    }
    let mut deps = Vec::new();
    if let Some(i) = s.interface.as_deref().and_then(|i| ctx.interface(i)) {
        deps.push(dep(&i.key, format!("servers are reached through {}", i.ifname)));
    }
    let spec =
        TimesyncdSpec { name: res.name.clone(), servers: s.servers.clone(), effective: true };
    out.ensure(ArtifactSpec::Timesyncd(spec), deps);
}

impl super::Render for routerd_model::spec::all::NtpClientSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, res, self, out);
    }
}
