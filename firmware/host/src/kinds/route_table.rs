//! `linux.ipv4.routeTable`: numbered tables routerd fills. Configurator and inventory:
//! [`crate::netlink`]'s `route_table.rs`.

use serde::{Deserialize, Serialize};

use super::orphans::{Kept, OrphanRule};
use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// Tables that are never a `linux.ipv4.routeTable` artifact: `default` (253), `main` (254)
/// and `local` (255) belong to the whole system (`include/uapi/linux/rtnetlink.h`).
pub const RESERVED_ROUTE_TABLES: [u32; 3] = [253, super::route::MAIN_ROUTE_TABLE, 255];

/// `linux.ipv4.routeTable`: a numbered table whose routes routerd installs.
///
/// Observed: a table holding at least one route with [`ROUTERD_ROUTE_PROTOCOL`](super::route::ROUTERD_ROUTE_PROTOCOL). Create is a
/// no-op (the kernel creates tables implicitly); delete flushes the routes of our protocol in
/// that table, and only those (seed 000, "Orphans").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteTableSpec {
    /// Table number, 1..=4294967295 except 253..=255 (default, main, local).
    pub table: u32,
}

impl ArtifactType for RouteTableSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::Ipv4RouteTable, self.table.to_string())
    }

    observed_as_self!(RouteTable);

    /// A table has no attributes beside its number.
    fn drift(&self, _: &Self, _: &mut Diffs) {}

    fn in_routerd_namespace(&self) -> bool {
        true
    }
}

/// Orphans (ADR 0002): deleted when the ledger records it and it holds no route the ledger does not.
pub const ORPHANS: OrphanRule = OrphanRule::RecordedAndEmpty {
    deleted: "route table recorded in the ledger; its routes go one by one, as the ledger records them",
    holds_foreign: Kept {
        reason: "route table recorded in the ledger, but it holds routes the ledger does not record",
        remediation: "the table stays for those routes; delete them by hand if they are stale",
    },
};
