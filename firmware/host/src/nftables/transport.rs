//! Talking nfnetlink over an [`NfSocket`]: dump requests, the ruleset generation, and sending
//! a batch then collecting its acknowledgements. Netlink framing (headers, `NLMSG_ERROR`,
//! `NLMSG_DONE`, attributes) is read and written with `netlink-packet-core`, in safe code;
//! nfnetlink payloads go to [`super::sys`] for libnftnl to parse.

use std::collections::BTreeSet;
use std::io;

use rtnetlink::packet_core::{
    DoneBuffer, Emitable, ErrorBuffer, ErrorMessage, NLM_F_ACK_TLVS, NLM_F_CAPPED, NLM_F_DUMP,
    NLM_F_DUMP_INTR, NLM_F_REQUEST, NLMSG_DONE, NLMSG_ERROR, NLMSG_NOOP, NLMSG_OVERRUN,
    NetlinkBuffer, NetlinkHeader, NlasIterator, Parseable,
};

use super::sys::{self, NfSocket};

/// Extended ACK attribute holding a message string (`NLMSGERR_ATTR_MSG`, `linux/netlink.h`);
/// netlink-packet-core 0.9 does not name the `NLMSGERR_ATTR_*` types.
const NLMSGERR_ATTR_MSG: u16 = 1;
/// Size of `struct nlmsghdr` (netlink-packet-core keeps its `NETLINK_HEADER_LEN` private).
const NLMSG_HDRLEN: usize = 16;
/// Size of `struct nfgenmsg`.
const NFGENMSG_LEN: usize = 4;
/// Receive buffer: larger than any datagram the kernel builds for a dump (at most 32 KiB plus
/// the user buffer hint) or an error reply.
const RECV_BUFFER: usize = 256 * 1024;

/// One netlink message inside a received datagram.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NlMsg<'a> {
    /// `nlmsg_type`.
    pub(crate) kind: u16,
    /// `nlmsg_flags`.
    pub(crate) flags: u16,
    /// `nlmsg_seq`.
    pub(crate) seq: u32,
    /// The whole message, header included.
    pub(crate) bytes: &'a [u8],
    /// The message after its header.
    payload: &'a [u8],
}

/// A failed dump.
#[derive(Debug)]
pub(crate) enum DumpError {
    /// The ruleset changed during the dump (`NLM_F_DUMP_INTR`); retry.
    Interrupted,
    /// Socket or protocol failure.
    Io(io::Error),
}

impl From<io::Error> for DumpError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

/// One `NLMSG_ERROR` reply to a batch message: an acknowledgement when `errno` is 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ack {
    /// Sequence number of the message it answers.
    pub(crate) seq: u32,
    /// Positive errno; 0 for success.
    pub(crate) errno: i32,
    /// Extended ACK message, when the kernel gave one.
    pub(crate) message: Option<String>,
}

/// The nfnetlink message type of nf_tables message `msg` (`NFT_MSG_*`).
pub(crate) fn nft_type(msg: i32) -> u16 {
    ((libc::NFNL_SUBSYS_NFTABLES as u16) << 8) | (msg as u16)
}

/// Splits a datagram into its messages. Errors on a malformed length.
pub(crate) fn split(mut buf: &[u8]) -> io::Result<Vec<NlMsg<'_>>> {
    let mut out = Vec::new();
    while buf.len() >= NLMSG_HDRLEN {
        // Checked: the length field is at least a header and at most what is left.
        let frame = NetlinkBuffer::new_checked(buf).map_err(|_| {
            let len = NetlinkBuffer::new(buf).length();
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("netlink message length {len} with {} bytes left", buf.len()),
            )
        })?;
        let header = NetlinkHeader::parse(&frame)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        let len = header.length as usize;
        out.push(NlMsg {
            kind: header.message_type,
            flags: header.flags,
            seq: header.sequence_number,
            bytes: &buf[..len],
            payload: frame.payload(),
        });
        buf = buf.get(len.next_multiple_of(4)..).unwrap_or_default();
    }
    Ok(out)
}

