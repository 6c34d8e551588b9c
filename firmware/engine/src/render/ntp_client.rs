//! `NTPClient`: a systemd-timesyncd drop-in with the configured servers (configurator in a
//! later issue). `managed: false` leaves timesyncd alone and only observes the drop-in.

use routerd_host::ArtifactKind;
use routerd_model::Resource;
use routerd_model::spec::system::NtpClientSpec;

use super::ctx::dep;
use super::{Out, RenderCtx};
use crate::intent::ApplyWith;

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &NtpClientSpec, out: &mut Out) {
    let path = format!("/etc/systemd/timesyncd.conf.d/routerd-{}.conf", res.name);
    let mut deps = Vec::new();
    if let Some(i) = s.interface.as_deref().and_then(|i| ctx.interface(i)) {
        deps.push(dep(&i.key, format!("servers are reached through {}", i.ifname)));
    }
    let attrs = serde_json::json!({"path": path, "servers": s.servers, "managed": s.managed});
    out.ensure_opaque(ArtifactKind::File, path, attrs, ApplyWith::Timesyncd, deps);
}
