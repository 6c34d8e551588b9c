//! Error types of the model: one [`ConfigError`] per problem found in `router.yaml`, collected
//! into [`ConfigErrors`].
//!
//! Errors carry a source position so editors and CI logs can jump to the offending node. This
//! module only formats; it does not decide what is an error.

use std::fmt;

use serde::Serialize;

/// A position in the YAML source, as editors show it.
///
/// Shape: `line` and `column` are 1-based; `column` counts Unicode scalar values (characters),
/// not bytes. `line == 0` means "no position" (an error about the file as a whole, such as an
/// unreadable file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
pub struct Location {
    /// Line number, 1-based.
    pub line: u32,
    /// Column number, 1-based, in characters.
    pub column: u32,
}

impl Location {
    /// Builds a location from 1-based `line` and `column`.
    pub const fn new(line: u32, column: u32) -> Self {
        Self { line, column }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// One problem in a config file.
///
/// Displayed as `FILE:LINE:COLUMN: RESOURCE_ID: PATH: MESSAGE`; the resource part is omitted
/// when the error is not inside a resource, the path part when it is the document root, and
/// `:LINE:COLUMN` when `line` is 0 (file-level errors such as I/O).
///
/// `path` names the node the way the user wrote it, e.g. `spec.resources[3].spec.address`.
/// `message` is lowercase with no trailing period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{}{}{message}", position(.file, *.line, *.column), context(.resource.as_deref(), .path))]
pub struct ConfigError {
    /// The file name as given to [`crate::parse_config`] or [`crate::load`].
    pub file: String,
    /// Line of the offending node, 1-based; 0 when the error has no position.
    pub line: u32,
    /// Column of the offending node, 1-based, in characters; 0 when the error has no position.
    pub column: u32,
    /// ID (`apiVersion/kind/name`) of the resource the error is in, if any.
    pub resource: Option<String>,
    /// Dotted path of the offending node from the document root; empty for the root itself.
    pub path: String,
    /// What is wrong, lowercase, no trailing period.
    pub message: String,
}

impl ConfigError {
    /// The error's position as a [`Location`].
    pub fn location(&self) -> Location {
        Location::new(self.line, self.column)
    }
}

/// All problems found in one config file, ordered by position.
///
/// Shape: never empty when returned as an `Err`. Displayed one error per line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{}", join_lines(.0))]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl ConfigErrors {
    /// Number of errors.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no errors.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Iterates over the errors in position order.
    pub fn iter(&self) -> std::slice::Iter<'_, ConfigError> {
        self.0.iter()
    }

    /// Sorts the errors by line, then column; errors at the same position keep their order.
    pub(crate) fn sort(&mut self) {
        self.0.sort_by_key(|e| (e.line, e.column));
    }
}

impl IntoIterator for ConfigErrors {
    type Item = ConfigError;
    type IntoIter = std::vec::IntoIter<ConfigError>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a ConfigErrors {
    type Item = &'a ConfigError;
    type IntoIter = std::slice::Iter<'a, ConfigError>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

fn position(file: &str, line: u32, column: u32) -> String {
    if line == 0 { format!("{file}: ") } else { format!("{file}:{line}:{column}: ") }
}

fn context(resource: Option<&str>, path: &str) -> String {
    let mut out = String::new();
    if let Some(id) = resource {
        out.push_str(id);
        out.push_str(": ");
    }
    if !path.is_empty() {
        out.push_str(path);
        out.push_str(": ");
    }
    out
}

fn join_lines(errors: &[ConfigError]) -> String {
    errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(resource: Option<&str>, path: &str) -> ConfigError {
        ConfigError {
            file: "router.yaml".into(),
            line: 3,
            column: 7,
            resource: resource.map(Into::into),
            path: path.into(),
            message: "bad value".into(),
        }
    }

    #[test]
    fn display_includes_resource_and_path_when_present() {
        let e = error(Some("net.routerd.net/v1alpha1/Interface/wan"), "spec.resources[0].spec");
        assert_eq!(
            e.to_string(),
            "router.yaml:3:7: net.routerd.net/v1alpha1/Interface/wan: spec.resources[0].spec: \
             bad value"
        );
    }

    #[test]
    fn display_omits_resource_and_empty_path() {
        assert_eq!(error(None, "").to_string(), "router.yaml:3:7: bad value");
    }

    #[test]
    fn display_omits_position_when_line_is_zero() {
        let mut e = error(None, "");
        e.line = 0;
        e.column = 0;
        assert_eq!(e.to_string(), "router.yaml: bad value");
    }

    #[test]
    fn errors_display_one_per_line() {
        let errors = ConfigErrors(vec![error(None, "a"), error(None, "b")]);
        assert_eq!(
            errors.to_string(),
            "router.yaml:3:7: a: bad value\nrouter.yaml:3:7: b: bad value"
        );
    }
}
