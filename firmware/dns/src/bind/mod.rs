//! The `bind` family's backend (design brief `dns-bind9.md` §1–2): routerd's files of the BIND
//! 9 servers it runs, checked by BIND before they are written and loaded with `rndc reconfig`.
//!
//! | artifact | file (below the target's root) | mode |
//! |---|---|---|
//! | `bind.config` `key/<key>` | `KEY_DIR/<key>.key`: a `key` clause ([`key`]) | 0600 |
//! | `bind.config` `<server>/options` | `CONF_DIR/<server>/named.conf` ([`server`]) | 0644 |
//! | `bind.zone` `<server>/<zone>.` | a section of `CONF_DIR/<server>/zones.conf` | 0644 |
//!
//! Besides, per server and never an artifact: `CONF_DIR/<server>/rndc.key` (made once, mode
//! 0600, the key of its control channel), and `DATA_DIR/<server>/`, named's directory of zone
//! files and journals. A zone file is written once, from the zone's seed, when its clause is
//! added and no file exists; **zone files and `.jnl` journals are never deleted or
//! overwritten**, and `rndc delzone` is never called: removing a zone removes its section, so
//! named stops serving it at the next reconfig and a later re-add resumes from the files.
//!
//! Every change is checked first: `named-checkconf` on the candidate `named.conf`, on the
//! `named.conf` of each server that includes a changed `zones.conf` or key file, and
//! `named-checkzone` on a new zone's file. A rejected change leaves the previous file, and so
//! does a change the running named refuses at `rndc reconfig`. A server whose control channel
//! does not answer (named not started yet: its unit depends on its options) is not reloaded:
//! it reads the files when it starts.
//!
//! A key file that a server's `named.conf` still includes is not deleted (design brief §1,
//! "never deleted": key sections that are still referenced); the delete fails until the
//! server's options no longer include it. A server's removal removes its `named.conf` only.
//!
//! The backend lists only its own files: `*.key` in `KEY_DIR`, each server's `named.conf` and
//! the sections of its `zones.conf`. Zones declared elsewhere (an operator's include) are not
//! routerd's and never listed.

mod check;
pub mod control;
pub mod key;
pub mod server;
mod zones;

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use futures::future::BoxFuture;
use hickory_proto::rr::Name;
use routerd_host::file::write_atomically;
use routerd_host::kinds::external::ExternalArtifactSpec;
use routerd_host::secret::Secret;
use routerd_host::{
    ApplyWith, Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, Backend, HostError, Netns, Target,
};

use crate::artifacts::{
    BIND_CONFIG, BIND_ZONE, BindConfig, BindZone, CONF_DIR, DATA_DIR, KEY_DIR, KeySecret,
    SecondarySerial, zone_file_name,
};
use check::{CheckError, Checker};
use key::{SecretSource, is_base64, is_plain_name, parse_key_file, render_key_file};

pub use check::{NAMED_CHECKCONF, NAMED_CHECKZONE};
pub use control::{RNDC_TIMEOUT, Rndc, RndcChannel, RndcError};
pub use key::KeyClause;
pub use server::{
    CONTROL_PREFIX, RNDC_KEY_NAME, SECONDARY_PREFIX, control_address, control_line,
    secondary_addresses,
};

/// How long the backend waits for a secondary's SOA answer.
pub const SECONDARY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// Where routerd's BIND files of one target are ([`KEY_DIR`], [`CONF_DIR`], [`DATA_DIR`]
/// below its root). Key and server names are plain names ([`key::is_plain_name`]); the backend
/// refuses others before it builds a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindLayout {
    keys: PathBuf,
    conf: PathBuf,
    data: PathBuf,
}

impl BindLayout {
    /// The layout below `target`'s root.
    pub fn new(target: &Target) -> Self {
        Self {
            keys: target.path(KEY_DIR),
            conf: target.path(CONF_DIR),
            data: target.path(DATA_DIR),
        }
    }

    /// The directory of the key files.
    pub fn key_dir(&self) -> &Path {
        &self.keys
    }

    /// `KEY_DIR/<key>.key`.
    pub fn key_file(&self, key: &str) -> PathBuf {
        self.keys.join(format!("{key}.key"))
    }

