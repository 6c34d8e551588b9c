//! What can go wrong talking to a DNS server, mapped from the replies BIND 9 gives (design
//! brief `dns-bind9.md` §3, "Error map", measured against BIND 9.18), and the stable status
//! reason of each condition.

use std::fmt;
use std::net::SocketAddr;

use hickory_proto::op::ResponseCode;
use hickory_proto::rr::RecordType;
use routerd_host::ControllerCode;

use crate::status::words;

use super::MAX_UPDATE_BYTES;

/// The kind of exchange that failed, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// A dynamic update (RFC 2136).
    Update,
    /// A full zone transfer (RFC 5936).
    Transfer,
    /// A query of the zone's SOA record (RFC 1035).
    SoaQuery,
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Update => "UPDATE",
            Self::Transfer => "zone transfer",
            Self::SoaQuery => "SOA query",
        })
    }
}

/// Why an exchange with a DNS server failed. Every message names the server (BIND's
/// `address#port`) and, when the exchange was signed, the TSIG key. Names are kept as text
/// (`lab.example.`), which keeps the error small.
#[derive(Debug, Clone, thiserror::Error)]
pub enum WireError {
    /// The server does not know the key's name or algorithm (NOTAUTH + TSIG error BADKEY,
    /// RFC 8945 §5.2.1).
    #[error("server {} does not know TSIG key {key:?} (BADKEY)", at(.server))]
    TsigBadKey {
        /// The key name, without the trailing dot.
        key: String,
        /// The server.
        server: SocketAddr,
    },
    /// The server knows the key but our MAC does not verify: the secrets differ (NOTAUTH +
    /// BADSIG, RFC 8945 §5.2.2).
    #[error(
        "server {} rejected the signature of TSIG key {key:?}: the secrets differ (BADSIG)",
        at(.server)
    )]
    TsigBadSig {
        /// The key name.
        key: String,
        /// The server.
        server: SocketAddr,
    },
    /// Our signing time is outside the server's clock ± the fudge (300 s) (NOTAUTH + BADTIME,
    /// RFC 8945 §5.2.3).
    #[error(
        "server {} rejected the signing time of TSIG key {key:?}: the clocks differ by more \
         than the fudge (BADTIME)",
        at(.server)
    )]
    TsigBadTime {
        /// The key name.
        key: String,
        /// The server.
        server: SocketAddr,
    },
    /// A signed UPDATE was refused (REFUSED, RFC 2136 §3.3): the zone's `update-policy` does
    /// not grant the key this change, or named's integrity checks reject it (an in-zone MX or
    /// SRV target without an address, measured).
    #[error(
        "server {} refused the UPDATE of zone {zone} signed with TSIG key {key:?} (REFUSED: \
         the update-policy does not grant it, or named's checks reject it)",
        at(.server)
    )]
    UpdateRefused {
        /// The server.
        server: SocketAddr,
        /// The zone apex, absolute.
        zone: String,
        /// The key name.
        key: String,
    },
    /// A signed zone transfer was refused: `allow-transfer` does not grant the key.
    #[error(
        "server {} refused the zone transfer of {zone} with TSIG key {key:?} (REFUSED: \
         allow-transfer does not grant it)",
        at(.server)
    )]
    TransferRefused {
        /// The server.
        server: SocketAddr,
        /// The zone apex, absolute.
        zone: String,
        /// The key name.
        key: String,
    },
    /// The server does not serve the zone: NOTAUTH without a TSIG error (RFC 2136 §3.1.1), or
    /// for an SOA query REFUSED or an answer without authority or SOA.
    #[error(
        "server {} answered NOTAUTH to the {op} of zone {zone}{}: it is not authoritative for \
         the zone",
        at(.server),
        with_key(.key)
    )]
    NotAuthoritative {
        /// The server.
        server: SocketAddr,
        /// The zone apex, absolute.
        zone: String,
        /// What was answered.
        op: Operation,
        /// The key name, if the request was signed.
        key: Option<String>,
    },
    /// An unsigned request was refused: the server wants TSIG.
    #[error(
        "server {} refused the unsigned {op} of zone {zone} (REFUSED: it requires a TSIG key)",
        at(.server)
    )]
    TsigRequired {
        /// The server.
        server: SocketAddr,
        /// The zone apex, absolute.
        zone: String,
        /// What was refused.
        op: Operation,
    },
    /// No connection, no reply within the timeout, or the connection broke.
    #[error("server {}{} is unreachable: {message}", at(.server), keyed(.key))]
    Unreachable {
        /// The server.
        server: SocketAddr,
        /// The key name, if the request was signed.
        key: Option<String>,
        /// What failed (`connecting: Connection refused`, `no reply within 5s`).
        message: String,
    },
    /// An RRset routerd was to create exists already (YXRRSET to the "RRset does not exist"
    /// prerequisite, RFC 2136 §2.4.3): someone else's data, never overwritten.
    #[error(
        "an RRset to create in zone {zone} exists already on server {}{}: routerd does not \
         overwrite what it did not create; adopt it (routerctl adopt --apply) or remove it there",
        at(.server),
        with_key(.key)
    )]
    Exists {
        /// The server.
        server: SocketAddr,
        /// The zone apex, absolute.
        zone: String,
        /// The key name, if the request was signed.
        key: Option<String>,
    },
    /// The server accepted the UPDATE but left the RRset out: a CNAME at a name that holds
    /// other data is silently ignored (RFC 2136 §3.4.2.2). Found by reading the zone back.
    #[error(
        "server {} ignored the {rtype} RRset {owner} of zone {zone}: the name holds other data \
         (RFC 2136 §3.4.2.2); remove that data on the server, or the record from router.yaml",
        at(.server)
    )]
    Ignored {
        /// The server.
        server: SocketAddr,
        /// The zone apex, absolute.
        zone: String,
        /// The RRset's owner.
        owner: String,
        /// The RRset's type.
        rtype: RecordType,
    },
    /// Any other response code.
    #[error(
        "server {} answered {rcode} (rcode {}) to the {op} of zone {zone}{}",
        at(.server),
        u16::from(*.rcode),
        with_key(.key)
    )]
    Rcode {
        /// The server.
        server: SocketAddr,
        /// The zone apex, absolute.
        zone: String,
        /// The key name, if the request was signed.
        key: Option<String>,
        /// What was answered.
        op: Operation,
        /// The response code.
        rcode: ResponseCode,
    },
    /// A reply that does not decode, does not belong to the request, or whose TSIG does not
    /// verify.
    #[error("server {}{} sent a bad reply: {message}", at(.server), keyed(.key))]
    Malformed {
        /// The server.
        server: SocketAddr,
        /// The key name, if the request was signed.
        key: Option<String>,
        /// What is wrong with it.
        message: String,
    },
    /// A request hickory could not sign or encode.
    #[error("could not encode the {op} for server {}: {message}", at(.server))]
    Encode {
        /// The server.
        server: SocketAddr,
        /// What was being encoded.
        op: Operation,
        /// Why.
        message: String,
    },
    /// One RRset's delete and adds alone exceed an UPDATE message.
    #[error(
        "RRset {owner} {rtype} does not fit in one UPDATE message ({MAX_UPDATE_BYTES} bytes) to \
         server {}",
        at(.server)
    )]
    TooLarge {
        /// The server.
        server: SocketAddr,
        /// The RRset's owner.
        owner: String,
        /// The RRset's type.
        rtype: RecordType,
    },
    /// An RRset that cannot be part of an UPDATE of the zone: its owner is outside it, or a
    /// record's data is of another type. Nothing was sent.
    #[error("RRset {owner} {rtype} cannot be sent in an UPDATE of zone {zone}: {problem}")]
    BadChange {
        /// The zone apex, absolute.
        zone: String,
        /// The RRset's owner.
        owner: String,
        /// The RRset's type.
        rtype: RecordType,
        /// What is wrong (`owner outside the zone`).
        problem: &'static str,
    },
}

