//! Parse-stage errors: YAML syntax, envelope and typed deserialization, each located exactly.

use routerd_model::parse_config;

use crate::support::*;

const LAN: &str = "net.routerd.net/v1alpha1/Interface/lan";

#[test]
fn unknown_field_is_reported_at_its_key() {
    let source = document(&format!("{}        speed: 1000\n", interface("lan", "eth1")));
    let error = single_error(&source);
    assert_error(
        &error,
        (14, 9),
        Some(LAN),
        "spec.resources[0].spec.speed",
        "unknown field `speed`, expected one of `ifname`, `managed`, `adminUp`, `owner`, `mtu`",
    );
}

#[test]
fn wrong_type_is_reported_at_the_value() {
    let source = document(&interface("lan", "eth1").replace("managed: true", "managed: \"yes\""));
    let error = single_error(&source);
    assert_error(
        &error,
        (13, 18),
        Some(LAN),
        "spec.resources[0].spec.managed",
        "invalid type: string \"yes\", expected a boolean",
    );
}

#[test]
fn unknown_enum_value_is_reported_at_the_value() {
    let source = document(&format!("{}        owner: nobody\n", interface("lan", "eth1")));
    let error = single_error(&source);
    assert_error(
        &error,
        (14, 16),
        Some(LAN),
        "spec.resources[0].spec.owner",
        "unknown variant `nobody`, expected `routerd` or `external`",
    );
}

#[test]
fn missing_field_is_reported_at_the_key_of_its_map() {
    let source = document(&interface("lan", "eth1").replace("        managed: true\n", ""));
    let error = single_error(&source);
    assert_error(&error, (11, 7), Some(LAN), "spec.resources[0].spec", "missing field `managed`");
}

#[test]
fn unknown_kind_is_reported_at_the_kind() {
    let source = document(&interface("lan", "eth1").replace("kind: Interface", "kind: Interfce"));
    let error = single_error(&source);
    assert_error(
        &error,
        (8, 13),
        Some("net.routerd.net/v1alpha1/Interfce/lan"),
        "spec.resources[0].kind",
        "unknown kind \"Interfce\"",
    );
}

#[test]
fn unknown_kind_in_the_wrong_case_gets_a_suggestion() {
    let source = document(&interface("lan", "eth1").replace("kind: Interface", "kind: interface"));
    assert_eq!(
        single_error(&source).message,
        "unknown kind \"interface\" (did you mean \"Interface\"?)"
    );
}

#[test]
fn mismatched_api_version_is_reported_at_the_api_version() {
    let source = document(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: Zone
      metadata:
        name: lan
      spec:
        interfaces: []
",
    );
    let error = single_error(&source);
    assert_error(
        &error,
        (7, 19),
        Some("net.routerd.net/v1alpha1/Zone/lan"),
        "spec.resources[0].apiVersion",
        "apiVersion \"net.routerd.net/v1alpha1\" does not match kind Zone, expected \
         \"firewall.routerd.net/v1alpha1\"",
    );
}

#[test]
fn file_with_three_broken_resources_reports_three_errors() {
    let broken_field = format!("{}        speed: 1000\n", interface("wan", "eth0"));
    let broken_type = interface("lan", "eth1").replace("managed: true", "managed: [true]");
    let broken_kind = interface("dmz", "eth2").replace("kind: Interface", "kind: Bridge");
    let valid = interface("mgmt", "eth3");
    let source = document(&format!("{broken_field}{valid}{broken_type}{broken_kind}"));
    let errors = errors_of(&source);
    assert_eq!(errors.len(), 3, "got:\n{errors}");
    let lines: Vec<u32> = errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![14, 28, 30]);
    assert!(errors.0[0].message.starts_with("unknown field `speed`"));
    assert!(errors.0[1].message.starts_with("invalid type: sequence"));
    assert_eq!(errors.0[2].message, "unknown kind \"Bridge\"");
}

#[test]
fn broken_resource_does_not_cause_dangling_references_to_it() {
    let broken = interface("lan", "eth1").replace("managed: true", "managed: 1");
    let address = "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticAddress
      metadata:
        name: lan-v4
      spec:
        interface: lan
        address: 192.168.1.1/24
";
    let errors = errors_of(&document(&format!("{broken}{address}")));
    assert_eq!(errors.len(), 1, "got:\n{errors}");
    assert_eq!(errors.0[0].path, "spec.resources[0].spec.managed");
}

#[test]
fn yaml_syntax_error_reports_its_position() {
    let source =
        "apiVersion: routerd.net/v1alpha1\nkind: Router\nmetadata:\n  name: test\n    bad: 1\n";
    let error = single_error(source);
    assert_error(&error, (5, 8), None, "", "mapping values are not allowed in this context");
    assert_eq!(
        error.to_string(),
        "router.yaml:5:8: mapping values are not allowed in this context"
    );
}

