//! Hostile input (issue "Hardening" §1): nesting depth, non-UTF-8 bytes, control and
//! bidirectional characters, names, `%YAML` directives and root tags. Each is a located error,
//! never an abort.

use routerd_model::{Location, load, parse_config};

use crate::support::*;

/// `depth` nested block sequences (`- - - … x`) on one line.
fn block_sequences(depth: usize) -> String {
    format!("{}x\n", "- ".repeat(depth))
}

/// `depth` nested block mappings, one per line, each key indented two more spaces.
fn block_mappings(depth: usize) -> String {
    let mut text: String = (0..depth).map(|i| format!("{}k{i}:\n", "  ".repeat(i))).collect();
    text.push_str(&format!("{}x\n", "  ".repeat(depth)));
    text
}

#[test]
fn deep_block_sequences_are_an_error_at_the_first_level_past_the_limit() {
    // 10 KB of `- `, which overflowed the stack before the limit.
    let error = single_error(&block_sequences(5000));
    // The 65th `- ` starts at column 129.
    assert_eq!(error.location(), Location::new(1, 129), "{error}");
    assert_eq!(error.message, "nesting deeper than 64 levels is not supported");
}

#[test]
fn deep_block_mappings_are_an_error_at_the_first_level_past_the_limit() {
    let error = single_error(&block_mappings(4000));
    // Line 65 holds the 65th mapping's key, indented by 128 spaces.
    assert_eq!(error.location(), Location::new(65, 129), "{error}");
    assert_eq!(error.message, "nesting deeper than 64 levels is not supported");
}

#[test]
fn deep_flow_collections_are_the_same_error() {
    for text in ["[".repeat(4000), "{a: ".repeat(4000)] {
        let error = single_error(&text);
        assert_eq!(error.message, "nesting deeper than 64 levels is not supported", "{error}");
        assert_eq!(error.line, 1);
    }
}

#[test]
fn nesting_up_to_the_limit_is_read() {
    // The document's mapping and 63 sequences: 64 levels, then an unrelated error.
    let text = format!("x: {}1{}\n", "[".repeat(63), "]".repeat(63));
    let errors = errors_of(&text);
    assert!(errors.iter().any(|e| e.message.starts_with("unknown field `x`")), "{errors}");
    assert!(!errors.iter().any(|e| e.message.contains("nesting")), "{errors}");
    let error = single_error(&format!("x: {}1{}\n", "[".repeat(64), "]".repeat(64)));
    assert_eq!(error.location(), Location::new(1, 67), "{error}");
}

#[test]
fn deep_nesting_late_in_a_long_list_is_found() {
    let items: String = (0..3000).map(|i| interface(&format!("if{i}"), &format!("e{i}"))).collect();
    // The document, `spec`, the list, the item and its `spec` are 5 levels: the 60th `[` under
    // `spec.resources[2999].spec.x` is the 65th.
    let deep = format!("        x: {}1{}\n", "[".repeat(62), "]".repeat(62));
    let error = single_error(&document(&format!("{items}{deep}")));
    assert_eq!(error.message, "nesting deeper than 64 levels is not supported", "{error}");
    // Line 7 + 7 * 3000 is the `x:` line, whose first `[` is at column 12.
    assert_eq!(error.location(), Location::new(7 + 7 * 3000, 71), "{error}");
}

