//! Errors of host access, with the policy (class, retryability, stable reason) on the type.

use crate::artifact::ArtifactKey;

/// Coarse class of a host error; decides retry and CLI exit codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// The request itself is wrong (bad attribute value); retrying will not help.
    Invalid,
    /// The host holds something that conflicts (object exists with other owner/attributes).
    Conflict,
    /// May succeed later (EBUSY, EAGAIN, interrupted dump).
    Transient,
    /// The kernel or service refused it (EPERM, ENETUNREACH, ENODEV).
    Rejected,
    /// A bug on our side (an invariant broke).
    Bug,
}

/// A host access failure, naming the artifact or namespace involved.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The network namespace could not be opened or entered.
    #[error("network namespace {name}: {source}")]
    Netns {
        /// `/run/netns/NAME` name, or the path.
        name: String,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A netlink socket could not be opened or talked to.
    #[error("netlink socket: {0}")]
    Socket(#[source] std::io::Error),
    /// The kernel rejected an operation on an artifact.
    #[error("{key}: kernel rejected {op}: {message}")]
    Rejected {
        /// The artifact.
        key: ArtifactKey,
        /// `create`, `modify`, `delete`.
        op: &'static str,
        /// errno text or extended ack message from the kernel.
        message: String,
        /// errno, when known (positive, e.g. `libc::ENETUNREACH`).
        errno: Option<i32>,
    },
    /// A dependency named by the artifact is missing on the host (link for an address).
    #[error("{key}: {what} does not exist")]
    Missing {
        /// The artifact.
        key: ArtifactKey,
        /// What is missing (`link wan0`).
        what: String,
    },
    /// A host object holds the artifact's name but is something else (a link of another type,
    /// a VLAN with another ID or parent). routerd neither changes nor deletes it.
    #[error(
        "{key}: the host has {found}, the config wants {wanted}; routerd neither changes nor \
         deletes it (rename or remove it by hand, or choose another name)"
    )]
    Conflict {
        /// The artifact.
        key: ArtifactKey,
        /// What is on the host (`link eth1.20 of type veth`).
        found: String,
        /// What the config declares (`vlan 20 (802.1Q) on eth1`).
        wanted: String,
    },
    /// The artifact's attributes cannot be expressed to this backend.
    #[error("{key}: {message}")]
    Invalid {
        /// The artifact.
        key: ArtifactKey,
        /// What is wrong.
        message: String,
    },
    /// A listing (dump) failed.
    #[error("listing {what}: {message}")]
    Dump {
        /// What was listed (`routes`, `nft tables`).
        what: String,
        /// Why.
        message: String,
    },
    /// The backend was handed a kind it does not serve: an engine bug.
    #[error("{key}: not handled by backend {backend}")]
    WrongBackend {
        /// The artifact.
        key: ArtifactKey,
        /// The backend's family.
        backend: crate::kinds::ApplyWith,
    },
    /// The service manager (systemd) or a daemon refused or failed an operation: a job that
    /// ended other than `done`, a D-Bus error, a configuration the daemon rejects.
    #[error("{key}: {op}: {message}")]
    Service {
        /// The artifact.
        key: ArtifactKey,
        /// What was attempted (`start`, `reload`, `check configuration`).
        op: &'static str,
        /// The manager's or daemon's words.
        message: String,
    },
    /// The system bus could not be reached.
    #[error("system bus: {0}")]
    Bus(String),
    /// A file of a file-based configurator could not be read or written.
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: std::path::PathBuf,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A service a controller crate talks to (a DNS server, a remote API) refused or failed
    /// the operation, for a reason of the crate's own vocabulary (`TsigBadKey`); the engine
    /// writes the reason before the error. Not retried.
    #[error("{key}: {message}")]
    Refused {
        /// The artifact.
        key: ArtifactKey,
        /// The crate's stable reason.
        reason: ControllerCode,
        /// The service's words, naming what was attempted and what it refused.
        message: String,
    },
    /// A sysctl file could not be read or written.
    #[error("sysctl {key}: {source}")]
    Sysctl {
        /// Dotted key.
        key: String,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl HostError {
    /// The class of this error.
    pub fn class(&self) -> ErrorClass {
        match self {
            Self::Netns { .. } | Self::Socket(_) => ErrorClass::Transient,
            Self::Rejected { errno, .. } => match errno {
                Some(e) if *e == libc::EBUSY || *e == libc::EAGAIN || *e == libc::EINTR => {
                    ErrorClass::Transient
                }
                Some(e) if *e == libc::EEXIST => ErrorClass::Conflict,
                Some(e) if *e == libc::EINVAL || *e == libc::ERANGE => ErrorClass::Invalid,
                _ => ErrorClass::Rejected,
            },
            Self::Missing { .. } => ErrorClass::Rejected,
            Self::Conflict { .. } => ErrorClass::Conflict,
            Self::Invalid { .. } => ErrorClass::Invalid,
            Self::Dump { .. } => ErrorClass::Transient,
            Self::WrongBackend { .. } => ErrorClass::Bug,
            Self::Service { .. } | Self::File { .. } => ErrorClass::Rejected,
            Self::Bus(_) => ErrorClass::Transient,
            Self::Refused { .. } => ErrorClass::Rejected,
            Self::Sysctl { source, .. } => match source.kind() {
                std::io::ErrorKind::NotFound => ErrorClass::Rejected,
                std::io::ErrorKind::InvalidInput => ErrorClass::Invalid,
                _ => ErrorClass::Rejected,
            },
        }
    }

    /// Whether retrying the same operation may succeed.
    pub fn is_retryable(&self) -> bool {
        self.class() == ErrorClass::Transient
    }

    /// Stable reason code for status conditions (`KernelRejected`, `DependencyMissing`, ...).
    pub fn reason_code(&self) -> HostReason {
        match self {
            Self::Netns { .. } => HostReason::NamespaceUnavailable,
            Self::Socket(_) => HostReason::NetlinkUnavailable,
            Self::Rejected { .. } => HostReason::KernelRejected,
            Self::Missing { .. } => HostReason::DependencyMissing,
            Self::Conflict { .. } => HostReason::ArtifactConflict,
            Self::Invalid { .. } => HostReason::InvalidArtifact,
            Self::Dump { .. } => HostReason::InventoryFailed,
            Self::WrongBackend { .. } => HostReason::InternalError,
            Self::Service { .. } => HostReason::ServiceFailed,
            Self::Bus(_) => HostReason::BusUnavailable,
            Self::File { .. } => HostReason::FileFailed,
            Self::Sysctl { .. } => HostReason::SysctlFailed,
            Self::Refused { reason, .. } => HostReason::Controller(*reason),
        }
    }

    /// [`HostError::reason_code`] as its string (`KernelRejected`).
    pub fn reason(&self) -> &'static str {
        self.reason_code().as_str()
    }
}

