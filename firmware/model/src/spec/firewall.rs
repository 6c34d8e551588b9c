//! Specs of the firewall kinds (`firewall.routerd.net/v1alpha1`): `Zone`, `FirewallPolicy`,
//! `ExposeService`. Each spec type is followed by its own checks (`Validate`). No I/O.

use serde::{Deserialize, Serialize};

use super::AddressFamily::{self, Ipv4};
use crate::addr;
use crate::kind::ResourceKind;
use crate::validate::Validate;
use crate::validate::check::{Check, Target};

const ZONE: Target = Target::Kind(ResourceKind::Zone);

/// `Zone`: a named group of interfaces that firewall rules refer to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZoneSpec {
    /// `interfaces` (required): names of interface resources in the zone.
    pub interfaces: Vec<String>,
}

impl Validate for ZoneSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.references("interfaces", &self.interfaces, Target::Interface);
    }
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

impl Validate for FirewallPolicySpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        let Some(access) = &self.router_access else { return };
        let services = [("ssh", &access.ssh), ("dns", &access.dns), ("dhcp", &access.dhcp)];
        for (service, spec) in services {
            if let Some(spec) = spec {
                c.references(&format!("routerAccess.{service}.fromZones"), &spec.from_zones, ZONE);
            }
        }
    }
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

impl Validate for ExposeServiceSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        let family = self.family.unwrap_or(Ipv4);
        c.reference("fromZone", &self.from_zone, ZONE);
        c.opt_reference("viaInterface", self.via_interface.as_ref(), Target::Interface);
        c.min("externalPort", Some(u64::from(self.external_port)), 1);
        c.min("internalPort", Some(u64::from(self.internal_port)), 1);
        c.ip("internalAddress", &self.internal_address, Some(family));
        for (i, source) in self.sources.iter().enumerate() {
            let is_ip = addr::parse_ip(source, None).is_ok();
            let result = if is_ip {
                addr::parse_ip(source, Some(family)).map(|_| ())
            } else {
                addr::parse_prefix(source, Some(family)).map(|_| ())
            };
            if let Err(e) = result {
                c.error(&format!("sources[{i}]"), e.to_string());
            }
        }
    }
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
