//! Resource kinds a controller crate adds (ADR 0010): DNS, VPN and SAM live in crates of their
//! own, which this crate cannot name. Such a crate describes each kind with a static
//! [`ExternalKind`] (its `kind`, `apiVersion`, typed spec and checks) and registers it once at
//! start-up ([`register`], which the engine's `Registry` calls). From then on the kind parses
//! like a built-in one: `file:line:column` errors from its typed spec, its own checks, unique
//! IDs, and [`crate::ResourceKind::External`] in the resources.
//!
//! The built-in kinds stay a closed table (`kind.rs`): exhaustive matches, no `dyn` on the hot
//! path of a 10,000-resource config. A router holds few controller resources (zones, NetBird
//! accounts, pools), so they keep their spec twice: as the JSON written (compared, serialised)
//! and typed, behind `Any`, for the controller's render.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, RwLock};

use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::config::Resource;
use crate::diag::Diagnostics;
use crate::kind::ResourceKind;
use crate::validate::Check;

/// The typed spec of a controller crate's resource kind.
pub trait ExternalKindSpec: DeserializeOwned + Send + Sync + 'static {
    /// The kind's own checks, beyond what deserializing checks (references, ranges, fields
    /// another field requires), each recorded at its field in `c`. Default: none.
    fn validate(&self, _c: &mut ExternalCheck<'_, '_, '_>) {}
}

/// Deserializes a spec, recording the path of a failure.
type ParseFn =
    fn(&Value) -> Result<Arc<dyn Any + Send + Sync>, serde_path_to_error::Error<serde_json::Error>>;
/// Runs the typed spec's [`ExternalKindSpec::validate`].
type ValidateFn = fn(&ExternalSpec, &mut ExternalCheck<'_, '_, '_>);
/// A check over the whole file: rules between resources ([`ExternalKind::with_config_check`]).
pub type ConfigCheckFn = fn(&mut ConfigCheck<'_, '_>);

/// A resource kind from a controller crate: declared as a `static` and [`register`]ed.
///
/// ```
/// use routerd_model::external::{ExternalKind, ExternalKindSpec};
///
/// #[derive(serde::Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct MotdSpec { text: String }
/// impl ExternalKindSpec for MotdSpec {}
///
/// static MOTD: ExternalKind = ExternalKind::of::<MotdSpec>("example.routerd.net/v1alpha1", "Motd");
/// routerd_model::external::register(&MOTD).unwrap();
/// assert_eq!(routerd_model::ResourceKind::parse("Motd").map(|k| k.as_str()), Some("Motd"));
/// ```
pub struct ExternalKind {
    api_version: &'static str,
    kind: &'static str,
    parse: ParseFn,
    validate: ValidateFn,
    config_check: Option<ConfigCheckFn>,
}

impl ExternalKind {
    /// The kind `kind` of `api_version`, whose spec is `T`.
    pub const fn of<T: ExternalKindSpec>(api_version: &'static str, kind: &'static str) -> Self {
        Self {
            api_version,
            kind,
            parse: parse_as::<T>,
            validate: validate_as::<T>,
            config_check: None,
        }
    }

    /// Adds `check`, run once per file after every resource's own checks, for rules between
    /// resources (two DNS records owning one RRset). One hashing pass over the file, where a
    /// per-resource check that scanned every other resource would be quadratic.
    pub const fn with_config_check(mut self, check: ConfigCheckFn) -> Self {
        self.config_check = Some(check);
        self
    }

    /// The kind as written in YAML (`DNSZone`).
    pub const fn kind(&self) -> &'static str {
        self.kind
    }

    /// The only apiVersion the kind may be written with.
    pub const fn api_version(&self) -> &'static str {
        self.api_version
    }

    /// The [`ResourceKind`] of this descriptor, once [`register`]ed.
    pub fn resource_kind(&'static self) -> Option<ResourceKind> {
        let kinds = KINDS.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        let i = kinds.iter().position(|k| std::ptr::eq(*k, self))?;
        Some(ResourceKind::External(ExternalKindId(u16::try_from(i).ok()?)))
    }
}

