//! The rtnetlink socket of one [`super::NetlinkBackend`]: opening it inside the target
//! namespace, and the two request shapes every artifact module uses (a dump, an acknowledged
//! change).
//!
//! Builds no kernel messages itself (that is [`super::convert`]) and holds no ownership policy.

use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use rtnetlink::packet_core::{
    NLM_F_ACK, NLM_F_DUMP, NLM_F_DUMP_INTR, NLM_F_REQUEST, NetlinkMessage, NetlinkPayload,
};
use rtnetlink::packet_route::RouteNetlinkMessage;
use rtnetlink::sys::{Socket, SocketAddr, protocols::NETLINK_ROUTE};

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
    /// The socket failed to send or receive.
    #[error("rtnetlink socket: {0}")]
    Socket(io::Error),
    /// The kernel answered with something the request does not expect (`NLMSG_OVERRUN`, a
    /// message that does not parse).
    #[error("unexpected netlink answer: {0}")]
    Unexpected(String),
}

/// One rtnetlink socket bound to a namespace, used synchronously: a request is sent, then its
/// answers are read until the acknowledgement or the end of the dump.
///
/// The kernel handles an rtnetlink change inside the `sendmsg` that carries it and queues the
/// acknowledgement before the call returns (`rtnetlink_rcv` runs in the sender's context), and
/// fills each part of a dump inside the `recvmsg` that asks for it, so no read ever waits for
/// the kernel. Used this way, without a connection task's channels and wake-ups, a request costs
/// a fraction of what it costs through the async `rtnetlink` connection: it matters when a
/// reconcile creates thousands of routes and reads them back.
#[derive(Clone, Debug)]
pub(crate) struct Conn {
    socket: Arc<Mutex<Exchange>>,
}

/// The socket with its sequence counter and buffers.
#[derive(Debug)]
struct Exchange {
    socket: Socket,
    sequence: u32,
    send: Vec<u8>,
    receive: Vec<u8>,
}

/// Receive buffer: the kernel sizes each part of a dump to the reader's buffer, at most
/// 32 KiB (`netlink_recvmsg`); an acknowledgement is far smaller.
const RECEIVE_BUFFER: usize = 64 * 1024;

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
    /// Kernel errors become [`HostError::Rejected`] keeping errno and message; a socket failure
    /// becomes [`HostError::Socket`].
    pub(crate) fn rejected(self, key: &ArtifactKey, op: &'static str) -> HostError {
        match self {
            Self::Kernel { errno, message } => {
                HostError::Rejected { key: key.clone(), op, message, errno: Some(errno) }
            }
            Self::Socket(e) => HostError::Socket(e),
            Self::Interrupted | Self::Unexpected(_) => {
                HostError::Rejected { key: key.clone(), op, message: self.to_string(), errno: None }
            }
        }
    }

    /// Attributes a failed listing of `what` (`routes`, `links`).
    pub(crate) fn dump(self, what: &str) -> HostError {
        match self {
            Self::Socket(e) => HostError::Socket(e),
            other => HostError::Dump { what: what.to_string(), message: other.to_string() },
        }
    }
}

impl Conn {
    /// Opens an rtnetlink socket inside `netns`.
    ///
    /// The socket has `NETLINK_EXT_ACK` (kernel error messages) and `NETLINK_CAP_ACK` (errors do
    /// not echo the request payload) set, see `netlink(7)`.
    /// Errors: [`HostError::Socket`] when the socket cannot be opened; [`HostError::Netns`] when
    /// the namespace cannot be entered.
    pub(crate) fn open(netns: &Netns) -> Result<Self, HostError> {
        let opened = netns.run(|| {
            let mut socket = Socket::new(NETLINK_ROUTE)?;
            socket.bind_auto()?;
            socket.set_ext_ack(true)?;
            socket.set_cap_ack(true)?;
            Ok::<_, io::Error>(socket)
        })?;
        let socket = opened.map_err(HostError::Socket)?;
        let exchange =
            Exchange { socket, sequence: 0, send: Vec::new(), receive: vec![0; RECEIVE_BUFFER] };
        Ok(Self { socket: Arc::new(Mutex::new(exchange)) })
    }

