//! systemd-networkd backend (`applyWith: networkd`) for the DHCP client bindings
//! `dhcp.ipv4.client`, `dhcp.ipv6.client` and `dhcp.ipv6.prefixDelegation`, and for
//! `dhcp.ipv6.delegatedAddress`, the address networkd derives on a downstream link from an
//! uplink's delegated prefix.
//!
//! Each link with a binding gets one file of routerd's, `10-routerd-<ifname>.network` in
//! [`Target::network_dir`] (systemd.network(5)): a `[Match]` on the link's name, `[Link]` and
//! `[Network]` sections the backend derives from the set of bindings on the link (`DHCP=` is one
//! setting for both families), then one block per binding,
//!
//! ```text
//! # routerd binding dhcp.ipv4.client
//! [DHCPv4]
//! UseHostname=no
//! # routerd end
//! ```
//!
//! Inventory lists those blocks, whether systemd-networkd configures the link with routerd's
//! file, the addresses networkd configured for the binding, and what its DHCP client received
//! that others build on: a DHCPv4 lease's router and the DNS servers (`NetworkFile`,
//! `Addresses`, `Routes` and `DNS` of `Describe`, org.freedesktop.network1(5)). A `.network` file of someone else's that
//! matches the link first (networkd takes the first in lexical order) leaves the binding
//! without effect, and shows as drift. Every change rewrites the link's file, asks networkd to
//! `Reload` (it reconfigures the links whose file changed) and, unless the binding went away,
//! waits until networkd reports the link configured from routerd's file; when it does not, the
//! file is restored as it was and the change fails naming the reason (the other file's name).
//! A file left without bindings is removed; networkd then stops its DHCP clients on the link
//! (releasing the lease) and removes what they configured.
//!
//! The link itself stays routerd's: the file leaves the link's state to the rtnetlink backend
//! (`ActivationPolicy=manual`), keeps addresses and routes it did not configure
//! (`KeepConfiguration=static`, with `ManageForeignRoutes=no` and
//! `ManageForeignRoutingPolicyRules=no` in networkd.conf: the image's
//! `/etc/systemd/networkd.conf.d/routerd.conf`), and does not hold up `network-online.target`
//! (`RequiredForOnline=no`).

mod proxy;

use std::collections::{BTreeMap, HashMap};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use serde::Deserialize;
use zbus::proxy::CacheProperties;

use crate::artifact::{
    Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, DhcpBinding, DhcpClientSpec,
};
use crate::backend::Backend;
use crate::bus::SystemBus;
use crate::error::HostError;
use crate::file::{Markers, read_dir_files, write_or_remove};
use crate::systemd::service;
use crate::target::Target;
use proxy::ManagerProxy;

/// The `applyWith` name of this backend.
const APPLY_WITH: crate::kinds::ApplyWith = crate::kinds::ApplyWith::Networkd;

/// networkd's bus name.
const BUS_NAME: &str = "org.freedesktop.network1";

/// How long networkd may take after `Reload` to configure a link from routerd's file. Reload
/// re-reads the files before it returns; the link's reconfiguration follows at once.
const CONFIGURE_DEADLINE: Duration = Duration::from_secs(10);

const MARKERS: Markers = Markers { begin: "# routerd binding ", end: "# routerd end" };

/// The file name of routerd's `.network` file for `ifname`. The `10-` prefix sorts it before
/// the files distributions ship (`80-container-*.network`, `99-default.link`), which networkd
/// would otherwise match first.
pub fn network_file_name(ifname: &str) -> String {
    format!("10-routerd-{ifname}.network")
}

/// The link name of a routerd `.network` file name, `None` for any other file.
fn ifname_of(file_name: &str) -> Option<&str> {
    file_name.strip_prefix("10-routerd-")?.strip_suffix(".network").filter(|n| !n.is_empty())
}

/// A link as networkd's `Describe` reports it (the fields routerd reads).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LinkDescription {
    /// The link's name.
    pub name: String,
    /// The `.network` file networkd configures the link with, absent when unmanaged.
    #[serde(default)]
    pub network_file: Option<String>,
    /// `unmanaged`, `pending`, `configuring`, `configured`, `failed`, `linger`.
    #[serde(default)]
    pub administrative_state: Option<String>,
    /// The addresses networkd knows on the link (its own and foreign ones).
    #[serde(default)]
    pub addresses: Vec<DescribedAddress>,
    /// The routes networkd knows through the link (its own and foreign ones).
    #[serde(default)]
    pub routes: Vec<DescribedRoute>,
    /// The DNS servers networkd knows for the link, with where each came from.
    #[serde(default, rename = "DNS")]
    pub dns: Vec<DescribedDns>,
}