    /// `CONF_DIR/<server>/`.
    pub fn server_dir(&self, server: &str) -> PathBuf {
        self.conf.join(server)
    }

    /// `CONF_DIR/<server>/named.conf`, what `named -c` reads.
    pub fn named_conf(&self, server: &str) -> PathBuf {
        self.server_dir(server).join("named.conf")
    }

    /// `CONF_DIR/<server>/zones.conf`, to be included by the server's `named.conf`.
    pub fn zones_conf(&self, server: &str) -> PathBuf {
        self.server_dir(server).join("zones.conf")
    }

    /// `CONF_DIR/<server>/rndc.key`, the control channel's key ([`RNDC_KEY_NAME`]), to be
    /// included by the server's `named.conf`.
    pub fn rndc_key(&self, server: &str) -> PathBuf {
        self.server_dir(server).join("rndc.key")
    }

    /// `DATA_DIR/<server>/`, the server's `directory`: zone files and journals.
    pub fn data_dir(&self, server: &str) -> PathBuf {
        self.data.join(server)
    }

    /// `DATA_DIR/<server>/<zone_file_name>`: the file a zone clause names.
    pub fn zone_file(&self, server: &str, zone: &Name) -> PathBuf {
        self.data_dir(server).join(zone_file_name(zone))
    }
}

/// The `bind` family: `bind.config` and `bind.zone` artifacts of one target (one root, one
/// network namespace, where its named instances listen on their control channels).
pub struct BindBackend {
    target: Target,
    netns: Netns,
    layout: BindLayout,
    checker: Checker,
    /// One change at a time: each is a read-check-write of files several servers share.
    lock: tokio::sync::Mutex<()>,
}

/// What a `bind.config` or `bind.zone` artifact name designates.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Object {
    /// `key/<key>`.
    Key(String),
    /// `<server>/options`.
    Server(String),
    /// `<server>/<zone>.`: the zone absolute and lowercase.
    Zone { server: String, zone: Name, apex: String },
}

/// A file as it was before a change, to put back when the change is refused.
struct Undo {
    path: PathBuf,
    before: Option<String>,
    mode: u32,
}

impl Undo {
    fn read(path: PathBuf, mode: u32) -> Result<Self, HostError> {
        Ok(Self { before: read_optional(&path)?, path, mode })
    }

    fn restore(&self) -> Result<(), HostError> {
        match &self.before {
            Some(text) => write_atomically(&self.path, text.as_bytes(), self.mode),
            None => remove_optional(&self.path),
        }
    }
}

impl BindBackend {
    /// The backend of `target`'s files ([`BindLayout`]), talking rndc inside `netns`, checking
    /// with [`NAMED_CHECKCONF`] and [`NAMED_CHECKZONE`].
    pub fn new(target: &Target, netns: &Netns) -> Self {
        Self {
            target: target.clone(),
            netns: netns.clone(),
            layout: BindLayout::new(target),
            checker: Checker::default(),
            lock: tokio::sync::Mutex::new(()),
        }
    }

    /// Where the files are.
    pub fn layout(&self) -> &BindLayout {
        &self.layout
    }

    /// The control channel of `server`: the address on its `named.conf`'s first line and the
    /// key in its `rndc.key`.
    ///
    /// Errors: [`HostError::File`] when either file cannot be read; [`HostError::Dump`] when
    /// the line or the key does not parse.
    pub fn rndc(&self, server: &str) -> Result<RndcChannel, HostError> {
        let conf = self.layout.named_conf(server);
        let text = std::fs::read_to_string(&conf)
            .map_err(|source| HostError::File { path: conf.clone(), source })?;
        let address = control_address(&text).ok_or_else(|| HostError::Dump {
            what: format!("server {server}'s control channel"),
            message: format!("{} does not start with {CONTROL_PREFIX:?}", conf.display()),
        })?;
        self.channel(server, address.into())
    }

