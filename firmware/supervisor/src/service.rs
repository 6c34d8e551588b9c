//! How `routerd serve` runs under systemd (`Type=notify`, `WatchdogSec=`) and where it logs.
//!
//! - Readiness, status line and stop go to the service manager with `sd_notify(3)` messages
//!   (`READY=1` after the first reconcile, `STATUS=…` after each, `STOPPING=1`); outside
//!   systemd (`NOTIFY_SOCKET` unset) they are no-ops.
//! - With `WATCHDOG_USEC` set for this process, the reconcile loop pings (`WATCHDOG=1`) at half
//!   the interval: a loop stuck in a reconcile stops pinging and systemd restarts the service.
//! - Logs go to the journal (`tracing-journald`) when systemd connected stderr to it
//!   (`JOURNAL_STREAM`, `systemd.exec(5)`), to stderr as plain lines otherwise.

use std::io::IsTerminal;
use std::time::Duration;

pub use sd_notify::NotifyState;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Installs the daemon's log destination (once per process), at `INFO` and above: the
/// libraries' debug events (zbus logs every D-Bus message) would flood the journal.
pub fn init_logging() {
    let registry = tracing_subscriber::registry();
    if std::env::var_os("JOURNAL_STREAM").is_some() {
        match tracing_journald::layer() {
            Ok(journal) => {
                let journal = journal.with_syslog_identifier("routerd".into());
                let _ = registry.with(journal.with_filter(LevelFilter::INFO)).try_init();
                return;
            }
            Err(e) => eprintln!("routerd: journald unavailable ({e}); logging to stderr"),
        }
    }
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false);
    let _ = registry.with(stderr.with_filter(LevelFilter::INFO)).try_init();
}

/// Tells the service manager `state`; failures are logged, never fatal (the service runs
/// without a manager too).
pub fn notify(state: &[NotifyState<'_>]) {
    if let Err(e) = sd_notify::notify(state) {
        tracing::warn!("sd_notify failed: {e}");
    }
}

/// The watchdog ping interval (half of `WATCHDOG_USEC`), when systemd asks for pings.
pub fn watchdog_interval() -> Option<Duration> {
    sd_notify::watchdog_enabled().map(|timeout| timeout / 2).filter(|d| !d.is_zero())
}
