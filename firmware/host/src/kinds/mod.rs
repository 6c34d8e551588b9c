//! The artifact kinds: one module per kind (or small family of kinds sharing a spec) holding its
//! typed spec, its key, its drift rule and whether a change needs a recreate ([`ArtifactType`]),
//! and the registry: two tables from which [`ArtifactKind`] (its string and `applyWith`),
//! [`ApplyWith`]'s kinds and [`ArtifactSpec`] (the dispatch of key, drift and recreate) are
//! generated. Nothing outside these tables matches on every kind, and no wildcard arm decides a
//! backend.
//!
//! The configurator and inventory of a kind are in its family's backend, under the same name
//! (`kinds/link.rs` here, `netlink/link.rs` there), since one socket serves the family.
//! Adding a kind: `docs/adding-a-kind.md`. This module does not touch the host.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::artifact::{ArtifactKey, AttributeDiff};
use crate::nftables::ir::{NftTableSpec, NftTableState};

pub mod address;
pub mod aftr_address;
pub mod dhcp_client;
pub mod dnsmasq_section;
pub mod external;
pub mod file_block;
pub mod fwmark_rule;
pub mod health_check;
pub mod hostname;
pub mod ip6_tunnel;
pub mod link;
pub mod log_sink;
pub mod nft_table;
pub mod opaque;
pub mod orphans;
pub mod ppp_link;
pub mod ppp_secret;
pub mod route;
pub mod route_table;
pub mod state_variable;
pub mod sysctl;
pub mod timesyncd;
pub mod unit;

use address::AddressSpec;
use aftr_address::AftrAddressSpec;
use dhcp_client::DhcpClientSpec;
use dnsmasq_section::DnsmasqSectionSpec;
use external::{ExternalArtifactId, ExternalArtifactSpec, FamilyId};
use file_block::FileBlockSpec;
use fwmark_rule::FwmarkRuleSpec;
use health_check::HealthStatusSpec;
use hostname::SystemHostnameSpec;
use ip6_tunnel::Ip6TunnelSpec;
use link::LinkSpec;
use log_sink::LogSinkSpec;
use opaque::OpaqueSpec;
use orphans::OrphanRule;
use ppp_link::PppLinkSpec;
use ppp_secret::PppSecretSpec;
use route::RouteSpec;
use route_table::RouteTableSpec;
use state_variable::StateVariableSpec;
use sysctl::SysctlSpec;
use timesyncd::{TimesyncServersSpec, TimesyncdSpec};
use unit::UnitSpec;

/// One artifact type: a typed spec and the rules the engine needs about it, kept in the kind's
/// module. Implemented by every type of the [`ArtifactSpec`] table.
pub trait ArtifactType: Sized {
    /// The form the inventory gives back: `Self` for every type but nftables tables, whose
    /// kernel state is a fingerprint ([`NftTableState`]).
    type Observed: Clone;

    /// The key this spec's host identity gives (seed 000: names are stable and derived from
    /// the object's identity, so observed and desired objects with one identity share a key).
    fn key(&self) -> ArtifactKey;

    /// `spec` as this type's observed form; `None` when it is another type.
    fn observed(spec: &ArtifactSpec) -> Option<Cow<'_, Self::Observed>>;

    /// Records in `diffs` the attributes where `observed` differs from `self` (desired).
    /// Desired attributes that mean "left as found" are not compared.
    fn drift(&self, observed: &Self::Observed, diffs: &mut Diffs);

    /// Whether going from `observed` to `self` needs delete + create instead of modify.
    /// Default: never.
    fn needs_recreate(&self, _observed: &Self::Observed) -> bool {
        false
    }

    /// Whether this object lies inside one of routerd's namespaces or ranges (the weaker
    /// orphan signal of seed 000: fwmark `0x100-0x1ff`, `routerd_*` tables, routerd's route
    /// protocol, its own files and units). Default: no.
    fn in_routerd_namespace(&self) -> bool {
        false
    }

    /// Whether the inventory could not read this object (its server did not answer) and lists
    /// it only so that its state counts as unknown: the ledger keeps an owned one, and the
    /// engine plans one the ledger does not hold as absent. Default: no.
    fn is_unobserved(&self) -> bool {
        false
    }
}

