//! `DNSServer` (a BIND 9 instance the router runs, `routerd-named-<name>.service`) and
//! `DNSExternalServer` (a remote primary routerd updates over RFC 2136).
//!
//! A server renders its `named.conf` (`bind.config <name>/options`), its unit, and its block
//! of the endpoint file that tells the `dns` family where to send UPDATEs. Its zones are the
//! `DNSZone`s naming it ([`super::zone`]).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use ipnet::IpNet;
use routerd_engine::intent::IntentDep;
use routerd_engine::registry::KindRender;
use routerd_engine::render::{Out, RenderCtx};
use routerd_host::artifact::{FileBlockSpec, UnitSpec};
use routerd_host::kinds::external::ExternalArtifactSpec;
use routerd_host::{ArtifactKey, ArtifactSpec, Target};
use routerd_model::external::{ExternalCheck, ExternalKind, ExternalKindSpec};
use routerd_model::spec::net::Ipv4StaticAddressSpec;
use routerd_model::{Config, Resource, ResourceKind};
use serde::Deserialize;

use super::index::DnsIndex;
use super::key::key_artifact_name;
use crate::API_VERSION;
use crate::artifacts::{BIND_CONFIG, BindConfig, CONF_DIR, DATA_DIR, ENDPOINTS_FILE, KEY_DIR};

/// Where Debian and Buildroot install named.
pub const NAMED: &str = "/usr/sbin/named";
/// The default listen socket: loopback, beside dnsmasq's port 53 (design brief §1).
pub const DEFAULT_PORT: u16 = 5300;
/// The rndc key's name in each server's `rndc.key`.
pub const RNDC_KEY: &str = "routerd-rndc";

/// `role` of a `DNSServer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Role {
    /// Holds its zones' data; routerd updates it.
    #[default]
    Primary,
    /// Transfers zones from `primaries`, found through catalog zones (RFC 9432).
    Secondary,
}

/// One `listen` socket of a `DNSServer`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Listen {
    /// An address of the router.
    #[serde(default)]
    pub address: Option<IpAddr>,
    /// An interface resource: its static IPv4 addresses.
    #[serde(default)]
    pub interface: Option<String>,
    /// The port; default 53.
    #[serde(default = "default_listen_port")]
    pub port: u16,
}

fn default_listen_port() -> u16 {
    53
}

/// A port of the control or statistics channel (on 127.0.0.1 in the server's namespace).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Channel {
    /// The TCP port.
    pub port: u16,
}

/// A peer server: a secondary to notify and let transfer, or a primary to transfer from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Peer {
    /// Its address.
    pub address: IpAddr,
    /// Its port; default 53.
    #[serde(default = "default_listen_port")]
    pub port: u16,
    /// The `DNSTSIGKey` transfers and NOTIFYs are signed with.
    #[serde(default)]
    pub tsig_key: Option<String>,
}

/// `spec` of a `DNSServer`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ServerSpec {
    /// Primary (default) or secondary.
    #[serde(default)]
    pub role: Role,
    /// Where it answers; default `127.0.0.1` port 5300.
    #[serde(default)]
    pub listen: Vec<Listen>,
    /// The `DNSTSIGKey` routerd signs its UPDATEs and transfers with (required on a primary).
    #[serde(default)]
    pub update_key: Option<String>,
    /// The rndc control channel; default port 953.
    #[serde(default)]
    pub control: Option<Channel>,
    /// The statistics channel (`/json/v1`); default port 8053.
    #[serde(default)]
    pub statistics: Option<Channel>,
    /// How long named waits before it notifies secondaries of a change; default `0s`.
    #[serde(default)]
    pub notify_delay: Option<String>,
    /// Secondaries to notify and allow transfers to (primary only).
    #[serde(default)]
    pub secondaries: Vec<Peer>,
    /// A catalog zone (RFC 9432) listing this server's zones for its secondaries.
    #[serde(default)]
    pub catalog_zone: Option<String>,
    /// Primaries to transfer from (secondary only).
    #[serde(default)]
    pub primaries: Vec<Peer>,
    /// Catalog zones to follow on the primaries (secondary only).
    #[serde(default)]
    pub catalog_zones: Vec<String>,
}

impl ServerSpec {
    /// The control channel's port.
    pub fn control_port(&self) -> u16 {
        self.control.map_or(953, |c| c.port)
    }

    /// The statistics channel's port.
    pub fn statistics_port(&self) -> u16 {
        self.statistics.map_or(8053, |c| c.port)
    }

