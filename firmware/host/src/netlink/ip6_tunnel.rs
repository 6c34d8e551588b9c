//! `linux.ipip6.tunnel`: inventory and configurator for ip6tnl links (IPv4/IPv6 in IPv6,
//! RFC 2473; DS-Lite's softwire, RFC 6333), over rtnetlink like `ip -6 tunnel`.
//!
//! Listed from the same link dump as `linux.link` (see [`super::NetlinkBackend`]). The kernel's
//! fallback device `ip6tnl0`, which exists in every namespace once `ip6_tunnel` is loaded, is
//! never listed: it is not ours, cannot be changed or deleted, and no config may name it.

use rtnetlink::packet_core::{NLM_F_CREATE, NLM_F_EXCL};

use super::conn::Conn;
use super::convert::{self, NlLink, NlLinkInfo};
use super::link::{self, LinkCache};
use crate::artifact::{Artifact, ArtifactKey, ArtifactSpec, Ip6TunnelSpec};
use crate::error::HostError;

/// Name of the ip6tnl fallback device (`ip6_tnl_init_net` in `net/ipv6/ip6_tunnel.c`).
pub(crate) const FALLBACK_IFNAME: &str = "ip6tnl0";

/// The ip6tnl links among `listed` (one link dump), except the fallback device.
///
/// Shape: one [`Ip6TunnelSpec`] per tunnel, with `mtu` and `admin_up` set and the underlying
/// link by name (`if<index>` when it is not in this namespace).
pub(crate) fn from_links(listed: &[NlLink]) -> Vec<Artifact> {
    let names = link::index_names(listed);
    listed
        .iter()
        .filter(|l| l.ifname != FALLBACK_IFNAME)
        .filter_map(|l| {
            let NlLinkInfo::Ip6Tnl(t) = &l.info else { return None };
            let spec = Ip6TunnelSpec {
                ifname: l.ifname.clone(),
                mode: t.mode,
                remote: t.remote,
                local: t.local,
                underlying: t.underlying.map(|i| link::name_of(&names, i)),
                encap_limit: t.encap_limit,
                mtu: l.mtu,
                admin_up: Some(l.admin_up),
            };
            Some(Artifact::new(ArtifactSpec::Ip6Tunnel(spec)))
        })
        .collect()
}

/// Lists the ip6tnl links of the namespace (one link dump; refreshes the link cache).
///
/// Errors: [`HostError::Dump`] when the dump fails.
pub(crate) async fn observe(conn: &Conn, links: &LinkCache) -> Result<Vec<Artifact>, HostError> {
    let listed = links.refresh(conn).await.map_err(|e| e.dump("links"))?;
    Ok(from_links(&listed))
}

/// Creates the tunnel (`ip -6 tunnel add`: `RTM_NEWLINK` kind `ip6tnl` with
/// `NLM_F_CREATE | NLM_F_EXCL`, brought up in the same message when `admin_up`).
///
/// Errors: [`HostError::Missing`] when `underlying` names no link; [`HostError::Conflict`]
/// when the name is taken, or a tunnel with the same endpoints exists under another name;
/// [`HostError::Rejected`] with the kernel's errno otherwise (`EOPNOTSUPP`, "Unknown device
/// type", on a kernel without `ip6_tunnel`).
pub(crate) async fn create(
    conn: &Conn,
    links: &LinkCache,
    key: &ArtifactKey,
    spec: &Ip6TunnelSpec,
) -> Result<(), HostError> {
    let underlying = underlying_index(conn, links, key, spec).await?;
    let request = convert::ip6_tunnel_to_nl(spec, None, underlying);
    match conn.change(request, NLM_F_CREATE | NLM_F_EXCL).await {
        Ok(()) => Ok(()),
        Err(e) if e.errno() == Some(libc::EEXIST) => {
            let same = |l: &NlLink| match &l.info {
                NlLinkInfo::Ip6Tnl(t) => {
                    t.remote == spec.remote && t.local == spec.local && t.underlying == underlying
                }
                _ => false,
            };
            let refused = e.rejected(key, "create");
            Err(link::conflict(conn, links, key, &spec.ifname, describe(spec), same, refused).await)
        }
        Err(e) => Err(e.rejected(key, "create")),
    }
}

