//! [`NftBackend`]: inventory and configurator for `nft.table`, one atomic batch per operation.

use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;

use super::encode::{self, EncodedBatch};
use super::inventory;
use super::ir::{NftFamily, NftTableSpec, NftTableState};
use super::sys::NfSocket;
use super::transport;
use crate::artifact::{Artifact, ArtifactKey, ArtifactKind, ArtifactSpec};
use crate::backend::Backend;
use crate::error::HostError;
use crate::netns::Netns;

/// The `nftnl` backend: lists, creates, replaces and deletes whole nftables tables in one
/// network namespace.
///
/// Works synchronously: a table is one batch, which the kernel applies atomically. Batches go
/// through one `NETLINK_NETFILTER` socket opened inside the namespace with the backend and kept
/// (entering a namespace takes a thread, [`Netns::run`], and a router with hundreds of tables
/// would pay that for each); a socket that failed is dropped and the next batch opens another.
/// Listings open a fresh socket each time: a dump abandoned half-way leaves messages behind.
#[derive(Clone, Debug)]
pub struct NftBackend {
    netns: Netns,
    batches: Arc<Mutex<Option<NfSocket>>>,
}

/// The kinds this backend serves.
const KINDS: &[ArtifactKind] = &[ArtifactKind::NftTable];

impl NftBackend {
    /// A backend for `netns`.
    ///
    /// Errors: [`HostError::Netns`] when the namespace cannot be entered, [`HostError::Socket`]
    /// when no netfilter netlink socket can be opened there (no nf_tables, not root).
    pub fn new(netns: &Netns) -> Result<Self, HostError> {
        let socket = netns.run(NfSocket::open)?.map_err(HostError::Socket)?;
        Ok(Self { netns: netns.clone(), batches: Arc::new(Mutex::new(Some(socket))) })
    }

    /// The namespace this backend targets.
    pub fn netns(&self) -> &Netns {
        &self.netns
    }

    /// Every `ip`, `ip6` and `inet` table as the kernel reports it (see [`Backend::observe`]).
    ///
    /// Errors: [`HostError::Socket`], [`HostError::Dump`].
    pub fn list_tables(&self) -> Result<Vec<NftTableState>, HostError> {
        self.netns.run(|| {
            let socket = NfSocket::open().map_err(HostError::Socket)?;
            inventory::list(&socket)
                .map_err(|e| HostError::Dump { what: "nft tables".to_string(), message: e.0 })
        })?
    }

    /// Creates `spec` in one batch: the table with its ownership comment, its chains, its rules.
    ///
    /// Errors: [`HostError::Rejected`] with `EEXIST` when the table exists, or whatever else the
    /// kernel refuses; [`HostError::Invalid`] when the spec cannot be encoded.
    pub fn create_table(&self, spec: &NftTableSpec) -> Result<(), HostError> {
        let key = table_key(spec.family, &spec.name);
        let batch = encode::create(spec).map_err(|message| invalid(&key, message))?;
        self.run_batch(&key, "create", &batch)
    }

    /// Replaces the table with `spec` in one batch (delete + add in the same transaction), so
    /// the table never goes missing; creates it if it is absent.
    ///
    /// Errors: as [`NftBackend::create_table`], except that an existing table is expected.
    pub fn replace_table(&self, spec: &NftTableSpec) -> Result<(), HostError> {
        let key = table_key(spec.family, &spec.name);
        let batch = encode::replace(spec).map_err(|message| invalid(&key, message))?;
        self.run_batch(&key, "modify", &batch)
    }

    /// Deletes table `name` of `family` with everything in it. A table already gone counts as
    /// deleted.
    ///
    /// Errors: [`HostError::Rejected`] when the kernel refuses (other than `ENOENT`).
    pub fn delete_table(&self, family: NftFamily, name: &str) -> Result<(), HostError> {
        let key = table_key(family, name);
        let batch = encode::delete(family, name).map_err(|message| invalid(&key, message))?;
        match self.run_batch(&key, "delete", &batch) {
            Err(HostError::Rejected { errno: Some(libc::ENOENT), .. }) => Ok(()),
            other => other,
        }
    }