/// A registered resource kind: its index in this process's table, so [`ResourceKind`] stays a
/// few bytes. Made only by [`register`]; [`ExternalKindId::descriptor`] gives the kind back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExternalKindId(u16);

impl ExternalKindId {
    /// The registered descriptor.
    pub fn descriptor(self) -> &'static ExternalKind {
        let kinds = KINDS.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        // An id is only made by `register`, for an entry that is never removed.
        kinds.get(usize::from(self.0)).copied().unwrap_or(&UNREGISTERED)
    }

    /// Types `value` (a resource's `spec`) as this kind's spec.
    ///
    /// Errors: the serde error with the path below `spec` where it happened.
    pub(crate) fn parse(
        self,
        value: Value,
    ) -> Result<ExternalSpec, serde_path_to_error::Error<serde_json::Error>> {
        let kind = self.descriptor();
        let typed = (kind.parse)(&value)?;
        Ok(ExternalSpec { id: self, kind, value, typed })
    }
}

/// What an id outside the table would name; never reached, since ids come from [`register`].
struct Unregistered;
impl ExternalKindSpec for Unregistered {}
impl<'de> serde::Deserialize<'de> for Unregistered {
    fn deserialize<D: serde::Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        Err(serde::de::Error::custom("unregistered kind"))
    }
}
static UNREGISTERED: ExternalKind = ExternalKind::of::<Unregistered>("", "unregistered");

fn parse_as<T: ExternalKindSpec>(
    value: &Value,
) -> Result<Arc<dyn Any + Send + Sync>, serde_path_to_error::Error<serde_json::Error>> {
    let typed: T = serde_path_to_error::deserialize(value)?;
    Ok(Arc::new(typed))
}

fn validate_as<T: ExternalKindSpec>(spec: &ExternalSpec, c: &mut ExternalCheck<'_, '_, '_>) {
    if let Some(typed) = spec.get::<T>() {
        typed.validate(c);
    }
}

impl fmt::Debug for ExternalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.api_version, self.kind)
    }
}

/// The spec of a resource of an [`ExternalKind`]: as written, and typed.
#[derive(Clone)]
pub struct ExternalSpec {
    id: ExternalKindId,
    kind: &'static ExternalKind,
    value: Value,
    typed: Arc<dyn Any + Send + Sync>,
}

impl ExternalSpec {
    /// The kind's descriptor.
    pub fn descriptor(&self) -> &'static ExternalKind {
        self.kind
    }

    /// The kind.
    pub const fn kind(&self) -> ResourceKind {
        ResourceKind::External(self.id)
    }

    /// The spec as written (JSON of the YAML).
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The typed spec, if it is a `T`.
    pub fn get<T: ExternalKindSpec>(&self) -> Option<&T> {
        self.typed.downcast_ref::<T>()
    }
}

impl PartialEq for ExternalSpec {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.value == other.value
    }
}
impl Eq for ExternalSpec {}
impl fmt::Debug for ExternalSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExternalSpec").field("kind", self.kind).field("value", &self.value).finish()
    }
}
impl Serialize for ExternalSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

impl crate::validate::Validate for ExternalSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        (self.kind.validate)(self, &mut ExternalCheck { check: c });
    }
}

/// What an [`ExternalKindSpec::validate`] records problems in: located errors on fields of the
/// resource's `spec`, and reference checks against the whole file.
pub struct ExternalCheck<'c, 'a, 'm> {
    check: &'c mut Check<'a, 'm>,
}

impl ExternalCheck<'_, '_, '_> {
    /// The resource being checked.
    pub fn resource(&self) -> &Resource {
        self.check.resource()
    }

    /// Records `message` at `field` (a dotted path below `spec`, `records[2].ttl`; empty for
    /// `spec` itself), located at its node in the file, or its nearest ancestor if absent.
    pub fn error(&mut self, field: &str, message: impl Into<String>) {
        self.check.error(field, message);
    }

    /// `field` must name a resource of `kind` declared in the file (parsed or not).
    pub fn reference(&mut self, field: &str, name: &str, kind: ResourceKind) {
        self.check.reference_kind(field, name, kind);
    }
}

