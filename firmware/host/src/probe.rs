//! Health probes sent from inside the target namespace: ICMP echo (RFC 792 for IPv4, RFC 4443
//! for IPv6) through [`surge_ping`], optionally bound to one link with `SO_BINDTODEVICE`
//! (socket(7)).
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

use std::net::IpAddr;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;

use surge_ping::{Client, Config, ICMP, PingIdentifier, PingSequence};

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

/// `1s`, `250ms`: a duration as an operator writes it.
fn humanize(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}
