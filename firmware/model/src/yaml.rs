//! YAML front end: turns `router.yaml` text into a [`serde_json::Value`] plus a [`SourceMap`]
//! that remembers where every node came from.
//!
//! We build the JSON directly from saphyr-parser's event stream (no YAML tree), so serde (with
//! `serde_path_to_error`) can deserialize the typed resources; node start markers go to the
//! source map. The JSON path of a failing field is then looked up in the source map to report
//! `file:line:column`. Items of one chosen sequence (`spec.resources`) can be handed to the
//! caller as they are built instead of staying in the tree, to keep memory flat.
//!
//! The builder mirrors saphyr's loader: scalars resolve with saphyr's own
//! [`Scalar::parse_from_cow_and_metadata`] (core schema, non-core tags kept as tags), an alias
//! replays its anchor's events (so positions and problems repeat at the alias, and expansion is
//! bounded like saphyr's), and a duplicate mapping key is reported at the second key as
//! `duplicate key "X"`. Duplicate keys that are collections are compared by their JSON value,
//! an approximation of saphyr's comparison (such keys are always rejected anyway). This module
//! does no I/O and knows nothing about routerd kinds. [`locate_json`] offers the positions and
//! duplicate keys of a JSON text to other crates.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::HashMap;

use saphyr::{Scalar, ScalarOwned};
use saphyr_parser::{Event, Marker, Parser, Span, SpannedEventReceiver, Tag};
use serde_json::{Map, Number, Value};

use crate::error::Location;

/// Where each node of the parsed document starts, keyed by JSON path.
///
/// Shape: paths look like `spec.resources[3].spec.address`; the root is the empty string.
/// Locations are needed only for errors, and recording every node of a 10,000-resource config
/// costs more than parsing it, so the first parse records only the document envelope (paths
/// with at most one `.`, outside the streamed items: each streamed item's start goes to the
/// [`ItemSink`] with the item instead). The first lookup of another path parses the source
/// again, recording everything ([`Positions`]); a config without errors never pays for that.
#[derive(Debug, Clone)]
pub(crate) struct SourceMap<'s> {
    source: &'s str,
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
    /// The problem is a repeated mapping key.
    pub duplicate_key: bool,
}

impl SourceMap<'_> {
    /// Start of the node at `path`, or of its nearest recorded ancestor.
    pub(crate) fn value(&self, path: &str) -> Location {
        self.positions_for(path).value(path)
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
            let full = build(self.source, true, false, None);
            full.map(|built| built.positions).unwrap_or_default()
        })
    }
}

impl Positions {
    /// Start of the node at `path`, or of its nearest recorded ancestor, else 1:1.
    fn value(&self, path: &str) -> Location {
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
}

/// Where each value and mapping key of a JSON text starts, by JSON path (see [`locate_json`]).
///
/// Shape: paths are `routes.gs-local-network.groups[0]` (keys joined by `.`, items as `[i]`,
/// keys written as parsed, unescaped), the root is the empty string; lines and columns are
/// 1-based, columns count characters.
#[derive(Debug, Clone)]
pub struct Located {
    positions: Positions,
}

impl Located {
    /// Start of the value at `path`, or of its nearest ancestor in the text (a missing field:
    /// the object that lacks it; a path of no node at all: the root).
    pub fn value_location(&self, path: &str) -> Location {
        self.positions.value(path)
    }

    /// Start of the key that introduced `path`, or of its nearest ancestor's key (a missing
    /// field: the key of the object that lacks it); without a key on the way (the root, items
    /// of a root array), [`Self::value_location`].
    pub fn key_location(&self, path: &str) -> Location {
        let mut p = path;
        loop {
            if let Some(loc) = self.positions.keys.get(p) {
                return *loc;
            }
            match parent(p) {
                Some(up) => p = up,
                None => return self.value_location(path),
            }
        }
    }
}

/// A problem [`locate_json`] found in a text.
///
/// Shape: `path` is in [`Located`]'s format, empty for the root and for syntax errors;
/// `message` is lowercase without a trailing period, e.g. `duplicate key "pilots"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocatedProblem {
    /// Where the problem is: a duplicate key's second occurrence, where a syntax error was
    /// found.
    pub location: Location,
    /// JSON path of the offending node (of the repeated key's value for a duplicate key).
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// The problem is a mapping key that appears twice in one object.
    pub duplicate_key: bool,
}

