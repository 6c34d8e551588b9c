//! The StatePolicy scheduler: one task evaluating every `StatePolicy` of the applied config
//! from inside the target namespace, every [`EVALUATION_INTERVAL`] and at once when the host's
//! links or addresses change, keeping the values in the session's
//! [`StateStore`](routerd_engine::state::StateStore) and asking the loop for a reconcile when
//! a value changes or a `when.state` condition starts or stops holding (a `for` duration
//! running out). The reconcile then creates or withdraws what the conditions gate.
//!
//! Conditions: `ipv6Address` reads the link's addresses over rtnetlink (a global unicast
//! address that has finished duplicate address detection); `ipv6PrefixDelegation` reads the
//! delegated prefixes the DHCPv6 client marks with unreachable routes (RFC 7084 WPD-5);
//! `dnsResolve` asks for AAAA records, of the configured servers from inside the namespace
//! (`static`) or of the system's resolver (`system`).

use std::collections::{BTreeSet, HashMap};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ipnet::Ipv6Net;
use routerd_engine::state::{
    Condition, EVALUATION_INTERVAL, Evaluation, RESOLVE_TIMEOUT, Resolvers, StatePlan, StateStore,
    now_ms, prefixes_of, state_gates, state_plans,
};
use routerd_host::artifact::DhcpBinding;
use routerd_host::bus::SystemBus;
use routerd_host::netlink::NetlinkBackend;
use routerd_host::networkd::{Networkd, lease_dns_servers};
use routerd_host::{ArtifactKey, Netns, probe};
use routerd_model::Config;
use routerd_model::spec::StateMatchSpec;
use tokio::sync::{Notify, mpsc};

use crate::config_task::ConfigTask;
use crate::daemon::{Msg, Trigger};

/// The evaluation task of the applied config.
pub struct StateScheduler {
    netns: Netns,
    /// The system bus, on which networkd tells the DNS servers of a DHCP lease.
    bus: Arc<SystemBus>,
    store: Arc<StateStore>,
    loop_tx: mpsc::Sender<Msg>,
    wake: Arc<Notify>,
    task: ConfigTask,
}

impl StateScheduler {
    /// A scheduler evaluating inside `netns` (asking networkd on `bus` for lease DNS
    /// servers), writing to `store` and waking the loop through `loop_tx`; nothing runs until
    /// [`StateScheduler::sync`].
    pub fn new(
        netns: Netns,
        bus: Arc<SystemBus>,
        store: Arc<StateStore>,
        loop_tx: mpsc::Sender<Msg>,
    ) -> Self {
        let wake = Arc::new(Notify::new());
        Self { netns, bus, store, loop_tx, wake, task: ConfigTask::default() }
    }

    /// Evaluates exactly the policies of `config`, whose text has digest `digest`: declares
    /// its variables (new ones `unknown`, removed ones dropped; the values of the others are
    /// kept) and restarts the task on them. Nothing to do for the digest last synced.
    pub fn sync(&mut self, digest: &str, config: &Config) {
        if !self.task.resync(digest) {
            return;
        }
        let plans = state_plans(config);
        let names: BTreeSet<String> = plans.iter().map(|p| p.variable.clone()).collect();
        self.store.declare(&names);
        if plans.is_empty() {
            return;
        }
        let evaluator = Evaluator {
            plans,
            gates: state_gates(config),
            netns: self.netns.clone(),
            bus: Arc::clone(&self.bus),
            store: Arc::clone(&self.store),
            loop_tx: self.loop_tx.clone(),
            wake: Arc::clone(&self.wake),
            missing_since: Mutex::new(HashMap::new()),
        };
        self.task.spawn(evaluator.run());
    }

    /// Evaluates again now rather than at the next interval (the host's addresses changed).
    pub fn wake(&self) {
        self.wake.notify_one();
    }
}

struct Evaluator {
    plans: Vec<StatePlan>,
    gates: Vec<(String, StateMatchSpec)>,
    netns: Netns,
    bus: Arc<SystemBus>,
    store: Arc<StateStore>,
    loop_tx: mpsc::Sender<Msg>,
    wake: Arc<Notify>,
    /// When each `IPv6PrefixDelegation` was first seen without a prefix, for `unavailableFor`;
    /// absent while it has one. A restart of the task (a new config) starts the count again.
    missing_since: Mutex<HashMap<String, Instant>>,
}

impl Evaluator {
    async fn run(self) {
        let mut netlink = None;
        let mut held: Option<Vec<bool>> = None;
        loop {
            let mut changed = false;
            for plan in &self.plans {
                let outcome = self.evaluate(plan, &mut netlink).await;
                let value = outcome.value.clone();
                if self.store.set(&plan.variable, outcome, now_ms()) {
                    changed = true;
                    match value {
                        Some(v) => tracing::info!("state variable {} is {v:?}", plan.variable),
                        None => tracing::info!("state variable {} has no value", plan.variable),
                    }
                }
            }
            let now_held = self.store.gates_holding(&self.gates, now_ms());
            if changed || held.as_ref() != Some(&now_held) {
                // A full queue already holds a reconcile, which reads the new values.
                let _ = self.loop_tx.try_send(Msg::Reconcile(Trigger::State));
            }
            held = Some(now_held);
            tokio::select! {
                () = tokio::time::sleep(EVALUATION_INTERVAL) => {}
                () = self.wake.notified() => {}
            }
        }
    }

    /// The first entry whose conditions all hold, and why; or why none does.
    async fn evaluate(&self, plan: &StatePlan, netlink: &mut Option<NetlinkBackend>) -> Evaluation {
        let mut misses = Vec::new();
        'entries: for entry in &plan.values {
            let mut reasons = Vec::new();
            for condition in &entry.conditions {
                match self.check(condition, netlink).await {
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

    /// Whether one condition holds: `Ok` with what shows it, `Err` with why not.
    async fn check(
        &self,
        condition: &Condition,
        netlink: &mut Option<NetlinkBackend>,
    ) -> Result<String, String> {
        match condition {
            Condition::Unsupported(why) => Err(why.clone()),
            Condition::Ipv6Address { ifname, global } => {
                if netlink.is_none() {
                    *netlink = Some(NetlinkBackend::new(&self.netns).map_err(|e| e.to_string())?);
                }
                let Some(backend) = netlink.as_ref() else { return Err("no netlink".into()) };
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
                if netlink.is_none() {
                    *netlink = Some(NetlinkBackend::new(&self.netns).map_err(|e| e.to_string())?);
                }
                let Some(backend) = netlink.as_ref() else { return Err("no netlink".into()) };
                let delegated = backend.delegated_prefixes().await.map_err(|e| e.to_string())?;
                let addresses = match downstream {
                    Some(_) => backend.usable_addresses(true).await.map_err(|e| e.to_string())?,
                    None => Vec::new(),
                };
                let mine = prefixes_of(downstream.as_deref(), &delegated, &addresses);
                let missing_for = {
                    let mut since = self.missing_since.lock().map_err(|e| e.to_string())?;
                    if mine.is_empty() {
                        since.entry(resource.clone()).or_insert_with(Instant::now).elapsed()
                    } else {
                        since.remove(resource);
                        Duration::ZERO
                    }
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
}

impl Evaluator {
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
/// conditions and the AFTR lookups of DS-Lite tunnels.
///
/// Errors: no server answered (each one's error), or the system's lookup failed or timed out.
pub(crate) async fn resolve_aaaa(
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
