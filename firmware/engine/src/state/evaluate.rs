//! StatePolicy conditions evaluated against the host, from inside the target namespace. The
//! supervisor's scheduler decides when (every [`EVALUATION_INTERVAL`](super::EVALUATION_INTERVAL)
//! and when the host's links or addresses change) and keeps the values in the
//! [`StateStore`](super::StateStore).
//!
//! Conditions: `ipv6Address` reads the link's addresses over rtnetlink (a global unicast
//! address that has finished duplicate address detection); `ipv6PrefixDelegation` reads the
//! delegated prefixes the DHCPv6 client marks with unreachable routes (RFC 7084 WPD-5);
//! `dnsResolve` asks for AAAA records, of the configured servers from inside the namespace
//! (`static`), of the servers a DHCP lease gave (`lease`, as networkd reports them) or of the
//! system's resolver (`system`).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ipnet::Ipv6Net;
use routerd_host::artifact::DhcpBinding;
use routerd_host::bus::SystemBus;
use routerd_host::netlink::NetlinkBackend;
use routerd_host::networkd::{Networkd, lease_dns_servers};
use routerd_host::{ArtifactKey, Netns, probe};

use super::{Condition, Evaluation, RESOLVE_TIMEOUT, Resolvers, StatePlan, prefixes_of};

/// What the conditions of one config's policies read, inside one namespace: the netlink
/// socket (opened on first use) and how long each `IPv6PrefixDelegation` has been without a
/// prefix. A new evaluator (a new config) starts those counts again.
pub struct Evaluator {
    netns: Netns,
    /// The system bus, on which networkd tells the DNS servers of a DHCP lease.
    bus: Arc<SystemBus>,
    netlink: Option<NetlinkBackend>,
    /// When each `IPv6PrefixDelegation` was first seen without a prefix, for `unavailableFor`;
    /// absent while it has one.
    missing_since: HashMap<String, Instant>,
}

impl Evaluator {
    /// An evaluator inside `netns`, asking networkd on `bus` for lease DNS servers; no socket
    /// is opened before the first evaluation.
    pub fn new(netns: Netns, bus: Arc<SystemBus>) -> Self {
        Self { netns, bus, netlink: None, missing_since: HashMap::new() }
    }

    /// The first entry of `plan` whose conditions all hold, and why; or why none does.
    pub async fn evaluate(&mut self, plan: &StatePlan) -> Evaluation {
        let mut misses = Vec::new();
        'entries: for entry in &plan.values {
            let mut reasons = Vec::new();
            for condition in &entry.conditions {
                match self.check(condition).await {
                    Ok(why) => reasons.push(why),
                    Err(why) => {
                        misses.push(format!("{}: {why}", entry.value));
                        continue 'entries;
                    }
                }
            }
            let detail = if reasons.is_empty() {
                "the entry has no conditions".to_string()
            } else {
                reasons.join("; ")
            };
            return Evaluation { value: Some(entry.value.clone()), detail };
        }
        Evaluation { value: None, detail: format!("no entry holds ({})", misses.join("; ")) }
    }

    /// The netlink socket, opened on first use.
    fn netlink(&mut self) -> Result<&NetlinkBackend, String> {
        if self.netlink.is_none() {
            self.netlink = Some(NetlinkBackend::new(&self.netns).map_err(|e| e.to_string())?);
        }
        self.netlink.as_ref().ok_or_else(|| "no netlink".to_string())
    }

    /// Whether one condition holds: `Ok` with what shows it, `Err` with why not.
    async fn check(&mut self, condition: &Condition) -> Result<String, String> {
        match condition {
            Condition::Unsupported(why) => Err(why.clone()),
            Condition::Ipv6Address { ifname, global } => {
                let backend = self.netlink()?;
                let addresses = backend.usable_addresses(true).await.map_err(|e| e.to_string())?;
                let found = addresses.iter().find(|a| {
                    a.ifname == *ifname
                        && matches!(a.address.addr(), IpAddr::V6(v6) if is_global_unicast(&v6))
                });
                match (found, global) {
                    (Some(a), true) => Ok(format!("{ifname} has {}", a.address)),
                    (None, true) => Err(format!("{ifname} has no global IPv6 address")),
                    (Some(a), false) => Err(format!("{ifname} has {}", a.address)),
                    (None, false) => Ok(format!("{ifname} has no global IPv6 address")),
                }
            }
            Condition::PrefixDelegation { resource, downstream, available, unavailable_for } => {
                let backend = self.netlink()?;
                let delegated = backend.delegated_prefixes().await.map_err(|e| e.to_string())?;
                let addresses = match downstream {
                    Some(_) => backend.usable_addresses(true).await.map_err(|e| e.to_string())?,
                    None => Vec::new(),
                };
                let mine = prefixes_of(downstream.as_deref(), &delegated, &addresses);
                let missing_for = if mine.is_empty() {
                    self.missing_since
                        .entry(resource.clone())
                        .or_insert_with(Instant::now)
                        .elapsed()
                } else {
                    self.missing_since.remove(resource);
                    Duration::ZERO
                };
                prefix_verdict(resource, &mine, *available, *unavailable_for, missing_for)
            }
            Condition::DnsResolve { name, resolvers } => {
                let resolvers = match resolvers {
                    Resolvers::Lease { client } => self.lease_resolvers(client).await?,
                    other => other.clone(),
                };
                let (found, _) = resolve_aaaa(&self.netns, name, &resolvers).await?;
                match found.first() {
                    Some(a) => Ok(format!("{name} resolves to {a}")),
                    None => Err(format!("{name} has no AAAA record")),
                }
            }
        }
    }

    /// The DNS servers DHCP client `client` received, as networkd reports them now, on port
    /// 53: `Err` while it has none (no lease yet) or networkd cannot be asked.
    async fn lease_resolvers(&self, client: &ArtifactKey) -> Result<Resolvers, String> {
        let binding =
            DhcpBinding::of(client.kind).ok_or_else(|| format!("{client} is no DHCP client"))?;
        let networkd = Networkd::new(Arc::clone(&self.bus));
        let links = networkd.links(client).await.map_err(|e| e.to_string())?;
        let servers: Vec<SocketAddr> = links
            .get(&client.name)
            .map(|link| lease_dns_servers(link, binding))
            .unwrap_or_default()
            .into_iter()
            .map(|ip| SocketAddr::new(ip, 53))
            .collect();
        if servers.is_empty() {
            return Err(format!("{client} has received no DNS servers"));
        }
        Ok(Resolvers::Static(servers))
    }
}

