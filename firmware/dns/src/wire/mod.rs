//! The DNS wire client of the controller: RFC 2136 UPDATEs, RFC 5936 zone transfers and SOA
//! queries, each over one TCP connection of our own (RFC 1035 §4.2.2) opened inside the
//! router's network namespace, signed with TSIG (RFC 8945) when the endpoint has a key (design
//! brief `dns-bind9.md` §3).
//!
//! Messages and TSIG come from hickory-proto; the transport is ours, not hickory-net's: its
//! multiplexer verifies a reply's TSIG before exposing the rcode, so BIND's BADSIG reply (an
//! empty MAC) surfaces as a truncated-HMAC error instead of [`WireError::TsigBadSig`]. Here a
//! reply's TSIG error and rcode are read first, and only a success must verify.
//!
//! Does not touch the host beyond the sockets; reads the clock only to sign.

mod error;
mod key;
mod transport;

use std::net::SocketAddr;
use std::ops::Range;
use std::time::{Duration, Instant, SystemTime};

use hickory_proto::op::{Message, MessageType, OpCode, Query, ResponseCode, UpdateMessage};
use hickory_proto::rr::rdata::tsig::TsigError;
use hickory_proto::rr::{DNSClass, Name, RData, Record, RecordType, TSigVerifier, TSigner};
use hickory_proto::serialize::binary::{BinEncodable, BinEncoder};
use routerd_host::Netns;

pub use error::{Operation, WireError};
pub use key::{FUDGE_SECS, KeyFileError, TsigKey};
use transport::Connection;

/// The largest UPDATE message we send, in bytes, TSIG included: under TCP's 65,535-byte frame
/// with room to spare (5,000 RRsets in one message failed with `MaxBufferSizeExceeded`, brief §3).
pub const MAX_UPDATE_BYTES: usize = 60_000;

/// Room kept in each signed UPDATE for its TSIG record (RFC 8945 §4.2): a key name of up to 255
/// octets, the algorithm name, the fixed fields and a 64-octet HMAC-SHA512.
const TSIG_RESERVE: usize = 400;

/// A server to talk to and the key to sign with (none: unsigned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The server's address and port (`127.0.0.1:53`).
    pub address: SocketAddr,
    /// The TSIG key; `None` sends unsigned requests.
    pub key: Option<TsigKey>,
}

/// One RRset to replace (RFC 2136 §2.5.2 delete the RRset, then §2.5.1 add each record), or to
/// delete when `rdata` is empty. Class IN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RRsetChange {
    /// The owner name, absolute, inside the zone.
    pub owner: Name,
    /// The RRset's type; every `rdata` must be of it.
    pub rtype: RecordType,
    /// The TTL of the added records, in seconds (RFC 2181 §8: 0 to 2^31 - 1).
    pub ttl: u32,
    /// The records' data; empty deletes the RRset.
    pub rdata: Vec<RData>,
    /// Only if the RRset does not exist yet: the "RRset does not exist" prerequisite
    /// (RFC 2136 §2.4.3: class NONE, TTL 0, no data), so a create never replaces data routerd
    /// did not write; the server answers YXRRSET ([`WireError::Exists`]) otherwise.
    pub absent_before: bool,
}

/// What [`update`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpdateReport {
    /// UPDATE messages sent and answered NOERROR; 0 when there was nothing to change.
    pub messages: usize,
}

/// Why [`update`] stopped, and how far it got.
///
/// `changes[..applied]` are applied, each RRset whole. The failing message's changes were
/// refused as a whole (an UPDATE is atomic, RFC 2136 §3.7), except after a timeout or a broken
/// connection ([`WireError::Unreachable`]) once the message was sent: then the server may have
/// applied them, and only reading the zone back tells.
#[derive(Debug, thiserror::Error)]
#[error("{error} ({applied} RRset changes were applied before)")]
pub struct UpdateFailure {
    /// How many changes, from the first, were applied.
    pub applied: usize,
    /// What went wrong.
    pub error: WireError,
}

/// A zone as a transfer gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneContents {
    /// The SOA serial (RFC 1035 §3.3.13).
    pub serial: u32,
    /// Every record in transfer order, starting with the SOA, without the SOA that ends the
    /// transfer (RFC 5936 §2.2).
    pub records: Vec<Record>,
}