#[test]
fn duplicate_yaml_key_is_reported_at_the_second_key() {
    let source = document(&format!("{}        ifname: eth9\n", interface("lan", "eth1")));
    let error = single_error(&source);
    assert_error(&error, (14, 9), None, "", "duplicate key \"ifname\"");
}

#[test]
fn non_string_mapping_key_is_rejected() {
    let source = document(&format!("{}        80: http\n", interface("lan", "eth1")));
    let error = single_error(&source);
    assert_error(&error, (14, 9), None, "spec.resources[0].spec", "mapping key must be a string");
}

#[test]
fn document_envelope_errors_are_all_reported() {
    let source = "apiVersion: routerd.net/v2\nkind: Router\nmetadata: {}\nextra: 1\nspec:\n  \
                  resources: []\n";
    let errors = errors_of(source);
    let summary: Vec<(u32, u32, &str)> =
        errors.iter().map(|e| (e.line, e.column, e.message.as_str())).collect();
    assert_eq!(
        summary,
        vec![
            (
                1,
                13,
                "apiVersion \"routerd.net/v2\" is not supported, expected \"routerd.net/v1alpha1\""
            ),
            (3, 1, "missing field `name`"),
            (
                4,
                1,
                "unknown field `extra`, expected one of `apiVersion`, `kind`, `metadata`, `spec`"
            ),
        ]
    );
}

#[test]
fn missing_resources_list_is_reported_at_spec() {
    let source = "apiVersion: routerd.net/v1alpha1\nkind: Router\nmetadata:\n  name: x\nspec:\n  \
                  reconcile: {mode: strict}\n";
    let error = single_error(source);
    assert_error(&error, (5, 1), None, "spec", "missing field `resources`");
}

#[test]
fn empty_file_is_an_error() {
    let error = single_error("# only a comment\n");
    assert_error(&error, (1, 1), None, "", "document is empty");
}

#[test]
fn error_display_has_file_position_resource_path_and_message() {
    let source = document(&format!("{}        speed: 1000\n", interface("lan", "eth1")));
    let errors = parse_config(&source, "/etc/routerd/router.yaml").expect_err("unknown field");
    assert_eq!(
        errors.to_string(),
        "/etc/routerd/router.yaml:14:9: net.routerd.net/v1alpha1/Interface/lan: \
         spec.resources[0].spec.speed: unknown field `speed`, expected one of `ifname`, \
         `managed`, `adminUp`, `owner`, `mtu`"
    );
}

#[test]
fn load_reports_an_unreadable_file_without_position() {
    let path = std::path::Path::new("/nonexistent/routerd/router.yaml");
    let errors = routerd_model::load(path).expect_err("missing file");
    let error = &errors.0[0];
    assert_eq!((error.line, error.column), (0, 0));
    assert!(error.message.starts_with("cannot read file: "), "{error}");
    assert!(error.to_string().starts_with("/nonexistent/routerd/router.yaml: cannot read file"));
}

#[test]
fn load_parses_the_fixture_from_disk() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/all-kinds.yaml");
    let config = routerd_model::load(&path).expect("fixture loads");
    assert_eq!(config.metadata.name, "home-router");
}

/// A `PPPoEInterface` named `ppp` over `wan`, user `u`, with one more spec line `field`.
fn pppoe(field: &str) -> String {
    format!(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: PPPoEInterface
      metadata:
        name: ppp
      spec:
        interface: wan
        username: u
        {field}
"
    )
}

#[test]
fn out_of_range_integer_names_the_range_not_the_rust_type() {
    let pppoe = pppoe("mtu: 70000");
    let error = single_error(&document(&format!("{}{pppoe}", interface("wan", "eth0"))));
    assert_error(
        &error,
        (21, 14),
        Some("net.routerd.net/v1alpha1/PPPoEInterface/ppp"),
        "spec.resources[1].spec.mtu",
        "invalid value: integer `70000`, expected an integer from 0 to 65535",
    );
}

#[test]
fn pppoe_passwords_pppd_cannot_read_are_refused_without_echoing_them() {
    for (field, path, message) in [
        (
            "password: '@etc-shadow'",
            "spec.resources[1].spec.password",
            "a password starting with `@` cannot be given inline; use passwordFile",
        ),
        (
            "passwordFile: secrets/ppp",
            "spec.resources[1].spec.passwordFile",
            "not an absolute path",
        ),
    ] {
        let source = document(&format!("{}{}", interface("wan", "eth0"), pppoe(field)));
        let error = single_error(&source);
        assert_eq!((error.path.as_str(), error.message.as_str()), (path, message), "{field}");
        assert!(!error.to_string().contains("etc-shadow"), "{error}");
    }
}

#[test]
fn null_spec_is_reported_as_expecting_a_mapping() {
    let source = document(
        &interface("lan", "eth1")
            .replace("      spec:\n        ifname: eth1\n        managed: true\n", "      spec:\n"),
    );
    let error = single_error(&source);
    assert_eq!(error.message, "invalid type: null, expected a mapping");
    assert_eq!(error.path, "spec.resources[0].spec");
}
