//! What every renderer shares: reference resolution over the whole config, and the per-resource
//! output collector.

use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ipnet::IpNet;
use routerd_host::artifact::OpaqueSpec;
use routerd_host::{Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, Target};
use routerd_model::spec::dhcp::SelfAddressPolicySpec;
use routerd_model::{Config, Resource, ResourceSpec};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::intent::{Action, Intent, IntentDep};
use crate::runtime::{DhcpLease, RuntimeValues};

use super::Rendered;

/// Read-only view of the config for resolving references by `metadata.name`.
///
/// Lookups go through maps built once in `RenderCtx::new`: a config has thousands of
/// resources and most renderers resolve an interface, so a scan per lookup is quadratic.
/// A controller crate's render ([`crate::registry::KindRender`]) reads the config, the target
/// and the runtime values.
pub struct RenderCtx<'a> {
    config: &'a Config,
    /// Where units and configuration files live.
    pub target: &'a Target,
    /// What the host produced that rendering may read (ADR 0008).
    pub runtime: &'a RuntimeValues,
    interfaces: HashMap<&'a str, IfaceRef>,
    /// Declared static IPv4 addresses by interface resource name.
    addresses: HashMap<&'a str, Vec<IpNet>>,
    /// Gateway of the declared IPv4 static default route by interface resource name.
    default_gateways: HashMap<&'a str, IpAddr>,
    zones: Vec<(&'a str, &'a [String])>,
    /// Indexes controller crates built over the config, one per type ([`RenderCtx::memo`]).
    memos: std::sync::Mutex<Vec<Arc<dyn std::any::Any + Send + Sync>>>,
    /// The lease files renders asked about ([`RenderCtx::dhcp_leases`]).
    lease_files: std::sync::Mutex<BTreeSet<PathBuf>>,
}

/// A resolved interface reference: the kernel name and the artifact that provides the link.
#[derive(Clone, Debug)]
pub(crate) struct IfaceRef {
    /// Kernel interface name.
    pub ifname: String,
    /// `linux.link/IFNAME` (also for a `VLANInterface`), `linux.ppp.link/IFNAME` or
    /// `linux.ipip6.tunnel/IFNAME`.
    pub key: ArtifactKey,
}

impl<'a> RenderCtx<'a> {
    pub(crate) fn new(config: &'a Config, target: &'a Target, runtime: &'a RuntimeValues) -> Self {
        let mut ctx = Self {
            config,
            target,
            runtime,
            interfaces: HashMap::new(),
            addresses: HashMap::new(),
            default_gateways: HashMap::new(),
            zones: Vec::new(),
            memos: std::sync::Mutex::new(Vec::new()),
            lease_files: std::sync::Mutex::new(BTreeSet::new()),
        };
        // VLANs are named after their parent Interface, which may come later in the file.
        let mut vlans = Vec::new();
        for r in &config.spec.resources {
            let provided = match &r.spec {
                ResourceSpec::Interface(s) => Some((s.ifname.clone(), ArtifactKind::Link)),
                ResourceSpec::PppoeInterface(s) => {
                    Some((s.ifname.clone().unwrap_or_else(|| "ppp0".into()), ArtifactKind::PppLink))
                }
                ResourceSpec::DsLiteTunnel(s) => Some((
                    s.tunnel_name.clone().unwrap_or_else(|| r.name.clone()),
                    ArtifactKind::Ipip6Tunnel,
                )),
                ResourceSpec::Ipv4StaticAddress(a) => {
                    if let Ok(net) = a.address.parse::<IpNet>() {
                        ctx.addresses.entry(a.interface.as_str()).or_default().push(net);
                    }
                    None
                }
                ResourceSpec::Ipv4StaticRoute(s) if s.destination == "0.0.0.0/0" => {
                    if let (Some(i), Some(Ok(g))) =
                        (s.interface.as_deref(), s.via.as_deref().map(str::parse::<IpAddr>))
                    {
                        ctx.default_gateways.entry(i).or_insert(g);
                    }
                    None
                }
                ResourceSpec::Zone(z) => {
                    ctx.zones.push((r.name.as_str(), z.interfaces.as_slice()));
                    None
                }
                ResourceSpec::VlanInterface(v) => {
                    vlans.push((r.name.as_str(), v));
                    None
                }
                _ => None,
            };
            if let Some((ifname, kind)) = provided {
                ctx.provide(r.name.as_str(), ifname, kind);
            }
        }
        for (name, vlan) in vlans {
            let parent = ctx.interfaces.get(vlan.interface.as_str()).map(|p| p.ifname.clone());
            if let Some(parent) = parent {
                ctx.provide(name, vlan.ifname_on(&parent), ArtifactKind::Link);
            }
        }
        ctx
    }

