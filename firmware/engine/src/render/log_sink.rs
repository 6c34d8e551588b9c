//! `LogSink`: a destination for routerd's own events, installed in the supervisor
//! ([`routerd_host::logsink`], applyWith `routerd-log`). Disabled sinks render nothing, so an
//! installed one is removed.

use routerd_host::ArtifactSpec;
use routerd_host::artifact::{
    LogOutput, LogSeverity, LogSinkSpec as SinkArtifact, PluginOutput, SyslogOutput,
    SyslogTransport,
};
use routerd_model::spec::system::{
    LogLevel, LogSinkSpec, LogSinkType, SyslogFacility, SyslogNetwork,
};
use routerd_model::{Resource, parse_duration};

use super::Out;

/// A plugin run's time limit when `plugin.timeout` is absent.
pub const DEFAULT_PLUGIN_TIMEOUT_MS: u64 = 5_000;

pub(super) fn render(res: &Resource, s: &LogSinkSpec, out: &mut Out) {
    if s.enabled == Some(false) {
        out.warn("enabled: false: no event is forwarded to this sink");
        return;
    }
    let output = match s.r#type {
        LogSinkType::Syslog => {
            let syslog = s.syslog.clone().unwrap_or_default();
            let network = match syslog.network.unwrap_or(SyslogNetwork::Local) {
                SyslogNetwork::Local => SyslogTransport::Local,
                SyslogNetwork::Unix => SyslogTransport::Unix,
                SyslogNetwork::Unixgram => SyslogTransport::Unixgram,
                SyslogNetwork::Tcp => SyslogTransport::Tcp,
                SyslogNetwork::Udp => SyslogTransport::Udp,
            };
            LogOutput::Syslog(SyslogOutput {
                network,
                // The local socket is always /dev/log.
                address: syslog.address.filter(|_| network != SyslogTransport::Local),
                facility: facility_code(syslog.facility.unwrap_or(SyslogFacility::Daemon)),
                tag: syslog.tag.unwrap_or_else(|| "routerd".to_string()),
            })
        }
        LogSinkType::Plugin => {
            let plugin = s.plugin.clone().unwrap_or_default();
            let timeout_ms = plugin
                .timeout
                .as_deref()
                .and_then(|t| parse_duration(t).ok())
                .filter(|d| !d.is_zero())
                .map_or(DEFAULT_PLUGIN_TIMEOUT_MS, |d| {
                    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
                });
            LogOutput::Plugin(PluginOutput { path: plugin.path.unwrap_or_default(), timeout_ms })
        }
    };
    let min_level = match s.min_level.unwrap_or(LogLevel::Info) {
        LogLevel::Debug => LogSeverity::Debug,
        LogLevel::Info => LogSeverity::Info,
        LogLevel::Warning => LogSeverity::Warning,
        LogLevel::Error => LogSeverity::Error,
    };
    let spec = SinkArtifact { name: res.name.clone(), min_level, output, delivery: None };
    out.ensure(ArtifactSpec::LogSink(spec), Vec::new());
}

/// The RFC 5424 section 6.2.1 facility code.
fn facility_code(f: SyslogFacility) -> u8 {
    use SyslogFacility as F;
    match f {
        F::Kern => 0,
        F::User => 1,
        F::Mail => 2,
        F::Daemon => 3,
        F::Auth => 4,
        F::Syslog => 5,
        F::Lpr => 6,
        F::News => 7,
        F::Uucp => 8,
        F::Cron => 9,
        F::Authpriv => 10,
        F::Ftp => 11,
        F::Local0 => 16,
        F::Local1 => 17,
        F::Local2 => 18,
        F::Local3 => 19,
        F::Local4 => 20,
        F::Local5 => 21,
        F::Local6 => 22,
        F::Local7 => 23,
    }
}

impl super::Render for routerd_model::spec::all::LogSinkSpec {
    fn render(
        &self,
        _: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(res, self, out);
    }
}
