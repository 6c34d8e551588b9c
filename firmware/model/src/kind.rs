//! The table of resource kinds: [`ResourceKind`] (name and apiVersion of each kind),
//! [`ResourceSpec`] (one variant per kind holding its typed spec) and [`KindSpec`] (from a spec
//! type back to its kind).
//!
//! Everything here is generated from one declarative table so a new kind is one line. This
//! module is a table; it holds no validation logic.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use serde_json::Value;

use crate::external::{ExternalKindId, ExternalSpec};
use crate::spec::dhcp::*;
use crate::spec::firewall::*;
use crate::spec::net::*;
use crate::spec::routing::*;
use crate::spec::system::*;

/// apiVersion of the `Router` document itself.
pub const ROUTER_API_VERSION: &str = "routerd.net/v1alpha1";
/// `kind` of the `Router` document itself.
pub const ROUTER_KIND: &str = "Router";
/// apiVersion of host-level kinds (`LogSink`, `Sysctl`, `NTPClient`, `NixOSHost`).
pub const SYSTEM_API_VERSION: &str = "system.routerd.net/v1alpha1";
/// apiVersion of network kinds (`Interface`, addresses, routing, DHCP, ...).
pub const NET_API_VERSION: &str = "net.routerd.net/v1alpha1";
/// apiVersion of firewall kinds (`Zone`, `FirewallPolicy`, `ExposeService`).
pub const FIREWALL_API_VERSION: &str = "firewall.routerd.net/v1alpha1";

/// The unknown-kind error of [`ResourceKind::from_str`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown kind {0:?}")]
pub struct UnknownKindError(pub String);

/// Implemented by every typed spec; links the type to its [`ResourceKind`].
///
/// Used by [`crate::Config::specs`] and [`crate::Resource::spec_as`] to iterate or downcast
/// with the type alone.
pub trait KindSpec: Sized + 'static {
    /// The kind whose spec this is.
    const KIND: ResourceKind;
    /// The typed spec inside `spec`, if `spec` is of this kind.
    fn from_spec(spec: &ResourceSpec) -> Option<&Self>;
}

/// The type a [`ResourceSpec`] variant stores: the spec itself, or the spec boxed when the
/// kind is marked `boxed` in the table below.
macro_rules! stored {
    ($spec:ident) => { $spec };
    ($spec:ident boxed) => { Box<$spec> };
}