    /// Records that resource `name` provides link `ifname` as an artifact of `kind`.
    fn provide(&mut self, name: &'a str, ifname: String, kind: ArtifactKind) {
        let iface = IfaceRef { key: ArtifactKey::new(kind, ifname.clone()), ifname };
        // First declaration wins, as the validator requires names to be unique.
        self.interfaces.entry(name).or_insert(iface);
    }

    /// The declared static IPv4 addresses of interface resource `iface`.
    /// The whole config being rendered.
    pub fn config(&self) -> &'a Config {
        self.config
    }

    /// The `T` built from the config by `build`, once per render of a config: how a controller
    /// crate's render finds its other resources (a record's zone) without a scan of the config
    /// per resource, which would be quadratic over 10,000 records.
    pub fn memo<T: std::any::Any + Send + Sync>(&self, build: impl FnOnce(&Config) -> T) -> Arc<T> {
        let mut memos = self.memos.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(found) = memos.iter().find_map(|m| Arc::clone(m).downcast::<T>().ok()) {
            return found;
        }
        let built = Arc::new(build(self.config));
        memos.push(Arc::clone(&built) as Arc<dyn std::any::Any + Send + Sync>);
        built
    }

    /// The live leases of the dnsmasq lease file `path` (below the target's root:
    /// [`Target::dnsmasq_leases`] for routerd's own dnsmasq) in this render's runtime values,
    /// and a note that the render reads them ([`crate::runtime::RuntimeReads::dhcp_leases`]),
    /// so the session reads the file with each observation (ADR 0008). Empty while none are
    /// known (a render from the config alone).
    pub fn dhcp_leases(&self, path: &Path) -> &'a [DhcpLease] {
        let mut files = self.lease_files.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !files.contains(path) {
            files.insert(path.to_path_buf());
        }
        self.runtime.dhcp_leases(path)
    }

    /// The lease files renders asked about so far ([`RenderCtx::dhcp_leases`]).
    pub(crate) fn lease_files(&self) -> BTreeSet<PathBuf> {
        self.lease_files.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    pub(crate) fn declared_addresses(&self, iface: &str) -> &[IpNet] {
        self.addresses.get(iface).map(Vec::as_slice).unwrap_or_default()
    }

    /// The link of the `IPv6DelegatedAddress` named `name`.
    pub(crate) fn delegated_link(&self, name: &str) -> Option<IfaceRef> {
        self.resources().find_map(|r| match &r.spec {
            ResourceSpec::Ipv6DelegatedAddress(d) if r.name == name => self.interface(&d.interface),
            _ => None,
        })
    }

    /// The `SelfAddressPolicy` named `name`.
    pub(crate) fn self_address_policy(&self, name: &str) -> Option<&'a SelfAddressPolicySpec> {
        self.resources().find_map(|r| match &r.spec {
            ResourceSpec::SelfAddressPolicy(p) if r.name == name => Some(p),
            _ => None,
        })
    }

    /// The DHCP client binding on interface resource `iface` that receives DNS servers of
    /// the family (`v6`): the `IPv4DHCPAddress`'s, or the `IPv6DHCPAddress`'s, else the
    /// `IPv6PrefixDelegation`'s (both run the link's one DHCPv6 client). `None` when the
    /// interface has no such binding.
    pub(crate) fn dhcp_client(&self, iface: &str, v6: bool) -> Option<ArtifactKey> {
        let link = self.interface(iface)?;
        let on = |i: &str| i == iface;
        let kind = if !v6 {
            self.resources()
                .any(|r| matches!(&r.spec, ResourceSpec::Ipv4DhcpAddress(d) if on(&d.interface)))
                .then_some(ArtifactKind::Dhcp4Client)
        } else if self
            .resources()
            .any(|r| matches!(&r.spec, ResourceSpec::Ipv6DhcpAddress(d) if on(&d.interface)))
        {
            Some(ArtifactKind::Dhcp6Client)
        } else {
            self.resources()
                .any(|r| {
                    matches!(&r.spec, ResourceSpec::Ipv6PrefixDelegation(d) if on(&d.interface))
                })
                .then_some(ArtifactKind::Dhcp6PrefixDelegation)
        }?;
        Some(ArtifactKey::new(kind, link.ifname))
    }

    /// The kernel names of the links a `hairpin` `ExposeService` is reflected to: the
    /// interfaces of every other zone.
    pub(crate) fn hairpin_ifnames(
        &self,
        e: &routerd_model::spec::firewall::ExposeServiceSpec,
    ) -> Vec<String> {
        let exposed = self.exposed_ifnames(e);
        self.zones()
            .into_iter()
            .filter(|(name, _)| *name != e.from_zone)
            .flat_map(|(_, ifnames)| ifnames)
            .filter(|i| !exposed.contains(i))
            .collect()
    }

    /// The kernel names of the links an `ExposeService` forwards from: its `viaInterface`, or
    /// every interface of its `fromZone`; empty when neither resolves.
    pub(crate) fn exposed_ifnames(
        &self,
        e: &routerd_model::spec::firewall::ExposeServiceSpec,
    ) -> Vec<String> {
        match e.via_interface.as_deref() {
            Some(v) => self.interface(v).map(|i| vec![i.ifname]).unwrap_or_default(),
            None => self.zone_ifnames(&e.from_zone).unwrap_or_default(),
        }
    }

    pub(crate) fn resources(&self) -> impl Iterator<Item = &'a Resource> {
        self.config.spec.resources.iter()
    }

    /// Resolves an interface reference (an `Interface`, `PPPoEInterface`, `VLANInterface` or
    /// `DSLiteTunnel` resource name) to its kernel name and link artifact.
    pub(crate) fn interface(&self, name: &str) -> Option<IfaceRef> {
        self.interfaces.get(name).cloned()
    }

    /// Kernel names of a zone's interfaces, in declaration order.
    pub(crate) fn zone_ifnames(&self, zone: &str) -> Option<Vec<String>> {
        self.zones.iter().find(|(name, _)| *name == zone).map(|(_, members)| {
            members.iter().filter_map(|i| self.interface(i)).map(|i| i.ifname).collect()
        })
    }

    /// Every zone as (name, kernel interface names), in declaration order.
    pub(crate) fn zones(&self) -> Vec<(String, Vec<String>)> {
        self.zones
            .iter()
            .map(|(name, _)| (name.to_string(), self.zone_ifnames(name).unwrap_or_default()))
            .collect()
    }

    /// The gateway of a declared static default route on interface `iface` (IPv4).
    pub(crate) fn default_gateway_v4(&self, iface: &str) -> Option<IpAddr> {
        self.default_gateways.get(iface).copied()
    }

    /// Keys of the declared static addresses on `iface` whose subnet contains `gateway`, so a
    /// route via `gateway` can depend on them (the kernel refuses it with ENETUNREACH before).
    pub(crate) fn addresses_covering(&self, iface: &str, gateway: IpAddr) -> Vec<ArtifactKey> {
        let (Some(link), Some(nets)) = (self.interfaces.get(iface), self.addresses.get(iface))
        else {
            return Vec::new();
        };
        nets.iter()
            .filter(|net| net.contains(&gateway))
            .map(|net| {
                ArtifactSpec::Address(routerd_host::artifact::AddressSpec {
                    ifname: link.ifname.clone(),
                    address: *net,
                })
                .key()
            })
            .collect()
    }
}

