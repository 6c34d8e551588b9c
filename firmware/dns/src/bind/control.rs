//! named's control channel: the commands routerd sends (`reconfig`, `status`, `zonestatus`,
//! `notify`, `sync`), behind the narrow [`Rndc`] trait, over the `rndc` crate (ISC's
//! command-channel protocol, HMAC-signed; design brief §2).
//!
//! The crate talks blocking `std::net`: [`RndcChannel`] makes each connection inside the
//! server's network namespace ([`Netns::run`]), and the calls block for at most
//! [`RNDC_TIMEOUT`]. Callers on an async runtime run them on its blocking pool.

use std::net::SocketAddr;
use std::time::Duration;

use hickory_proto::rr::Name;
use routerd_host::{HostError, Netns};

use super::key::KeyClause;

/// How long one command may take: connecting, the nonce handshake and the answer (`reconfig`
/// with a dozen zones takes about 25 ms; design brief §2).
pub const RNDC_TIMEOUT: Duration = Duration::from_secs(10);

/// What routerd asks a running named over its control channel.
pub trait Rndc {
    /// `rndc reconfig`: named reads its configuration again and loads new zones; zones gone from
    /// it stop being served (their files stay). A configuration named refuses leaves the old
    /// one running and fails the command.
    ///
    /// Errors: [`RndcError`].
    fn reconfig(&self) -> Result<(), RndcError>;

    /// `rndc status`: named's status text (version, zone count, `server is up and running`).
    ///
    /// Errors: [`RndcError`].
    fn status(&self) -> Result<String, RndcError>;

    /// `rndc zonestatus <zone>`: the zone's status text (type, files, serial, `loaded`).
    ///
    /// Errors: [`RndcError`]; [`RndcError::Failed`] for a zone named does not serve.
    fn zonestatus(&self, zone: &Name) -> Result<String, RndcError>;

    /// `rndc notify <zone>`: named sends NOTIFY for the zone to its secondaries again (a
    /// remediation: named notifies on every change by itself).
    ///
    /// Errors: [`RndcError`].
    fn notify(&self, zone: &Name) -> Result<(), RndcError>;

    /// `rndc sync <zone>`: named writes the zone's journal into its zone file (the journal
    /// stays).
    ///
    /// Errors: [`RndcError`].
    fn sync(&self, zone: &Name) -> Result<(), RndcError>;
}

/// Why an rndc command failed. Each names the control channel.
#[derive(Debug, thiserror::Error)]
pub enum RndcError {
    /// Nothing accepts connections there: named is not running (yet), or listens elsewhere.
    #[error("{address}: control channel not answering: {message}")]
    Unreachable {
        /// The control channel.
        address: SocketAddr,
        /// The connection error.
        message: String,
    },
    /// named closed the connection without an answer: what it does with a message signed by
    /// a key it does not know or a wrong secret (measured on 9.18; the crate reports "failed to
    /// fill whole buffer").
    #[error("{address}: control channel closed: rndc key rejected?")]
    KeyRejected {
        /// The control channel.
        address: SocketAddr,
    },
    /// No answer within [`RNDC_TIMEOUT`].
    #[error("{address}: rndc {command}: no answer within {RNDC_TIMEOUT:?}")]
    Timeout {
        /// The control channel.
        address: SocketAddr,
        /// The command.
        command: String,
    },
    /// named answered and refused or failed the command.
    #[error("{address}: rndc {command}: {message}")]
    Failed {
        /// The control channel.
        address: SocketAddr,
        /// The command.
        command: String,
        /// named's words.
        message: String,
    },
    /// The exchange failed otherwise (a malformed or unauthenticated answer, a key the crate
    /// cannot use).
    #[error("{address}: rndc {command}: {message}")]
    Protocol {
        /// The control channel.
        address: SocketAddr,
        /// The command.
        command: String,
        /// The crate's words.
        message: String,
    },
    /// The server's network namespace could not be entered.
    #[error("{address}: {source}")]
    Netns {
        /// The control channel.
        address: SocketAddr,
        /// Why.
        #[source]
        source: HostError,
    },
}

/// The control channel of one named: its address inside a network namespace and the key its
/// `controls` clause accepts.
#[derive(Debug, Clone)]
pub struct RndcChannel {
    netns: Netns,
    address: SocketAddr,
    key: KeyClause,
}

