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
    report_unrecorded: bool,
    unowned_kept: Option<fn(&str) -> bool>,
    goes_with: Option<GoesWithFn>,
}

/// The artifact an orphan of a kind goes with, by name ([`ExternalArtifactKind::goes_with`]).
type GoesWithFn = fn(&str) -> Option<(&'static ExternalArtifactKind, String)>;

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
            report_unrecorded: false,
            unowned_kept: None,
            goes_with: None,
        }
    }

    /// This kind is never deleted as an orphan, even when the ledger records it (a remote
    /// zone itself, a NetBird group others may use): it is reported and left. By default an
    /// orphan the ledger records is deleted, and one it does not record is left (ADR 0002).
    pub const fn keep_orphans(self) -> Self {
        Self { keep_orphans: true, ..self }
    }

    /// Every object of this kind the backend lists is routerd's business (an RRset in a zone
    /// routerd manages): one the ledger does not record is reported as an orphan that is kept
    /// (`ArtifactType::in_routerd_namespace`), not passed over in silence.
    pub const fn report_unrecorded(self) -> Self {
        Self { report_unrecorded: true, ..self }
    }

    /// An object of this kind named so that `applies(name)` holds (an RRset on a remote
    /// primary) that is on the host with other data than the config's and that the ledger
    /// does not record is someone else's: it is never modified, and its resource reports a
    /// `Conflict` until the config matches it and it is adopted (design brief `dns-bind9.md`
    /// §3). By default such an object is brought to the config and stays an adoption
    /// candidate (ADR 0002).
    pub const fn unowned_kept_if(self, applies: fn(&str) -> bool) -> Self {
        Self { unowned_kept: Some(applies), ..self }
    }

    /// An orphan of this kind named `name` goes with the artifact `parent(name)` names (an
    /// RRset of a local zone with the zone's section: Bindy's owner references, design brief
    /// `dns-bind9.md` §3): when that artifact is deleted for good in the same run, the orphan
    /// is not deleted by an operation of its own but dropped from the graph and the ledger
    /// once the parent's delete succeeded (the graph's `cascade` dependency). `None`: it has
    /// no such parent.
    pub const fn goes_with(self, parent: GoesWithFn) -> Self {
        Self { goes_with: Some(parent), ..self }
    }

    /// The kind and name of the artifact an orphan named `name` goes with
    /// ([`ExternalArtifactKind::goes_with`]), if any.
    pub fn parent_of(&self, name: &str) -> Option<(&'static ExternalArtifactKind, String)> {
        self.goes_with.and_then(|parent| parent(name))
    }

    /// Whether an unrecorded object named `name` that differs from the config is kept
    /// ([`ExternalArtifactKind::unowned_kept_if`]).
    pub fn keeps_unowned(&self, name: &str) -> bool {
        self.unowned_kept.is_some_and(|applies| applies(name))
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

    /// Its id, once [`register`]ed.
    pub fn id(&'static self) -> Option<ExternalArtifactId> {
        let kinds = KINDS.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        let i = kinds.iter().position(|e| std::ptr::eq(e.kind, self))?;
        u16::try_from(i).ok().map(ExternalArtifactId)
    }

    /// Its family as [`super::ApplyWith`], what the backend of the family returns from
    /// `Backend::apply_with` (a family no kind is registered for is named `unregistered`).
    pub fn family(&'static self) -> super::ApplyWith {
        super::ApplyWith::External(self.id().map_or(FamilyId(u16::MAX), ExternalArtifactId::family))
    }

    /// Its [`ArtifactKind`], once [`register`]ed.
    pub fn artifact_kind(&'static self) -> Option<ArtifactKind> {
        self.id().map(ArtifactKind::External)
    }

    /// The one-kind list a backend serving only this kind returns from `Backend::kinds`;
    /// empty before [`register`].
    pub fn alone(&'static self) -> &'static [ArtifactKind] {
        self.id().and_then(|id| entry(usize::from(id.0))).map_or(&[], |e| e.alone)
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

impl fmt::Debug for ExternalArtifactKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind)
    }
}

