//! The NOTIFY listener (RFC 1996): every primary routerd runs names it in `also-notify`, so a
//! hand edit (`nsupdate`) tells the daemon at once, and the reconcile it asks for reads the
//! zone again and repairs what routerd owns (design brief §3: the NOTIFY came 0.46 s after the
//! edit). A notice only says that something changed; the resync repairs what a lost one would
//! have.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use futures::StreamExt;
use hickory_proto::op::{Message, MessageType, OpCode, ResponseCode};
use routerd_engine::registry::Notices;
use routerd_host::{HostError, Netns};

/// Where the daemon listens, in the router's namespace: loopback, beside the servers.
pub const NOTIFY_LISTEN: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 5399);

/// Listens for NOTIFY on [`NOTIFY_LISTEN`] in `netns`, answering each (so named stops
/// retrying) and yielding `NOTIFY for <zone> from <peer>`. Anything else is ignored.
///
/// Errors: [`HostError::Socket`] when the port cannot be bound (another daemon holds it).
pub fn listen(netns: &Netns) -> Result<Notices, HostError> {
    let socket = netns
        .run(|| std::net::UdpSocket::bind(NOTIFY_LISTEN))?
        .and_then(|s| s.set_nonblocking(true).map(|()| s))
        .and_then(tokio::net::UdpSocket::from_std)
        .map_err(HostError::Socket)?;
    let stream = futures::stream::unfold(socket, |socket| async move {
        let mut buf = vec![0u8; 4096];
        loop {
            let Ok((len, peer)) = socket.recv_from(&mut buf).await else { continue };
            if let Some((notice, reply)) = answer(&buf[..len], peer) {
                // A lost reply only makes named send the NOTIFY again.
                let _ = socket.send_to(&reply, peer).await;
                return Some((notice, socket));
            }
        }
    });
    Ok(stream.boxed())
}

/// The notice and the reply to a datagram, if it is a NOTIFY query.
fn answer(datagram: &[u8], peer: SocketAddr) -> Option<(String, Vec<u8>)> {
    let request = Message::from_vec(datagram).ok()?;
    if request.metadata.op_code != OpCode::Notify
        || request.metadata.message_type != MessageType::Query
    {
        return None;
    }
    let zone = request.queries.first().map(|q| q.name().to_string()).unwrap_or_default();
    let mut reply = Message::response(request.metadata.id, OpCode::Notify);
    reply.metadata.response_code = ResponseCode::NoError;
    reply.metadata.authoritative = true;
    reply.add_queries(request.queries.iter().cloned());
    Some((format!("NOTIFY for {zone} from {peer}"), reply.to_vec().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hickory_proto::op::Query;
    use hickory_proto::rr::{Name, RecordType};

    #[test]
    fn a_notify_is_answered_and_anything_else_ignored() {
        let zone = Name::from_ascii("lab.example.").expect("valid in the test");
        let mut notify = Message::query();
        notify.metadata.op_code = OpCode::Notify;
        notify.metadata.id = 4711;
        notify.add_query(Query::query(zone.clone(), RecordType::SOA));
        let peer: SocketAddr = "127.0.0.1:53000".parse().expect("valid in the test");
        let bytes = notify.to_vec().expect("encodes");
        let (notice, reply) = answer(&bytes, peer).expect("a NOTIFY");
        assert_eq!(notice, "NOTIFY for lab.example. from 127.0.0.1:53000");
        let reply = Message::from_vec(&reply).expect("decodes");
        assert_eq!(reply.metadata.id, 4711);
        assert_eq!(reply.metadata.message_type, MessageType::Response);
        assert_eq!(reply.metadata.op_code, OpCode::Notify);
        assert_eq!(reply.queries.len(), 1);
        let mut query = Message::query();
        query.add_query(Query::query(zone, RecordType::A));
        assert!(answer(&query.to_vec().expect("encodes"), peer).is_none());
        assert!(answer(b"garbage", peer).is_none());
    }
}
