//! Errors of reading `netbird.json`: each one names the file, the JSON path and, where known,
//! the line and column. No I/O.

use std::fmt;

/// A position in the text, both 1-based. The column counts characters, except in a syntax
/// error, where it is serde_json's, which counts bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub column: usize,
}

impl From<routerd_model::Location> for Location {
    fn from(at: routerd_model::Location) -> Self {
        let count = |n: u32| usize::try_from(n).unwrap_or(usize::MAX);
        Self { line: count(at.line), column: count(at.column) }
    }
}

/// `path` extended by the mapping key `key`: `routes.gs` (the JSON path format of
/// [`routerd_model::Located`]).
pub(crate) fn child_key(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

/// `path` extended by the sequence index `index`: `routes.gs.groups[0]`.
pub(crate) fn child_index(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

/// One problem in `netbird.json`.
///
/// Shape: displayed as `file:line:column: path: message`; the location is left out when it is
/// unknown, the path when the problem is the file's syntax as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetbirdStateError {
    /// The file as the caller named it.
    pub file: String,
    /// Where in the file; `None` when it could not be found.
    pub location: Option<Location>,
    /// JSON path as the user wrote it, e.g. `policies.pilots-to-gs.sources[0]`; empty for the
    /// document itself.
    pub path: String,
    /// What is wrong, lowercase, without a trailing period.
    pub message: String,
}

/// Every problem found in one `netbird.json`, ordered by position (at least one).
///
/// A syntax or type error or a duplicate key stops reading, so it comes alone; semantic errors
/// are all collected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct NetbirdStateErrors(pub Vec<NetbirdStateError>);

impl fmt::Display for NetbirdStateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(at) = self.location {
            write!(f, ":{}:{}", at.line, at.column)?;
        }
        if !self.path.is_empty() {
            write!(f, ": {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl fmt::Display for NetbirdStateErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}
