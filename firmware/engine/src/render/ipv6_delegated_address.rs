//! `IPv6DelegatedAddress`: a LAN address in a subnet of the prefix an `IPv6PrefixDelegation`
//! receives (`subnetID` + `addressSuffix`, RFC 7084 WPD-1..WPD-4).
//!
//! The prefix is known only once the delegation is bound, and it changes when the ISP
//! renumbers, so the address is not a static `linux.ipv6.address`: it is a
//! `dhcp.ipv6.delegatedAddress` binding in routerd's `.network` file for the downstream link
//! (systemd.network(5), `[DHCPPrefixDelegation]`), and systemd-networkd adds the address with
//! the delegation's lifetimes, renumbers it with the prefix and removes it when the delegation
//! is lost. The binding's observed `addresses` are the result.

use routerd_host::artifact::{DhcpBinding, DhcpClientSpec};
use routerd_host::{ArtifactKey, ArtifactKind, ArtifactSpec};
use routerd_model::ResourceSpec;
use routerd_model::spec::net::Ipv6DelegatedAddressSpec;

use super::ctx::dep;
use super::{Out, RenderCtx};

/// The largest subnet ID systemd-networkd takes (`SubnetId=`, systemd.network(5)).
const MAX_SUBNET_ID: u64 = 0x7fff_ffff_ffff_ffff;

pub(super) fn render(ctx: &RenderCtx<'_>, s: &Ipv6DelegatedAddressSpec, out: &mut Out) {
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
    let pd = ArtifactKey::new(ArtifactKind::Dhcp6PrefixDelegation, upstream.ifname.clone());
    let deps = vec![
        dep(&link.key, format!("assigned on {}", link.ifname)),
        dep(&pd, format!("derived from prefix delegation {}", s.prefix_delegation)),
    ];
    let subnet = s.subnet_id.as_deref().unwrap_or("0");
    let subnet_id = u64::from_str_radix(subnet.strip_prefix("0x").unwrap_or(subnet), 16)
        .ok()
        .filter(|id| *id <= MAX_SUBNET_ID);
    let (Some(subnet_id), Ok(suffix)) = (subnet_id, s.address_suffix.parse::<std::net::Ipv6Addr>())
    else {
        out.warn(format!(
            "subnetID {subnet:?} (at most 0x{MAX_SUBNET_ID:x}) or addressSuffix {:?} cannot be \
             used",
            s.address_suffix
        ));
        let kind = ArtifactKind::Dhcp6DelegatedAddress;
        out.ensure_opaque(kind, link.ifname.clone(), s, deps);
        return;
    };
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    // `[Network]` may appear more than once in a .network file; the backend writes the
    // section's other settings.
    let settings = vec![
        "[Network]".to_string(),
        "DHCPPrefixDelegation=yes".into(),
        format!("IPv6SendRA={}", yes_no(s.send_ra)),
        "[DHCPPrefixDelegation]".into(),
        format!("UplinkInterface={}", upstream.ifname),
        format!("SubnetId=0x{subnet_id:x}"),
        "Assign=yes".into(),
        format!("Token=static:{suffix}"),
        format!("Announce={}", yes_no(s.announce)),
    ];
    let spec =
        DhcpClientSpec::desired(DhcpBinding::DelegatedAddress, link.ifname.clone(), settings);
    out.ensure(ArtifactSpec::DhcpClient(spec), deps);
}

impl super::Render for routerd_model::spec::all::Ipv6DelegatedAddressSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        _: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, self, out);
    }
}