/// Locates every value and key of `text`, a JSON document, for error messages that point at
/// `line:column`, and finds duplicate keys (which serde_json accepts, keeping the last).
///
/// The text is read as YAML 1.2, of which JSON is a subset, so this accepts more than JSON
/// (comments, plain scalars, block style): check the syntax with serde_json first and use this
/// only to locate. Strings may hold any character; nesting is limited to 64 levels, as in
/// `router.yaml`.
///
/// Errors: one problem: the first duplicate key (at the repeated key, with its path), a syntax
/// error, or an empty or multi-document stream; or else every node JSON cannot hold
/// (non-string keys, tags). No side effects; never panics.
pub fn locate_json(text: &str) -> Result<Located, Vec<LocatedProblem>> {
    let problems = |problems: Vec<YamlProblem>| {
        let public = |p: YamlProblem| LocatedProblem {
            location: p.location,
            path: p.path,
            message: p.message,
            duplicate_key: p.duplicate_key,
        };
        problems.into_iter().map(public).collect::<Vec<_>>()
    };
    let built = build(text, true, true, None).map_err(problems)?;
    let (_, positions) = whole(text, built, true).map_err(problems)?;
    Ok(Located { positions })
}

/// Number of `.` in `path`: the first parse records paths with at most one (envelope fields
/// and the start of each resource).
fn dots(path: &str) -> usize {
    path.bytes().filter(|b| *b == b'.').count()
}

/// Whether a key child of `parent` gets a `.` separator (its path is not the empty root).
fn parent_has_path_text(parent: &Frame) -> bool {
    parent.ctx.path.as_deref().is_some_and(|p| !p.is_empty())
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
/// Errors: a syntax error (one problem at the parser's position), a duplicate mapping key or an
/// alias expanding past [`ALIAS_BUDGET`] nodes (one problem, like a syntax error), an empty
/// stream, more than one document, or nodes JSON cannot hold (non-string keys, custom tags, bad
/// tagged scalars, non-finite floats); all such node problems are returned together.
///
/// Each item of the sequence at `items_path` (in the first document) goes to `sink`, with its
/// index, as soon as it is built, and the returned value holds `null` in its place; the sink
/// comes back with the value. On error, items handed over so far are meaningless.
pub(crate) fn parse<'s, S: ItemSink>(
    source: &'s str,
    items_path: &str,
    mut sink: S,
) -> Result<(Value, SourceMap<'s>, S), Vec<YamlProblem>> {
    let built = build(source, false, false, Some((items_path, &mut sink)))?;
    let (value, positions) = whole(source, built, false)?;
    Ok((value, SourceMap { source, shallow: positions, full: OnceCell::new() }, sink))
}

/// The document and positions of a [`build`] over all of `source`, or its problems (`json`
/// as in [`build`]).
fn whole(source: &str, built: Built, json: bool) -> Result<(Value, Positions), Vec<YamlProblem>> {
    let Some(value) = built.document else {
        return Err(vec![problem(Location::new(1, 1), "", "document is empty")]);
    };
    if let Some(at) = built.extra {
        return Err(vec![problem(at, "", "expected a single yaml document, found more than one")]);
    }
    if built.unlocated {
        // A problem below the recorded paths: build again with every path to locate it.
        let full = build(source, true, json, None);
        return Err(full.map(|full| full.problems).unwrap_or_default());
    }
    if !built.problems.is_empty() {
        return Err(built.problems);
    }
    Ok((value, built.positions))
}

