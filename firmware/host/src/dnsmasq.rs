//! dnsmasq backend (`applyWith: dnsmasq`) for `dnsmasq.config`: the sections of routerd's
//! dnsmasq configuration file ([`Target::dnsmasq_conf`]), served by the unit [`UNIT`].
//!
//! The whole file is routerd's: it is made of sections, each owned by one artifact,
//!
//! ```text
//! # routerd section dhcpv4-server/dhcp
//! interface=lan0
//! # routerd end
//! ```
//!
//! and inventory lists those sections. Every change writes the whole file anew (sections in
//! name order) after dnsmasq itself accepted the candidate (`dnsmasq --test`, the daemon's own
//! check; it has no API for this), then restarts the unit. A rejected change leaves the file
//! and the running dnsmasq as they were; so does a section dnsmasq fails to start with (the
//! file is restored). A removal try-restarts dnsmasq, which is done when the unit is gone too
//! (a config without dnsmasq), and stays written when the restart fails. A restart keeps the
//! leases: dnsmasq reads its lease file (`--dhcp-leasefile`, in the same directory) when it
//! starts, and clients renew the leases they hold.
//!
//! [`option`] is the typed form of the lines the engine writes into sections
//! ([`DnsmasqOption`]); a section stores them as text. [`leases`] reads the leases dnsmasq
//! granted (a runtime value of rendering, ADR 0008).

pub mod leases;
pub mod option;

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::artifact::{Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, DnsmasqSectionSpec};
use crate::backend::Backend;
use crate::error::HostError;
use crate::file::{Markers, write_atomically};
use crate::systemd::{Job, Systemd};
use crate::target::Target;

pub use option::{
    Dhcp4OptionName, Dhcp6OptionName, DnsmasqOption, Ipv6RangeMode, MIN_LEASE, RaMtu,
};

/// The `applyWith` name of this backend.
const APPLY_WITH: crate::kinds::ApplyWith = crate::kinds::ApplyWith::Dnsmasq;

/// The unit that runs dnsmasq with routerd's configuration.
pub const UNIT: &str = "routerd-dnsmasq.service";

/// Where Debian and Buildroot install dnsmasq.
pub const BINARY: &str = "/usr/sbin/dnsmasq";

const HEADER: &str = "# routerd's dnsmasq configuration. Every section belongs to a resource of \
router.yaml;\n# routerd rewrites this file on every change: edit router.yaml, not this file.\n";
const MARKERS: Markers = Markers { begin: "# routerd section ", end: "# routerd end" };

/// `dnsmasq.config` sections of one target.
pub struct DnsmasqBackend {
    conf: PathBuf,
    binary: PathBuf,
    systemd: Arc<Systemd>,
    /// One change at a time: each is a read-modify-write of the whole file.
    lock: tokio::sync::Mutex<()>,
}

impl DnsmasqBackend {
    /// Sections of `target`'s configuration file, checked with the dnsmasq at [`BINARY`] and
    /// applied by restarting [`UNIT`] through `systemd`.
    pub fn new(target: &Target, systemd: Arc<Systemd>) -> Self {
        Self {
            conf: target.dnsmasq_conf(),
            binary: PathBuf::from(BINARY),
            systemd,
            lock: tokio::sync::Mutex::new(()),
        }
    }

    fn read(&self) -> Result<BTreeMap<String, Vec<String>>, HostError> {
        match std::fs::read_to_string(&self.conf) {
            Ok(text) => Ok(parse(&text)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(source) => Err(HostError::File { path: self.conf.clone(), source }),
        }
    }

    /// Applies one section change: `Some(lines)` sets the section, `None` removes it.
    async fn change(&self, key: &ArtifactKey, lines: Option<&[String]>) -> Result<(), HostError> {
        let _guard = self.lock.lock().await;
        let mut sections = self.read()?;
        let before = format(&sections);
        match lines {
            Some(l) => sections.insert(key.name.clone(), l.to_vec()),
            None => sections.remove(&key.name),
        };
        let text = format(&sections);
        self.check(key, &text).await?;
        write_atomically(&self.conf, text.as_bytes(), 0o644)?;
        // A removal needs no dnsmasq started for it (the unit may be on its way out too).
        let job = if lines.is_some() { Job::Restart } else { Job::TryRestart };
        let Err(e) = self.systemd.run(key, UNIT, job).await else { return Ok(()) };
        // A removal stays written: a section put back would be an orphan whose removal fails
        // again. (A unit already gone is no failure: `Job::TryRestart`.)
        if lines.is_none() {
            return Err(e);
        }
        // dnsmasq did not start with the change (a socket it cannot bind): the file goes back
        // to what the running dnsmasq had, so the failed change leaves nothing of itself (no
        // section routerd wrote but never recorded), and dnsmasq runs as before.
        write_atomically(&self.conf, before.as_bytes(), 0o644)?;
        match self.systemd.run(key, UNIT, Job::TryRestart).await {
            Ok(()) => Err(e),
            Err(again) => Err(HostError::Service {
                key: key.clone(),
                op: "restart",
                message: format!("{e}; with the previous configuration restored: {again}"),
            }),
        }
    }

    /// `dnsmasq --test` on the candidate text (syntax and option values).
    async fn check(&self, key: &ArtifactKey, text: &str) -> Result<(), HostError> {
        let dir = self.conf.parent().map(PathBuf::from).unwrap_or_default();
        std::fs::create_dir_all(&dir)
            .map_err(|source| HostError::File { path: dir.clone(), source })?;
        let candidate = dir.join(".dnsmasq.conf.candidate");
        write_atomically(&candidate, text.as_bytes(), 0o644)?;
        let out = tokio::process::Command::new(&self.binary)
            .arg("--test")
            .arg(format!("--conf-file={}", candidate.display()))
            .output()
            .await;
        let _ = std::fs::remove_file(&candidate);
        let out = out.map_err(|e| HostError::Service {
            key: key.clone(),
            op: "check configuration",
            message: format!("{}: {e}", self.binary.display()),
        })?;
        if out.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&out.stderr);
        Err(HostError::Invalid {
            key: key.clone(),
            message: format!("dnsmasq rejects the configuration: {}", said.trim()),
        })
    }
}

