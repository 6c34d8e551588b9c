//! Collects [`ConfigError`]s during parsing and validation, locating each one through the
//! [`SourceMap`]. Owns the rule for where an error points: unknown fields at their key, missing
//! fields at the key of the enclosing map, everything else at the value. No I/O.

use serde_path_to_error::Segment;

use crate::error::{ConfigError, ConfigErrors, Location};
use crate::yaml::{SourceMap, child_index, child_key};

/// Error sink for one file.
pub(crate) struct Diagnostics<'m> {
    file: String,
    map: &'m SourceMap<'m>,
    errors: Vec<ConfigError>,
}

impl<'m> Diagnostics<'m> {
    /// A sink for `file`, locating paths with `map`.
    pub(crate) fn new(file: &str, map: &'m SourceMap<'m>) -> Self {
        Self { file: file.to_owned(), map, errors: Vec::new() }
    }

    /// Records an error at an explicit location.
    pub(crate) fn at(
        &mut self,
        location: Location,
        resource: Option<&str>,
        path: &str,
        message: impl Into<String>,
    ) {
        self.errors.push(ConfigError {
            file: self.file.clone(),
            line: location.line,
            column: location.column,
            resource: resource.map(ToOwned::to_owned),
            path: path.to_owned(),
            message: message.into(),
        });
    }

    /// Records an error located at the node at `path` (or its nearest ancestor).
    pub(crate) fn at_value(
        &mut self,
        resource: Option<&str>,
        path: &str,
        message: impl Into<String>,
    ) {
        let location = self.map.value(path);
        self.at(location, resource, path, message);
    }

    /// Records an error located at the mapping key that introduced `path`.
    pub(crate) fn at_key(
        &mut self,
        resource: Option<&str>,
        path: &str,
        message: impl Into<String>,
    ) {
        let location = self.map.key(path);
        self.at(location, resource, path, message);
    }

    /// Records a deserialization failure below `prefix`.
    pub(crate) fn serde(
        &mut self,
        resource: Option<&str>,
        prefix: &str,
        err: &serde_path_to_error::Error<serde_json::Error>,
    ) {
        let path = join_path(prefix, err.path());
        let message = yaml_terms(&err.inner().to_string());
        if message.starts_with("unknown field") || message.starts_with("missing field") {
            self.at_key(resource, &path, message);
        } else {
            self.at_value(resource, &path, message);
        }
    }

    /// Whether any error was recorded.
    pub(crate) fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// All recorded errors, ordered by position.
    pub(crate) fn into_errors(self) -> ConfigErrors {
        let mut errors = ConfigErrors(self.errors);
        errors.sort();
        errors
    }
}

/// `prefix` extended by the segments of a `serde_path_to_error` path, in routerd's path
/// spelling (`spec.resources[3].spec.address`, as [`crate::locate_json`] takes them).
pub fn join_path(prefix: &str, path: &serde_path_to_error::Path) -> String {
    let mut out = prefix.to_owned();
    for segment in path.iter() {
        out = match segment {
            Segment::Seq { index } => child_index(&out, *index),
            Segment::Map { key } => child_key(&out, key),
            Segment::Enum { variant } => child_key(&out, variant),
            Segment::Unknown => out,
        };
    }
    out
}

/// Rewrites serde's Rust-flavoured wording into YAML terms: `struct FooSpec` and `a map`
/// become `a mapping`, unsigned integer types become their range.
fn yaml_terms(message: &str) -> String {
    let mut out = message.replace("invalid type: map,", "invalid type: mapping,");
    if let Some(at) = out.find(", expected struct ") {
        out.truncate(at);
        out.push_str(", expected a mapping");
    }
    for (rust, words) in [
        ("expected a map", "expected a mapping"),
        ("expected u8", "expected an integer from 0 to 255"),
        ("expected u16", "expected an integer from 0 to 65535"),
        ("expected u32", "expected an integer from 0 to 4294967295"),
    ] {
        if out.ends_with(rust) {
            out.truncate(out.len() - rust.len());
            out.push_str(words);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::yaml_terms;

    #[test]
    fn serde_messages_are_rewritten_in_yaml_terms() {
        assert_eq!(
            yaml_terms("invalid type: null, expected struct InterfaceSpec"),
            "invalid type: null, expected a mapping"
        );
        assert_eq!(
            yaml_terms("invalid value: integer `70000`, expected u16"),
            "invalid value: integer `70000`, expected an integer from 0 to 65535"
        );
        assert_eq!(
            yaml_terms("invalid type: map, expected a string"),
            "invalid type: mapping, expected a string"
        );
        assert_eq!(yaml_terms("missing field `ifname`"), "missing field `ifname`");
    }
}