/// [`ArtifactType::observed`] for a type that is its own observed form, stored in the
/// [`ArtifactSpec`] variant `$variant`.
macro_rules! observed_as_self {
    ($variant:ident) => {
        fn observed(
            spec: &$crate::kinds::ArtifactSpec,
        ) -> Option<::std::borrow::Cow<'_, Self::Observed>> {
            match spec {
                $crate::kinds::ArtifactSpec::$variant(o) => Some(::std::borrow::Cow::Borrowed(o)),
                _ => None,
            }
        }
    };
}
pub(crate) use observed_as_self;

/// The differing attributes of one comparison, as [`ArtifactType::drift`] collects them.
#[derive(Debug, Default)]
pub struct Diffs(Vec<AttributeDiff>);

impl Diffs {
    /// Records `attribute` with both values.
    pub fn push<D: Serialize + ?Sized, O: Serialize + ?Sized>(
        &mut self,
        attribute: &str,
        desired: &D,
        observed: &O,
    ) {
        self.0.push(AttributeDiff {
            attribute: attribute.to_string(),
            desired: serde_json::to_value(desired).unwrap_or(serde_json::Value::Null),
            observed: serde_json::to_value(observed).unwrap_or(serde_json::Value::Null),
        });
    }

    /// Records `attribute` when the values differ.
    pub fn compare<T: PartialEq + Serialize + ?Sized>(
        &mut self,
        attribute: &str,
        desired: &T,
        observed: &T,
    ) {
        if desired != observed {
            self.push(attribute, desired, observed);
        }
    }

    /// Records `attribute` when a value is desired (`None` means "left as found") and the
    /// observed one differs.
    pub fn compare_set<T: PartialEq + Serialize>(
        &mut self,
        attribute: &str,
        desired: &Option<T>,
        observed: &Option<T>,
    ) {
        if desired.is_some() && desired != observed {
            self.push(attribute, desired, observed);
        }
    }

    /// Records a file mode in octal (`0644`) when the modes differ.
    pub fn compare_mode(&mut self, desired: u32, observed: u32) {
        if desired != observed {
            self.push("mode", &format!("{desired:04o}"), &format!("{observed:04o}"));
        }
    }

    /// The recorded attributes.
    pub fn into_vec(self) -> Vec<AttributeDiff> {
        self.0
    }
}

/// The kind table's last column: whether the ledger remembers the kind.
macro_rules! memory {
    (remembered) => {
        true
    };
    (transient) => {
        false
    };
}

