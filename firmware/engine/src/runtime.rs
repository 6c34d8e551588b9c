//! Runtime values: what rendering reads from the host besides the config, for attributes known
//! only once something on the host has produced them (the address networkd derives from a
//! delegated prefix, which a DS-Lite tunnel uses as its local end; the addresses on a link a
//! `SelfAddressPolicy` chooses from; the HealthCheck verdicts a default-route policy's mark
//! follows; the AFTR the scheduler resolved for a tunnel; the router of a DHCPv4 lease a
//! default-route candidate goes through; the DHCP leases dnsmasq granted, which a `DNSZone`
//! names). ADR 0008.
//!
//! They come from external items of an observation (the leases from dnsmasq's lease file, which
//! the session reads with it), so the desired state is a pure function of the config and these
//! values: a session renders again when an observation brings other values, and the graph
//! withdraws what needs a value while it is missing (the dependency on its source is met only
//! while the source has it: [`crate::intent::IntentDep::carries`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use ipnet::{IpNet, Ipv6Net};
pub use routerd_host::dnsmasq::leases::DhcpLease;
use routerd_host::{Artifact, ArtifactKey, ArtifactKind, ArtifactSpec};
use routerd_model::spec::{StateMatchSpec, WhenSpec};

/// The runtime values one observation gives. Empty when nothing on the host produced any (and
/// for a render from the config alone).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuntimeValues {
    /// The IPv6 addresses systemd-networkd configured from a delegated prefix, by downstream
    /// link name (`dhcp.ipv6.delegatedAddress` bindings' observed `addresses`), in the order
    /// networkd lists them.
    pub delegated: BTreeMap<String, Vec<Ipv6Net>>,
    /// The IPv4 and IPv6 addresses on each link the render asks about
    /// ([`RuntimeReads::address_links`]), IPv6 link-local ones left out, in ascending order.
    /// Links without addresses are absent.
    pub interface_addresses: BTreeMap<String, Vec<IpNet>>,
    /// The verdicts of the HealthChecks the render asks about ([`RuntimeReads::health_checks`]),
    /// by check name: `true` while healthy. Checks without a verdict yet are absent.
    pub health: BTreeMap<String, bool>,
    /// The AFTR addresses the scheduler resolved, by DS-Lite tunnel link name
    /// (`routerd.aftrAddress` items), in the order of the answer. Tunnels without an answer
    /// with addresses are absent.
    pub aftr: BTreeMap<String, Vec<std::net::Ipv6Addr>>,
    /// The routers of the DHCPv4 leases the render asks about ([`RuntimeReads::lease_gateways`]),
    /// by link name (`dhcp.ipv4.client` bindings' observed `gateway`). Links whose lease has
    /// none (yet) are absent.
    pub lease_gateways: BTreeMap<String, std::net::Ipv4Addr>,
    /// Whether each `when.state` condition the render asks about ([`RuntimeReads::state_gates`])
    /// holds, as `(variable, condition, holds)`, in the order asked. Evaluated at the time
    /// planned for (the `now` of [`RuntimeValues::from_observed`]), so a `for` duration running
    /// out changes it (the state scheduler asks for a reconcile then).
    pub gates: Vec<(String, StateMatchSpec, bool)>,
    /// The DNS servers of the DHCP clients the render asks about ([`RuntimeReads::lease_dns`]),
    /// by binding key (`dhcp.ipv4.client/wan0`), in networkd's order. Clients without any
    /// are absent.
    pub lease_dns: BTreeMap<ArtifactKey, Vec<std::net::IpAddr>>,
    /// The live leases of the dnsmasq lease files the render asks about
    /// ([`RuntimeReads::dhcp_leases`]), by file path (below the target's root, as asked), in
    /// file order: leases that ended before the observation's time (the `now` of
    /// [`RuntimeValues::with_dhcp_leases`]) are left out. Files without live leases (absent,
    /// empty, unreadable) are absent.
    pub dhcp_leases: BTreeMap<PathBuf, Vec<DhcpLease>>,
}

