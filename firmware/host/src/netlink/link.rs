//! `linux.link`: inventory and configurator for links, and the ifname↔index cache the other
//! netlink modules resolve link names through.
//!
//! Links without a kind in their spec (physical ports, veth, bridges made elsewhere) are only
//! modified: admin state and MTU. Links with a kind (VLANs) are created when absent; one that
//! exists as something else is a conflict and is left alone. routerd never deletes links.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};

use rtnetlink::packet_core::{NLM_F_CREATE, NLM_F_EXCL};

use super::conn::{Conn, NlError};
use super::convert::{self, NlLink, NlLinkInfo};
use crate::artifact::{Artifact, ArtifactKey, ArtifactSpec, LinkKind, LinkSpec, PppLinkSpec};
use crate::error::HostError;

/// The namespace's links by name and by index, as of the last dump.
///
/// Refreshed by every link observe and whenever a name or index is not found, so a batch of
/// operations on known links sends no lookup requests. An index can go stale when a link is
/// deleted and recreated under the same name; operations that fail with `ENODEV` refresh and
/// retry once ([`LinkCache::with_index`]).
#[derive(Debug, Default)]
pub(crate) struct LinkCache {
    table: Mutex<LinkTable>,
}

#[derive(Debug, Default)]
struct LinkTable {
    by_name: HashMap<String, u32>,
    by_index: HashMap<u32, String>,
}

impl LinkCache {
    /// Lists every link with one `RTM_GETLINK` dump and replaces the cache with the result.
    pub(crate) async fn refresh(&self, conn: &Conn) -> Result<Vec<NlLink>, NlError> {
        let links: Vec<NlLink> =
            conn.dump(convert::link_dump_request(), convert::link_from_nl).await?;
        let mut table = self.lock();
        table.by_name = links.iter().map(|l| (l.ifname.clone(), l.index)).collect();
        table.by_index = links.iter().map(|l| (l.index, l.ifname.clone())).collect();
        Ok(links)
    }

    /// The index of `ifname`, refreshing the cache once on a miss; `None` when no such link.
    pub(crate) async fn index_of(&self, conn: &Conn, ifname: &str) -> Result<Option<u32>, NlError> {
        if let Some(index) = self.cached_index(ifname) {
            return Ok(Some(index));
        }
        self.refresh(conn).await?;
        Ok(self.cached_index(ifname))
    }

    /// Index → name for every index in `indexes`, refreshing the cache once if any is unknown.
    ///
    /// Shape: indexes of links that vanished meanwhile are absent from the map.
    pub(crate) async fn names_of(
        &self,
        conn: &Conn,
        indexes: impl Iterator<Item = u32> + Clone,
    ) -> Result<HashMap<u32, String>, NlError> {
        let known = |cache: &Self| {
            let table = cache.lock();
            indexes.clone().all(|i| table.by_index.contains_key(&i))
        };
        if !known(self) {
            self.refresh(conn).await?;
        }
        Ok(self.lock().by_index.clone())
    }

    /// Runs `op_fn` with the index of `ifname` (or `None` when no link is named).
    ///
    /// Errors: [`HostError::Missing`] (`link X does not exist`) when the link is not there;
    /// `op_fn`'s kernel error as [`HostError::Rejected`] for `op`. An `ENODEV` answer (stale
    /// index) refreshes the cache and retries once.
    pub(crate) async fn with_index<F, Fut>(
        &self,
        conn: &Conn,
        key: &ArtifactKey,
        op: &'static str,
        ifname: Option<&str>,
        mut op_fn: F,
    ) -> Result<(), HostError>
    where
        F: FnMut(Option<u32>) -> Fut,
        Fut: Future<Output = Result<(), NlError>>,
    {
        let resolve = |index: Option<u32>, name: &str| {
            index.ok_or_else(|| HostError::Missing {
                key: key.clone(),
                what: format!("link {name}"),
            })
        };
        let Some(name) = ifname else {
            return op_fn(None).await.map_err(|e| e.rejected(key, op));
        };
        let cached = self.cached_index(name).is_some();
        let index = resolve(self.index_of(conn, name).await.map_err(|e| e.dump("links"))?, name)?;
        match op_fn(Some(index)).await {
            Err(e) if cached && e.errno() == Some(libc::ENODEV) => {
                self.refresh(conn).await.map_err(|e| e.dump("links"))?;
                let index = resolve(self.cached_index(name), name)?;
                op_fn(Some(index)).await.map_err(|e| e.rejected(key, op))
            }
            result => result.map_err(|e| e.rejected(key, op)),
        }
    }