/// The AAAA addresses of `name`, and who answered: the first of the static servers that
/// answers (asked from inside `netns`), or the system's resolver. Shared by `dnsResolve`
/// conditions and the AFTR lookups of DS-Lite tunnels ([`crate::aftr::lookup`]).
///
/// Errors: no server answered (each one's error), or the system's lookup failed or timed out.
pub async fn resolve_aaaa(
    netns: &Netns,
    name: &str,
    resolvers: &Resolvers,
) -> Result<(Vec<Ipv6Addr>, String), String> {
    match resolvers {
        Resolvers::System => {
            let found = tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((name, 0)))
                .await
                .map_err(|_| format!("resolving {name}: no answer within {RESOLVE_TIMEOUT:?}"))?
                .map_err(|e| format!("resolving {name}: {e}"))?;
            let found = found
                .filter_map(|s| match s.ip() {
                    IpAddr::V6(a) => Some(a),
                    IpAddr::V4(_) => None,
                })
                .collect();
            Ok((found, "the system's resolver".to_string()))
        }
        Resolvers::Static(servers) => {
            let mut errors = Vec::new();
            for server in servers {
                match probe::resolve_aaaa(netns, *server, name, RESOLVE_TIMEOUT).await {
                    Ok(found) => return Ok((found, server.to_string())),
                    Err(e) => errors.push(format!("{server}: {e}")),
                }
            }
            Err(format!("resolving {name}: {}", errors.join("; ")))
        }
        // The evaluator reads a lease's servers first; nothing else asks a lease.
        Resolvers::Lease { client } => Err(format!("resolving {name}: {client}'s servers unread")),
    }
}

/// Whether an `ipv6PrefixDelegation` condition holds for `resource` with the prefixes `mine`,
/// none of which it has had for `missing_for`: `Ok` with what shows it, `Err` with why not.
fn prefix_verdict(
    resource: &str,
    mine: &[Ipv6Net],
    available: bool,
    unavailable_for: Option<Duration>,
    missing_for: Duration,
) -> Result<String, String> {
    let listed = || mine.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    let missing = Duration::from_secs(missing_for.as_secs());
    match (mine.is_empty(), available, unavailable_for) {
        (false, true, _) => Ok(format!("{resource} has {}", listed())),
        (true, true, _) => Err(format!("{resource} has no delegated prefix")),
        (false, false, _) => Err(format!("{resource} has {}", listed())),
        (true, false, None) => Ok(format!("{resource} has no delegated prefix")),
        (true, false, Some(d)) if missing_for >= d => {
            Ok(format!("{resource} has had no delegated prefix for {missing:?}"))
        }
        (true, false, Some(d)) => {
            Err(format!("{resource} has had no delegated prefix for {missing:?}, less than {d:?}"))
        }
    }
}

/// A global unicast IPv6 address: not loopback, unspecified, multicast, link-local
/// (`fe80::/10`) or unique local (`fc00::/7`, RFC 4193), which a router holds without any
/// upstream.
fn is_global_unicast(a: &Ipv6Addr) -> bool {
    !(a.is_loopback()
        || a.is_unspecified()
        || a.is_multicast()
        || a.is_unicast_link_local()
        || a.is_unique_local())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_delegation_condition_reads_the_prefixes_and_how_long_there_were_none() {
        let prefix: Vec<Ipv6Net> = vec!["2001:db8:a0ff::/56".parse().expect("net")];
        let secs = Duration::from_secs;
        let v = |mine: &[Ipv6Net], available, want: Option<Duration>, missing| {
            prefix_verdict("isp-pd", mine, available, want, missing)
        };
        assert_eq!(v(&prefix, true, None, secs(0)), Ok("isp-pd has 2001:db8:a0ff::/56".into()));
        assert!(v(&[], true, None, secs(0)).is_err());
        assert!(v(&prefix, false, None, secs(0)).is_err());
        assert!(v(&[], false, None, secs(0)).is_ok());
        assert_eq!(
            v(&[], false, Some(secs(30)), secs(12)),
            Err("isp-pd has had no delegated prefix for 12s, less than 30s".into())
        );
        assert!(v(&[], false, Some(secs(30)), secs(31)).is_ok());
    }

    #[test]
    fn only_addresses_an_upstream_gives_count_as_global() {
        for (text, global) in [
            ("2001:db8::2", true),
            ("2400:4050::1", true),
            ("fd00::1", false),
            ("fe80::1", false),
            ("::1", false),
            ("ff02::1", false),
        ] {
            let a: Ipv6Addr = text.parse().expect("address");
            assert_eq!(is_global_unicast(&a), global, "{text}");
        }
    }
}
