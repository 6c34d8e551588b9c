//! The ownership ledger: the durable record of artifacts this installation created or adopted
//! (seed 000, "Resource Ownership and Reconcile").
//!
//! The ledger only stores; ownership policy (what may be recorded, what may be deleted) lives in
//! the engine. It knows artifacts by their stable strings (`kind`, `name`), not by host types, so
//! it depends on nothing of ours.
//!
//! Crash safety follows a write-ahead rule. Before apply, the engine records every artifact it is
//! about to create, and does not own yet, as [`EntryState::Pending`] in one durable transaction;
//! after apply it drops the ones that failed and promotes the rest to [`EntryState::Owned`] ([`LedgerChange::Promote`],
//! or [`LedgerChange::PromoteAll`]) in a second one. A run
//! that finds `Pending` entries left by a crash resolves them against the host: present means we
//! created it (nothing else was supposed to), absent means the create never happened. Either way
//! no artifact we created is ever unrecorded. An artifact already owned that the engine creates
//! again (it was missing) keeps its entry as it is, origin included, so a failed re-create or a
//! crash never drops it. Two fsyncs per reconcile, not one per artifact.
//!
//! Storage: one redb file (ACID, stable format; see `docs/adr/0001-ledger-store.md`). A
//! [`Ledger::open_read_only`] handle never writes the file, so dry runs leave it byte-identical.

mod error;
mod generations;
mod store;

pub use error::LedgerError;
pub use generations::{Channel, GenerationRecord, GenerationResult, PendingConfirm};
pub use store::{AppliedGeneration, Ledger, LedgerChange};

use serde::{Deserialize, Serialize};

/// Default location on the router.
pub const DEFAULT_LEDGER_PATH: &str = "/var/lib/routerd/routerd.redb";

/// How this installation came to own an artifact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Origin {
    /// routerd created it.
    Created,
    /// It existed before and the operator adopted it (`adopt --apply`).
    Adopted,
}

/// Whether an entry is proven.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum EntryState {
    /// About to be created; not yet proof of ownership (see the crate docs).
    Pending,
    /// Created or adopted successfully: proof of ownership.
    Owned,
}

impl EntryState {
    fn owned() -> Self {
        EntryState::Owned
    }
}

/// One owned (or about-to-be-owned) artifact.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntry {
    /// Artifact kind string (`nft.table`).
    pub kind: String,
    /// Artifact name (`inet/routerd_nat`).
    pub name: String,
    /// Resource ID of the owner (`net.routerd.net/v1alpha1/IPv4SourceNAT/lan-nat`): the first
    /// resource (in config order) declaring the artifact.
    pub owner: String,
    /// Resource IDs of further resources declaring the same artifact (issue 33 §5), in config
    /// order; absent from the stored JSON when empty, so older entries read as they are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub co_owners: Vec<String>,
    /// Created or adopted.
    pub origin: Origin,
    /// Pending or owned. Not part of the stored value: the store keeps the keys of pending
    /// entries in one list, so promoting thousands of entries after apply rewrites that list
    /// only. (Files of format 1 stored it here; it is still read.)
    #[serde(default = "EntryState::owned", skip_serializing)]
    pub state: EntryState,
    /// Config generation that recorded it.
    pub generation: u64,
    /// When it was recorded, seconds since the Unix epoch.
    pub recorded_at: u64,
    /// Desired attributes at the time of recording (JSON of the artifact spec).
    pub attributes: Attributes,
}

/// A ledger entry without its recorded attributes: all that planning reads
/// ([`Ledger::heads`]). Decoding it skips the attributes' JSON without building anything.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryHead {
    /// Artifact kind string (`nft.table`).
    pub kind: String,
    /// Artifact name (`inet/routerd_nat`).
    pub name: String,
    /// Resource ID of the owner.
    pub owner: String,
    /// Further resources declaring the artifact (see [`LedgerEntry::co_owners`]).
    #[serde(default)]
    pub co_owners: Vec<String>,
    /// Created or adopted.
    pub origin: Origin,
    /// Pending or owned (see [`LedgerEntry::state`]).
    #[serde(default = "EntryState::owned")]
    pub state: EntryState,
    /// Config generation that recorded it.
    pub generation: u64,
}

impl EntryHead {
    /// The store key: `kind/name`.
    pub fn key(&self) -> String {
        entry_key(&self.kind, &self.name)
    }
}

impl From<LedgerEntry> for EntryHead {
    /// The head of `e`, taking its strings; the attributes are dropped.
    fn from(e: LedgerEntry) -> Self {
        Self {
            kind: e.kind,
            name: e.name,
            owner: e.owner,
            co_owners: e.co_owners,
            origin: e.origin,
            state: e.state,
            generation: e.generation,
        }
    }
}

impl From<&LedgerEntry> for EntryHead {
    fn from(e: &LedgerEntry) -> Self {
        Self {
            kind: e.kind.clone(),
            name: e.name.clone(),
            owner: e.owner.clone(),
            co_owners: e.co_owners.clone(),
            origin: e.origin,
            state: e.state,
            generation: e.generation,
        }
    }
}

/// An entry's recorded attributes, kept as JSON text: written back byte for byte and never
/// built into a tree on the way (a ledger of 10,000 routes decodes on every reconcile, and
/// nothing reads the attributes but an operator inspecting the ledger).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Attributes(Box<serde_json::value::RawValue>);

impl Attributes {
    /// The JSON form of `value`; `null` if it cannot be serialised.
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Self {
        let raw = serde_json::value::to_raw_value(value).unwrap_or_else(|_| {
            serde_json::value::RawValue::from_string("null".into())
                .expect("invariant: null is valid JSON")
        });
        Self(raw)
    }

    /// The JSON text.
    pub fn json(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for Attributes {
    fn eq(&self, other: &Self) -> bool {
        self.json() == other.json()
    }
}

impl Eq for Attributes {}

impl LedgerEntry {
    /// The store key: `kind/name`.
    pub fn key(&self) -> String {
        entry_key(&self.kind, &self.name)
    }
}

/// The store key of an artifact: `kind/name`.
pub fn entry_key(kind: &str, name: &str) -> String {
    format!("{kind}/{name}")
}