/// A registered artifact kind: its index in this process's table, so [`ArtifactKind`] stays a
/// few bytes. Made only by [`register`]; [`ExternalArtifactId::descriptor`] gives it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExternalArtifactId(u16);

impl ExternalArtifactId {
    /// The registered descriptor.
    pub fn descriptor(self) -> &'static ExternalArtifactKind {
        entry(usize::from(self.0)).map_or(&UNREGISTERED, |e| e.kind)
    }

    /// The family that applies the kind.
    pub fn family(self) -> FamilyId {
        entry(usize::from(self.0)).map_or(FamilyId(u16::MAX), |e| e.family)
    }
}

/// What an id outside the table would name; never reached, since ids come from [`register`].
#[derive(Serialize, Deserialize)]
#[serde(transparent)]
struct Unregistered(Value);

impl ExternalArtifactType for Unregistered {
    fn drift(&self, observed: &Self, diffs: &mut Diffs) {
        diffs.compare("attributes", &self.0, &observed.0);
    }
}

static UNREGISTERED: ExternalArtifactKind =
    ExternalArtifactKind::of::<Unregistered>("unregistered", "unregistered").keep_orphans();

/// A registered configurator family (a controller crate's `applyWith`), by index, so
/// [`super::ApplyWith`] stays a few bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FamilyId(u16);

impl FamilyId {
    /// The family's name (`bind`, `netbird`).
    pub fn name(self) -> &'static str {
        let families = FAMILIES.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        families.get(usize::from(self.0)).copied().unwrap_or("unregistered")
    }
}

/// An artifact of a registered kind: its name and its attributes as JSON.
///
/// Serialised as `{"kind": "dns.rrset", "name": ..., "attributes": {...}}`; reading one back
/// needs its kind registered. Equality is kind, name and attributes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExternalArtifactSpec {
    /// The kind.
    #[serde(serialize_with = "serialize_kind", deserialize_with = "deserialize_kind")]
    pub kind: ExternalArtifactId,
    /// The artifact name: its stable identity within the kind.
    pub name: String,
    /// The typed attributes, as JSON.
    pub attributes: Value,
    /// A secret the desired artifact carries to its backend in memory only (a TSIG key's):
    /// never serialised, so never in a ledger, plan or Result document; the attributes hold
    /// its digest ([`crate::secret::Secret`]). `None` when read back.
    #[serde(skip)]
    pub secret: Option<crate::secret::Secret>,
}

impl PartialEq for ExternalArtifactSpec {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.name == other.name && self.attributes == other.attributes
    }
}
impl Eq for ExternalArtifactSpec {}

impl ExternalArtifactSpec {
    /// An artifact of `kind` named `name` with `attributes`.
    ///
    /// Errors: `kind` is not registered; `attributes` do not serialise to JSON (a map with
    /// non-string keys).
    pub fn new<T: ExternalArtifactType>(
        kind: &'static ExternalArtifactKind,
        name: impl Into<String>,
        attributes: &T,
    ) -> Result<Self, serde_json::Error> {
        let Some(id) = kind.id() else {
            let message = format!("artifact kind {:?} is not registered", kind.kind);
            return Err(serde::ser::Error::custom(message));
        };
        let attributes = serde_json::to_value(attributes)?;
        Ok(Self { kind: id, name: name.into(), attributes, secret: None })
    }

    /// `self` carrying `secret` to its backend ([`ExternalArtifactSpec::secret`]); put its
    /// digest in the attributes too, so a changed secret is drift.
    pub fn with_secret(mut self, secret: crate::secret::Secret) -> Self {
        self.secret = Some(secret);
        self
    }

    /// The attributes typed as `T`.
    ///
    /// Errors: they are not a `T`.
    pub fn attributes<T: ExternalArtifactType>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(&self.attributes)
    }
}

fn serialize_kind<S: Serializer>(
    kind: &ExternalArtifactId,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(kind.descriptor().kind)
}

fn deserialize_kind<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<ExternalArtifactId, D::Error> {
    let name = String::deserialize(deserializer)?;
    lookup(&name).ok_or_else(|| D::Error::custom(format!("unknown artifact kind {name:?}")))
}

