use std::path::Path;
use std::process::{Command, Output};

use routerd_test_kit::router::{RouterDoc, SYSTEM};

use crate::daemon::{CONFIG, Served};
use crate::support::Netns;

const ROUTERD: &str = env!("CARGO_BIN_EXE_routerd");

/// A config with one Sysctl: applies in an empty namespace, drifts from its default.
fn forwarding() -> String {
    let spec = "key: net.ipv4.ip_forward\nvalue: \"1\"";
    RouterDoc::new("t").resource(SYSTEM, "Sysctl", "fwd", spec).to_string()
}

/// Two broken resources: an unknown field (line 11) and a bad CIDR (line 17).
const BROKEN: &str = "apiVersion: routerd.net/v1alpha1
kind: Router
metadata:
  name: t
spec:
  resources:
    - apiVersion: net.routerd.net/v1alpha1
      kind: Interface
      metadata:
        name: lan
      spec:
        ifname: lan0
        managed: true
        speed: 1000
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticAddress
      metadata:
        name: lan-v4
      spec:
        interface: lan
        address: 192.168.300.1/24
";

fn routerd(args: &[&str]) -> Output {
    Command::new(ROUTERD).args(args).output().expect("routerd runs")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write config");
    path.to_string_lossy().into_owned()
}

