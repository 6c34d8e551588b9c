//! Unit tests of the YAML front end ([`super`]).

use super::*;

fn parse_all(source: &str) -> Result<(Value, SourceMap<'_>), Vec<YamlProblem>> {
    parse(source, "", |_, _, _| {}).map(|(value, map, _)| (value, map))
}

#[test]
fn parse_records_value_and_key_locations() {
    let (value, map) = parse_all("a:\n  b: [1, two]\n").expect("valid yaml");
    assert_eq!(value["a"]["b"][1], Value::String("two".into()));
    assert_eq!(map.key("a.b"), Location::new(2, 3));
    assert_eq!(map.value("a.b"), Location::new(2, 6));
    assert_eq!(map.value("a.b[1]"), Location::new(2, 10));
}

#[test]
fn value_falls_back_to_nearest_ancestor() {
    let (_, map) = parse_all("a:\n  b: 1\n").expect("valid yaml");
    assert_eq!(map.value("a.b.c[2].d"), Location::new(2, 6));
}

#[test]
fn duplicate_key_is_reported_at_second_key() {
    let problems = parse_all("a: 1\nb: 2\na: 3\n").expect_err("duplicate");
    assert_eq!(problems[0].location, Location::new(3, 1));
    assert_eq!(problems[0].message, "duplicate key \"a\"");
}

#[test]
fn non_string_key_is_rejected() {
    let problems = parse_all("a:\n  80: http\n").expect_err("int key");
    assert_eq!(problems[0].location, Location::new(2, 3));
    assert_eq!(problems[0].path, "a");
}

#[test]
fn empty_and_multi_document_streams_are_rejected() {
    assert_eq!(parse_all("# nothing\n").expect_err("empty")[0].message, "document is empty");
    let problems = parse_all("a: 1\n---\nb: 2\n").expect_err("two docs");
    assert_eq!(problems[0].location.line, 3);
}

#[test]
fn alias_copies_the_anchored_node_and_its_positions() {
    let (value, map) = parse_all("a: &x\n  b: [1, {c: 3}]\nd: *x\n").expect("valid yaml");
    assert_eq!(value["d"], value["a"]);
    assert_eq!(map.value("d"), Location::new(3, 4));
    assert_eq!(map.value("d.b[1].c"), Location::new(2, 14));
    assert_eq!(map.key("d.b"), Location::new(2, 3));
}

#[test]
fn redefined_anchor_applies_from_its_new_definition() {
    let (value, _) = parse_all("a: &x 1\nb: *x\nc: &x 2\nd: *x\n").expect("valid yaml");
    assert_eq!((value["b"].as_i64(), value["d"].as_i64()), (Some(1), Some(2)));
}

#[test]
fn problems_in_an_anchored_node_are_reported_again_at_each_alias() {
    let problems = parse_all("a: &x {1: q}\nb:\n  c: *x\n").expect_err("int key");
    let found: Vec<_> = problems.iter().map(|p| (p.location, p.path.as_str())).collect();
    assert_eq!(found, [(Location::new(1, 8), "a"), (Location::new(1, 8), "b.c")]);
}

#[test]
fn alias_to_its_own_unfinished_anchor_is_an_invalid_value() {
    let problems = parse_all("a: &r [*r]\n").expect_err("recursive alias");
    assert_eq!(problems[0].message, "invalid yaml value");
    assert_eq!((problems[0].location, problems[0].path.as_str()), (Location::new(1, 8), "a[0]"));
}

#[test]
fn alias_expansion_is_bounded() {
    let mut source = String::from("a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\n");
    let mut prev = 'a';
    for name in ['b', 'c', 'd', 'e', 'f'] {
        let items = vec![format!("*{prev}"); 10].join(", ");
        source.push_str(&format!("{name}: &{name} [{items}]\n"));
        prev = name;
    }
    let problems = parse_all(&source).expect_err("billion laughs");
    assert!(problems[0].message.starts_with("alias expansion exceeded"), "{problems:?}");
    assert_eq!(problems[0].location.line, 5);
}

