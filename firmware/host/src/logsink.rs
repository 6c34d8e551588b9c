//! routerd's log sinks (`LogSink`, applyWith `routerd-log`): the supervisor forwards its own
//! events, at or above a sink's minimum severity, to a syslog receiver or a plugin program.
//!
//! - The sinks live in the routerd process ([`LogSinks`]). [`LogSinkBackend`] installs,
//!   replaces and removes them, and lists them as `routerd.logSink/<name>` with what each
//!   delivered, so a change shows in the plan and an unreachable receiver in the artifact.
//! - Over the network the message is RFC 5424: one per UDP datagram (RFC 5426), or octet-counted
//!   frames on TCP (RFC 6587 section 3.4.1). Local sockets (`/dev/log`, `unix`, `unixgram`) get
//!   syslog(3)'s `<PRI>TAG[PID]: MSG`, which journald and rsyslog both parse.
//! - UDP and TCP sockets are opened in the target's network namespace (where the router's
//!   addresses and routes are); a plugin runs in routerd's own namespaces, with an empty
//!   environment but for `PATH`.
//! - Emitting never blocks the caller: each sink has a queue of [`QUEUE_LEN`] events drained by
//!   its own task, and events that find it full are dropped and counted.
//! - Nothing here logs through `tracing`: an event about a failed delivery would be forwarded to
//!   the failing sink again. Failures are counted and the last one kept in the artifact.

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use socket2::{Protocol, Type};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use crate::artifact::{
    Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, LogDelivery, LogOutput, LogSeverity,
    LogSinkSpec, PluginOutput, SyslogOutput, SyslogTransport,
};
use crate::backend::Backend;
use crate::error::HostError;
use crate::netns::Netns;

/// The `applyWith` of log sinks.
const APPLY_WITH: crate::kinds::ApplyWith = crate::kinds::ApplyWith::LogSinks;
/// Events queued per sink; more are dropped (and counted) until the sink catches up.
pub const QUEUE_LEN: usize = 1024;
/// The local syslog socket (`network: ""`).
pub const LOCAL_SOCKET: &str = "/dev/log";
/// How long a TCP connection to the receiver may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest APP-NAME RFC 5424 allows (section 6.2.5).
const MAX_TAG: usize = 48;

/// One event of routerd's to forward.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEvent {
    /// When it happened.
    pub time: SystemTime,
    /// Its severity.
    pub severity: LogSeverity,
    /// Where in routerd it comes from (the `tracing` target, a module path).
    pub target: String,
    /// The message, with the event's fields appended as `name=value`.
    pub message: String,
}

/// The installed sinks, shared by the [`LogSinkBackend`] (writer) and the supervisor's log
/// layer (which calls [`LogSinks::emit`] for every event).
#[derive(Default)]
pub struct LogSinks {
    sinks: RwLock<BTreeMap<String, Installed>>,
}

struct Installed {
    spec: LogSinkSpec,
    queue: mpsc::Sender<Arc<LogEvent>>,
    stats: Arc<Stats>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Installed {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Default)]
struct Stats {
    sent: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
    last_error: Mutex<Option<String>>,
}

impl Stats {
    fn delivery(&self) -> LogDelivery {
        LogDelivery {
            sent: self.sent.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
            last_error: self.last_error.lock().ok().and_then(|e| e.clone()),
        }
    }
}

impl LogSinks {
    /// Whether some sink takes events of `severity`: the caller's cheap test before it formats
    /// an event.
    pub fn wants(&self, severity: LogSeverity) -> bool {
        self.sinks.read().map(|s| s.values().any(|i| i.spec.min_level <= severity)).unwrap_or(false)
    }