/// A DNS server as networkd's `Describe` reports it (systemd 252 and later).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribedDns {
    /// `AF_INET` (2) or `AF_INET6` (10).
    #[serde(default)]
    pub family: i32,
    /// The server's address bytes (4 or 16).
    #[serde(default)]
    pub address: Vec<u8>,
    /// What configured it: `static`, `DHCPv4`, `DHCPv6`, `NDisc`, ..., spelled as for
    /// [`DescribedAddress::config_source`].
    #[serde(default)]
    pub config_source: String,
}

/// An address as networkd's `Describe` reports it (systemd 252 and later).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribedAddress {
    /// `AF_INET` (2) or `AF_INET6` (10).
    #[serde(default)]
    pub family: i32,
    /// The address's bytes (4 or 16).
    #[serde(default)]
    pub address: Vec<u8>,
    /// Prefix length in bits.
    #[serde(default)]
    pub prefix_length: u8,
    /// What configured it: `static`, `DHCPv4`, `DHCPv6`, `DHCP-PD`, `NDisc`, `foreign`, ...
    /// (systemd 252's spelling; other releases write them in lower case).
    #[serde(default)]
    pub config_source: String,
    /// Comma-separated flags: `requesting`, `configuring`, `configured`, `marked`, `removing`.
    #[serde(default)]
    pub config_state: String,
}

impl DescribedAddress {
    /// `address/prefix` when the address is configured (not on its way in or out), `None`
    /// otherwise or when its bytes are not an address of its family.
    pub fn configured_cidr(&self) -> Option<String> {
        if !is_configured(&self.config_state) {
            return None;
        }
        let ip = match (self.family, self.address.len()) {
            (10, 16) => std::net::IpAddr::from(<[u8; 16]>::try_from(&self.address[..]).ok()?),
            (2, 4) => std::net::IpAddr::from(<[u8; 4]>::try_from(&self.address[..]).ok()?),
            _ => return None,
        };
        Some(format!("{ip}/{}", self.prefix_length))
    }
}

/// A route as networkd's `Describe` reports it (systemd 252 and later; the fields routerd reads).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribedRoute {
    /// `AF_INET` (2) or `AF_INET6` (10).
    #[serde(default)]
    pub family: i32,
    /// The destination's bytes.
    #[serde(default)]
    pub destination: Vec<u8>,
    /// Prefix length of the destination in bits: 0 for a default route.
    #[serde(default)]
    pub destination_prefix_length: u8,
    /// The route type (`RTN_*`, rtnetlink(7)): 1 unicast, 7 unreachable.
    #[serde(default)]
    pub r#type: u8,
    /// The next hop's bytes; absent for a route without one.
    #[serde(default)]
    pub gateway: Vec<u8>,
    /// What configured it, spelled as for [`DescribedAddress::config_source`].
    #[serde(default)]
    pub config_source: String,
    /// Comma-separated flags, as for [`DescribedAddress::config_state`].
    #[serde(default)]
    pub config_state: String,
}

/// Whether a `ConfigState` says configured and not on its way out.
fn is_configured(config_state: &str) -> bool {
    let state = config_state.to_ascii_lowercase();
    let flags: Vec<&str> = state.split(',').map(str::trim).collect();
    flags.contains(&"configured") && !flags.contains(&"removing")
}

/// The `ConfigSource` names of the addresses a binding configures, compared without case:
/// systemd 252 writes `DHCPv4`, `DHCPv6` and `DHCP-PD`, other releases `dhcp4`, `dhcp6` and
/// `dhcp6pd`. A delegation on the uplink configures no address of its own.
fn config_sources(binding: DhcpBinding) -> &'static [&'static str] {
    match binding {
        DhcpBinding::Ipv4 => &["dhcpv4", "dhcp4"],
        DhcpBinding::Ipv6 => &["dhcpv6", "dhcp6"],
        DhcpBinding::PrefixDelegation => &[],
        DhcpBinding::DelegatedAddress => &["dhcp-pd", "dhcp6pd"],
    }
}

/// The addresses `link` holds for `binding`, configured, in CIDR form.
fn binding_addresses(link: &LinkDescription, binding: DhcpBinding) -> Vec<String> {
    let sources = config_sources(binding);
    link.addresses
        .iter()
        .filter(|a| sources.iter().any(|s| a.config_source.eq_ignore_ascii_case(s)))
        .filter_map(DescribedAddress::configured_cidr)
        .collect()
}