    /// Dumps (`NLM_F_DUMP`) what `request` asks for, keeping what `keep` makes of each inner
    /// message as it is read (a parsed message is several times the size of what a listing
    /// keeps of it, and a dump of 10,000 routes would otherwise hold all of them at once).
    ///
    /// Shape: the kept values in kernel order.
    /// Errors: [`NlError::Kernel`] on `NLMSG_ERROR` or an errno in `NLMSG_DONE`;
    /// [`NlError::Interrupted`] when any part carries `NLM_F_DUMP_INTR`.
    pub(crate) async fn dump<T>(
        &self,
        request: RouteNetlinkMessage,
        mut keep: impl FnMut(&RouteNetlinkMessage) -> Option<T>,
    ) -> Result<Vec<T>, NlError> {
        let mut message = NetlinkMessage::from(request);
        message.header.flags = NLM_F_REQUEST | NLM_F_DUMP;
        let mut out = Vec::new();
        let mut interrupted = false;
        self.lock().exchange(message, |answer| {
            interrupted |= answer.header.flags & NLM_F_DUMP_INTR != 0;
            match answer.payload {
                NetlinkPayload::InnerMessage(inner) => out.extend(keep(&inner)),
                NetlinkPayload::Error(e) if e.code.is_some() => {
                    return Some(Err(convert::error_from_nl(&e)));
                }
                NetlinkPayload::Done(d) if d.code != 0 => {
                    return Some(Err(convert::done_error_from_nl(&d)));
                }
                NetlinkPayload::Done(_) => return Some(Ok(())),
                NetlinkPayload::Overrun(_) => {
                    return Some(Err(NlError::Unexpected("netlink overrun".to_string())));
                }
                _ => {}
            }
            None
        })?;
        if interrupted { Err(NlError::Interrupted) } else { Ok(out) }
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
        self.lock().exchange(message, |answer| match answer.payload {
            NetlinkPayload::Error(e) => Some(match e.code {
                Some(_) => Err(convert::error_from_nl(&e)),
                None => Ok(()),
            }),
            _ => None,
        })
    }

    /// The socket, for one exchange; nothing is awaited while it is held.
    fn lock(&self) -> std::sync::MutexGuard<'_, Exchange> {
        self.socket.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Exchange {
    /// Sends `message` under a new sequence number and hands every answer carrying that number
    /// to `answer` until it returns the outcome.
    ///
    /// Errors: the outcome's, [`NlError::Socket`] when the socket fails,
    /// [`NlError::Unexpected`] for an answer that does not parse.
    fn exchange(
        &mut self,
        mut message: NetlinkMessage<RouteNetlinkMessage>,
        mut answer: impl FnMut(NetlinkMessage<RouteNetlinkMessage>) -> Option<Result<(), NlError>>,
    ) -> Result<(), NlError> {
        self.sequence = self.sequence.wrapping_add(1);
        message.header.sequence_number = self.sequence;
        message.finalize();
        self.send.clear();
        self.send.resize(message.buffer_len(), 0);
        message.serialize(&mut self.send);
        let kernel = SocketAddr::new(0, 0);
        retry_interrupted(|| self.socket.send_to(&self.send, &kernel, 0))?;
        loop {
            let n = retry_interrupted(|| {
                let mut received = &mut self.receive[..];
                self.socket.recv(&mut received, libc::MSG_TRUNC)
            })?;
            if n > self.receive.len() {
                return Err(NlError::Unexpected(format!("{n} byte datagram")));
            }
            let mut datagram = &self.receive[..n];
            while !datagram.is_empty() {
                let parsed = NetlinkMessage::<RouteNetlinkMessage>::deserialize(datagram)
                    .map_err(|e| NlError::Unexpected(e.to_string()))?;
                let length = (parsed.header.length as usize).next_multiple_of(4).max(1);
                datagram = datagram.get(length..).unwrap_or_default();
                // An answer to an earlier exchange that failed half-way is skipped by number.
                if parsed.header.sequence_number != self.sequence {
                    continue;
                }
                if let Some(outcome) = answer(parsed) {
                    return outcome;
                }
            }
        }
    }
}

/// Runs a socket call again while a signal interrupts it.
fn retry_interrupted<T>(mut call: impl FnMut() -> io::Result<T>) -> Result<T, NlError> {
    loop {
        match call() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other.map_err(NlError::Socket),
        }
    }
}