/// Generates [`ArtifactKind`] and [`ApplyWith::kinds`] from the kind table.
macro_rules! artifact_kinds {
    (
        $count:literal;
        $( $(#[doc = $doc:literal])* $variant:ident = $name:literal by $apply:ident, $memory:ident, $orphans:path; )*
    ) => {
        /// Stable artifact type. The serialised string is part of the ledger format and the
        /// Result document: never rename one, and never change what a string means (a new kind
        /// of host object gets a new string).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum ArtifactKind {
            $(
                $(#[doc = $doc])*
                #[doc = concat!("\n\n`", $name, "`, applied with [`ApplyWith::", stringify!($apply), "`].")]
                $variant,
            )*
            /// A kind a controller crate registered ([`external::register`], ADR 0010).
            External(ExternalArtifactId),
        }

        impl ArtifactKind {
            /// Every built-in kind, in declaration order (also their order in sorted
            /// collections; registered kinds sort after them, by string).
            pub const ALL: [ArtifactKind; $count] = [$(Self::$variant,)*];

            /// The stable string (`linux.ipv4.fwmarkRule`).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                    Self::External(k) => k.descriptor().as_str(),
                }
            }

            /// The configurator family that creates, changes and deletes this kind, and lists
            /// it: one per kind.
            pub fn apply_with(self) -> ApplyWith {
                match self {
                    $(Self::$variant => ApplyWith::$apply,)*
                    Self::External(k) => ApplyWith::External(k.family()),
                }
            }

            /// Whether the engine remembers this kind's artifacts in the ledger: an inventory
            /// lists it, so what routerd created can be found, proved its own and deleted
            /// (seed 000: "only inventory-backed ensure artifacts are remembered"). A kind
            /// marked `transient` in the table is a value of the engine's or one another
            /// family brings up. Every registered kind is remembered.
            pub const fn is_remembered(self) -> bool {
                match self {
                    $(Self::$variant => memory!($memory),)*
                    Self::External(_) => true,
                }
            }

            /// What becomes of an artifact of this kind that no resource declares any more
            /// (ADR 0002): the rule in the kind's module.
            pub fn orphans(self) -> OrphanRule {
                match self {
                    $(Self::$variant => $orphans,)*
                    Self::External(k) => k.descriptor().orphans(),
                }
            }

            /// Whether an object named `name` of this kind that the ledger does not record and
            /// that differs from the config is kept as someone else's, never modified
            /// ([`external::ExternalArtifactKind::unowned_kept_if`]); no built-in kind does.
            pub fn keeps_unowned(self, name: &str) -> bool {
                match self {
                    Self::External(k) => k.descriptor().keeps_unowned(name),
                    _ => false,
                }
            }

            /// The artifact an orphan of this kind named `name` goes with when that artifact
            /// is deleted ([`external::ExternalArtifactKind::goes_with`]); `None` for every
            /// built-in kind and for a parent kind not registered.
            pub fn goes_with(self, name: &str) -> Option<ArtifactKey> {
                match self {
                    Self::External(k) => {
                        let (kind, parent) = k.descriptor().parent_of(name)?;
                        Some(ArtifactKey::new(kind.artifact_kind()?, parent))
                    }
                    _ => None,
                }
            }

            /// Parses the stable string form of a built-in or registered kind.
            pub fn parse(s: &str) -> Option<ArtifactKind> {
                Self::builtin(s).or_else(|| external::lookup(s).map(Self::External))
            }

            /// The built-in kind with the stable string `s`.
            pub fn builtin(s: &str) -> Option<ArtifactKind> {
                match s { $($name => Some(Self::$variant),)* _ => None }
            }
        }
    };
}