impl WireError {
    /// The stable status reason of the condition (`crate::status::words`): `TsigBadKey`,
    /// `TsigBadSig`, `TsigBadTime`, `UpdateRefused` (also for [`WireError::TsigRequired`]),
    /// `NotAuthoritative`, `ServerUnreachable`, `ForeignRRset` ([`WireError::Exists`]),
    /// `UpdateIgnored` ([`WireError::Ignored`]), otherwise `UpdateFailed`.
    pub fn reason(&self) -> ControllerCode {
        match self {
            Self::TsigBadKey { .. } => words::TSIG_BAD_KEY,
            Self::TsigBadSig { .. } => words::TSIG_BAD_SIG,
            Self::TsigBadTime { .. } => words::TSIG_BAD_TIME,
            Self::UpdateRefused { .. } | Self::TsigRequired { .. } => words::UPDATE_REFUSED,
            Self::NotAuthoritative { .. } => words::NOT_AUTHORITATIVE,
            Self::Exists { .. } => words::FOREIGN_RRSET,
            Self::Ignored { .. } => words::UPDATE_IGNORED,
            Self::Unreachable { .. } => words::SERVER_UNREACHABLE,
            Self::TransferRefused { .. }
            | Self::Rcode { .. }
            | Self::Malformed { .. }
            | Self::Encode { .. }
            | Self::TooLarge { .. }
            | Self::BadChange { .. } => words::UPDATE_FAILED,
        }
    }
}

/// A server as BIND writes it in logs and `dig` output: `127.0.0.1#5300`.
fn at(server: &SocketAddr) -> String {
    format!("{}#{}", server.ip(), server.port())
}

fn with_key(key: &Option<String>) -> String {
    key.as_ref().map(|k| format!(" with TSIG key {k:?}")).unwrap_or_default()
}

fn keyed(key: &Option<String>) -> String {
    key.as_ref().map(|k| format!(" (TSIG key {k:?})")).unwrap_or_default()
}