    /// Queues `event` for every sink whose minimum severity it reaches. Never blocks: a sink
    /// whose queue is full drops the event and counts it.
    pub fn emit(&self, event: LogEvent) {
        let Ok(sinks) = self.sinks.read() else { return };
        let event = Arc::new(event);
        for sink in sinks.values().filter(|s| s.spec.min_level <= event.severity) {
            if sink.queue.try_send(Arc::clone(&event)).is_err() {
                sink.stats.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The installed sinks with their delivery counters, by name.
    pub fn list(&self) -> Vec<LogSinkSpec> {
        let Ok(sinks) = self.sinks.read() else { return Vec::new() };
        sinks
            .values()
            .map(|i| LogSinkSpec { delivery: Some(i.stats.delivery()), ..i.spec.clone() })
            .collect()
    }

    /// Installs `spec` delivering through `writer`, replacing a sink of that name. Must run
    /// inside a tokio runtime (the sink's task is spawned on it).
    fn install(&self, spec: LogSinkSpec, writer: Writer) {
        let (queue, rx) = mpsc::channel(QUEUE_LEN);
        let stats = Arc::new(Stats::default());
        let format = Format::new(&spec);
        let task = tokio::spawn(deliver(rx, writer, format, Arc::clone(&stats)));
        let spec = LogSinkSpec { delivery: None, ..spec };
        let old = match self.sinks.write() {
            Ok(mut sinks) => {
                sinks.insert(spec.name.clone(), Installed { spec, queue, stats, task })
            }
            Err(_) => return,
        };
        drop(old); // outside the lock: aborts the replaced sink's task
    }

    /// Removes the sink `name`; whether it was installed.
    fn remove(&self, name: &str) -> bool {
        let old = self.sinks.write().ok().and_then(|mut s| s.remove(name));
        old.is_some()
    }
}

/// How one sink's messages are written.
struct Format {
    name: String,
    facility: u8,
    tag: String,
    hostname: String,
    pid: u32,
    octet_counted: bool,
    line: bool,
}

impl Format {
    fn new(spec: &LogSinkSpec) -> Self {
        let (facility, tag, network) = match &spec.output {
            LogOutput::Syslog(s) => (s.facility, s.tag.clone(), Some(s.network)),
            LogOutput::Plugin(_) => (0, String::new(), None),
        };
        // RFC 5424 section 6.2.4: the host's name, or NILVALUE when it has none.
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .ok()
            .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic()))
            .unwrap_or_else(|| "-".to_string());
        Self {
            name: spec.name.clone(),
            facility,
            tag,
            hostname,
            pid: std::process::id(),
            octet_counted: network == Some(SyslogTransport::Tcp),
            line: network == Some(SyslogTransport::Unix),
        }
    }

    fn priority(&self, event: &LogEvent) -> u32 {
        u32::from(self.facility) * 8 + u32::from(event.severity.code())
    }

    /// The RFC 5424 message: `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID - - MSG`, no
    /// MSGID and no structured data.
    pub(crate) fn rfc5424(&self, event: &LogEvent) -> String {
        format!(
            "<{}>1 {} {} {} {} - - {}",
            self.priority(event),
            humantime::format_rfc3339_micros(event.time),
            self.hostname,
            self.tag,
            self.pid,
            event.message
        )
    }

    /// syslog(3)'s local form, `<PRI>TAG[PID]: MSG`; the receiver stamps the time.
    pub(crate) fn local(&self, event: &LogEvent) -> String {
        format!("<{}>{}[{}]: {}", self.priority(event), self.tag, self.pid, event.message)
    }

    /// The bytes one event is on the wire of its transport.
    fn frame(&self, event: &LogEvent, network: bool) -> Vec<u8> {
        if !network {
            let message = self.local(event);
            if self.line {
                // A stream unix socket separates messages by newlines.
                return format!("{}\n", message.replace('\n', " ")).into_bytes();
            }
            return message.into_bytes();
        }
        let message = self.rfc5424(event);
        if self.octet_counted {
            format!("{} {message}", message.len()).into_bytes()
        } else {
            message.into_bytes()
        }
    }

    /// The plugin's standard input: one JSON object.
    fn json(&self, event: &LogEvent) -> Vec<u8> {
        let doc = serde_json::json!({
            "sink": self.name,
            "time": humantime::format_rfc3339_micros(event.time).to_string(),
            "level": event.severity.as_str(),
            "target": event.target,
            "message": event.message,
        });
        let mut bytes = doc.to_string().into_bytes();
        bytes.push(b'\n');
        bytes
    }
}

/// A sink's open transport.
enum Writer {
    Datagram { socket: tokio::net::UnixDatagram, path: PathBuf },
    Stream { path: PathBuf, stream: Option<tokio::net::UnixStream> },
    Udp { socket: tokio::net::UdpSocket },
    Tcp { netns: Netns, peer: SocketAddr, stream: Option<tokio::net::TcpStream> },
    Plugin { path: PathBuf, timeout: Duration },
}

impl Writer {
    async fn send(&mut self, format: &Format, event: &LogEvent) -> Result<(), String> {
        match self {
            Self::Datagram { socket, path } => {
                let bytes = format.frame(event, false);
                socket
                    .send_to(&bytes, &*path)
                    .await
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            }
            Self::Stream { path, stream } => {
                let bytes = format.frame(event, false);
                let at = |e: std::io::Error| format!("{}: {e}", path.display());
                if stream.is_none() {
                    *stream = Some(tokio::net::UnixStream::connect(&*path).await.map_err(at)?);
                }
                write_or_drop(stream, &bytes).await.map_err(at)?;
            }
            Self::Udp { socket } => {
                let bytes = format.frame(event, true);
                socket
                    .send(&bytes)
                    .await
                    .map_err(|e| format!("sending to {:?}: {e}", socket.peer_addr().ok()))?;
            }
            Self::Tcp { netns, peer, stream } => {
                let bytes = format.frame(event, true);
                if stream.is_none() {
                    *stream = Some(tcp_connect(netns, *peer).await?);
                }
                write_or_drop(stream, &bytes)
                    .await
                    .map_err(|e| format!("sending to {peer}: {e}"))?;
            }
            Self::Plugin { path, timeout } => {
                run_plugin(path, *timeout, &format.json(event)).await?
            }
        }
        Ok(())
    }
}

/// Writes `bytes` to the open `stream`; on failure closes it, so the next event reconnects.
async fn write_or_drop<S: tokio::io::AsyncWrite + Unpin>(
    stream: &mut Option<S>,
    bytes: &[u8],
) -> std::io::Result<()> {
    let Some(s) = stream.as_mut() else { return Ok(()) };
    let written = s.write_all(bytes).await;
    if written.is_err() {
        *stream = None;
    }
    written
}

async fn deliver(
    mut rx: mpsc::Receiver<Arc<LogEvent>>,
    mut writer: Writer,
    format: Format,
    stats: Arc<Stats>,
) {
    while let Some(event) = rx.recv().await {
        match writer.send(&format, &event).await {
            Ok(()) => {
                stats.sent.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                stats.failed.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut last) = stats.last_error.lock() {
                    *last = Some(e);
                }
            }
        }
    }
}