/// What a render reads from an observation besides the delegated addresses: only these are
/// bound, so a config that reads none renders once ([`RuntimeValues::from_observed`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuntimeReads {
    /// Links whose addresses are read: the `interfaceAddress` candidates of
    /// `SelfAddressPolicy` resources, the exposed links of `hairpin` `ExposeService`s, and the
    /// underlying links of DS-Lite tunnels whose local end is a suffix on the link's prefix.
    pub address_links: BTreeSet<String>,
    /// HealthChecks whose verdicts are read (those of the marked, table-routed candidates and
    /// the `routeSet` candidates of an `IPv4DefaultRoutePolicy`, whose mark follows the best
    /// healthy one).
    pub health_checks: BTreeSet<String>,
    /// Links whose DHCPv4 lease's router is read (the `gatewaySource: dhcp4` candidates of
    /// `IPv4DefaultRoutePolicy` resources).
    pub lease_gateways: BTreeSet<String>,
    /// `when.state` conditions whose truth is read (those of the marked, table-routed and the
    /// `routeSet` candidates of an `IPv4DefaultRoutePolicy`, whose mark skips a candidate
    /// gated off).
    pub state_gates: Vec<(String, StateMatchSpec)>,
    /// DHCP client bindings whose DNS servers are read (the `dhcp4` / `dhcp6` upstreams of
    /// `DNSConditionalForwarder`, `IPv4DHCPServer` and `IPv4DHCPScope` resources).
    pub lease_dns: BTreeSet<ArtifactKey>,
    /// dnsmasq lease files whose leases are read, below the target's root (a `DNSZone`'s
    /// `dhcpDerived`: routerd's own dnsmasq's file, or its `leaseFile`). A controller crate's
    /// render asks through [`crate::render::RenderCtx::dhcp_leases`], which records the file
    /// here. The session reads them with each observation (`routerd_host::dnsmasq::leases`).
    pub dhcp_leases: BTreeSet<PathBuf>,
}

impl RuntimeValues {
    /// The values in `observed` (the inventory of one snapshot, by key). Interface addresses
    /// and health verdicts are read only for what `reads` names: what the config asks about,
    /// so that a config asking about nothing binds no value and renders once. `when.state`
    /// conditions are evaluated at `now` (milliseconds since the Unix epoch, the plan's
    /// [`crate::plan::PlanInput::now`]).
    pub fn from_observed(
        observed: &BTreeMap<ArtifactKey, Arc<Artifact>>,
        reads: &RuntimeReads,
        now: u64,
    ) -> Self {
        let address_links = &reads.address_links;
        let mut delegated = BTreeMap::new();
        // The map is in key order, kind first: each kind is one range.
        for artifact in kind_range(observed, ArtifactKind::Dhcp6DelegatedAddress) {
            let ArtifactSpec::DhcpClient(d) = &artifact.spec else { continue };
            let addresses: Vec<Ipv6Net> =
                d.addresses.iter().filter_map(|a| a.parse().ok()).collect();
            if !addresses.is_empty() {
                delegated.insert(artifact.key.name.clone(), addresses);
            }
        }
        let mut interface_addresses: BTreeMap<String, Vec<IpNet>> = BTreeMap::new();
        if !address_links.is_empty() {
            let listed = kind_range(observed, ArtifactKind::Ipv4Address)
                .chain(kind_range(observed, ArtifactKind::Ipv6Address));
            for artifact in listed {
                let ArtifactSpec::Address(a) = &artifact.spec else { continue };
                if address_links.contains(&a.ifname) && !is_link_local(&a.address) {
                    interface_addresses.entry(a.ifname.clone()).or_default().push(a.address);
                }
            }
            for addresses in interface_addresses.values_mut() {
                addresses.sort_unstable();
                addresses.dedup();
            }
        }
        let health = kind_range(observed, ArtifactKind::HealthCheck)
            .filter(|a| reads.health_checks.contains(&a.key.name))
            .map(|a| (a.key.name.clone(), crate::health::is_healthy(&a.spec)))
            .collect();
        let aftr = kind_range(observed, ArtifactKind::AftrAddress)
            .filter_map(|a| match &a.spec {
                ArtifactSpec::Aftr(spec) if !spec.addresses.is_empty() => {
                    Some((spec.ifname.clone(), spec.addresses.clone()))
                }
                _ => None,
            })
            .collect();
        let lease_gateways = kind_range(observed, ArtifactKind::Dhcp4Client)
            .filter(|a| reads.lease_gateways.contains(&a.key.name))
            .filter_map(|a| match &a.spec {
                ArtifactSpec::DhcpClient(c) => Some((c.ifname.clone(), c.gateway?)),
                _ => None,
            })
            .collect();
        let gates = if reads.state_gates.is_empty() {
            Vec::new()
        } else {
            reads
                .state_gates
                .iter()
                .map(|(var, condition)| {
                    let key = ArtifactKey::new(ArtifactKind::StateVariable, var.clone());
                    let holds = observed
                        .get(&key)
                        .is_some_and(|v| crate::state::holds(condition, &v.spec, now));
                    (var.clone(), condition.clone(), holds)
                })
                .collect()
        };
        let lease_dns = reads
            .lease_dns
            .iter()
            .filter_map(|key| match &observed.get(key)?.spec {
                ArtifactSpec::DhcpClient(c) if !c.dns_servers.is_empty() => {
                    Some((key.clone(), c.dns_servers.clone()))
                }
                _ => None,
            })
            .collect();
        Self {
            delegated,
            interface_addresses,
            health,
            aftr,
            lease_gateways,
            gates,
            lease_dns,
            dhcp_leases: BTreeMap::new(),
        }
    }