/// Most nodes alias expansion may copy in one stream, as in saphyr's loader (guards against
/// "billion laughs" documents).
const ALIAS_BUDGET: usize = 100_000;

/// Deepest nesting of collections (block or flow, sequences or mappings) a document may have.
///
/// The deepest routerd config path has about 8 levels (`spec.resources[i].spec.rules[j].match
/// …`), so 64 leaves ample room, while the typed deserialization and the drop of a JSON value
/// recurse once per level: a 10 KB file of 4,000 block levels overflowed the stack before this
/// limit. Crossing it is an error at the collection that crosses it.
pub const MAX_DEPTH: usize = 64;

/// Receives the items of the streamed sequence (see [`parse`]), each with its index and the
/// location of its start.
pub(crate) trait ItemSink {
    /// Takes item `index` of the sequence, which starts at `at`.
    fn item(&mut self, index: usize, at: Location, value: Value);
}

impl<F: FnMut(usize, Location, Value)> ItemSink for F {
    fn item(&mut self, index: usize, at: Location, value: Value) {
        self(index, at, value);
    }
}

/// A path whose sequence items go to the sink with their index rather than into the tree.
type Streamed<'f> = (&'f str, &'f mut dyn ItemSink);

/// What [`build`] makes of a stream.
struct Built {
    /// Root of the first non-empty document.
    document: Option<Value>,
    /// Start of the root of the second non-empty document, if any.
    extra: Option<Location>,
    positions: Positions,
    /// Problems in the first document's nodes.
    problems: Vec<YamlProblem>,
    /// A problem was found where no path was built.
    unlocated: bool,
}

/// YAML versions whose `%YAML` directive a document may carry (routerd writes YAML 1.2, its
/// configs are YAML 1.1 compatible).
const YAML_VERSIONS: [&str; 2] = ["1.1", "1.2"];

/// Checks the `%YAML` directives of the stream's prologue (the lines before the first one that
/// is neither blank, a comment nor a directive: YAML 1.2 §9.2 allows directives only there).
/// saphyr accepts any version and does not report it.
///
/// Errors: a version other than [`YAML_VERSIONS`], at the directive's version.
fn check_version_directive(source: &str) -> Result<(), YamlProblem> {
    for (i, line) in source.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Some(rest) = line.strip_prefix('%') else { break };
        let mut words = rest.split_whitespace();
        if words.next() != Some("YAML") {
            continue;
        }
        let version = words.next().unwrap_or("");
        if !YAML_VERSIONS.contains(&version) {
            let column = line.find(version).filter(|_| !version.is_empty()).unwrap_or(0);
            let at = Location::new(
                u32::try_from(i + 1).unwrap_or(u32::MAX),
                u32::try_from(line[..column].chars().count() + 1).unwrap_or(u32::MAX),
            );
            let message = format!("yaml version {version:?} is not supported (1.1 or 1.2)");
            return Err(problem(at, "", &message));
        }
    }
    Ok(())
}

/// Runs the parser over `source` and builds the JSON value from its events.
///
/// `json` is for [`locate_json`]: strings may hold any character (no [`forbidden_char`] check)
/// and a duplicate key's problem names its path and the key as parsed.
///
/// Errors: a syntax error, or the first duplicate key or alias budget overrun (a later syntax
/// error wins, as in saphyr's loader); one problem either way.
fn build<'f>(
    source: &str,
    record_all: bool,
    json: bool,
    items: Option<Streamed<'f>>,
) -> Result<Built, Vec<YamlProblem>> {
    check_version_directive(source).map_err(|p| vec![p])?;
    let mut builder = Builder {
        source,
        items,
        record_all,
        json,
        positions: Positions::default(),
        sink: Sink::default(),
        stack: Vec::new(),
        document: None,
        extra: None,
        anchors: HashMap::new(),
        open_anchors: Vec::new(),
        recording: Vec::new(),
        alias_budget: ALIAS_BUDGET,
        fatal: None,
        too_deep: false,
    };
    // The event iterator, not `Parser::load`: `load` recurses once per nesting level and
    // overflows the stack on deep block nesting, which only the scanner's flow level limit
    // bounds. This loop and the builder's stack hold any depth on the heap.
    for next in Parser::new_from_str(source) {
        let (ev, span) = next.map_err(|e| {
            vec![YamlProblem {
                location: location(e.marker()),
                path: String::new(),
                message: syntax_message(source, e.marker(), e.info()),
                duplicate_key: false,
            }]
        })?;
        builder.on_event(ev, span);
        if builder.too_deep {
            // Nothing below the limit is read: the scanner's own flow limit (256) comes later.
            break;
        }
    }
    if let Some(fatal) = builder.fatal {
        return Err(vec![fatal]);
    }
    Ok(Built {
        document: builder.document,
        extra: builder.extra,
        positions: builder.positions,
        problems: builder.sink.problems,
        unlocated: builder.sink.unlocated,
    })
}