async fn tcp_connect(netns: &Netns, peer: SocketAddr) -> Result<tokio::net::TcpStream, String> {
    let socket = crate::probe::socket_in(netns, peer, Type::STREAM, Protocol::TCP, None)
        .map_err(|e| e.to_string())?;
    let socket = tokio::net::TcpSocket::from_std_stream(std::net::TcpStream::from(socket));
    match tokio::time::timeout(CONNECT_TIMEOUT, socket.connect(peer)).await {
        Err(_) => Err(format!("connecting to {peer}: no answer in {}s", CONNECT_TIMEOUT.as_secs())),
        Ok(Err(e)) => Err(format!("connecting to {peer}: {e}")),
        Ok(Ok(stream)) => Ok(stream),
    }
}

/// Runs the plugin with `input` on its standard input; kills it after `timeout`.
async fn run_plugin(path: &Path, timeout: Duration, input: &[u8]) -> Result<(), String> {
    let mut child = tokio::process::Command::new(path)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut stdin = child.stdin.take();
    let run = async {
        if let Some(stdin) = stdin.as_mut() {
            // A plugin that exits without reading its input is not an error of the sink's.
            let _ = stdin.write_all(input).await;
        }
        drop(stdin.take());
        child.wait().await
    };
    match tokio::time::timeout(timeout, run).await {
        Err(_) => {
            let _ = child.kill().await;
            Err(format!("{}: killed after {} ms", path.display(), timeout.as_millis()))
        }
        Ok(Err(e)) => Err(format!("{}: {e}", path.display())),
        Ok(Ok(status)) if status.success() => Ok(()),
        Ok(Ok(status)) => Err(format!("{}: {status}", path.display())),
    }
}

