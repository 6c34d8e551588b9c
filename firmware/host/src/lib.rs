//! Host access for routerd: inventory and configurators per artifact kind.
//!
//! This is the only crate that talks to Linux. Each artifact kind's spec, key, drift rule and
//! recreate rule live in [`kinds`], one module per kind, with the tables over all kinds
//! generated there. Every backend is bound to a network namespace
//! ([`netns::Netns`]) and implements [`backend::Backend`]:
//!
//! | module | applyWith | kinds |
//! |---|---|---|
//! | [`netlink`] | `rtnetlink` | `linux.link` (VLANs created, other links modified), `linux.ipip6.tunnel`, `linux.ppp.link` (observed), `linux.ipv4/ipv6.address`, `linux.ipv4/ipv6.route`, `linux.ipv4.routeTable`, `linux.ipv4.fwmarkRule` |
//! | [`nftables`] | `nftnl` | `nft.table` |
//! | [`sysctl`] | `procfs` | `linux.sysctl` |
//! | [`systemd`] | `systemd` | `systemd.service` (units `routerd-*.service`, over D-Bus) |
//! | [`dnsmasq`] | `dnsmasq` | `dnsmasq.config` (sections of routerd's dnsmasq configuration) |
//! | [`networkd`] | `networkd` | `dhcp.ipv4.client`, `dhcp.ipv6.client`, `dhcp.ipv6.prefixDelegation`, `dhcp.ipv6.delegatedAddress` |
//! | [`hostnamed`] | `hostnamed` | `linux.hostname` |
//! | [`files`] | `files` | `file` (blocks routerd writes in files, `path#block`), `ppp.secret` (entries of pppd's secrets files) |
//! | [`timesyncd`] | `timesyncd` | `timesyncd.config` (blocks of routerd's drop-in), `timesyncd.servers` (observed) |
//!
//! [`secret::Secret`] carries a password to the file it belongs in while every document shows a
//! digest of it.
//!
//! [`probe`] sends the ICMP echo requests of HealthCheck probes from inside the namespace.
//!
//! The file-based backends keep their files under a [`target::Target`]'s root; the module
//! [`file`](mod@file) has the atomic write and the marked-section format they share (also with
//! controller crates).
//!
//! Ownership policy is not here: backends list everything of their kind and do what the engine
//! asks. See `firmware/engine` for what may be deleted.

pub mod artifact;
pub mod backend;
pub mod bus;
pub mod dnsmasq;
pub mod error;
pub mod file;
pub mod files;
pub mod hostnamed;
pub mod kinds;
pub mod logsink;
pub mod netlink;
pub mod netns;
pub mod networkd;
pub mod nftables;
mod ppp;
pub mod probe;
pub mod secret;
pub mod sysctl;
pub mod systemd;
pub mod target;
#[cfg(feature = "test-support")]
pub mod testing;
pub mod timesyncd;

pub use artifact::{
    Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, AttributeDiff, MAIN_ROUTE_TABLE,
    RESERVED_ROUTE_TABLES, ROUTERD_FWMARK_RANGE, ROUTERD_NFT_TABLE_PREFIX, ROUTERD_ROUTE_PROTOCOL,
};
pub use backend::Backend;
pub use error::{ControllerCode, ErrorClass, HostError};
pub use kinds::{ApplyWith, ArtifactType};
pub use netns::Netns;
pub use target::Target;
