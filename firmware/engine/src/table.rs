//! The Result document as plain-text tables for a serial console: ASCII only, no colour, every
//! line at most [`WIDTH`] columns (long names are shortened in the middle with `...`).

use std::fmt::Write;

use crate::result::{ConditionStatus, ConditionType, OperationResult, Phase, ResultDocument};

/// Maximum line width.
pub const WIDTH: usize = 80;

/// Renders `doc` as tables. Every line is at most [`WIDTH`] characters.
pub fn render(doc: &ResultDocument) -> String {
    let mut out = String::new();
    let head = format!(
        "routerd {}  generation {}  phase {}  {}",
        doc.mode,
        doc.generation,
        doc.phase.as_str(),
        doc.timestamp
    );
    line(&mut out, &head);
    resources(&mut out, doc);
    operations(&mut out, doc);
    orphans(&mut out, doc);
    candidates(&mut out, doc);
    if !doc.adopted_artifacts.is_empty() {
        section(&mut out, &format!("ADOPTED ({})", doc.adopted_artifacts.len()));
        for a in &doc.adopted_artifacts {
            line(&mut out, &fit(&format!("{}/{}", a.kind, a.name), WIDTH));
        }
    }
    let warnings: Vec<String> = doc
        .warnings
        .iter()
        .cloned()
        .chain(
            doc.resources
                .iter()
                .flat_map(|r| r.warnings.iter().map(move |w| format!("{}: {w}", short_id(&r.id)))),
        )
        .collect();
    if !warnings.is_empty() {
        section(&mut out, &format!("WARNINGS ({})", warnings.len()));
        for w in &warnings {
            wrapped(&mut out, w, "");
        }
    }
    out
}

fn resources(out: &mut String, doc: &ResultDocument) {
    section(out, &format!("RESOURCES ({})", doc.resources.len()));
    line(out, &format!("{:<50} {:<17} {:>4} {:>5}", "RESOURCE", "PHASE", "ARTS", "OPS"));
    for r in &doc.resources {
        let ops = r.plan.iter().filter(|o| o.result != OperationResult::Blocked).count();
        line(
            out,
            &format!(
                "{:<50} {:<17} {:>4} {:>5}",
                fit(&short_id(&r.id), 50),
                r.phase.as_str(),
                r.artifacts.len(),
                ops
            ),
        );
        if r.phase == Phase::Blocked || r.phase == Phase::Drifted {
            let shown = r.conditions.iter().filter(|c| c.status == ConditionStatus::True);
            for c in shown.filter(|c| c.type_ != ConditionType::Ready) {
                wrapped(out, &format!("{}: {}", c.reason, c.message), "    ");
            }
        }
    }
}

fn operations(out: &mut String, doc: &ResultDocument) {
    section(out, &format!("OPERATIONS ({})", doc.operation_count()));
    if doc.operations.is_empty() {
        line(out, "none: the host matches the config");
        return;
    }
    line(out, &format!("{:<9} {:<59} {:<8}", "OP", "ARTIFACT", "RESULT"));
    for op in &doc.operations {
        let artifact = fit(&format!("{}/{}", op.kind, op.name), 59);
        line(out, &format!("{:<9} {:<59} {:<8}", op.operation.as_str(), artifact, op.result));
        if let Some(e) = &op.error {
            wrapped(out, e, "    ");
        }
    }
}

fn orphans(out: &mut String, doc: &ResultDocument) {
    if doc.orphans.is_empty() {
        return;
    }
    section(out, &format!("ORPHANS ({})", doc.orphans.len()));
    line(out, &format!("{:<62} {:<7}", "ARTIFACT", "CLEANUP"));
    for o in &doc.orphans {
        line(out, &format!("{:<62} {:<7}", fit(&format!("{}/{}", o.kind, o.name), 62), o.cleanup));
        wrapped(out, &format!("{}; {}", o.reason, o.remediation), "    ");
    }
}