impl RndcChannel {
    /// The channel at `address` in `netns`, authenticated with `key` (the server's `rndc.key`).
    pub fn new(netns: Netns, address: SocketAddr, key: KeyClause) -> Self {
        Self { netns, address, key }
    }

    /// The control channel's address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Sends `command` and returns named's text (empty when it has none).
    ///
    /// Errors: [`RndcError`].
    pub fn command(&self, command: &str) -> Result<String, RndcError> {
        let address = self.address;
        let answer = self
            .netns
            .run(|| {
                let client = rndc::RndcClient::new(
                    &address.to_string(),
                    self.key.algorithm().as_str(),
                    self.key.secret_base64(),
                )?
                .with_timeout(RNDC_TIMEOUT)?;
                client.rndc_command(command)
            })
            .map_err(|source| RndcError::Netns { address, source })?;
        let answer = answer.map_err(|e| classify(address, command, e))?;
        if answer.result {
            return Ok(answer.text.unwrap_or_default());
        }
        let message = answer
            .err
            .or(answer.text)
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| "failed".to_owned());
        Err(RndcError::Failed { address, command: command.to_owned(), message })
    }
}

/// The typed form of the crate's errors, which are strings under a few variants. The
/// connection phase is "Failed to connect to server: …" (rndc 0.1.7, `transport/mod.rs`); a
/// connection named closed unanswered is `UnexpectedEof` on the first read.
fn classify(address: SocketAddr, command: &str, e: rndc::RndcError) -> RndcError {
    let command = command.to_owned();
    match e {
        rndc::RndcError::TimeoutError(_) => RndcError::Timeout { address, command },
        rndc::RndcError::NetworkError(m) if m.starts_with("Failed to connect to server") => {
            RndcError::Unreachable { address, message: m }
        }
        rndc::RndcError::NetworkError(m) if m.contains("failed to fill whole buffer") => {
            RndcError::KeyRejected { address }
        }
        other => RndcError::Protocol { address, command, message: other.to_string() },
    }
}

impl Rndc for RndcChannel {
    fn reconfig(&self) -> Result<(), RndcError> {
        self.command("reconfig").map(drop)
    }

    fn status(&self) -> Result<String, RndcError> {
        self.command("status")
    }

    fn zonestatus(&self, zone: &Name) -> Result<String, RndcError> {
        self.command(&format!("zonestatus {}", zone_arg(zone)))
    }

    fn notify(&self, zone: &Name) -> Result<(), RndcError> {
        self.command(&format!("notify {}", zone_arg(zone))).map(drop)
    }

    fn sync(&self, zone: &Name) -> Result<(), RndcError> {
        self.command(&format!("sync {}", zone_arg(zone))).map(drop)
    }
}

/// A zone as an rndc argument: its presentation form, where spaces and control characters are
/// escaped (`\032`), so it stays one word.
fn zone_arg(zone: &Name) -> String {
    zone.to_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], 953))
    }

    #[test]
    fn a_closed_connection_reads_as_a_rejected_key() {
        let e = rndc::RndcError::NetworkError(
            "Failed to read message length: failed to fill whole buffer".into(),
        );
        let mapped = classify(at(), "status", e);
        assert!(matches!(mapped, RndcError::KeyRejected { .. }));
        assert_eq!(mapped.to_string(), "127.0.0.1:953: control channel closed: rndc key rejected?");
    }

    #[test]
    fn a_refused_connection_is_unreachable_and_other_errors_keep_their_words() {
        let refused = rndc::RndcError::NetworkError(
            "Failed to connect to server: Connection refused (os error 111)".into(),
        );
        assert!(matches!(classify(at(), "reconfig", refused), RndcError::Unreachable { .. }));
        let timeout = rndc::RndcError::TimeoutError("deadline".into());
        assert!(matches!(classify(at(), "reconfig", timeout), RndcError::Timeout { .. }));
        let auth = classify(at(), "status", rndc::RndcError::AuthError("bad hmac".into()));
        assert!(auth.to_string().contains("rndc status: Auth error: bad hmac"), "{auth}");
    }

    #[test]
    fn zone_arguments_stay_one_word() {
        let odd = Name::from_labels(vec![b"a b".to_vec(), b"example".to_vec()]).expect("name");
        assert!(!zone_arg(&odd).contains(' '), "{}", zone_arg(&odd));
        let lab = Name::from_ascii("lab.example.").expect("name");
        assert_eq!(zone_arg(&lab), "lab.example.");
    }
}