/// Builds a [`Value`] from parser events with a stack, mirroring saphyr's `YamlLoader` (scalar
/// resolution, anchors, duplicate keys) and the checks JSON needs, without a YAML tree.
struct Builder<'i, 'f> {
    source: &'i str,
    /// Path whose sequence items go to the sink rather than into the tree (see [`parse`]).
    items: Option<Streamed<'f>>,
    /// Record every node (error path) rather than the shallow ones.
    record_all: bool,
    /// Reading JSON for [`locate_json`] (see [`build`]).
    json: bool,
    positions: Positions,
    sink: Sink,
    /// Collections being built, innermost last.
    stack: Vec<Frame>,
    document: Option<Value>,
    extra: Option<Location>,
    /// Anchor id → the anchored node's events (aliases already expanded) and node count.
    anchors: HashMap<usize, Anchor<'i>>,
    /// Anchored nodes being built: (anchor id, index of their first event in `recording`).
    open_anchors: Vec<(usize, usize)>,
    /// Events since the outermost open anchored node started.
    recording: Vec<(Event<'i>, Span)>,
    /// Nodes alias expansion may still copy.
    alias_budget: usize,
    /// The first loader error; later events are ignored, as saphyr's loader does.
    fatal: Option<YamlProblem>,
    /// The nesting crossed [`MAX_DEPTH`] (the fatal error): reading stops there.
    too_deep: bool,
}

/// The events of an anchored node, replayed for each alias to it.
struct Anchor<'i> {
    events: Vec<(Event<'i>, Span)>,
    /// Nodes in the subtree, counted as saphyr does against the alias budget.
    count: usize,
}

#[derive(Default)]
struct Sink {
    problems: Vec<YamlProblem>,
    /// A problem was found where no path was built.
    unlocated: bool,
}

impl Sink {
    fn problem(&mut self, at: Location, path: Option<&str>, message: &str) {
        if path.is_none() {
            self.unlocated = true;
        }
        self.problems.push(problem(at, path.unwrap_or(""), message));
    }
}

/// Where a node sits: its path (`None` below the shallow levels unless recording everything:
/// building a path string per node costs more than the node itself) and whether its problems
/// and positions are dropped (`quiet`: keys, values of non-string keys, children of tagged
/// collections, documents after the first, which a tree walk would not visit).
struct Ctx {
    path: Option<String>,
    quiet: bool,
}

/// A collection being built.
struct Frame {
    items: Items,
    ctx: Ctx,
    at: Location,
    anchor: usize,
    /// A non-core tag: the node becomes a problem, its children are quiet.
    tag: Option<Tag>,
    /// Nodes so far, counted as saphyr does against the alias budget.
    count: usize,
}

enum Items {
    Sequence(Vec<Value>),
    Mapping {
        entries: Map<String, Value>,
        /// Non-string keys seen, for duplicate detection.
        others: Vec<Key>,
        /// The key waiting for its value.
        pending: Option<PendingKey>,
    },
}

struct PendingKey {
    key: Key,
    at: Location,
    /// Where saphyr's loader reports a duplicate of this key (the end of a collection key).
    mark: Marker,
}

/// A mapping key, compared as saphyr compares keys for duplicates.
#[derive(PartialEq)]
enum Key {
    String(String),
    Scalar(ScalarOwned),
    Tagged(Tag, Box<Key>),
    /// A collection key, compared by its JSON value (approximate; always an error anyway).
    Collection(Value),
}

/// A finished node, before it is placed in its parent.
enum Data<'i> {
    /// saphyr's `BadValue`: a core-schema tag the text does not match, or an unresolved alias.
    Bad,
    Scalar(Scalar<'i>),
    Collection(Value),
    Tagged(Tag, Box<Data<'i>>),
}

impl Data<'_> {
    fn into_key(self) -> Key {
        match self {
            Data::Scalar(Scalar::String(s)) => Key::String(s.into_owned()),
            Data::Scalar(s) => Key::Scalar(s.into_owned()),
            Data::Collection(v) => Key::Collection(v),
            Data::Tagged(tag, inner) => Key::Tagged(tag, Box::new(inner.into_key())),
            Data::Bad => Key::Collection(Value::Null),
        }
    }
}

impl<'i> SpannedEventReceiver<'i> for Builder<'i, '_> {
    fn on_event(&mut self, ev: Event<'i>, span: Span) {
        if self.fatal.is_none() {
            self.event(ev, span);
        }
    }
}

impl<'i> Builder<'i, '_> {
    fn event(&mut self, ev: Event<'i>, span: Span) {
        if let Event::Alias(id) = ev {
            self.alias(id, span);
            return;
        }
        if let Event::Scalar(_, _, anchor, _)
        | Event::SequenceStart(anchor, _)
        | Event::MappingStart(anchor, _) = &ev
            && *anchor > 0
        {
            self.open_anchors.push((*anchor, self.recording.len()));
        }
        if !self.open_anchors.is_empty() {
            self.recording.push((ev.clone(), span));
        }
        let at = location(&span.start);
        if let Event::Scalar(.., Some(tag))
        | Event::SequenceStart(_, Some(tag))
        | Event::MappingStart(_, Some(tag)) = &ev
            && self.stack.is_empty()
            && self.document.is_none()
        {
            // A router document is an untagged mapping; a tag could only re-type it.
            let written = if tag.is_yaml_core_schema() {
                format!("!!{}", tag.suffix)
            } else {
                tag.to_string()
            };
            let message = format!("a tag on the document root is not supported (found {written})");
            self.fatal = Some(problem(at, "", &message));
            return;
        }
        match ev {
            Event::Scalar(text, style, anchor, tag) => {
                let data = match tag {
                    Some(tag) if !tag.is_yaml_core_schema() => {
                        let inner = Scalar::parse_from_cow_and_metadata(text, style, None)
                            .map_or(Data::Bad, Data::Scalar);
                        Data::Tagged(tag.into_owned(), Box::new(inner))
                    }
                    tag => Scalar::parse_from_cow_and_metadata(text, style, tag.as_ref())
                        .map_or(Data::Bad, Data::Scalar),
                };
                let ctx = self.child_ctx(at);
                self.finish(data, ctx, at, span.start, 1, anchor);
            }
            Event::SequenceStart(anchor, tag) => {
                self.open(Items::Sequence(Vec::new()), at, anchor, tag);
            }
            Event::MappingStart(anchor, tag) => {
                let items =
                    Items::Mapping { entries: Map::new(), others: Vec::new(), pending: None };
                self.open(items, at, anchor, tag);
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(frame) = self.stack.pop() else { return };
                let value = match frame.items {
                    Items::Sequence(items) => Value::Array(items),
                    Items::Mapping { entries, .. } => Value::Object(entries),
                };
                let mut data = Data::Collection(value);
                if let Some(tag) = frame.tag {
                    data = Data::Tagged(tag, Box::new(data));
                }
                self.finish(data, frame.ctx, frame.at, span.start, frame.count, frame.anchor);
            }
            Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart(_)
            | Event::DocumentEnd
            | Event::Nothing
            | Event::Alias(_) => {}
        }
    }

