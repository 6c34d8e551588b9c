//! How `routerd serve` runs under systemd (`Type=notify`, `WatchdogSec=`) and where it logs.
//!
//! - Readiness, status line and stop go to the service manager with `sd_notify(3)` messages
//!   (`READY=1` after the first reconcile, `STATUS=…` after each, `STOPPING=1`); outside
//!   systemd (`NOTIFY_SOCKET` unset) they are no-ops.
//! - With `WATCHDOG_USEC` set for this process, the reconcile loop pings (`WATCHDOG=1`) at half
//!   the interval: a loop stuck in a reconcile stops pinging and systemd restarts the service.
//! - Logs go to the journal (`tracing-journald`) when systemd connected stderr to it
//!   (`JOURNAL_STREAM`, `systemd.exec(5)`), to stderr as plain lines otherwise; and to the
//!   `LogSink`s the config declares, once the session installs them ([`forward_logs`]).

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use routerd_engine::{LogEvent, LogSeverity, LogSinks};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::Context;

pub use sd_notify::NotifyState;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Installs the daemon's log destination (once per process), at `INFO` and above: the
/// libraries' debug events (zbus logs every D-Bus message) would flood the journal. The log
/// sinks also get routerd's own `DEBUG` events when a sink asks for them.
pub fn init_logging() {
    // Only routerd's own debug events: the libraries' are a flood (zbus: every message). A
    // static target filter keeps their debug callsites disabled, as the INFO layers do.
    let own_debug =
        Targets::new().with_default(LevelFilter::INFO).with_target("routerd", LevelFilter::DEBUG);
    let registry = tracing_subscriber::registry().with(SinkLayer.with_filter(own_debug));
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

/// The sinks the session installs; set once, after the session opens.
static SINKS: OnceLock<Arc<LogSinks>> = OnceLock::new();

/// Hands every later event to `sinks` (the session's, [`routerd_engine::Session::log_sinks`]).
/// Events before this call, and events of a process that never calls it, go nowhere else.
pub fn forward_logs(sinks: Arc<LogSinks>) {
    let _ = SINKS.set(sinks);
}

/// The `tracing` layer that feeds the log sinks.
struct SinkLayer;

impl<S: Subscriber> Layer<S> for SinkLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let Some(sinks) = SINKS.get() else { return };
        let meta = event.metadata();
        let severity = match *meta.level() {
            Level::ERROR => LogSeverity::Error,
            Level::WARN => LogSeverity::Warning,
            Level::INFO => LogSeverity::Info,
            _ => LogSeverity::Debug,
        };
        if !sinks.wants(severity) {
            return;
        }
        let mut message = Message::default();
        event.record(&mut message);
        sinks.emit(LogEvent {
            time: SystemTime::now(),
            severity,
            target: meta.target().to_string(),
            message: message.0,
        });
    }
}

/// An event's `message` followed by its other fields as ` name=value`.
#[derive(Default)]
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let fields = std::mem::take(&mut self.0);
            let _ = write!(self.0, "{value:?}{fields}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.insert_str(0, value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
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
