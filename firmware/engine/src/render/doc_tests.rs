//! Keeps `docs/resources.md` in sync with the code: every resource kind has a `## <Kind>`
//! section, in the order of [`ResourceKind::ALL`], whose first YAML example parses and
//! validates on its own, contains a resource of that kind, and whose text names every artifact
//! kind that resource renders (as a whole name: `linux.ipv4.routeTable` does not count for
//! `linux.ipv4.route`).
//!
//! All problems are collected and reported together, so one run shows every stale section.

use routerd_model::{ResourceKind, parse_config};
use routerd_test_kit::router::{self, RouterDoc};

use super::render;

const DOC: &str = include_str!("../../../../docs/resources.md");

/// The line index of heading `## <kind>`, if the document has it.
fn heading_line(lines: &[&str], kind: ResourceKind) -> Option<usize> {
    let heading = format!("## {}", kind.as_str());
    lines.iter().position(|l| l.trim_end() == heading)
}

/// The section of `kind`: its heading line up to (not including) the next `## ` heading.
fn section<'a>(lines: &[&'a str], start: usize) -> Vec<&'a str> {
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with("## "))
        .map_or(lines.len(), |i| start + 1 + i);
    lines[start..end].to_vec()
}

/// The body of the first fenced YAML block of `section`, without the fences.
fn first_yaml_block(section: &[&str]) -> Option<String> {
    let open = section.iter().position(|l| l.trim_end() == "```yaml")?;
    let len = section[open + 1..].iter().position(|l| l.trim_end() == "```")?;
    let body: Vec<&str> = section[open + 1..open + 1 + len].to_vec();
    Some(body.join("\n"))
}

/// `block` (a YAML list of resources) as a Router document, the list indented under
/// `spec.resources`.
fn router_document(block: &str) -> String {
    RouterDoc::new("test").raw(&router::indent(block, 4)).to_string()
}

/// Whether `text` contains `token` not as part of a longer name: `linux.ipv4.route` is not
/// found in `linux.ipv4.routeTable`.
fn names_token(text: &str, token: &str) -> bool {
    let part_of_name = |c: char| c.is_ascii_alphanumeric() || c == '.' || c == '_';
    text.match_indices(token).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + token.len()..].chars().next();
        !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name)
    })
}

/// Every problem of one kind's section.
fn check_section(kind: ResourceKind, section: &[&str], failures: &mut Vec<String>) {
    let name = kind.as_str();
    let Some(block) = first_yaml_block(section) else {
        failures.push(format!("{name}: the section has no ```yaml example"));
        return;
    };
    let file = format!("docs/resources.md#{name}");
    let config = match parse_config(&router_document(&block), &file) {
        Ok(config) => config,
        Err(errors) => {
            failures.push(format!("{name}: the example does not parse:\n{errors}"));
            return;
        }
    };
    let documented: Vec<_> = config.resources_of(kind).collect();
    if documented.is_empty() {
        failures.push(format!("{name}: the example has no {name} resource"));
        return;
    }
    let rendered = render(&config);
    let text = section.join("\n");
    for resource in documented {
        let id = resource.id();
        let mut kinds: Vec<&str> = rendered
            .intents
            .iter()
            .filter(|i| *i.owner == *id)
            .map(|i| i.kind().as_str())
            .collect();
        if kinds.is_empty() {
            failures.push(format!("{name}: {id} renders no artifact in the example"));
        }
        kinds.sort_unstable();
        kinds.dedup();
        for artifact in kinds {
            if !names_token(&text, artifact) {
                failures.push(format!(
                    "{name}: {id} renders {artifact}, which the section does not name"
                ));
            }
        }
    }
}

#[test]
fn resources_doc_has_a_valid_example_and_the_artifacts_of_every_kind() {
    let lines: Vec<&str> = DOC.lines().collect();
    let mut failures = Vec::new();
    let mut previous: Option<(ResourceKind, usize)> = None;
    for kind in ResourceKind::ALL {
        let Some(start) = heading_line(&lines, kind) else {
            failures.push(format!("{}: no \"## {}\" section", kind.as_str(), kind.as_str()));
            continue;
        };
        if let Some((before, at)) = previous
            && at > start
        {
            failures.push(format!(
                "{}: the section comes before {}'s; keep the order of ResourceKind::ALL",
                kind.as_str(),
                before.as_str()
            ));
        }
        previous = Some((kind, start));
        check_section(kind, &section(&lines, start), &mut failures);
    }
    assert!(
        failures.is_empty(),
        "docs/resources.md is out of date ({} problems):\n- {}",
        failures.len(),
        failures.join("\n- ")
    );
}

#[test]
fn artifact_kinds_are_found_as_whole_names_only() {
    assert!(names_token("| `linux.ipv4.route` | ensure |", "linux.ipv4.route"));
    assert!(!names_token("| `linux.ipv4.routeTable` | ensure |", "linux.ipv4.route"));
    assert!(!names_token("a profile", "file"));
    assert!(names_token("a `file` at the end", "file"));
}