    /// The listen sockets as written, or the default one.
    pub fn listen_or_default(&self) -> Vec<Listen> {
        if self.listen.is_empty() {
            let address = Some(IpAddr::V4(Ipv4Addr::LOCALHOST));
            vec![Listen { address, interface: None, port: DEFAULT_PORT }]
        } else {
            self.listen.clone()
        }
    }

    /// Every `DNSTSIGKey` the server's own configuration names.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        let peers = self.secondaries.iter().chain(&self.primaries);
        self.update_key.as_deref().into_iter().chain(peers.filter_map(|p| p.tsig_key.as_deref()))
    }
}

impl ExternalKindSpec for ServerSpec {
    fn validate(&self, c: &mut ExternalCheck<'_, '_, '_>) {
        if !super::is_bind_name(&c.resource().name) {
            c.error("", "a server's name is letters, digits, '-', '_' and '.' (it names its unit)");
        }
        if c.resource().name == "key" {
            // `key/<name>` names the key files among the `bind.config` artifacts.
            c.error("", "\"key\" is reserved: name the server otherwise");
        }
        let key_kind = super::key::DNS_TSIG_KEY.resource_kind();
        let reference = |c: &mut ExternalCheck<'_, '_, '_>, field: &str, name: &str| {
            if let Some(kind) = key_kind {
                c.reference(field, name, kind);
            }
        };
        if let Some(key) = &self.update_key {
            reference(c, "updateKey", key);
        }
        for (list, peers) in [("secondaries", &self.secondaries), ("primaries", &self.primaries)] {
            for (i, peer) in peers.iter().enumerate() {
                if let Some(key) = &peer.tsig_key {
                    reference(c, &format!("{list}[{i}].tsigKey"), key);
                }
            }
        }
        match self.role {
            Role::Primary => {
                if self.update_key.is_none() {
                    c.error("updateKey", "a primary needs updateKey: routerd signs its UPDATEs");
                }
                if !self.primaries.is_empty() {
                    c.error("primaries", "primaries are for role: secondary");
                }
                if !self.catalog_zones.is_empty() {
                    c.error("catalogZones", "catalogZones are for role: secondary");
                }
            }
            Role::Secondary => {
                if self.primaries.is_empty() {
                    c.error("primaries", "a secondary needs primaries to transfer from");
                }
                if !self.secondaries.is_empty() {
                    c.error("secondaries", "secondaries are for role: primary");
                }
                if self.catalog_zone.is_some() {
                    c.error("catalogZone", "catalogZone is for role: primary");
                }
            }
        }
        for (field, zone) in self.catalog_zone.iter().map(|z| ("catalogZone".to_owned(), z)).chain(
            self.catalog_zones.iter().enumerate().map(|(i, z)| (format!("catalogZones[{i}]"), z)),
        ) {
            if let Err(message) = super::names::zone_apex(zone) {
                c.error(&field, message);
            }
        }
        if let Some(delay) = &self.notify_delay
            && routerd_model::duration::parse_duration(delay).is_err()
        {
            c.error("notifyDelay", format!("{delay:?} is not a duration (0s, 5s, 1m)"));
        }
        let listen = self.listen_or_default();
        for (i, l) in listen.iter().enumerate() {
            match (&l.address, &l.interface) {
                (Some(_), Some(_)) | (None, None) => {
                    c.error(&format!("listen[{i}]"), "give either address or interface");
                }
                (None, Some(iface)) => {
                    c.reference(&format!("listen[{i}].interface"), iface, ResourceKind::Interface)
                }
                (Some(address), None) => {
                    if address.is_loopback() && l.port == 53 {
                        c.error(
                            &format!("listen[{i}].port"),
                            "dnsmasq, the router's resolver, holds port 53 on loopback: \
                             listen on 127.0.0.1 port 5300 and forward the zone from dnsmasq",
                        );
                    }
                }
            }
            for (port, what) in
                [(self.control_port(), "control"), (self.statistics_port(), "statistics")]
            {
                if port == l.port {
                    c.error(
                        &format!("listen[{i}].port"),
                        format!("port {port} is the {what} channel's"),
                    );
                }
            }
        }
        if self.control_port() == self.statistics_port() {
            c.error("statistics.port", "the statistics and control channels need two ports");
        }
    }
}

/// The resource kind `DNSServer`.
pub static DNS_SERVER: ExternalKind = ExternalKind::of::<ServerSpec>(API_VERSION, "DNSServer");

/// Ownership signals on a remote primary.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Ownership {
    /// external-dns's TXT registry: a TXT record beside each owned RRset.
    #[serde(default)]
    pub txt_registry: Option<TxtRegistry>,
}