/// Inventory and configurator of `routerd.logSink`: installs the sinks into a [`LogSinks`].
pub struct LogSinkBackend {
    netns: Netns,
    sinks: Arc<LogSinks>,
}

impl LogSinkBackend {
    /// A backend installing into `sinks`, with network sockets in `netns`.
    pub fn new(netns: &Netns, sinks: Arc<LogSinks>) -> Self {
        Self { netns: netns.clone(), sinks }
    }

    /// Checks `spec` and opens its transport. Errors ([`HostError::Invalid`]): a tag RFC 5424
    /// refuses, an address that does not resolve, no socket at a unix path, a plugin that is
    /// not an executable file. A TCP receiver is connected to on the first event, and again
    /// after a failure, so a receiver that is down shows in the delivery counters, not here.
    async fn open(&self, key: &ArtifactKey, spec: &LogSinkSpec) -> Result<Writer, HostError> {
        let invalid = |message: String| HostError::Invalid { key: key.clone(), message };
        match &spec.output {
            LogOutput::Syslog(s) => self.open_syslog(s).await.map_err(invalid),
            LogOutput::Plugin(PluginOutput { path, timeout_ms }) => {
                let path = PathBuf::from(path);
                let meta = std::fs::metadata(&path)
                    .map_err(|e| invalid(format!("plugin {}: {e}", path.display())))?;
                if !path.is_absolute() || !meta.is_file() || meta.permissions().mode() & 0o111 == 0
                {
                    return Err(invalid(format!(
                        "plugin {} is not an executable file given by its absolute path",
                        path.display()
                    )));
                }
                Ok(Writer::Plugin { path, timeout: Duration::from_millis(*timeout_ms) })
            }
        }
    }

    async fn open_syslog(&self, s: &SyslogOutput) -> Result<Writer, String> {
        if s.tag.is_empty() || s.tag.len() > MAX_TAG || !s.tag.bytes().all(|b| b.is_ascii_graphic())
        {
            return Err(format!("tag {:?}: 1 to {MAX_TAG} printable ASCII characters", s.tag));
        }
        if s.facility > 23 {
            return Err(format!("facility {} is not 0 to 23", s.facility));
        }
        let address = s.address.as_deref().filter(|a| !a.is_empty());
        match s.network {
            SyslogTransport::Local | SyslogTransport::Unix | SyslogTransport::Unixgram => {
                let path = PathBuf::from(address.unwrap_or(LOCAL_SOCKET));
                let socket = std::fs::metadata(&path).map(|m| m.file_type().is_socket());
                if !matches!(socket, Ok(true)) {
                    return Err(format!("no syslog socket at {}", path.display()));
                }
                if s.network == SyslogTransport::Unix {
                    return Ok(Writer::Stream { path, stream: None });
                }
                let socket = tokio::net::UnixDatagram::unbound().map_err(|e| e.to_string())?;
                Ok(Writer::Datagram { socket, path })
            }
            SyslogTransport::Udp | SyslogTransport::Tcp => {
                let Some(address) = address else {
                    return Err("address host:port is required for udp and tcp".into());
                };
                let peer = self.resolve(address)?;
                if s.network == SyslogTransport::Tcp {
                    return Ok(Writer::Tcp { netns: self.netns.clone(), peer, stream: None });
                }
                let socket =
                    crate::probe::socket_in(&self.netns, peer, Type::DGRAM, Protocol::UDP, None)
                        .map_err(|e| e.to_string())?;
                let socket = tokio::net::UdpSocket::from_std(std::net::UdpSocket::from(socket))
                    .map_err(|e| e.to_string())?;
                socket.connect(peer).await.map_err(|e| format!("{peer}: {e}"))?;
                Ok(Writer::Udp { socket })
            }
        }
    }

    /// `host:port` to the first address the resolver gives, looked up from inside the
    /// namespace.
    fn resolve(&self, address: &str) -> Result<SocketAddr, String> {
        let owned = address.to_string();
        let found = self
            .netns
            .run(move || owned.to_socket_addrs().map(|mut a| a.next()))
            .map_err(|e| e.to_string())?;
        match found {
            Ok(Some(peer)) => Ok(peer),
            Ok(None) => Err(format!("{address} resolves to no address")),
            Err(e) => Err(format!("{address}: {e}")),
        }
    }

