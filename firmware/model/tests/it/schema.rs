//! Compatibility with the v1alpha1 JSON Schema (a copy lives in `tests/fixtures`): same kinds
//! and apiVersions, same spec field names at every depth, same required fields, every enum
//! value accepted.

use std::collections::BTreeSet;

use routerd_model::{ReconcileSpec, ResourceKind, ResourceSpec};
use serde_json::{Map, Value, json};

const SCHEMA: &str = include_str!("../fixtures/routerd-config-v1alpha1.schema.json");

/// Kinds routerd accepts beyond the schema, each with the ADR (under `docs/adr/`) that records
/// why. Adding a kind that is not in the schema means adding it here and writing that ADR.
const EXTENSION_KINDS: [(&str, &str); 3] = [
    ("VLANInterface", "0004-vlan-interface-kind.md"),
    ("IPv4StaticRoute", "0004-vlan-interface-kind.md"),
    ("IPv6StaticRoute", "0004-vlan-interface-kind.md"),
];

/// `(kind, apiVersion, spec schema)` of every resource kind in the schema.
fn schema_kinds() -> Vec<(String, String, Value)> {
    let schema: Value = serde_json::from_str(SCHEMA).expect("schema is JSON");
    let items = &schema["properties"]["spec"]["properties"]["resources"]["items"]["oneOf"];
    items
        .as_array()
        .expect("oneOf list")
        .iter()
        .map(|r| {
            let p = &r["properties"];
            let kind = p["kind"]["const"].as_str().expect("kind const").to_owned();
            let api = p["apiVersion"]["const"].as_str().expect("apiVersion const").to_owned();
            (kind, api, p["spec"].clone())
        })
        .collect()
}

/// A value valid for `schema`, filling every property; enums take their `pick`-th value.
fn sample(schema: &Value, pick: usize) -> Value {
    if let Some(values) = schema["enum"].as_array() {
        return values[pick % values.len()].clone();
    }
    match schema["type"].as_str() {
        Some("string") => json!("x"),
        Some("boolean") => json!(true),
        Some("integer") => schema["minimum"].as_u64().map_or(json!(1), |m| json!(m.max(1))),
        Some("array") => json!([sample(&schema["items"], pick)]),
        Some("object") => {
            let mut out = Map::new();
            if let Some(props) = schema["properties"].as_object() {
                for (key, prop) in props {
                    out.insert(key.clone(), sample(prop, pick));
                }
            }
            if schema["additionalProperties"].is_object() {
                out.insert("var".into(), sample(&schema["additionalProperties"], pick));
            }
            Value::Object(out)
        }
        other => panic!("unexpected schema type {other:?}"),
    }
}

/// Every `(path, required)` of object properties below `schema`, paths as key lists.
fn property_paths(schema: &Value, prefix: &[String], out: &mut Vec<(Vec<String>, bool)>) {
    match schema["type"].as_str() {
        Some("array") => property_paths(&schema["items"], prefix, out),
        Some("object") => {
            let required: BTreeSet<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for (key, prop) in schema["properties"].as_object().into_iter().flatten() {
                let mut path = prefix.to_vec();
                path.push(key.clone());
                out.push((path.clone(), required.contains(key.as_str())));
                property_paths(prop, &path, out);
            }
        }
        _ => {}
    }
}

/// `value` with the key at `path` removed (descending into first array items).
fn without(value: &Value, path: &[String]) -> Value {
    let mut out = value.clone();
    let mut node = &mut out;
    for (i, key) in path.iter().enumerate() {
        while let Value::Array(items) = node {
            node = &mut items[0];
        }
        let obj = node.as_object_mut().expect("object on path");
        if i + 1 == path.len() {
            obj.remove(key);
            break;
        }
        node = obj.get_mut(key).expect("key on path");
    }
    out
}