/// external-dns's TXT registry format (`heritage=routerd,routerd/owner=<ownerId>,…`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TxtRegistry {
    /// The owner TXT's name prefix (`_routerd.`).
    pub prefix: String,
    /// This router's owner id.
    pub owner_id: String,
}

/// `spec` of a `DNSExternalServer`: a remote primary routerd updates over RFC 2136.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExternalServerSpec {
    /// Its address.
    pub address: IpAddr,
    /// Its port; default 53.
    #[serde(default = "default_listen_port")]
    pub port: u16,
    /// The `DNSTSIGKey` UPDATEs are signed with; unsigned when absent.
    #[serde(default)]
    pub tsig_key: Option<String>,
    /// A second ownership signal beside the ledger.
    #[serde(default)]
    pub ownership: Option<Ownership>,
}

impl ExternalKindSpec for ExternalServerSpec {
    fn validate(&self, c: &mut ExternalCheck<'_, '_, '_>) {
        if !super::is_bind_name(&c.resource().name) {
            c.error("", "a server's name is letters, digits, '-', '_' and '.'");
        }
        if let (Some(key), Some(kind)) = (&self.tsig_key, super::key::DNS_TSIG_KEY.resource_kind())
        {
            c.reference("tsigKey", key, kind);
        }
        if let Some(registry) = self.ownership.as_ref().and_then(|o| o.txt_registry.as_ref()) {
            if registry.owner_id.is_empty() || registry.owner_id.contains([',', '"', '=']) {
                c.error(
                    "ownership.txtRegistry.ownerId",
                    "an owner id is non-empty, without , \" or =",
                );
            }
            if super::names::absolute(
                registry.prefix.trim_end_matches('.'),
                &hickory_proto::rr::Name::root(),
            )
            .is_err()
            {
                c.error("ownership.txtRegistry.prefix", "the prefix is a label such as _routerd.");
            }
        }
    }
}

/// The resource kind `DNSExternalServer`.
pub static DNS_EXTERNAL_SERVER: ExternalKind =
    ExternalKind::of::<ExternalServerSpec>(API_VERSION, "DNSExternalServer");

/// The unit of server `name`.
pub fn unit_name(name: &str) -> String {
    format!("routerd-named-{name}.service")
}

/// The `bind.config` name of server `name`'s `named.conf`.
pub fn options_name(name: &str) -> String {
    format!("{name}/options")
}

/// The endpoint block of a local server.
pub fn local_endpoint(name: &str) -> String {
    format!("local:{name}")
}

/// The endpoint block of a remote primary.
pub fn remote_endpoint(name: &str) -> String {
    format!("remote:{name}")
}

/// The key of the endpoint block `block`, for dependents.
pub fn endpoint_key(block: &str) -> ArtifactKey {
    ArtifactKey::new(routerd_host::ArtifactKind::File, format!("{ENDPOINTS_FILE}#{block}"))
}

/// The addresses `listen` entry stands for: its address, or the interface's static ones.
fn listen_addresses(config: &Config, listen: &Listen) -> Vec<IpAddr> {
    if let Some(address) = listen.address {
        return vec![address];
    }
    let Some(iface) = &listen.interface else { return Vec::new() };
    config
        .spec
        .resources
        .iter()
        .filter_map(|r| r.spec_as::<Ipv4StaticAddressSpec>())
        .filter(|a| &a.interface == iface)
        .filter_map(|a| a.address.parse::<IpNet>().ok())
        .map(|net| net.addr())
        .collect()
}

/// The address routerd sends UPDATEs and transfers to: the first loopback listen address, or
/// the first one.
pub fn update_address(config: &Config, spec: &ServerSpec) -> Option<SocketAddr> {
    let sockets: Vec<SocketAddr> = spec
        .listen_or_default()
        .iter()
        .flat_map(|l| {
            listen_addresses(config, l).into_iter().map(move |a| SocketAddr::new(a, l.port))
        })
        .collect();
    sockets.iter().find(|s| s.ip().is_loopback()).or(sockets.first()).copied()
}

fn path(target: &Target, abs: &str) -> String {
    target.path(abs).display().to_string()
}

