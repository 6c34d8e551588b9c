//! Health probes sent from inside the target namespace, optionally bound to one link with
//! `SO_BINDTODEVICE` (socket(7)): ICMP echo (RFC 792 for IPv4, RFC 4443 for IPv6) through
//! [`surge_ping`] ([`Pinger`]), a TCP connection ([`tcp_connect`]) and a DNS query for the
//! root's NS records (RFC 1035, wire format through [`hickory_proto`], [`dns_query`]).
//!
//! A bound probe leaves through its link even when the best route for the target uses another
//! one: the kernel's route lookup then only considers routes through that link (ip-route(8),
//! "oif"). This is what lets a HealthCheck keep probing an uplink whose default route was
//! withdrawn or demoted; the policy that uses the result must leave a route through the link
//! (`IPv4DefaultRoutePolicy` keeps a standby route per candidate).
//!
//! The socket is a ping socket (`SOCK_DGRAM`) when `net.ipv4.ping_group_range` allows it, else a
//! raw socket (root or `CAP_NET_RAW`). A new network namespace starts with ping sockets
//! disabled, so under root the raw fallback is the usual case.
//!
//! [`Neighbours`] reads the neighbour cache (ARP for IPv4, NDP for IPv6; `RTM_GETNEIGH`,
//! `ip-neighbour(8)`): whether a gateway's link-layer address resolves.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

use hickory_proto::op::{Message, MessageType, Query, ResponseCode};
use hickory_proto::rr::{Name, RecordType};
use socket2::{Domain, Protocol, Socket, Type};
use surge_ping::{Client, Config, ICMP, PingIdentifier, PingSequence};

use futures::TryStreamExt;
use rtnetlink::packet_route::neighbour::NeighbourState as Nud;
use rtnetlink::packet_route::neighbour::{NeighbourAddress, NeighbourAttribute};

use crate::error::HostError;
use crate::netns::Netns;

/// Bytes of payload after the ICMP header, as iputils' `ping` sends by default.
const PAYLOAD: [u8; 56] = [0; 56];

/// Why one probe failed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// No reply within the timeout.
    #[error("no reply within {}", humanize(*.0))]
    Timeout(Duration),
    /// Sending failed (no route, link down) or an ICMP error came back.
    #[error("{0}")]
    Failed(String),
}

/// An ICMP echo sender for one address family, bound to a link or not; one per HealthCheck.
///
/// Replies are matched by identifier and sequence number, so several pingers may share a
/// namespace (and, with raw sockets, see each other's replies) without confusion.
pub struct Pinger {
    client: Client,
    ident: u16,
    seq: AtomicU16,
}

impl Pinger {
    /// Opens the socket inside `netns`, bound to `ifname` when given.
    ///
    /// Must be called from a tokio runtime: the socket is registered with its reactor.
    ///
    /// Errors: [`HostError::Netns`] when the namespace cannot be entered,
    /// [`HostError::Socket`] when the socket cannot be opened or bound (no such link, not
    /// root), or when called outside a runtime.
    pub fn open(netns: &Netns, ipv6: bool, ifname: Option<&str>) -> Result<Self, HostError> {
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|e| HostError::Socket(std::io::Error::other(e)))?;
        let mut config = Config::builder().kind(if ipv6 { ICMP::V6 } else { ICMP::V4 });
        if let Some(ifname) = ifname {
            config = config.interface(ifname);
        }
        let config = config.build();
        let client = netns
            .run(move || {
                let _in_runtime = runtime.enter();
                Client::new(&config)
            })?
            .map_err(HostError::Socket)?;
        // Distinct per pinger, so replies to another HealthCheck's raw socket are not ours.
        static NEXT: AtomicU16 = AtomicU16::new(0);
        let ident = (std::process::id() as u16).wrapping_add(NEXT.fetch_add(1, Ordering::Relaxed));
        Ok(Self { client, ident, seq: AtomicU16::new(0) })
    }

    /// Sends one echo request to `target` and waits up to `timeout` for its reply.
    ///
    /// Returns the round-trip time.
    ///
    /// Errors: [`ProbeError::Timeout`], [`ProbeError::Failed`] (the send was refused, for
    /// example `ENETUNREACH`, or the reply was not an echo reply).
    pub async fn ping(&self, target: IpAddr, timeout: Duration) -> Result<Duration, ProbeError> {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let mut pinger = self.client.pinger(target, PingIdentifier(self.ident)).await;
        pinger.timeout(timeout);
        match pinger.ping(PingSequence(seq), &PAYLOAD).await {
            Ok((_, rtt)) => Ok(rtt),
            Err(surge_ping::SurgeError::Timeout { .. }) => Err(ProbeError::Timeout(timeout)),
            Err(e) => Err(ProbeError::Failed(e.to_string())),
        }
    }
}