/// The sections of a configuration file routerd wrote. Lines outside sections (the header,
/// anything added by hand) are not part of any section and are dropped at the next write.
fn parse(text: &str) -> BTreeMap<String, Vec<String>> {
    MARKERS.parse(text).into_iter().collect()
}

fn format(sections: &BTreeMap<String, Vec<String>>) -> String {
    let mut s = String::from(HEADER);
    for (name, lines) in sections {
        MARKERS.push(&mut s, name, lines);
    }
    s
}

fn spec(a: &Artifact) -> Result<&DnsmasqSectionSpec, HostError> {
    match &a.spec {
        ArtifactSpec::DnsmasqSection(d) => {
            // A line break inside a line would smuggle options past the section markers.
            if !d.lines.iter().all(|l| MARKERS.fits(l)) {
                return Err(HostError::Invalid {
                    key: a.key.clone(),
                    message: "a dnsmasq option line contains a line break or a section marker"
                        .into(),
                });
            }
            Ok(d)
        }
        _ => Err(HostError::WrongBackend { key: a.key.clone(), backend: APPLY_WITH }),
    }
}

impl Backend for DnsmasqBackend {
    fn apply_with(&self) -> crate::kinds::ApplyWith {
        APPLY_WITH
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        &[ArtifactKind::DnsmasqConfig]
    }

    fn observe<'a>(
        &'a self,
        _kind: ArtifactKind,
        _wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        Box::pin(async move {
            Ok(self
                .read()?
                .into_iter()
                .map(|(section, lines)| {
                    Artifact::new(ArtifactSpec::DnsmasqSection(DnsmasqSectionSpec {
                        section,
                        lines,
                    }))
                })
                .collect())
        })
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move { self.change(&desired.key, Some(&spec(desired)?.lines)).await })
    }

    fn modify<'a>(
        &'a self,
        _observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move { self.change(&desired.key, Some(&spec(desired)?.lines)).await })
    }

    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            spec(observed)?;
            self.change(&observed.key, None).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_round_trip_in_name_order() {
        let mut s = BTreeMap::new();
        s.insert("dhcpv4-range/pool".to_string(), vec!["dhcp-range=set:pool,a,b,3600".into()]);
        s.insert("dhcpv4-server/dhcp".to_string(), vec!["interface=lan0".into(), String::new()]);
        let text = format(&s);
        assert!(text.starts_with("# routerd's dnsmasq configuration"));
        assert!(
            text.find("dhcpv4-range/pool").unwrap_or(usize::MAX)
                < text.find("dhcpv4-server/dhcp").unwrap_or(0)
        );
        assert_eq!(parse(&text), s);
    }

    #[test]
    fn lines_outside_sections_are_not_listed_and_a_cut_section_is() {
        let text = "port=53\n# routerd section a/b\nx=1\n# routerd end\nstray\n# routerd section c/d\ny=2\n";
        let parsed = parse(text);
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed["a/b"], vec!["x=1".to_string()]);
        assert_eq!(parsed["c/d"], vec!["y=2".to_string()]);
    }

    #[test]
    fn a_line_with_a_line_break_is_refused() {
        let a = Artifact::new(ArtifactSpec::DnsmasqSection(DnsmasqSectionSpec {
            section: "dhcpv4-server/x".into(),
            lines: vec!["interface=lan0\nport=0".into()],
        }));
        assert!(matches!(spec(&a), Err(HostError::Invalid { .. })));
    }
}
