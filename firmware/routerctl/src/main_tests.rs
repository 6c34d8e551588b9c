//! Unit tests of routerctl ([`super`]).

use std::path::Path;
use std::time::Duration;

use clap::Parser;
use hyper::StatusCode;
use routerd_model::status::{
    CheckStatus, DaemonState, DaemonStatus, DoctorCheck, ReconcileSummary, ResourceStatus, Trigger,
    Triggers,
};

use super::*;
use crate::client::{answered_error, answered_error_about};
use crate::tables::{
    doctor_table, history_table, ledger_table, progress_bar, resources_table, status_table,
};

/// Asserts that `text` fits `width` columns, cuts nothing with `…`, and that every line
/// continuing a cell (one that starts blank) starts with at least `indent` blanks.
fn assert_wrapped(text: &str, width: usize, indent: usize) {
    for line in text.lines() {
        assert!(line.chars().count() <= width, "over {width} columns: {line:?}\n{text}");
        assert!(!line.contains('…'), "cut: {line:?}\n{text}");
        if line.starts_with(' ') {
            let blanks = line.len() - line.trim_start().len();
            assert!(blanks >= indent, "continuation not under its column: {line:?}\n{text}");
        }
    }
}

/// The words of `text` in order, whitespace ignored: what wrapping must keep.
fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

/// A long sentence with a 70-character word (a path) in it.
fn long_text(what: &str) -> String {
    format!(
        "{what}: the upstream gateway 192.0.2.1 on wan0 does not answer neighbour solicitation \
         or ICMP echo (5 of 5 lost); check the cable and the modem, then run \
         /usr/share/routerd/scripts/{}.sh and look again",
        "x".repeat(40)
    )
}

#[test]
fn the_progress_bar_fills_with_the_percentage_and_fits_80_columns() {
    assert_eq!(
        progress_bar(0, "Checking bundle", 80),
        "[....................]   0% Checking bundle"
    );
    assert_eq!(progress_bar(55, "Copying", 80), "[###########.........]  55% Copying");
    assert_eq!(
        progress_bar(100, "Installing done.", 80),
        "[####################] 100% Installing done."
    );
    let message = "Copying image to rootfs.1 ".repeat(5);
    let long = progress_bar(40, &message, 80);
    assert!(long.lines().count() > 1, "{long}");
    assert_wrapped(&long, 80, 28);
    assert_eq!(words(&long)[2..], words(&message)[..], "nothing lost: {long}");
}