    /// These values with the leases of `files` (each lease file the render asked about, as
    /// the session read it with the observation) that are live at `now` (milliseconds since
    /// the Unix epoch, the plan's [`crate::plan::PlanInput::now`]): a lease that ended is left
    /// out even while dnsmasq has not rewritten the file yet.
    pub fn with_dhcp_leases(mut self, files: &BTreeMap<PathBuf, Vec<DhcpLease>>, now: u64) -> Self {
        let now_secs = now / 1000;
        self.dhcp_leases = files
            .iter()
            .map(|(path, leases)| {
                let live: Vec<DhcpLease> =
                    leases.iter().filter(|l| l.is_live(now_secs)).cloned().collect();
                (path.clone(), live)
            })
            .filter(|(_, live)| !live.is_empty())
            .collect();
        self
    }

    /// The live leases of lease file `path`, when the render asked about it.
    pub fn dhcp_leases(&self, path: &std::path::Path) -> &[DhcpLease] {
        self.dhcp_leases.get(path).map(Vec::as_slice).unwrap_or_default()
    }

    /// The DNS servers DHCP client `binding` received, when the render asked about it.
    pub fn lease_dns(&self, binding: &ArtifactKey) -> &[std::net::IpAddr] {
        self.lease_dns.get(binding).map(Vec::as_slice).unwrap_or_default()
    }

    /// Whether every condition of `when` holds; `None` when the render did not ask about
    /// one of them.
    pub fn when_holds(&self, when: &WhenSpec) -> Option<bool> {
        let mut all = true;
        for (var, condition) in &when.state {
            let (_, _, holds) = self.gates.iter().find(|(v, c, _)| v == var && c == condition)?;
            all &= holds;
        }
        Some(all)
    }

    /// The router of the DHCPv4 lease on `ifname`, when the render asked about it and the
    /// lease has one.
    pub fn lease_gateway(&self, ifname: &str) -> Option<std::net::Ipv4Addr> {
        self.lease_gateways.get(ifname).copied()
    }

    /// Whether HealthCheck `check` is healthy; `None` without a verdict (or when the render
    /// did not ask about it).
    pub fn healthy(&self, check: &str) -> Option<bool> {
        self.health.get(check).copied()
    }

    /// The addresses on `ifname` when it is one of the links the render asked about.
    pub fn interface_addresses(&self, ifname: &str) -> &[IpNet] {
        self.interface_addresses.get(ifname).map(Vec::as_slice).unwrap_or_default()
    }