    fn channel(&self, server: &str, address: SocketAddr) -> Result<RndcChannel, HostError> {
        let path = self.layout.rndc_key(server);
        let text = std::fs::read_to_string(&path)
            .map_err(|source| HostError::File { path: path.clone(), source })?;
        let key = KeyClause::parse(&text).ok_or_else(|| HostError::Dump {
            what: format!("server {server}'s rndc key"),
            message: format!("{} holds no usable key clause", path.display()),
        })?;
        Ok(RndcChannel::new(self.netns.clone(), address, key))
    }

    // ---- keys ----

    async fn write_key(
        &self,
        akey: &ArtifactKey,
        name: &str,
        attrs: &BindConfig,
    ) -> Result<(), HostError> {
        let BindConfig::Key { algorithm, secret } = attrs else {
            return Err(invalid(akey, "key/<key> needs key attributes, not a server's text"));
        };
        let path = self.layout.key_file(name);
        let (source, secret) = self.resolve_secret(akey, &path, secret)?;
        let clause =
            KeyClause::new(name, *algorithm, &secret).map_err(|e| invalid(akey, &e.to_string()))?;
        let undo = Undo::read(path.clone(), 0o600)?;
        write_atomically(&path, render_key_file(&source, &clause).as_bytes(), 0o600)?;
        let servers = self.servers_including(&path)?;
        self.settle(akey, &servers, &undo).await
    }

    /// The source line and base64 secret a key file gets.
    ///
    /// Errors: [`HostError::Invalid`] for an inline secret without its value (read back from a
    /// document), a relative secret file path or one that does not hold base64;
    /// [`HostError::File`] when the secret file or the existing key file cannot be read.
    fn resolve_secret(
        &self,
        akey: &ArtifactKey,
        path: &Path,
        secret: &KeySecret,
    ) -> Result<(SecretSource, String), HostError> {
        match secret {
            KeySecret::Inline(s) => {
                let Some(value) = s.expose() else {
                    let message = "the secret was read back from a document and has no value; \
                                   a key file needs the secret itself";
                    return Err(invalid(akey, message));
                };
                Ok((SecretSource::Inline, value.trim().to_owned()))
            }
            KeySecret::File(p) => {
                if !p.starts_with('/') || p.contains(['\n', '\r']) {
                    let message = format!("secret file {p:?} is not an absolute path");
                    return Err(invalid(akey, &message));
                }
                let file = self.target.path(p);
                let text = std::fs::read_to_string(&file)
                    .map_err(|source| HostError::File { path: file.clone(), source })?;
                let value = text.trim().to_owned();
                if !is_base64(&value) {
                    return Err(invalid(akey, &format!("secret file {p} does not hold base64")));
                }
                Ok((SecretSource::File(p.clone()), value))
            }
            KeySecret::Generated => {
                let kept = read_optional(path)?.and_then(|t| parse_key_file(&t));
                let value = match kept {
                    Some((_, clause)) => clause.secret_base64().to_owned(),
                    None => random_secret().map_err(|e| invalid(akey, &e.to_string()))?,
                };
                Ok((SecretSource::Generated, value))
            }
        }
    }

    async fn delete_key(&self, akey: &ArtifactKey, name: &str) -> Result<(), HostError> {
        let path = self.layout.key_file(name);
        let servers = self.servers_including(&path)?;
        if let Some(server) = servers.first() {
            return Err(HostError::Service {
                key: akey.clone(),
                op: "delete",
                message: format!(
                    "server {server}'s named.conf still includes {}: a key still referenced is \
                     kept until the server's options no longer include it",
                    path.display()
                ),
            });
        }
        remove_optional(&path)
    }

    /// The observed form of each parseable `KEY_DIR/*.key`. A file that does not parse (edited
    /// by hand) is not listed, so a declared key is written anew over it.
    fn list_keys(&self) -> Result<Vec<Artifact>, HostError> {
        let mut out = Vec::new();
        for (file, text) in read_dir_files(self.layout.key_dir(), |f| {
            f.strip_suffix(".key").filter(|k| is_plain_name(k)).map(str::to_owned)
        })? {
            let Some((source, clause)) = parse_key_file(&text) else { continue };
            if clause.name() != file {
                continue;
            }
            let secret = self.observed_secret(&source, &clause);
            let attrs = BindConfig::Key { algorithm: clause.algorithm(), secret };
            out.push(external(&BIND_CONFIG, format!("key/{file}"), &attrs)?);
        }
        Ok(out)
    }

