//! `linux.ipip6.tunnel`: ip6tnl links (RFC 2473), by ifname. Configurator and inventory:
//! [`crate::netlink`]'s `ip6_tunnel.rs`.

use std::fmt;
use std::net::Ipv6Addr;

use serde::{Deserialize, Serialize};

use super::orphans::OrphanRule;
use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// `linux.ipip6.tunnel`: an ip6tnl link, IPv4 or IPv6 packets inside IPv6 (RFC 2473), as
/// `ip -6 tunnel add IFNAME mode ipip6 remote R local L dev U encaplimit E` makes it.
///
/// DS-Lite (RFC 6333) uses mode `ipip6` towards the AFTR. Every field but `mtu` and `adminUp`
/// is compared as given: `None` in `local` and `underlying` is a value (any local address, no
/// bound link), not "left as found".
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ip6TunnelSpec {
    /// Interface name, at most 15 bytes.
    pub ifname: String,
    /// Inner protocol (`IFLA_IPTUN_PROTO`).
    pub mode: Ip6TunnelMode,
    /// Remote endpoint (`IFLA_IPTUN_REMOTE`), the AFTR for DS-Lite.
    pub remote: Ipv6Addr,
    /// Local endpoint (`IFLA_IPTUN_LOCAL`); `None`: any (`::`), the kernel picks the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<Ipv6Addr>,
    /// Link the encapsulated packets leave through (`IFLA_IPTUN_LINK`, `ip tunnel ... dev`);
    /// `None`: any, by route lookup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub underlying: Option<String>,
    /// Tunnel encapsulation limit option (RFC 2473 section 4.1.1; `IFLA_IPTUN_ENCAP_LIMIT`,
    /// and `IP6_TNL_F_IGN_ENCAP_LIMIT` in `IFLA_IPTUN_FLAGS` for `none`).
    pub encap_limit: EncapLimit,
    /// MTU in bytes (`IFLA_MTU`). Desired `None`: the kernel's (underlying MTU minus headers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// Administrative state, `IFF_UP`. Desired `None`: left as found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_up: Option<bool>,
}

/// ip6tnl modes, by inner protocol (`ip -6 tunnel ... mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ip6TunnelMode {
    /// `ipip6`: IPv4 in IPv6 (`IPPROTO_IPIP`, 4): DS-Lite.
    Ipip6,
    /// `ip6ip6`: IPv6 in IPv6 (`IPPROTO_IPV6`, 41).
    Ip6ip6,
    /// `any`: both (protocol 0).
    Any,
}

impl fmt::Display for Ip6TunnelMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ipip6 => "ipip6",
            Self::Ip6ip6 => "ip6ip6",
            Self::Any => "any",
        })
    }
}

/// The encapsulation limit of an ip6tnl: a number of nested encapsulations, or `none` (no
/// limit option sent). Serialized as the number or the string `none`, as `encaplimit` in
/// iproute2 and `encapsulationLimit` in the config.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EncapLimit {
    /// At most this many nested encapsulations (0..=255).
    Limit(u8),
    /// No encapsulation limit option (`IP6_TNL_F_IGN_ENCAP_LIMIT`).
    None,
}

impl EncapLimit {
    /// iproute2's and the kernel's default, `IPV6_DEFAULT_TNL_ENCAP_LIMIT` (4).
    pub const DEFAULT: EncapLimit = EncapLimit::Limit(4);
}

impl fmt::Display for EncapLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Limit(n) => write!(f, "{n}"),
            Self::None => f.write_str("none"),
        }
    }
}

impl Serialize for EncapLimit {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Limit(n) => serializer.serialize_u8(*n),
            Self::None => serializer.serialize_str("none"),
        }
    }
}

impl<'de> Deserialize<'de> for EncapLimit {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Number(u8),
            Text(String),
        }
        match Wire::deserialize(deserializer)? {
            Wire::Number(n) => Ok(Self::Limit(n)),
            Wire::Text(t) if t == "none" => Ok(Self::None),
            Wire::Text(t) => Err(serde::de::Error::custom(format!(
                "encapsulation limit {t:?} is neither 0..=255 nor \"none\""
            ))),
        }
    }
}

impl ArtifactType for Ip6TunnelSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::Ipip6Tunnel, self.ifname.clone())
    }

    observed_as_self!(Ip6Tunnel);

    /// Every tunnel parameter (`None` local or underlying link is a value: any); MTU and admin
    /// state only when desired.
    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare("mode", &self.mode, &o.mode);
        diffs.compare("remote", &self.remote, &o.remote);
        diffs.compare("local", &self.local, &o.local);
        diffs.compare("underlying", &self.underlying, &o.underlying);
        diffs.compare("encapLimit", &self.encap_limit, &o.encap_limit);
        diffs.compare_set("mtu", &self.mtu, &o.mtu);
        diffs.compare_set("adminUp", &self.admin_up, &o.admin_up);
    }
}

/// Orphans (ADR 0002): deleted when the ledger records it (the kernel's fallback device never is).
pub const ORPHANS: OrphanRule =
    OrphanRule::Recorded { deleted: "recorded in the ledger", unrecorded: None };