/// The stable reason code of a [`HostError`], one per variant: what status conditions, the
/// Result document and the CLI show. The engine's one reason vocabulary
/// (`routerd_engine::reason::Reason`) carries these as its `Host` variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum HostReason {
    /// [`HostError::Netns`]: the network namespace could not be opened or entered.
    NamespaceUnavailable,
    /// [`HostError::Socket`]: a netlink socket could not be opened or talked to.
    NetlinkUnavailable,
    /// [`HostError::Rejected`]: the kernel rejected the operation.
    KernelRejected,
    /// [`HostError::Missing`]: something the artifact names is not on the host.
    DependencyMissing,
    /// [`HostError::Conflict`]: a host object of another type holds the artifact's name.
    ArtifactConflict,
    /// [`HostError::Invalid`]: the attributes cannot be expressed to the backend.
    InvalidArtifact,
    /// [`HostError::Dump`]: a listing failed.
    InventoryFailed,
    /// [`HostError::WrongBackend`]: a backend was handed a kind it does not serve (a bug).
    InternalError,
    /// [`HostError::Service`]: systemd or a daemon refused or failed the operation.
    ServiceFailed,
    /// [`HostError::Bus`]: the system bus could not be reached.
    BusUnavailable,
    /// [`HostError::File`]: a configurator's file could not be read or written.
    FileFailed,
    /// [`HostError::Sysctl`]: a sysctl file could not be read or written.
    SysctlFailed,
    /// [`HostError::Refused`]: a controller crate's own reason (`TsigBadKey`), serialized as
    /// its word. Not read back as a `HostReason`: the engine's `Reason` reads the word as its
    /// own `Controller` variant, so one word has one form.
    #[serde(untagged, skip_deserializing)]
    Controller(ControllerCode),
}

