//! `linux.ipv4.route` and `linux.ipv6.route`: unicast routes, named `table:destination:metric`.
//! Configurator and inventory: [`crate::netlink`]'s `route.rs`.

use std::net::IpAddr;

use ipnet::IpNet;
use serde::{Deserialize, Serialize};

use super::orphans::OrphanRule;
use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// Route protocol number (`rtm_protocol`) on every route routerd installs.
///
/// The kernel does not interpret values above `RTPROT_STATIC` (4); FRR uses 186..=198 and
/// iproute2's `rt_protos` names 0..=18, 42 and 99. 208 is unused by both. Shown by `ip route` as
/// `proto 208` (or `proto routerd` with the board's `rt_protos.d/routerd.conf`).
pub const ROUTERD_ROUTE_PROTOCOL: u8 = 208;

/// `linux.ipv4.route` / `linux.ipv6.route`, unicast only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteSpec {
    /// Routing table number (`RTA_TABLE`); 254 is `main`.
    pub table: u32,
    /// Destination prefix (`RTA_DST` + `rtm_dst_len`), host bits clear.
    pub destination: IpNet,
    /// Next hop (`RTA_GATEWAY`); `None` for a device route.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<IpAddr>,
    /// Output link (`RTA_OIF`), by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oif: Option<String>,
    /// Route metric (`RTA_PRIORITY`), part of the route's identity in the kernel.
    pub metric: u32,
    /// `rtm_protocol`: [`ROUTERD_ROUTE_PROTOCOL`] for routes we install; as observed otherwise.
    pub protocol: u8,
}

/// The `main` routing table (`RT_TABLE_MAIN`, `include/uapi/linux/rtnetlink.h`): where routes
/// without a table go, and the one default routes are read from.
pub const MAIN_ROUTE_TABLE: u32 = 254;

impl ArtifactType for RouteSpec {
    type Observed = Self;

    /// The kind follows the destination's family.
    fn key(&self) -> ArtifactKey {
        let kind = match self.destination {
            IpNet::V4(_) => ArtifactKind::Ipv4Route,
            IpNet::V6(_) => ArtifactKind::Ipv6Route,
        };
        ArtifactKey::new(kind, format!("{}:{}:{}", self.table, self.destination, self.metric))
    }

    observed_as_self!(Route);

    /// Gateway and protocol; the output link when desired.
    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare("gateway", &self.gateway, &o.gateway);
        diffs.compare_set("oif", &self.oif, &o.oif);
        diffs.compare("protocol", &self.protocol, &o.protocol);
    }

    fn in_routerd_namespace(&self) -> bool {
        self.protocol == ROUTERD_ROUTE_PROTOCOL
    }
}

/// Orphans (ADR 0002): deleted only when it carries routerd's protocol and the ledger records it.
pub const ORPHANS: OrphanRule = OrphanRule::RecordedInNamespace {
    deleted: "routerd-protocol route recorded in the ledger",
    unrecorded: None,
};
