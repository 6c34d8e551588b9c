//! Typed `spec` of every resource kind, one module per area, plus the pieces they share
//! (`when` conditions, address families).
//!
//! Field names follow the v1alpha1 JSON Schema exactly (camelCase in YAML, snake_case here);
//! every struct denies unknown fields. Optional scalars are `Option` unless a default is
//! documented on the field; absent lists are empty. Each kind's own checks (its `Validate`
//! impl: what serde cannot check) sit right below its spec type; parsing lives in
//! [`crate::parse_config`], the cross-resource rules in the validator. No I/O.

pub mod dhcp;
pub mod firewall;
pub mod net;
pub mod routing;
pub mod system;

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;

use serde::{Deserialize, Serialize};

/// An IP address family, written `ipv4` or `ipv6`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AddressFamily {
    /// `ipv4`.
    Ipv4,
    /// `ipv6`.
    Ipv6,
}

impl AddressFamily {
    /// The family of `ip`.
    pub fn of(ip: &IpAddr) -> Self {
        if ip.is_ipv4() { Self::Ipv4 } else { Self::Ipv6 }
    }
}

impl fmt::Display for AddressFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ipv4 => "IPv4",
            Self::Ipv6 => "IPv6",
        })
    }
}

/// A `when:` gate: the resource (or candidate) is active only while every listed state
/// variable matches.
///
/// YAML: `when: {state: {VAR: {equals: ...}}}`. Absent `when` means always active.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WhenSpec {
    /// `state`: map from a `StatePolicy` `variable` name to the condition it must meet; all
    /// conditions are AND-ed. Absent means no condition.
    #[serde(default)]
    pub state: BTreeMap<String, StateMatchSpec>,
}

/// Condition on one state variable (a value of `when.state`). All given checks are AND-ed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StateMatchSpec {
    /// `exists`: whether the variable must have a value (`true`) or none (`false`).
    pub exists: Option<bool>,
    /// `equals`: the variable's value must equal this text. YAML numbers and booleans are
    /// accepted and compared as their text.
    #[serde(default, deserialize_with = "lenient::opt_string")]
    pub equals: Option<String>,
    /// `in`: the variable's value must be one of these.
    pub r#in: Option<Vec<String>>,
    /// `contains`: the variable's value must contain this substring.
    #[serde(default, deserialize_with = "lenient::opt_string")]
    pub contains: Option<String>,
    /// `status`: the variable's status must be this.
    pub status: Option<StateStatus>,
    /// `for`: Go duration (`30s`, `5m`) the match must have held before it counts.
    pub r#for: Option<String>,
}

/// Status of a state variable, as matched by `when.state.VAR.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StateStatus {
    /// `set`: the variable has a value.
    Set,
    /// `unset`: the variable has been evaluated and has no value.
    Unset,
    /// `unknown`: the variable has not been evaluated yet.
    Unknown,
}

/// Deserializers that accept YAML numbers and booleans where the schema says "string" and
/// the value is opaque text (sysctl values, IDs). Floats are refused: `24.10` would lose its
/// trailing zero, so the user must quote it.
pub(crate) mod lenient {
    use std::fmt;

    use serde::Deserializer;
    use serde::de::{self, Visitor};

    struct Text;

    impl Visitor<'_> for Text {
        type Value = String;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string (quote decimal numbers)")
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
            Ok(v.to_owned())
        }

        fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
            Ok(v)
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
            Ok(v.to_string())
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
            Ok(v.to_string())
        }

        fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
            Ok(v.to_string())
        }
    }

    /// A required string that may be written as a YAML integer or boolean.
    pub(crate) fn string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        d.deserialize_any(Text)
    }

    /// An optional string that may be written as a YAML integer or boolean.
    pub(crate) fn opt_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        struct OptText;

        impl<'de> Visitor<'de> for OptText {
            type Value = Option<String>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string (quote decimal numbers)")
            }

            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }

            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                string(d).map(Some)
            }
        }

        d.deserialize_option(OptText)
    }
}

/// Every spec type in one namespace, for code generated from the kind table
/// ([`crate::with_resource_kinds`]).
pub mod all {
    pub use super::dhcp::*;
    pub use super::firewall::*;
    pub use super::net::*;
    pub use super::routing::*;
    pub use super::system::*;
}