/// Collects one resource's intents and warnings.
pub struct Out {
    owner: Arc<str>,
    intents: Vec<Intent>,
    warnings: Vec<String>,
}

impl Out {
    pub(crate) fn new(res: &Resource) -> Self {
        Self { owner: res.id().into(), intents: Vec::new(), warnings: Vec::new() }
    }

    /// The owner resource ID.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Declares an artifact routerd manages; returns its key for dependents.
    pub fn ensure(&mut self, spec: ArtifactSpec, dependencies: Vec<IntentDep>) -> ArtifactKey {
        self.push(spec, Action::Ensure, dependencies)
    }

    /// [`Out::ensure`] for an artifact every resource that needs it declares alike by design
    /// (the dnsmasq unit): shared without the warning two resources on one artifact get.
    pub(crate) fn ensure_common(
        &mut self,
        spec: ArtifactSpec,
        dependencies: Vec<IntentDep>,
    ) -> ArtifactKey {
        let key = self.ensure(spec, dependencies);
        if let Some(intent) = self.intents.last_mut() {
            intent.common = true;
        }
        key
    }

    /// Declares an artifact routerd relies on but never changes.
    pub fn observe(&mut self, spec: ArtifactSpec) -> ArtifactKey {
        self.push(spec, Action::Observe, Vec::new())
    }

