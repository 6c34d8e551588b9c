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
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Netns { .. } => "NamespaceUnavailable",
            Self::Socket(_) => "NetlinkUnavailable",
            Self::Rejected { .. } => "KernelRejected",
            Self::Missing { .. } => "DependencyMissing",
            Self::Conflict { .. } => "ArtifactConflict",
            Self::Invalid { .. } => "InvalidArtifact",
            Self::Dump { .. } => "InventoryFailed",
            Self::WrongBackend { .. } => "InternalError",
            Self::Service { .. } => "ServiceFailed",
            Self::Bus(_) => "BusUnavailable",
            Self::File { .. } => "FileFailed",
            Self::Sysctl { .. } => "SysctlFailed",
        }
    }
}