/// The DNS servers `link`'s DHCP client of `binding`'s family received, in networkd's order.
/// A delegation shares the link's DHCPv6 client with the address binding, so both read the
/// DHCPv6 servers; a downstream link's delegated address has none of its own.
pub fn lease_dns_servers(link: &LinkDescription, binding: DhcpBinding) -> Vec<std::net::IpAddr> {
    let sources: &[&str] = match binding {
        DhcpBinding::Ipv4 => &["dhcpv4", "dhcp4"],
        DhcpBinding::Ipv6 | DhcpBinding::PrefixDelegation => &["dhcpv6", "dhcp6"],
        DhcpBinding::DelegatedAddress => &[],
    };
    link.dns
        .iter()
        .filter(|d| sources.iter().any(|s| d.config_source.eq_ignore_ascii_case(s)))
        .filter_map(|d| match (d.family, d.address.len()) {
            (2, 4) => <[u8; 4]>::try_from(&d.address[..]).ok().map(std::net::IpAddr::from),
            (10, 16) => <[u8; 16]>::try_from(&d.address[..]).ok().map(std::net::IpAddr::from),
            _ => None,
        })
        .collect()
}

/// The router of `link`'s DHCPv4 lease: the gateway of the IPv4 default route networkd
/// configured from it, `None` while there is none (networkd adds it once the lease is bound,
/// unless `UseRoutes=no` / `UseGateway=no`).
fn lease_gateway(link: &LinkDescription) -> Option<std::net::Ipv4Addr> {
    let sources = config_sources(DhcpBinding::Ipv4);
    link.routes
        .iter()
        .filter(|r| r.family == 2 && r.destination_prefix_length == 0)
        .filter(|r| sources.iter().any(|s| r.config_source.eq_ignore_ascii_case(s)))
        .filter(|r| is_configured(&r.config_state))
        .find_map(|r| <[u8; 4]>::try_from(&r.gateway[..]).ok())
        .map(std::net::Ipv4Addr::from)
        .filter(|g| !g.is_unspecified())
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Description {
    #[serde(default)]
    interfaces: Vec<LinkDescription>,
    /// The manager's routes, bound to no link: among them the unreachable route networkd adds
    /// for each delegated prefix (RFC 7084 WPD-5).
    #[serde(default)]
    routes: Vec<DescribedRoute>,
}

/// `RTN_UNREACHABLE` (rtnetlink(7)).
const RTN_UNREACHABLE: u8 = 7;

impl Description {
    /// The prefixes delegated to networkd's DHCPv6 clients: its unreachable IPv6 routes from
    /// DHCPv6, configured, in CIDR form.
    fn delegated_prefixes(&self) -> Vec<String> {
        let sources = config_sources(DhcpBinding::Ipv6);
        self.routes
            .iter()
            .filter(|r| r.family == 10 && r.r#type == RTN_UNREACHABLE)
            .filter(|r| sources.iter().any(|s| r.config_source.eq_ignore_ascii_case(s)))
            .filter(|r| is_configured(&r.config_state))
            .filter_map(|r| {
                let bytes = <[u8; 16]>::try_from(&r.destination[..]).ok()?;
                let net = ipnet::Ipv6Net::new(bytes.into(), r.destination_prefix_length).ok()?;
                Some(net.trunc().to_string())
            })
            .collect()
    }
}

/// A client of systemd-networkd's manager.
pub struct Networkd {
    bus: Arc<SystemBus>,
}

impl Networkd {
    /// A client of networkd on `bus`.
    pub fn new(bus: Arc<SystemBus>) -> Self {
        Self { bus }
    }

    async fn manager(&self) -> Result<ManagerProxy<'static>, HostError> {
        ManagerProxy::builder(self.bus.conn().await?)
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(|e| HostError::Bus(e.to_string()))
    }

    /// Whether networkd runs: its name has an owner on the bus. Asked rather than activated,
    /// so a router whose networkd is off is told so instead of waiting on activation.
    ///
    /// Errors: [`HostError::Bus`].
    pub async fn running(&self) -> Result<bool, HostError> {
        self.bus.has_owner(BUS_NAME).await
    }

    /// `networkctl reload`.
    ///
    /// Errors: [`HostError::Service`] when networkd refuses; [`HostError::Bus`].
    pub async fn reload(&self, key: &ArtifactKey) -> Result<(), HostError> {
        let m = self.manager().await?;
        m.reload().await.map_err(|e| service(key, "reload systemd-networkd", e))
    }

    /// Every link networkd knows, by name.
    ///
    /// Errors: [`HostError::Service`] (networkd's error, or JSON it wrote that does not parse);
    /// [`HostError::Bus`].
    pub async fn links(
        &self,
        key: &ArtifactKey,
    ) -> Result<HashMap<String, LinkDescription>, HostError> {
        Ok(self.describe(key).await?.0)
    }

    /// Every link networkd knows, by name, and the prefixes delegated to it (CIDR form).
    ///
    /// Errors: as [`Networkd::links`].
    async fn describe(
        &self,
        key: &ArtifactKey,
    ) -> Result<(HashMap<String, LinkDescription>, Vec<String>), HostError> {
        let m = self.manager().await?;
        let json = m.describe().await.map_err(|e| service(key, "describe links", e))?;
        let d: Description = serde_json::from_str(&json).map_err(|e| HostError::Service {
            key: key.clone(),
            op: "describe links",
            message: format!("systemd-networkd's description does not parse: {e}"),
        })?;
        let delegated = d.delegated_prefixes();
        Ok((d.interfaces.into_iter().map(|l| (l.name.clone(), l)).collect(), delegated))
    }
}

/// The bindings of routerd's `.network` files for one target, through systemd-networkd.
pub struct NetworkdBackend {
    dir: PathBuf,
    networkd: Networkd,
    /// One change at a time: each is a read-modify-write of a link's file.
    lock: tokio::sync::Mutex<()>,
}

impl NetworkdBackend {
    /// Bindings in `target`'s `.network` directory, applied by the networkd on `bus`.
    pub fn new(target: &Target, bus: Arc<SystemBus>) -> Self {
        Self {
            dir: target.network_dir(),
            networkd: Networkd::new(bus),
            lock: tokio::sync::Mutex::new(()),
        }
    }

    fn path(&self, ifname: &str) -> PathBuf {
        self.dir.join(network_file_name(ifname))
    }

    /// The blocks of every routerd `.network` file in the directory, by link name.
    fn read_all(&self) -> Result<BTreeMap<String, BTreeMap<DhcpBinding, Vec<String>>>, HostError> {
        let mut out = BTreeMap::new();
        for (ifname, text) in read_files(&self.dir)? {
            out.insert(ifname, parse(&text));
        }
        Ok(out)
    }

    async fn list(&self, kind: ArtifactKind) -> Result<Vec<Artifact>, HostError> {
        let Some(binding) = DhcpBinding::of(kind) else { return Ok(Vec::new()) };
        let files = self.read_all()?;
        if !files.values().any(|blocks| blocks.contains_key(&binding)) {
            return Ok(Vec::new());
        }
        let key = ArtifactKey::new(kind, String::new());
        // A stopped networkd (or no bus at all) configures nothing: every binding is then
        // without effect, which the plan shows as drift rather than failing the inventory.
        let (links, delegated) = match self.networkd.running().await {
            Ok(true) => self.networkd.describe(&key).await?,
            Ok(false) | Err(HostError::Bus(_)) => (HashMap::new(), Vec::new()),
            Err(e) => return Err(e),
        };
        // networkd does not say which uplink a delegated prefix came through: with one
        // delegation, every prefix is its own; with several, none is reported.
        let delegations = files.values().filter(|b| b.contains_key(&DhcpBinding::PrefixDelegation));
        let one_delegation = delegations.count() == 1;
        Ok(files
            .into_iter()
            .filter_map(|(ifname, mut blocks)| {
                let settings = blocks.remove(&binding)?;
                let link = links.get(&ifname);
                let effective = link.is_some_and(|l| uses_file(l, &ifname));
                let (addresses, gateway, dns_servers) = match link {
                    Some(l) if effective && binding == DhcpBinding::PrefixDelegation => (
                        if one_delegation { delegated.clone() } else { Vec::new() },
                        None,
                        lease_dns_servers(l, binding),
                    ),
                    Some(l) if effective => (
                        binding_addresses(l, binding),
                        if binding == DhcpBinding::Ipv4 { lease_gateway(l) } else { None },
                        lease_dns_servers(l, binding),
                    ),
                    _ => (Vec::new(), None, Vec::new()),
                };
                Some(Artifact::new(ArtifactSpec::DhcpClient(DhcpClientSpec {
                    binding,
                    ifname,
                    settings,
                    effective,
                    addresses,
                    gateway,
                    dns_servers,
                })))
            })
            .collect())
    }

    /// Sets (`set`) or removes one binding's block and has networkd apply the file. A set that
    /// networkd does not take (another file matches the link first, the link fails) restores
    /// the file as it was.
    async fn change(
        &self,
        key: &ArtifactKey,
        spec: &DhcpClientSpec,
        set: bool,
    ) -> Result<(), HostError> {
        let _guard = self.lock.lock().await;
        let running = self.networkd.running().await?;
        if set && !running {
            // Nothing written: a file networkd does not read would look applied.
            return Err(HostError::Service {
                key: key.clone(),
                op: "reload systemd-networkd",
                message: format!(
                    "systemd-networkd is not running ({BUS_NAME} has no owner on the system \
                     bus); start systemd-networkd.service"
                ),
            });
        }
        let path = self.path(&spec.ifname);
        let before = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(source) => return Err(HostError::File { path, source }),
        };
        let mut blocks = before.as_deref().map(parse).unwrap_or_default();
        if set {
            blocks.insert(spec.binding, spec.settings.clone());
        } else {
            blocks.remove(&spec.binding);
        }
        let after = (!blocks.is_empty()).then(|| compose(&spec.ifname, &blocks));
        write_or_remove(&path, after.as_deref())?;
        if !running {
            // A removal while networkd is stopped: it reads the directory when it starts.
            return Ok(());
        }
        let applied = match self.networkd.reload(key).await {
            Ok(()) if set => self.wait_configured(key, &spec.ifname).await,
            other => other,
        };
        if applied.is_err() && set {
            // A binding networkd does not take leaves the file as it was, so a failed change
            // leaves nothing behind that looks applied.
            write_or_remove(&path, before.as_deref())?;
            let _ = self.networkd.reload(key).await;
        }
        applied
    }

    /// Waits until networkd configures `ifname` from routerd's file.
    async fn wait_configured(&self, key: &ArtifactKey, ifname: &str) -> Result<(), HostError> {
        let deadline = Instant::now() + CONFIGURE_DEADLINE;
        let settled = Instant::now() + Duration::from_secs(1);
        loop {
            let links = self.networkd.links(key).await?;
            let link = links.get(ifname);
            if link.is_some_and(|l| {
                uses_file(l, ifname) && l.administrative_state.as_deref() != Some("failed")
            }) {
                return Ok(());
            }
            // networkd picks a link's file while it reloads: another file reported a moment
            // after the reload is its choice, not a step on the way.
            let other = link.is_some_and(|l| l.network_file.is_some() && !uses_file(l, ifname));
            if Instant::now() >= deadline || (other && Instant::now() >= settled) {
                let message = match link {
                    None => format!("systemd-networkd does not know the link {ifname}"),
                    Some(l) if uses_file(l, ifname) => format!(
                        "systemd-networkd failed to configure {ifname} (journalctl -u \
                         systemd-networkd tells why)"
                    ),
                    Some(LinkDescription { network_file: Some(other), .. }) => format!(
                        "systemd-networkd configures {ifname} with {other}, which matches the \
                         link before routerd's {}; remove that file or narrow its [Match]",
                        network_file_name(ifname)
                    ),
                    Some(l) => format!(
                        "systemd-networkd does not configure {ifname} with routerd's {} \
                         (administrative state {})",
                        network_file_name(ifname),
                        l.administrative_state.as_deref().unwrap_or("unknown")
                    ),
                };
                return Err(HostError::Service { key: key.clone(), op: "configure link", message });
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

/// Whether networkd configures `l` from routerd's file for `ifname` (compared by file name:
/// networkd reports its own path, which differs from ours when the target has another root).
fn uses_file(l: &LinkDescription, ifname: &str) -> bool {
    l.network_file
        .as_deref()
        .and_then(|f| Path::new(f).file_name())
        .is_some_and(|f| f.to_str() == Some(network_file_name(ifname).as_str()))
}

/// routerd's `.network` files in `dir` with their text, by link name; none when the directory
/// does not exist.
fn read_files(dir: &Path) -> Result<Vec<(String, String)>, HostError> {
    read_dir_files(dir, |name| ifname_of(name).map(str::to_owned))
}

/// The blocks of a file routerd wrote, by binding. Lines outside blocks (the sections the
/// backend derives, anything added by hand) belong to no binding and are rewritten at the next
/// change.
fn parse(text: &str) -> BTreeMap<DhcpBinding, Vec<String>> {
    MARKERS
        .parse(text)
        .into_iter()
        .filter_map(|(kind, lines)| {
            Some((ArtifactKind::parse(&kind).and_then(DhcpBinding::of)?, lines))
        })
        .collect()
}

/// The whole `.network` file for `ifname` with `blocks` (at least one).
fn compose(ifname: &str, blocks: &BTreeMap<DhcpBinding, Vec<String>>) -> String {
    let v4 = blocks.contains_key(&DhcpBinding::Ipv4);
    let na = blocks.contains_key(&DhcpBinding::Ipv6);
    let v6 = na || blocks.contains_key(&DhcpBinding::PrefixDelegation);
    // A downstream link with only a delegated address runs no DHCP client of its own.
    let dhcp = match (v4, v6) {
        (true, true) => "yes",
        (true, false) => "ipv4",
        (false, true) => "ipv6",
        (false, false) => "no",
    };
    let mut s = format!(
        "# routerd's systemd-networkd configuration of {ifname}: the DHCP client bindings of\n\
         # router.yaml. routerd rewrites this file on every change: edit router.yaml, not this file.\n\
         [Match]\n\
         Name={ifname}\n\
         \n\
         [Link]\n\
         ActivationPolicy=manual\n\
         RequiredForOnline=no\n\
         \n\
         [Network]\n\
         DHCP={dhcp}\n\
         IPv6AcceptRA={ra}\n\
         KeepConfiguration=static\n",
        ra = if v6 { "yes" } else { "no" },
    );
    if v6 {
        // Solicit without waiting for an RA's M flag (as OpenWrt's odhcp6c does); IA_NA only
        // when an IPv6DHCPAddress asks for it.
        s.push_str(&format!(
            "\n[DHCPv6]\nWithoutRA=solicit\nUseAddress={}\n",
            if na { "yes" } else { "no" }
        ));
    }
    for (binding, lines) in blocks {
        MARKERS.push(&mut s, binding.kind().as_str(), lines);
    }
    s
}

fn spec(a: &Artifact) -> Result<&DhcpClientSpec, HostError> {
    match &a.spec {
        ArtifactSpec::DhcpClient(d) => {
            let bad = |message: String| Err(HostError::Invalid { key: a.key.clone(), message });
            if d.ifname.is_empty() || d.ifname.contains(['/', '\n', ' ']) {
                return bad(format!("{:?} is not a link name", d.ifname));
            }
            // A line break would smuggle settings past the block markers.
            if !d.settings.iter().all(|l| MARKERS.fits(l)) {
                return bad("a networkd setting contains a line break or a block marker".into());
            }
            Ok(d)
        }
        _ => Err(HostError::WrongBackend { key: a.key.clone(), backend: APPLY_WITH }),
    }
}

impl Backend for NetworkdBackend {
    fn apply_with(&self) -> crate::kinds::ApplyWith {
        APPLY_WITH
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        &[
            ArtifactKind::Dhcp4Client,
            ArtifactKind::Dhcp6Client,
            ArtifactKind::Dhcp6PrefixDelegation,
            ArtifactKind::Dhcp6DelegatedAddress,
        ]
    }

    fn observe<'a>(
        &'a self,
        kind: ArtifactKind,
        _wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        Box::pin(self.list(kind))
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move { self.change(&desired.key, spec(desired)?, true).await })
    }

    fn modify<'a>(
        &'a self,
        _observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move { self.change(&desired.key, spec(desired)?, true).await })
    }

    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move { self.change(&observed.key, spec(observed)?, false).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(list: &[(DhcpBinding, &[&str])]) -> BTreeMap<DhcpBinding, Vec<String>> {
        list.iter().map(|(b, l)| (*b, l.iter().map(|s| s.to_string()).collect())).collect()
    }

    #[test]
    fn a_file_round_trips_its_blocks_and_derives_dhcp_from_them() {
        let b = blocks(&[
            (DhcpBinding::PrefixDelegation, &["[DHCPv6]", "PrefixDelegationHint=::/60"]),
            (DhcpBinding::Ipv4, &["[DHCPv4]", "UseHostname=no"]),
        ]);
        let text = compose("wan0", &b);
        assert!(text.contains("[Match]\nName=wan0\n"));
        assert!(text.contains("DHCP=yes\n"), "{text}");
        assert!(text.contains("UseAddress=no\n"), "PD alone asks for no IA_NA: {text}");
        assert!(
            text.find("dhcp.ipv4.client").unwrap_or(usize::MAX)
                < text.find("dhcp.ipv6.prefixDelegation").unwrap_or(0),
            "blocks in binding order"
        );
        assert_eq!(parse(&text), b);

        let v4 = compose("wan0", &blocks(&[(DhcpBinding::Ipv4, &["[DHCPv4]"])]));
        assert!(v4.contains("DHCP=ipv4\nIPv6AcceptRA=no\n") && !v4.contains("[DHCPv6]"), "{v4}");
        let na = compose("wan0", &blocks(&[(DhcpBinding::Ipv6, &[])]));
        assert!(na.contains("DHCP=ipv6\n") && na.contains("UseAddress=yes\n"), "{na}");
    }

    #[test]
    fn only_routerd_network_files_are_read_and_unknown_blocks_are_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = "[Match]\n# routerd binding dhcp.ipv4.client\n[DHCPv4]\n# routerd end\n\
                    # routerd binding bogus\nx=1\n# routerd end\n";
        std::fs::write(dir.path().join("10-routerd-wan0.network"), text).expect("w");
        std::fs::write(dir.path().join("20-wired.network"), text).expect("w");
        std::fs::write(dir.path().join("10-routerd-.network"), text).expect("w");
        let files = read_files(dir.path()).expect("reads");
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, "wan0");
        assert_eq!(parse(&files[0].1), blocks(&[(DhcpBinding::Ipv4, &["[DHCPv4]"])]));
        assert!(read_files(&dir.path().join("missing")).expect("absent dir").is_empty());
    }

    #[test]
    fn the_network_file_is_compared_by_name() {
        let l = |f: &str| LinkDescription {
            name: "wan0".into(),
            network_file: Some(f.into()),
            administrative_state: Some("configured".into()),
            ..Default::default()
        };
        assert!(uses_file(&l("/etc/systemd/network/10-routerd-wan0.network"), "wan0"));
        assert!(!uses_file(&l("/etc/systemd/network/05-wired.network"), "wan0"));
        assert!(!uses_file(&LinkDescription::default(), "wan0"));
    }

    #[test]
    fn described_addresses_are_read_per_binding_and_only_once_configured() {
        // The shape systemd 252's Describe gives (abridged; its source names are upper-case,
        // other releases' lower-case).
        let json = r#"{"Interfaces":[{"Name":"lan0","NetworkFile":"/etc/systemd/network/10-routerd-lan0.network",
            "AdministrativeState":"configured","Addresses":[
              {"Family":10,"Address":[32,1,13,184,0,0,0,1,0,0,0,0,0,0,0,1],"PrefixLength":64,
               "ConfigSource":"DHCP-PD","ConfigState":"configured"},
              {"Family":10,"Address":[32,1,13,184,0,0,0,2,0,0,0,0,0,0,0,1],"PrefixLength":64,
               "ConfigSource":"dhcp-pd","ConfigState":"configured,removing"},
              {"Family":10,"Address":[254,128,0,0,0,0,0,0,0,0,0,0,0,0,0,1],"PrefixLength":64,
               "ConfigSource":"foreign","ConfigState":"configured"},
              {"Family":2,"Address":[192,0,2,1],"PrefixLength":24,"ConfigSource":"DHCPv4",
               "ConfigState":"configured"},
              {"Family":10,"Address":[1,2,3],"PrefixLength":64,"ConfigSource":"dhcp-pd",
               "ConfigState":"configured"}]}]}"#;
        let d: Description = serde_json::from_str(json).expect("parses");
        let link = &d.interfaces[0];
        let of = |b: DhcpBinding| binding_addresses(link, b);
        assert_eq!(of(DhcpBinding::DelegatedAddress), ["2001:db8:0:1::1/64"]);
        assert_eq!(of(DhcpBinding::Ipv4), ["192.0.2.1/24"]);
        assert!(of(DhcpBinding::PrefixDelegation).is_empty());
        // A link description without addresses (an older networkd) still parses.
        let old: Description =
            serde_json::from_str(r#"{"Interfaces":[{"Name":"lan0"}]}"#).expect("parses");
        assert!(old.interfaces[0].addresses.is_empty());
    }

    #[test]
    fn the_lease_router_is_the_gateway_of_the_dhcpv4_default_route_once_configured() {
        // systemd 252's route fields (abridged): the lease's default route, the prefix route
        // of its subnet, a foreign default route and one on its way out.
        let json = r#"{"Interfaces":[{"Name":"eth0","Routes":[
              {"Family":2,"Destination":[10,0,2,0],"DestinationPrefixLength":24,
               "ConfigSource":"DHCPv4","ConfigState":"configured"},
              {"Family":2,"Destination":[0,0,0,0],"DestinationPrefixLength":0,
               "Gateway":[192,0,2,254],"ConfigSource":"foreign","ConfigState":"configured"},
              {"Family":2,"Destination":[0,0,0,0],"DestinationPrefixLength":0,
               "Gateway":[10,0,2,9],"ConfigSource":"dhcp4","ConfigState":"configured,removing"},
              {"Family":2,"Destination":[0,0,0,0],"DestinationPrefixLength":0,
               "Gateway":[10,0,2,2],"ConfigSource":"DHCPv4","ConfigState":"configured"}]}]}"#;
        let d: Description = serde_json::from_str(json).expect("parses");
        assert_eq!(lease_gateway(&d.interfaces[0]), Some([10, 0, 2, 2].into()));
        // Before networkd has configured the route (or with UseGateway=no): none.
        let json = r#"{"Interfaces":[{"Name":"eth0","Routes":[
              {"Family":2,"Destination":[0,0,0,0],"DestinationPrefixLength":0,
               "Gateway":[10,0,2,2],"ConfigSource":"DHCPv4","ConfigState":"requesting"}]}]}"#;
        let d: Description = serde_json::from_str(json).expect("parses");
        assert_eq!(lease_gateway(&d.interfaces[0]), None);
        assert_eq!(lease_gateway(&LinkDescription::default()), None);
    }

    #[test]
    fn delegated_prefixes_are_the_managers_unreachable_dhcpv6_routes() {
        // The manager-level routes of systemd 252's Describe (abridged): the delegated /56,
        // one on its way out, and a static unreachable route of someone else's.
        let json = r#"{"Interfaces":[],"Routes":[
              {"Family":10,"Destination":[32,1,13,184,160,255,0,0,0,0,0,0,0,0,0,0],
               "DestinationPrefixLength":56,"Type":7,"ConfigSource":"DHCPv6","ConfigState":"configured"},
              {"Family":10,"Destination":[32,1,13,184,160,254,0,0,0,0,0,0,0,0,0,0],
               "DestinationPrefixLength":56,"Type":7,"ConfigSource":"DHCPv6","ConfigState":"configured,removing"},
              {"Family":10,"Destination":[253,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],
               "DestinationPrefixLength":8,"Type":7,"ConfigSource":"static","ConfigState":"configured"}]}"#;
        let d: Description = serde_json::from_str(json).expect("parses");
        assert_eq!(d.delegated_prefixes(), ["2001:db8:a0ff::/56"]);
    }

    #[test]
    fn lease_dns_servers_are_those_of_the_bindings_client() {
        // systemd 252's shape, as the QEMU image's networkd writes it.
        let json = r#"{"Interfaces":[{"Name":"eth0","DNS":[
              {"Family":2,"Address":[10,0,2,3],"ConfigSource":"DHCPv4","ConfigProvider":[10,0,2,2]},
              {"Family":10,"Address":[32,1,13,184,0,0,0,0,0,0,0,0,0,0,0,83],"ConfigSource":"DHCPv6"},
              {"Family":10,"Address":[32,1,13,184,0,0,0,0,0,0,0,0,0,0,0,84],"ConfigSource":"NDisc"},
              {"Family":2,"Address":[192,0,2,53],"ConfigSource":"static"}]}]}"#;
        let d: Description = serde_json::from_str(json).expect("parses");
        let of = |b| lease_dns_servers(&d.interfaces[0], b);
        let v4: Vec<std::net::IpAddr> = vec!["10.0.2.3".parse().expect("ip")];
        let v6: Vec<std::net::IpAddr> = vec!["2001:db8::53".parse().expect("ip")];
        assert_eq!(of(DhcpBinding::Ipv4), v4);
        assert_eq!(of(DhcpBinding::Ipv6), v6);
        assert_eq!(of(DhcpBinding::PrefixDelegation), v6);
        assert!(of(DhcpBinding::DelegatedAddress).is_empty());
    }

    #[test]
    fn a_downstream_link_with_only_a_delegated_address_runs_no_dhcp_client() {
        let b = blocks(&[(
            DhcpBinding::DelegatedAddress,
            &["[Network]", "DHCPPrefixDelegation=yes", "[DHCPPrefixDelegation]", "SubnetId=0x1"],
        )]);
        let text = compose("lan0", &b);
        assert!(text.contains("DHCP=no\nIPv6AcceptRA=no\n"), "{text}");
        assert!(!text.contains("[DHCPv6]"), "{text}");
        assert_eq!(parse(&text), b);
    }

    #[test]
    fn a_setting_with_a_line_break_is_refused() {
        let a = Artifact::new(ArtifactSpec::DhcpClient(DhcpClientSpec {
            binding: DhcpBinding::Ipv4,
            ifname: "wan0".into(),
            settings: vec!["[DHCPv4]\n[Match]".into()],
            effective: true,
            addresses: Vec::new(),
            gateway: None,
            dns_servers: Vec::new(),
        }));
        assert!(matches!(spec(&a), Err(HostError::Invalid { .. })));
    }
}
