//! YAML front end: turns `router.yaml` text into a [`serde_json::Value`] plus a [`SourceMap`]
//! that remembers where every node came from.
//!
//! We parse with saphyr's marked tree so every node keeps its start marker, then flatten it to
//! JSON so serde (with `serde_path_to_error`) can deserialize the typed resources. The JSON path
//! of a failing field is then looked up in the source map to report `file:line:column`.
//!
//! Duplicate mapping keys are rejected by saphyr's loader (at the second key). This module does
//! no I/O and knows nothing about routerd kinds.

use std::collections::HashMap;

use saphyr::{LoadableYamlNode, MarkedYaml, Marker, Scalar, YamlData};
use serde_json::{Map, Number, Value};

use crate::error::Location;

/// Where each node of the parsed document starts, keyed by JSON path.
///
/// Shape: paths look like `spec.resources[3].spec.address`; the root is the empty string.
/// `values` holds the start of each node; `keys` holds the start of the mapping key that
/// introduced a node (absent for sequence items and the root).
#[derive(Debug, Default, Clone)]
pub(crate) struct SourceMap {
    values: HashMap<String, Location>,
    keys: HashMap<String, Location>,
}

/// A problem found while reading the YAML itself (syntax, keys, unsupported features).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct YamlProblem {
    /// Where the problem is.
    pub location: Location,
    /// JSON path of the offending node; empty at the root or for syntax errors.
    pub path: String,
    /// Lowercase message.
    pub message: String,
}

impl SourceMap {
    /// Start of the node at `path`, or of its nearest recorded ancestor.
    pub(crate) fn value(&self, path: &str) -> Location {
        let mut p = path;
        loop {
            if let Some(loc) = self.values.get(p) {
                return *loc;
            }
            match parent(p) {
                Some(up) => p = up,
                None => return Location::new(1, 1),
            }
        }
    }

    /// Start of the mapping key that introduced `path`, falling back to [`Self::value`].
    pub(crate) fn key(&self, path: &str) -> Location {
        self.keys.get(path).copied().unwrap_or_else(|| self.value(path))
    }
}

/// Path of the child `key` of the mapping at `parent`.
pub(crate) fn child_key(parent: &str, key: &str) -> String {
    if parent.is_empty() { key.to_owned() } else { format!("{parent}.{key}") }
}

/// Path of item `index` of the sequence at `parent`.
pub(crate) fn child_index(parent: &str, index: usize) -> String {
    format!("{parent}[{index}]")
}

/// Path of the parent node, or `None` at the root.
fn parent(path: &str) -> Option<&str> {
    if path.is_empty() {
        return None;
    }
    let cut = path.rfind(['.', '[']).unwrap_or(0);
    Some(&path[..cut])
}

/// Parses `source` as a single YAML document.
///
/// Errors: a syntax error (one problem at the parser's position), an empty stream, more than
/// one document, or nodes JSON cannot hold (non-string keys, custom tags on collections, bad
/// tagged scalars, non-finite floats); all such node problems are returned together.
pub(crate) fn parse(source: &str) -> Result<(Value, SourceMap), Vec<YamlProblem>> {
    let docs = MarkedYaml::load_from_str(source).map_err(|e| {
        vec![YamlProblem {
            location: location(e.marker()),
            path: String::new(),
            message: syntax_message(source, e.marker(), e.info()),
        }]
    })?;
    let mut docs = docs.into_iter().filter(|d| !is_empty_document(d));
    let Some(doc) = docs.next() else {
        return Err(vec![problem(Location::new(1, 1), "", "document is empty")]);
    };
    if let Some(extra) = docs.next() {
        let at = location(&extra.span.start);
        return Err(vec![problem(at, "", "expected a single yaml document, found more than one")]);
    }
    let mut conv = Converter::default();
    let value = conv.node(&doc, String::new());
    if conv.problems.is_empty() { Ok((value, conv.map)) } else { Err(conv.problems) }
}

fn is_empty_document(doc: &MarkedYaml<'_>) -> bool {
    matches!(doc.data, YamlData::BadValue)
}

#[derive(Default)]
struct Converter {
    map: SourceMap,
    problems: Vec<YamlProblem>,
}