    /// Declares an artifact of a kind without a configurator in this build.
    pub(crate) fn ensure_opaque(
        &mut self,
        kind: ArtifactKind,
        name: impl Into<String>,
        attributes: impl Serialize,
        dependencies: Vec<IntentDep>,
    ) -> ArtifactKey {
        let spec = ArtifactSpec::Opaque(OpaqueSpec {
            kind,
            name: name.into(),
            attributes: serde_json::to_value(attributes).unwrap_or(serde_json::Value::Null),
        });
        self.ensure(spec, dependencies)
    }

    /// Adds a dependency to the intents rendered since there were `start` of them (`when`
    /// gating: 0 for a whole resource, more for a default-route candidate's own `when`).
    pub(crate) fn depend_from(&mut self, start: usize, dep: IntentDep) {
        for intent in self.intents.iter_mut().skip(start) {
            intent.dependencies.push(dep.clone());
        }
    }

    /// How many intents are rendered so far.
    pub(crate) fn len(&self) -> usize {
        self.intents.len()
    }

    /// Records a warning shown with the resource.
    pub fn warn(&mut self, message: impl Into<String>) {
        self.warnings.push(message.into());
    }

    /// Records that a reference did not resolve (the validator should have caught it).
    pub(crate) fn unresolved(&mut self, what: &str, name: &str) {
        self.warn(format!("{what} {name:?} does not resolve; its artifacts are not rendered"));
    }

    pub(crate) fn finish(mut self, rendered: &mut Rendered) {
        if !self.warnings.is_empty() {
            rendered.warnings.entry(self.owner.to_string()).or_default().extend(self.warnings);
        }
        // The dependency lists are final: no growth slack kept for the desired state's life
        // (tens of thousands of intents in a large config; docs/benchmarks.md, peak RSS).
        for intent in &mut self.intents {
            intent.dependencies.shrink_to_fit();
        }
        rendered.intents.extend(self.intents);
    }

    fn push(
        &mut self,
        spec: ArtifactSpec,
        action: Action,
        dependencies: Vec<IntentDep>,
    ) -> ArtifactKey {
        let artifact = Arc::new(Artifact::new(spec));
        let key = artifact.key.clone();
        let apply_with = key.kind.apply_with();
        self.intents.push(Intent {
            artifact,
            owner: Arc::clone(&self.owner),
            co_owners: Vec::new(),
            common: false,
            action,
            apply_with,
            dependencies,
        });
        key
    }
}

/// A dependency on `key` ([`IntentDep::on`]).
pub(crate) fn dep(key: &ArtifactKey, description: impl Into<String>) -> IntentDep {
    IntentDep::on(key, description)
}

/// A dependency on the verdict of HealthCheck `check`: met only while it is healthy.
pub(crate) fn healthy_dep(check: &str, description: impl Into<String>) -> IntentDep {
    IntentDep {
        healthy: true,
        ..dep(&ArtifactKey::new(ArtifactKind::HealthCheck, check), description)
    }
}

/// An nft table name `PREFIX<resource name>` that nft accepts: `-` becomes `_`, and names
/// with any other character outside ASCII letters, digits and `_`, or longer than 64 bytes, are
/// folded and suffixed with a short hash of the original. Two resources folding to the same
/// name (`a-b`, `a_b`) give one artifact key, which the engine reports as a conflict.
pub(crate) fn nft_table_name(prefix: &str, resource_name: &str) -> String {
    let dashed = resource_name.replace('-', "_");
    let clean = dashed.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if clean && dashed.len() <= 64 {
        return format!("{prefix}{dashed}");
    }
    let folded: String = resource_name
        .chars()
        .take(40)
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let hash = Sha256::digest(resource_name.as_bytes());
    let short: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{prefix}{folded}_{short}")
}

#[cfg(test)]
mod tests {
    use super::nft_table_name;

    #[test]
    fn nft_table_names_are_plain_and_distinct() {
        assert_eq!(nft_table_name("routerd_snat_", "lan"), "routerd_snat_lan");
        assert_eq!(nft_table_name("routerd_snat_", "lan-a"), "routerd_snat_lan_a");
        let odd = nft_table_name("routerd_snat_", "lan.a");
        assert!(
            odd.starts_with("routerd_snat_lan_a_") && odd.len() == "routerd_snat_lan_a_".len() + 8
        );
    }
}