/// The text of server `name`'s `named.conf` (bind.config `<name>/options`).
pub fn named_conf(
    target: &Target,
    config: &Config,
    name: &str,
    spec: &ServerSpec,
    keys: &[&str],
) -> String {
    let conf_dir = path(target, &format!("{CONF_DIR}/{name}"));
    let data = path(target, &format!("{DATA_DIR}/{name}"));
    let key_dir = path(target, KEY_DIR);
    let mut v4 = Vec::new();
    let mut v6 = Vec::new();
    for l in spec.listen_or_default() {
        for address in listen_addresses(config, &l) {
            match address {
                IpAddr::V4(a) => v4.push(format!("\tlisten-on port {} {{ {a}; }};\n", l.port)),
                IpAddr::V6(a) => v6.push(format!("\tlisten-on-v6 port {} {{ {a}; }};\n", l.port)),
            }
        }
    }
    if v6.is_empty() {
        v6.push("\tlisten-on-v6 { none; };\n".to_owned());
    }
    let delay = spec
        .notify_delay
        .as_deref()
        .and_then(|d| routerd_model::duration::parse_duration(d).ok())
        .map_or(0, |d| d.as_secs());
    let mut text = format!("# routerd-control 127.0.0.1 {}\n", spec.control_port());
    if spec.role == Role::Primary {
        for p in &spec.secondaries {
            text.push_str(&format!("# routerd-secondary {} {}\n", p.address, p.port));
        }
    }
    text.push_str(&format!(
        "# routerd's named.conf for DNSServer {name:?} of router.yaml; routerd rewrites it.\n\
         include \"{conf_dir}/rndc.key\";\n"
    ));
    for key in keys {
        text.push_str(&format!("include \"{key_dir}/{key}.key\";\n"));
    }
    text.push_str(&format!(
        "options {{\n\
         \tdirectory \"{data}\";\n\
         \tpid-file \"{data}/named.pid\";\n\
         \tsession-keyfile \"{data}/session.key\";\n\
         \tmanaged-keys-directory \"{data}\";\n"
    ));
    text.extend(v4);
    text.extend(v6);
    text.push_str("\trecursion no;\n\tdnssec-validation no;\n\tallow-query { any; };\n");
    text.push_str(&format!("\tnotify yes;\n\tnotify-delay {delay};\n"));
    let transfer: Vec<String> = spec.keys().map(|k| format!("key \"{k}\";")).collect();
    if transfer.is_empty() {
        text.push_str("\tallow-transfer { none; };\n");
    } else {
        text.push_str(&format!("\tallow-transfer {{ {} }};\n", transfer.join(" ")));
    }
    if spec.role == Role::Primary {
        // routerd's NOTIFY listener first: a hand edit is repaired at once.
        let listener = crate::notify::NOTIFY_LISTEN;
        let mut peers = vec![format!("{} port {};", listener.ip(), listener.port())];
        peers.extend(spec.secondaries.iter().map(peer));
        text.push_str(&format!("\talso-notify {{ {} }};\n", peers.join(" ")));
    }
    if spec.role == Role::Secondary && !spec.catalog_zones.is_empty() {
        let primaries: Vec<String> = spec.primaries.iter().map(peer).collect();
        text.push_str("\tcatalog-zones {\n");
        for zone in &spec.catalog_zones {
            let zone = zone.trim_end_matches('.');
            text.push_str(&format!(
                "\t\tzone \"{zone}\" default-primaries {{ {} }};\n",
                primaries.join(" ")
            ));
        }
        text.push_str("\t};\n");
    }
    text.push_str("};\n");
    text.push_str(&format!(
        "controls {{ inet 127.0.0.1 port {} allow {{ 127.0.0.1; }} keys {{ \"{RNDC_KEY}\"; }}; }};\n",
        spec.control_port()
    ));
    text.push_str(&format!(
        "statistics-channels {{ inet 127.0.0.1 port {} allow {{ 127.0.0.1; }}; }};\n",
        spec.statistics_port()
    ));
    if spec.role == Role::Secondary {
        let primaries: Vec<String> = spec.primaries.iter().map(peer).collect();
        for zone in &spec.catalog_zones {
            let zone = zone.trim_end_matches('.');
            text.push_str(&format!(
                "zone \"{zone}\" {{ type secondary; file \"{zone}.zone\"; primaries {{ {} }}; }};\n",
                primaries.join(" ")
            ));
        }
    }
    text.push_str(&format!("include \"{conf_dir}/zones.conf\";\n"));
    text
}

/// A peer as BIND writes it in `also-notify` and `primaries`: `192.0.2.53 port 53 key "k";`.
fn peer(p: &Peer) -> String {
    let key = p.tsig_key.as_deref().map(|k| format!(" key \"{k}\"")).unwrap_or_default();
    format!("{} port {}{key};", p.address, p.port)
}

