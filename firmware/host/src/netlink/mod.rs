//! rtnetlink backend (`applyWith: rtnetlink`): inventory and configurators for links, ip6tnl
//! tunnels, addresses, routes, route tables and fwmark rules of one network namespace.
//!
//! All traffic goes through one rtnetlink socket opened inside the target namespace
//! ([`NetlinkBackend::new`]); nothing here shells out to `ip`. One module per artifact kind:
//!
//! | module | kinds |
//! |---|---|
//! | `link` | `linux.link` (and the ifname↔index cache) |
//! | `ip6_tunnel` | `linux.ipip6.tunnel` |
//! | `link` | `linux.ppp.link` (observed only: pppd makes and removes them) |
//! | `address` | `linux.ipv4.address`, `linux.ipv6.address` |
//! | `route` | `linux.ipv4.route`, `linux.ipv6.route` |
//! | `route_table` | `linux.ipv4.routeTable` |
//! | `rule` | `linux.ipv4.fwmarkRule` |
//! | `convert` | kernel messages ↔ specs, the only place they meet |
//! | `conn` | the socket: dump and acknowledged-change requests |
//! | `counters` | interface byte and error counters (not an artifact), for the charts |
//! | `monitor` | change notifications (multicast groups), for the supervisor |
//!
//! Holds no ownership policy: observe lists everything of a kind, and the configurators do what
//! the engine asks.
//!
//! **Routes in two lanes.** The engine hands over batches of independent route creates
//! ([`Backend::create_many`]). On a machine with two CPUs or more, a batch is split in two
//! halves sent at the same time over two sockets, from two threads. Recent kernels insert IPv4
//! routes without the RTNL mutex, so both CPUs work at once (on the 6.18 kernel of the
//! benchmark machine, 10,200 routes took 100 ms in two `ip -batch` halves run together against
//! 160–190 ms in one); where a kernel still serialises them, the halves take turns, about as
//! fast as one lane. A route the kernel refuses in a lane is sent again once both lanes are
//! done, alone: its gateway may be reachable only through a route of the other half that the
//! config does not name as a dependency, which the order of one lane would have installed
//! first. ADR 0009 has the reasoning.

mod address;
mod conn;
mod convert;
mod counters;
mod ip6_tunnel;
mod link;
mod monitor;
mod route;
mod route_table;
mod rule;

use futures::FutureExt;
use futures::future::BoxFuture;

pub use self::counters::LinkCounters;
pub use self::monitor::{Change, NetlinkMonitor};

use self::conn::Conn;
use self::convert::IpFamily;
use self::link::LinkCache;
use crate::artifact::{AddressSpec, Artifact, ArtifactKey, ArtifactKind, ArtifactSpec};
use crate::backend::Backend;
use crate::error::HostError;
use crate::netns::Netns;

/// The `applyWith` name of this backend.
const APPLY_WITH: crate::kinds::ApplyWith = crate::kinds::ApplyWith::Rtnetlink;

/// Kinds [`NetlinkBackend`] observes and configures.
const KINDS: &[ArtifactKind] = &[
    ArtifactKind::Link,
    // Right after links: listed from the link dump the link observe just made.
    ArtifactKind::Ipip6Tunnel,
    ArtifactKind::PppLink,
    ArtifactKind::Ipv4Address,
    ArtifactKind::Ipv6Address,
    ArtifactKind::Ipv4Route,
    ArtifactKind::Ipv6Route,
    ArtifactKind::Ipv4RouteTable,
    ArtifactKind::Ipv4FwmarkRule,
];

/// Links, ip6tnl tunnels, addresses, routes, route tables and fwmark rules of one network
/// namespace, over rtnetlink.
///
/// Cheap to share by reference: operations take `&self` and may be called concurrently; they
/// take turns on one blocking socket, each request answered before the next is sent (the
/// kernel answers inside the calls, so a turn never waits for it). A batch of route creates
/// ([`Backend::create_many`]) also uses a second socket from a second thread (module docs).
#[derive(Debug)]
pub struct NetlinkBackend {
    conn: Conn,
    links: LinkCache,
    /// Route tables derived from the last IPv4 route observe, handed to the next route-table
    /// observe instead of a second dump of every route (an inventory observes both kinds back
    /// to back). Taken at most once; any change through this backend clears it.
    tables_from_routes: std::sync::Mutex<Option<Vec<Artifact>>>,
    /// Tunnels derived from the last link observe, for the next tunnel observe (same rule as
    /// `tables_from_routes`).
    tunnels_from_links: std::sync::Mutex<Option<Vec<Artifact>>>,
    /// PPP links derived from the last link observe, for the next PPP link observe (same rule).
    ppp_from_links: std::sync::Mutex<Option<Vec<Artifact>>>,
    /// The namespace, to open the second lane's socket in.
    netns: Netns,
    /// The second lane's socket, opened by the first batch of routes; `None` when it could
    /// not be opened (routes then go one lane).
    lane: std::sync::OnceLock<Option<Conn>>,
    /// Whether batches of routes are split in two lanes (two CPUs or more).
    two_lanes: bool,
}