/// Replaces or deletes `changes` in `zone` on `ep`, signed with its key if any.
///
/// Sends as few UPDATE messages as fit in [`MAX_UPDATE_BYTES`] each, one after the other over
/// one TCP connection opened inside `netns`, each carrying whole RRsets (delete and adds
/// together), so every RRset is replaced atomically. Every reply's TSIG is verified when
/// signed. `timeout` bounds the connection and each message's round trip.
///
/// Errors: [`UpdateFailure`] with the changes applied before the first failing message and the
/// [`WireError`]; [`WireError::BadChange`] and [`WireError::TooLarge`] before anything is sent.
pub async fn update(
    netns: &Netns,
    ep: &Endpoint,
    zone: &Name,
    changes: &[RRsetChange],
    timeout: Duration,
) -> Result<UpdateReport, UpdateFailure> {
    update_at(netns, ep, zone, changes, timeout, SystemTime::now()).await
}

/// [`update`] with the signing clock given: the first message is signed at `now`, later ones
/// at `now` plus the time since the call. For a clock of the caller's, and for tests of clock
/// skew ([`WireError::TsigBadTime`]).
pub async fn update_at(
    netns: &Netns,
    ep: &Endpoint,
    zone: &Name,
    changes: &[RRsetChange],
    timeout: Duration,
    now: SystemTime,
) -> Result<UpdateReport, UpdateFailure> {
    let started = Instant::now();
    let peer = Peer::new(ep, zone, Operation::Update);
    let fail = |applied, error| UpdateFailure { applied, error };
    let batches = update_messages(&peer, changes).map_err(|e| fail(0, e))?;
    if batches.is_empty() {
        return Ok(UpdateReport { messages: 0 });
    }
    let mut conn = peer.connect(netns, timeout).await.map_err(|e| fail(0, e))?;
    let messages = batches.len();
    for Batch { changes, mut message } in batches {
        let signed_at = unix_secs(now + started.elapsed());
        peer.exchange(&mut conn, &mut message, signed_at)
            .await
            .map_err(|e| fail(changes.start, e))?;
    }
    Ok(UpdateReport { messages })
}

/// Transfers `zone` from `ep` (AXFR, RFC 5936) over one TCP connection opened inside `netns`,
/// signed with the key if any, and then verifies every reply message's TSIG, each chained to
/// the one before (RFC 8945 §5.3.1). `timeout` bounds the connection and the wait for each reply message.
///
/// Errors: [`WireError`]: [`WireError::TransferRefused`] when `allow-transfer` does not grant
/// the key, [`WireError::TsigRequired`] when unsigned and refused, [`WireError::Malformed`] for
/// a transfer that does not start with the zone's SOA.
pub async fn axfr(
    netns: &Netns,
    ep: &Endpoint,
    zone: &Name,
    timeout: Duration,
) -> Result<ZoneContents, WireError> {
    let peer = Peer::new(ep, zone, Operation::Transfer);
    let mut query = peer.query(RecordType::AXFR);
    let (bytes, mut verifier) = peer.seal(&mut query, unix_secs(SystemTime::now()))?;
    let mut conn = peer.connect(netns, timeout).await?;
    conn.send(&bytes).await.map_err(|e| peer.unreachable(e))?;
    let mut records: Vec<Record> = Vec::new();
    loop {
        let reply = conn.receive().await.map_err(|e| peer.unreachable(e))?;
        let reply = peer.check(query.metadata.id, &reply, verifier.as_mut())?;
        if reply.answers.is_empty() {
            return Err(peer.malformed("a transfer message holds no records"));
        }
        for record in reply.answers {
            match (records.first().and_then(soa_serial_of), soa_serial_of(&record)) {
                (Some(serial), Some(_)) => return Ok(ZoneContents { serial, records }),
                (None, Some(_)) if record.name == peer.zone => records.push(record),
                (None, _) => return Err(peer.malformed("the transfer does not start with its SOA")),
                (Some(_), None) => records.push(record),
            }
        }
    }
}