macro_rules! kinds {
    (
        $d:tt $count:literal;
        $($variant:ident => $name:literal, $api:ident, $spec:ident $($boxed:ident)?;)*
    ) => {
        /// Calls the macro `$m` with the kind table as `Variant => SpecType` pairs (the spec
        /// types under [`crate::spec::all`]), so another crate generates its dispatch over every
        /// kind from this one table: the engine's render (`Render` per spec type). A kind
        /// without an implementation there does not compile.
        #[macro_export]
        macro_rules! with_resource_kinds {
            ($d m:path) => { $d m! { $($variant => $spec),* } };
        }

        /// A resource kind, as written in a resource's `kind` field: a built-in kind, or one a
        /// controller crate registered ([`crate::external`], ADR 0010). Serialised as its name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ResourceKind {
            $(
                #[doc = concat!("`", $name, "` (`", stringify!($api), "`), spec [`", stringify!($spec), "`].")]
                $variant,
            )*
            /// A kind a controller crate registered ([`crate::external::register`]).
            External(ExternalKindId),
        }

        impl ResourceKind {
            /// Every built-in kind, in declaration order.
            pub const ALL: [ResourceKind; $count] = [$(ResourceKind::$variant,)*];

            /// The kind as written in YAML, e.g. `IPv4StaticAddress`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ResourceKind::$variant => $name,)*
                    ResourceKind::External(k) => k.descriptor().kind(),
                }
            }

            /// The only apiVersion this kind may be written with.
            pub fn api_version(self) -> &'static str {
                match self {
                    $(ResourceKind::$variant => $api,)*
                    ResourceKind::External(k) => k.descriptor().api_version(),
                }
            }

            /// Parses the YAML kind name, built-in or registered; exact, case-sensitive match.
            pub fn parse(name: &str) -> Option<Self> {
                Self::builtin(name).or_else(|| crate::external::lookup(name).map(Self::External))
            }

            /// The built-in kind named `name`.
            pub fn builtin(name: &str) -> Option<Self> {
                match name { $($name => Some(ResourceKind::$variant),)* _ => None }
            }
        }

        /// The typed `spec` of a resource; one variant per [`ResourceKind`].
        ///
        /// A spec larger than a static route's (80 bytes) is boxed (marked `boxed` in the kind
        /// table): the enum is as large as its largest variant, and a config of thousands of
        /// routes would otherwise pay the largest spec (312 bytes) for each of them. In the
        /// benchmark's config (10,600 resources) the resource list shrinks from 4.3 to 2.0 MB
        /// and the cold reconcile's peak RSS by 1.3 MiB (`docs/benchmarks.md`, ninth round).
        #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
        #[serde(untagged)]
        pub enum ResourceSpec {
            $(
                #[doc = concat!("Spec of a `", $name, "`.")]
                $variant(stored!($spec $($boxed)?)),
            )*
            /// Spec of a kind a controller crate registered.
            External(ExternalSpec),
        }

        impl ResourceSpec {
            /// The checks of this spec's kind ([`crate::validate::Validate`]).
            pub(crate) fn validator(&self) -> &dyn crate::validate::Validate {
                match self {
                    $(ResourceSpec::$variant(s) => {
                        std::borrow::Borrow::<$spec>::borrow(s) as &dyn crate::validate::Validate
                    })*
                    ResourceSpec::External(s) => s,
                }
            }

            /// The kind of this spec.
            pub const fn kind(&self) -> ResourceKind {
                match self {
                    $(ResourceSpec::$variant(_) => ResourceKind::$variant,)*
                    ResourceSpec::External(s) => s.kind(),
                }
            }

            /// Deserializes the spec of a `kind` resource from JSON (the `spec` object only).
            ///
            /// Only shape is checked (types, enums, unknown and missing fields); semantic
            /// validation needs the whole document and runs in [`crate::parse_config`].
            /// Errors: the serde error, without a source position.
            pub fn from_value(kind: ResourceKind, value: &Value) -> Result<Self, serde_json::Error> {
                use serde::Deserialize;
                match kind {
                    $(ResourceKind::$variant => {
                        <stored!($spec $($boxed)?)>::deserialize(value).map(Self::$variant)
                    })*
                    ResourceKind::External(k) => {
                        k.parse(value.clone()).map(Self::External).map_err(|e| e.into_inner())
                    }
                }
            }
        }

        /// Deserializes `value` (consumed: strings move rather than copy) as the spec of
        /// `kind`, recording the path of a failure.
        pub(crate) fn deserialize_spec(
            kind: ResourceKind,
            value: Value,
        ) -> Result<ResourceSpec, serde_path_to_error::Error<serde_json::Error>> {
            match kind {
                $(ResourceKind::$variant => {
                    serde_path_to_error::deserialize(value).map(ResourceSpec::$variant)
                })*
                ResourceKind::External(k) => k.parse(value).map(ResourceSpec::External),
            }
        }

        $(
            impl KindSpec for $spec {
                const KIND: ResourceKind = ResourceKind::$variant;

                fn from_spec(spec: &ResourceSpec) -> Option<&Self> {
                    match spec {
                        // `Borrow` reaches the spec whether the variant boxes it or not.
                        ResourceSpec::$variant(s) => Some(std::borrow::Borrow::borrow(s)),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
            }
        )*
    };
}

