//! `IPv6DelegatedAddress`: a LAN address derived from a delegated prefix (`subnetID` +
//! `addressSuffix`). The prefix is only known once the delegation is bound, so the artifact is
//! named `delegated/<name>` and waits on the prefix delegation (configurator in a later issue).

use routerd_host::{ArtifactKey, ArtifactKind};
use routerd_model::spec::net::Ipv6DelegatedAddressSpec;
use routerd_model::{Resource, ResourceSpec};

use super::ctx::dep;
use super::{Out, RenderCtx};
use crate::intent::ApplyWith;

pub(super) fn render(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv6DelegatedAddressSpec,
    out: &mut Out,
) {
    let Some(link) = ctx.interface(&s.interface) else {
        return out.unresolved("interface", &s.interface);
    };
    // The delegation's binding is keyed by its upstream link.
    let upstream = ctx.resources().find_map(|r| match &r.spec {
        ResourceSpec::Ipv6PrefixDelegation(p) if r.name == s.prefix_delegation => {
            ctx.interface(&p.interface)
        }
        _ => None,
    });
    let Some(upstream) = upstream else {
        return out.unresolved("prefixDelegation", &s.prefix_delegation);
    };
    let pd = ArtifactKey::new(ArtifactKind::Dhcp6PrefixDelegation, upstream.ifname);
    let deps = vec![
        dep(&link.key, format!("assigned on {}", link.ifname)),
        dep(&pd, format!("derived from prefix delegation {}", s.prefix_delegation)),
    ];
    out.ensure_opaque(
        ArtifactKind::Ipv6Address,
        format!("delegated/{}", res.name),
        s,
        ApplyWith::Rtnetlink,
        deps,
    );
}