/// Route creates taken at once by [`Backend::create_many`] (the engine makes batches of at most
/// this many): each half of a batch costs a thread start, about as much as ten routes.
const ROUTE_BATCH: usize = 512;

/// Batches smaller than this go one lane.
const LANE_MIN: usize = 32;

impl NetlinkBackend {
    /// Opens an rtnetlink socket inside `netns`; it stays there for its life.
    ///
    /// Errors: [`HostError::Netns`] when the namespace cannot be entered (not root, deleted);
    /// [`HostError::Socket`] when the socket cannot be opened.
    pub fn new(netns: &Netns) -> Result<Self, HostError> {
        Ok(Self {
            conn: Conn::open(netns)?,
            links: LinkCache::default(),
            tables_from_routes: std::sync::Mutex::new(None),
            tunnels_from_links: std::sync::Mutex::new(None),
            ppp_from_links: std::sync::Mutex::new(None),
            netns: netns.clone(),
            lane: std::sync::OnceLock::new(),
            two_lanes: std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2),
        })
    }

    /// The IPv6 addresses (`ipv6 == true`) or IPv4 addresses of every link that can be used
    /// as a source now: duplicate address detection neither running nor failed. IPv6
    /// link-local addresses are left out. What a `StatePolicy`'s `ipv6Address` condition reads.
    ///
    /// Errors: [`HostError::Dump`] when the dump fails.
    pub async fn usable_addresses(&self, ipv6: bool) -> Result<Vec<AddressSpec>, HostError> {
        let family = if ipv6 { IpFamily::V6 } else { IpFamily::V4 };
        address::usable(&self.conn, &self.links, family).await
    }

    /// The IPv6 prefixes delegated to this router by DHCPv6 (RFC 8415 IA_PD), as its client
    /// marks them in the kernel: an unreachable route of protocol `dhcp` in table `main` for
    /// each (RFC 7084 WPD-5; systemd-networkd installs them). What a `StatePolicy`'s
    /// `ipv6PrefixDelegation` condition reads.
    ///
    /// Errors: [`HostError::Dump`] when the dump fails.
    pub async fn delegated_prefixes(&self) -> Result<Vec<ipnet::Ipv6Net>, HostError> {
        route::delegated_prefixes(&self.conn).await.map_err(|e| e.dump("routes"))
    }

    /// Every link's byte and error counters (`IFLA_STATS64`), for the daemon's charts.
    ///
    /// Errors: [`HostError::Dump`] when the dump fails.
    pub async fn link_counters(&self) -> Result<Vec<LinkCounters>, HostError> {
        counters::read(&self.conn).await
    }

    async fn observe_kind(&self, kind: ArtifactKind) -> Result<Vec<Artifact>, HostError> {
        let (conn, links) = (&self.conn, &self.links);
        match kind {
            ArtifactKind::Link => {
                let (artifacts, listed) = link::observe(conn, links).await?;
                remember(&self.tunnels_from_links, ip6_tunnel::from_links(&listed));
                remember(&self.ppp_from_links, link::ppp_from_links(&listed));
                Ok(artifacts)
            }
            ArtifactKind::Ipip6Tunnel => match take(&self.tunnels_from_links) {
                Some(tunnels) => Ok(tunnels),
                None => ip6_tunnel::observe(conn, links).await,
            },
            ArtifactKind::PppLink => match take(&self.ppp_from_links) {
                Some(ppp) => Ok(ppp),
                None => Ok(link::ppp_from_links(&link::observe(conn, links).await?.1)),
            },
            ArtifactKind::Ipv4Address => address::observe(conn, links, IpFamily::V4).await,
            ArtifactKind::Ipv6Address => address::observe(conn, links, IpFamily::V6).await,
            ArtifactKind::Ipv4Route => {
                let routes = route::observe(conn, links, IpFamily::V4).await?;
                remember(&self.tables_from_routes, route_table::from_routes(&routes));
                Ok(routes)
            }
            ArtifactKind::Ipv6Route => route::observe(conn, links, IpFamily::V6).await,
            ArtifactKind::Ipv4RouteTable => match take(&self.tables_from_routes) {
                Some(tables) => Ok(tables),
                None => route_table::observe(conn).await,
            },
            ArtifactKind::Ipv4FwmarkRule => rule::observe(conn).await,
            other => Err(wrong_backend(&ArtifactKey::new(other, "*"))),
        }
    }

    /// Drops what observes derived for the next observe: a change makes it stale.
    fn forget_derived(&self) {
        take(&self.tables_from_routes);
        take(&self.tunnels_from_links);
        take(&self.ppp_from_links);
    }

    async fn create_artifact(&self, desired: &Artifact) -> Result<(), HostError> {
        self.forget_derived();
        self.create_on(&self.conn, desired).await
    }

    /// Creates `desired` (routes, none depending on another): in two lanes when the batch is
    /// large enough and the second socket opens, else one after another. See the module docs.
    ///
    /// Shape: one result per artifact, in order.
    async fn create_batch(&self, desired: &[&Artifact]) -> Vec<Result<(), HostError>> {
        self.forget_derived();
        let lane = if self.two_lanes && desired.len() >= LANE_MIN { self.lane() } else { None };
        let Some(lane) = lane else {
            let mut results = Vec::with_capacity(desired.len());
            for artifact in desired {
                results.push(self.create_on(&self.conn, artifact).await);
            }
            return results;
        };
        let (first, second) = desired.split_at(desired.len() / 2);
        // `block_on` returns at once: this module's futures never wait (a blocking socket,
        // answered inside the call; see `conn`), so no runtime is needed on either thread.
        let run = |conn: &Conn, half: &[&Artifact]| -> Vec<Result<(), HostError>> {
            half.iter().map(|a| futures::executor::block_on(self.create_on(conn, a))).collect()
        };
        let (mut results, other) = std::thread::scope(|scope| {
            let other = std::thread::Builder::new()
                .name("netlink-lane".into())
                .spawn_scoped(scope, || run(lane, second));
            match other {
                Ok(other) => {
                    let results = run(&self.conn, first);
                    (results, other.join().ok())
                }
                // No thread: this one runs both halves.
                Err(_) => (run(&self.conn, first), Some(run(&self.conn, second))),
            }
        });
        let other = other.unwrap_or_else(|| {
            // The lane panicked: its half is sent again below, one route at a time.
            second
                .iter()
                .map(|a| {
                    Err(HostError::Invalid {
                        key: a.key.clone(),
                        message: "the second netlink lane stopped".to_string(),
                    })
                })
                .collect()
        });
        results.extend(other);
        // Refused in a lane: once more, alone, with the rest of the batch in place.
        for (result, artifact) in results.iter_mut().zip(desired) {
            if result.is_err() {
                *result = self.create_on(&self.conn, artifact).await;
            }
        }
        results
    }

    /// The second lane's socket, opened on first use.
    fn lane(&self) -> Option<&Conn> {
        self.lane.get_or_init(|| Conn::open(&self.netns).ok()).as_ref()
    }

    /// Creates `desired` through `conn` (this backend's socket or the second lane's).
    async fn create_on(&self, conn: &Conn, desired: &Artifact) -> Result<(), HostError> {
        let (links, key) = (&self.links, &desired.key);
        match &desired.spec {
            ArtifactSpec::Link(spec) => link::create(conn, links, key, spec).await,
            ArtifactSpec::Ip6Tunnel(spec) => ip6_tunnel::create(conn, links, key, spec).await,
            ArtifactSpec::Address(spec) => address::create(conn, links, key, spec).await,
            ArtifactSpec::Route(spec) => route::create(conn, links, key, spec).await,
            // The kernel creates a table with its first route.
            ArtifactSpec::RouteTable(_) => Ok(()),
            ArtifactSpec::FwmarkRule(spec) => rule::create(conn, key, spec).await,
            _ => Err(wrong_backend(key)),
        }
    }

    async fn modify_artifact(
        &self,
        observed: &Artifact,
        desired: &Artifact,
    ) -> Result<(), HostError> {
        self.forget_derived();
        let (conn, links, key) = (&self.conn, &self.links, &desired.key);
        match (&observed.spec, &desired.spec) {
            (ArtifactSpec::Link(old), ArtifactSpec::Link(new)) => {
                link::modify_existing(conn, links, key, old, new).await
            }
            (ArtifactSpec::Ip6Tunnel(_), ArtifactSpec::Ip6Tunnel(spec)) => {
                ip6_tunnel::modify(conn, links, key, spec).await
            }
            (ArtifactSpec::Address(old), ArtifactSpec::Address(new)) => {
                // No attribute of an address changes in place (see needs_recreate).
                address::delete(conn, links, &observed.key, old).await?;
                address::create(conn, links, key, new).await
            }
            (ArtifactSpec::Route(_), ArtifactSpec::Route(spec)) => {
                route::modify(conn, links, observed, desired, spec).await
            }
            (ArtifactSpec::RouteTable(_), ArtifactSpec::RouteTable(_)) => Ok(()),
            (ArtifactSpec::FwmarkRule(old), ArtifactSpec::FwmarkRule(new)) => {
                rule::modify(conn, key, old, new).await
            }
            _ => Err(wrong_backend(key)),
        }
    }

    async fn delete_artifact(&self, observed: &Artifact) -> Result<(), HostError> {
        self.forget_derived();
        let (conn, links, key) = (&self.conn, &self.links, &observed.key);
        match &observed.spec {
            ArtifactSpec::Link(_) => Err(HostError::Invalid {
                key: key.clone(),
                message: "links are never deleted by routerd".to_string(),
            }),
            ArtifactSpec::Ip6Tunnel(spec) => ip6_tunnel::delete(conn, links, key, spec).await,
            ArtifactSpec::Address(spec) => address::delete(conn, links, key, spec).await,
            ArtifactSpec::Route(spec) => route::delete(conn, key, spec).await,
            ArtifactSpec::RouteTable(spec) => route_table::delete(conn, key, spec).await,
            ArtifactSpec::FwmarkRule(spec) => rule::delete(conn, key, spec).await,
            _ => Err(wrong_backend(key)),
        }
    }
}

