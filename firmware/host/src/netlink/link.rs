//! `linux.link`: inventory and configurator for existing links, and the ifname↔index cache the
//! other netlink modules resolve link names through.
//!
//! routerd never creates or deletes links of this kind: it sets the admin state and the MTU of
//! links that exist (physical ports, veth, bridges made elsewhere).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::conn::{Conn, NlError};
use super::convert::{self, NlLink};
use crate::artifact::{Artifact, ArtifactKey, ArtifactSpec, LinkSpec};
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
        let messages = conn.dump(convert::link_dump_request()).await?;
        let links: Vec<NlLink> = messages.iter().filter_map(convert::link_from_nl).collect();
        let mut table = self.lock();
        table.by_name = links.iter().map(|l| (l.spec.ifname.clone(), l.index)).collect();
        table.by_index = links.iter().map(|l| (l.index, l.spec.ifname.clone())).collect();
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
/// Shape: one [`LinkSpec`] per link with `admin_up` (`IFF_UP`) and `mtu` (`IFLA_MTU`) set.
/// Errors: [`HostError::Dump`] when the dump fails.
pub(crate) async fn observe(conn: &Conn, links: &LinkCache) -> Result<Vec<Artifact>, HostError> {
    let listed = links.refresh(conn).await.map_err(|e| e.dump("links"))?;
    Ok(listed.into_iter().map(|l| Artifact::new(ArtifactSpec::Link(l.spec))).collect())
}

/// "Creates" a link: routerd does not create links of this kind, so this only succeeds when the
/// link already exists, and then sets the attributes `spec` gives, like [`modify`].
///
/// Errors: [`HostError::Missing`] (`link X does not exist`) when there is no such link.
pub(crate) async fn create(
    conn: &Conn,
    links: &LinkCache,
    key: &ArtifactKey,
    spec: &LinkSpec,
) -> Result<(), HostError> {
    modify(conn, links, key, spec, "create").await
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