// The kind table: string, configurator family, whether the ledger remembers the kind
// (`remembered`) or not (`transient`), and its orphan rule. Order matters: it is the order of
// kinds in sorted plans and listings.
artifact_kinds! {
    28;
    /// A network link (`ip link`), named by ifname.
    Link = "linux.link" by Rtnetlink, remembered, link::ORPHANS;
    /// An IPv4 address on a link, named `ifname/addr/prefixlen`.
    Ipv4Address = "linux.ipv4.address" by Rtnetlink, remembered, address::ORPHANS;
    /// An IPv6 address on a link, named `ifname/addr/prefixlen`.
    Ipv6Address = "linux.ipv6.address" by Rtnetlink, remembered, address::ORPHANS;
    /// An IPv4 route, named `table:destination:metric`.
    Ipv4Route = "linux.ipv4.route" by Rtnetlink, remembered, route::ORPHANS;
    /// An IPv6 route, named `table:destination:metric`.
    Ipv6Route = "linux.ipv6.route" by Rtnetlink, remembered, route::ORPHANS;
    /// A numbered IPv4 routing table routerd fills, named by its number.
    Ipv4RouteTable = "linux.ipv4.routeTable" by Rtnetlink, remembered, route_table::ORPHANS;
    /// An IPv4 fwmark policy rule (`ip rule ... fwmark`), named by the mark in hex (`0x100`).
    Ipv4FwmarkRule = "linux.ipv4.fwmarkRule" by Rtnetlink, remembered, fwmark_rule::ORPHANS;
    /// An IP-in-IPv6 (ip6tnl, ipip6 mode) tunnel link, named by ifname.
    Ipip6Tunnel = "linux.ipip6.tunnel" by Rtnetlink, remembered, ip6_tunnel::ORPHANS;
    /// A PPP link brought up by pppd, named by ifname.
    PppLink = "linux.ppp.link" by Pppd, transient, OrphanRule::Default;
    /// A sysctl key under `/proc/sys`, named in dotted form (`net.ipv4.ip_forward`).
    Sysctl = "linux.sysctl" by Procfs, remembered, sysctl::ORPHANS;
    /// The system hostname, named `system`.
    Hostname = "linux.hostname" by Hostnamed, remembered, hostname::ORPHANS;
    /// An nftables table, named `family/name` (`inet/routerd_nat`).
    NftTable = "nft.table" by Nftnl, remembered, nft_table::ORPHANS;
    /// A systemd unit, named by unit name (`routerd-dnsmasq.service`).
    SystemdService = "systemd.service" by Systemd, remembered, unit::ORPHANS;
    /// A block routerd writes in a file, named `path#block`
    /// (`/etc/sysctl.d/90-routerd.conf#net.ipv4.ip_forward`).
    File = "file" by Files, remembered, file_block::ORPHANS;
    /// A PPP secret: a routerd block of one entry in a pppd secrets file, named `path#block`
    /// (`/etc/ppp/chap-secrets#wan`).
    PppSecret = "ppp.secret" by Files, remembered, ppp_secret::ORPHANS;
    /// A DHCPv4 client binding on a link, named by ifname.
    Dhcp4Client = "dhcp.ipv4.client" by Networkd, remembered, dhcp_client::ORPHANS;
    /// A DHCPv6 client binding on a link, named by ifname.
    Dhcp6Client = "dhcp.ipv6.client" by Networkd, remembered, dhcp_client::ORPHANS;
    /// A DHCPv6 prefix delegation binding (IA_PD) on the uplink, named by ifname.
    Dhcp6PrefixDelegation = "dhcp.ipv6.prefixDelegation" by Networkd, remembered, dhcp_client::ORPHANS;
    /// An address from a delegated prefix on a downstream link, named by ifname.
    Dhcp6DelegatedAddress = "dhcp.ipv6.delegatedAddress" by Networkd, remembered, dhcp_client::ORPHANS;
    /// A section of routerd's dnsmasq configuration, named `section/name`.
    DnsmasqConfig = "dnsmasq.config" by Dnsmasq, remembered, dnsmasq_section::ORPHANS;
    /// A probe run by the supervisor's scheduler, named by resource name.
    HealthCheck = "routerd.healthCheck" by Scheduler, transient, OrphanRule::Default;
    /// A block of routerd's systemd-timesyncd drop-in, named by its `NTPClient` resource.
    TimesyncdConfig = "timesyncd.config" by Timesyncd, remembered, timesyncd::ORPHANS;
    /// The NTP servers systemd-timesyncd uses, named `system`; observed only.
    TimesyncdServers = "timesyncd.servers" by Timesyncd, transient, OrphanRule::Default;
    /// A log forwarding sink, named by resource name.
    LogSink = "routerd.logSink" by LogSinks, remembered, log_sink::ORPHANS;
    /// A source-address selection policy, named by resource name.
    AddressSelection = "routerd.addressSelection" by Routerd, transient, OrphanRule::Default;
    /// A firewall zone: an engine-internal grouping of interfaces compiled into nft tables.
    FirewallZone = "routerd.firewallZone" by Routerd, transient, OrphanRule::Default;
    /// A state variable evaluated by the supervisor (`StatePolicy`).
    StateVariable = "routerd.stateVariable" by Scheduler, transient, OrphanRule::Default;
    /// The AFTR addresses the supervisor resolved for a DS-Lite tunnel, named by its ifname.
    AftrAddress = "routerd.aftrAddress" by Scheduler, transient, OrphanRule::Default;
}

impl Serialize for ArtifactKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ArtifactKind {
    /// A built-in kind's string, or a registered kind's.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <Cow<'de, str>>::deserialize(deserializer)?;
        Self::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown artifact kind {s:?}")))
    }
}