/// The SOA serial of `zone` on `ep` (RFC 1035 §3.3.13), asked over TCP from inside `netns`,
/// signed with the key if any. `timeout` bounds the connection and the round trip.
///
/// Errors: [`WireError`]; [`WireError::NotAuthoritative`] when the server refuses or answers
/// without authority or without the SOA.
pub async fn soa_serial(
    netns: &Netns,
    ep: &Endpoint,
    zone: &Name,
    timeout: Duration,
) -> Result<u32, WireError> {
    let peer = Peer::new(ep, zone, Operation::SoaQuery);
    let mut query = peer.query(RecordType::SOA);
    let mut conn = peer.connect(netns, timeout).await?;
    let reply = peer.exchange(&mut conn, &mut query, unix_secs(SystemTime::now())).await?;
    let serial = reply
        .answers
        .iter()
        .filter(|r| r.name == peer.zone)
        .find_map(soa_serial_of)
        .filter(|_| reply.metadata.authoritative);
    serial.ok_or_else(|| peer.not_authoritative())
}

/// One UPDATE message and the indexes of the changes it carries.
#[derive(Debug, Clone)]
struct Batch {
    changes: Range<usize>,
    message: Message,
}

/// The unsigned UPDATE messages that carry `changes` in order, each at most
/// [`MAX_UPDATE_BYTES`] once signed, none splitting an RRset.
///
/// Errors: [`WireError::BadChange`], [`WireError::TooLarge`].
fn update_messages(peer: &Peer, changes: &[RRsetChange]) -> Result<Vec<Batch>, WireError> {
    let sets: Vec<Vec<Record>> =
        changes.iter().map(|c| update_records(&peer.zone, c)).collect::<Result<_, _>>()?;
    let prerequisites: Vec<Option<Record>> = changes.iter().map(prerequisite).collect();
    let zone_section = zone_section(&peer.zone);
    let budget = MAX_UPDATE_BYTES - if peer.signer.is_some() { TSIG_RESERVE } else { 0 };
    let mut batches = Vec::new();
    let mut start = 0;
    while start < sets.len() {
        let end = start + fitting(&zone_section, &sets[start..], &prerequisites[start..], budget);
        if end == start {
            let change = &changes[start];
            return Err(WireError::TooLarge {
                server: peer.server,
                owner: change.owner.to_string(),
                rtype: change.rtype,
            });
        }
        let mut message = Message::query();
        message.metadata.op_code = OpCode::Update;
        message.metadata.recursion_desired = false;
        message.add_zone(zone_section.clone());
        message.add_pre_requisites(prerequisites[start..end].iter().flatten().cloned());
        message.add_updates(sets[start..end].iter().flatten().cloned());
        batches.push(Batch { changes: start..end, message });
        start = end;
    }
    Ok(batches)
}

/// How many of `sets`, from the first, fit in one UPDATE of at most `budget` bytes. Encodes
/// them as [`Message`] will, name compression included (RFC 1035 §4.1.4; hickory keeps only
/// the first 64 names as pointer targets), so the count is exact, not an estimate.
fn fitting(
    zone_section: &Query,
    sets: &[Vec<Record>],
    prerequisites: &[Option<Record>],
    budget: usize,
) -> usize {
    let mut buffer = Vec::with_capacity(budget);
    let mut encoder = BinEncoder::new(&mut buffer);
    // The header is 12 octets whatever its content.
    if encoder.emit_vec(&[0; 12]).and_then(|()| zone_section.emit(&mut encoder)).is_err() {
        return 0;
    }
    let mut count = 0;
    for (set, prerequisite) in sets.iter().zip(prerequisites) {
        // Past 65,535 octets the encoder refuses, which also means "does not fit". A
        // prerequisite goes in its own section; counted beside its RRset, its size is the
        // same give or take a compression pointer, well inside the budget's margin.
        let records = prerequisite.iter().chain(set);
        if records.into_iter().any(|r| r.emit(&mut encoder).is_err()) || encoder.len() > budget {
            break;
        }
        count += 1;
    }
    count
}

/// The zone section of an UPDATE (RFC 2136 §2.3): the apex, type SOA, class IN.
fn zone_section(zone: &Name) -> Query {
    Query::query(zone.clone(), RecordType::SOA)
}