/// Changes the existing tunnel into `spec` in place (`ip -6 tunnel change`: `RTM_NEWLINK` on
/// its index without `NLM_F_CREATE`; the kernel's `ip6_tnl_changelink` takes every parameter,
/// and `IFLA_MTU` / `IFF_UP` are applied after it).
///
/// Errors: [`HostError::Missing`] when the tunnel or the underlying link is gone;
/// [`HostError::Rejected`] (`EEXIST`) when another tunnel already has the new endpoints.
pub(crate) async fn modify(
    conn: &Conn,
    links: &LinkCache,
    key: &ArtifactKey,
    spec: &Ip6TunnelSpec,
) -> Result<(), HostError> {
    let underlying = underlying_index(conn, links, key, spec).await?;
    links
        .with_index(conn, key, "modify", Some(&spec.ifname), |index| async move {
            let Some(index) = index else { return Ok(()) };
            conn.change(convert::ip6_tunnel_to_nl(spec, Some(index), underlying), 0).await
        })
        .await
}

/// Deletes the tunnel (`RTM_DELLINK`). A tunnel that is already gone is success.
///
/// Errors: [`HostError::Rejected`] when the kernel refuses.
pub(crate) async fn delete(
    conn: &Conn,
    links: &LinkCache,
    key: &ArtifactKey,
    spec: &Ip6TunnelSpec,
) -> Result<(), HostError> {
    let result = links
        .with_index(conn, key, "delete", Some(&spec.ifname), |index| async move {
            let Some(index) = index else { return Ok(()) };
            conn.change(convert::link_delete_to_nl(index), 0).await
        })
        .await;
    match result {
        Err(HostError::Missing { .. }) => Ok(()),
        other => other,
    }
}

/// The index of `spec.underlying`, if any.
async fn underlying_index(
    conn: &Conn,
    links: &LinkCache,
    key: &ArtifactKey,
    spec: &Ip6TunnelSpec,
) -> Result<Option<u32>, HostError> {
    let Some(name) = &spec.underlying else { return Ok(None) };
    match links.index_of(conn, name).await.map_err(|e| e.dump("links"))? {
        Some(index) => Ok(Some(index)),
        None => Err(HostError::Missing { key: key.clone(), what: format!("link {name}") }),
    }
}

/// The tunnel as `ip -6 tunnel` would describe it, for conflict messages.
fn describe(spec: &Ip6TunnelSpec) -> String {
    let mut out = format!("ip6tnl {} mode {} remote {}", spec.ifname, spec.mode, spec.remote);
    let local = spec.local.map_or_else(|| "any".to_string(), |l| l.to_string());
    out.push_str(&format!(" local {local}"));
    if let Some(dev) = &spec.underlying {
        out.push_str(&format!(" dev {dev}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::net::Ipv6Addr;

    use super::*;
    use crate::artifact::{EncapLimit, Ip6TunnelMode};
    use crate::netlink::convert::NlIp6Tunnel;

    fn listed(index: u32, ifname: &str, info: NlLinkInfo) -> NlLink {
        NlLink { index, ifname: ifname.into(), admin_up: true, mtu: Some(1452), info }
    }

    fn tunnel(underlying: Option<u32>) -> NlLinkInfo {
        NlLinkInfo::Ip6Tnl(NlIp6Tunnel {
            mode: Ip6TunnelMode::Ipip6,
            remote: "2001:db8::1".parse().expect("literal"),
            local: None,
            underlying,
            encap_limit: EncapLimit::DEFAULT,
        })
    }

    #[test]
    fn the_kernel_fallback_device_is_never_listed_and_underlying_links_get_names() {
        let fallback = NlLinkInfo::Ip6Tnl(NlIp6Tunnel {
            mode: Ip6TunnelMode::Ip6ip6,
            remote: Ipv6Addr::UNSPECIFIED,
            local: None,
            underlying: None,
            encap_limit: EncapLimit::Limit(0),
        });
        let links = [
            listed(1, "lo", NlLinkInfo::Untyped),
            listed(2, "eth0", NlLinkInfo::Untyped),
            listed(3, FALLBACK_IFNAME, fallback),
            listed(4, "dslite0", tunnel(Some(2))),
            listed(5, "far0", tunnel(Some(77))),
            listed(6, "ve0", NlLinkInfo::Other("veth".into())),
        ];
        let tunnels = from_links(&links);
        let names: Vec<&str> = tunnels.iter().map(|a| a.key.name.as_str()).collect();
        assert_eq!(names, ["dslite0", "far0"]);
        let ArtifactSpec::Ip6Tunnel(dslite) = &tunnels[0].spec else { panic!("tunnel spec") };
        assert_eq!(dslite.underlying.as_deref(), Some("eth0"));
        assert_eq!((dslite.mtu, dslite.admin_up), (Some(1452), Some(true)));
        let ArtifactSpec::Ip6Tunnel(far) = &tunnels[1].spec else { panic!("tunnel spec") };
        assert_eq!(far.underlying.as_deref(), Some("if77"), "a link of another namespace");
    }
}
