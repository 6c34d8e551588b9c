//! DNS over TCP (RFC 1035 §4.2.2, RFC 7766 §8): each message preceded by its length as two
//! octets, several messages in turn over one connection, the socket opened inside the network
//! namespace of the server's side.

use std::net::SocketAddr;
use std::time::Duration;

use routerd_host::Netns;
use routerd_host::probe::socket_in;
use socket2::{Protocol, Type};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One TCP connection to a DNS server; every step bounded by the same timeout.
pub(super) struct Connection {
    stream: TcpStream,
    timeout: Duration,
}

/// Why a step failed; the caller names the server and the key.
pub(super) type TransportError = String;

impl Connection {
    /// Connects to `server` from inside `netns` within `timeout`.
    pub(super) async fn open(
        netns: &Netns,
        server: SocketAddr,
        timeout: Duration,
    ) -> Result<Self, TransportError> {
        let socket = socket_in(netns, server, Type::STREAM, Protocol::TCP, None)
            .map_err(|e| e.to_string())?;
        let socket = tokio::net::TcpSocket::from_std_stream(std::net::TcpStream::from(socket));
        let stream = within("connecting", timeout, async {
            socket.connect(server).await.map_err(|e| format!("connecting: {e}"))
        })
        .await?;
        // Each message goes out in one write; waiting for more data only adds latency.
        stream.set_nodelay(true).map_err(|e| format!("setting TCP_NODELAY: {e}"))?;
        Ok(Self { stream, timeout })
    }

    /// Sends one message.
    pub(super) async fn send(&mut self, message: &[u8]) -> Result<(), TransportError> {
        let len = u16::try_from(message.len()).map_err(|_| {
            format!("a message of {} bytes does not fit TCP framing", message.len())
        })?;
        let mut framed = Vec::with_capacity(message.len() + 2);
        framed.extend_from_slice(&len.to_be_bytes());
        framed.extend_from_slice(message);
        let stream = &mut self.stream;
        within("sending", self.timeout, async {
            stream.write_all(&framed).await.map_err(|e| format!("sending: {e}"))
        })
        .await
    }

    /// Receives the next message.
    pub(super) async fn receive(&mut self) -> Result<Vec<u8>, TransportError> {
        let stream = &mut self.stream;
        within("waiting for a reply", self.timeout, async {
            let mut len = [0u8; 2];
            stream.read_exact(&mut len).await.map_err(receiving)?;
            let mut message = vec![0u8; usize::from(u16::from_be_bytes(len))];
            stream.read_exact(&mut message).await.map_err(receiving)?;
            Ok(message)
        })
        .await
    }
}

fn receiving(e: std::io::Error) -> TransportError {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        "the server closed the connection before replying".into()
    } else {
        format!("receiving: {e}")
    }
}

/// `step` bounded by `timeout`; `what` names it in the timeout's message.
async fn within<T>(
    what: &str,
    timeout: Duration,
    step: impl Future<Output = Result<T, TransportError>>,
) -> Result<T, TransportError> {
    tokio::time::timeout(timeout, step)
        .await
        .unwrap_or_else(|_| Err(format!("{what} timed out after {timeout:?}")))
}