/// The update section records replacing one RRset, as hickory's `delete_rrset` and `append`
/// write them: the RRset's delete (class ANY, TTL 0, no data, RFC 2136 §2.5.2), then each
/// record (class IN, RFC 2136 §2.5.1).
fn update_records(zone: &Name, change: &RRsetChange) -> Result<Vec<Record>, WireError> {
    let bad = |problem| WireError::BadChange {
        zone: zone.to_string(),
        owner: change.owner.to_string(),
        rtype: change.rtype,
        problem,
    };
    if !zone.zone_of(&change.owner) {
        return Err(bad("the owner is outside the zone"));
    }
    let meta = [RecordType::ANY, RecordType::AXFR, RecordType::IXFR, RecordType::OPT];
    if meta.contains(&change.rtype) || change.rtype == RecordType::TSIG {
        return Err(bad("the type is not one of data"));
    }
    if change.rdata.iter().any(|r| r.record_type() != change.rtype) {
        return Err(bad("a record's data is of another type"));
    }
    let mut delete = Record::update0(change.owner.clone(), 0, change.rtype);
    delete.dns_class = DNSClass::ANY;
    let adds = change
        .rdata
        .iter()
        .map(|r| Record::from_rdata(change.owner.clone(), change.ttl, r.clone()));
    Ok(std::iter::once(delete).chain(adds).collect())
}

/// The "RRset does not exist" prerequisite of `change`, if it asks for one.
fn prerequisite(change: &RRsetChange) -> Option<Record> {
    change.absent_before.then(|| {
        let mut record = Record::update0(change.owner.clone(), 0, change.rtype);
        record.dns_class = DNSClass::NONE;
        record
    })
}

fn soa_serial_of(record: &Record) -> Option<u32> {
    match &record.data {
        RData::SOA(soa) => Some(soa.serial),
        _ => None,
    }
}

/// Seconds since the Unix epoch, as TSIG's time signed (RFC 8945 §4.2); 0 before it.
fn unix_secs(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The other side of one call: where, with which key, about which zone, for what; and how its
/// replies map to [`WireError`]s.
struct Peer<'a> {
    server: SocketAddr,
    key: Option<&'a TsigKey>,
    signer: Option<TSigner>,
    /// The zone, absolute.
    zone: Name,
    op: Operation,
}

impl<'a> Peer<'a> {
    fn new(ep: &'a Endpoint, zone: &Name, op: Operation) -> Self {
        let mut zone = zone.clone();
        zone.set_fqdn(true);
        let key = ep.key.as_ref();
        Self { server: ep.address, key, signer: key.map(TsigKey::signer), zone, op }
    }

    fn query(&self, rtype: RecordType) -> Message {
        let mut query = Message::query();
        query.metadata.recursion_desired = false;
        query.add_query(Query::query(self.zone.clone(), rtype));
        query
    }

    async fn connect(&self, netns: &Netns, timeout: Duration) -> Result<Connection, WireError> {
        Connection::open(netns, self.server, timeout).await.map_err(|e| self.unreachable(e))
    }

    /// Signs `message` at `now` (Unix seconds) if there is a key and encodes it; the verifier
    /// of the reply when signed.
    fn seal(
        &self,
        message: &mut Message,
        now: u64,
    ) -> Result<(Vec<u8>, Option<TSigVerifier>), WireError> {
        let encoding = |e: &dyn std::fmt::Display| WireError::Encode {
            server: self.server,
            op: self.op,
            message: e.to_string(),
        };
        let verifier = match &self.signer {
            Some(signer) => message.finalize(signer, now).map_err(|e| encoding(&e))?,
            None => None,
        };
        Ok((message.to_vec().map_err(|e| encoding(&e))?, verifier))
    }

    /// Sends `message`, signed at `now`, and reads and checks its reply.
    async fn exchange(
        &self,
        conn: &mut Connection,
        message: &mut Message,
        now: u64,
    ) -> Result<Message, WireError> {
        let (bytes, mut verifier) = self.seal(message, now)?;
        conn.send(&bytes).await.map_err(|e| self.unreachable(e))?;
        let reply = conn.receive().await.map_err(|e| self.unreachable(e))?;
        self.check(message.metadata.id, &reply, verifier.as_mut())
    }