/// A request of `NFT_MSG_*` type `msg` for all families, with header `flags` added to
/// `NLM_F_REQUEST`.
pub(crate) fn request(msg: i32, flags: u16, seq: u32) -> Vec<u8> {
    let mut header = NetlinkHeader::default();
    header.length = (NLMSG_HDRLEN + NFGENMSG_LEN) as u32;
    header.message_type = nft_type(msg);
    header.flags = NLM_F_REQUEST | flags;
    header.sequence_number = seq;
    let mut out = vec![0u8; NLMSG_HDRLEN];
    header.emit(&mut out);
    // struct nfgenmsg: family AF_UNSPEC (all), version NFNETLINK_V0, res_id 0.
    out.extend_from_slice(&[libc::AF_UNSPEC as u8, libc::NFNETLINK_V0 as u8, 0, 0]);
    out
}

/// Dumps every object of `NFT_MSG_GET*` type `msg`, all families; returns the messages.
pub(crate) fn dump(socket: &NfSocket, msg: i32, seq: u32) -> Result<Vec<Vec<u8>>, DumpError> {
    socket.send(&request(msg, NLM_F_DUMP, seq))?;
    let mut buf = vec![0u8; RECV_BUFFER];
    let mut out = Vec::new();
    let mut interrupted = false;
    loop {
        let n = receive(socket, &mut buf)?;
        for m in split(&buf[..n])? {
            if m.seq != seq {
                continue;
            }
            interrupted |= m.flags & NLM_F_DUMP_INTR != 0;
            match m.kind {
                NLMSG_DONE => {
                    // A `NLMSG_DONE` too short for its status counts as success.
                    let status = DoneBuffer::new_checked(m.payload).map_or(0, |d| d.code());
                    if status < 0 {
                        return Err(io::Error::from_raw_os_error(-status).into());
                    }
                    return if interrupted { Err(DumpError::Interrupted) } else { Ok(out) };
                }
                NLMSG_ERROR => {
                    let ack = parse_ack(&m)?;
                    if ack.errno == libc::EINTR {
                        return Err(DumpError::Interrupted);
                    }
                    if ack.errno != 0 {
                        return Err(io::Error::from_raw_os_error(ack.errno).into());
                    }
                }
                NLMSG_NOOP => {}
                NLMSG_OVERRUN => return Err(io::Error::other("netlink overrun").into()),
                _ => out.push(m.bytes.to_vec()),
            }
        }
    }
}

/// The current ruleset generation ID (`NFT_MSG_GETGEN`).
pub(crate) fn generation(socket: &NfSocket, seq: u32) -> io::Result<u32> {
    socket.send(&request(libc::NFT_MSG_GETGEN, 0, seq))?;
    let mut buf = vec![0u8; RECV_BUFFER];
    loop {
        let n = receive(socket, &mut buf)?;
        for m in split(&buf[..n])? {
            if m.seq != seq {
                continue;
            }
            if m.kind == NLMSG_ERROR {
                let ack = parse_ack(&m)?;
                return Err(io::Error::from_raw_os_error(ack.errno.max(1)));
            }
            if m.kind == nft_type(libc::NFT_MSG_NEWGEN) {
                return sys::parse_gen(m.bytes)
                    .ok_or_else(|| io::Error::other("unparsable NFT_MSG_NEWGEN reply"));
            }
        }
    }
}

/// Sends a finalized batch (`bytes`, `messages` messages besides begin and end) and returns
/// every acknowledgement and error the kernel queued for it.
///
/// nfnetlink processes a batch synchronously inside `sendmsg`, so all replies are queued when
/// `send` returns: they are drained without waiting, as nft does.
pub(crate) fn send_batch(socket: &NfSocket, bytes: &[u8], messages: usize) -> io::Result<Vec<Ack>> {
    // One small ACK per message, each costing up to ~1 KiB of buffer accounting.
    socket.grow_receive_buffer((messages + 2).saturating_mul(2048).max(RECV_BUFFER))?;
    socket.send(bytes)?;
    let mut buf = vec![0u8; RECV_BUFFER];
    let mut acks = Vec::new();
    while let Some(n) = socket.recv(&mut buf, false)? {
        for m in split(&buf[..n])? {
            if m.kind == NLMSG_ERROR {
                acks.push(parse_ack(&m)?);
            }
        }
    }
    Ok(acks)
}

/// The sequence numbers in `acks` that were acknowledged without error.
pub(crate) fn acknowledged(acks: &[Ack]) -> BTreeSet<u32> {
    acks.iter().filter(|a| a.errno == 0).map(|a| a.seq).collect()
}

