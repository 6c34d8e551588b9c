//! Generated variants of the control API's JSON requests (issue 33 §1): byte flips, truncation,
//! deep nesting, huge strings and numbers, duplicate keys, wrong types, bytes that are not
//! UTF-8. Every request gets an answer (2xx, 4xx or the loop's 503), never a panic or a 500.
//! The reconcile loop is a stand-in that drops every message (the handlers answer 503), so
//! what is tested is the handlers' own reading of the request; the daemon's reading of the YAML
//! inside is `routerd-model`'s variant test. The seed is fixed.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use tower::ServiceExt;

use super::fuzzing::{SEEDS, api, check};

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
