//! Long-running processes of a test (`routerd serve`, a resolver, a DHCP client): started,
//! waited on with a deadline instead of a sleep, killed and reaped on drop whatever the test's
//! outcome. What a daemon is ready for (a socket answering, a line in its log) stays in the
//! test: [`Daemon::wait_until`] takes it as a condition.

use std::ffi::OsStr;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// How often [`wait_until`], [`wait_for`] and the [`Daemon`] waits check again.
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// A child process, killed (SIGKILL) and reaped on drop if it still runs.
#[derive(Debug)]
pub struct Daemon {
    child: Child,
    program: String,
}

impl Daemon {
    /// Spawns `command` (its arguments, environment and stdio as the caller set them).
    ///
    /// Panics, naming the program, when it cannot be started (not installed, not executable).
    pub fn spawn(command: &mut Command) -> Self {
        let program = program_name(command);
        let child = command.spawn().unwrap_or_else(|e| panic!("could not start {program}: {e}"));
        Self { child, program }
    }

    /// The process ID.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The child, for its piped stdio (`child_mut().stderr.take()`).
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Sends signal `signal` (`TERM`, `HUP`, `KILL`: a name `kill -s` takes) to the process.
    ///
    /// Panics when `kill` fails (the process was reaped already, say).
    pub fn signal(&self, signal: &str) {
        let pid = self.id().to_string();
        let status = Command::new("kill").args(["-s", signal, &pid]).status();
        assert!(
            matches!(status, Ok(s) if s.success()),
            "kill -s {signal} {} ({pid}): {status:?}",
            self.program
        );
    }

    /// The exit status if the process has exited (reaping it), `None` while it runs.
    ///
    /// Panics when the status cannot be read.
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().unwrap_or_else(|e| panic!("wait for {}: {e}", self.program))
    }

    /// Waits up to `deadline` for the process to exit and returns its status.
    ///
    /// Panics when it still runs after `deadline`.
    pub fn wait_exit(&mut self, deadline: Duration) -> ExitStatus {
        let program = self.program.clone();
        wait_for(&format!("{program} to exit"), deadline, || self.try_exit())
    }

    /// Sends SIGTERM and waits up to `deadline` for the process to exit; returns its status.
    ///
    /// Panics when the signal cannot be sent or the process still runs after `deadline`.
    pub fn terminate(&mut self, deadline: Duration) -> ExitStatus {
        self.signal("TERM");
        self.wait_exit(deadline)
    }

    /// Polls `ready` every [`POLL_INTERVAL`] until it holds. Fails fast when the process exits
    /// first.
    ///
    /// Panics naming `what` when `deadline` passes, or when the process has exited (with its
    /// status).
    pub fn wait_until(&mut self, what: &str, deadline: Duration, mut ready: impl FnMut() -> bool) {
        let until = Instant::now() + deadline;
        while !ready() {
            if let Some(status) = self.try_exit() {
                panic!("{} exited ({status}) while waiting for {what}", self.program);
            }
            assert!(Instant::now() < until, "timed out after {deadline:?} waiting for {what}");
            std::thread::sleep(POLL_INTERVAL);
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `ok` every [`POLL_INTERVAL`] until it holds.
///
/// Panics naming `what` when it does not hold within `deadline`.
pub fn wait_until(what: &str, deadline: Duration, mut ok: impl FnMut() -> bool) {
    let until = Instant::now() + deadline;
    while !ok() {
        assert!(Instant::now() < until, "timed out after {deadline:?} waiting for {what}");
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// Polls `f` every [`POLL_INTERVAL`] until it gives `Some`, and returns that value.
///
/// Panics naming `what` when it gives `None` throughout `deadline`.
pub fn wait_for<T>(what: &str, deadline: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let until = Instant::now() + deadline;
    loop {
        if let Some(value) = f() {
            return value;
        }
        assert!(Instant::now() < until, "timed out after {deadline:?} waiting for {what}");
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// The program `command` runs, for messages: its file name (`routerd` for
/// `/…/target/debug/routerd`), and for `ip netns exec NS PROGRAM …` the program and namespace.
fn program_name(command: &Command) -> String {
    let file_name = |program: &OsStr| {
        let path = std::path::Path::new(program);
        path.file_name().unwrap_or(program).to_string_lossy().into_owned()
    };
    let args: Vec<&OsStr> = command.get_args().take(4).collect();
    match args[..] {
        [netns, exec, ns, program]
            if command.get_program() == "ip" && netns == "netns" && exec == "exec" =>
        {
            format!("{} (in {})", file_name(program), ns.to_string_lossy())
        }
        _ => file_name(command.get_program()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_fails_fast_when_the_process_exits_and_drop_reaps_it() {
        let mut quitter = Daemon::spawn(Command::new("sh").args(["-c", "exit 3"]));
        let started = Instant::now();
        let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            quitter.wait_until("nothing", Duration::from_secs(30), || false)
        }));
        let message = *waited.expect_err("no wait").downcast::<String>().expect("a message");
        assert!(message.contains("sh exited (exit status: 3)"), "{message}");
        assert!(started.elapsed() < Duration::from_secs(10), "failed fast");

        let mut sleeper = Daemon::spawn(Command::new("sleep").arg("60"));
        assert_eq!(sleeper.try_exit(), None);
        let pid = sleeper.id();
        drop(sleeper);
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "killed and reaped");
    }

    #[test]
    fn terminate_sends_sigterm_and_returns_the_exit_status() {
        let mut sleeper = Daemon::spawn(Command::new("sleep").arg("60"));
        let status = sleeper.terminate(Duration::from_secs(10));
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(15));
        assert_eq!(wait_for("a value", Duration::from_secs(1), || Some(7)), 7);
    }
}
