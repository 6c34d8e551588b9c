//! `linux.ipv4.route` / `linux.ipv6.route`: inventory and configurator for unicast routes in
//! every table but `local`.
//!
//! Routes routerd installs carry [`ROUTERD_ROUTE_PROTOCOL`]. A route's identity in the kernel is
//! (table, destination, metric) (plus TOS, which routerd leaves 0), the same triple as its
//! artifact key, so modify is an `NLM_F_REPLACE` of the same key.

use ipnet::Ipv6Net;
use rtnetlink::packet_core::{NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE};
use rtnetlink::packet_route::RouteNetlinkMessage;

use super::conn::{Conn, NlError};
use super::convert::{self, IpFamily, NlRoute, RoutePurpose};
use super::link::LinkCache;
use crate::artifact::{Artifact, ArtifactKey, ArtifactSpec, ROUTERD_ROUTE_PROTOCOL, RouteSpec};
use crate::error::HostError;

/// Every unicast route of `family` outside table `local`, with one `RTM_GETROUTE` dump.
///
/// Shape: kernel order; kernel-made IPv6 routes (`fe80::/64`, `ff00::/8`) left out
/// ([`convert::route_from_nl`]).
pub(crate) async fn list(conn: &Conn, family: IpFamily) -> Result<Vec<NlRoute>, NlError> {
    conn.dump(convert::route_dump_request(family), convert::route_from_nl).await
}

/// The IPv6 prefixes delegated to this router, as the DHCPv6 client marks them: one
/// unreachable route of protocol `dhcp` in table `main` per prefix
/// ([`convert::delegated_prefix_from_nl`]), in kernel order.
pub(crate) async fn delegated_prefixes(conn: &Conn) -> Result<Vec<Ipv6Net>, NlError> {
    conn.dump(convert::route_dump_request(IpFamily::V6), convert::delegated_prefix_from_nl).await
}

/// Lists the unicast routes of `family` in all tables except `local` (255): one route dump and
/// at most one link dump (to name output links not yet in the cache).
///
/// Shape: one [`RouteSpec`] per route, with `metric` 0 when `RTA_PRIORITY` is absent and `oif`
/// `None` when the route has none or its link vanished during the listing.
/// Errors: [`HostError::Dump`] when a dump fails.
pub(crate) async fn observe(
    conn: &Conn,
    links: &LinkCache,
    family: IpFamily,
) -> Result<Vec<Artifact>, HostError> {
    let routes = list(conn, family).await.map_err(|e| e.dump("routes"))?;
    let names = links
        .names_of(conn, routes.iter().filter_map(|r| r.oif))
        .await
        .map_err(|e| e.dump("links"))?;
    let artifacts = routes
        .into_iter()
        .map(|r| {
            let oif = r.oif.and_then(|i| names.get(&i).cloned());
            Artifact::new(ArtifactSpec::Route(spec_of(r, oif)))
        })
        .collect();
    Ok(artifacts)
}

/// Adds `spec` as `ip route add` does (`NLM_F_CREATE | NLM_F_EXCL`), with `rtm_protocol`
/// [`ROUTERD_ROUTE_PROTOCOL`] whatever `spec.protocol` says.
///
/// Errors: [`HostError::Missing`] when `spec.oif` names no link; [`HostError::Rejected`] with
/// errno and the kernel's message otherwise, e.g. `ENETUNREACH` ("Nexthop has invalid
/// gateway") when no connected route reaches the gateway, `EEXIST` when the key is taken.
pub(crate) async fn create(
    conn: &Conn,
    links: &LinkCache,
    key: &ArtifactKey,
    spec: &RouteSpec,
) -> Result<(), HostError> {
    install(conn, links, key, spec, "create", NLM_F_CREATE | NLM_F_EXCL).await
}

/// Replaces the route with `observed`'s key by `desired` (`ip route replace`:
/// `NLM_F_CREATE | NLM_F_REPLACE`), with `rtm_protocol` [`ROUTERD_ROUTE_PROTOCOL`].
///
/// Errors: [`HostError::Invalid`] when the keys differ (table, destination or metric changed:
/// that is delete + create); otherwise as [`create`].
pub(crate) async fn modify(
    conn: &Conn,
    links: &LinkCache,
    observed: &Artifact,
    desired: &Artifact,
    spec: &RouteSpec,
) -> Result<(), HostError> {
    if observed.key != desired.key {
        return Err(HostError::Invalid {
            key: desired.key.clone(),
            message: format!("modify cannot move route {} to another key", observed.key),
        });
    }
    install(conn, links, &desired.key, spec, "modify", NLM_F_CREATE | NLM_F_REPLACE).await
}

/// Deletes exactly the route `spec` describes: table, destination, metric, protocol (and the
/// gateway when known), so a route of another protocol under the same key is never touched.
///
/// Errors: [`HostError::Rejected`] (`ESRCH`) when no such route exists.
pub(crate) async fn delete(
    conn: &Conn,
    key: &ArtifactKey,
    spec: &RouteSpec,
) -> Result<(), HostError> {
    remove(conn, spec).await.map_err(|e| e.rejected(key, "delete"))
}

/// Sends `RTM_DELROUTE` for `spec` ([`RoutePurpose::Remove`]).
pub(crate) async fn remove(conn: &Conn, spec: &RouteSpec) -> Result<(), NlError> {
    let request = convert::route_to_nl(spec, None, RoutePurpose::Remove);
    conn.change(RouteNetlinkMessage::DelRoute(request), 0).await
}

/// The spec of a listed route whose output link is named `oif`.
pub(crate) fn spec_of(route: NlRoute, oif: Option<String>) -> RouteSpec {
    RouteSpec {
        table: route.table,
        destination: route.destination,
        gateway: route.gateway,
        oif,
        metric: route.metric,
        protocol: route.protocol,
    }
}

async fn install(
    conn: &Conn,
    links: &LinkCache,
    key: &ArtifactKey,
    spec: &RouteSpec,
    op: &'static str,
    flags: u16,
) -> Result<(), HostError> {
    let ours = RouteSpec { protocol: ROUTERD_ROUTE_PROTOCOL, ..spec.clone() };
    let ours = &ours;
    links
        .with_index(conn, key, op, ours.oif.as_deref(), |oif| async move {
            let request = convert::route_to_nl(ours, oif, RoutePurpose::Install);
            conn.change(RouteNetlinkMessage::NewRoute(request), flags).await
        })
        .await
}