/// What an [`ExternalKind::with_config_check`] check reads and records problems in: every
/// resource of the file that parsed, and located errors on any of them.
pub struct ConfigCheck<'a, 'm> {
    diag: &'a mut Diagnostics<'m>,
    resources: &'a [(usize, Resource)],
}

impl<'a, 'm> ConfigCheck<'a, 'm> {
    pub(crate) fn new(diag: &'a mut Diagnostics<'m>, resources: &'a [(usize, Resource)]) -> Self {
        Self { diag, resources }
    }

    /// The resources that parsed, in file order.
    pub fn resources(&self) -> impl Iterator<Item = &'a Resource> + use<'a, 'm> {
        self.resources.iter().map(|(_, r)| r)
    }

    /// Records `message` at `field` (a dotted path below `resource`'s `spec`, empty for the
    /// spec itself) of `resource`, one of [`ConfigCheck::resources`].
    pub fn error(&mut self, resource: &Resource, field: &str, message: impl Into<String>) {
        let position = self.resources.iter().find(|(_, r)| std::ptr::eq(r, resource));
        let id = resource.id();
        let path = match (position, field) {
            (Some((i, _)), "") => format!("spec.resources[{i}].spec"),
            (Some((i, _)), field) => format!("spec.resources[{i}].spec.{field}"),
            (None, _) => "spec.resources".to_owned(),
        };
        self.diag.at_value(Some(&id), &path, message);
    }
}

/// Runs the config checks of every registered kind once.
pub(crate) fn run_config_checks(diag: &mut Diagnostics<'_>, resources: &[(usize, Resource)]) {
    let checks: Vec<ConfigCheckFn> = {
        let kinds = KINDS.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        kinds.iter().filter_map(|k| k.config_check).collect()
    };
    for check in checks {
        check(&mut ConfigCheck::new(diag, resources));
    }
}

/// Why [`register`] refused a kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// The table is full (65,536 kinds: a build mistake).
    #[error("too many registered kinds")]
    Full,
    /// A built-in kind has the name.
    #[error("kind {0:?} is built in")]
    BuiltIn(&'static str),
    /// Another descriptor of the name was registered (with a different apiVersion or spec).
    #[error("kind {0:?} is already registered by another crate")]
    Taken(&'static str),
}

/// The registered kinds. Append-only: a kind is registered at start-up and never removed, so a
/// parsed config never holds a kind that disappeared.
static KINDS: RwLock<Vec<&'static ExternalKind>> = RwLock::new(Vec::new());

/// Registers `kind` for this process: [`crate::ResourceKind::parse`] (and so
/// [`crate::parse_config`]) knows it from now on. Registering the same descriptor again does
/// nothing.
///
/// Errors: the name is a built-in kind's or another descriptor's.
pub fn register(kind: &'static ExternalKind) -> Result<(), RegisterError> {
    if ResourceKind::builtin(kind.kind).is_some() {
        return Err(RegisterError::BuiltIn(kind.kind));
    }
    let mut kinds = KINDS.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    match kinds.iter().find(|k| k.kind == kind.kind) {
        Some(k) if std::ptr::eq(*k, kind) => Ok(()),
        Some(_) => Err(RegisterError::Taken(kind.kind)),
        None if kinds.len() > usize::from(u16::MAX) => Err(RegisterError::Full),
        None => {
            kinds.push(kind);
            Ok(())
        }
    }
}

/// The registered kind named `name` (exact, case-sensitive).
pub(crate) fn lookup(name: &str) -> Option<ExternalKindId> {
    let kinds = KINDS.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    let i = kinds.iter().position(|k| k.kind == name)?;
    Some(ExternalKindId(u16::try_from(i).ok()?))
}

/// The registered kind named `name` ignoring ASCII case, for "did you mean".
pub(crate) fn lookup_ignore_case(name: &str) -> Option<&'static ExternalKind> {
    let kinds = KINDS.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    kinds.iter().find(|k| k.kind.eq_ignore_ascii_case(name)).copied()
}
