//! The default routes' gateways, as the daemon's gateway monitor probes them: the default
//! routes of the main table read over rtnetlink, one ICMP echo to each gateway through the
//! route's link and the gateway's neighbour cache entry. The supervisor decides when (its
//! interval, which links stay quiet) and keeps the history; this module only reads the host.
//!
//! ```text
//! GatewayProber::default_gateways ─▶ main table: 0.0.0.0/0, ::/0 with a gateway
//! GatewayProber::probe ─▶ per gateway: Pinger (echo) + Neighbours (cache state)
//! ```
//!
//! The default-route dump is shared with the HealthChecks that probe their link's default gateway
//! ([`crate::health::ProbeTarget::DefaultGateway`]).

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::time::Duration;

use routerd_host::netlink::NetlinkBackend;
use routerd_host::probe::{Neighbours, Pinger, ProbeError};
use routerd_host::{ArtifactKind, ArtifactSpec, Backend, MAIN_ROUTE_TABLE, Netns};

/// One default route with a gateway in the main table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DefaultRoute {
    /// The route's metric (priority).
    pub metric: u32,
    /// The output link, when the route names one.
    pub oif: Option<String>,
    /// The next hop.
    pub gateway: IpAddr,
}

/// One gateway's probe of a round.
#[derive(Clone, Debug, PartialEq)]
pub struct GatewayProbe {
    /// The echo's round-trip time, or why it failed (`no reply within 1s`, `no probe socket`).
    pub rtt: Result<Duration, String>,
    /// The gateway's neighbour cache state after the echo (`reachable`, `stale`,
    /// `incomplete`, `failed`, `static`); `None` without an entry or when it cannot be read.
    pub neighbour: Option<String>,
}

/// The outcome of [`GatewayProber::probe`].
#[derive(Clone, Debug, PartialEq)]
pub struct GatewayRound {
    /// One per gateway, in the order given.
    pub probes: Vec<GatewayProbe>,
    /// Probe sockets that could not be opened this round (`probe socket on wan0: ...`), for
    /// the caller's debug log; the gateways behind them report `no probe socket`.
    pub socket_errors: Vec<String>,
}

/// The sockets of the gateway monitor inside one namespace, opened on first use and again
/// after a failure (a link may come and go between rounds).
pub struct GatewayProber {
    netns: Netns,
    /// One echo socket per address family and link.
    pingers: BTreeMap<(bool, String), Pinger>,
    routes: Option<NetlinkBackend>,
    neighbours: Option<Neighbours>,
}

impl GatewayProber {
    /// A prober inside `netns`; no socket is opened before the first round.
    pub fn new(netns: Netns) -> Self {
        Self { netns, pingers: BTreeMap::new(), routes: None, neighbours: None }
    }

    /// The `(link, gateway)` of every default route with a gateway in the main table (254),
    /// IPv4 and IPv6.
    ///
    /// Errors: the netlink socket cannot be opened or the route dump fails (the socket is
    /// opened again next time).
    pub async fn default_gateways(&mut self) -> Result<BTreeSet<(String, IpAddr)>, String> {
        if self.routes.is_none() {
            self.routes = Some(NetlinkBackend::new(&self.netns).map_err(|e| e.to_string())?);
        }
        let Some(backend) = self.routes.as_ref() else { return Err("no netlink socket".into()) };
        let kinds = [ArtifactKind::Ipv4Route, ArtifactKind::Ipv6Route];
        match default_routes(backend, &kinds).await {
            Ok(routes) => {
                Ok(routes.into_iter().filter_map(|r| Some((r.oif?, r.gateway))).collect())
            }
            Err(e) => {
                self.routes = None;
                Err(e)
            }
        }
    }

    /// Sends one echo to each `(link, gateway)` of `gateways` at once, each waiting at most
    /// `timeout`, then reads each gateway's neighbour cache entry. A socket whose echo failed
    /// other than by a timeout (the link may have gone) is opened again next round.
    pub async fn probe(
        &mut self,
        gateways: &BTreeSet<(String, IpAddr)>,
        timeout: Duration,
    ) -> GatewayRound {
        if self.neighbours.is_none() {
            self.neighbours = Neighbours::open(&self.netns).ok();
        }
        let mut socket_errors = Vec::new();
        for (ifname, gateway) in gateways {
            let key = (gateway.is_ipv6(), ifname.clone());
            if !self.pingers.contains_key(&key) {
                match Pinger::open(&self.netns, gateway.is_ipv6(), Some(ifname)) {
                    Ok(p) => {
                        self.pingers.insert(key.clone(), p);
                    }
                    Err(e) => socket_errors.push(format!("probe socket on {ifname}: {e}")),
                }
            }
        }
        let echoes = gateways.iter().map(|(ifname, gateway)| {
            let pinger = self.pingers.get(&(gateway.is_ipv6(), ifname.clone()));
            async move {
                match pinger {
                    Some(p) => p.ping(*gateway, timeout).await,
                    None => Err(ProbeError::Failed("no probe socket".into())),
                }
            }
        });
        let outcomes = futures::future::join_all(echoes).await;
        let mut probes = Vec::with_capacity(outcomes.len());
        for ((ifname, gateway), outcome) in gateways.iter().zip(outcomes) {
            let neighbour = match &self.neighbours {
                Some(n) => n.state(ifname, *gateway).await.ok().flatten(),
                None => None,
            };
            if matches!(outcome, Err(ProbeError::Failed(_))) {
                // The link may have gone: open the socket again next round.
                self.pingers.remove(&(gateway.is_ipv6(), ifname.clone()));
            }
            probes.push(GatewayProbe {
                rtt: outcome.map_err(|e| e.to_string()),
                neighbour: neighbour.map(|n| n.as_str().to_string()),
            });
        }
        GatewayRound { probes, socket_errors }
    }
}

/// The default routes (`/0`) with a gateway in the main table among the routes of `kinds`
/// (`linux.ipv4Route`, `linux.ipv6Route`) that `backend` observes.
///
/// Errors: the route dump fails.
pub(crate) async fn default_routes(
    backend: &NetlinkBackend,
    kinds: &[ArtifactKind],
) -> Result<Vec<DefaultRoute>, String> {
    let mut found = Vec::new();
    for kind in kinds {
        let listed = backend.observe(*kind, &[]).await.map_err(|e| e.to_string())?;
        found.extend(listed.iter().filter_map(|a| match &a.spec {
            ArtifactSpec::Route(r)
                if r.table == MAIN_ROUTE_TABLE && r.destination.prefix_len() == 0 =>
            {
                Some(DefaultRoute { metric: r.metric, oif: r.oif.clone(), gateway: r.gateway? })
            }
            _ => None,
        }));
    }
    Ok(found)
}
