//! Specs of the firewall kinds (`firewall.routerd.net/v1alpha1`): `Zone`, `FirewallPolicy`,
//! `ExposeService`. Plain data; no I/O.

use serde::{Deserialize, Serialize};

use super::AddressFamily;

/// `Zone`: a named group of interfaces that firewall rules refer to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZoneSpec {
    /// `interfaces` (required): names of interface resources in the zone.
    pub interfaces: Vec<String>,
}

/// `FirewallPolicy`: default verdicts and router access.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FirewallPolicySpec {
    /// `preset`: a starting rule set; absent means none.
    pub preset: Option<FirewallPreset>,
    /// `input`: traffic to the router itself.
    pub input: Option<ChainPolicySpec>,
    /// `forward`: traffic through the router.
    pub forward: Option<ChainPolicySpec>,
    /// `routerAccess`: which zones may reach router services.
    pub router_access: Option<RouterAccessSpec>,
}

/// `FirewallPolicy.preset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FirewallPreset {
    /// `home-router`: drop inbound from WAN, allow LAN out, allow established.
    HomeRouter,
}

/// `FirewallPolicy.input` / `.forward`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChainPolicySpec {
    /// `default`: verdict for unmatched packets; absent means the preset's.
    pub default: Option<Verdict>,
}

/// A chain's default verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// `accept`.
    Accept,
    /// `drop`.
    Drop,
}

/// `FirewallPolicy.routerAccess`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RouterAccessSpec {
    /// `ssh`: TCP 22 on the router.
    pub ssh: Option<RouterServiceAccess>,
    /// `dns`: TCP/UDP 53 on the router.
    pub dns: Option<RouterServiceAccess>,
    /// `dhcp`: UDP 67/547 on the router.
    pub dhcp: Option<RouterServiceAccess>,
}

/// `FirewallPolicy.routerAccess.{ssh,dns,dhcp}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RouterServiceAccess {
    /// `fromZones`: names of `Zone` resources allowed.
    #[serde(default)]
    pub from_zones: Vec<String>,
    /// `wan`: access from the WAN side.
    pub wan: Option<WanAccess>,
}

/// `FirewallPolicy.routerAccess.*.wan`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WanAccess {
    /// `enabled`: allow from WAN; default `false`.
    #[serde(default)]
    pub enabled: bool,
}

/// `ExposeService`: a port forward (DNAT) from a zone to an internal host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExposeServiceSpec {
    /// `family`: absent means `ipv4`.
    pub family: Option<AddressFamily>,
    /// `fromZone` (required): names the `Zone` traffic arrives from.
    pub from_zone: String,
    /// `viaInterface`: names the interface resource whose address is exposed; absent means
    /// every interface of the zone.
    pub via_interface: Option<String>,
    /// `protocol` (required).
    pub protocol: Protocol,
    /// `externalPort` (required): 1..=65535.
    pub external_port: u16,
    /// `internalAddress` (required): IP address of the internal host, of `family`.
    pub internal_address: String,
    /// `internalPort` (required): 1..=65535.
    pub internal_port: u16,
    /// `sources`: allowed client prefixes or addresses; empty means any.
    #[serde(default)]
    pub sources: Vec<String>,
    /// `hairpin`: also forward LAN clients using the external address; default `false`.
    #[serde(default)]
    pub hairpin: bool,
}

/// `ExposeService.protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// `tcp`.
    Tcp,
    /// `udp`.
    Udp,
}
