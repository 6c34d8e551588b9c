//! Unit tests of routerctl ([`super`]).

use super::*;
use routerd_model::status::ReconcileSummary;

#[test]
fn the_progress_bar_fills_with_the_percentage_and_fits_80_columns() {
    assert_eq!(progress_bar(0, "Checking bundle"), "[....................]   0% Checking bundle");
    assert_eq!(progress_bar(55, "Copying"), "[###########.........]  55% Copying");
    assert_eq!(
        progress_bar(100, "Installing done."),
        "[####################] 100% Installing done."
    );
    let long = progress_bar(40, &"Copying image to rootfs.1 ".repeat(5));
    assert_eq!(long.chars().count(), 80, "{long}");
    assert!(long.ends_with('…'), "{long}");
}

#[test]
fn the_status_table_fits_80_columns() {
    let status = DaemonStatus {
        config: format!("/etc/routerd/{}.yaml", "x".repeat(120)),
        netns: None,
        state: "running".into(),
        generation: 3,
        observed_generation: Some(3),
        phase: Some("Healthy".into()),
        reconciles: 7,
        last_reconcile: Some(ReconcileSummary {
            trigger: "address,route".into(),
            started: "2026-11-21T02:00:00Z".into(),
            duration_ms: 41,
            operations: 1,
            failed: 0,
            resources: 12,
            drifted: 0,
            blocked: 0,
            requires_adoption: 2,
            orphans: 0,
        }),
        last_error: Some("e".repeat(200)),
        pending_confirm: None,
        config_fallback: None,
        last_timed_out: None,
    };
    let table = status_table(&status);
    assert!(table.lines().all(|l| l.chars().count() <= 80), "{table}");
    assert!(table.contains("generation  3 (observed 3)"), "{table}");
    assert!(table.contains("last        2026-11-21T02:00:00Z by address,route, 41 ms"));
}

#[test]
fn yaml_output_reads_back_as_the_same_document() {
    let doc = serde_json::json!({
        "generation": 4,
        "phase": "Healthy",
        "looksLikeABool": "true",
        "looksLikeANumber": "10",
        "empty": "",
        "ratio": 0.5,
        "none": null,
        "yaml": "apiVersion: routerd.net/v1alpha1\nkind: Router\n",
        "checks": [{"code": "R001", "status": "pass"}, {"code": "T001: x", "status": "fail"}],
    });
    let text = yaml_text(&doc);
    use saphyr::LoadableYamlNode;
    let docs = saphyr::Yaml::load_from_str(&text).expect("valid YAML");
    let back = &docs[0];
    assert_eq!(back["generation"].as_integer(), Some(4), "{text}");
    assert_eq!(back["looksLikeABool"].as_str(), Some("true"), "a string stays one: {text}");
    assert_eq!(back["looksLikeANumber"].as_str(), Some("10"), "{text}");
    assert_eq!(back["empty"].as_str(), Some(""), "{text}");
    assert_eq!(back["ratio"].as_floating_point(), Some(0.5), "{text}");
    assert!(back["none"].is_null(), "{text}");
    let yaml = doc["yaml"].as_str().expect("str");
    assert_eq!(back["yaml"].as_str(), Some(yaml), "{text}");
    assert!(text.contains("yaml: |"), "a literal block: {text}");
    assert_eq!(back["checks"][1]["code"].as_str(), Some("T001: x"), "{text}");
}

#[test]
fn the_history_lists_the_newest_first_and_marks_the_running_generation() {
    let record = |g: u64, result: &str| {
        serde_json::json!({"generation": g, "appliedAt": 1_795_229_100 + g, "result": result,
            "author": "root", "channel": "cli", "comment": format!("change {g}")})
    };
    let list =
        serde_json::json!([record(1, "applied"), record(2, "rolledBack"), record(3, "applied")]);
    let table = history_table(&list, Some(3));
    let generations: Vec<&str> =
        table.lines().skip(1).filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(generations, ["3*", "2", "1"], "{table}");
}