    /// The first address networkd derived on `ifname` from a delegated prefix, if any.
    pub fn delegated_address(&self, ifname: &str) -> Option<Ipv6Net> {
        self.delegated.get(ifname).and_then(|a| a.first().copied())
    }
}

/// The artifacts of `kind` in `observed`.
fn kind_range(
    observed: &BTreeMap<ArtifactKey, Arc<Artifact>>,
    kind: ArtifactKind,
) -> impl Iterator<Item = &Arc<Artifact>> {
    let first = ArtifactKey::new(kind, String::new());
    observed.range(first..).take_while(move |(k, _)| k.kind == kind).map(|(_, a)| a)
}

/// An IPv6 link-local address (`fe80::/10`, RFC 4291 section 2.5.6): never a self address
/// announced to a LAN.
fn is_link_local(net: &IpNet) -> bool {
    matches!(net, IpNet::V6(n) if n.addr().segments()[0] & 0xffc0 == 0xfe80)
}

#[cfg(test)]
mod tests {
    use routerd_host::artifact::{DhcpBinding, DhcpClientSpec};

    use super::*;

    fn binding(binding: DhcpBinding, ifname: &str, addresses: &[&str]) -> Arc<Artifact> {
        Arc::new(Artifact::new(ArtifactSpec::DhcpClient(DhcpClientSpec {
            binding,
            ifname: ifname.into(),
            settings: Vec::new(),
            effective: true,
            addresses: addresses.iter().map(|a| a.to_string()).collect(),
            gateway: None,
            dns_servers: Vec::new(),
        })))
    }

    #[test]
    fn delegated_addresses_are_read_from_the_bindings_only() {
        let observed: BTreeMap<ArtifactKey, Arc<Artifact>> = [
            binding(DhcpBinding::DelegatedAddress, "lan0", &["2001:db8:0:2a::1/64"]),
            binding(DhcpBinding::DelegatedAddress, "lan1", &[]),
            binding(DhcpBinding::Ipv6, "wan0", &["2001:db8:ffff::5/128"]),
        ]
        .into_iter()
        .map(|a| (a.key.clone(), a))
        .collect();
        let v = RuntimeValues::from_observed(&observed, &RuntimeReads::default(), 0);
        assert_eq!(v.delegated_address("lan0"), "2001:db8:0:2a::1/64".parse().ok());
        assert_eq!(v.delegated_address("lan1"), None);
        assert_eq!(v.delegated.len(), 1, "{v:?}");
        let none = RuntimeValues::from_observed(&BTreeMap::new(), &RuntimeReads::default(), 0);
        assert_eq!(none, RuntimeValues::default());
    }

    #[test]
    fn state_gates_and_lease_gateways_are_read_only_when_asked_about() {
        use routerd_host::artifact::{StateVariableSpec, StateVariableStatus};
        let variable = |value: &str| {
            Arc::new(Artifact::new(ArtifactSpec::State(StateVariableSpec {
                variable: "wan.mode".into(),
                status: StateVariableStatus::Set,
                value: Some(value.into()),
                since_ms: Some(0),
                detail: None,
            })))
        };
        let mut lease = DhcpClientSpec {
            binding: DhcpBinding::Ipv4,
            ifname: "wan0".into(),
            settings: Vec::new(),
            effective: true,
            addresses: vec!["10.0.2.15/24".into()],
            gateway: Some([10, 0, 2, 2].into()),
            dns_servers: Vec::new(),
        };
        let observed = |value: &str, lease: &DhcpClientSpec| {
            [variable(value), Arc::new(Artifact::new(ArtifactSpec::DhcpClient(lease.clone())))]
                .into_iter()
                .map(|a| (a.key.clone(), a))
                .collect::<BTreeMap<_, _>>()
        };
        let fiber = StateMatchSpec { equals: Some("fiber".into()), ..Default::default() };
        let when = WhenSpec { state: [("wan.mode".to_string(), fiber.clone())].into() };
        let reads = RuntimeReads {
            state_gates: vec![("wan.mode".into(), fiber)],
            lease_gateways: BTreeSet::from(["wan0".to_string()]),
            ..Default::default()
        };
        let v = RuntimeValues::from_observed(&observed("fiber", &lease), &reads, 0);
        assert_eq!(v.when_holds(&when), Some(true));
        assert_eq!(v.lease_gateway("wan0"), Some([10, 0, 2, 2].into()));
        let v = RuntimeValues::from_observed(&observed("lte", &lease), &reads, 0);
        assert_eq!(v.when_holds(&when), Some(false));
        lease.gateway = None;
        let v = RuntimeValues::from_observed(&observed("lte", &lease), &reads, 0);
        assert_eq!(v.lease_gateway("wan0"), None);
        // Not asked about: not read.
        let v =
            RuntimeValues::from_observed(&observed("fiber", &lease), &RuntimeReads::default(), 0);
        assert_eq!(v, RuntimeValues::default());
        assert_eq!(v.when_holds(&when), None);
    }

