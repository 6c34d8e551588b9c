//! Generated variants of real configs (issue "Hardening" §1): byte flips, truncation, deep
//! nesting, huge scalars, alias bombs, duplicate keys, stray indicator and control characters.
//! Every variant must come back as a config or as errors that each name `file:line:column`:
//! no panic, no abort (a stack overflow would kill this test binary). The seed is fixed, so a
//! failure reproduces; `ROUTERD_VARIANTS_SEED` and `ROUTERD_VARIANTS` pick others (the
//! `just fuzz-variants` task runs many more).

use std::panic::{AssertUnwindSafe, catch_unwind};

use routerd_model::{parse_config, source_from_bytes};

/// The configs the variants start from: the examples and the all-kinds fixture.
const SEEDS: [&str; 4] = [
    include_str!("../../../../examples/lab-router.yaml"),
    include_str!("../../../../examples/two-uplinks.yaml"),
    include_str!("../../../../examples/vlan-dslite.yaml"),
    include_str!("../fixtures/all-kinds.yaml"),
];

/// Variants in CI.
const CASES: u64 = 10_000;

/// Characters that mean something to YAML or to a terminal.
const STRAY: [&str; 18] = [
    "\t",
    "\0",
    "\u{202e}",
    "\u{2028}",
    "&a ",
    "*a",
    "!x ",
    "!!int ",
    "%YAML 9.9\n",
    "|",
    ">",
    "{",
    "}",
    "[",
    "]",
    ": ",
    "- ",
    "\u{feff}",
];

/// Start of a random line of `bytes`.
fn line_start(rng: &mut fastrand::Rng, bytes: &[u8]) -> usize {
    let at = rng.usize(..bytes.len().max(1));
    bytes[..at].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1)
}

/// One variant of `seed`; `kind` picks the mutation.
fn mutate(rng: &mut fastrand::Rng, seed: &str, kind: usize) -> Vec<u8> {
    let mut bytes = seed.as_bytes().to_vec();
    let len = bytes.len();
    match kind {
        // Bit flips, which also make text that is not UTF-8.
        0 => {
            for _ in 0..=rng.usize(..8) {
                let at = rng.usize(..len);
                bytes[at] ^= 1 << rng.usize(..8);
            }
        }
        1 => bytes.truncate(rng.usize(..len)),
        // Deep nesting at a line start, block or flow.
        2 => {
            let depth = 30 + rng.usize(..5000);
            let unit = ["- ", "[", "{a: ", "? "][rng.usize(..4)];
            let at = line_start(rng, &bytes);
            bytes.splice(at..at, unit.repeat(depth).into_bytes());
        }
        // A huge scalar in place of a value.
        3 => {
            let at = line_start(rng, &bytes);
            let end = bytes[at..].iter().position(|b| *b == b'\n').map_or(len, |i| at + i);
            let text = format!("    x: {}", "y".repeat(1 << (10 + rng.usize(..8))));
            bytes.splice(at..end, text.into_bytes());
        }
        // Nested aliases (10 to 10,000 nodes) at a line start. One past the expansion budget
        // costs some 100,000 node copies: `hostile.rs` parses that one once.
        4 => {
            let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
            for (name, prev) in ["b", "c", "d"].iter().zip(["a", "b", "c"]).take(rng.usize(..4)) {
                let aliases = vec![format!("*{prev}"); 10].join(", ");
                bomb.push_str(&format!("{name}: &{name} [{aliases}]\n"));
            }
            let at = line_start(rng, &bytes);
            bytes.splice(at..at, bomb.into_bytes());
        }
        // A line repeated: duplicate keys and duplicate resources.
        5 => {
            let at = line_start(rng, &bytes);
            let end = bytes[at..].iter().position(|b| *b == b'\n').map_or(len, |i| at + i + 1);
            let line = bytes[at..end].to_vec();
            bytes.splice(end..end, line);
        }
        // A line deleted, or indented differently.
        6 => {
            let at = line_start(rng, &bytes);
            let end = bytes[at..].iter().position(|b| *b == b'\n').map_or(len, |i| at + i + 1);
            match rng.usize(..3) {
                0 => drop(bytes.drain(at..end)),
                1 => drop(bytes.splice(at..at, *b"  ")),
                _ => {
                    let spaces = bytes[at..end].iter().take_while(|b| **b == b' ').count();
                    drop(bytes.drain(at..at + spaces.min(1)));
                }
            }
        }
        // Stray characters anywhere (on a character boundary).
        _ => {
            for _ in 0..=rng.usize(..4) {
                let mut at = rng.usize(..bytes.len().max(1));
                while at > 0 && at < bytes.len() && (bytes[at] & 0xc0) == 0x80 {
                    at -= 1;
                }
                bytes.splice(at..at, STRAY[rng.usize(..STRAY.len())].bytes());
            }
        }
    }
    bytes
}

/// Parses `bytes` as the file `variant.yaml`; `Err` with a description of what went wrong:
/// a panic, or an error without a position.
fn check(bytes: Vec<u8>) -> Result<bool, String> {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let text = source_from_bytes(bytes, "variant.yaml")?;
        parse_config(&text, "variant.yaml").map(drop)
    }))
    .map_err(|_| "panicked".to_owned())?;
    let Err(errors) = outcome else { return Ok(true) };
    if errors.is_empty() {
        return Err("an empty error list".into());
    }
    match errors.iter().find(|e| e.file != "variant.yaml" || e.line == 0 || e.column == 0) {
        Some(e) => Err(format!("an error without file:line:column: {e}")),
        None => Ok(false),
    }
}

#[test]
fn ten_thousand_variants_of_real_configs_never_panic_and_every_error_is_located() {
    let seed = std::env::var("ROUTERD_VARIANTS_SEED").ok().and_then(|s| s.parse().ok());
    let cases = std::env::var("ROUTERD_VARIANTS").ok().and_then(|s| s.parse().ok());
    let mut rng = fastrand::Rng::with_seed(seed.unwrap_or(0x5eed_2026_1126));
    let (mut valid, mut kinds) = (0, [0u32; 8]);
    let cases = cases.unwrap_or(CASES);
    for case in 0..cases {
        let seed_text = SEEDS[rng.usize(..SEEDS.len())];
        let kind = rng.usize(..kinds.len());
        kinds[kind] += 1;
        let bytes = mutate(&mut rng, seed_text, kind);
        let keep = bytes.clone();
        match check(bytes) {
            Ok(parsed) => valid += usize::from(parsed),
            Err(what) => panic!(
                "variant {case} (mutation {kind}): {what}\n{}",
                String::from_utf8_lossy(&keep[..keep.len().min(4000)])
            ),
        }
    }
    // The mutations really change things: most variants are refused, some still parse.
    assert!(valid > 0 && valid < usize::try_from(cases / 2).unwrap_or(0), "{valid} parsed");
    assert!(kinds.iter().all(|n| *n > 0), "{kinds:?}");
}

#[test]
fn the_fuzz_corpus_replays_without_a_panic_and_with_located_errors() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/config");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fuzz/corpus/config")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n != "README"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus has inputs");
    for file in files {
        let bytes = std::fs::read(&file).expect("readable");
        if let Err(what) = check(bytes) {
            panic!("{}: {what}", file.display());
        }
    }
}

#[test]
fn the_seeds_themselves_parse() {
    for seed in SEEDS {
        assert_eq!(check(seed.as_bytes().to_vec()), Ok(true));
    }
}