kinds! { $ 33;
    LogSink => "LogSink", SYSTEM_API_VERSION, LogSinkSpec boxed;
    Sysctl => "Sysctl", SYSTEM_API_VERSION, SysctlSpec;
    NtpClient => "NTPClient", SYSTEM_API_VERSION, NtpClientSpec;
    NixOsHost => "NixOSHost", SYSTEM_API_VERSION, NixOsHostSpec boxed;
    Interface => "Interface", NET_API_VERSION, InterfaceSpec;
    PppoeInterface => "PPPoEInterface", NET_API_VERSION, PppoeInterfaceSpec boxed;
    VlanInterface => "VLANInterface", NET_API_VERSION, VlanInterfaceSpec;
    Ipv4StaticAddress => "IPv4StaticAddress", NET_API_VERSION, Ipv4StaticAddressSpec;
    Ipv4DhcpAddress => "IPv4DHCPAddress", NET_API_VERSION, Ipv4DhcpAddressSpec;
    Ipv4DhcpServer => "IPv4DHCPServer", NET_API_VERSION, Ipv4DhcpServerSpec boxed;
    Ipv4DhcpScope => "IPv4DHCPScope", NET_API_VERSION, Ipv4DhcpScopeSpec boxed;
    Ipv6DhcpAddress => "IPv6DHCPAddress", NET_API_VERSION, Ipv6DhcpAddressSpec;
    Ipv6PrefixDelegation => "IPv6PrefixDelegation", NET_API_VERSION, Ipv6PrefixDelegationSpec boxed;
    Ipv6DelegatedAddress => "IPv6DelegatedAddress", NET_API_VERSION, Ipv6DelegatedAddressSpec boxed;
    Ipv6DhcpServer => "IPv6DHCPServer", NET_API_VERSION, Ipv6DhcpServerSpec;
    Ipv6DhcpScope => "IPv6DHCPScope", NET_API_VERSION, Ipv6DhcpScopeSpec boxed;
    SelfAddressPolicy => "SelfAddressPolicy", NET_API_VERSION, SelfAddressPolicySpec;
    DnsConditionalForwarder => "DNSConditionalForwarder", NET_API_VERSION,
        DnsConditionalForwarderSpec;
    DsLiteTunnel => "DSLiteTunnel", NET_API_VERSION, DsLiteTunnelSpec boxed;
    StatePolicy => "StatePolicy", NET_API_VERSION, StatePolicySpec;
    HealthCheck => "HealthCheck", NET_API_VERSION, HealthCheckSpec boxed;
    Ipv4DefaultRoutePolicy => "IPv4DefaultRoutePolicy", NET_API_VERSION,
        Ipv4DefaultRoutePolicySpec;
    Ipv4SourceNat => "IPv4SourceNAT", NET_API_VERSION, Ipv4SourceNatSpec boxed;
    Ipv4PolicyRoute => "IPv4PolicyRoute", NET_API_VERSION, Ipv4PolicyRouteSpec boxed;
    Ipv4PolicyRouteSet => "IPv4PolicyRouteSet", NET_API_VERSION, Ipv4PolicyRouteSetSpec boxed;
    Ipv4ReversePathFilter => "IPv4ReversePathFilter", NET_API_VERSION,
        Ipv4ReversePathFilterSpec;
    PathMtuPolicy => "PathMTUPolicy", NET_API_VERSION, PathMtuPolicySpec boxed;
    Zone => "Zone", FIREWALL_API_VERSION, ZoneSpec;
    FirewallPolicy => "FirewallPolicy", FIREWALL_API_VERSION, FirewallPolicySpec boxed;
    ExposeService => "ExposeService", FIREWALL_API_VERSION, ExposeServiceSpec boxed;
    Hostname => "Hostname", NET_API_VERSION, HostnameSpec;
    Ipv4StaticRoute => "IPv4StaticRoute", NET_API_VERSION, Ipv4StaticRouteSpec;
    Ipv6StaticRoute => "IPv6StaticRoute", NET_API_VERSION, Ipv6StaticRouteSpec;
}

impl ResourceKind {
    /// Whether resources of this kind provide an interface that other resources can name
    /// (`Interface`, `PPPoEInterface`, `VLANInterface`, `DSLiteTunnel`).
    pub const fn provides_interface(self) -> bool {
        matches!(
            self,
            Self::Interface | Self::PppoeInterface | Self::VlanInterface | Self::DsLiteTunnel
        )
    }
}

impl Serialize for ResourceKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ResourceKind {
    type Err = UnknownKindError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| UnknownKindError(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_name() {
        for kind in ResourceKind::ALL {
            assert_eq!(kind.as_str().parse::<ResourceKind>(), Ok(kind));
        }
    }

    #[test]
    fn a_resource_spec_is_no_larger_than_a_static_routes() {
        // A config of thousands of routes pays the enum's size for each; a larger spec must be
        // marked `boxed` in the kind table.
        let route = std::mem::size_of::<crate::spec::net::Ipv4StaticRouteSpec>();
        let spec = std::mem::size_of::<ResourceSpec>();
        assert!(spec <= route + 8, "ResourceSpec is {spec} bytes, a static route's spec {route}");
    }

    #[test]
    fn kind_names_are_unique() {
        let mut names: Vec<_> = ResourceKind::ALL.iter().map(|k| k.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ResourceKind::ALL.len());
    }

    #[test]
    fn api_versions_follow_the_schema_groups() {
        assert_eq!(ResourceKind::Sysctl.api_version(), "system.routerd.net/v1alpha1");
        assert_eq!(ResourceKind::Hostname.api_version(), "net.routerd.net/v1alpha1");
        assert_eq!(ResourceKind::Zone.api_version(), "firewall.routerd.net/v1alpha1");
        assert_eq!(ResourceKind::Ipv6StaticRoute.api_version(), "net.routerd.net/v1alpha1");
        assert_eq!(ResourceKind::VlanInterface.api_version(), "net.routerd.net/v1alpha1");
    }

    #[test]
    fn parse_is_case_sensitive() {
        assert_eq!(ResourceKind::parse("interface"), None);
        assert_eq!(
            "Bogus".parse::<ResourceKind>().expect_err("unknown").to_string(),
            "unknown kind \"Bogus\""
        );
    }
}
