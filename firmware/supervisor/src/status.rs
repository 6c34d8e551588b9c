//! Per-resource status across reconciles (seed 004): spec generations, the generation each
//! reconcile observed, and condition transition times that only move when a condition's
//! status changes. Kept in the ledger file, so a restart does not reset them.

use std::collections::BTreeMap;
use std::sync::Arc;

use routerd_engine::ResultDocument;
use routerd_ledger::Ledger;
use routerd_model::Config;
use routerd_model::status::{ResourceCondition, ResourceStatus};
use sha2::{Digest, Sha256};

/// Hex SHA-256 of each resource's spec (as JSON), by resource ID.
pub fn spec_digests(config: &Config) -> BTreeMap<String, String> {
    config
        .spec
        .resources
        .iter()
        .map(|r| {
            let json = serde_json::to_vec(&r.spec).unwrap_or_default();
            let digest: String = Sha256::digest(&json).iter().map(|b| format!("{b:02x}")).collect();
            (r.id(), digest)
        })
        .collect()
}

/// The statuses of the config's resources, as last recorded.
#[derive(Default)]
pub struct StatusTracker {
    records: BTreeMap<String, ResourceStatus>,
}

/// What to write to the ledger after a reconcile.
pub struct StatusChanges {
    /// Changed or new statuses, as `(ID, JSON)`.
    pub put: Vec<(String, String)>,
    /// IDs no longer in the config.
    pub remove: Vec<String>,
}

impl StatusTracker {
    /// The statuses stored in `ledger`; unreadable records are skipped (they are rebuilt by
    /// the next reconcile).
    pub fn load(ledger: &Ledger) -> Self {
        let records = match ledger.status_records() {
            Ok(rows) => rows
                .into_iter()
                .filter_map(|(id, json)| match serde_json::from_str(&json) {
                    Ok(status) => Some((id, status)),
                    Err(e) => {
                        tracing::warn!("resource status of {id} unreadable, rebuilt: {e}");
                        None
                    }
                })
                .collect(),
            Err(e) => {
                tracing::warn!("resource statuses unreadable, rebuilt: {e}");
                BTreeMap::new()
            }
        };
        Self { records }
    }

    /// Fills in `doc`'s generations and condition transition times from the recorded statuses
    /// and `digests` (a changed spec is a new generation), and records the result.
    pub fn observe(
        &mut self,
        doc: &mut ResultDocument,
        digests: &BTreeMap<String, String>,
    ) -> StatusChanges {
        let now: Arc<str> = Arc::from(doc.timestamp.as_str());
        let mut put = Vec::new();
        let mut seen = BTreeMap::new();
        for r in &mut doc.resources {
            let digest = digests.get(&r.id).cloned().unwrap_or_default();
            let prev = self.records.get(&r.id);
            let generation = match prev {
                Some(p) if p.spec_digest == digest => p.generation,
                Some(p) => p.generation + 1,
                None => 1,
            };
            for c in &mut r.conditions {
                // The record keeps the condition's words (`Ready`, `True`).
                let unchanged = prev.and_then(|p| {
                    p.conditions.iter().find(|old| {
                        old.type_ == c.type_.as_str() && old.status == c.status.as_str()
                    })
                });
                c.last_transition_time = match unchanged {
                    Some(old) => Arc::from(old.last_transition_time.as_str()),
                    None => Arc::clone(&now),
                };
            }
            r.generation = Some(generation);
            r.observed_generation = Some(generation);
            let status = ResourceStatus {
                id: r.id.clone(),
                spec_digest: digest,
                generation,
                observed_generation: generation,
                phase: r.phase.as_str().to_string(),
                conditions: r
                    .conditions
                    .iter()
                    .map(|c| ResourceCondition {
                        type_: c.type_.to_string(),
                        status: c.status.to_string(),
                        reason: c.reason.to_string(),
                        message: c.message.clone(),
                        last_transition_time: c.last_transition_time.to_string(),
                    })
                    .collect(),
            };
            if prev != Some(&status) {
                put.push((r.id.clone(), serde_json::to_string(&status).unwrap_or_default()));
            }
            seen.insert(r.id.clone(), status);
        }
        let remove = self.records.keys().filter(|id| !seen.contains_key(*id)).cloned().collect();
        self.records = seen;
        StatusChanges { put, remove }
    }

    /// Every status, ordered by ID.
    pub fn all(&self) -> Vec<ResourceStatus> {
        self.records.values().cloned().collect()
    }
}
