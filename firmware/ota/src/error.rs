//! The crate's error type: RAUC refusing something (its words, for the operator) kept apart
//! from the D-Bus transport failing and from this side refusing a changed bundle.

use std::fmt;
use std::path::PathBuf;

use crate::bundle::BundleDigest;

/// What the client was doing when an error happened: a RAUC method, a property read, or the
/// D-Bus plumbing around them. `Display` gives the D-Bus name (`InstallBundle`, `LastError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// Opening the bus connection.
    Connect,
    /// Resolving RAUC's unique bus name and adding the signal match for an install.
    Subscribe,
    /// `InspectBundle` (RAUC >= 1.9).
    InspectBundle,
    /// `Info` (the pre-1.9 inspect).
    Info,
    /// `InstallBundle`.
    InstallBundle,
    /// Waiting for `Completed` after `InstallBundle` was accepted.
    Completed,
    /// `Mark`.
    Mark,
    /// `GetSlotStatus`.
    GetSlotStatus,
    /// `GetPrimary`.
    GetPrimary,
    /// Reading the named property of `de.pengutronix.rauc.Installer`.
    Property(&'static str),
}

/// An error talking to RAUC.
///
/// `Refused` carries RAUC's own message, which is meant to be shown to the operator verbatim;
/// every other variant is this client's or the bus's problem.
#[derive(Debug, thiserror::Error)]
pub enum OtaError {
    /// RAUC answered the call with an error.
    #[error("rauc refused {call}: {message}")]
    Refused {
        /// The call RAUC refused.
        call: Call,
        /// The D-Bus error name; GDBus encodes RAUC's errors as e.g.
        /// `org.gtk.GDBus.UnmappedGError.Quark._g_2dio_2derror_2dquark.Code30`.
        name: String,
        /// RAUC's message, unchanged: show it to the operator as it is.
        message: String,
    },
    /// The call did not reach RAUC or its answer did not come back: no bus, RAUC not running
    /// (`org.freedesktop.DBus.Error.ServiceUnknown`), policy denied, timeout.
    #[error("d-bus call {call} to rauc failed: {source}")]
    Transport {
        /// The call that failed.
        call: Call,
        /// zbus's error (boxed: it is large, and every `Result` here carries it).
        #[source]
        source: Box<zbus::Error>,
    },
    /// RAUC answered, but not in the shape its D-Bus API documents (a key with the wrong type,
    /// a percentage out of range).
    #[error("rauc answered {call} unexpectedly: {detail}")]
    UnexpectedReply {
        /// The call whose answer was malformed.
        call: Call,
        /// What was wrong, naming the key.
        detail: String,
    },
    /// The bus connection closed while an install was running: its outcome is unknown here
    /// (RAUC may still finish it; [`crate::Rauc::slots`] tells afterwards).
    #[error("d-bus connection to rauc closed before the install completed")]
    Disconnected,
    /// D-Bus strings are UTF-8; this path is not, so RAUC cannot be given it.
    #[error("bundle {path:?}: path is not UTF-8")]
    PathNotUtf8 {
        /// The bundle's path.
        path: PathBuf,
    },
    /// Reading the bundle to compute its digest failed.
    #[error("bundle {path:?}: cannot read: {source}")]
    Read {
        /// The bundle's path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The bundle at `path` is not the one that was inspected: nothing was installed.
    #[error("bundle {path:?} changed since it was inspected: expected {expected}, found {found}")]
    DigestMismatch {
        /// The bundle's path.
        path: PathBuf,
        /// The digest the caller inspected.
        expected: BundleDigest,
        /// The digest of what is at `path` now.
        found: BundleDigest,
    },
}

impl OtaError {
    /// True when RAUC itself said no (bad signature, wrong compatible, busy, unknown slot):
    /// the message is RAUC's and the operator should read it, retrying will not help.
    pub fn is_refused(&self) -> bool {
        matches!(self, Self::Refused { .. })
    }

    /// Sorts a failed method call: an error reply from RAUC is `Refused`; errors the bus or
    /// the D-Bus machinery produce (all named `org.freedesktop.DBus.Error.*`) and local
    /// failures are `Transport`.
    pub(crate) fn from_call(call: Call, source: zbus::Error) -> Self {
        match source {
            zbus::Error::MethodError(name, message, _) if !is_dbus_error(name.as_str()) => {
                Self::Refused { call, name: name.to_string(), message: message.unwrap_or_default() }
            }
            source => Self::transport(call, source),
        }
    }

    pub(crate) fn transport(call: Call, source: zbus::Error) -> Self {
        Self::Transport { call, source: Box::new(source) }
    }

    pub(crate) fn unexpected(call: Call, detail: impl Into<String>) -> Self {
        Self::UnexpectedReply { call, detail: detail.into() }
    }
}

/// True for the error names of the D-Bus specification (bus daemon, missing method, policy).
pub(crate) fn is_dbus_error(name: &str) -> bool {
    name.starts_with("org.freedesktop.DBus.Error.")
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Self::Connect => "connect",
            Self::Subscribe => "AddMatch",
            Self::InspectBundle => "InspectBundle",
            Self::Info => "Info",
            Self::InstallBundle => "InstallBundle",
            Self::Completed => "Completed",
            Self::Mark => "Mark",
            Self::GetSlotStatus => "GetSlotStatus",
            Self::GetPrimary => "GetPrimary",
            Self::Property(name) => name,
        };
        f.write_str(name)
    }
}
