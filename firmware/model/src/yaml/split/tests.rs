//! A split parse must read exactly what the parse in one go reads, or give up. Each text
//! below is tried at every cut [`scan`] can make, and at cuts [`scan`] would never make.

use std::sync::Mutex;

use serde_json::Value;

use super::super::{Base, build};
use super::*;

type Items = Mutex<Vec<(usize, Location, Value)>>;

/// What a parse made: the document, the streamed items in order with their starts, the
/// shallow positions.
#[derive(Debug, PartialEq)]
struct Read {
    value: Value,
    items: Vec<(usize, Location, Value)>,
    values: Vec<(String, Location)>,
    keys: Vec<(String, Location)>,
}

fn sorted(map: std::collections::HashMap<String, Location>) -> Vec<(String, Location)> {
    let mut all: Vec<_> = map.into_iter().collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

/// The parse in one go, or `None` if the text has a problem.
fn in_one_go(source: &str, path: &str) -> Option<Read> {
    let items: Items = Mutex::default();
    let mut sink = |i, at, v| items.lock().expect("not poisoned").push((i, at, v));
    let built = build(source, false, Some((path, &mut sink)), Base::default()).ok()?;
    let (value, positions) = super::super::whole(source, built).ok()?;
    Some(Read {
        value,
        items: items.into_inner().expect("not poisoned"),
        values: sorted(positions.values),
        keys: sorted(positions.keys),
    })
}

/// The split parse at `cut`, or `None` if it gave up.
fn split_at(source: &str, path: &str, cut: &Cut) -> Option<Read> {
    let (value, map, sinks) = parse(source, path, cut, &mut Items::default)?;
    let items = sinks.into_iter().flat_map(|s| s.into_inner().expect("not poisoned")).collect();
    Some(Read { value, items, values: sorted(map.shallow.values), keys: sorted(map.shallow.keys) })
}

impl ItemSink for Items {
    fn item(&mut self, index: usize, at: Location, value: Value) {
        self.get_mut().expect("not poisoned").push((index, at, value));
    }
}

/// Tries every cut before an entry line, and before every other line of the list too (cuts
/// the scan would not make, to show the checks refuse them); returns how many were accepted.
fn every_cut(source: &str, path: &str) -> usize {
    let list = scan(source, path).expect("the text has a list");
    let whole = in_one_go(source, path);
    let mut accepted = 0;
    for before in 1..list.entries.len() {
        let cut = list.cut(before).expect("a cut");
        if let Some(read) = split_at(source, path, &cut) {
            assert_eq!(Some(&read), whole.as_ref(), "cut before entry {before}:\n{source}");
            accepted += 1;
        }
    }
    // Line starts inside items, counted as if they were entries: never accepted unless they
    // are exactly the same as a real cut.
    let first = list.entries[0].0;
    let mut offset = first;
    for (n, line) in source[first..list.end].split_inclusive('\n').enumerate().skip(1) {
        offset += line.len();
        if offset >= list.end || list.entries.iter().any(|(at, _)| *at == offset) {
            continue;
        }
        let breaks = source[..offset].matches('\n').count();
        let before = list.entries.partition_point(|(at, _)| *at < offset);
        let cut = Cut {
            start: offset,
            end: list.end,
            indent: list.indent,
            first_line: list.entries[0].1 + 1,
            end_indent: list.end_indent,
            before,
            line: breaks + 1,
            lines: source[offset..list.end].matches('\n').count(),
        };
        if let Some(read) = split_at(source, path, &cut) {
            assert_eq!(Some(&read), whole.as_ref(), "cut inside an item at line {n}:\n{source}");
        }
    }
    accepted
}

const PLAIN: &str = "\
apiVersion: v1 # a comment
kind: Router
metadata: {name: r}
spec:
  resources:
    - kind: A
      metadata:
        name: a
      spec:
        list:
          - x
          - y
    # a comment between items, at the entries' column

    - kind: B
      spec:
        text: >-
          line one
          - not an entry
          line three
        kept: |-
          trailing


    - kind: C
      spec: {a: [1, 2,
          3], b: \"q\"}
    -   kind: D
        spec:
          folded: >-
            some
            words
    - plain scalar
      continued
    - - nested
      - list
    -
      kind: E
  reconcile:
    mode: strict
other: [1]
";

#[test]
fn every_cut_of_a_plain_list_reads_the_same() {
    assert_eq!(every_cut(PLAIN, "spec.resources"), 6, "every cut before an entry");
}

#[test]
fn a_compact_list_and_crlf_line_ends_read_the_same() {
    let compact = "spec:\n  resources:\n  - a: 1\n  - b: 2\n  - c: 3\n  reconcile: {}\n";
    assert_eq!(every_cut(compact, "spec.resources"), 2);
    let crlf = PLAIN.replace('\n', "\r\n");
    assert_eq!(every_cut(&crlf, "spec.resources"), 6);
}

#[test]
fn columns_count_characters_after_multibyte_text() {
    let source = "spec:\n  resources:\n    - {name: \"é→\", v: 1}\n    - {name: \"ü\", v: 2}\n";
    assert_eq!(every_cut(source, "spec.resources"), 1);
}

#[test]
fn a_quoted_scalar_or_flow_collection_across_the_cut_is_refused() {
    // saphyr lets these run on over lines at the entries' column: the scan takes them for
    // entries, the checks must not.
    let quoted =
        "spec:\n  resources:\n    - a: \"one\n    - two\"\n    - b: 'x\n    - y'\n    - c: 1\n";
    let flow = "spec:\n  resources:\n    - a: [1,\n    - 2]\n    - c: 1\n";
    for source in [quoted, flow] {
        every_cut(source, "spec.resources");
        let list = scan(source, "spec.resources").expect("a list");
        // The cut inside the quoted scalar or flow sequence.
        assert_eq!(split_at(source, "spec.resources", &list.cut(1).expect("cut")), None);
    }
}

#[test]
fn anchors_problems_and_directives_make_it_parse_in_one_go() {
    let texts = [
        "spec:\n  resources:\n    - &a {x: 1}\n    - *a\n    - c: 1\n",
        "spec:\n  resources:\n    - x: &a 1\n    - y: 2\n    - x: *a\n",
        "spec:\n  resources:\n    - a: 1\n    - {1: x}\n    - c: 1\n",
        "spec:\n  resources:\n    - a: 1\n    - {b: 1, b: 2}\n",
        "spec:\n  resources:\n    - a: 1\n    - b: !custom x\n",
        "spec:\n  resources:\n    - a: 1\n    - b: [unclosed\n",
        "spec:\n  resources:\n    - a: 1\n    - b: 2\n---\nsecond: doc\n",
    ];
    for source in texts {
        assert_eq!(every_cut(source, "spec.resources"), 0, "{source}");
    }
    let directive = "%YAML 1.2\n---\nspec:\n  resources:\n    - a: 1\n    - b: 2\n";
    assert!(scan(directive, "spec.resources").is_none());
}

#[test]
fn find_cuts_near_the_middle_and_only_long_lists() {
    let mut source = String::from("apiVersion: v1\nspec:\n  resources:\n");
    for i in 0..100 {
        source.push_str(&format!("    - kind: K\n      metadata:\n        name: n{i}\n"));
    }
    source.push_str("  reconcile:\n    mode: strict\n");
    let cut = find_with(&source, "spec.resources", 1024).expect("a cut");
    // Items n10 and on are a byte longer: the byte halfway point is one item further.
    assert_eq!((cut.before, cut.indent, cut.line, cut.lines), (51, 4, 4 + 153, 147));
    assert!(source[cut.start..].starts_with("    - kind: K\n      metadata:\n        name: n51\n"));
    assert!(source[cut.end..].starts_with("  reconcile:"));
    assert_eq!(find_with(&source, "spec.resources", source.len()), None);
    assert_eq!(find(&source, "spec.resources"), None, "too short for a second thread");
    let read = split_at(&source, "spec.resources", &cut).expect("accepted");
    assert_eq!(Some(read), in_one_go(&source, "spec.resources"));
}