    fn open(&mut self, items: Items, at: Location, anchor: usize, tag: Option<Cow<'i, Tag>>) {
        if self.stack.len() >= MAX_DEPTH {
            let message = format!("nesting deeper than {MAX_DEPTH} levels is not supported");
            self.fatal = Some(problem(at, "", &message));
            self.too_deep = true;
            return;
        }
        let ctx = self.child_ctx(at);
        let tag = tag.filter(|t| !t.is_yaml_core_schema()).map(Cow::into_owned);
        self.stack.push(Frame { items, ctx, at, anchor, tag, count: 1 });
    }

    /// Whether `frame` is the sequence whose items go to the sink.
    fn is_streamed(&self, frame: &Frame) -> bool {
        let Some((path, _)) = &self.items else { return false };
        matches!(frame.items, Items::Sequence(_))
            && !frame.ctx.quiet
            && frame.tag.is_none()
            && frame.ctx.path.as_deref() == Some(*path)
    }

    /// Expands an alias by replaying its anchor's events, the alias standing in for the
    /// anchored node's start and end.
    fn alias(&mut self, id: usize, span: Span) {
        let Some(anchor) = self.anchors.get(&id) else {
            // Unknown to the loader (the anchored node is still open): saphyr's `BadValue`.
            let at = location(&span.start);
            let ctx = self.child_ctx(at);
            if !self.open_anchors.is_empty() {
                // Replays of an enclosing anchor see the same unresolved alias.
                self.recording.push((Event::Alias(usize::MAX), span));
            }
            self.finish(Data::Bad, ctx, at, span.start, 1, 0);
            return;
        };
        if anchor.count > self.alias_budget {
            self.fatal = Some(problem(
                location(&span.start),
                "",
                "alias expansion exceeded the maximum node budget (possible billion-laughs \
                 attack)",
            ));
            return;
        }
        self.alias_budget -= anchor.count;
        let events = anchor.events.clone();
        let last = events.len().saturating_sub(1);
        for (i, (ev, ev_span)) in events.into_iter().enumerate() {
            self.event(ev, if i == 0 || i == last { span } else { ev_span });
        }
    }