impl Converter {
    fn node(&mut self, node: &MarkedYaml<'_>, path: String) -> Value {
        let at = location(&node.span.start);
        self.map.values.insert(path.clone(), at);
        match &node.data {
            YamlData::Value(scalar) => self.scalar(scalar, at, &path),
            YamlData::Representation(text, _, _) => Value::String(text.to_string()),
            YamlData::Sequence(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.node(item, child_index(&path, i)))
                    .collect(),
            ),
            YamlData::Mapping(entries) => {
                let mut out = Map::new();
                for (key, value) in entries {
                    let key_at = location(&key.span.start);
                    let Some(name) = key_name(key) else {
                        self.problems.push(problem(key_at, &path, "mapping key must be a string"));
                        continue;
                    };
                    let child = child_key(&path, name);
                    self.map.keys.insert(child.clone(), key_at);
                    let v = self.node(value, child);
                    out.insert(name.to_owned(), v);
                }
                Value::Object(out)
            }
            YamlData::Tagged(tag, _) => {
                self.problems.push(problem(at, &path, &format!("unsupported yaml tag {tag}")));
                Value::Null
            }
            YamlData::Alias(_) => {
                self.problems.push(problem(at, &path, "unknown yaml alias"));
                Value::Null
            }
            YamlData::BadValue => {
                self.problems.push(problem(at, &path, "invalid yaml value"));
                Value::Null
            }
        }
    }

    fn scalar(&mut self, scalar: &Scalar<'_>, at: Location, path: &str) -> Value {
        match scalar {
            Scalar::Null => Value::Null,
            Scalar::Boolean(b) => Value::Bool(*b),
            Scalar::Integer(i) => Value::Number(Number::from(*i)),
            Scalar::FloatingPoint(f) => match Number::from_f64(f.into_inner()) {
                Some(n) => Value::Number(n),
                None => {
                    self.problems.push(problem(at, path, "non-finite numbers are not supported"));
                    Value::Null
                }
            },
            Scalar::String(s) => Value::String(s.to_string()),
        }
    }
}

fn key_name<'a>(key: &'a MarkedYaml<'_>) -> Option<&'a str> {
    match &key.data {
        YamlData::Value(Scalar::String(s)) => Some(s),
        YamlData::Representation(s, _, _) => Some(s),
        _ => None,
    }
}

fn problem(location: Location, path: &str, message: &str) -> YamlProblem {
    YamlProblem { location, path: path.to_owned(), message: message.to_owned() }
}

/// Converts a saphyr marker (1-based line, 0-based column) to a [`Location`].
fn location(marker: &Marker) -> Location {
    let line = u32::try_from(marker.line()).unwrap_or(u32::MAX);
    let column = u32::try_from(marker.col().saturating_add(1)).unwrap_or(u32::MAX);
    Location::new(line, column)
}

/// Turns a scanner message into ours; duplicate keys get the key's text.
fn syntax_message(source: &str, marker: &Marker, info: &str) -> String {
    if info == "duplicated key in mapping" {
        if let Some(key) = key_at(source, marker) {
            return format!("duplicate key \"{key}\"");
        }
        return "duplicate key".to_owned();
    }
    info.to_owned()
}

/// The plain or quoted key text starting at `marker`, up to the `:` indicator.
fn key_at(source: &str, marker: &Marker) -> Option<String> {
    let line = source.lines().nth(marker.line().checked_sub(1)?)?;
    let rest: String = line.chars().skip(marker.col()).collect();
    let key = rest.split(':').next()?.trim();
    let key = key.trim_matches(|c| c == '"' || c == '\'');
    (!key.is_empty()).then(|| key.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_records_value_and_key_locations() {
        let (value, map) = parse("a:\n  b: [1, two]\n").expect("valid yaml");
        assert_eq!(value["a"]["b"][1], Value::String("two".into()));
        assert_eq!(map.key("a.b"), Location::new(2, 3));
        assert_eq!(map.value("a.b"), Location::new(2, 6));
        assert_eq!(map.value("a.b[1]"), Location::new(2, 10));
    }

    #[test]
    fn value_falls_back_to_nearest_ancestor() {
        let (_, map) = parse("a:\n  b: 1\n").expect("valid yaml");
        assert_eq!(map.value("a.b.c[2].d"), Location::new(2, 6));
    }

    #[test]
    fn duplicate_key_is_reported_at_second_key() {
        let problems = parse("a: 1\nb: 2\na: 3\n").expect_err("duplicate");
        assert_eq!(problems[0].location, Location::new(3, 1));
        assert_eq!(problems[0].message, "duplicate key \"a\"");
    }

    #[test]
    fn non_string_key_is_rejected() {
        let problems = parse("a:\n  80: http\n").expect_err("int key");
        assert_eq!(problems[0].location, Location::new(2, 3));
        assert_eq!(problems[0].path, "a");
    }

    #[test]
    fn empty_and_multi_document_streams_are_rejected() {
        assert_eq!(parse("# nothing\n").expect_err("empty")[0].message, "document is empty");
        let problems = parse("a: 1\n---\nb: 2\n").expect_err("two docs");
        assert_eq!(problems[0].location.line, 3);
    }

    #[test]
    fn parent_strips_last_segment() {
        assert_eq!(parent("a.b[3].c"), Some("a.b[3]"));
        assert_eq!(parent("a.b[3]"), Some("a.b"));
        assert_eq!(parent("a"), Some(""));
        assert_eq!(parent(""), None);
    }
}