impl Backend for NetlinkBackend {
    fn apply_with(&self) -> crate::kinds::ApplyWith {
        APPLY_WITH
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        KINDS
    }

    /// Lists every object of `kind`, ignoring `wanted`: one dump per call (plus at most one link
    /// dump to name links the cache does not know).
    fn observe<'a>(
        &'a self,
        kind: ArtifactKind,
        _wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        self.observe_kind(kind).boxed()
    }

    /// Every request is answered inside its `sendmsg`/`recvmsg` (see `conn`).
    fn observe_is_synchronous(&self) -> bool {
        true
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        self.create_artifact(desired).boxed()
    }

    /// Routes: `ROUTE_BATCH` on a machine with two CPUs or more (see the module docs).
    fn create_batch_limit(&self, kind: ArtifactKind) -> usize {
        match kind {
            ArtifactKind::Ipv4Route | ArtifactKind::Ipv6Route if self.two_lanes => ROUTE_BATCH,
            _ => 1,
        }
    }

    fn create_many<'a>(
        &'a self,
        desired: &'a [&'a Artifact],
    ) -> BoxFuture<'a, Vec<Result<(), HostError>>> {
        self.create_batch(desired).boxed()
    }

    fn modify<'a>(
        &'a self,
        observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        self.modify_artifact(observed, desired).boxed()
    }

    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        self.delete_artifact(observed).boxed()
    }
}

fn remember(slot: &std::sync::Mutex<Option<Vec<Artifact>>>, artifacts: Vec<Artifact>) {
    if let Ok(mut s) = slot.lock() {
        *s = Some(artifacts);
    }
}

fn take(slot: &std::sync::Mutex<Option<Vec<Artifact>>>) -> Option<Vec<Artifact>> {
    slot.lock().ok().and_then(|mut s| s.take())
}

fn wrong_backend(key: &ArtifactKey) -> HostError {
    HostError::WrongBackend { key: key.clone(), backend: APPLY_WITH }
}
