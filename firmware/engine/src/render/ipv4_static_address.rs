//! `IPv4StaticAddress`: one address on a link, depending on the link.

use ipnet::IpNet;
use routerd_host::ArtifactSpec;
use routerd_host::artifact::AddressSpec;
use routerd_model::spec::net::Ipv4StaticAddressSpec;

use super::ctx::dep;
use super::{Out, RenderCtx};

pub(super) fn render(ctx: &RenderCtx<'_>, s: &Ipv4StaticAddressSpec, out: &mut Out) {
    let Some(link) = ctx.interface(&s.interface) else {
        return out.unresolved("interface", &s.interface);
    };
    let Ok(address) = s.address.parse::<IpNet>() else {
        return out.warn(format!("address {:?} is not an address with prefix length", s.address));
    };
    if s.exclusive {
        out.warn("exclusive is not applied: routerd never removes addresses it does not own");
    }
    let spec = ArtifactSpec::Address(AddressSpec { ifname: link.ifname.clone(), address });
    out.ensure(spec, vec![dep(&link.key, format!("needs link {}", link.ifname))]);
}

impl super::Render for routerd_model::spec::all::Ipv4StaticAddressSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        _: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, self, out);
    }
}
