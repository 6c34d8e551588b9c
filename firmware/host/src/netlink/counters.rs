//! Interface counters: bytes and errors of every link, for the daemon's charts (issue 34 §6).
//!
//! Read from the `IFLA_STATS64` attribute of an `RTM_GETLINK` dump (`struct
//! rtnl_link_stats64` in `include/uapi/linux/if_link.h`): the kernel's 64-bit counters since the
//! link was made, the ones `ip -s link` prints. Not an artifact: nothing is owned or changed.

use rtnetlink::packet_route::RouteNetlinkMessage;
use rtnetlink::packet_route::link::{LinkAttribute, LinkMessage};

use super::conn::Conn;
use crate::error::HostError;

/// One link's counters at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkCounters {
    /// The interface name (`lan0`).
    pub ifname: String,
    /// Whether the link is administratively up (`IFF_UP`).
    pub up: bool,
    /// Bytes received since the link was made.
    pub rx_bytes: u64,
    /// Bytes sent since the link was made.
    pub tx_bytes: u64,
    /// Receive errors (`rx_errors`: bad frames, overruns, …).
    pub rx_errors: u64,
    /// Transmit errors (`tx_errors`).
    pub tx_errors: u64,
}

/// `RTM_GETLINK` dump request with the counters (no `IFLA_EXT_MASK`: the kernel sends
/// `IFLA_STATS64` for every link unless asked not to).
fn request() -> RouteNetlinkMessage {
    RouteNetlinkMessage::GetLink(LinkMessage::default())
}

/// Reads one `RTM_NEWLINK`'s name, `IFF_UP` and `IFLA_STATS64`; `None` for other messages or
/// a link without a name or counters.
fn from_nl(message: &RouteNetlinkMessage) -> Option<LinkCounters> {
    let RouteNetlinkMessage::NewLink(link) = message else { return None };
    let mut ifname = None;
    let mut stats = None;
    for attribute in &link.attributes {
        match attribute {
            LinkAttribute::IfName(name) => ifname = Some(name.clone()),
            LinkAttribute::Stats64(s) => stats = Some(s),
            _ => {}
        }
    }
    let stats = stats?;
    Some(LinkCounters {
        ifname: ifname?,
        up: link.header.flags.contains(rtnetlink::packet_route::link::LinkFlags::Up),
        rx_bytes: stats.rx_bytes,
        tx_bytes: stats.tx_bytes,
        rx_errors: stats.rx_errors,
        tx_errors: stats.tx_errors,
    })
}

/// Every link's counters, in the kernel's order.
///
/// Errors: [`HostError::Dump`] when the dump fails.
pub(super) async fn read(conn: &Conn) -> Result<Vec<LinkCounters>, HostError> {
    conn.dump(request(), from_nl).await.map_err(|e| e.dump("link counters"))
}
