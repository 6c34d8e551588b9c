//! `linux.ipv4.routeTable`: numbered IPv4 tables routerd fills.
//!
//! The kernel has no table object: a table exists while it holds routes. So a table is observed
//! when it holds at least one route with [`ROUTERD_ROUTE_PROTOCOL`]; creating and deleting one
//! are no-ops on the host: its routes are artifacts of their own, which the ledger records one
//! by one ([`delete`]).

use std::collections::BTreeSet;

use super::conn::Conn;
use super::convert::IpFamily;
use super::route;
use crate::artifact::{
    Artifact, ArtifactKey, ArtifactSpec, RESERVED_ROUTE_TABLES, ROUTERD_ROUTE_PROTOCOL,
    RouteTableSpec,
};
use crate::error::HostError;

/// Lists the IPv4 tables that hold at least one route of protocol [`ROUTERD_ROUTE_PROTOCOL`]
/// (one route dump), except the system tables [`RESERVED_ROUTE_TABLES`].
///
/// Shape: one [`RouteTableSpec`] per table, ascending.
/// Errors: [`HostError::Dump`] when the dump fails.
pub(crate) async fn observe(conn: &Conn) -> Result<Vec<Artifact>, HostError> {
    let routes = route::list(conn, IpFamily::V4).await.map_err(|e| e.dump("routes"))?;
    Ok(tables_of(routes.iter().map(|r| (r.protocol, r.table))))
}

/// The same listing, derived from observed IPv4 route artifacts (one dump serves both kinds).
pub(crate) fn from_routes(routes: &[Artifact]) -> Vec<Artifact> {
    tables_of(routes.iter().filter_map(|a| match &a.spec {
        ArtifactSpec::Route(r) => Some((r.protocol, r.table)),
        _ => None,
    }))
}

fn tables_of(routes: impl Iterator<Item = (u8, u32)>) -> Vec<Artifact> {
    let tables: BTreeSet<u32> = routes
        .filter(|(protocol, table)| {
            *protocol == ROUTERD_ROUTE_PROTOCOL && !RESERVED_ROUTE_TABLES.contains(table)
        })
        .map(|(_, table)| table)
        .collect();
    tables
        .into_iter()
        .map(|table| Artifact::new(ArtifactSpec::RouteTable(RouteTableSpec { table })))
        .collect()
}

/// Deletes the table: removes no route. Each route routerd installed is its own ledger-recorded
/// `linux.ipv4.route`, deleted on its own, and a table is gone once its last route is. Seed 000
/// let a delete flush the table's routerd-protocol routes, which took routes the ledger does not
/// record (a hand-made route with protocol 208); ADR 0002 records the change.
///
/// Errors: [`HostError::Invalid`] for a system table ([`RESERVED_ROUTE_TABLES`]).
pub(crate) async fn delete(
    _conn: &Conn,
    key: &ArtifactKey,
    spec: &RouteTableSpec,
) -> Result<(), HostError> {
    if RESERVED_ROUTE_TABLES.contains(&spec.table) {
        return Err(HostError::Invalid {
            key: key.clone(),
            message: format!("table {} belongs to the system and is never flushed", spec.table),
        });
    }
    Ok(())
}
