//! Artifact kinds a controller crate adds (ADR 0010): a DNS RRset, a NetBird group, a mobile
//! /32's capture. Such a crate describes each kind with a static [`ExternalArtifactKind`] (its
//! stable string, its configurator family, and the drift and recreate rules of its typed spec)
//! and registers it once at start-up ([`register`], which the engine's `Registry` calls). From
//! then on it is an [`ArtifactKind::External`]: planned, applied by the crate's backend, owned
//! through the ledger and shown in plans like a Linux kind.
//!
//! The spec travels as JSON attributes ([`ExternalArtifactSpec`]), typed at the crate's edge:
//! the Linux kinds keep their closed, measured tables, and a router has few controller
//! artifacts next to its thousands of routes.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::RwLock;

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::orphans::{Kept, OrphanRule};
use super::{ArtifactKind, ArtifactType, Diffs, observed_as_self};
use crate::artifact::ArtifactKey;

/// The typed attributes of a controller crate's artifact kind.
pub trait ExternalArtifactType: Serialize + DeserializeOwned + 'static {
    /// Records in `diffs` the attributes where `observed` differs from `self` (desired), as
    /// [`ArtifactType::drift`].
    fn drift(&self, observed: &Self, diffs: &mut Diffs);

    /// Whether going from `observed` to `self` needs delete + create instead of modify.
    /// Default: never.
    fn needs_recreate(&self, _observed: &Self) -> bool {
        false
    }
}

type DriftFn = fn(&Value, &Value, &mut Diffs);
type RecreateFn = fn(&Value, &Value) -> bool;

/// An artifact kind from a controller crate: declared as a `static` and [`register`]ed.
pub struct ExternalArtifactKind {
    kind: &'static str,
    apply_with: &'static str,
    drift: DriftFn,
    needs_recreate: RecreateFn,
    keep_orphans: bool,
}

impl ExternalArtifactKind {
    /// The kind `kind` (its stable string, `dns.rrset`: part of the ledger format, never
    /// renamed), applied by the configurator family `apply_with` (`bind`), with attributes `T`.
    pub const fn of<T: ExternalArtifactType>(kind: &'static str, apply_with: &'static str) -> Self {
        Self {
            kind,
            apply_with,
            drift: drift_as::<T>,
            needs_recreate: recreate_as::<T>,
            keep_orphans: false,
        }
    }

    /// This kind is never deleted as an orphan, even when the ledger records it (a remote
    /// zone itself, a NetBird group others may use): it is reported and left. By default an
    /// orphan the ledger records is deleted, and one it does not record is left (ADR 0002).
    pub const fn keep_orphans(self) -> Self {
        Self { keep_orphans: true, ..self }
    }

    /// The kind's orphan rule: deleted when the ledger records it, unless
    /// [`ExternalArtifactKind::keep_orphans`] was set.
    pub const fn orphans(&self) -> OrphanRule {
        if self.keep_orphans {
            OrphanRule::Never(Kept {
                reason: "this kind is never deleted as an orphan",
                remediation: "remove it by hand if it is no longer needed",
            })
        } else {
            OrphanRule::Recorded { deleted: "recorded in the ledger", unrecorded: None }
        }
    }

    /// The stable string.
    pub const fn as_str(&self) -> &'static str {
        self.kind
    }

    /// The configurator family's name, shown as `applyWith`.
    pub const fn apply_with(&self) -> &'static str {
        self.apply_with
    }
}

/// Attributes that do not type as `T` (a ledger row written by an older build) differ as a
/// whole, so the artifact is corrected rather than trusted.
fn drift_as<T: ExternalArtifactType>(desired: &Value, observed: &Value, diffs: &mut Diffs) {
    match (T::deserialize(desired), T::deserialize(observed)) {
        (Ok(d), Ok(o)) => d.drift(&o, diffs),
        _ => diffs.compare("attributes", desired, observed),
    }
}

fn recreate_as<T: ExternalArtifactType>(desired: &Value, observed: &Value) -> bool {
    match (T::deserialize(desired), T::deserialize(observed)) {
        (Ok(d), Ok(o)) => d.needs_recreate(&o),
        _ => false,
    }
}

// A kind is its string: two descriptors of one string cannot both be registered.
impl PartialEq for ExternalArtifactKind {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
    }
}
impl Eq for ExternalArtifactKind {}
impl Hash for ExternalArtifactKind {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.kind.hash(state);
    }
}
impl PartialOrd for ExternalArtifactKind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ExternalArtifactKind {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.kind.cmp(other.kind)
    }
}
impl fmt::Debug for ExternalArtifactKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind)
    }
}