/// Opens a connection to `target` from inside `netns` (bound to `ifname` when given) and closes
/// it at once. Returns the time the handshake took.
///
/// Errors: [`ProbeError::Timeout`]; [`ProbeError::Failed`] when the socket cannot be opened
/// or the connection is refused or unreachable.
pub async fn tcp_connect(
    netns: &Netns,
    ifname: Option<&str>,
    target: SocketAddr,
    timeout: Duration,
) -> Result<Duration, ProbeError> {
    let socket = socket_in(netns, target, Type::STREAM, Protocol::TCP, ifname)?;
    let socket = tokio::net::TcpSocket::from_std_stream(std::net::TcpStream::from(socket));
    let started = Instant::now();
    match tokio::time::timeout(timeout, socket.connect(target)).await {
        Err(_) => Err(ProbeError::Timeout(timeout)),
        Ok(Err(e)) => Err(ProbeError::Failed(format!("connecting to {target}: {e}"))),
        Ok(Ok(_stream)) => Ok(started.elapsed()),
    }
}

/// Asks the DNS server at `server` for the root's NS records (recursion desired) from inside
/// `netns`, over UDP. NOERROR and NXDOMAIN both prove the server answers; any other response
/// code (SERVFAIL: it cannot reach its upstreams; REFUSED) is a failure. Returns the time to
/// the answer.
///
/// Errors: [`ProbeError::Timeout`]; [`ProbeError::Failed`] for a socket error or a failing
/// response code.
pub async fn dns_query(
    netns: &Netns,
    ifname: Option<&str>,
    server: SocketAddr,
    timeout: Duration,
) -> Result<Duration, ProbeError> {
    let started = Instant::now();
    let reply = exchange(netns, ifname, server, Name::root(), RecordType::NS, timeout).await?;
    match reply.metadata.response_code {
        ResponseCode::NoError | ResponseCode::NXDomain => Ok(started.elapsed()),
        code => Err(ProbeError::Failed(format!("{server} answered {code}"))),
    }
}

/// Asks the DNS server at `server` for the AAAA records of `name` (recursion desired) from
/// inside `netns`, over UDP (RFC 1035, RFC 3596). Returns the addresses of the answer section,
/// in order: empty for NOERROR without AAAA records (NODATA) and for NXDOMAIN.
///
/// Errors: [`ProbeError::Timeout`]; [`ProbeError::Failed`] for a name that is not a domain
/// name, a socket error, or another response code (SERVFAIL, REFUSED).
pub async fn resolve_aaaa(
    netns: &Netns,
    server: SocketAddr,
    name: &str,
    timeout: Duration,
) -> Result<Vec<Ipv6Addr>, ProbeError> {
    let mut fqdn = Name::from_utf8(name)
        .map_err(|e| ProbeError::Failed(format!("{name:?} is not a domain name: {e}")))?;
    fqdn.set_fqdn(true);
    let reply = exchange(netns, None, server, fqdn, RecordType::AAAA, timeout).await?;
    match reply.metadata.response_code {
        ResponseCode::NoError | ResponseCode::NXDomain => Ok(reply
            .answers
            .iter()
            .filter_map(|r| match r.data.ip_addr() {
                Some(IpAddr::V6(a)) => Some(a),
                _ => None,
            })
            .collect()),
        code => Err(ProbeError::Failed(format!("{server} answered {code}"))),
    }
}