impl fmt::Display for ArtifactKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The configurator family that can create and correct an artifact kind, shown in plans as
/// `applyWith`; each kind has exactly one ([`ArtifactKind::apply_with`]). Families without a
/// configurator in this build make their intents `Blocked`. Serialised as its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ApplyWith {
    /// rtnetlink: links, addresses, routes, rules, tunnels.
    Rtnetlink,
    /// libnftnl batches: nftables tables.
    Nftnl,
    /// `/proc/sys` files of the target namespace.
    Procfs,
    /// Engine-internal: no host state of its own (firewall zones, address selection).
    Routerd,
    /// systemd-hostnamed over D-Bus.
    Hostnamed,
    /// systemd over D-Bus (units).
    Systemd,
    /// systemd-networkd (DHCP client bindings, prefix delegation).
    Networkd,
    /// dnsmasq config and service.
    Dnsmasq,
    /// systemd-timesyncd drop-in.
    Timesyncd,
    /// routerd's own log sinks: its events forwarded to syslog or a plugin
    /// ([`crate::logsink`]).
    LogSinks,
    /// pppd via a routerd-pppoe unit.
    Pppd,
    /// The supervisor's scheduler (health checks, state variables, AFTR lookups).
    Scheduler,
    /// Managed files.
    Files,
    /// A controller crate's family (its registered kinds' `applyWith`, ADR 0010).
    External(FamilyId),
}

impl ApplyWith {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rtnetlink => "rtnetlink",
            Self::Nftnl => "nftnl",
            Self::Procfs => "procfs",
            Self::Routerd => "routerd",
            Self::Hostnamed => "hostnamed",
            Self::Systemd => "systemd",
            Self::Networkd => "networkd",
            Self::Dnsmasq => "dnsmasq",
            Self::Timesyncd => "timesyncd",
            Self::LogSinks => "routerd-log",
            Self::Pppd => "pppd",
            Self::Scheduler => "routerd-scheduler",
            Self::Files => "files",
            Self::External(family) => family.name(),
        }
    }

    /// The built-in family named `name`.
    pub fn builtin(name: &str) -> Option<Self> {
        const BUILTIN: [ApplyWith; 13] = [
            ApplyWith::Rtnetlink,
            ApplyWith::Nftnl,
            ApplyWith::Procfs,
            ApplyWith::Routerd,
            ApplyWith::Hostnamed,
            ApplyWith::Systemd,
            ApplyWith::Networkd,
            ApplyWith::Dnsmasq,
            ApplyWith::Timesyncd,
            ApplyWith::LogSinks,
            ApplyWith::Pppd,
            ApplyWith::Scheduler,
            ApplyWith::Files,
        ];
        BUILTIN.into_iter().find(|f| f.as_str() == name)
    }

    /// The built-in kinds this family serves, in [`ArtifactKind::ALL`] order (none for a
    /// controller crate's family: its backend lists its kinds).
    pub fn kinds(self) -> impl Iterator<Item = ArtifactKind> {
        ArtifactKind::ALL.into_iter().filter(move |k| k.apply_with() == self)
    }
}

impl Serialize for ApplyWith {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ApplyWith {
    /// A built-in family's name, or the family of a registered kind.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <Cow<'de, str>>::deserialize(deserializer)?;
        Self::builtin(&s)
            .or_else(|| external::family(&s).map(Self::External))
            .ok_or_else(|| serde::de::Error::custom(format!("unknown applyWith {s:?}")))
    }
}