fn receive(socket: &NfSocket, buf: &mut [u8]) -> io::Result<usize> {
    socket.recv(buf, true)?.ok_or_else(|| io::Error::from(io::ErrorKind::WouldBlock))
}

/// Parses an `NLMSG_ERROR` message: errno, and the extended ACK message if present.
pub(crate) fn parse_ack(m: &NlMsg<'_>) -> io::Result<Ack> {
    let error = ErrorBuffer::new_checked(&m.payload)
        .and_then(|b| ErrorMessage::parse(&b))
        .ok()
        .filter(|e| e.header.len() >= NLMSG_HDRLEN)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "short NLMSG_ERROR"))?;
    let errno = error.raw_code().saturating_neg();
    let message =
        if m.flags & NLM_F_ACK_TLVS != 0 { extack_message(&error, m.flags) } else { None };
    Ok(Ack { seq: m.seq, errno, message })
}

/// The `NLMSGERR_ATTR_MSG` string of an `NLMSG_ERROR` flagged `NLM_F_ACK_TLVS`.
///
/// netlink-packet-core 0.9 leaves everything after the errno in [`ErrorMessage::header`]: the
/// echoed request (only its header when `NLM_F_CAPPED`), then the extended ACK attributes. It
/// does not parse those, so the attributes are found here, past the request, and walked with
/// its [`NlasIterator`]; a malformed attribute ends the walk without a message.
fn extack_message(error: &ErrorMessage, flags: u16) -> Option<String> {
    let request_len = match error.header.get(..NLMSG_HDRLEN) {
        Some(request) if flags & NLM_F_CAPPED == 0 => {
            (NetlinkBuffer::new(request).length() as usize).max(NLMSG_HDRLEN)
        }
        _ => NLMSG_HDRLEN,
    };
    let tlvs = error.header.get(request_len.next_multiple_of(4)..).unwrap_or_default();
    let attr = NlasIterator::new(tlvs)
        .map_while(Result::ok)
        .find(|attr| attr.kind() == NLMSGERR_ATTR_MSG)?;
    let value = attr.value();
    let end = value.iter().position(|b| *b == 0).unwrap_or(value.len());
    let text = String::from_utf8_lossy(&value[..end]).trim().to_string();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(kind: u16, flags: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
        let len = (NLMSG_HDRLEN + payload.len()) as u32;
        let mut out = Vec::new();
        out.extend_from_slice(&len.to_ne_bytes());
        out.extend_from_slice(&kind.to_ne_bytes());
        out.extend_from_slice(&flags.to_ne_bytes());
        out.extend_from_slice(&seq.to_ne_bytes());
        out.extend_from_slice(&7u32.to_ne_bytes());
        out.extend_from_slice(payload);
        out.resize(out.len().next_multiple_of(4), 0);
        out
    }

    fn tlv(kind: u16, value: &[u8]) -> Vec<u8> {
        let mut out = ((4 + value.len()) as u16).to_ne_bytes().to_vec();
        out.extend_from_slice(&kind.to_ne_bytes());
        out.extend_from_slice(value);
        out.resize(out.len().next_multiple_of(4), 0);
        out
    }

    #[test]
    fn splits_padded_messages() {
        let mut buf = message(NLMSG_NOOP, 0, 1, &[1, 2, 3]);
        buf.extend(message(NLMSG_DONE, 0, 2, &0i32.to_ne_bytes()));
        let msgs = split(&buf).expect("valid");
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0].bytes.len(), 19);
        assert_eq!((msgs[1].kind, msgs[1].seq), (NLMSG_DONE, 2));
        assert_eq!(msgs[0].payload, &[1, 2, 3]);
    }

    #[test]
    fn rejects_bad_length() {
        let mut buf = message(NLMSG_NOOP, 0, 1, &[]);
        buf[0] = 200;
        let err = split(&buf).expect_err("too long");
        assert_eq!(err.to_string(), "netlink message length 200 with 16 bytes left");
        buf[0] = 8;
        let err = split(&buf).expect_err("shorter than a header");
        assert_eq!(err.to_string(), "netlink message length 8 with 16 bytes left");
    }

    #[test]
    fn ignores_trailing_bytes_shorter_than_a_header() {
        let mut buf = message(NLMSG_NOOP, 0, 1, &[]);
        buf.extend_from_slice(&[0; 8]);
        assert_eq!(split(&buf).expect("valid").len(), 1);
    }

    #[test]
    fn parses_extack_after_an_uncapped_request() {
        let mut payload = (-libc::ENOENT).to_ne_bytes().to_vec();
        let req = request(libc::NFT_MSG_DELTABLE, 0, 6);
        payload.extend_from_slice(&req);
        payload.extend(tlv(2, &20u32.to_ne_bytes())); // NLMSGERR_ATTR_OFFS
        payload.extend(tlv(NLMSGERR_ATTR_MSG, b" no such table \0"));
        let buf = message(NLMSG_ERROR, NLM_F_ACK_TLVS, 6, &payload);
        let ack = parse_ack(&split(&buf).expect("valid")[0]).expect("parses");
        assert_eq!(
            ack,
            Ack { seq: 6, errno: libc::ENOENT, message: Some("no such table".to_string()) }
        );
    }

    #[test]
    fn malformed_or_unflagged_extack_gives_no_message() {
        let mut payload = (-libc::EINVAL).to_ne_bytes().to_vec();
        payload.extend(message(nft_type(libc::NFT_MSG_NEWRULE), 0, 4, &[]));
        let mut attr = tlv(NLMSGERR_ATTR_MSG, b"bad\0");
        attr[0] = 64; // longer than what is left
        payload.extend(attr);
        let buf = message(NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS, 4, &payload);
        let ack = parse_ack(&split(&buf).expect("valid")[0]).expect("parses");
        assert_eq!(ack, Ack { seq: 4, errno: libc::EINVAL, message: None });

        let mut payload = (-libc::EINVAL).to_ne_bytes().to_vec();
        payload.extend(message(nft_type(libc::NFT_MSG_NEWRULE), 0, 4, &[]));
        payload.extend(tlv(NLMSGERR_ATTR_MSG, b"unflagged\0"));
        let buf = message(NLMSG_ERROR, NLM_F_CAPPED, 4, &payload);
        let ack = parse_ack(&split(&buf).expect("valid")[0]).expect("parses");
        assert_eq!(ack.message, None);
    }

    #[test]
    fn rejects_short_error() {
        let buf = message(NLMSG_ERROR, 0, 1, &0i32.to_ne_bytes());
        let err = parse_ack(&split(&buf).expect("valid")[0]).expect_err("short");
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(err.to_string(), "short NLMSG_ERROR");
    }

    #[test]
    fn parses_error_with_extack_message() {
        let mut payload = (-libc::EEXIST).to_ne_bytes().to_vec();
        payload.extend(message(nft_type(libc::NFT_MSG_NEWTABLE), 0, 5, &[])); // capped request
        let text = b"table exists\0";
        payload.extend_from_slice(&((4 + text.len()) as u16).to_ne_bytes());
        payload.extend_from_slice(&NLMSGERR_ATTR_MSG.to_ne_bytes());
        payload.extend_from_slice(text);
        let buf = message(NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS, 5, &payload);
        let msgs = split(&buf).expect("valid");
        let ack = parse_ack(&msgs[0]).expect("parses");
        assert_eq!(
            ack,
            Ack { seq: 5, errno: libc::EEXIST, message: Some("table exists".to_string()) }
        );
    }

    #[test]
    fn parses_plain_ack() {
        let mut payload = 0i32.to_ne_bytes().to_vec();
        payload.extend(message(nft_type(libc::NFT_MSG_NEWRULE), 0, 9, &[]));
        let buf = message(NLMSG_ERROR, NLM_F_CAPPED, 9, &payload);
        let ack = parse_ack(&split(&buf).expect("valid")[0]).expect("parses");
        assert_eq!(ack, Ack { seq: 9, errno: 0, message: None });
        assert_eq!(acknowledged(&[ack]), BTreeSet::from([9]));
    }

    #[test]
    fn request_header_is_well_formed() {
        let req = request(libc::NFT_MSG_GETTABLE, NLM_F_DUMP, 3);
        let msgs = split(&req).expect("valid");
        assert_eq!(msgs.len(), 1);
        assert_eq!(msgs[0].kind, (10 << 8) | 1);
        assert_eq!(msgs[0].flags, NLM_F_REQUEST | NLM_F_DUMP);
        assert_eq!(msgs[0].seq, 3);
    }
}