fn candidates(out: &mut String, doc: &ResultDocument) {
    if doc.adoption_candidates.is_empty() {
        return;
    }
    section(out, &format!("ADOPTION CANDIDATES ({})", doc.adoption_candidates.len()));
    line(out, &format!("{:<62} {:<9}", "ARTIFACT", "ADOPTABLE"));
    for c in &doc.adoption_candidates {
        let artifact = fit(&format!("{}/{}", c.kind, c.name), 62);
        line(out, &format!("{:<62} {:<9}", artifact, if c.adoptable { "yes" } else { "no" }));
        for d in &c.diff {
            let text = format!("{}: desired {} observed {}", d.attribute, d.desired, d.observed);
            wrapped(out, &text, "    ");
        }
    }
}

/// `apiVersion/Kind/name` -> `Kind/name`.
fn short_id(id: &str) -> String {
    let parts: Vec<&str> = id.splitn(4, '/').collect();
    match parts.as_slice() {
        [_, _, kind, name] => format!("{kind}/{name}"),
        _ => id.to_string(),
    }
}

fn section(out: &mut String, title: &str) {
    out.push('\n');
    line(out, title);
}

fn line(out: &mut String, text: &str) {
    let text = fit(text.trim_end(), WIDTH);
    let _ = writeln!(out, "{text}");
}

/// Word-wraps `text` to [`WIDTH`] with `indent` on every line.
fn wrapped(out: &mut String, text: &str, indent: &str) {
    let room = WIDTH.saturating_sub(indent.len()).max(10);
    let mut current = String::new();
    for word in text.split_whitespace() {
        let word = fit(word, room);
        if !current.is_empty() && current.len() + 1 + word.len() > room {
            line(out, &format!("{indent}{current}"));
            current.clear();
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(&word);
    }
    if !current.is_empty() {
        line(out, &format!("{indent}{current}"));
    }
}

/// Shortens `s` to at most `max` characters, keeping both ends: `linux.ipv4.route/10...0/24`.
/// Non-ASCII characters are replaced with `?` so widths are exact on any console.
fn fit(s: &str, max: usize) -> String {
    let s: String =
        s.chars().map(|c| if c.is_ascii() && !c.is_ascii_control() { c } else { '?' }).collect();
    if s.len() <= max {
        return s;
    }
    if max <= 3 {
        return s[..max].to_string();
    }
    let keep = max - 3;
    let front = keep.div_ceil(2);
    let back = keep - front;
    format!("{}...{}", &s[..front], &s[s.len() - back..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{OperationRecord, ResourceResult};

    fn doc() -> ResultDocument {
        let long = "x".repeat(200);
        ResultDocument {
            generation: 7,
            timestamp: "2026-11-21T00:00:00Z".into(),
            phase: Phase::Drifted,
            mode: "plan".into(),
            resources: vec![ResourceResult {
                id: format!("net.routerd.net/v1alpha1/IPv4StaticRoute/{long}"),
                generation: None,
                observed_generation: None,
                phase: Phase::Drifted,
                observed: vec![],
                plan: vec![],
                artifacts: vec![],
                warnings: vec![format!("a warning with a very long word {long}")],
                conditions: vec![],
                status: None,
            }],
            orphans: vec![],
            adoption_candidates: vec![],
            adopted_artifacts: vec![],
            operations: vec![std::sync::Arc::new(OperationRecord {
                operation: crate::result::Operation::Create,
                kind: "linux.ipv4.route".into(),
                name: long.as_str().into(),
                owner: "".into(),
                reason: "not on the host".into(),
                diff: vec![],
                result: OperationResult::Failed,
                error: Some(format!("kernel said no {long}")),
            })],
            warnings: vec![],
        }
    }

    #[test]
    fn every_line_fits_eighty_columns_and_is_ascii() {
        let text = render(&doc());
        for l in text.lines() {
            assert!(l.len() <= WIDTH, "line too long ({}): {l}", l.len());
            assert!(l.is_ascii());
        }
        assert!(text.contains("IPv4StaticRoute/"));
        assert!(text.contains("OPERATIONS (1)"));
    }

    #[test]
    fn fit_keeps_both_ends() {
        assert_eq!(fit("abcdefghij", 7), "ab...ij");
        assert_eq!(fit("short", 7), "short");
    }
}
