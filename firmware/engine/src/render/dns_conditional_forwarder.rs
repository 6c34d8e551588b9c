//! `DNSConditionalForwarder`: a dnsmasq `server=/domain/upstream` section (configurator in a
//! later issue).

use routerd_host::ArtifactKind;
use routerd_model::Resource;
use routerd_model::spec::dhcp::DnsConditionalForwarderSpec;

use super::ctx::dep;
use super::{Out, RenderCtx};
use crate::intent::ApplyWith;

pub(super) fn render(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &DnsConditionalForwarderSpec,
    out: &mut Out,
) {
    let mut deps = Vec::new();
    if let Some(i) = s.upstream_interface.as_deref().and_then(|i| ctx.interface(i)) {
        deps.push(dep(&i.key, format!("upstream reached through {}", i.ifname)));
    }
    let _ = res;
    out.ensure_opaque(
        ArtifactKind::DnsmasqConfig,
        format!("server/{}", s.domain),
        s,
        ApplyWith::Dnsmasq,
        deps,
    );
}