    fn cached_index(&self, ifname: &str) -> Option<u32> {
        self.lock().by_name.get(ifname).copied()
    }

    fn lock(&self) -> MutexGuard<'_, LinkTable> {
        // The table is replaced whole under the lock: a panic elsewhere cannot leave it torn.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Lists every link of the namespace (one dump) and refreshes the cache.
///
/// Shape: one [`LinkSpec`] per link with `admin_up` (`IFF_UP`), `mtu` (`IFLA_MTU`) and `kind`
/// (`IFLA_LINKINFO`; a VLAN's parent by name) set; the listed links themselves, for other
/// kinds' inventories made from the same dump.
/// Errors: [`HostError::Dump`] when the dump fails.
pub(crate) async fn observe(
    conn: &Conn,
    links: &LinkCache,
) -> Result<(Vec<Artifact>, Vec<NlLink>), HostError> {
    let listed = links.refresh(conn).await.map_err(|e| e.dump("links"))?;
    let names = index_names(&listed);
    let artifacts =
        listed.iter().map(|l| Artifact::new(ArtifactSpec::Link(link_spec(l, &names)))).collect();
    Ok((artifacts, listed))
}

/// The PPP links among `listed` (one link dump), as `linux.ppp.link` artifacts with their
/// admin state and MTU.
pub(crate) fn ppp_from_links(listed: &[NlLink]) -> Vec<Artifact> {
    listed
        .iter()
        .filter(|l| matches!(&l.info, NlLinkInfo::Other(kind) if kind == convert::PPP_KIND))
        .map(|l| {
            Artifact::new(ArtifactSpec::PppLink(PppLinkSpec {
                ifname: l.ifname.clone(),
                admin_up: Some(l.admin_up),
                mtu: l.mtu,
            }))
        })
        .collect()
}

/// Index → name of every listed link.
pub(crate) fn index_names(listed: &[NlLink]) -> HashMap<u32, &str> {
    listed.iter().map(|l| (l.index, l.ifname.as_str())).collect()
}

/// The name of link `index` as iproute2 shows a peer: its name, or `if<index>` when it is not
/// a link of this namespace.
pub(crate) fn name_of(names: &HashMap<u32, &str>, index: u32) -> String {
    names.get(&index).map_or_else(|| format!("if{index}"), |n| (*n).to_string())
}

/// The spec of a listed link, parent indexes resolved through `names`.
fn link_spec(link: &NlLink, names: &HashMap<u32, &str>) -> LinkSpec {
    let kind = match &link.info {
        NlLinkInfo::Untyped => None,
        NlLinkInfo::Vlan { parent, id, protocol } => Some(LinkKind::Vlan {
            parent: parent.map(|p| name_of(names, p)).unwrap_or_default(),
            id: *id,
            protocol: *protocol,
        }),
        NlLinkInfo::Ip6Tnl(_) => Some(LinkKind::Other { name: "ip6tnl".to_string() }),
        NlLinkInfo::Other(name) => Some(LinkKind::Other { name: name.clone() }),
    };
    LinkSpec { ifname: link.ifname.clone(), admin_up: Some(link.admin_up), mtu: link.mtu, kind }
}

/// Creates link `spec.ifname` when `spec` has a kind routerd creates (a VLAN: `RTM_NEWLINK`
/// with `NLM_F_CREATE | NLM_F_EXCL`, see [`convert::vlan_create_to_nl`]); without a kind, only
/// sets the attributes of an existing link, like [`modify`] (routerd creates no physical
/// links).
///
/// Errors: [`HostError::Missing`] when the link (no kind) or the VLAN's parent does not exist;
/// [`HostError::Conflict`] when a link of that name appeared meanwhile, naming what it is;
/// [`HostError::Rejected`] with the kernel's errno otherwise (`EOPNOTSUPP`, "Unknown device
/// type", on a kernel without `8021q`); [`HostError::Invalid`] for a kind routerd only
/// observes.
pub(crate) async fn create(
    conn: &Conn,
    links: &LinkCache,
    key: &ArtifactKey,
    spec: &LinkSpec,
) -> Result<(), HostError> {
    let parent = match &spec.kind {
        None => return modify(conn, links, key, spec, "create").await,
        Some(LinkKind::Vlan { parent, .. }) => parent,
        Some(LinkKind::Other { name }) => {
            return Err(HostError::Invalid {
                key: key.clone(),
                message: format!("routerd does not create links of type {name}"),
            });
        }
    };
    let result = links
        .with_index(conn, key, "create", Some(parent), |index| async move {
            let Some(request) = index.and_then(|i| convert::vlan_create_to_nl(spec, i)) else {
                return Ok(());
            };
            conn.change(request, NLM_F_CREATE | NLM_F_EXCL).await
        })
        .await;
    match result {
        Err(refused @ HostError::Rejected { errno: Some(libc::EEXIST), .. }) => {
            let parent_index = links.index_of(conn, parent).await.ok().flatten();
            let same = |l: &NlLink| match (&l.info, &spec.kind) {
                (
                    NlLinkInfo::Vlan { parent: p, id, protocol },
                    Some(LinkKind::Vlan { id: want_id, protocol: want_protocol, .. }),
                ) => {
                    p.is_some() && *p == parent_index && id == want_id && protocol == want_protocol
                }
                _ => false,
            };
            Err(conflict(conn, links, key, &spec.ifname, describe(spec), same, refused).await)
        }
        other => other,
    }
}

/// Changes the existing link `observed` into `desired`: sets admin state and MTU (see
/// [`modify`]). When `desired` has a kind, `observed` must have exactly that kind (type, VLAN
/// ID, parent, protocol); the kernel cannot change those in place and routerd never deletes a
/// link, so anything else is a conflict and nothing is sent.
///
/// Errors: [`HostError::Conflict`] naming what is there and what the config wants; as
/// [`modify`] otherwise.
pub(crate) async fn modify_existing(
    conn: &Conn,
    links: &LinkCache,
    key: &ArtifactKey,
    observed: &LinkSpec,
    desired: &LinkSpec,
) -> Result<(), HostError> {
    if desired.kind.is_some() && observed.kind != desired.kind {
        return Err(HostError::Conflict {
            key: key.clone(),
            found: describe(observed),
            wanted: describe(desired),
        });
    }
    modify(conn, links, key, desired, "modify").await
}

/// Sets admin state (`IFF_UP`) and MTU (`IFLA_MTU`) of link `spec.ifname`, each only when
/// `spec` gives it (`RTM_SETLINK`).
///
/// Errors: [`HostError::Missing`] when the link does not exist; [`HostError::Rejected`] with
/// errno when the kernel refuses (MTU out of the device's range: `EINVAL`).
pub(crate) async fn modify(
    conn: &Conn,
    links: &LinkCache,
    key: &ArtifactKey,
    spec: &LinkSpec,
    op: &'static str,
) -> Result<(), HostError> {
    links
        .with_index(conn, key, op, Some(&spec.ifname), |index| async move {
            let Some(request) = index.and_then(|i| convert::link_set_to_nl(i, spec)) else {
                return Ok(());
            };
            // RTM_SETLINK only changes an existing link: no create flags.
            conn.change(request, 0).await
        })
        .await
}

/// The error for a create of `ifname` the kernel refused with `EEXIST`: lists the links again
/// and names what is in the way, either a link holding the name or (`same`) one with the same
/// identity under another name (the kernel allows one VLAN per parent, protocol and ID, and
/// one ip6tnl per local, remote and underlying link). `wanted` is what the config declares;
/// `refused` is returned when neither is found.
pub(crate) async fn conflict(
    conn: &Conn,
    links: &LinkCache,
    key: &ArtifactKey,
    ifname: &str,
    wanted: String,
    same: impl Fn(&NlLink) -> bool,
    refused: HostError,
) -> HostError {
    let Ok(listed) = links.refresh(conn).await else { return refused };
    let names = index_names(&listed);
    let found = match listed.iter().find(|l| l.ifname == ifname) {
        Some(_) if ifname == super::ip6_tunnel::FALLBACK_IFNAME => {
            format!("the kernel's fallback tunnel device {ifname}")
        }
        Some(l) => describe(&link_spec(l, &names)),
        None => match listed.iter().find(|l| same(l)) {
            Some(l) => format!(
                "{}, which the kernel allows only once (same parameters, other name)",
                describe(&link_spec(l, &names))
            ),
            None => return refused,
        },
    };
    HostError::Conflict { key: key.clone(), found, wanted }
}

/// `link IFNAME` with its type, for conflict messages (`link eth1.20: vlan 30 (802.1Q) on
/// eth1`, `link eth1.20: veth`).
pub(crate) fn describe(spec: &LinkSpec) -> String {
    match &spec.kind {
        Some(kind) => format!("link {}: {kind}", spec.ifname),
        None => format!("link {} without a link type (a physical or unknown device)", spec.ifname),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::VlanProtocol;

    /// The link dump of this process's own namespace (`lo` at least; no privilege needed)
    /// carries no per-link IPv6 counters: the kernel honours the request's
    /// `RTEXT_FILTER_SKIP_STATS`.
    #[test]
    fn the_link_dump_leaves_the_ipv6_counters_out() {
        use rtnetlink::packet_route::RouteNetlinkMessage;
        use rtnetlink::packet_route::link::{AfSpecInet6, AfSpecUnspec, LinkAttribute};

        let conn = Conn::open(&crate::netns::Netns::current()).expect("a netlink socket");
        let messages = futures::executor::block_on(
            conn.dump(convert::link_dump_request(), |m| Some(m.clone())),
        )
        .expect("the link dump");
        let mut inet6 = 0;
        for m in &messages {
            let RouteNetlinkMessage::NewLink(link) = m else { continue };
            for attr in &link.attributes {
                let LinkAttribute::AfSpecUnspec(specs) = attr else { continue };
                for spec in specs {
                    let AfSpecUnspec::Inet6(attrs) = spec else { continue };
                    inet6 += 1;
                    let counters = attrs
                        .iter()
                        .filter(|a| matches!(a, AfSpecInet6::Stats(_) | AfSpecInet6::Icmp6Stats(_)))
                        .count();
                    assert_eq!(counters, 0, "link {} carries its IPv6 counters", link.header.index);
                }
            }
        }
        // Without IPv6 on this machine there is nothing to leave out, and nothing to check.
        if std::path::Path::new("/proc/net/if_inet6").exists() {
            assert!(inet6 > 0, "no link carries IPv6 attributes at all");
        }
    }

    fn listed(index: u32, ifname: &str, info: NlLinkInfo) -> NlLink {
        NlLink { index, ifname: ifname.into(), admin_up: false, mtu: Some(1500), info }
    }

    #[test]
    fn listed_vlans_name_their_parent_and_other_types_keep_their_kind() {
        let vlan = NlLinkInfo::Vlan { parent: Some(2), id: 20, protocol: VlanProtocol::Ieee8021Q };
        let links = [
            listed(2, "eth1", NlLinkInfo::Untyped),
            listed(3, "eth1.20", vlan),
            listed(4, "ve0", NlLinkInfo::Other("veth".into())),
        ];
        let names = index_names(&links);
        let specs: Vec<LinkSpec> = links.iter().map(|l| link_spec(l, &names)).collect();
        assert_eq!(specs[0].kind, None);
        assert_eq!(
            specs[1].kind,
            Some(LinkKind::Vlan {
                parent: "eth1".into(),
                id: 20,
                protocol: VlanProtocol::Ieee8021Q
            })
        );
        assert_eq!(specs[2].kind, Some(LinkKind::Other { name: "veth".into() }));
        assert_eq!(describe(&specs[1]), "link eth1.20: vlan 20 (802.1Q) on eth1");
        assert_eq!(describe(&specs[2]), "link ve0: veth");
    }
}