    /// The context of a node starting at `at`, recording its position (and its key's).
    fn child_ctx(&mut self, at: Location) -> Ctx {
        let ctx = match self.stack.last() {
            None => Ctx { path: Some(String::new()), quiet: self.document.is_some() },
            Some(parent) => {
                let quiet = parent.ctx.quiet || parent.tag.is_some();
                match &parent.items {
                    // A streamed item's start goes to the sink with the item (see `finish`):
                    // neither a path string nor a recorded position for each of them.
                    Items::Sequence(_) if self.is_streamed(parent) => Ctx { path: None, quiet },
                    Items::Sequence(items) => {
                        let path = self.child_path(parent, 0, |p| child_index(p, items.len()));
                        Ctx { path, quiet }
                    }
                    Items::Mapping { pending: Some(key), .. } => match &key.key {
                        Key::String(name) => {
                            let dots = dots(name) + usize::from(parent_has_path_text(parent));
                            let path = self.child_path(parent, dots, |p| child_key(p, name));
                            if let Some(p) = path.as_ref().filter(|_| !quiet) {
                                self.positions.keys.insert(p.clone(), key.at);
                            }
                            Ctx { path, quiet }
                        }
                        _ => Ctx { path: None, quiet: true },
                    },
                    Items::Mapping { pending: None, .. } => Ctx { path: None, quiet: true },
                }
            }
        };
        if let Some(p) = ctx.path.as_ref().filter(|_| !ctx.quiet) {
            self.positions.values.insert(p.clone(), at);
        }
        ctx
    }