    #[test]
    fn only_the_leases_live_at_the_observation_are_bound() {
        let lease = |expiry: Option<u64>, address: &str| DhcpLease {
            expiry,
            address: address.parse().expect("valid in the test"),
            hostname: Some("laptop".into()),
            temporary: false,
        };
        let path = PathBuf::from("/var/lib/routerd/dnsmasq/dnsmasq.leases");
        let expired = PathBuf::from("/var/lib/other.leases");
        let files = BTreeMap::from([
            (
                path.clone(),
                vec![
                    lease(Some(999), "192.0.2.1"),
                    lease(Some(1000), "192.0.2.2"),
                    lease(None, "192.0.2.3"),
                ],
            ),
            (expired.clone(), vec![lease(Some(10), "192.0.2.9")]),
        ]);
        let v = RuntimeValues::default().with_dhcp_leases(&files, 1_000_500);
        let live: Vec<String> =
            v.dhcp_leases(&path).iter().map(|l| l.address.to_string()).collect();
        assert_eq!(live, ["192.0.2.2", "192.0.2.3"]);
        assert!(v.dhcp_leases(&expired).is_empty());
        assert_eq!(v.dhcp_leases.len(), 1, "a file without live leases is absent: {v:?}");
        // Nothing read, nothing bound: a config without lease reads renders once.
        let none = RuntimeValues::default().with_dhcp_leases(&BTreeMap::new(), 1_000_500);
        assert_eq!(none, RuntimeValues::default());
    }

    fn address(ifname: &str, address: &str) -> Arc<Artifact> {
        let address = address.parse().expect("address");
        let spec = routerd_host::artifact::AddressSpec { ifname: ifname.into(), address };
        Arc::new(Artifact::new(ArtifactSpec::Address(spec)))
    }

    #[test]
    fn interface_addresses_are_read_only_for_the_links_asked_about_without_link_local_ones() {
        let observed: BTreeMap<ArtifactKey, Arc<Artifact>> = [
            address("lan0", "fd00:53::53/64"),
            address("lan0", "fe80::1/64"),
            address("lan0", "192.168.1.1/24"),
            address("lan0", "2001:db8::1/64"),
            address("wan0", "198.51.100.2/24"),
        ]
        .into_iter()
        .map(|a| (a.key.clone(), a))
        .collect();
        let reads = RuntimeReads {
            address_links: BTreeSet::from(["lan0".to_string()]),
            ..Default::default()
        };
        let v = RuntimeValues::from_observed(&observed, &reads, 0);
        let on_lan: Vec<String> =
            v.interface_addresses("lan0").iter().map(ToString::to_string).collect();
        assert_eq!(on_lan, ["192.168.1.1/24", "2001:db8::1/64", "fd00:53::53/64"]);
        assert!(v.interface_addresses("wan0").is_empty(), "{v:?}");
        // A config asking about no link binds no value: it renders once.
        assert_eq!(
            RuntimeValues::from_observed(&observed, &RuntimeReads::default(), 0),
            RuntimeValues::default()
        );
    }
}