    fn observed_secret(&self, source: &SecretSource, clause: &KeyClause) -> KeySecret {
        let value = clause.secret_base64();
        match source {
            SecretSource::Generated => KeySecret::Generated,
            SecretSource::File(p) => {
                let now = std::fs::read_to_string(self.target.path(p)).ok();
                if now.as_deref().map(str::trim) == Some(value) {
                    KeySecret::File(p.clone())
                } else {
                    KeySecret::Inline(Secret::new(value))
                }
            }
            SecretSource::Inline => KeySecret::Inline(Secret::new(value)),
        }
    }

    // ---- servers ----

    async fn write_server(
        &self,
        akey: &ArtifactKey,
        server: &str,
        attrs: &BindConfig,
    ) -> Result<(), HostError> {
        let BindConfig::Server { text } = attrs else {
            return Err(invalid(
                akey,
                "<server>/options needs a server's text, not key attributes",
            ));
        };
        let Some(address) = control_address(text) else {
            let message = format!("named.conf must start with \"{CONTROL_PREFIX}<ipv4> <port>\"");
            return Err(invalid(akey, &message));
        };
        self.prepare_server(akey, server)?;
        let conf = self.layout.named_conf(server);
        let candidate = self.layout.server_dir(server).join(".named.conf.candidate");
        write_atomically(&candidate, text.as_bytes(), 0o644)?;
        let checked = self.checker.conf(&candidate).await;
        remove_optional(&candidate)?;
        checked.map_err(|e| check_error(akey, server, "named-checkconf", e))?;
        let undo = Undo::read(conf.clone(), 0o644)?;
        // A running named listens where the file it runs with says.
        let running = undo.before.as_deref().and_then(control_address).unwrap_or(address);
        write_atomically(&conf, text.as_bytes(), 0o644)?;
        self.reconfig_or_undo(akey, server, running.into(), &undo).await
    }

    /// The server's directories, an empty `zones.conf` and its `rndc.key`, each made once.
    fn prepare_server(&self, akey: &ArtifactKey, server: &str) -> Result<(), HostError> {
        for dir in [self.layout.data_dir(server), self.layout.server_dir(server)] {
            std::fs::create_dir_all(&dir)
                .map_err(|source| HostError::File { path: dir, source })?;
        }
        let zones = self.layout.zones_conf(server);
        if !zones.exists() {
            write_atomically(&zones, zones::format(&BTreeMap::new()).as_bytes(), 0o644)?;
        }
        let rndc_key = self.layout.rndc_key(server);
        if read_optional(&rndc_key)?.and_then(|t| KeyClause::parse(&t)).is_none() {
            let clause = KeyClause::generate(RNDC_KEY_NAME, Default::default())
                .map_err(|e| invalid(akey, &e.to_string()))?;
            write_atomically(&rndc_key, clause.render().as_bytes(), 0o600)?;
        }
        Ok(())
    }

