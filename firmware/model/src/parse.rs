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
//! source map exists, after the envelope's, in the same order as before. A long list is read
//! in two halves on two threads ([`crate::yaml`]); each half is typed on its own thread into
//! its own `Typed`, and the halves are joined in index order.

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
/// Errors: as [`parse_config`]; an unreadable file yields one error with line 0.
/// Side effects: reads `path`.
pub fn load(path: &Path) -> Result<Config, ConfigErrors> {
    let file = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(source) => parse_config(&source, &file),
        Err(err) => Err(ConfigErrors(vec![ConfigError {
            file,
            line: 0,
            column: 0,
            resource: None,
            path: String::new(),
            message: format!("cannot read file: {err}"),
        }])),
    }
}

/// Parses and validates a `router.yaml` document.
///
/// `file` is only used in error messages.
/// Errors: every problem found (YAML syntax, envelope, each broken resource, semantic checks),
/// each located at `file:line:column`, ordered by position.
/// Side effects: none.
pub fn parse_config(source: &str, file: &str) -> Result<Config, ConfigErrors> {
    let (root, map, halves) = match yaml::parse(source, RESOURCES_PATH, Typed::default) {
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
    let mut declared = Declared::default();
    let count = halves.iter().map(|half| half.parsed.len()).sum();
    let mut resources: Vec<(usize, Resource)> = Vec::with_capacity(count);
    for (i, result) in halves.into_iter().flat_map(|half| {
        declared.extend(half.declared);
        half.parsed
    }) {
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

/// The resources of `spec.resources` (or of one half of the list, see [`crate::yaml`]), typed
/// as the YAML front end hands them over.
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
    if metadata.as_ref().is_some_and(|m| m.name.is_empty()) {
        diag.at_value(None, "metadata.name", "name must not be empty");
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
    if envelope.metadata.name.is_empty() {
        let path = format!("{}.metadata.name", base());
        let message = "name must not be empty".to_owned();
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
    match ResourceKind::ALL.iter().find(|k| k.as_str().eq_ignore_ascii_case(kind)) {
        Some(k) => format!("unknown kind {kind:?} (did you mean {:?}?)", k.as_str()),
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
