//! Entry points: [`parse_config`] and [`load`].
//!
//! Pipeline: YAML text → JSON value + source map ([`crate::yaml`]) → document envelope →
//! each resource deserialized on its own (one error per broken resource, the others still
//! checked) → semantic validation ([`crate::validate`]). All errors are collected and returned
//! together, ordered by position. Only [`load`] touches the file system.
//!
//! Resources are typed while the YAML is read: the YAML front end hands over each item of
//! `spec.resources` as soon as it is built and keeps only a `null` in its place, so the JSON
//! of the whole resource list is never in memory at once. Their errors are recorded once the
//! source map exists, after the envelope's, in the same order as before.

use std::path::Path;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use crate::config::{Config, Metadata, ReconcileSpec, Resource, RouterSpec};
use crate::diag::Diagnostics;
use crate::error::{ConfigError, ConfigErrors, Location};
use crate::kind::{ROUTER_API_VERSION, ROUTER_KIND, ResourceKind, deserialize_spec};
use crate::validate::{self, Declared};
use crate::yaml::{self, child_index, child_key};

const DOCUMENT_FIELDS: &str = "`apiVersion`, `kind`, `metadata`, `spec`";
const ROUTER_SPEC_FIELDS: &str = "`reconcile`, `resources`";
/// Path of the resource list, whose items [`crate::yaml`] hands over as they are built.
const RESOURCES_PATH: &str = "spec.resources";

/// Reads and parses the config file at `path`.
///
/// Errors: as [`parse_config`] and [`read_source`].
/// Side effects: reads `path`.
pub fn load(path: &Path) -> Result<Config, ConfigErrors> {
    let source = read_source(path)?;
    parse_config(&source, &path.display().to_string())
}

/// Reads the config file at `path` as UTF-8 text (YAML 1.2 §5.2; routerd writes UTF-8 only).
///
/// Errors: an unreadable file yields one error with line 0; text that is not UTF-8 one error at
/// the line and column (in characters) of the first invalid byte, naming the byte.
/// Side effects: reads `path`.
pub fn read_source(path: &Path) -> Result<String, ConfigErrors> {
    let file = path.display().to_string();
    match std::fs::read(path) {
        Ok(bytes) => source_from_bytes(bytes, &file),
        Err(e) => Err(file_error(&file, Location::default(), format!("cannot read file: {e}"))),
    }
}

/// The text of `bytes`, read from `file`, if it is UTF-8.
///
/// Errors: one error at the line and column (in characters) of the first invalid byte.
pub fn source_from_bytes(bytes: Vec<u8>, file: &str) -> Result<String, ConfigErrors> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let valid = e.utf8_error().valid_up_to();
        let byte = bytes.get(valid).copied().unwrap_or(0);
        let message = format!("invalid UTF-8 (byte 0x{byte:02x}); the file must be UTF-8");
        file_error(file, utf8_location(bytes, valid), message)
    })
}

/// One error about `file` as a whole or at `at`, outside any resource.
fn file_error(file: &str, at: Location, message: String) -> ConfigErrors {
    ConfigErrors(vec![ConfigError {
        file: file.to_owned(),
        line: at.line,
        column: at.column,
        resource: None,
        path: String::new(),
        message,
    }])
}

