//! Specs of the host-level kinds (`system.routerd.net/v1alpha1`): `LogSink`, `Sysctl`,
//! `NTPClient`, `NixOSHost`; and `Hostname` (`net.routerd.net/v1alpha1`), which configures the
//! same host. Each spec type is followed by its own checks (`Validate`). No I/O.

use serde::{Deserialize, Serialize};

use super::lenient;
use crate::validate::Validate;
use crate::validate::check::{Check, Target};

/// `LogSink`: where routerd sends its own event log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogSinkSpec {
    /// `type` (required): `syslog` or `plugin`; the matching sub-object configures it.
    pub r#type: LogSinkType,
    /// `enabled`: absent means enabled.
    pub enabled: Option<bool>,
    /// `minLevel`: lowest level forwarded; absent means `info`.
    pub min_level: Option<LogLevel>,
    /// `syslog`: settings for `type: syslog`.
    pub syslog: Option<LogSinkSyslogSpec>,
    /// `plugin`: settings for `type: plugin`.
    pub plugin: Option<LogSinkPluginSpec>,
}

impl Validate for LogSinkSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        let plugin_path = self.plugin.as_ref().and_then(|p| p.path.as_ref());
        if self.r#type == LogSinkType::Plugin && plugin_path.is_none() {
            c.error("type", "plugin.path is required when type is plugin");
        }
        if let Some(plugin) = &self.plugin {
            c.duration("plugin.timeout", plugin.timeout.as_ref());
        }
        if let Some(syslog) = &self.syslog {
            let remote = matches!(syslog.network, Some(SyslogNetwork::Tcp | SyslogNetwork::Udp));
            if remote && syslog.address.is_none() {
                c.error(
                    "syslog.network",
                    "syslog.address is required when syslog.network is tcp or udp",
                );
            }
        }
    }
}

/// `LogSink.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogSinkType {
    /// `syslog`: send to a syslog daemon.
    Syslog,
    /// `plugin`: run an external program per event.
    Plugin,
}

/// `LogSink.minLevel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// `debug`.
    Debug,
    /// `info`.
    Info,
    /// `warning`.
    Warning,
    /// `error`.
    Error,
}

/// `LogSink.syslog`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogSinkSyslogSpec {
    /// `network`: transport; absent or `""` means the local syslog socket.
    pub network: Option<SyslogNetwork>,
    /// `address`: `host:port` for `tcp`/`udp`, a socket path for `unix`/`unixgram`.
    pub address: Option<String>,
    /// `facility`: syslog facility; absent means `daemon`.
    pub facility: Option<SyslogFacility>,
    /// `tag`: syslog tag; absent means `routerd`.
    pub tag: Option<String>,
}

/// `LogSink.syslog.network`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyslogNetwork {
    /// `""`: the local syslog socket.
    #[serde(rename = "")]
    Local,
    /// `unix`: a stream unix socket at `address`.
    Unix,
    /// `unixgram`: a datagram unix socket at `address`.
    Unixgram,
    /// `tcp`: TCP to `address`.
    Tcp,
    /// `udp`: UDP to `address`.
    Udp,
}

/// `LogSink.syslog.facility` (RFC 5424 section 6.2.1 names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)] // the variants are the RFC facility names, documented there
pub enum SyslogFacility {
    Kern,
    User,
    Mail,
    Daemon,
    Auth,
    Syslog,
    Lpr,
    News,
    Uucp,
    Cron,
    Authpriv,
    Ftp,
    Local0,
    Local1,
    Local2,
    Local3,
    Local4,
    Local5,
    Local6,
    Local7,
}

/// `LogSink.plugin`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogSinkPluginSpec {
    /// `path`: executable to run; required when `type: plugin`.
    pub path: Option<String>,
    /// `timeout`: Go duration per invocation (`5s`); absent means the engine default.
    pub timeout: Option<String>,
}

/// `Sysctl`: one kernel parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SysctlSpec {
    /// `key` (required): dotted name as `sysctl(8)` prints it, e.g. `net.ipv4.ip_forward`;
    /// no `/`, no empty segments.
    pub key: String,
    /// `value` (required): the value to write. YAML integers and booleans are accepted.
    #[serde(deserialize_with = "lenient::string")]
    pub value: String,
    /// `runtime`: write the running kernel value; absent means `true`.
    pub runtime: Option<bool>,
    /// `persistent`: also write it to the boot-time sysctl config; default `false`.
    #[serde(default)]
    pub persistent: bool,
}

impl Validate for SysctlSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.sysctl_key("key", &self.key);
    }
}

/// `NTPClient`: time synchronisation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NtpClientSpec {
    /// `provider`: the daemon to configure; absent means `systemd-timesyncd`.
    pub provider: Option<NtpProvider>,
    /// `managed`: routerd writes the daemon's config; default `false`.
    #[serde(default)]
    pub managed: bool,
    /// `source`: where servers come from; absent means `static`.
    pub source: Option<NtpSource>,
    /// `interface`: names the interface resource (`Interface`, `PPPoEInterface` or
    /// `DSLiteTunnel`) NTP traffic should use.
    pub interface: Option<String>,
    /// `servers`: NTP server host names or addresses.
    #[serde(default)]
    pub servers: Vec<String>,
}

impl Validate for NtpClientSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.opt_reference("interface", self.interface.as_ref(), Target::Interface)
    }
}