    /// Sends `batch` and turns the first error the kernel reports into
    /// [`HostError::Rejected`].
    fn run_batch(
        &self,
        key: &ArtifactKey,
        op: &'static str,
        batch: &EncodedBatch,
    ) -> Result<(), HostError> {
        // One batch at a time on the shared socket: their acknowledgements must not interleave.
        let mut kept = self.batches.lock().unwrap_or_else(PoisonError::into_inner);
        let socket = match kept.take() {
            Some(socket) => socket,
            None => self.netns.run(NfSocket::open)?.map_err(HostError::Socket)?,
        };
        let acks = transport::send_batch(&socket, &batch.bytes, batch.labels.len())
            .map_err(HostError::Socket)?;
        // Kept only after a clean exchange: a socket error drops it (closed) above.
        *kept = Some(socket);
        drop(kept);
        if let Some(failed) = acks.iter().filter(|a| a.errno != 0).min_by_key(|a| a.seq) {
            let reason = failed.message.clone().unwrap_or_else(|| errno_text(failed.errno));
            return Err(HostError::Rejected {
                key: key.clone(),
                op,
                message: format!("{reason} (in {})", batch.label(failed.seq)),
                errno: Some(failed.errno),
            });
        }
        let acked = transport::acknowledged(&acks);
        if let Some(missing) = batch.seqs.clone().find(|s| !acked.contains(s)) {
            return Err(HostError::Socket(std::io::Error::other(format!(
                "no acknowledgement from the kernel for {}",
                batch.label(missing)
            ))));
        }
        Ok(())
    }

    fn check_kind(&self, key: &ArtifactKey) -> Result<(), HostError> {
        if key.kind == ArtifactKind::NftTable {
            Ok(())
        } else {
            Err(HostError::WrongBackend {
                key: key.clone(),
                backend: crate::kinds::ApplyWith::Nftnl,
            })
        }
    }
}

impl Backend for NftBackend {
    fn apply_with(&self) -> crate::kinds::ApplyWith {
        crate::kinds::ApplyWith::Nftnl
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        KINDS
    }

    /// Lists every `ip`, `ip6` and `inet` table as [`ArtifactSpec::NftTableObserved`], in kernel
    /// order; `wanted` is ignored. Tables of other families (`bridge`, `netdev`, `arp`) are not
    /// listed. A base chain whose hook, type or policy the IR cannot express is listed with
    /// `base: None`.
    fn observe<'a>(
        &'a self,
        kind: ArtifactKind,
        _wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        Box::pin(async move {
            if kind != ArtifactKind::NftTable {
                let key = ArtifactKey::new(kind, "*");
                return Err(HostError::WrongBackend {
                    key,
                    backend: crate::kinds::ApplyWith::Nftnl,
                });
            }
            let tables = self.list_tables()?;
            Ok(tables
                .into_iter()
                .map(|t| Artifact::new(ArtifactSpec::NftTableObserved(t)))
                .collect())
        })
    }

    /// The listing is a blocking dump on the backend's nfnetlink socket.
    fn observe_is_synchronous(&self) -> bool {
        true
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            self.check_kind(&desired.key)?;
            self.create_table(desired_spec(desired)?)
        })
    }

    fn modify<'a>(
        &'a self,
        observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            self.check_kind(&desired.key)?;
            if observed.key != desired.key {
                return Err(invalid(
                    &desired.key,
                    format!("cannot turn {} into {}", observed.key, desired.key),
                ));
            }
            self.replace_table(desired_spec(desired)?)
        })
    }

    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            self.check_kind(&observed.key)?;
            let (family, name) = match &observed.spec {
                ArtifactSpec::NftTableObserved(t) => (t.family, t.name.as_str()),
                ArtifactSpec::NftTable(t) => (t.family, t.name.as_str()),
                _ => return Err(invalid(&observed.key, "not an nftables table".to_string())),
            };
            self.delete_table(family, name)
        })
    }
}

fn desired_spec(desired: &Artifact) -> Result<&NftTableSpec, HostError> {
    match &desired.spec {
        ArtifactSpec::NftTable(spec) => Ok(spec),
        ArtifactSpec::NftTableObserved(_) => Err(invalid(
            &desired.key,
            "an observed table state cannot be applied: it holds no rules".to_string(),
        )),
        _ => Err(invalid(&desired.key, "not an nftables table".to_string())),
    }
}

/// `strerror` text of `errno`, without std's " (os error N)" suffix: the errno travels in
/// [`HostError::Rejected`] already.
fn errno_text(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

fn table_key(family: NftFamily, name: &str) -> ArtifactKey {
    ArtifactKey::new(ArtifactKind::NftTable, format!("{}/{name}", family.as_str()))
}

fn invalid(key: &ArtifactKey, message: String) -> HostError {
    HostError::Invalid { key: key.clone(), message }
}