impl ArtifactType for ExternalArtifactSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::External(self.kind), self.name.clone())
    }

    observed_as_self!(External);

    fn in_routerd_namespace(&self) -> bool {
        self.kind.descriptor().report_unrecorded
    }

    /// By convention an attribute `unobserved` (the reason, a string) marks an object the
    /// controller's inventory could not read (a DNS zone whose server refused the transfer).
    fn is_unobserved(&self) -> bool {
        self.attributes.get("unobserved").is_some_and(|v| !v.is_null())
    }

    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        let kind = self.kind.descriptor();
        if self.kind != o.kind {
            diffs.push("kind", kind.kind, o.kind.descriptor().kind);
            return;
        }
        // Equal as written is equal as typed: no attribute differs. The common case (a
        // no-op over 10,000 RRsets) then types neither side.
        if self.attributes == o.attributes {
            return;
        }
        (kind.drift)(&self.attributes, &o.attributes, diffs);
    }

    fn needs_recreate(&self, o: &Self) -> bool {
        let kind = self.kind.descriptor();
        self.kind == o.kind && (kind.needs_recreate)(&self.attributes, &o.attributes)
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
    /// The table is full (65,536 kinds: a build mistake).
    #[error("too many registered artifact kinds")]
    Full,
    /// The family name is a built-in family's.
    #[error("configurator family {0:?} is built in")]
    BuiltInFamily(&'static str),
}

/// One registered kind: its descriptor, its family and the one-kind slice backends list.
#[derive(Clone, Copy)]
struct Entry {
    kind: &'static ExternalArtifactKind,
    family: FamilyId,
    alone: &'static [ArtifactKind],
}

/// The registered kinds, by id. Append-only, so a ledger row read once stays readable.
static KINDS: RwLock<Vec<Entry>> = RwLock::new(Vec::new());
/// The registered families, by id.
static FAMILIES: RwLock<Vec<&'static str>> = RwLock::new(Vec::new());

fn entry(i: usize) -> Option<Entry> {
    let kinds = KINDS.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    kinds.get(i).copied()
}

/// Registers `kind` for this process: [`ArtifactKind::parse`] (and so reading ledgers, plans
/// and Result documents) knows it from now on. Registering the same descriptor again does
/// nothing.
///
/// Errors: the string is a built-in kind's or another descriptor's; the family is built in;
/// the table is full.
pub fn register(kind: &'static ExternalArtifactKind) -> Result<(), RegisterError> {
    if ArtifactKind::builtin(kind.kind).is_some() {
        return Err(RegisterError::BuiltIn(kind.kind));
    }
    if super::ApplyWith::builtin(kind.apply_with).is_some() {
        return Err(RegisterError::BuiltInFamily(kind.apply_with));
    }
    let mut kinds = KINDS.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    match kinds.iter().find(|e| e.kind.kind == kind.kind) {
        Some(e) if std::ptr::eq(e.kind, kind) => return Ok(()),
        Some(_) => return Err(RegisterError::Taken(kind.kind)),
        None => {}
    }
    let id = u16::try_from(kinds.len()).map_err(|_| RegisterError::Full)?;
    let mut families = FAMILIES.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    let family = match families.iter().position(|f| *f == kind.apply_with) {
        Some(i) => i,
        None => {
            families.push(kind.apply_with);
            families.len() - 1
        }
    };
    let family = FamilyId(u16::try_from(family).map_err(|_| RegisterError::Full)?);
    // One small allocation per registered kind, kept for the process's life like the kind.
    let alone: &'static [ArtifactKind] =
        Box::leak(Box::new([ArtifactKind::External(ExternalArtifactId(id))]));
    kinds.push(Entry { kind, family, alone });
    Ok(())
}

/// The registered kind with the stable string `name`.
pub(crate) fn lookup(name: &str) -> Option<ExternalArtifactId> {
    let kinds = KINDS.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    let i = kinds.iter().position(|e| e.kind.kind == name)?;
    u16::try_from(i).ok().map(ExternalArtifactId)
}

/// The registered family named `name`.
pub(crate) fn family(name: &str) -> Option<FamilyId> {
    let families = FAMILIES.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    let i = families.iter().position(|f| *f == name)?;
    u16::try_from(i).ok().map(FamilyId)
}