/// `NTPClient.provider`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NtpProvider {
    /// `systemd-timesyncd`.
    #[serde(rename = "systemd-timesyncd")]
    SystemdTimesyncd,
}

/// `NTPClient.source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NtpSource {
    /// `static`: use `servers`.
    Static,
}

/// `NixOSHost`: settings rendered into the NixOS host configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NixOsHostSpec {
    /// `hostname`: `networking.hostName`.
    pub hostname: Option<String>,
    /// `domain`: `networking.domain`.
    pub domain: Option<String>,
    /// `stateVersion`: `system.stateVersion`, e.g. `"24.11"` (quote it).
    pub state_version: Option<String>,
    /// `boot`: boot loader settings.
    pub boot: Option<NixOsBootSpec>,
    /// `users`: login accounts.
    #[serde(default)]
    pub users: Vec<NixOsUserSpec>,
    /// `ssh`: OpenSSH server settings.
    pub ssh: Option<NixOsSshSpec>,
    /// `sudo`: sudo settings.
    pub sudo: Option<NixOsSudoSpec>,
    /// `routerdService`: the routerd systemd service.
    pub routerd_service: Option<NixOsRouterdServiceSpec>,
    /// `debugSystemPackages`: install debugging tools (tcpdump, ...); default `false`.
    #[serde(default)]
    pub debug_system_packages: bool,
    /// `additionalPackages`: extra nixpkgs attribute names.
    #[serde(default)]
    pub additional_packages: Vec<String>,
    /// `additionalServicePath`: extra packages on the routerd service's `PATH`.
    #[serde(default)]
    pub additional_service_path: Vec<String>,
}

impl Validate for NixOsHostSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        if let Some(hostname) = &self.hostname {
            c.hostname("hostname", hostname);
        }
        if let Some(boot) = &self.boot {
            let grub = boot.loader == Some(BootLoader::Grub);
            c.require(
                !grub || boot.grub_device.is_some(),
                "boot.loader",
                "boot.grubDevice is required when boot.loader is grub",
            );
        }
        for (i, user) in self.users.iter().enumerate() {
            c.require(!user.name.is_empty(), &format!("users[{i}].name"), "name must not be empty");
        }
        if let Some(service) = &self.routerd_service {
            c.duration("routerdService.reconcileInterval", service.reconcile_interval.as_ref());
        }
    }
}

/// `NixOSHost.boot`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NixOsBootSpec {
    /// `loader`: absent or `""` leaves the boot loader alone.
    pub loader: Option<BootLoader>,
    /// `grubDevice`: disk GRUB installs to, e.g. `/dev/sda`; used with `loader: grub`.
    pub grub_device: Option<String>,
}

/// `NixOSHost.boot.loader`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BootLoader {
    /// `""`: leave unmanaged.
    #[serde(rename = "")]
    Unmanaged,
    /// `grub`.
    Grub,
}

/// One entry of `NixOSHost.users`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NixOsUserSpec {
    /// `name` (required): login name.
    pub name: String,
    /// `description`: GECOS text.
    pub description: Option<String>,
    /// `groups`: supplementary groups, e.g. `wheel`.
    #[serde(default)]
    pub groups: Vec<String>,
    /// `initialPassword`: password set at account creation only.
    pub initial_password: Option<String>,
    /// `sshAuthorizedKeys`: OpenSSH public key lines.
    #[serde(default)]
    pub ssh_authorized_keys: Vec<String>,
}

/// `NixOSHost.ssh`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NixOsSshSpec {
    /// `enabled`: absent means enabled.
    pub enabled: Option<bool>,
    /// `passwordAuthentication`: absent means the NixOS default.
    pub password_authentication: Option<bool>,
    /// `permitRootLogin`: absent or `""` means the NixOS default.
    pub permit_root_login: Option<PermitRootLogin>,
}

/// `NixOSHost.ssh.permitRootLogin`, as in `sshd_config(5)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermitRootLogin {
    /// `""`: the NixOS default.
    #[serde(rename = "")]
    Default,
    /// `no`.
    No,
    /// `yes`.
    Yes,
    /// `prohibit-password`.
    ProhibitPassword,
    /// `forced-commands-only`.
    ForcedCommandsOnly,
}

/// `NixOSHost.sudo`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NixOsSudoSpec {
    /// `wheelNeedsPassword`: absent means the NixOS default (`true`).
    pub wheel_needs_password: Option<bool>,
}

/// `NixOSHost.routerdService`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NixOsRouterdServiceSpec {
    /// `enabled`: absent means enabled.
    pub enabled: Option<bool>,
    /// `binaryPath`: path of the `routerd` binary.
    pub binary_path: Option<String>,
    /// `configFile`: path of `router.yaml` on the host.
    pub config_file: Option<String>,
    /// `socket`: control socket path.
    pub socket: Option<String>,
    /// `reconcileInterval`: Go duration between periodic reconciles (`1m`).
    pub reconcile_interval: Option<String>,
    /// `extraFlags`: extra command-line flags.
    #[serde(default)]
    pub extra_flags: Vec<String>,
}

/// `Hostname` (`net.routerd.net/v1alpha1`): the host's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostnameSpec {
    /// `hostname` (required): RFC 1123 host name, optionally fully qualified.
    pub hostname: String,
    /// `managed`: routerd sets it; default `false`.
    #[serde(default)]
    pub managed: bool,
}

impl Validate for HostnameSpec {
    fn validate(&self, c: &mut Check<'_, '_>) {
        c.hostname("hostname", &self.hostname);
    }
}
