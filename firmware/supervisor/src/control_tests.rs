//! Generated variants of the control API's JSON requests (issue 33 §1): byte flips, truncation,
//! deep nesting, huge strings and numbers, duplicate keys, wrong types, bytes that are not
//! UTF-8. Every request gets an answer (2xx, 4xx or the loop's 503), never a panic or a 500.
//! The reconcile loop is a stand-in that drops every message (the handlers answer 503), so
//! what is tested is the handlers' own reading of the request; the daemon's reading of the YAML
//! inside is `routerd-model`'s variant test. The seed is fixed.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use routerd_model::status::CheckStatus;
use tokio::sync::mpsc;
use tower::ServiceExt;

use super::fuzzing::{SEEDS, api, api_over, check};
use crate::daemon::{EngineAnswer, EngineQuery, Msg};
use crate::dns_view::tests::{API, check as dns_check, document, ledger_json};

/// Text that means something to JSON or to a path.
const STRAY: [&str; 16] = [
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "null",
    "-1",
    "1e999",
    "18446744073709551616",
    "\\ud800",
    "%00",
    "/../",
    "\u{202e}",
];

fn mutate(rng: &mut fastrand::Rng, body: &str, kind: usize) -> Vec<u8> {
    let mut bytes = body.as_bytes().to_vec();
    let len = bytes.len().max(1);
    match kind {
        0 => {
            for _ in 0..=rng.usize(..6) {
                if let Some(b) = bytes.get_mut(rng.usize(..len)) {
                    *b ^= 1 << rng.usize(..8);
                }
            }
        }
        1 => bytes.truncate(rng.usize(..len)),
        2 => {
            let depth = 1 + rng.usize(..5000);
            let unit = ["[", "{\"a\":"][rng.usize(..2)];
            let at = rng.usize(..len).min(bytes.len());
            bytes.splice(at..at, unit.repeat(depth).into_bytes());
        }
        3 => {
            let huge = format!("\"{}\"", "x".repeat(1 << (8 + rng.usize(..12))));
            bytes = format!("{{\"yaml\": {huge}, \"password\": {huge}, \"generation\": 1}}")
                .into_bytes();
        }
        4 => {
            // A duplicate key, or a field of the wrong type.
            let field =
                ["yaml", "apply", "generation", "password", "only", "confirmTimeoutSeconds"];
            let value =
                ["1", "true", "\"x\"", "[1]", "{}", "null", "-5", "1.5", "99999999999999999999"];
            let f = field[rng.usize(..field.len())];
            let v = value[rng.usize(..value.len())];
            bytes = format!("{{\"{f}\": {v}, \"{f}\": {v}}}").into_bytes();
        }
        _ => {
            for _ in 0..=rng.usize(..3) {
                let at = rng.usize(..len).min(bytes.len());
                bytes.splice(at..at, STRAY[rng.usize(..STRAY.len())].bytes());
            }
        }
    }
    bytes
}

#[tokio::test]
async fn ten_thousand_variants_of_json_requests_get_an_answer_and_never_a_server_error() {
    let api = api();
    let mut rng = fastrand::Rng::with_seed(0x00c0_47e0_2026);
    let mut answers = std::collections::BTreeMap::<u16, u32>::new();
    for case in 0..10_000 {
        let (method, path, body) = SEEDS[rng.usize(..SEEDS.len())];
        let kind = rng.usize(..6);
        let bytes = mutate(&mut rng, body, kind);
        // A mutated path too, now and then (the query and the path's numbers are input).
        let path = if rng.usize(..8) == 0 {
            String::from_utf8_lossy(&mutate(&mut rng, path, 5))
                .chars()
                .filter(|c| c.is_ascii_graphic())
                .collect::<String>()
        } else {
            path.to_string()
        };
        let Ok(request) = Request::builder()
            .method(method)
            .uri(if path.starts_with('/') { path.clone() } else { format!("/{path}") })
            .header("content-type", "application/json")
            .body(Body::from(bytes.clone()))
        else {
            continue; // not a request at all: nothing reaches a handler
        };
        let response = api.clone().oneshot(request).await.expect("infallible");
        let status = response.status();
        assert!(
            status != StatusCode::INTERNAL_SERVER_ERROR,
            "case {case}: {method} {path} {}: {status}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
        );
        *answers.entry(status.as_u16()).or_default() += 1;
    }
    // The variants reach both the refusals and the handlers behind them.
    assert!(answers.get(&400).copied().unwrap_or(0) > 1000, "{answers:?}");
    assert!(answers.get(&503).copied().unwrap_or(0) > 100, "{answers:?}");
}

#[tokio::test]
async fn a_confirm_window_past_a_day_is_refused_before_the_loop() {
    // u64::MAX seconds overflowed the deadline (a panic in debug builds, a deadline in the past
    // and an at-once rollback in release builds).
    let body = r#"{"yaml": "x", "confirmTimeoutSeconds": 18446744073709551615}"#;
    let request = Request::post("/v1/apply").body(Body::from(body)).expect("request");
    let response = api().oneshot(request).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let text = axum::body::to_bytes(response.into_body(), 1 << 16).await.expect("body");
    assert!(String::from_utf8_lossy(&text).contains("at most 86400"));
}

