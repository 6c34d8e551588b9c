//! The rtnetlink connection of one [`super::NetlinkBackend`]: opening it inside the target
//! namespace, and the two request shapes every artifact module uses (a dump, an acknowledged
//! change).
//!
//! Builds no kernel messages itself (that is [`super::convert`]) and holds no ownership policy.

use std::io;

use futures::StreamExt;
use rtnetlink::packet_core::{
    NLM_F_ACK, NLM_F_DUMP, NLM_F_DUMP_INTR, NLM_F_REQUEST, NetlinkMessage, NetlinkPayload,
};
use rtnetlink::packet_route::RouteNetlinkMessage;
use rtnetlink::sys::AsyncSocket;

use super::convert;
use crate::artifact::ArtifactKey;
use crate::error::HostError;
use crate::netns::Netns;

/// A failed rtnetlink exchange, before it is attributed to an artifact.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NlError {
    /// The kernel answered `NLMSG_ERROR` (or a dump's `NLMSG_DONE`) with a negative errno.
    #[error("{message}")]
    Kernel {
        /// errno, positive (`libc::ENETUNREACH`).
        errno: i32,
        /// strerror text, prefixed by the extended ack message (`NLMSGERR_ATTR_MSG`) if any.
        message: String,
    },
    /// A dump was marked `NLM_F_DUMP_INTR`: the table changed while it was read.
    #[error("dump interrupted by a concurrent change")]
    Interrupted,
    /// The connection task is gone (socket closed).
    #[error("rtnetlink connection closed")]
    Closed,
    /// The kernel answered with something the request does not expect (`NLMSG_OVERRUN`).
    #[error("unexpected netlink answer: {0}")]
    Unexpected(String),
}

/// One rtnetlink socket bound to a namespace, driven by a task on the tokio runtime.
#[derive(Clone, Debug)]
pub(crate) struct Conn {
    handle: rtnetlink::Handle,
}

impl NlError {
    /// The errno, when the kernel gave one.
    pub(crate) fn errno(&self) -> Option<i32> {
        match self {
            Self::Kernel { errno, .. } => Some(*errno),
            _ => None,
        }
    }

    /// Attributes a failed change (`create`, `modify`, `delete`) to `key`.
    ///
    /// Kernel errors become [`HostError::Rejected`] keeping errno and message; a closed
    /// connection becomes [`HostError::Socket`].
    pub(crate) fn rejected(self, key: &ArtifactKey, op: &'static str) -> HostError {
        match self {
            Self::Kernel { errno, message } => {
                HostError::Rejected { key: key.clone(), op, message, errno: Some(errno) }
            }
            Self::Closed => HostError::Socket(io::Error::other(self.to_string())),
            Self::Interrupted | Self::Unexpected(_) => {
                HostError::Rejected { key: key.clone(), op, message: self.to_string(), errno: None }
            }
        }
    }

    /// Attributes a failed listing of `what` (`routes`, `links`).
    pub(crate) fn dump(self, what: &str) -> HostError {
        match self {
            Self::Closed => HostError::Socket(io::Error::other(self.to_string())),
            other => HostError::Dump { what: what.to_string(), message: other.to_string() },
        }
    }
}

impl Conn {
    /// Opens an rtnetlink socket inside `netns` and spawns its connection task on the current
    /// tokio runtime (current-thread or multi-thread).
    ///
    /// The socket has `NETLINK_EXT_ACK` (kernel error messages) and `NETLINK_CAP_ACK` (errors do
    /// not echo the request payload) set, see `netlink(7)`.
    /// Errors: [`HostError::Socket`] outside a tokio runtime or when the socket cannot be
    /// opened; [`HostError::Netns`] when the namespace cannot be entered.
    pub(crate) fn open(netns: &Netns) -> Result<Self, HostError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|e| {
            HostError::Socket(io::Error::other(format!("no tokio runtime to drive netlink: {e}")))
        })?;
        let opened = netns.run(|| {
            // AsyncFd registers with the runtime's I/O driver: enter it on this thread.
            let _entered = runtime.enter();
            let (mut connection, handle, _unsolicited) = rtnetlink::new_connection()?;
            // Forward NLMSG_DONE and acks so a request that ends without one is seen as lost.
            connection.set_forward_done(true);
            connection.set_forward_ack(true);
            let socket = connection.socket_mut().socket_mut();
            socket.set_ext_ack(true)?;
            socket.set_cap_ack(true)?;
            Ok::<_, io::Error>((connection, handle))
        })?;
        let (connection, handle) = opened.map_err(HostError::Socket)?;
        runtime.spawn(connection);
        Ok(Self { handle })
    }

    /// Dumps (`NLM_F_DUMP`) what `request` asks for.
    ///
    /// Shape: the inner messages in kernel order.
    /// Errors: [`NlError::Kernel`] on `NLMSG_ERROR` or an errno in `NLMSG_DONE`;
    /// [`NlError::Interrupted`] when any part carries `NLM_F_DUMP_INTR`.
    pub(crate) async fn dump(
        &self,
        request: RouteNetlinkMessage,
    ) -> Result<Vec<RouteNetlinkMessage>, NlError> {
        let mut message = NetlinkMessage::from(request);
        message.header.flags = NLM_F_REQUEST | NLM_F_DUMP;
        let mut handle = self.handle.clone();
        let mut answers = handle.request(message).map_err(|_| NlError::Closed)?;
        let mut out = Vec::new();
        let mut interrupted = false;
        let mut done = false;
        while let Some(answer) = answers.next().await {
            interrupted |= answer.header.flags & NLM_F_DUMP_INTR != 0;
            match answer.payload {
                NetlinkPayload::InnerMessage(inner) => out.push(inner),
                NetlinkPayload::Error(e) if e.code.is_some() => {
                    return Err(convert::error_from_nl(&e));
                }
                NetlinkPayload::Done(d) if d.code != 0 => {
                    return Err(convert::done_error_from_nl(&d));
                }
                NetlinkPayload::Done(_) => done = true,
                NetlinkPayload::Overrun(_) => {
                    return Err(NlError::Unexpected("netlink overrun".to_string()));
                }
                _ => {}
            }
        }
        match (done, interrupted) {
            (false, _) => Err(NlError::Closed),
            (true, true) => Err(NlError::Interrupted),
            (true, false) => Ok(out),
        }
    }

    /// Sends `request` with `NLM_F_REQUEST | NLM_F_ACK | flags` and waits for the ack.
    ///
    /// `flags` is e.g. `NLM_F_CREATE | NLM_F_EXCL` (`ip route add`) or
    /// `NLM_F_CREATE | NLM_F_REPLACE` (`ip route replace`).
    /// Errors: [`NlError::Kernel`] with errno and the extended ack message.
    pub(crate) async fn change(
        &self,
        request: RouteNetlinkMessage,
        flags: u16,
    ) -> Result<(), NlError> {
        let mut message = NetlinkMessage::from(request);
        message.header.flags = NLM_F_REQUEST | NLM_F_ACK | flags;
        let mut handle = self.handle.clone();
        let mut answers = handle.request(message).map_err(|_| NlError::Closed)?;
        while let Some(answer) = answers.next().await {
            if let NetlinkPayload::Error(e) = answer.payload {
                return match e.code {
                    Some(_) => Err(convert::error_from_nl(&e)),
                    None => Ok(()),
                };
            }
        }
        Err(NlError::Closed)
    }
}