#[test]
fn the_status_table_fits_80_columns() {
    let status = DaemonStatus {
        config: format!("/etc/routerd/{}.yaml", "x".repeat(120)),
        netns: None,
        state: DaemonState::Running,
        generation: 3,
        observed_generation: Some(3),
        phase: Some("Healthy".into()),
        reconciles: 7,
        last_reconcile: Some(ReconcileSummary {
            trigger: Triggers(vec![Trigger::Address, Trigger::Route]),
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
        last_apply: None,
        last_repair: None,
    };
    let table = status_table(&status, 0, 80);
    assert_wrapped(&table, 80, 12);
    let error: String =
        table.lines().skip_while(|l| !l.starts_with("error")).map(|l| &l[12..]).collect();
    assert_eq!(error, "e".repeat(200), "the error is whole: {table}");
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
    let table = history_table(&list, Some(3), 80);
    let generations: Vec<&str> =
        table.lines().skip(1).filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(generations, ["3*", "2", "1"], "{table}");
}

/// A status with a confirm window (generation 5, else back to 4) whose deadline is
/// `deadline_unix`; read from JSON so that fields added later default to absent.
fn confirming(deadline_unix: u64) -> DaemonStatus {
    serde_json::from_value(serde_json::json!({
        "config": "/etc/routerd/router.yaml",
        "state": "running",
        "generation": 5,
        "observedGeneration": 5,
        "phase": "Healthy",
        "reconciles": 9,
        "pendingConfirm": {"generation": 5, "previous": 4,
            "deadline": "2026-11-26T16:30:04Z", "deadlineUnix": deadline_unix},
    }))
    .expect("a status document")
}

#[test]
fn the_status_shows_the_seconds_left_in_the_confirm_window_never_negative() {
    let table = status_table(&confirming(1_795_278_604), 1_795_278_604 - 73, 80);
    let expected = "confirm     generation 5 within 73 s (by 2026-11-26T16:30:04Z, else back to 4)";
    assert!(table.lines().any(|l| l == expected), "{table}");
    let late = status_table(&confirming(1_795_278_604), 1_795_278_604 + 10, 80);
    assert!(late.contains("generation 5 within 0 s (by "), "{late}");
    assert_wrapped(&late, 80, 12);
}

#[test]
fn long_doctor_details_and_remedies_wrap_under_their_column_at_80() {
    let check = |status, name: &str| DoctorCheck {
        area: "routes".into(),
        code: "G001".into(),
        name: name.into(),
        status,
        detail: long_text("detail"),
        remedy: long_text("remedy"),
    };
    let checks =
        [check(CheckStatus::Fail, &long_text("name")), check(CheckStatus::Pass, "default route")];
    let table = doctor_table(&checks, 80);
    assert_wrapped(&table, 80, 6);
    let lines: Vec<&str> = table.lines().collect();
    let start = |prefix: &str| lines.iter().position(|l| l.starts_with(prefix)).expect(prefix);
    let (detail, remedy) = (start("      detail:"), start("      → remedy:"));
    assert!(remedy > detail + 1, "the detail takes more than a line: {table}");
    for line in &lines[detail + 1..remedy] {
        assert!(line.starts_with("      ") && !line.starts_with("       "), "{line:?}");
    }
    let after = &lines[remedy + 1..];
    let rest: Vec<&&str> = after.iter().take_while(|l| l.starts_with(' ')).collect();
    assert!(!rest.is_empty(), "the remedy takes more than a line: {table}");
    assert!(rest.iter().all(|l| l.starts_with("        ")), "under the remedy's text: {table}");
    let remedy_text: String = lines[remedy..remedy + 1 + rest.len()].join(" ");
    assert_eq!(words(&remedy_text)[1..].concat(), words(&long_text("remedy")).concat());
    assert!(table.ends_with("1 pass, 0 warn, 1 fail, 0 skip\n"), "{table}");
}

#[test]
fn a_long_history_comment_wraps_under_the_comment_column_at_80() {
    let comment = long_text("comment");
    let list = serde_json::json!([{"generation": 7, "appliedAt": 1_795_229_100, "result":
        "applied", "author": "root", "channel": "cli", "comment": comment}]);
    let table = history_table(&list, Some(7), 80);
    assert_wrapped(&table, 80, 57);
    let rows: Vec<&str> = table.lines().skip(1).collect();
    assert!(rows.len() > 3, "{table}");
    assert!(rows[0].starts_with("7*   2026-11-21T") && rows[0].contains("cli/root"), "{table}");
    assert!(rows[1..].iter().all(|l| l.starts_with(&" ".repeat(57))), "{table}");
    let text: String = rows.iter().map(|l| &l[57..]).collect::<Vec<_>>().join(" ");
    assert_eq!(words(&text).concat(), words(&comment).concat(), "nothing lost: {table}");
}

#[test]
fn long_resource_and_ledger_names_wrap_instead_of_being_cut() {
    let name = format!("net.routerd.net/v1alpha1/IPv4PolicyRoute/{}", "guests-via-wan-".repeat(6));
    let resource = ResourceStatus {
        id: name.clone(),
        spec_digest: String::new(),
        generation: 2,
        observed_generation: 2,
        phase: "RequiresAdoption".into(),
        conditions: Vec::new(),
    };
    let table = resources_table(&[resource], 80);
    assert_wrapped(&table, 80, 49);
    assert!(table.lines().count() > 2, "{table}");
    let ledger = serde_json::json!([{"state": "owned", "origin": "created", "generation": 2,
        "kind": "linux.ipv4.fwmarkRule", "name": "x".repeat(90), "owner": name,
        "coOwners": [name]}]);
    let table = ledger_table(&ledger, 80);
    // 21: a co-owner's `+ ` stands two columns left of the names.
    assert_wrapped(&table, 80, 21);
    assert!(table.lines().skip(2).all(|l| l.starts_with(&" ".repeat(21))), "{table}");
    let whole = format!("fwmarkRule/{}net.routerd.net", "x".repeat(90));
    assert!(words(&table).concat().contains(&whole), "the name is whole: {table}");
}

#[test]
fn config_errors_of_a_refusal_name_the_file_with_line_and_column() {
    let body = serde_json::json!({
        "error": "the config is invalid (2 errors); nothing was changed",
        "errors": [
            {"file": "apply", "line": 159, "column": 22, "resource":
             "net.routerd.net/v1alpha1/IPv4StaticAddress/lan-v4", "path": "spec.address",
             "message": "not an IPv4 CIDR"},
            {"file": "apply", "line": 0, "column": 0, "path": "", "message": "empty document"},
        ],
    });
    let file = Path::new("router.yaml");
    let Failure::Answered(message) =
        answered_error_about(StatusCode::UNPROCESSABLE_ENTITY, body.to_string(), Some(file))
    else {
        panic!("not an answered failure");
    };
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(
        lines,
        [
            "422 Unprocessable Entity the config is invalid (2 errors); nothing was changed",
            "router.yaml:159:22: net.routerd.net/v1alpha1/IPv4StaticAddress/lan-v4: \
             spec.address: not an IPv4 CIDR",
            "router.yaml: empty document",
        ]
    );
    let Failure::Answered(without) =
        answered_error(StatusCode::UNPROCESSABLE_ENTITY, body.to_string())
    else {
        panic!("not an answered failure");
    };
    assert!(without.contains("\napply:159:22: "), "the daemon's name without a file: {without}");
}

#[test]
fn the_width_is_the_terminals_else_columns_else_80() {
    assert_eq!(console::width_from(Some(132), Some("100")), 132);
    assert_eq!(console::width_from(None, Some("100")), 100);
    assert_eq!(console::width_from(None, Some(" 72\n")), 72);
    assert_eq!(console::width_from(None, None), 80);
    assert_eq!(console::width_from(Some(0), Some("wide")), 80);
    assert_eq!(console::width_from(None, Some("0")), 80);
}

#[test]
fn rows_wrap_to_any_width_and_keep_newlines_and_short_cells_on_one_line() {
    assert_eq!(console::wrap_row("key         ", "value", 12, 80), "key         value");
    assert_eq!(console::wrap_row("key         ", "", 12, 80), "key");
    assert_eq!(console::wrap_row("a   ", "one\ntwo", 4, 80), "a   one\n    two");
    let wide = console::wrap_row("key         ", &long_text("value"), 12, 120);
    assert_wrapped(&wide, 120, 12);
    assert!(wide.lines().any(|l| l.chars().count() > 80), "uses the width: {wide}");
    // Too narrow for the column: continuation lines move left, still within the width.
    let narrow = console::wrap_row(&format!("{:<57}", "7"), &long_text("comment"), 57, 40);
    assert_wrapped(&narrow, 40, 20);
}

/// The confirm window `routerctl ARGS` asks for (ARGS: an apply or a rollback).
fn window_of(args: &[&str]) -> Result<Duration, clap::Error> {
    let cli = Cli::try_parse_from(std::iter::once("routerctl").chain(args.iter().copied()))?;
    match cli.command {
        Command::Apply { window, .. } | Command::Rollback { window, .. } => {
            Ok(window.confirm_timeout)
        }
        other => panic!("not an apply or a rollback: {other:?}"),
    }
}

#[test]
fn confirm_timeout_takes_the_config_duration_grammar() {
    // Issue 35 §5: `1.5s` is valid in router.yaml, so it is valid here.
    let cases: [(&[&str], Duration); 5] = [
        (&["apply", "-f", "r.yaml", "--confirm-timeout", "1.5s"], Duration::from_millis(1500)),
        (&["apply", "-f", "r.yaml", "--confirm-timeout", "1h30m"], Duration::from_secs(5400)),
        (&["apply", "-f", "r.yaml", "--confirm-timeout", "300ms"], Duration::from_millis(300)),
        (&["rollback", "3", "--confirm-timeout", "2.5m", "-y"], Duration::from_secs(150)),
        (&["apply", "-f", "r.yaml"], Duration::from_secs(90)),
    ];
    for (args, window) in cases {
        let parsed = window_of(args).unwrap_or_else(|e| panic!("{args:?} refused: {e}"));
        assert_eq!(parsed, window, "{args:?}");
    }
}

#[test]
fn confirm_timeout_refuses_what_the_config_refuses_naming_the_value() {
    for words in ["1 minute", "2min", "1d", "90"] {
        let err =
            window_of(&["apply", "-f", "r.yaml", "--confirm-timeout", words]).expect_err("refused");
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation, "{words}: {err}");
        let text = err.to_string();
        assert!(
            text.contains(&format!(
                "invalid value '{words}' for '--confirm-timeout <CONFIRM_TIMEOUT>'"
            )),
            "{text}"
        );
        assert!(text.contains(&format!("duration {words:?}")), "the model's message: {text}");
    }
    let err = window_of(&["apply", "-f", "r.yaml", "--confirm-timeout", "1 minute"])
        .expect_err("refused")
        .to_string();
    assert!(err.contains("unknown unit \" minute\" (use ns, us, ms, s, m or h)"), "{err}");
}

#[test]
fn a_sub_second_confirm_window_is_one_second_on_the_wire() {
    let cli =
        Cli::try_parse_from(["routerctl", "apply", "-f", "r.yaml", "--confirm-timeout", "1.5s"])
            .expect("parses");
    let Command::Apply { window, .. } = cli.command else { panic!("an apply") };
    assert_eq!(window.seconds(), 1);
    let cli =
        Cli::try_parse_from(["routerctl", "apply", "-f", "r.yaml", "--confirm-timeout", "300ms"])
            .expect("parses");
    let Command::Apply { window, .. } = cli.command else { panic!("an apply") };
    assert_eq!(window.seconds(), 1, "never 0, which means no window");
}