impl HostReason {
    /// The CamelCase code (`KernelRejected`), as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NamespaceUnavailable => "NamespaceUnavailable",
            Self::NetlinkUnavailable => "NetlinkUnavailable",
            Self::KernelRejected => "KernelRejected",
            Self::DependencyMissing => "DependencyMissing",
            Self::ArtifactConflict => "ArtifactConflict",
            Self::InvalidArtifact => "InvalidArtifact",
            Self::InventoryFailed => "InventoryFailed",
            Self::InternalError => "InternalError",
            Self::ServiceFailed => "ServiceFailed",
            Self::BusUnavailable => "BusUnavailable",
            Self::FileFailed => "FileFailed",
            Self::SysctlFailed => "SysctlFailed",
            Self::Controller(code) => code.as_str(),
        }
    }
}

impl std::fmt::Display for HostReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// A word of a controller crate's status vocabulary (ADR 0013): a condition type (`Published`,
/// `Loaded`) or a stable reason (`TsigBadKey`, `ZoneLoaded`), CamelCase, declared as a constant
/// by the crate (`ControllerCode::new("TsigBadKey")`) and compared and serialized as its text.
/// One word, one meaning across every crate and the engine's own reasons.
///
/// Read back from JSON (a Result document), a word is interned: each distinct word is kept
/// once for the life of the process, at most [`ControllerCode::MAX_INTERNED`] of them; words
/// beyond that, and words that are not CamelCase ASCII of at most 64 bytes, are refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ControllerCode(&'static str);

impl ControllerCode {
    /// Distinct words [`serde::Deserialize`] keeps before it refuses new ones.
    pub const MAX_INTERNED: usize = 1024;

    /// The word `code` (`TsigBadKey`).
    pub const fn new(code: &'static str) -> Self {
        Self(code)
    }

    /// The word.
    pub const fn as_str(self) -> &'static str {
        self.0
    }

    /// Whether `word` is CamelCase ASCII of 1 to 64 bytes (`TsigBadKey`).
    pub fn is_valid(word: &str) -> bool {
        (1..=64).contains(&word.len())
            && word.starts_with(|c: char| c.is_ascii_uppercase())
            && word.chars().all(|c| c.is_ascii_alphanumeric())
    }
}

impl std::fmt::Display for ControllerCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.0)
    }
}

impl serde::Serialize for ControllerCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> serde::Deserialize<'de> for ControllerCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use std::collections::BTreeSet;
        use std::sync::Mutex;
        static INTERNED: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

        let word = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        if !Self::is_valid(&word) {
            return Err(serde::de::Error::custom(format!("{word:?} is not a reason word")));
        }
        let mut interned = INTERNED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(known) = interned.get(&*word) {
            return Ok(Self(known));
        }
        if interned.len() >= Self::MAX_INTERNED {
            return Err(serde::de::Error::custom(format!("{word:?}: too many reason words")));
        }
        // Leaked once per distinct word, bounded above: the words live as long as the process.
        let known: &'static str = Box::leak(word.into_owned().into_boxed_str());
        interned.insert(known);
        Ok(Self(known))
    }
}