/// The location of byte `offset` of `bytes`, whose first `offset` bytes are valid UTF-8.
fn utf8_location(bytes: &[u8], offset: usize) -> Location {
    let before = bytes.get(..offset).and_then(|b| std::str::from_utf8(b).ok()).unwrap_or("");
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let column = before[line_start..].chars().count() + 1;
    Location::new(
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

/// Parses and validates a `router.yaml` document.
///
/// `file` is only used in error messages.
/// Errors: every problem found (YAML syntax, envelope, each broken resource, semantic checks),
/// each located at `file:line:column`, ordered by position.
/// Side effects: none.
pub fn parse_config(source: &str, file: &str) -> Result<Config, ConfigErrors> {
    let (root, map, typed) = match yaml::parse(source, RESOURCES_PATH, Typed::default()) {
        Ok(parsed) => parsed,
        Err(problems) => {
            let mut errors = ConfigErrors(
                problems
                    .into_iter()
                    .map(|p| ConfigError {
                        file: file.to_owned(),
                        line: p.location.line,
                        column: p.location.column,
                        resource: None,
                        path: p.path,
                        message: p.message,
                    })
                    .collect(),
            );
            errors.sort();
            return Err(errors);
        }
    };
    let mut diag = Diagnostics::new(file, &map);
    let header = parse_header(&root, &mut diag);
    check_resource_list(&root, &mut diag);
    drop(root);
    let Typed { declared, parsed } = typed;
    let mut resources: Vec<(usize, Resource)> = Vec::with_capacity(parsed.len());
    for (i, result) in parsed {
        match result {
            Ok(resource) => resources.push((i, resource)),
            Err(ResourceError::Serde { id, prefix, err }) => {
                diag.serde(id.as_deref(), &prefix, &err)
            }
            Err(ResourceError::Value { id, path, message }) => {
                diag.at_value(id.as_deref(), &path, message);
            }
        }
    }
    validate::run(&resources, header.as_ref().map(|h| &h.reconcile), &declared, &mut diag);
    match header {
        Some(h) if !diag.has_errors() => Ok(Config {
            api_version: h.api_version,
            kind: h.kind,
            metadata: h.metadata,
            spec: RouterSpec {
                reconcile: h.reconcile,
                resources: resources.into_iter().map(|(_, r)| r).collect(),
            },
        }),
        _ => Err(diag.into_errors()),
    }
}

/// The resources of `spec.resources`, typed as the YAML front end hands them over.
#[derive(Default)]
struct Typed {
    declared: Declared,
    parsed: Vec<(usize, Result<Resource, ResourceError>)>,
}

impl yaml::ItemSink for Typed {
    fn item(&mut self, index: usize, at: Location, value: Value) {
        self.declared.add(&value);
        let parsed =
            parse_resource(index, value).map(|resource| Resource { location: at, ..resource });
        self.parsed.push((index, parsed));
    }
}

/// The parts of the `Router` document outside `spec.resources`.
struct Header {
    api_version: String,
    kind: String,
    metadata: Metadata,
    reconcile: ReconcileSpec,
}

/// Checks the document envelope; `None` if any part is unusable (errors recorded).
fn parse_header(root: &Value, diag: &mut Diagnostics<'_>) -> Option<Header> {
    let Some(obj) = root.as_object() else {
        diag.at_value(
            None,
            "",
            "document must be a mapping with apiVersion, kind, metadata and spec",
        );
        return None;
    };
    reject_unknown(obj, "", &["apiVersion", "kind", "metadata", "spec"], DOCUMENT_FIELDS, diag);
    let api_version = required_field::<String>(obj, "", "apiVersion", diag);
    if let Some(v) = api_version.as_deref().filter(|v| *v != ROUTER_API_VERSION) {
        let msg = format!("apiVersion {v:?} is not supported, expected {ROUTER_API_VERSION:?}");
        diag.at_value(None, "apiVersion", msg);
    }
    let kind = required_field::<String>(obj, "", "kind", diag);
    if let Some(k) = kind.as_deref().filter(|k| *k != ROUTER_KIND) {
        diag.at_value(
            None,
            "kind",
            format!("kind {k:?} is not supported, expected {ROUTER_KIND:?}"),
        );
    }
    let metadata = required_field::<Metadata>(obj, "", "metadata", diag);
    if let Some(Err(message)) = metadata.as_ref().map(|m| validate::check_name(&m.name)) {
        diag.at_value(None, "metadata.name", message);
    }
    let reconcile = match obj.get("spec").and_then(Value::as_object) {
        Some(spec) => {
            let fields = ["reconcile", "resources"];
            reject_unknown(spec, "spec", &fields, ROUTER_SPEC_FIELDS, diag);
            optional_field::<ReconcileSpec>(spec, "spec", "reconcile", diag)
        }
        None => None,
    };
    Some(Header {
        api_version: api_version?,
        kind: kind?,
        metadata: metadata?,
        reconcile: reconcile.unwrap_or_default(),
    })
}

/// Records an error if `spec` or the `spec.resources` list is missing or wrong (its items were
/// taken by [`parse_resource`] while parsing).
fn check_resource_list(root: &Value, diag: &mut Diagnostics<'_>) {
    let Some(obj) = root.as_object() else { return };
    let Some(spec) = obj.get("spec") else {
        diag.at_value(None, "", "missing field `spec`");
        return;
    };
    let Some(spec) = spec.as_object() else {
        diag.at_value(None, "spec", "spec must be a mapping with reconcile and resources");
        return;
    };
    match spec.get("resources") {
        Some(Value::Array(_)) => {}
        Some(_) => {
            diag.at_value(None, "spec.resources", "resources must be a list of resources");
        }
        None => diag.at_key(None, "spec", "missing field `resources`"),
    }
}

/// Why an item of `spec.resources` did not parse; recorded once the source map exists.
enum ResourceError {
    /// A deserialization failure below `prefix`.
    Serde { id: Option<String>, prefix: String, err: serde_path_to_error::Error<serde_json::Error> },
    /// A problem located at the node at `path`.
    Value { id: Option<String>, path: String, message: String },
}

/// The resource envelope; `spec` is deserialized separately once the kind is known.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Envelope {
    api_version: String,
    kind: String,
    metadata: Metadata,
    #[allow(dead_code)] // presence is checked here; the content is typed by kind below
    spec: IgnoredAny,
    status: Option<Map<String, Value>>,
}

/// Parses `spec.resources[index]`, consuming it. The resource's `location` is left for the
/// caller; a failure is the one error to record for it.
fn parse_resource(index: usize, mut value: Value) -> Result<Resource, ResourceError> {
    // The ID and path are only needed for an error: built then, not for every resource.
    let base = || child_index(RESOURCES_PATH, index);
    let envelope: Envelope = match serde_path_to_error::deserialize(&value) {
        Ok(envelope) => envelope,
        Err(err) => return Err(ResourceError::Serde { id: raw_id(&value), prefix: base(), err }),
    };
    let id = || raw_id(&value);
    let Some(kind) = ResourceKind::parse(&envelope.kind) else {
        let message = unknown_kind_message(&envelope.kind);
        return Err(ResourceError::Value { id: id(), path: child_key(&base(), "kind"), message });
    };
    if envelope.api_version != kind.api_version() {
        let message = format!(
            "apiVersion {:?} does not match kind {kind}, expected {:?}",
            envelope.api_version,
            kind.api_version()
        );
        let path = child_key(&base(), "apiVersion");
        return Err(ResourceError::Value { id: id(), path, message });
    }
    if let Err(message) = validate::check_name(&envelope.metadata.name) {
        let path = format!("{}.metadata.name", base());
        return Err(ResourceError::Value { id: id(), path, message });
    }
    let spec = match deserialize_spec(kind, value["spec"].take()) {
        Ok(spec) => spec,
        Err(err) => {
            // `raw_id` reads only the envelope, still in `value`.
            let prefix = child_key(&base(), "spec");
            return Err(ResourceError::Serde { id: raw_id(&value), prefix, err });
        }
    };
    Ok(Resource {
        api_version: envelope.api_version,
        kind,
        name: envelope.metadata.name,
        spec,
        status: envelope.status,
        location: Location::default(),
    })
}

/// `apiVersion/kind/name` as written, if all three are strings.
fn raw_id(value: &Value) -> Option<String> {
    let api = value.get("apiVersion")?.as_str()?;
    let kind = value.get("kind")?.as_str()?;
    let name = value.get("metadata")?.get("name")?.as_str()?;
    Some(format!("{api}/{kind}/{name}"))
}

fn unknown_kind_message(kind: &str) -> String {
    let builtin = ResourceKind::ALL.iter().find(|k| k.as_str().eq_ignore_ascii_case(kind));
    let similar = builtin
        .map(|k| k.as_str())
        .or_else(|| crate::external::lookup_ignore_case(kind).map(|k| k.kind()));
    match similar {
        Some(k) => format!("unknown kind {kind:?} (did you mean {k:?}?)"),
        None => format!("unknown kind {kind:?}"),
    }
}

fn reject_unknown(
    obj: &Map<String, Value>,
    parent: &str,
    allowed: &[&str],
    expected: &str,
    diag: &mut Diagnostics<'_>,
) {
    for key in obj.keys().filter(|k| !allowed.contains(&k.as_str())) {
        let msg = format!("unknown field `{key}`, expected one of {expected}");
        diag.at_key(None, &child_key(parent, key), msg);
    }
}

fn required_field<T: DeserializeOwned>(
    obj: &Map<String, Value>,
    parent: &str,
    key: &str,
    diag: &mut Diagnostics<'_>,
) -> Option<T> {
    if !obj.contains_key(key) {
        diag.at_key(None, parent, format!("missing field `{key}`"));
        return None;
    }
    optional_field(obj, parent, key, diag)
}

fn optional_field<T: DeserializeOwned>(
    obj: &Map<String, Value>,
    parent: &str,
    key: &str,
    diag: &mut Diagnostics<'_>,
) -> Option<T> {
    let value = obj.get(key)?;
    let path = child_key(parent, key);
    match serde_path_to_error::deserialize(value) {
        Ok(v) => Some(v),
        Err(err) => {
            diag.serde(None, &path, &err);
            None
        }
    }
}