    /// Each `CONF_DIR/<server>/named.conf`, by server.
    fn server_confs(&self) -> Result<Vec<(String, String)>, HostError> {
        let dir = &self.layout.conf;
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(HostError::File { path: dir.clone(), source }),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|source| HostError::File { path: dir.clone(), source })?;
            let Some(server) =
                entry.file_name().to_str().filter(|s| is_plain_name(s)).map(str::to_owned)
            else {
                continue;
            };
            if let Some(text) = read_optional(&self.layout.named_conf(&server))? {
                out.push((server, text));
            }
        }
        out.sort();
        Ok(out)
    }

    /// The servers whose `named.conf` includes `file` (named by its path, quoted).
    fn servers_including(&self, file: &Path) -> Result<Vec<String>, HostError> {
        let quoted = format!("\"{}\"", file.display());
        Ok(self
            .server_confs()?
            .into_iter()
            .filter(|(_, text)| text.contains(&quoted))
            .map(|(server, _)| server)
            .collect())
    }

    // ---- zones ----

    async fn write_zone(
        &self,
        akey: &ArtifactKey,
        server: &str,
        zone: &Name,
        apex: &str,
        attrs: &BindZone,
    ) -> Result<(), HostError> {
        let Some(lines) = zones::clause_lines(&attrs.clause) else {
            let message = "a zone clause must end with one line break and hold no section marker \
                           or carriage return";
            return Err(invalid(akey, message));
        };
        let conf = self.require_server(akey, server)?;
        let path = self.layout.zones_conf(server);
        let undo = Undo::read(path.clone(), 0o644)?;
        let mut sections = zones::parse(undo.before.as_deref().unwrap_or_default());
        let is_new = !sections.contains_key(apex);
        let seed = self.check_zone_file(akey, server, zone, &attrs.seed, is_new).await?;
        sections.insert(apex.to_owned(), lines);
        write_atomically(&path, zones::format(&sections).as_bytes(), 0o644)?;
        if let Err(e) = self.checker.conf(&self.layout.named_conf(server)).await {
            undo.restore()?;
            if let Some((candidate, _)) = &seed {
                remove_optional(candidate)?;
            }
            return Err(check_error(akey, server, "named-checkconf", e));
        }
        if let Some((candidate, file)) = seed {
            std::fs::rename(&candidate, &file)
                .map_err(|source| HostError::File { path: file, source })?;
        }
        let Some(address) = control_address(&conf) else { return Ok(()) };
        self.reconfig_or_undo(akey, server, address.into(), &undo).await
    }

    /// Checks the zone file of a zone being added: an existing one with `named-checkzone`; for
    /// a missing one, `seed` is checked as a candidate beside it and returned as
    /// `(candidate, file)` to move in place once the configuration passed. An existing file is
    /// never overwritten.
    async fn check_zone_file(
        &self,
        akey: &ArtifactKey,
        server: &str,
        zone: &Name,
        seed: &str,
        is_new: bool,
    ) -> Result<Option<(PathBuf, PathBuf)>, HostError> {
        let file = self.layout.zone_file(server, zone);
        let origin = zone.to_ascii();
        if file.exists() {
            if is_new {
                let checked = self.checker.zone(&origin, &file).await;
                checked.map_err(|e| check_error(akey, server, "named-checkzone", e))?;
            }
            return Ok(None);
        }
        if seed.is_empty() {
            let message = format!("{} does not exist and the zone has no seed", file.display());
            return Err(invalid(akey, &message));
        }
        let candidate =
            self.layout.data_dir(server).join(format!(".{}.seed", zone_file_name(zone)));
        write_atomically(&candidate, seed.as_bytes(), 0o644)?;
        if let Err(e) = self.checker.zone(&origin, &candidate).await {
            remove_optional(&candidate)?;
            return Err(check_error(akey, server, "named-checkzone", e));
        }
        Ok(Some((candidate, file)))
    }

    async fn delete_zone(
        &self,
        akey: &ArtifactKey,
        server: &str,
        apex: &str,
    ) -> Result<(), HostError> {
        let path = self.layout.zones_conf(server);
        let undo = Undo::read(path.clone(), 0o644)?;
        let mut sections = zones::parse(undo.before.as_deref().unwrap_or_default());
        if sections.remove(apex).is_none() {
            return Ok(());
        }
        write_atomically(&path, zones::format(&sections).as_bytes(), 0o644)?;
        self.settle(akey, &[server.to_owned()], &undo).await
    }

    /// The server's `named.conf` text, which must exist before its zones.
    fn require_server(&self, akey: &ArtifactKey, server: &str) -> Result<String, HostError> {
        read_optional(&self.layout.named_conf(server))?.ok_or_else(|| HostError::Missing {
            key: akey.clone(),
            what: format!("server {server}'s named.conf"),
        })
    }

    /// The zone clauses of every server's `zones.conf`, each with whether named has it
    /// loaded and its serial (`rndc zonestatus`, one control-channel request per zone, asked
    /// of servers whose channel answers).
    async fn list_zones(&self) -> Result<Vec<Artifact>, HostError> {
        let mut out = Vec::new();
        for (server, conf) in self.server_confs()? {
            let Some(text) = read_optional(&self.layout.zones_conf(&server))? else { continue };
            let zones = zones::parse(&text);
            let apexes: Vec<String> = zones.keys().cloned().collect();
            let status = match control_address(&conf).map(|a| self.channel(&server, a.into())) {
                Some(Ok(channel)) => zone_status(channel, apexes).await,
                _ => Vec::new(),
            };
            let secondaries = secondary_addresses(&conf);
            for (i, (apex, lines)) in zones.iter().enumerate() {
                let (loaded, serial) = status.get(i).copied().unwrap_or((None, None));
                let clause = zones::clause_text(lines);
                let secondaries = match (loaded, Name::from_ascii(apex)) {
                    (Some(true), Ok(zone)) => self.secondary_serials(&secondaries, &zone).await,
                    _ => Vec::new(),
                };
                let attrs = BindZone { clause, seed: String::new(), loaded, serial, secondaries };
                out.push(external(&BIND_ZONE, format!("{server}/{apex}"), &attrs)?);
            }
        }
        Ok(out)
    }

    /// The serial of `zone` on each of `secondaries` (an unsigned SOA query each, bounded by
    /// [`SECONDARY_TIMEOUT`]).
    async fn secondary_serials(
        &self,
        secondaries: &[SocketAddr],
        zone: &Name,
    ) -> Vec<SecondarySerial> {
        let mut out = Vec::with_capacity(secondaries.len());
        for address in secondaries {
            let ep = crate::wire::Endpoint { address: *address, key: None };
            let serial =
                crate::wire::soa_serial(&self.netns, &ep, zone, SECONDARY_TIMEOUT).await.ok();
            out.push(SecondarySerial {
                address: format!("{}#{}", address.ip(), address.port()),
                serial,
            });
        }
        out
    }

    // ---- checks and reloads ----

    /// After a file changed (`undo` holds its previous text): `named-checkconf` on the
    /// `named.conf` of each of `servers` that has one, then `rndc reconfig` on each that runs.
    /// The first failure puts the file back and is returned.
    async fn settle(
        &self,
        akey: &ArtifactKey,
        servers: &[String],
        undo: &Undo,
    ) -> Result<(), HostError> {
        let mut running = Vec::new();
        for server in servers {
            let conf = self.layout.named_conf(server);
            let Some(text) = read_optional(&conf)? else { continue };
            if let Err(e) = self.checker.conf(&conf).await {
                undo.restore()?;
                return Err(check_error(akey, server, "named-checkconf", e));
            }
            running.extend(control_address(&text).map(|a| (server, a)));
        }
        for (server, address) in running {
            self.reconfig_or_undo(akey, server, address.into(), undo).await?;
        }
        Ok(())
    }

    /// `rndc reconfig` on `server` if its control channel answers; a refusal puts `undo`'s file
    /// back (named kept running with the previous configuration).
    async fn reconfig_or_undo(
        &self,
        akey: &ArtifactKey,
        server: &str,
        address: SocketAddr,
        undo: &Undo,
    ) -> Result<(), HostError> {
        let channel = self.channel(server, address)?;
        let outcome = tokio::task::spawn_blocking(move || channel.reconfig()).await;
        let message = match outcome {
            Ok(Ok(())) | Ok(Err(RndcError::Unreachable { .. })) => return Ok(()),
            Ok(Err(e)) => e.to_string(),
            Err(e) => format!("rndc task: {e}"),
        };
        undo.restore()?;
        Err(HostError::Service {
            key: akey.clone(),
            op: "rndc reconfig",
            message: format!("server {server}: {message}; the previous file is back"),
        })
    }

    // ---- routing ----

    fn object<'a>(&self, a: &'a Artifact) -> Result<(Object, &'a ExternalArtifactSpec), HostError> {
        let ArtifactSpec::External(spec) = &a.spec else {
            return Err(HostError::WrongBackend { key: a.key.clone(), backend: self.apply_with() });
        };
        let object = if Some(spec.kind) == BIND_CONFIG.id() {
            config_object(&spec.name)
        } else if Some(spec.kind) == BIND_ZONE.id() {
            zone_object(&spec.name)
        } else {
            return Err(HostError::WrongBackend { key: a.key.clone(), backend: self.apply_with() });
        };
        Ok((object.map_err(|m| invalid(&a.key, &m))?, spec))
    }

    async fn write(&self, a: &Artifact) -> Result<(), HostError> {
        let (object, spec) = self.object(a)?;
        let _guard = self.lock.lock().await;
        match &object {
            Object::Key(name) => {
                let mut attrs: BindConfig = attributes(a, spec)?;
                // An inline secret's value travels beside the attributes, which hold its
                // digest only (`ExternalArtifactSpec::with_secret`).
                if let (BindConfig::Key { secret: KeySecret::Inline(digest), .. }, Some(carried)) =
                    (&mut attrs, &spec.secret)
                    && carried == digest
                {
                    *digest = carried.clone();
                }
                self.write_key(&a.key, name, &attrs).await
            }
            Object::Server(server) => {
                self.write_server(&a.key, server, &attributes(a, spec)?).await
            }
            Object::Zone { server, zone, apex } => {
                self.write_zone(&a.key, server, zone, apex, &attributes(a, spec)?).await
            }
        }
    }

    async fn remove(&self, a: &Artifact) -> Result<(), HostError> {
        let (object, _) = self.object(a)?;
        let _guard = self.lock.lock().await;
        match &object {
            Object::Key(name) => self.delete_key(&a.key, name).await,
            // Only the file: zones.conf, rndc.key and the data directory stay.
            Object::Server(server) => remove_optional(&self.layout.named_conf(server)),
            Object::Zone { server, apex, .. } => self.delete_zone(&a.key, server, apex).await,
        }
    }
}

