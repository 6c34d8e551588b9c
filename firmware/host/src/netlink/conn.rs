//! The rtnetlink connection of one [`super::NetlinkBackend`]: opening it inside the target
//! namespace, and the two request shapes every artifact module uses (a dump, an acknowledged
//! change).
//!
//! Builds no kernel messages itself (that is [`super::convert`]) and holds no ownership policy.

use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use futures::StreamExt;
use rtnetlink::packet_core::{
    NLM_F_ACK, NLM_F_DUMP, NLM_F_DUMP_INTR, NLM_F_REQUEST, NetlinkDeserializable, NetlinkMessage,
    NetlinkPayload, NetlinkSerializable,
};
use rtnetlink::packet_route::RouteNetlinkMessage;
use rtnetlink::sys::{AsyncSocket, Socket, SocketAddr, protocols::NETLINK_ROUTE};

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
    /// The change socket failed to send or receive.
    #[error("rtnetlink socket: {0}")]
    Socket(io::Error),
    /// The kernel answered with something the request does not expect (`NLMSG_OVERRUN`).
    #[error("unexpected netlink answer: {0}")]
    Unexpected(String),
}

/// The rtnetlink sockets of one namespace: dumps go through a socket driven by a task on the
/// tokio runtime, changes through a blocking one.
///
/// The kernel handles an rtnetlink change inside the `sendmsg` that carries it and queues the
/// acknowledgement before the call returns (`rtnetlink_rcv` runs in the sender's context), so a
/// change is one send and one receive that never waits. Sent that way, without the connection
/// task's channels and wake-ups, a change costs a third of what it costs through the task: it
/// matters when a reconcile creates thousands of routes.
#[derive(Clone, Debug)]
pub(crate) struct Conn {
    handle: rtnetlink::Handle,
    changes: Arc<Mutex<ChangeSocket>>,
}

/// The blocking socket changes go through, with its sequence counter and receive buffer.
#[derive(Debug)]
struct ChangeSocket {
    socket: Socket,
    sequence: u32,
    send: Vec<u8>,
    receive: Vec<u8>,
}

/// Receive buffer of the change socket: an acknowledgement is a header and an errno, plus with
/// `NETLINK_EXT_ACK` a message string; `NETLINK_CAP_ACK` keeps the request out of it.
const CHANGE_RECEIVE_BUFFER: usize = 16 * 1024;

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
            Self::Socket(e) => HostError::Socket(e),
            Self::Interrupted | Self::Unexpected(_) => {
                HostError::Rejected { key: key.clone(), op, message: self.to_string(), errno: None }
            }
        }
    }

    /// Attributes a failed listing of `what` (`routes`, `links`).
    pub(crate) fn dump(self, what: &str) -> HostError {
        match self {
            Self::Closed => HostError::Socket(io::Error::other(self.to_string())),
            Self::Socket(e) => HostError::Socket(e),
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
            let mut changes = Socket::new(NETLINK_ROUTE)?;
            changes.bind_auto()?;
            changes.set_ext_ack(true)?;
            changes.set_cap_ack(true)?;
            Ok::<_, io::Error>((connection, handle, changes))
        })?;
        let (connection, handle, changes) = opened.map_err(HostError::Socket)?;
        runtime.spawn(connection);
        let changes = ChangeSocket {
            socket: changes,
            sequence: 0,
            send: Vec::new(),
            receive: vec![0; CHANGE_RECEIVE_BUFFER],
        };
        Ok(Self { handle, changes: Arc::new(Mutex::new(changes)) })
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
        // One change at a time on the socket; nothing is awaited while it is held.
        let mut changes = self.changes.lock().unwrap_or_else(PoisonError::into_inner);
        changes.exchange(message)
    }
}

impl ChangeSocket {
    /// Sends `message` and reads the acknowledgement of its sequence number.
    ///
    /// Errors: [`NlError::Kernel`] for an error acknowledgement, [`NlError::Socket`] when the
    /// socket fails, [`NlError::Unexpected`] for an answer that does not parse.
    fn exchange<T>(&mut self, mut message: NetlinkMessage<T>) -> Result<(), NlError>
    where
        T: NetlinkSerializable + NetlinkDeserializable,
    {
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
                return Err(NlError::Unexpected(format!("{n} byte answer to a change")));
            }
            // An answer of an earlier exchange that failed half-way is skipped by its number.
            let mut datagram = &self.receive[..n];
            while !datagram.is_empty() {
                let answer = NetlinkMessage::<T>::deserialize(datagram)
                    .map_err(|e| NlError::Unexpected(e.to_string()))?;
                let length = (answer.header.length as usize).next_multiple_of(4);
                datagram = datagram.get(length.max(1)..).unwrap_or_default();
                if answer.header.sequence_number != self.sequence {
                    continue;
                }
                if let NetlinkPayload::Error(e) = answer.payload {
                    return match e.code {
                        Some(_) => Err(convert::error_from_nl(&e)),
                        None => Ok(()),
                    };
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