/// The unit running server `name`. `Type=forking`, as Debian's `named.service`: named forks
/// once it has read its configuration and bound its sockets, so a start job fails when named
/// cannot serve; its PID is in the data directory, apart from every other server's.
pub fn unit(target: &Target, name: &str) -> UnitSpec {
    let conf = path(target, &format!("{CONF_DIR}/{name}/named.conf"));
    let data = path(target, &format!("{DATA_DIR}/{name}"));
    let mut content = format!(
        "# Written by routerd for DNSServer {name:?} of router.yaml.\n\
         [Unit]\n\
         Description=routerd DNS server {name} (BIND 9)\n\
         ConditionPathExists={conf}\n\
         \n\
         [Service]\n\
         Type=forking\n\
         PIDFile={data}/named.pid\n\
         ExecStart={NAMED} -c {conf}\n\
         Restart=on-failure\n"
    );
    if let Some(ns) = target.netns_path() {
        content.push_str(&format!("NetworkNamespacePath={}\n", ns.display()));
    }
    content.push_str("\n[Install]\nWantedBy=multi-user.target\n");
    UnitSpec { unit: unit_name(name), content, active: true }
}

/// The endpoint block `block`: where the `dns` family sends UPDATEs and transfers, and the
/// key file it signs with.
pub fn endpoint_block(
    target: &Target,
    block: &str,
    address: SocketAddr,
    key: Option<&str>,
) -> FileBlockSpec {
    let mut lines = vec![format!("address {}#{}", address.ip(), address.port())];
    if let Some(key) = key {
        lines.push(format!("key {}", path(target, &format!("{KEY_DIR}/{key}.key"))));
    }
    FileBlockSpec { path: ENDPOINTS_FILE.into(), block: block.into(), lines, mode: 0o644 }
}

fn key_dep(key: &str) -> Option<IntentDep> {
    let artifact = BIND_CONFIG.artifact_kind()?;
    Some(IntentDep::on(&ArtifactKey::new(artifact, key_artifact_name(key)), "signed with this key"))
}

/// Renders a `DNSServer`.
pub(crate) struct ServerRender;

impl KindRender for ServerRender {
    fn render(&self, ctx: &RenderCtx<'_>, res: &Resource, out: &mut Out) {
        let Some(spec) = res.external_spec::<ServerSpec>() else { return };
        let index = ctx.memo(DnsIndex::build);
        let mut keys: Vec<&str> = spec.keys().collect();
        keys.extend(index.zone_keys_on(&res.name));
        keys.sort_unstable();
        keys.dedup();
        let text = named_conf(ctx.target, ctx.config(), &res.name, spec, &keys);
        let deps: Vec<IntentDep> = keys.iter().filter_map(|k| key_dep(k)).collect();
        let options = match ExternalArtifactSpec::new(
            &BIND_CONFIG,
            options_name(&res.name),
            &BindConfig::Server { text },
        ) {
            Ok(artifact) => out.ensure(ArtifactSpec::External(artifact), deps),
            Err(e) => return out.warn(format!("named.conf not rendered: {e}")),
        };
        out.ensure(
            ArtifactSpec::Unit(unit(ctx.target, &res.name)),
            vec![IntentDep::on(&options, "named reads its named.conf")],
        );
        if spec.role == Role::Primary {
            match update_address(ctx.config(), spec) {
                Some(address) => {
                    let block = endpoint_block(
                        ctx.target,
                        &local_endpoint(&res.name),
                        address,
                        spec.update_key.as_deref(),
                    );
                    out.ensure(ArtifactSpec::FileBlock(block), Vec::new());
                }
                None => out
                    .warn("no listen address resolves: routerd cannot update this server's zones"),
            }
            if let Some(catalog) = &spec.catalog_zone {
                super::catalog::render(ctx, &res.name, catalog, spec.update_key.as_deref(), out);
            }
        }
    }
}

/// Renders a `DNSExternalServer`: its endpoint block.
pub(crate) struct ExternalServerRender;

impl KindRender for ExternalServerRender {
    fn render(&self, ctx: &RenderCtx<'_>, res: &Resource, out: &mut Out) {
        let Some(spec) = res.external_spec::<ExternalServerSpec>() else { return };
        let address = SocketAddr::new(spec.address, spec.port);
        let mut block = endpoint_block(
            ctx.target,
            &remote_endpoint(&res.name),
            address,
            spec.tsig_key.as_deref(),
        );
        if let Some(registry) = spec.ownership.as_ref().and_then(|o| o.txt_registry.as_ref()) {
            // The backend refuses a delete its owner record does not confirm.
            block.lines.push(format!("registry {} {}", registry.prefix, registry.owner_id));
        }
        let deps = spec.tsig_key.as_deref().and_then(key_dep).into_iter().collect();
        out.ensure(ArtifactSpec::FileBlock(block), deps);
    }
}