impl Backend for BindBackend {
    fn apply_with(&self) -> ApplyWith {
        BIND_CONFIG.family()
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        bind_kinds()
    }

    fn observe<'a>(
        &'a self,
        kind: ArtifactKind,
        _wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        Box::pin(async move {
            if Some(kind) == BIND_CONFIG.artifact_kind() {
                let mut out = self.list_keys()?;
                for (server, text) in self.server_confs()? {
                    let attrs = BindConfig::Server { text };
                    out.push(external(&BIND_CONFIG, format!("{server}/options"), &attrs)?);
                }
                Ok(out)
            } else if Some(kind) == BIND_ZONE.artifact_kind() {
                self.list_zones().await
            } else {
                Ok(Vec::new())
            }
        })
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(self.write(desired))
    }

    fn modify<'a>(
        &'a self,
        _observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(self.write(desired))
    }

    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(self.remove(observed))
    }
}

/// `bind.config` and `bind.zone`, once both are registered; empty before.
fn bind_kinds() -> &'static [ArtifactKind] {
    static KINDS: OnceLock<[ArtifactKind; 2]> = OnceLock::new();
    if let Some(kinds) = KINDS.get() {
        return kinds;
    }
    match (BIND_CONFIG.artifact_kind(), BIND_ZONE.artifact_kind()) {
        (Some(config), Some(zone)) => KINDS.get_or_init(|| [config, zone]),
        _ => &[],
    }
}