/// An artifact of an [`ExternalArtifactKind`]: its name and its attributes as JSON.
///
/// Serialised as `{"kind": "dns.rrset", "name": ..., "attributes": {...}}`; reading one back
/// needs its kind registered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExternalArtifactSpec {
    /// The kind.
    #[serde(serialize_with = "serialize_kind", deserialize_with = "deserialize_kind")]
    pub kind: &'static ExternalArtifactKind,
    /// The artifact name: its stable identity within the kind.
    pub name: String,
    /// The typed attributes, as JSON.
    pub attributes: Value,
}

impl ExternalArtifactSpec {
    /// An artifact of `kind` named `name` with `attributes`.
    ///
    /// Errors: `attributes` do not serialise to JSON (a map with non-string keys).
    pub fn new<T: ExternalArtifactType>(
        kind: &'static ExternalArtifactKind,
        name: impl Into<String>,
        attributes: &T,
    ) -> Result<Self, serde_json::Error> {
        Ok(Self { kind, name: name.into(), attributes: serde_json::to_value(attributes)? })
    }

    /// The attributes typed as `T`.
    ///
    /// Errors: they are not a `T`.
    pub fn attributes<T: ExternalArtifactType>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(&self.attributes)
    }
}

fn serialize_kind<S: Serializer>(
    kind: &&'static ExternalArtifactKind,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(kind.kind)
}

fn deserialize_kind<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<&'static ExternalArtifactKind, D::Error> {
    let name = String::deserialize(deserializer)?;
    lookup(&name).ok_or_else(|| D::Error::custom(format!("unknown artifact kind {name:?}")))
}

impl ArtifactType for ExternalArtifactSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::External(self.kind), self.name.clone())
    }

    observed_as_self!(External);

    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        if self.kind != o.kind {
            diffs.push("kind", self.kind.kind, o.kind.kind);
            return;
        }
        (self.kind.drift)(&self.attributes, &o.attributes, diffs);
    }

    fn needs_recreate(&self, o: &Self) -> bool {
        self.kind == o.kind && (self.kind.needs_recreate)(&self.attributes, &o.attributes)
    }
}

/// Why [`register`] refused a kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// A built-in kind has the string.
    #[error("artifact kind {0:?} is built in")]
    BuiltIn(&'static str),
    /// Another descriptor of the string was registered.
    #[error("artifact kind {0:?} is already registered by another crate")]
    Taken(&'static str),
    /// The family name is a built-in family's.
    #[error("configurator family {0:?} is built in")]
    BuiltInFamily(&'static str),
}

/// The registered kinds. Append-only, so a ledger row read once stays readable.
static KINDS: RwLock<Vec<&'static ExternalArtifactKind>> = RwLock::new(Vec::new());

/// Registers `kind` for this process: [`ArtifactKind::parse`] (and so reading ledgers, plans
/// and Result documents) knows it from now on. Registering the same descriptor again does
/// nothing.
///
/// Errors: the string is a built-in kind's or another descriptor's; the family is built in.
pub fn register(kind: &'static ExternalArtifactKind) -> Result<(), RegisterError> {
    if ArtifactKind::builtin(kind.kind).is_some() {
        return Err(RegisterError::BuiltIn(kind.kind));
    }
    if super::ApplyWith::builtin(kind.apply_with).is_some() {
        return Err(RegisterError::BuiltInFamily(kind.apply_with));
    }
    let mut kinds = KINDS.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    match kinds.iter().find(|k| k.kind == kind.kind) {
        Some(k) if std::ptr::eq(*k, kind) => Ok(()),
        Some(_) => Err(RegisterError::Taken(kind.kind)),
        None => {
            kinds.push(kind);
            Ok(())
        }
    }
}

/// The registered kind with the stable string `name`.
pub(crate) fn lookup(name: &str) -> Option<&'static ExternalArtifactKind> {
    let kinds = KINDS.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    kinds.iter().find(|k| k.kind == name).copied()
}

/// The family name of a registered kind's configurator, if one has the name `name`.
pub(crate) fn family(name: &str) -> Option<&'static str> {
    let kinds = KINDS.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    kinds.iter().find(|k| k.apply_with == name).map(|k| k.apply_with)
}
