//! `linux.ipv4.address` and `linux.ipv6.address`: addresses on links, named
//! `ifname/addr/prefixlen`. Configurator and inventory: [`crate::netlink`]'s `address.rs`.

use ipnet::IpNet;
use serde::{Deserialize, Serialize};

use super::orphans::{Kept, OrphanRule};
use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// `linux.ipv4.address` / `linux.ipv6.address`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AddressSpec {
    /// Link the address is on.
    pub ifname: String,
    /// Address with prefix length (`IFA_LOCAL`/`IFA_ADDRESS` + `ifa_prefixlen`).
    pub address: IpNet,
}

impl ArtifactType for AddressSpec {
    type Observed = Self;

    /// The kind follows the address family.
    fn key(&self) -> ArtifactKey {
        let kind = match self.address {
            IpNet::V4(_) => ArtifactKind::Ipv4Address,
            IpNet::V6(_) => ArtifactKind::Ipv6Address,
        };
        ArtifactKey::new(kind, format!("{}/{}", self.ifname, self.address))
    }

    observed_as_self!(Address);

    /// The key already holds ifname and address; nothing else is compared.
    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        if self != o {
            diffs.push("address", &self.address, &o.address);
        }
    }

    /// An address is recreated whenever it differs: no attribute changes in place. (Routes,
    /// links, tunnels, tables and rules are modified; a link of the wrong type is a conflict,
    /// never a recreate, since links are not deleted.)
    fn needs_recreate(&self, o: &Self) -> bool {
        self != o
    }
}

/// Orphans (ADR 0002): addresses are never deleted as orphans: management access may depend on them.
pub const ORPHANS: OrphanRule = OrphanRule::Never(Kept {
    reason: "addresses are never deleted as orphans (management access may depend on them)",
    remediation: "remove the address by hand once nothing reaches the router through it",
});