impl fmt::Display for ApplyWith {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Generates [`ArtifactSpec`] and its dispatch from the spec table.
macro_rules! artifact_specs {
    ( $( $(#[doc = $doc:literal])* $variant:ident($spec:ty) = $tag:literal; )* ) => {
        /// Typed attributes per artifact type. Desired and observed artifacts use the same
        /// variants, except nftables tables, whose observed form is the fingerprint the kernel
        /// can give back ([`NftTableState`]). Serialised with the variant's tag in `type`.
        #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(tag = "type")]
        pub enum ArtifactSpec {
            $(
                $(#[doc = $doc])*
                #[serde(rename = $tag)]
                $variant($spec),
            )*
        }

        impl ArtifactSpec {
            /// The key this spec's host identity gives ([`ArtifactType::key`]).
            pub fn key(&self) -> ArtifactKey {
                match self { $(Self::$variant(s) => ArtifactType::key(s),)* }
            }

            /// Attributes where `observed` differs from `self` (desired), as `(attribute,
            /// desired, observed)` triples; empty when the host matches
            /// ([`ArtifactType::drift`]). An observed spec of another type differs in `type`.
            /// Used for the Modify decision, drift reports and adoption refusal.
            pub fn drift(&self, observed: &ArtifactSpec) -> Vec<AttributeDiff> {
                let mut diffs = Diffs::default();
                match self {
                    $(Self::$variant(d) => match <$spec as ArtifactType>::observed(observed) {
                        Some(o) => d.drift(&o, &mut diffs),
                        None => diffs.push("type", self.type_name(), observed.type_name()),
                    },)*
                }
                diffs.into_vec()
            }

            /// Whether going from `observed` to `self` (desired) needs delete + create
            /// ([`ArtifactType::needs_recreate`]); `false` for specs of different types.
            pub fn needs_recreate(&self, observed: &ArtifactSpec) -> bool {
                match self {
                    $(Self::$variant(d) => <$spec as ArtifactType>::observed(observed)
                        .is_some_and(|o| d.needs_recreate(&o)),)*
                }
            }

            /// Whether the object lies inside routerd's namespace
            /// ([`ArtifactType::in_routerd_namespace`]).
            pub fn in_routerd_namespace(&self) -> bool {
                match self { $(Self::$variant(s) => ArtifactType::in_routerd_namespace(s),)* }
            }

            /// Whether the inventory could not read the object ([`ArtifactType::is_unobserved`]).
            pub fn is_unobserved(&self) -> bool {
                match self { $(Self::$variant(s) => ArtifactType::is_unobserved(s),)* }
            }

            /// The `type` tag (`link`, `nftTableObserved`).
            pub fn type_name(&self) -> &'static str {
                match self { $(Self::$variant(_) => $tag,)* }
            }
        }
    };
}

// The spec table: one line per artifact type.
artifact_specs! {
    /// `linux.link`.
    Link(LinkSpec) = "link";
    /// `linux.ipv4.address` / `linux.ipv6.address`, by the address family.
    Address(AddressSpec) = "address";
    /// `linux.ipv4.route` / `linux.ipv6.route`, by the destination family.
    Route(RouteSpec) = "route";
    /// `linux.ipv4.routeTable`.
    RouteTable(RouteTableSpec) = "routeTable";
    /// `linux.ipv4.fwmarkRule`.
    FwmarkRule(FwmarkRuleSpec) = "fwmarkRule";
    /// `linux.sysctl`.
    Sysctl(SysctlSpec) = "sysctl";
    /// `linux.ipip6.tunnel`.
    Ip6Tunnel(Ip6TunnelSpec) = "ip6Tunnel";
    /// `linux.ppp.link`.
    PppLink(PppLinkSpec) = "pppLink";
    /// `nft.table`, desired.
    NftTable(NftTableSpec) = "nftTable";
    /// `nft.table`, observed.
    NftTableObserved(NftTableState) = "nftTableObserved";
    /// `systemd.service`.
    Unit(UnitSpec) = "unit";
    /// `dnsmasq.config`.
    DnsmasqSection(DnsmasqSectionSpec) = "dnsmasqSection";
    /// `dhcp.ipv4.client`, `dhcp.ipv6.client`, `dhcp.ipv6.prefixDelegation`,
    /// `dhcp.ipv6.delegatedAddress`.
    DhcpClient(DhcpClientSpec) = "dhcpClient";
    /// `linux.hostname`.
    Hostname(SystemHostnameSpec) = "hostname";
    /// `routerd.healthCheck`.
    Health(HealthStatusSpec) = "health";
    /// `routerd.stateVariable`.
    State(StateVariableSpec) = "state";
    /// `routerd.aftrAddress`.
    Aftr(AftrAddressSpec) = "aftr";
    /// `file`.
    FileBlock(FileBlockSpec) = "fileBlock";
    /// `ppp.secret`.
    PppSecret(PppSecretSpec) = "pppSecret";
    /// `timesyncd.config`.
    Timesyncd(TimesyncdSpec) = "timesyncd";
    /// `timesyncd.servers`.
    TimesyncServers(TimesyncServersSpec) = "timesyncServers";
    /// `routerd.logSink`.
    LogSink(LogSinkSpec) = "logSink";
    /// Any kind whose configurator is not in this build: attributes as rendered from the
    /// resource, compared as JSON.
    Opaque(OpaqueSpec) = "opaque";
    /// A kind a controller crate registered: its attributes as JSON, compared by its
    /// descriptor's rules.
    External(ExternalArtifactSpec) = "external";
}

#[cfg(test)]
#[path = "drift_tests.rs"]
mod tests;
