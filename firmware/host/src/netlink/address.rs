//! `linux.ipv4.address` / `linux.ipv6.address`: inventory and configurator for addresses on
//! links.
//!
//! Addresses have no attribute that can change in place: a different address is a different
//! artifact, so the backend asks for delete + create ([`super::NetlinkBackend`]'s
//! `needs_recreate`).

use rtnetlink::packet_core::{NLM_F_CREATE, NLM_F_EXCL};

use super::conn::Conn;
use super::convert::{self, IpFamily, NlAddress};
use super::link::LinkCache;
use crate::artifact::{AddressSpec, Artifact, ArtifactKey, ArtifactSpec};
use crate::error::HostError;

/// Lists every address of `family` on every link (one dump), except IPv6 link-local addresses
/// (`fe80::/10`), which the kernel makes itself.
///
/// Shape: one [`AddressSpec`] per address; addresses whose link vanished during the listing are
/// left out.
/// Errors: [`HostError::Dump`] when a dump fails.
pub(crate) async fn observe(
    conn: &Conn,
    links: &LinkCache,
    family: IpFamily,
) -> Result<Vec<Artifact>, HostError> {
    let listed: Vec<NlAddress> = conn
        .dump(convert::address_dump_request(family), convert::address_from_nl)
        .await
        .map_err(|e| e.dump("addresses"))?;
    let names =
        links.names_of(conn, listed.iter().map(|a| a.index)).await.map_err(|e| e.dump("links"))?;
    let artifacts = listed
        .into_iter()
        .filter_map(|a| {
            let ifname = names.get(&a.index)?.clone();
            Some(Artifact::new(ArtifactSpec::Address(AddressSpec { ifname, address: a.address })))
        })
        .collect();
    Ok(artifacts)
}

/// The addresses of `family` that can be used as a source now (neither tentative nor failed
/// duplicate address detection), except IPv6 link-local ones; as [`observe`] otherwise.
///
/// Errors: [`HostError::Dump`] when a dump fails.
pub(crate) async fn usable(
    conn: &Conn,
    links: &LinkCache,
    family: IpFamily,
) -> Result<Vec<AddressSpec>, HostError> {
    let usable = |m: &_| convert::address_from_nl(m).filter(|a| a.usable);
    let listed: Vec<NlAddress> = conn
        .dump(convert::address_dump_request(family), usable)
        .await
        .map_err(|e| e.dump("addresses"))?;
    let names =
        links.names_of(conn, listed.iter().map(|a| a.index)).await.map_err(|e| e.dump("links"))?;
    Ok(listed
        .into_iter()
        .filter_map(|a| {
            Some(AddressSpec { ifname: names.get(&a.index)?.clone(), address: a.address })
        })
        .collect())
}

/// Adds `spec.address` to link `spec.ifname` (`ip address add`: `RTM_NEWADDR` with
/// `NLM_F_CREATE | NLM_F_EXCL`).
///
/// Errors: [`HostError::Missing`] when the link does not exist; [`HostError::Rejected`] with
/// `EEXIST` when the address is already there.
pub(crate) async fn create(
    conn: &Conn,
    links: &LinkCache,
    key: &ArtifactKey,
    spec: &AddressSpec,
) -> Result<(), HostError> {
    links
        .with_index(conn, key, "create", Some(&spec.ifname), |index| async move {
            let request = convert::address_to_nl(index.unwrap_or_default(), &spec.address, false);
            conn.change(request, NLM_F_CREATE | NLM_F_EXCL).await
        })
        .await
}

/// Removes `spec.address` from link `spec.ifname` (`RTM_DELADDR`).
///
/// A link that no longer exists took its addresses with it: that is success.
/// Errors: [`HostError::Rejected`] (`EADDRNOTAVAIL`) when the address is not on the link.
pub(crate) async fn delete(
    conn: &Conn,
    links: &LinkCache,
    key: &ArtifactKey,
    spec: &AddressSpec,
) -> Result<(), HostError> {
    let result = links
        .with_index(conn, key, "delete", Some(&spec.ifname), |index| async move {
            let request = convert::address_to_nl(index.unwrap_or_default(), &spec.address, true);
            conn.change(request, 0).await
        })
        .await;
    match result {
        Err(HostError::Missing { .. }) => Ok(()),
        other => other,
    }
}
