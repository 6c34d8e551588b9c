//! Talking nfnetlink over an [`NfSocket`]: dump requests, the ruleset generation, and sending
//! a batch then collecting its acknowledgements. Netlink framing is parsed here in safe code;
//! message payloads go to [`super::sys`] for libnftnl to parse.

use std::collections::BTreeSet;
use std::io;

use super::sys::{self, NfSocket};

/// `NLMSG_NOOP`, `NLMSG_ERROR`, `NLMSG_DONE`, `NLMSG_OVERRUN` (`linux/netlink.h`).
const NLMSG_NOOP: u16 = 1;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLMSG_OVERRUN: u16 = 4;
/// Request flags.
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_DUMP: u16 = 0x300;
/// Reply flags: the dump was interrupted by a change; the error reply omits the request; the
/// error reply carries extended ACK attributes.
const NLM_F_DUMP_INTR: u16 = 0x10;
const NLM_F_CAPPED: u16 = 0x100;
const NLM_F_ACK_TLVS: u16 = 0x200;
/// Extended ACK attribute holding a message string.
const NLMSGERR_ATTR_MSG: u16 = 1;

/// Size of `struct nlmsghdr`.
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
}

impl<'a> NlMsg<'a> {
    fn payload(&self) -> &'a [u8] {
        self.bytes.get(NLMSG_HDRLEN..).unwrap_or_default()
    }
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
        let len = read_u32(buf, 0) as usize;
        if len < NLMSG_HDRLEN || len > buf.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("netlink message length {len} with {} bytes left", buf.len()),
            ));
        }
        out.push(NlMsg {
            kind: read_u16(buf, 4),
            flags: read_u16(buf, 6),
            seq: read_u32(buf, 8),
            bytes: &buf[..len],
        });
        buf = buf.get(len.next_multiple_of(4)..).unwrap_or_default();
    }
    Ok(out)
}

/// A request of `NFT_MSG_*` type `msg` for all families, with header `flags` added to
/// `NLM_F_REQUEST`.
pub(crate) fn request(msg: i32, flags: u16, seq: u32) -> Vec<u8> {
    let len = (NLMSG_HDRLEN + NFGENMSG_LEN) as u32;
    let mut out = Vec::with_capacity(len as usize);
    out.extend_from_slice(&len.to_ne_bytes());
    out.extend_from_slice(&nft_type(msg).to_ne_bytes());
    out.extend_from_slice(&(NLM_F_REQUEST | flags).to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
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
                    let status = m.payload().get(..4).map_or(0, |_| read_i32(m.payload(), 0));
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
    let payload = m.payload();
    if payload.len() < 4 + NLMSG_HDRLEN {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "short NLMSG_ERROR"));
    }
    let errno = read_i32(payload, 0).saturating_neg();
    let mut message = None;
    if m.flags & NLM_F_ACK_TLVS != 0 {
        let request_len = if m.flags & NLM_F_CAPPED != 0 {
            NLMSG_HDRLEN
        } else {
            (read_u32(payload, 4) as usize).max(NLMSG_HDRLEN)
        };
        let tlvs = payload.get(4 + request_len.next_multiple_of(4)..).unwrap_or_default();
        message = extack_message(tlvs);
    }
    Ok(Ack { seq: m.seq, errno, message })
}

/// The `NLMSGERR_ATTR_MSG` string among netlink attributes.
fn extack_message(mut tlvs: &[u8]) -> Option<String> {
    while tlvs.len() >= 4 {
        let len = usize::from(read_u16(tlvs, 0));
        let kind = read_u16(tlvs, 2) & 0x3fff;
        if len < 4 || len > tlvs.len() {
            return None;
        }
        if kind == NLMSGERR_ATTR_MSG {
            let value = &tlvs[4..len];
            let end = value.iter().position(|b| *b == 0).unwrap_or(value.len());
            let text = String::from_utf8_lossy(&value[..end]).trim().to_string();
            return (!text.is_empty()).then_some(text);
        }
        tlvs = tlvs.get(len.next_multiple_of(4)..).unwrap_or_default();
    }
    None
}

fn read_u16(buf: &[u8], at: usize) -> u16 {
    let mut b = [0u8; 2];
    if let Some(s) = buf.get(at..at + 2) {
        b.copy_from_slice(s);
    }
    u16::from_ne_bytes(b)
}

fn read_u32(buf: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    if let Some(s) = buf.get(at..at + 4) {
        b.copy_from_slice(s);
    }
    u32::from_ne_bytes(b)
}

fn read_i32(buf: &[u8], at: usize) -> i32 {
    read_u32(buf, at) as i32
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
        while out.len() % 4 != 0 {
            out.push(0);
        }
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
    }

    #[test]
    fn rejects_bad_length() {
        let mut buf = message(NLMSG_NOOP, 0, 1, &[]);
        buf[0] = 200;
        assert!(split(&buf).is_err());
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
