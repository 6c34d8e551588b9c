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