/// One query of `name`/`record_type` (class IN, recursion desired) to `server` over UDP from
/// inside `netns`, optionally bound to `ifname`; the matching response (same ID, from the
/// server) within `timeout`.
async fn exchange(
    netns: &Netns,
    ifname: Option<&str>,
    server: SocketAddr,
    name: Name,
    record_type: RecordType,
    timeout: Duration,
) -> Result<Message, ProbeError> {
    let failed = |what: &str, e: &dyn std::fmt::Display| ProbeError::Failed(format!("{what}: {e}"));
    let socket = socket_in(netns, server, Type::DGRAM, Protocol::UDP, ifname)?;
    let socket = tokio::net::UdpSocket::from_std(std::net::UdpSocket::from(socket))
        .map_err(|e| failed("registering the socket", &e))?;
    let mut query = Message::query();
    query.metadata.recursion_desired = true;
    query.add_query(Query::query(name, record_type));
    let id = query.metadata.id;
    let bytes = query.to_vec().map_err(|e| failed("encoding the query", &e))?;
    let answer = async {
        socket.send_to(&bytes, server).await.map_err(|e| failed("sending", &e))?;
        let mut buf = vec![0u8; 4096];
        loop {
            let (len, from) =
                socket.recv_from(&mut buf).await.map_err(|e| failed("receiving", &e))?;
            // Anything else (a stray datagram, a reply to an earlier query) is not the answer.
            let Some(reply) = buf.get(..len).and_then(|b| Message::from_vec(b).ok()) else {
                continue;
            };
            if from == server
                && reply.metadata.id == id
                && reply.metadata.message_type == MessageType::Response
            {
                return Ok(reply);
            }
        }
    };
    match tokio::time::timeout(timeout, answer).await {
        Err(_) => Err(ProbeError::Timeout(timeout)),
        Ok(result) => result,
    }
}

/// A non-blocking socket for `peer`'s family, created inside `netns` and bound to `ifname`.
///
/// Errors: [`ProbeError::Failed`] when the namespace cannot be entered or the socket opened.
pub fn socket_in(
    netns: &Netns,
    peer: SocketAddr,
    ty: Type,
    protocol: Protocol,
    ifname: Option<&str>,
) -> Result<Socket, ProbeError> {
    let domain = if peer.is_ipv6() { Domain::IPV6 } else { Domain::IPV4 };
    let ifname = ifname.map(str::to_owned);
    let opened = netns.run(move || -> std::io::Result<Socket> {
        let socket = Socket::new(domain, ty, Some(protocol))?;
        if let Some(ifname) = &ifname {
            socket.bind_device(Some(ifname.as_bytes()))?;
        }
        socket.set_nonblocking(true)?;
        Ok(socket)
    });
    match opened {
        Ok(Ok(socket)) => Ok(socket),
        Ok(Err(e)) => Err(ProbeError::Failed(format!("opening the probe socket: {e}"))),
        Err(e) => Err(ProbeError::Failed(e.to_string())),
    }
}

/// The state of a neighbour cache entry (`NUD_*`, `include/uapi/linux/neighbour.h`;
/// RFC 4861 section 7.3.2 for the IPv6 states, which ARP shares in Linux).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NeighbourState {
    /// Confirmed within the reachable time (`NUD_REACHABLE`).
    Reachable,
    /// Resolved, not confirmed lately (`NUD_STALE`, `NUD_DELAY`, `NUD_PROBE`): the next packet
    /// has it checked again.
    Unconfirmed,
    /// Resolution running, no answer yet (`NUD_INCOMPLETE`).
    Incomplete,
    /// Resolution gave up: nothing answers for the address (`NUD_FAILED`).
    Failed,
    /// Static or needing no resolution (`NUD_PERMANENT`, `NUD_NOARP`).
    Static,
}

