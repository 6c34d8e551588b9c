//! `DNSConditionalForwarder`: a dnsmasq section `server=/DOMAIN/RESOLVER` per resolver
//! (dnsmasq(8), `--server`): queries for the domain and its subdomains go to those resolvers.
//! Resolvers from a DHCP lease (`upstreamSource: dhcp4 | dhcp6`) are the DNS servers the
//! `upstreamInterface`'s DHCP client received, which networkd reports (a runtime value, ADR
//! 0008): the section waits for them, follows them, and is withdrawn while there are none.

use std::net::IpAddr;

use routerd_host::ArtifactSpec;
use routerd_host::artifact::DnsmasqSectionSpec;
use routerd_host::dnsmasq::DnsmasqOption;
use routerd_model::Resource;
use routerd_model::spec::dhcp::{DnsConditionalForwarderSpec, ForwarderUpstreamSource};

use super::ctx::dep;
use super::dhcp::{address, ensure_dnsmasq_unit};
use super::{Out, RenderCtx};
use crate::intent::{Carried, IntentDep};

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
    let from_lease = match s.upstream_source {
        Some(ForwarderUpstreamSource::Dhcp4) => Some(false),
        Some(ForwarderUpstreamSource::Dhcp6) => Some(true),
        Some(ForwarderUpstreamSource::Static) | None => None,
    };
    let servers: Vec<IpAddr> = match from_lease {
        None => {
            s.upstream_servers.iter().filter_map(|a| address(a, "upstreamServers", out)).collect()
        }
        Some(v6) => {
            let iface = s.upstream_interface.as_deref().unwrap_or_default();
            let Some(client) = ctx.dhcp_client(iface, v6) else {
                let family =
                    if v6 { "IPv6DHCPAddress or IPv6PrefixDelegation" } else { "IPv4DHCPAddress" };
                out.warn(format!(
                    "the resolvers come from the DHCP client on {iface:?}, but no {family} is \
                     on it: nothing is forwarded"
                ));
                return;
            };
            deps.push(IntentDep {
                carries: Some(Carried::DnsServers),
                ..dep(&client, format!("resolvers: the DNS servers {client} received"))
            });
            ctx.runtime.lease_dns(&client).to_vec()
        }
    };
    let unit = ensure_dnsmasq_unit(ctx, out);
    deps.push(dep(&unit, "dnsmasq forwards the domain"));
    let domain = s.domain.trim_matches('.');
    let lines = servers
        .into_iter()
        .map(|address| DnsmasqOption::Server { domain: Some(domain.to_string()), address });
    let section = DnsmasqSectionSpec::from_options(name, lines);
    out.ensure(ArtifactSpec::DnsmasqSection(section), deps);
}

impl super::Render for routerd_model::spec::all::DnsConditionalForwarderSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, res, self, out);
    }

    /// A `dhcp4` or `dhcp6` upstream reads the DNS servers of that lease.
    fn reads(&self, ctx: &super::RenderCtx<'_>, reads: &mut crate::runtime::RuntimeReads) {
        use routerd_model::spec::dhcp::ForwarderUpstreamSource as Source;
        let v6 = match self.upstream_source {
            Some(Source::Dhcp4) => false,
            Some(Source::Dhcp6) => true,
            _ => return,
        };
        let client = self.upstream_interface.as_deref().and_then(|i| ctx.dhcp_client(i, v6));
        reads.lease_dns.extend(client);
    }
}
