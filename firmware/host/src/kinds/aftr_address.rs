//! `routerd.aftrAddress`: the AFTR addresses resolved for DS-Lite tunnels, observed only.

use serde::{Deserialize, Serialize};

use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// `routerd.aftrAddress`, named after a DS-Lite tunnel's link: the AAAA records of its
/// `aftrFQDN` (RFC 6333's AFTR; RFC 6334 gives the name by DHCPv6), as the supervisor's
/// scheduler last resolved them through the tunnel's resolvers. An external item: present once
/// the scheduler has asked, and nothing of it is compared; the tunnel depends on it having
/// addresses and is rendered with the one its `aftrAddressOrdinal` picks (a runtime value).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AftrAddressSpec {
    /// The tunnel's link name, the artifact's name.
    pub ifname: String,
    /// The name resolved (`aftrFQDN`).
    pub fqdn: String,
    /// Observed: the AAAA records of the last answer, in the order the server gave them.
    /// Desired: empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<std::net::Ipv6Addr>,
    /// Observed: how the last lookup went (`answered by 2001:db8::53`, or the error while the
    /// previous answer is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl ArtifactType for AftrAddressSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::AftrAddress, self.ifname.clone())
    }

    observed_as_self!(Aftr);

    /// Nothing: the addresses are read by the tunnel's render, never applied.
    fn drift(&self, _: &Self, _: &mut Diffs) {}
}