#[test]
fn non_utf8_bytes_are_named_at_their_line_and_column() {
    let dir = std::env::temp_dir().join(format!("routerd-model-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("router.yaml");
    let text = document(&interface("lan", "eth1"));
    // `name: lan` on line 10 becomes `name: lé<0xff>n`: after `        name: l` (15 characters)
    // and `é` (one character, two bytes), the 0xff is at column 17.
    let (head, tail) = text.split_once("name: lan").expect("name");
    let bytes = [head.as_bytes(), "name: lé".as_bytes(), &[0xff], b"n", tail.as_bytes()].concat();
    std::fs::write(&file, &bytes).expect("write");
    let errors = load(&file).expect_err("not UTF-8");
    std::fs::remove_dir_all(&dir).ok();
    let error = errors.iter().next().expect("one error");
    assert_eq!(error.location(), Location::new(10, 17), "{error}");
    assert_eq!(error.message, "invalid UTF-8 (byte 0xff); the file must be UTF-8");
}

#[test]
fn control_and_bidirectional_characters_are_refused_in_every_string() {
    let cases = [
        ("name: \"l\\0an\"", "\"l\\0an\"", "control character U+0000"),
        ("name: \"l\\u202ean\"", "\"l\\u{202e}an\"", "bidirectional formatting character U+202E"),
        ("name: \"la\\u2066n\"", "\"la\\u{2066}n\"", "bidirectional formatting character U+2066"),
        ("name: \"la\\u2028n\"", "\"la\\u{2028}n\"", "line separator U+2028"),
        ("name: \"l\\x1b[31man\"", "\"l\\u{1b}[31man\"", "control character U+001B"),
    ];
    for (name, escaped, what) in cases {
        let source = document(&interface("lan", "eth1").replace("name: lan", name));
        let error = single_error(&source);
        assert_eq!(error.location(), Location::new(10, 15), "{error}");
        assert_eq!(error.path, "spec.resources[0].metadata.name");
        let message = format!(
            "text {escaped} contains {what}; strings in router.yaml are single-line, printable text"
        );
        assert_eq!(error.message, message);
        // Printed on one line, whatever the name holds.
        assert_eq!(error.to_string().lines().count(), 1, "{error}");
    }
}

#[test]
fn an_api_version_or_kind_with_a_newline_is_an_error_printed_escaped() {
    let source = document(&interface("lan", "eth1")).replace("kind: Router", "kind: \"Rou\\nter\"");
    let error = single_error(&source);
    assert_eq!((error.line, error.path.as_str()), (2, "kind"), "{error}");
    assert!(error.to_string().contains(r#""Rou\nter""#), "{error}");
    let source = document(
        &interface("lan", "eth1").replace("v1alpha1\n      kind", "v1\\nalpha1\"\n      kind"),
    )
    .replace("- apiVersion: net.routerd.net/", "- apiVersion: \"net.routerd.net/");
    let error = single_error(&source);
    assert_eq!(error.path, "spec.resources[0].apiVersion", "{error}");
    assert_eq!(error.to_string().lines().count(), 1, "{error}");
}

#[test]
fn names_are_bounded_and_hold_no_slash_or_whitespace() {
    for (name, message) in [
        ("a/b", "name \"a/b\" must not contain '/'"),
        ("\"a b\"", "name \"a b\" must not contain ' '"),
        ("..%2f", ""),
    ] {
        let source = document(&interface("x", "eth1").replace("name: x", &format!("name: {name}")));
        if message.is_empty() {
            config_of(&source);
            continue;
        }
        let error = single_error(&source);
        assert_eq!(error.path, "spec.resources[0].metadata.name", "{error}");
        assert_eq!(error.message, message);
    }
    let long = "n".repeat(254);
    let error = single_error(&document(&interface(&long, "eth1")));
    assert_eq!(error.message, "name is 254 bytes long, longer than 253");
    config_of(&document(&interface(&"n".repeat(253), "eth1")));
    // The router's own name too.
    let source = document(&interface("lan", "eth1")).replace("name: test", "name: a/b");
    assert_eq!(single_error(&source).path, "metadata.name");
}

#[test]
fn an_ifname_follows_the_kernel_rules() {
    for (ifname, message) in [
        ("a-very-long-name0", "interface name \"a-very-long-name0\" is longer than 15 bytes"),
        ("eth/0", "interface name \"eth/0\" must not contain '/'"),
        ("..", "interface name \"..\" is not allowed"),
        ("\"eth 0\"", "interface name \"eth 0\" must not contain ' '"),
    ] {
        let error = single_error(&document(&interface("lan", ifname)));
        assert_eq!(error.path, "spec.resources[0].spec.ifname", "{error}");
        assert_eq!(error.message, message);
    }
}

#[test]
fn yaml_versions_other_than_1_1_and_1_2_are_refused() {
    let body = document(&interface("lan", "eth1"));
    for version in ["1.1", "1.2"] {
        config_of(&format!("%YAML {version}\n---\n{body}"));
    }
    for version in ["1.3", "2.0"] {
        let error = single_error(&format!("# a comment\n%YAML {version}\n---\n{body}"));
        assert_eq!(error.location(), Location::new(2, 7), "{error}");
        assert_eq!(
            error.message,
            format!("yaml version \"{version}\" is not supported (1.1 or 1.2)")
        );
    }
}

#[test]
fn a_tag_on_the_document_root_is_refused() {
    let body = document(&interface("lan", "eth1"));
    for tag in ["!!map", "!router", "!!str"] {
        let error = single_error(&format!("--- {tag}\n{body}"));
        assert_eq!(error.location(), Location::new(1, 5), "{error}");
        let message = format!("a tag on the document root is not supported (found {tag})");
        assert_eq!(error.message, message);
    }
}

#[test]
fn an_alias_bomb_in_a_real_config_stops_at_the_expansion_budget() {
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (name, prev) in ["b", "c", "d", "e", "f", "g"].iter().zip(["a", "b", "c", "d", "e", "f"]) {
        bomb.push_str(&format!("{name}: &{name} [{}]\n", vec![format!("*{prev}"); 10].join(", ")));
    }
    let source = format!("{bomb}{}", document(&interface("lan", "eth1")));
    let error = single_error(&source);
    // `e`'s tenth `*d` would pass 100,000 nodes.
    assert_eq!(error.line, 5, "{error}");
    assert!(error.message.starts_with("alias expansion exceeded"), "{error}");
}

#[test]
fn an_error_names_the_file_line_and_column() {
    let errors = parse_config(&block_sequences(100), "edge.yaml").expect_err("too deep");
    assert!(errors.to_string().starts_with("edge.yaml:1:129: "), "{errors}");
}