    /// The path of a child of `parent`, when it is recorded; `extra_dots` is how many `.` the
    /// child's segment adds (checked before building the string, which most children skip).
    fn child_path(
        &self,
        parent: &Frame,
        extra_dots: usize,
        make: impl FnOnce(&str) -> String,
    ) -> Option<String> {
        if parent.ctx.quiet || parent.tag.is_some() {
            return None;
        }
        let path = parent.ctx.path.as_deref()?;
        (self.record_all || dots(path) + extra_dots <= 1).then(|| make(path))
    }

    /// Places a finished node in its parent (or makes it a document root).
    fn finish(
        &mut self,
        data: Data<'i>,
        ctx: Ctx,
        at: Location,
        mark: Marker,
        count: usize,
        anchor: usize,
    ) {
        if anchor > 0
            && let Some((_, start)) = self.open_anchors.pop()
        {
            let events = self.recording[start..].iter().map(|(ev, span)| (unanchored(ev), *span));
            self.anchors.insert(anchor, Anchor { events: events.collect(), count });
            if self.open_anchors.is_empty() {
                self.recording.clear();
            }
        }
        let Some(parent) = self.stack.last_mut() else {
            if matches!(data, Data::Bad) {
                return; // an empty document
            }
            let value = to_value(data, &ctx, at, &mut self.sink, self.json);
            if self.document.is_none() {
                self.document = Some(value);
            } else if self.extra.is_none() {
                self.extra = Some(at);
            }
            return;
        };
        let parent_quiet = parent.ctx.quiet || parent.tag.is_some();
        match &mut parent.items {
            Items::Sequence(items) => {
                parent.count += count;
                let value = to_value(data, &ctx, at, &mut self.sink, self.json);
                match &mut self.items {
                    Some((path, sink))
                        if !parent_quiet && parent.ctx.path.as_deref() == Some(*path) =>
                    {
                        sink.item(items.len(), at, value);
                        items.push(Value::Null);
                    }
                    _ => items.push(value),
                }
            }
            Items::Mapping { entries, others, pending } => match pending.take() {
                None => {
                    if !matches!(data, Data::Bad) {
                        // saphyr's loader ignores a `BadValue` key: the next node is the key.
                        *pending = Some(PendingKey { key: data.into_key(), at, mark });
                    }
                }
                Some(PendingKey { key: Key::String(name), mark: key_mark, .. }) => {
                    parent.count += 1 + count;
                    let value = to_value(data, &ctx, at, &mut self.sink, self.json);
                    if self.json && entries.contains_key(&name) {
                        let path = parent.ctx.path.as_deref().map(|p| child_key(p, &name));
                        self.fatal = Some(YamlProblem {
                            location: location(&key_mark),
                            path: path.unwrap_or_default(),
                            message: format!("duplicate key {name:?}"),
                            duplicate_key: true,
                        });
                    } else if entries.insert(name, value).is_some() {
                        self.fatal = Some(duplicate(self.source, key_mark));
                    }
                }
                Some(PendingKey { key, at: key_at, mark: key_mark }) => {
                    parent.count += 1 + count;
                    if others.contains(&key) {
                        self.fatal = Some(duplicate(self.source, key_mark));
                        return;
                    }
                    others.push(key);
                    if !parent_quiet {
                        let path = parent.ctx.path.as_deref();
                        self.sink.problem(key_at, path, "mapping key must be a string");
                    }
                }
            },
        }
    }
}

/// saphyr's loader error for a duplicate key: at `mark`, the repeated key.
fn duplicate(source: &str, mark: Marker) -> YamlProblem {
    let message = syntax_message(source, &mark, "duplicated key in mapping");
    YamlProblem { duplicate_key: true, ..problem(location(&mark), "", &message) }
}

