//! The README's usage example compiles: it is the code between the markers below, and a test
//! checks that the README shows exactly that code (its `# ` lines hidden as rustdoc hides them).

#![allow(dead_code, unused_mut)]

// README usage: begin
use routerd_engine::{ConfigInput, Session, SessionOptions};
async fn f() -> Result<(), Box<dyn std::error::Error>> {
    let input = ConfigInput::load(std::path::Path::new("router.yaml"))?;
    let mut session = Session::open(SessionOptions {
        netns: Some("lab-router".into()),
        ledger_path: "/var/lib/routerd/routerd.redb".into(),
        read_only: false,
        root: None,
        system_bus: None,
        exit_after_command: false,
    })
    .await?;
    let doc = session.reconcile(&input, std::time::SystemTime::now()).await?;
    println!("{}", routerd_engine::table::render(&doc));
    Ok(())
}
// README usage: end

#[test]
fn the_readme_shows_this_usage() {
    let this = include_str!("readme.rs");
    let start = this.find("// README usage: begin\n").expect("begin marker") + 23;
    let end = this.find("\n// README usage: end").expect("end marker");
    let readme = include_str!("../../README.md");
    let block = readme.split("```rust,no_run\n").nth(1).and_then(|b| b.split("```").next());
    let block = block.expect("the README has a rust,no_run block");
    let shown: Vec<&str> = block.lines().map(|l| l.strip_prefix("# ").unwrap_or(l)).collect();
    assert_eq!(shown.join("\n"), this[start..end], "README.md's usage differs from readme.rs");
}

/// Every code block of `docs/adding-a-kind.md` is quoted word for word from the file named on
/// the line above it (`` `firmware/…`: ``), so the walk-through is code that compiles.
#[test]
fn the_adding_a_kind_walk_through_quotes_the_tree() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = include_str!("../../../../docs/adding-a-kind.md");
    let mut quoted = 0;
    for (i, part) in doc.split("```rust\n").enumerate().skip(1) {
        let before = doc.split("```rust\n").nth(i - 1).unwrap_or_default();
        let path = before.lines().last().and_then(|l| l.strip_prefix('`')?.strip_suffix("`:"));
        let path = path.unwrap_or_else(|| panic!("block {i} does not name its file"));
        let block = part.split("```").next().unwrap_or_default();
        let source =
            std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(
            source.contains(block),
            "docs/adding-a-kind.md block {i} is not in {path}:\n{block}"
        );
        quoted += 1;
    }
    assert!(quoted >= 8, "only {quoted} quoted blocks");
}