/// `key/<key>` or `<server>/options`.
fn config_object(name: &str) -> Result<Object, String> {
    if let Some(key) = name.strip_prefix("key/") {
        return if is_plain_name(key) {
            Ok(Object::Key(key.to_owned()))
        } else {
            Err(format!("key name {key:?} is not a plain name (letters, digits, '-', '_', '.')"))
        };
    }
    match name.strip_suffix("/options") {
        Some(server) if is_plain_name(server) && server != "key" => {
            Ok(Object::Server(server.to_owned()))
        }
        _ => Err(format!("{name:?} is neither key/<key> nor <server>/options")),
    }
}

/// `<server>/<zone>.`, the zone absolute and lowercase.
fn zone_object(name: &str) -> Result<Object, String> {
    let (server, apex) =
        name.split_once('/').ok_or_else(|| format!("{name:?} is not <server>/<zone>."))?;
    if !is_plain_name(server) {
        return Err(format!("server name {server:?} is not a plain name"));
    }
    let zone = Name::from_ascii(apex).map_err(|e| format!("zone {apex:?}: {e}"))?;
    if !zone.is_fqdn() || zone.is_root() || zone.to_lowercase().to_ascii() != apex {
        return Err(format!("zone {apex:?} must be absolute, lowercase and not the root"));
    }
    Ok(Object::Zone { server: server.to_owned(), zone, apex: apex.to_owned() })
}

