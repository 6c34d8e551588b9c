//! `linux.ppp.link`: the link of a PPP session, observed only. Inventory: [`crate::netlink`].

use serde::{Deserialize, Serialize};

use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// `linux.ppp.link`, named by ifname: the link of a PPP unit, which pppd creates when its
/// session comes up and removes when the session ends. routerd never changes it; it observes it
/// (listed from the rtnetlink link dump: hardware type `ARPHRD_PPP`), and its appearance lets
/// what runs over the session proceed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PppLinkSpec {
    /// Interface name (pppd's `ifname` option).
    pub ifname: String,
    /// Observed: `IFF_UP`. Desired `None`: not compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_up: Option<bool>,
    /// Observed: the MTU the session negotiated, in bytes. Desired `None`: not compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
}

impl ArtifactType for PppLinkSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::PppLink, self.ifname.clone())
    }

    observed_as_self!(PppLink);

    /// `adminUp` and `mtu`, when desired.
    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare_set("adminUp", &self.admin_up, &o.admin_up);
        diffs.compare_set("mtu", &self.mtu, &o.mtu);
    }
}