    async fn install(&self, desired: &Artifact) -> Result<(), HostError> {
        let ArtifactSpec::LogSink(spec) = &desired.spec else {
            return Err(HostError::WrongBackend { key: desired.key.clone(), backend: APPLY_WITH });
        };
        let writer = self.open(&desired.key, spec).await?;
        self.sinks.install(spec.clone(), writer);
        Ok(())
    }
}

impl Backend for LogSinkBackend {
    fn apply_with(&self) -> crate::kinds::ApplyWith {
        APPLY_WITH
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        &[ArtifactKind::LogSink]
    }

    fn observe<'a>(
        &'a self,
        _kind: ArtifactKind,
        _wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        let listed = self
            .sinks
            .list()
            .into_iter()
            .map(|s| Artifact::new(ArtifactSpec::LogSink(s)))
            .collect();
        Box::pin(async move { Ok(listed) })
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(self.install(desired))
    }

    fn modify<'a>(
        &'a self,
        _observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(self.install(desired))
    }

    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        self.sinks.remove(&observed.key.name);
        Box::pin(async move { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(network: SyslogTransport, address: Option<String>) -> LogSinkSpec {
        LogSinkSpec {
            name: "remote".into(),
            min_level: LogSeverity::Info,
            output: LogOutput::Syslog(SyslogOutput {
                network,
                address,
                facility: 3,
                tag: "routerd".into(),
            }),
            delivery: None,
        }
    }

    fn event(severity: LogSeverity, message: &str) -> LogEvent {
        LogEvent {
            time: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            severity,
            target: "routerd::daemon".into(),
            message: message.into(),
        }
    }

    #[test]
    fn messages_follow_rfc_5424_over_the_network_and_syslog_3_locally() {
        let mut format = Format::new(&spec(SyslogTransport::Udp, None));
        format.hostname = "rt1".into();
        format.pid = 42;
        let info = event(LogSeverity::Info, "reconcile done");
        // daemon (3) * 8 + info (6) = 30.
        assert_eq!(
            format.rfc5424(&info),
            "<30>1 2023-11-14T22:13:20.000000Z rt1 routerd 42 - - reconcile done"
        );
        assert_eq!(format.local(&event(LogSeverity::Error, "x")), "<27>routerd[42]: x");
        format.octet_counted = true;
        let framed = String::from_utf8(format.frame(&info, true)).unwrap_or_default();
        let (len, rest) = framed.split_once(' ').unwrap_or_default();
        assert_eq!(len.parse::<usize>().ok(), Some(rest.len()), "{framed}");
        format.octet_counted = false;
        format.line = true;
        let line = String::from_utf8(format.frame(&event(LogSeverity::Info, "a\nb"), false));
        assert_eq!(line.ok().as_deref(), Some("<30>routerd[42]: a b\n"));
    }

    #[tokio::test]
    async fn events_below_the_minimum_are_not_queued_and_a_full_queue_drops() {
        let sinks = LogSinks::default();
        let (queue, mut rx) = mpsc::channel(1);
        let stats = Arc::new(Stats::default());
        let task = tokio::spawn(async {});
        let mut installed = spec(SyslogTransport::Local, None);
        installed.min_level = LogSeverity::Warning;
        if let Ok(mut s) = sinks.sinks.write() {
            s.insert("remote".into(), Installed { spec: installed, queue, stats, task });
        }
        assert!(!sinks.wants(LogSeverity::Info));
        assert!(sinks.wants(LogSeverity::Error));
        sinks.emit(event(LogSeverity::Info, "quiet"));
        sinks.emit(event(LogSeverity::Warning, "first"));
        sinks.emit(event(LogSeverity::Error, "second"));
        assert_eq!(rx.recv().await.map(|e| e.message.clone()).as_deref(), Some("first"));
        let listed = sinks.list();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].delivery.as_ref().map(|d| d.dropped), Some(1));
        assert!(sinks.remove("remote"));
        assert!(!sinks.wants(LogSeverity::Error));
    }
}
