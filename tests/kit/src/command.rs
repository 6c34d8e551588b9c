//! Set-up and read-back commands (`ip`, `nft`, `chmod`, …) run to completion: a command the
//! test needs must succeed, so a failure panics with its stderr.

use std::process::Command;

/// Runs `program ARGS…` to completion and returns its stdout (lossy UTF-8).
///
/// Panics when the program cannot be started, or exits unsuccessfully (with its stderr).
pub fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} {args:?}: {e}"));
    assert!(
        out.status.success(),
        "{program} {} failed ({}): {}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether `program ARGS…` runs and exits 0; its output is discarded. A program that cannot be
/// started counts as a failure.
pub fn succeeds(program: &str, args: &[&str]) -> bool {
    Command::new(program).args(args).output().is_ok_and(|o| o.status.success())
}

/// Panics unless the effective user ID is 0: tests that make namespaces need root and never
/// skip.
pub fn require_root() {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .expect("a Uid line in /proc/self/status");
    assert_eq!(euid, "0", "needs root: these tests create network namespaces");
}