#[test]
fn duplicate_non_string_and_alias_keys_are_reported() {
    let problems = parse_all("a:\n  80: http\n  80: https\n").expect_err("duplicate");
    assert_eq!(problems[0].message, "duplicate key \"80\"");
    assert_eq!(problems[0].location, Location::new(3, 3));
    let problems = parse_all("k: &k key\n*k : 1\nkey: 2\n").expect_err("duplicate");
    assert_eq!(problems[0].message, "duplicate key \"key\"");
    assert_eq!(problems[0].location, Location::new(3, 1));
}

#[test]
fn quoted_and_plain_keys_are_the_same_key() {
    let problems = parse_all("a: 1\n'a': 2\n").expect_err("duplicate");
    assert_eq!(problems[0].message, "duplicate key \"a\"");
    let problems = parse_all("a:\n  80: x\n  \"80\": y\n").expect_err("int key");
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].message, "mapping key must be a string");
}

#[test]
fn tags_resolve_like_saphyr() {
    let source = "a: !foo [1]\nb: !!int x\nc: !!str 12\nd: !!map {e: .inf}\n";
    let problems = parse_all(source).expect_err("tags");
    let found: Vec<_> = problems.iter().map(|p| (p.path.as_str(), p.message.as_str())).collect();
    assert_eq!(
        found,
        [
            ("a", "unsupported yaml tag !foo"),
            ("b", "invalid yaml value"),
            ("d.e", "non-finite numbers are not supported"),
        ]
    );
    let (value, _) = parse_all("c: !!str 12\nd: 0x1F\ne: yes\nf: ~\ng:\n").expect("valid");
    assert_eq!(value.to_string(), r#"{"c":"12","d":31,"e":"yes","f":null,"g":null}"#);
}

#[test]
fn problems_deep_in_the_tree_are_located() {
    let problems = parse_all("a:\n  b: [1, {c: {d: {2: x}}}]\n").expect_err("int key");
    assert_eq!(
        (problems[0].location, problems[0].path.as_str()),
        (Location::new(2, 19), "a.b[1].c.d")
    );
}

#[test]
fn items_at_the_streamed_path_go_to_the_callback() {
    let items = std::sync::Mutex::new(Vec::new());
    let source = "spec:\n  list:\n    - &i {n: 1}\n    - *i\nother: [3]\n";
    let sink = |i, at, v| items.lock().expect("not poisoned").push((i, at, v));
    let (value, map, _) = parse(source, "spec.list", sink).expect("valid yaml");
    let items = items.into_inner().expect("not poisoned");
    assert_eq!(value.to_string(), r#"{"other":[3],"spec":{"list":[null,null]}}"#);
    assert_eq!(items.len(), 2);
    assert_eq!((items[1].0, &items[1].2), (1, &items[0].2));
    // Each item comes with its start; the source map finds it too (by parsing again).
    assert_eq!((items[0].1, items[1].1), (Location::new(3, 7), Location::new(4, 7)));
    assert_eq!(map.value("spec.list[1]"), Location::new(4, 7));
    assert_eq!(map.value("spec.list[0].n"), Location::new(3, 14));
}

#[test]
fn parent_strips_last_segment() {
    assert_eq!(parent("a.b[3].c"), Some("a.b[3]"));
    assert_eq!(parent("a.b[3]"), Some("a.b"));
    assert_eq!(parent("a"), Some(""));
    assert_eq!(parent(""), None);
}

#[test]
fn locate_json_finds_nested_values_and_keys() {
    let text = "{\n  \"a\": {\"b\": [1, \"x\\ty\"]},\n  \"c\": []\n}";
    let located = locate_json(text).expect("valid json");
    assert_eq!(located.value_location("a.b[1]"), Location::new(2, 18));
    assert_eq!(located.key_location("a.b"), Location::new(2, 9));
    assert_eq!(located.value_location("a.b[7].c"), Location::new(2, 14));
    // A missing field: the key of the object that lacks it.
    assert_eq!(located.key_location("a.b[7].c"), Location::new(2, 9));
    assert_eq!(located.key_location(""), Location::new(1, 1));
}

#[test]
fn locate_json_reports_a_duplicate_key_with_its_path() {
    let text = "{\"a\": {\"b\": 1,\n \"b\": 2}}";
    let problems = locate_json(text).expect_err("duplicate");
    assert_eq!(
        problems,
        [LocatedProblem {
            location: Location::new(2, 2),
            path: "a.b".to_owned(),
            message: "duplicate key \"b\"".to_owned(),
            duplicate_key: true,
        }]
    );
}