    /// The reply `bytes` to request `id`, if it reports success.
    ///
    /// A TSIG error (BADKEY, BADSIG, BADTIME: unsigned or signed with the server's time) wins
    /// over the rcode and is not verified. Otherwise a signed request's reply must verify,
    /// except an unsigned error reply, which is reported as what it says: a forged error only
    /// fails the call, a forged success is refused.
    fn check(
        &self,
        id: u16,
        bytes: &[u8],
        verifier: Option<&mut TSigVerifier>,
    ) -> Result<Message, WireError> {
        let reply = Message::from_vec(bytes)
            .map_err(|e| self.malformed(format!("it does not decode: {e}")))?;
        if reply.metadata.id != id || reply.metadata.message_type != MessageType::Response {
            return Err(self.malformed(format!(
                "it is not a response to request {id} (ID {}, {:?})",
                reply.metadata.id, reply.metadata.message_type
            )));
        }
        if let Some(tsig) = reply.signature()
            && let Some(error) = tsig.data.error
        {
            return Err(self.tsig_error(error, &tsig.name));
        }
        match (verifier, reply.signature()) {
            (Some(verifier), Some(tsig)) => {
                // hickory subtracts the fudge from the time unchecked.
                if tsig.data.time < u64::from(tsig.data.fudge) {
                    return Err(self.malformed("its TSIG time lies before the fudge"));
                }
                verifier
                    .verify(bytes)
                    .map_err(|e| self.malformed(format!("its TSIG does not verify: {e}")))?;
            }
            (Some(_), None) if reply.metadata.response_code == ResponseCode::NoError => {
                return Err(self.malformed("it is not signed"));
            }
            _ => {}
        }
        self.rcode(reply.metadata.response_code)?;
        Ok(reply)
    }

    fn rcode(&self, rcode: ResponseCode) -> Result<(), WireError> {
        let (server, zone, op) = (self.server, self.zone.to_string(), self.op);
        Err(match (rcode, op, self.key) {
            (ResponseCode::NoError, ..) => return Ok(()),
            (ResponseCode::Refused, Operation::Update | Operation::Transfer, None) => {
                WireError::TsigRequired { server, zone, op }
            }
            (ResponseCode::Refused, Operation::Update, Some(key)) => {
                WireError::UpdateRefused { server, zone, key: key.label() }
            }
            (ResponseCode::Refused, Operation::Transfer, Some(key)) => {
                WireError::TransferRefused { server, zone, key: key.label() }
            }
            // Without recursion a server refuses queries for zones it does not serve.
            (ResponseCode::Refused, Operation::SoaQuery, _) | (ResponseCode::NotAuth, ..) => {
                self.not_authoritative()
            }
            (ResponseCode::YXRRSet, Operation::Update, _) => {
                WireError::Exists { server, zone, key: self.key_label() }
            }
            (rcode, ..) => WireError::Rcode { server, zone, key: self.key_label(), op, rcode },
        })
    }

    /// `key_name` is the reply's TSIG owner, named when we did not sign.
    fn tsig_error(&self, error: TsigError, key_name: &Name) -> WireError {
        let server = self.server;
        let key = self.key.map_or_else(|| key_name.to_string(), TsigKey::label);
        match error {
            TsigError::BadKey => WireError::TsigBadKey { key, server },
            TsigError::BadSig => WireError::TsigBadSig { key, server },
            TsigError::BadTime => WireError::TsigBadTime { key, server },
            TsigError::BadTrunc | TsigError::Unknown(_) => {
                self.malformed(format!("TSIG error {}", u16::from(error)))
            }
        }
    }

    fn key_label(&self) -> Option<String> {
        self.key.map(TsigKey::label)
    }

    fn not_authoritative(&self) -> WireError {
        WireError::NotAuthoritative {
            server: self.server,
            zone: self.zone.to_string(),
            op: self.op,
            key: self.key_label(),
        }
    }

    fn unreachable(&self, message: String) -> WireError {
        WireError::Unreachable { server: self.server, key: self.key_label(), message }
    }

    fn malformed(&self, message: impl Into<String>) -> WireError {
        WireError::Malformed { server: self.server, key: self.key_label(), message: message.into() }
    }
}

#[cfg(test)]
mod tests;