fn attributes<T: routerd_host::kinds::external::ExternalArtifactType>(
    a: &Artifact,
    spec: &ExternalArtifactSpec,
) -> Result<T, HostError> {
    spec.attributes().map_err(|e| invalid(&a.key, &e.to_string()))
}

fn external<T: routerd_host::kinds::external::ExternalArtifactType>(
    kind: &'static routerd_host::kinds::external::ExternalArtifactKind,
    name: String,
    attrs: &T,
) -> Result<Artifact, HostError> {
    let spec = ExternalArtifactSpec::new(kind, name, attrs)
        .map_err(|e| HostError::Dump { what: kind.as_str().to_owned(), message: e.to_string() })?;
    Ok(Artifact::new(ArtifactSpec::External(spec)))
}

/// [`key::GENERATED_SECRET_BYTES`] random bytes, base64.
fn random_secret() -> Result<String, key::KeyError> {
    KeyClause::generate(RNDC_KEY_NAME, Default::default()).map(|c| c.secret_base64().to_owned())
}

fn invalid(key: &ArtifactKey, message: &str) -> HostError {
    HostError::Invalid { key: key.clone(), message: message.to_owned() }
}

fn check_error(key: &ArtifactKey, server: &str, program: &str, e: CheckError) -> HostError {
    match e {
        CheckError::Rejected(said) => HostError::Invalid {
            key: key.clone(),
            message: format!("server {server}: {program} rejects the change: {said}"),
        },
        CheckError::NotRun(message) => HostError::Service {
            key: key.clone(),
            op: "check configuration",
            message: format!("server {server}: {message}"),
        },
    }
}

fn read_optional(path: &Path) -> Result<Option<String>, HostError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(source) => Err(HostError::File { path: path.to_path_buf(), source }),
    }
}

fn remove_optional(path: &Path) -> Result<(), HostError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != ErrorKind::NotFound => {
            Err(HostError::File { path: path.to_path_buf(), source: e })
        }
        _ => Ok(()),
    }
}

/// The regular files of `dir` that `select` names (from the file name), with their text,
/// sorted; none when `dir` does not exist.
fn read_dir_files(
    dir: &Path,
    select: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, HostError> {
    let err = |source| HostError::File { path: dir.to_path_buf(), source };
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(err(e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(err)?;
        let Some(name) = entry.file_name().to_str().and_then(&select) else { continue };
        if !entry.file_type().map_err(err)?.is_file() {
            continue;
        }
        if let Some(text) = read_optional(&entry.path())? {
            out.push((name, text));
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

/// `(loaded, serial)` of each of `zones` as `channel`'s named reports them; all `(None, None)`
/// once the channel does not answer (named stopped), so a stopped server costs one timeout.
async fn zone_status(channel: RndcChannel, zones: Vec<String>) -> Vec<(Option<bool>, Option<u32>)> {
    let asked = tokio::task::spawn_blocking(move || {
        let mut out = Vec::with_capacity(zones.len());
        for zone in &zones {
            let Ok(zone) = Name::from_ascii(zone) else {
                out.push((None, None));
                continue;
            };
            match channel.zonestatus(&zone) {
                Ok(text) => out.push((Some(true), serial_of(&text))),
                Err(RndcError::Unreachable { .. }) => break,
                Err(_) => out.push((Some(false), None)),
            }
        }
        out
    });
    asked.await.unwrap_or_default()
}

/// The `serial:` line of `rndc zonestatus`'s text.
fn serial_of(text: &str) -> Option<u32> {
    text.lines().find_map(|l| l.trim().strip_prefix("serial:")).and_then(|s| s.trim().parse().ok())
}
