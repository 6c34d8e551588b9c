//! `DNSConditionalForwarder`: a dnsmasq section `server=/DOMAIN/RESOLVER` per resolver
//! (dnsmasq(8), `--server`): queries for the domain and its subdomains go to those resolvers.
//! Resolvers from a DHCP lease (`upstreamSource: dhcp4 | dhcp6`) are known only at run time;
//! such a forwarder stays opaque until then.

use routerd_host::artifact::DnsmasqSectionSpec;
use routerd_host::{ArtifactKind, ArtifactSpec};
use routerd_model::Resource;
use routerd_model::spec::dhcp::{DnsConditionalForwarderSpec, ForwarderUpstreamSource};

use super::ctx::dep;
use super::dhcp::ensure_dnsmasq_unit;
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
    let name = format!("server/{}", s.domain);
    if !matches!(s.upstream_source, None | Some(ForwarderUpstreamSource::Static)) {
        out.ensure_opaque(ArtifactKind::DnsmasqConfig, name, s, ApplyWith::Dnsmasq, deps);
        return;
    }
    let unit = ensure_dnsmasq_unit(ctx, out);
    deps.push(dep(&unit, "dnsmasq forwards the domain"));
    let domain = s.domain.trim_matches('.');
    let lines = s.upstream_servers.iter().map(|a| format!("server=/{domain}/{a}")).collect();
    let section = DnsmasqSectionSpec { section: name, lines };
    out.ensure(ArtifactSpec::DnsmasqSection(section), ApplyWith::Dnsmasq, deps);
}