#[test]
fn validate_prints_every_error_with_file_line_and_column_and_exits_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(dir.path(), "broken.yaml", BROKEN);
    let out = routerd(&["validate", "--config", &file]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].starts_with(&format!("{file}:14:9: ")), "{stderr}");
    assert!(
        lines[0].contains("net.routerd.net/v1alpha1/Interface/lan") && lines[0].contains("speed")
    );
    assert!(lines[1].starts_with(&format!("{file}:21:18: ")), "{stderr}");
    assert!(lines[1].contains("IPv4StaticAddress/lan-v4"), "{stderr}");

    let ok = write(dir.path(), "ok.yaml", &forwarding());
    let out = routerd(&["validate", "--config", &ok]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn validate_accepts_two_resources_on_one_fwmark_and_warns_naming_both() {
    // Issue 33 §5: routerd accepts it; the two share the rule, or conflict on it.
    let lab = include_str!("../../../../examples/lab-router.yaml");
    let second = |priority: u32| {
        format!(
            "{}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4PolicyRoute
      metadata:
        name: printers-via-wan
      spec:
        outboundInterface: wan
        sourceCIDRs: [192.168.50.64/28]
        table: 100
        priority: {priority}
        mark: 0x100
",
            lab.trim_end()
        )
    };
    let dir = tempfile::tempdir().expect("tempdir");
    for (priority, says) in [
        (10000, "is also declared, with the same attributes, by"),
        (10001, "with different priority (10000 / 10001): neither is applied until they agree"),
    ] {
        let file = write(dir.path(), "shared.yaml", &second(priority));
        let out = routerd(&["validate", "--config", &file]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        let rule: Vec<&str> =
            stdout.lines().filter(|l| l.contains("linux.ipv4.fwmarkRule/0x100")).collect();
        assert_eq!(rule.len(), 2, "one warning per resource: {stdout}");
        for line in rule {
            assert!(line.starts_with("warning: net.routerd.net/v1alpha1/IPv4PolicyRoute/"));
            assert!(line.contains("guests-via-wan") && line.contains("printers-via-wan"), "{line}");
            assert!(line.contains(says), "{line}");
        }
    }
}

#[test]
fn invalid_yaml_changes_nothing_on_the_host_or_in_the_ledger() {
    let ns = Netns::new("bad");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(dir.path(), "broken.yaml", BROKEN);
    let ledger = dir.path().join("l.redb").to_string_lossy().into_owned();
    let before = ns.state();
    let out = routerd(&[
        "reconcile",
        "--once",
        "--config",
        &file,
        "--netns",
        ns.name(),
        "--ledger",
        &ledger,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("broken.yaml:21:18"));
    assert_eq!(ns.state(), before);
    assert!(!Path::new(&ledger).exists(), "the ledger was created");
}

#[test]
fn usage_errors_exit_64_and_help_documents_exit_codes() {
    let out = routerd(&["reconcile"]);
    assert_eq!(out.status.code(), Some(64));
    let out = routerd(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    for code in ["0 ", "1 ", "2 ", "3 ", "64", "69", "74", "75"] {
        assert!(help.contains(&format!("  {code}")), "exit code {code} undocumented:\n{help}");
    }
}

#[test]
fn serve_duration_flags_take_the_config_grammar_and_refuse_humantime_words() {
    // Issue 35 §5: one grammar for router.yaml and the flags. Clap parses a value when it meets
    // it, so a value before --help is checked and the help then ends the run.
    let flags =
        ["--resync", "--debounce", "--sample-interval", "--gateway-interval", "--health-window"];
    for flag in flags {
        for good in ["1.5s", "300ms", "1h30m", ".5m"] {
            let out = routerd(&["serve", flag, good, "--help"]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{flag} {good}: {err}");
        }
        for bad in ["1 minute", "2min", "1d", "60"] {
            let out = routerd(&["serve", flag, bad]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(64), "{flag} {bad}: {err}");
            assert!(err.contains(&format!("invalid value '{bad}' for '{flag} ")), "{err}");
            assert!(err.contains(&format!("duration {bad:?}")), "the model's message: {err}");
        }
    }
    let out = routerd(&["serve", "--resync", "1 minute"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown unit \" minute\" (use ns, us, ms, s, m or h)"), "{err}");
    let out = routerd(&["serve", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("Durations are written as in router.yaml"), "{help}");
    // A zero resync would be a busy loop (and tokio's interval panics on it).
    let out = routerd(&["serve", "--resync", "0s"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(64), "{err}");
    assert!(err.contains("must be more than 0"), "{err}");
}

#[test]
fn a_missing_namespace_exits_69() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(dir.path(), "f.yaml", &forwarding());
    let ledger = dir.path().join("l.redb").to_string_lossy().into_owned();
    let out =
        routerd(&["plan", "--config", &file, "--netns", "rds-no-such-ns", "--ledger", &ledger]);
    assert_eq!(out.status.code(), Some(69), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rds-no-such-ns"));
}

#[test]
fn json_is_the_result_document_and_the_table_fits_80_columns() {
    let ns = Netns::new("json");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(dir.path(), "f.yaml", &forwarding());
    let ledger = dir.path().join("l.redb").to_string_lossy().into_owned();
    let common = ["--config", file.as_str(), "--netns", ns.name(), "--ledger", ledger.as_str()];

    let out = routerd(&[&["plan", "-o", "json"][..], &common].concat());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    for field in [
        "generation",
        "timestamp",
        "phase",
        "resources",
        "orphans",
        "adoptionCandidates",
        "adoptedArtifacts",
        "warnings",
    ] {
        assert!(doc.get(field).is_some(), "missing {field}");
    }
    let res = &doc["resources"][0];
    for field in ["id", "phase", "observed", "plan", "artifacts", "warnings", "conditions"] {
        assert!(res.get(field).is_some(), "resource misses {field}");
    }
    assert_eq!(res["artifacts"][0]["applyWith"], "procfs");
    assert_eq!(doc["phase"], "Drifted");

    let out = routerd(&[&["reconcile", "--once", "-o", "table"][..], &common].concat());
    assert_eq!(out.status.code(), Some(0));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.lines().all(|l| l.len() <= 80 && l.is_ascii()), "{table}");
    assert!(table.contains("modify    linux.sysctl/net.ipv4.ip_forward"), "{table}");
}

#[test]
fn adopt_apply_refusing_a_drifted_candidate_exits_3() {
    let ns = Netns::new("adopt");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(dir.path(), "f.yaml", &forwarding());
    let ledger = dir.path().join("l.redb").to_string_lossy().into_owned();
    let out = routerd(&[
        "adopt",
        "--apply",
        "--config",
        &file,
        "--netns",
        ns.name(),
        "--ledger",
        &ledger,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["adoptionCandidates"][0]["adoptable"], false);
    assert_eq!(doc["adoptionCandidates"][0]["diff"][0]["attribute"], "value");
}

#[test]
fn routerctl_apply_names_the_file_line_and_column_of_each_error_and_status_counts_down() {
    // Issue 34 §8: the refusal said "apply:20:18", the daemon's name for the text.
    let mut s = Served::start_with("ctl80", CONFIG, &[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = CONFIG.replace("address: 10.9.0.1/24", "address: 10.9.0.300/24");
    let file = write(dir.path(), "router.yaml", &broken);
    let out = s.ctl(&["apply", "-f", &file, "--no-confirm"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let located: Vec<&str> = err.lines().filter(|l| l.contains(":20:")).collect();
    assert_eq!(located.len(), 1, "one line per problem: {err}");
    assert!(located[0].starts_with(&format!("{file}:20:18: ")), "{err}");
    assert!(located[0].contains("IPv4StaticAddress/lan-v4"), "{err}");
    assert!(!err.contains("apply:"), "the daemon's name for the text: {err}");
    let out = s.ctl(&["plan", "-f", &file]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.lines().any(|l| l.starts_with(&format!("{file}:20:18: "))), "{err}");

    // A confirm window of 5 minutes: status shows the seconds left, counting down.
    let next = write(dir.path(), "next.yaml", &CONFIG.replace("10.9.0.1/24", "10.9.0.2/24"));
    let out = s.ctl(&["apply", "-f", &next, "--confirm-timeout", "5m"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = s.ctl(&["status"]);
    let table = String::from_utf8_lossy(&out.stdout);
    let confirm = table.lines().find(|l| l.starts_with("confirm ")).expect("a confirm row");
    let left: u64 = confirm
        .split(" within ")
        .nth(1)
        .and_then(|r| r.split(" s (by ").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no seconds left: {table}"));
    assert!((280..=300).contains(&left), "{table}");
    assert!(confirm.ends_with(", else back to 1)"), "{table}");
    assert!(table.lines().all(|l| l.chars().count() <= 80 && !l.contains('…')), "{table}");
    s.stop();
}
