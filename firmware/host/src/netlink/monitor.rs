//! Change notifications of one namespace: the rtnetlink multicast groups for links, IPv4/IPv6
//! addresses, IPv4/IPv6 routes and IPv4 rules (`rtnetlink(7)`, `RTMGRP_*`).
//!
//! The supervisor uses them to notice a hand-made change within a second without dumping the
//! whole host on a timer. A notification only says *that* something of a kind changed; the
//! reconcile that follows observes the host itself, so a lost or coalesced notification costs
//! nothing but latency (the periodic resync still runs).

use futures::StreamExt;
use futures::channel::mpsc::UnboundedReceiver;
use rtnetlink::constants::{
    RTMGRP_IPV4_IFADDR, RTMGRP_IPV4_ROUTE, RTMGRP_IPV4_RULE, RTMGRP_IPV6_IFADDR, RTMGRP_IPV6_ROUTE,
    RTMGRP_LINK,
};
use rtnetlink::packet_core::{NetlinkMessage, NetlinkPayload};
use rtnetlink::packet_route::RouteNetlinkMessage;
use rtnetlink::sys::{AsyncSocket, SocketAddr};

use crate::error::HostError;
use crate::netns::Netns;

/// What a notification was about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Change {
    /// `RTM_NEWLINK` / `RTM_DELLINK`.
    Link,
    /// `RTM_NEWADDR` / `RTM_DELADDR`.
    Address,
    /// `RTM_NEWROUTE` / `RTM_DELROUTE`.
    Route,
    /// `RTM_NEWRULE` / `RTM_DELRULE`.
    Rule,
    /// Anything else the groups deliver (for example an overrun notice): treat as "look again".
    Other,
}

/// A socket subscribed to the groups above inside one namespace.
///
/// Shape: notifications arrive in kernel order; [`NetlinkMonitor::next`] returns `None` once the
/// socket is closed.
pub struct NetlinkMonitor {
    messages: UnboundedReceiver<(NetlinkMessage<RouteNetlinkMessage>, SocketAddr)>,
}

impl NetlinkMonitor {
    /// Opens the socket inside `netns`, joins the groups and spawns its connection task on the
    /// current tokio runtime.
    ///
    /// Errors: [`HostError::Netns`] when the namespace cannot be entered;
    /// [`HostError::Socket`] outside a tokio runtime or when the socket cannot be bound.
    pub fn open(netns: &Netns) -> Result<Self, HostError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|e| {
            HostError::Socket(std::io::Error::other(format!(
                "no tokio runtime to drive netlink: {e}"
            )))
        })?;
        let groups = RTMGRP_LINK
            | RTMGRP_IPV4_IFADDR
            | RTMGRP_IPV6_IFADDR
            | RTMGRP_IPV4_ROUTE
            | RTMGRP_IPV6_ROUTE
            | RTMGRP_IPV4_RULE;
        let opened = netns.run(|| {
            let _entered = runtime.enter();
            let (mut connection, _handle, messages) = rtnetlink::new_connection()?;
            connection.socket_mut().socket_mut().bind(&SocketAddr::new(0, groups))?;
            Ok::<_, std::io::Error>((connection, messages))
        })?;
        let (connection, messages) = opened.map_err(HostError::Socket)?;
        runtime.spawn(connection);
        Ok(Self { messages })
    }

    /// The next notification, or `None` when the socket is gone.
    pub async fn next(&mut self) -> Option<Change> {
        let (message, _) = self.messages.next().await?;
        Some(match message.payload {
            NetlinkPayload::InnerMessage(inner) => classify(&inner),
            _ => Change::Other,
        })
    }
}

fn classify(message: &RouteNetlinkMessage) -> Change {
    use RouteNetlinkMessage as M;
    match message {
        M::NewLink(_) | M::DelLink(_) => Change::Link,
        M::NewAddress(_) | M::DelAddress(_) => Change::Address,
        M::NewRoute(_) | M::DelRoute(_) => Change::Route,
        M::NewRule(_) | M::DelRule(_) => Change::Rule,
        _ => Change::Other,
    }
}