/// Asserts that the keys of every object in `value` equal the schema's property names.
fn assert_same_keys(kind: &str, schema: &Value, value: &Value, at: &str) {
    match schema["type"].as_str() {
        Some("array") => {
            for item in value.as_array().expect("array") {
                assert_same_keys(kind, &schema["items"], item, &format!("{at}[]"));
            }
        }
        Some("object") if schema["additionalProperties"].is_object() => {
            for (key, item) in value.as_object().expect("map") {
                assert_same_keys(
                    kind,
                    &schema["additionalProperties"],
                    item,
                    &format!("{at}.{key}"),
                );
            }
        }
        Some("object") => {
            let ours: BTreeSet<&String> = value.as_object().expect("object").keys().collect();
            let props = schema["properties"].as_object().expect("properties");
            let theirs: BTreeSet<&String> = props.keys().collect();
            assert_eq!(ours, theirs, "{kind}: field names of {at}");
            for (key, prop) in props {
                assert_same_keys(kind, prop, &value[key], &format!("{at}.{key}"));
            }
        }
        _ => {}
    }
}

#[test]
fn schema_kinds_and_api_versions_match_resource_kinds() {
    let kinds = schema_kinds();
    assert_eq!(kinds.len(), 30);
    for (kind, api, _) in &kinds {
        let ours = ResourceKind::parse(kind).unwrap_or_else(|| panic!("kind {kind} missing"));
        assert_eq!(ours.api_version(), api, "apiVersion of {kind}");
    }
    let schema_names: BTreeSet<&str> = kinds.iter().map(|(k, _, _)| k.as_str()).collect();
    let extra: Vec<&str> = ResourceKind::ALL
        .iter()
        .map(|k| k.as_str())
        .filter(|k| !schema_names.contains(k))
        .collect();
    let mut documented: Vec<&str> = EXTENSION_KINDS.iter().map(|(k, _)| *k).collect();
    let mut extra = extra;
    documented.sort_unstable();
    extra.sort_unstable();
    assert_eq!(extra, documented, "kinds beyond the schema must be documented extensions");
}

#[test]
fn every_extension_kind_has_an_adr_and_a_schema_api_version() {
    let adr_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/adr");
    let schema_apis: BTreeSet<String> = schema_kinds().into_iter().map(|(_, api, _)| api).collect();
    for (kind, adr) in EXTENSION_KINDS {
        let path = adr_dir.join(adr);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{kind}: ADR {} unreadable: {e}", path.display()));
        assert!(text.contains(&format!("`{kind}`")), "{kind}: not named in {adr}");
        let ours = ResourceKind::parse(kind).expect("extension kind is a kind");
        assert!(schema_apis.contains(ours.api_version()), "{kind}: apiVersion outside the schema");
    }
}

#[test]
fn every_schema_field_and_enum_value_deserializes() {
    for (kind, _, spec_schema) in schema_kinds() {
        let kind_enum = ResourceKind::parse(&kind).expect("known kind");
        for pick in 0..20 {
            let value = sample(&spec_schema, pick);
            if let Err(e) = ResourceSpec::from_value(kind_enum, &value) {
                panic!("{kind} rejects schema sample {value}: {e}");
            }
        }
    }
}

#[test]
fn spec_field_names_match_the_schema_at_every_depth() {
    for (kind, _, spec_schema) in schema_kinds() {
        let kind_enum = ResourceKind::parse(&kind).expect("known kind");
        let spec = ResourceSpec::from_value(kind_enum, &sample(&spec_schema, 0)).expect("sample");
        let serialized = serde_json::to_value(&spec).expect("serializes");
        assert_same_keys(&kind, &spec_schema, &serialized, "spec");
    }
}

#[test]
fn required_fields_match_the_schema() {
    for (kind, _, spec_schema) in schema_kinds() {
        let kind_enum = ResourceKind::parse(&kind).expect("known kind");
        let full = sample(&spec_schema, 0);
        let mut paths = Vec::new();
        property_paths(&spec_schema, &[], &mut paths);
        for (path, required) in paths {
            let result = ResourceSpec::from_value(kind_enum, &without(&full, &path));
            assert_eq!(result.is_err(), required, "{kind}: spec.{} required?", path.join("."));
        }
    }
}

#[test]
fn reconcile_modes_match_the_schema() {
    for mode in ["", "strict", "progressive"] {
        let value = json!({"mode": mode, "protectedInterfaces": ["x"], "protectedZones": ["y"]});
        serde_json::from_value::<ReconcileSpec>(value).expect("schema reconcile value");
    }
}