impl NeighbourState {
    /// `reachable`, `stale`, `incomplete`, `failed`, `static`: as the doctor prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reachable => "reachable",
            Self::Unconfirmed => "stale",
            Self::Incomplete => "incomplete",
            Self::Failed => "failed",
            Self::Static => "static",
        }
    }

    /// Whether the entry proves the neighbour does not answer (`INCOMPLETE` or `FAILED`).
    pub fn is_unresolved(self) -> bool {
        matches!(self, Self::Incomplete | Self::Failed)
    }

    fn from_nud(state: Nud) -> Option<Self> {
        Some(match state {
            Nud::Reachable => Self::Reachable,
            Nud::Stale | Nud::Delay | Nud::Probe => Self::Unconfirmed,
            Nud::Incomplete => Self::Incomplete,
            Nud::Failed => Self::Failed,
            Nud::Permanent | Nud::Noarp => Self::Static,
            _ => return None,
        })
    }
}

/// A reader of one namespace's neighbour cache over rtnetlink.
pub struct Neighbours {
    handle: rtnetlink::Handle,
}

impl Neighbours {
    /// Opens an rtnetlink socket inside `netns` and spawns its connection task on the current
    /// tokio runtime.
    ///
    /// Errors: [`HostError::Netns`]; [`HostError::Socket`] outside a runtime or when the socket
    /// cannot be opened.
    pub fn open(netns: &Netns) -> Result<Self, HostError> {
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|e| HostError::Socket(std::io::Error::other(e)))?;
        let opened = netns.run(|| {
            let _entered = runtime.enter();
            rtnetlink::new_connection()
        })?;
        let (connection, handle, _) = opened.map_err(HostError::Socket)?;
        runtime.spawn(connection);
        Ok(Self { handle })
    }

    /// The state of the entry for `address` on link `ifname`; `None` when the cache has no
    /// entry (nothing was sent to it yet, or the entry was garbage-collected).
    ///
    /// Errors: [`HostError::Dump`] when the link or the neighbour dump fails (no such link).
    pub async fn state(
        &self,
        ifname: &str,
        address: IpAddr,
    ) -> Result<Option<NeighbourState>, HostError> {
        let dump = |what: &str, e: &dyn std::fmt::Display| HostError::Dump {
            what: what.to_string(),
            message: e.to_string(),
        };
        let mut links = self.handle.link().get().match_name(ifname.to_string()).execute();
        let link = links
            .try_next()
            .await
            .map_err(|e| dump(&format!("link {ifname}"), &e))?
            .ok_or_else(|| dump(&format!("link {ifname}"), &"no such link"))?;
        let index = link.header.index;
        use rtnetlink::packet_route::AddressFamily;
        let family = if address.is_ipv6() { AddressFamily::Inet6 } else { AddressFamily::Inet };
        let mut entries = self.handle.neighbours().get().set_address_family(family).execute();
        while let Some(entry) = entries.try_next().await.map_err(|e| dump("neighbours", &e))? {
            let same = entry.attributes.iter().any(|a| match a {
                NeighbourAttribute::Destination(NeighbourAddress::Inet(a)) => {
                    IpAddr::V4(*a) == address
                }
                NeighbourAttribute::Destination(NeighbourAddress::Inet6(a)) => {
                    IpAddr::V6(*a) == address
                }
                _ => false,
            });
            if entry.header.ifindex == index && same {
                return Ok(NeighbourState::from_nud(entry.header.state));
            }
        }
        Ok(None)
    }
}

/// `1s`, `250ms`: a duration as an operator writes it.
fn humanize(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}