#[tokio::test]
async fn the_fuzz_corpus_replays_without_a_server_error() {
    // `just fuzz-control` adds what it finds to this folder; CI (stable, no libFuzzer) replays
    // it here the way the fuzz target sends it.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/control");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fuzz/corpus/control")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n != "README"))
        .collect();
    files.sort();
    let inputs: Vec<Vec<u8>> =
        files.iter().map(|file| std::fs::read(file).expect("readable")).collect();
    // Every seed is there, as its endpoint's index and its body.
    for (index, (method, path, body)) in SEEDS.iter().enumerate() {
        let seed = [&[index as u8][..], body.as_bytes()].concat();
        assert!(inputs.contains(&seed), "no corpus file for seed {index}: {method} {path}");
    }
    let api = api();
    for (file, input) in files.iter().zip(&inputs) {
        if let Err(what) = check(&api, input).await {
            panic!("{}: {what}", file.display());
        }
    }
}

/// A stand-in loop that runs the doctor (a failed `dns` check and a passed `routes` one) and
/// answers the ledger query with [`ledger_json`]'s entries; other messages are dropped.
fn doctor_and_ledger_loop() -> mpsc::Sender<Msg> {
    let entries: Vec<routerd_ledger::LedgerEntry> =
        serde_json::from_str(&ledger_json().to_string()).expect("ledger entries");
    let (loop_tx, mut loop_rx) = mpsc::channel::<Msg>(8);
    tokio::spawn(async move {
        while let Some(msg) = loop_rx.recv().await {
            match msg {
                Msg::Doctor(reply) => {
                    let checks = vec![
                        dns_check("routes", "T001", CheckStatus::Pass),
                        dns_check("dns", "N003", CheckStatus::Fail),
                    ];
                    let _ = reply.send(checks);
                }
                Msg::Engine(EngineQuery::Ledger, reply) => {
                    let _ = reply.send(Ok(EngineAnswer::Entries(entries.clone())));
                }
                _ => {}
            }
        }
    });
    loop_tx
}

/// `GET /v1/dns` on `api`: the status and the JSON answer.
async fn get_dns(api: axum::Router) -> (StatusCode, serde_json::Value) {
    let request = Request::get("/v1/dns").body(Body::empty()).expect("request");
    let response = api.oneshot(request).await.expect("infallible");
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), 1 << 20).await.expect("body");
    (status, serde_json::from_slice(&body).expect("JSON"))
}

#[tokio::test]
async fn the_dns_view_serves_the_rows_of_the_last_reconcile_and_the_dns_checks() {
    let api = api_over(Some(Arc::new(document())), doctor_and_ledger_loop());
    let (status, dns) = get_dns(api).await;
    assert_eq!(status, StatusCode::OK, "{dns}");
    assert_eq!(dns["observed"], true);
    let codes: Vec<&str> = dns["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter_map(|c| c["code"].as_str())
        .collect();
    assert_eq!(codes, ["N003"], "the dns checks only: {dns}");
    assert_eq!(dns["checks"][0]["status"], "fail");
    assert_eq!(
        dns["servers"][1],
        serde_json::json!({"name": "corp", "side": "remote", "zones": 1,
            "state": "unreadable: corp.example. (TsigBadSig: the server refused the key)",
            "ok": false})
    );
    assert_eq!(dns["zones"][0]["state"], "1 drifted, 1 missing, 1 unowned, 1 undeclared");
    assert_eq!(dns["zones"][0]["side"], "local");
    let records = dns["records"].as_array().expect("records");
    assert_eq!(records.len(), 7, "{dns}");
    let router = records
        .iter()
        .find(|r| r["owner"] == "router.lab.example.")
        .expect("the zone's router RRset");
    assert_eq!(
        *router,
        serde_json::json!({"side": "local", "server": "auth", "zone": "lab.example.",
            "owner": "router.lab.example.", "type": "A", "ttl": 3600, "rdata": ["192.0.2.1"],
            "resource": format!("{API}/DNSZone/lab"), "foreign": false, "owned": true,
            "state": "in-sync", "detail": ""}),
        "its data from the ledger"
    );
    // The rows routerctl reads back.
    let view: routerd_model::dns_view::DnsView =
        serde_json::from_value(dns).expect("the model's DNS view");
    assert_eq!(view.records.iter().filter(|r| r.foreign).count(), 1);
}

#[tokio::test]
async fn before_the_first_reconcile_the_dns_view_has_only_the_checks() {
    let (status, dns) = get_dns(api_over(None, doctor_and_ledger_loop())).await;
    assert_eq!(status, StatusCode::OK, "{dns}");
    assert_eq!(dns["observed"], false);
    assert_eq!(dns["records"], serde_json::json!([]));
    assert_eq!(dns["checks"].as_array().map(Vec::len), Some(1), "{dns}");
    // A loop that is gone answers 503, as the doctor does.
    let (status, dns) = get_dns(api()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{dns}");
}
