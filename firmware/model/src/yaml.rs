//! YAML front end: turns `router.yaml` text into a [`serde_json::Value`] plus a [`SourceMap`]
//! that remembers where every node came from.
//!
//! We parse with saphyr's marked tree so every node keeps its start marker, then flatten it to
//! JSON so serde (with `serde_path_to_error`) can deserialize the typed resources. The JSON path
//! of a failing field is then looked up in the source map to report `file:line:column`.
//!
//! Duplicate mapping keys are rejected by saphyr's loader (at the second key). This module does
//! no I/O and knows nothing about routerd kinds.

use std::cell::OnceCell;
use std::collections::HashMap;

use saphyr::{LoadableYamlNode, MarkedYaml, Marker, Scalar, YamlData};
use serde_json::{Map, Number, Value};

use crate::error::Location;

/// Where each node of the parsed document starts, keyed by JSON path.
///
/// Shape: paths look like `spec.resources[3].spec.address`; the root is the empty string.
/// Locations are needed only for errors, and recording every node of a 10,000-resource config
/// costs more than parsing it, so the first parse records only shallow paths (at most one `.`:
/// the document envelope and each `spec.resources[i]`). The first lookup of a deeper path parses
/// the source again, recording everything ([`Positions`]); a config without errors never pays
/// for that.
#[derive(Debug, Clone)]
pub(crate) struct SourceMap {
    source: String,
    shallow: Positions,
    full: OnceCell<Positions>,
}

/// Node and key start positions by path.
#[derive(Debug, Default, Clone)]
struct Positions {
    /// Start of each node.
    values: HashMap<String, Location>,
    /// Start of the mapping key that introduced a node (absent for sequence items, the root).
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
        let positions = self.positions_for(path);
        let mut p = path;
        loop {
            if let Some(loc) = positions.values.get(p) {
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
        let positions = self.positions_for(path);
        positions.keys.get(path).copied().unwrap_or_else(|| self.value(path))
    }

    /// The shallow positions when they hold `path`, else the full ones (built on first use).
    fn positions_for(&self, path: &str) -> &Positions {
        if self.shallow.values.contains_key(path) {
            return &self.shallow;
        }
        self.full.get_or_init(|| {
            // The source parsed once already; a second parse cannot fail differently.
            match MarkedYaml::load_from_str(&self.source) {
                Ok(docs) => {
                    let mut conv = Converter { record_all: true, ..Converter::default() };
                    if let Some(doc) = docs.iter().find(|d| !is_empty_document(d)) {
                        conv.node(doc, Some(String::new()));
                    }
                    conv.positions
                }
                Err(_) => Positions::default(),
            }
        })
    }
}

/// Whether `path` is recorded by the first parse: at most one `.` (envelope fields and the
/// start of each resource).
fn is_shallow(path: &str) -> bool {
    path.bytes().filter(|b| *b == b'.').count() <= 1
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
    let value = conv.node(&doc, Some(String::new()));
    if conv.unlocated {
        let mut full = Converter { record_all: true, ..Converter::default() };
        full.node(&doc, Some(String::new()));
        return Err(full.problems);
    }
    let map =
        SourceMap { source: source.to_owned(), shallow: conv.positions, full: OnceCell::new() };
    if conv.problems.is_empty() { Ok((value, map)) } else { Err(conv.problems) }
}

fn is_empty_document(doc: &MarkedYaml<'_>) -> bool {
    matches!(doc.data, YamlData::BadValue)
}

#[derive(Default)]
struct Converter {
    positions: Positions,
    /// Record every node (error path) rather than the shallow ones.
    record_all: bool,
    problems: Vec<YamlProblem>,
    /// A problem was found where no path was built.
    unlocated: bool,
}

impl Converter {
    /// Converts `node`. `path` is `None` below the shallow levels when not recording
    /// everything: building a path string per node costs more than the conversion itself. A
    /// problem found there sets `unlocated`, and [`parse`] converts again with every path.
    fn node(&mut self, node: &MarkedYaml<'_>, path: Option<String>) -> Value {
        let at = location(&node.span.start);
        if let Some(p) = &path {
            self.positions.values.insert(p.clone(), at);
        }
        match &node.data {
            YamlData::Value(scalar) => self.scalar(scalar, at, path.as_deref()),
            YamlData::Representation(text, _, _) => Value::String(text.to_string()),
            YamlData::Sequence(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        let child = self.child(path.as_deref(), |p| child_index(p, i));
                        self.node(item, child)
                    })
                    .collect(),
            ),
            YamlData::Mapping(entries) => {
                let mut out = Map::new();
                for (key, value) in entries {
                    let key_at = location(&key.span.start);
                    let Some(name) = key_name(key) else {
                        self.problem(key_at, path.as_deref(), "mapping key must be a string");
                        continue;
                    };
                    let child = self.child(path.as_deref(), |p| child_key(p, name));
                    if let Some(c) = &child {
                        self.positions.keys.insert(c.clone(), key_at);
                    }
                    let v = self.node(value, child);
                    out.insert(name.to_owned(), v);
                }
                Value::Object(out)
            }
            YamlData::Tagged(tag, _) => {
                self.problem(at, path.as_deref(), &format!("unsupported yaml tag {tag}"));
                Value::Null
            }
            YamlData::Alias(_) => {
                self.problem(at, path.as_deref(), "unknown yaml alias");
                Value::Null
            }
            YamlData::BadValue => {
                self.problem(at, path.as_deref(), "invalid yaml value");
                Value::Null
            }
        }
    }

    /// The path of a child, when it is recorded.
    fn child(&self, parent: Option<&str>, make: impl FnOnce(&str) -> String) -> Option<String> {
        let child = make(parent?);
        (self.record_all || is_shallow(&child)).then_some(child)
    }

    fn problem(&mut self, at: Location, path: Option<&str>, message: &str) {
        if path.is_none() {
            self.unlocated = true;
        }
        self.problems.push(problem(at, path.unwrap_or(""), message));
    }

    fn scalar(&mut self, scalar: &Scalar<'_>, at: Location, path: Option<&str>) -> Value {
        match scalar {
            Scalar::Null => Value::Null,
            Scalar::Boolean(b) => Value::Bool(*b),
            Scalar::Integer(i) => Value::Number(Number::from(*i)),
            Scalar::FloatingPoint(f) => match Number::from_f64(f.into_inner()) {
                Some(n) => Value::Number(n),
                None => {
                    self.problem(at, path, "non-finite numbers are not supported");
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