/// The JSON value of a finished node, recording its problems unless `ctx` is quiet; `json`
/// strings may hold any character.
fn to_value(data: Data<'_>, ctx: &Ctx, at: Location, sink: &mut Sink, json: bool) -> Value {
    let message = match data {
        Data::Scalar(scalar) => match scalar {
            Scalar::Null => return Value::Null,
            Scalar::Boolean(b) => return Value::Bool(b),
            Scalar::Integer(i) => return Value::Number(Number::from(i)),
            Scalar::FloatingPoint(f) => match Number::from_f64(f.into_inner()) {
                Some(n) => return Value::Number(n),
                None => "non-finite numbers are not supported".to_owned(),
            },
            Scalar::String(s) => match forbidden_char(&s).filter(|_| !json) {
                None => return Value::String(s.into_owned()),
                Some(c) => format!("text {s:?} contains {}", describe_forbidden(c)),
            },
        },
        Data::Collection(value) => return value,
        Data::Tagged(tag, _) => format!("unsupported yaml tag {tag}"),
        Data::Bad => "invalid yaml value".to_owned(),
    };
    if !ctx.quiet {
        sink.problem(at, ctx.path.as_deref(), &message);
    }
    Value::Null
}

/// The first character of `text` that no string of a router config may hold: a control
/// character (Unicode category Cc: C0, DEL, C1; line breaks and tabs included, as no field is
/// multi-line text), a bidirectional formatting character (Unicode Bidi_Control: U+061C,
/// U+200E–U+200F, U+202A–U+202E, U+2066–U+2069), or a line or paragraph separator (U+2028,
/// U+2029). Names reach kernel objects, file and unit names and log lines, where such characters
/// would end a line, hide text or show it reordered ("Trojan Source", CVE-2021-42574).
pub(crate) fn forbidden_char(text: &str) -> Option<char> {
    // Printable ASCII is the common case: one pass over the bytes.
    if text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return None;
    }
    text.chars().find(|c| {
        c.is_control()
            || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}')
            || ('\u{202a}'..='\u{202e}').contains(c)
            || ('\u{2066}'..='\u{2069}').contains(c)
    })
}

/// `c`, one of [`forbidden_char`]'s, named for an error message.
pub(crate) fn describe_forbidden(c: char) -> String {
    let what = match c {
        '\u{2028}' | '\u{2029}' => "line separator",
        c if c.is_control() => "control character",
        _ => "bidirectional formatting character",
    };
    format!("{what} U+{:04X}; strings in router.yaml are single-line, printable text", u32::from(c))
}

/// `ev` without its anchor, for replaying an alias (nested anchors are not redefined).
fn unanchored<'i>(ev: &Event<'i>) -> Event<'i> {
    match ev {
        Event::Scalar(text, style, _, tag) => Event::Scalar(text.clone(), *style, 0, tag.clone()),
        Event::SequenceStart(_, tag) => Event::SequenceStart(0, tag.clone()),
        Event::MappingStart(_, tag) => Event::MappingStart(0, tag.clone()),
        other => other.clone(),
    }
}

fn problem(location: Location, path: &str, message: &str) -> YamlProblem {
    YamlProblem {
        location,
        path: path.to_owned(),
        message: message.to_owned(),
        duplicate_key: false,
    }
}

/// Converts a saphyr marker (1-based line, 0-based column) to a [`Location`].
fn location(marker: &Marker) -> Location {
    let line = u32::try_from(marker.line()).unwrap_or(u32::MAX);
    let column = u32::try_from(marker.col().saturating_add(1)).unwrap_or(u32::MAX);
    Location::new(line, column)
}

/// Turns a scanner message into ours; duplicate keys get the key's text.
fn syntax_message(source: &str, marker: &Marker, info: &str) -> String {
    if info == "recursion limit exceeded" {
        // The scanner's flow level limit (256), which it reaches while looking ahead for a
        // simple key, before the builder sees the collection that crosses [`MAX_DEPTH`].
        return format!("nesting deeper than {MAX_DEPTH} levels is not supported");
    }
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
#[path = "yaml_tests.rs"]
mod tests;
