//! `routerd.logSink`: destinations routerd forwards its own events to. Configurator and
//! inventory: [`crate::logsink`].

use serde::{Deserialize, Serialize};

use super::orphans::OrphanRule;
use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// `routerd.logSink`, named after its `LogSink` resource: a destination the supervisor forwards
/// routerd's own events to ([`crate::logsink`]). It lives in the routerd process, so it is
/// absent after a restart until the next reconcile installs it again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogSinkSpec {
    /// The LogSink resource's name, the artifact's name.
    pub name: String,
    /// The lowest severity forwarded.
    pub min_level: LogSeverity,
    /// Where the events go.
    pub output: LogOutput,
    /// Observed only: what was delivered since the sink was installed; never compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<LogDelivery>,
}

/// An event's severity, lowest first (RFC 5424 section 6.2.1 names the codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogSeverity {
    /// Debug: severity code 7.
    Debug,
    /// Informational: code 6.
    Info,
    /// Warning: code 4.
    Warning,
    /// Error: code 3.
    Error,
}

impl LogSeverity {
    /// The RFC 5424 severity code.
    pub fn code(self) -> u8 {
        match self {
            Self::Debug => 7,
            Self::Info => 6,
            Self::Warning => 4,
            Self::Error => 3,
        }
    }

    /// The lowercase name (`warning`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

/// Where a log sink's events go.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum LogOutput {
    /// A syslog receiver.
    Syslog(SyslogOutput),
    /// A program run once per event, the event as JSON on its standard input.
    Plugin(PluginOutput),
}

/// A syslog receiver of a log sink.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyslogOutput {
    /// The transport.
    pub network: SyslogTransport,
    /// `host:port` for `udp` and `tcp`; a socket path for `unix` and `unixgram`; `None` for
    /// `local` (`/dev/log`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// The facility code, 0 (`kern`) to 23 (`local7`), RFC 5424 section 6.2.1.
    pub facility: u8,
    /// The APP-NAME (RFC 5424) or TAG (local sockets): 1 to 48 printable ASCII characters.
    pub tag: String,
}

/// How a log sink reaches its syslog receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyslogTransport {
    /// The local syslog socket, `/dev/log` (journald's or rsyslog's).
    Local,
    /// A stream unix socket.
    Unix,
    /// A datagram unix socket.
    Unixgram,
    /// TCP, RFC 6587 octet-counted frames.
    Tcp,
    /// UDP, one message per datagram (RFC 5426).
    Udp,
}

/// A plugin program of a log sink.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginOutput {
    /// The program's absolute path.
    pub path: String,
    /// How long one run may take before it is killed, in milliseconds.
    pub timeout_ms: u64,
}

/// What a log sink delivered since it was installed (observed only).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogDelivery {
    /// Events handed to the receiver.
    pub sent: u64,
    /// Events the receiver could not take (send error, plugin failure or timeout).
    pub failed: u64,
    /// Events dropped because the sink's queue was full (the receiver is too slow).
    pub dropped: u64,
    /// The last delivery error, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

impl ArtifactType for LogSinkSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::LogSink, self.name.clone())
    }

    observed_as_self!(LogSink);

    /// Delivery counters are a report, not intent.
    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare("minLevel", &self.min_level, &o.min_level);
        diffs.compare("output", &self.output, &o.output);
    }
}

/// Orphans (ADR 0002): a sink lives in the routerd process: nothing outside it can own one.
pub const ORPHANS: OrphanRule = OrphanRule::Always("log sink of this routerd process");
