//! `routerd.healthCheck`: the verdicts of HealthCheck probes, observed only.

use serde::{Deserialize, Serialize};

use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// `routerd.healthCheck`, named after its `HealthCheck` resource: the verdict of the check's
/// probes, which the supervisor's scheduler keeps. An external item: present once the check has
/// a verdict, and only `healthy` is compared, so dependents gated on health (a default-route
/// candidate's preferred route) are created when it turns healthy and withdrawn when it turns
/// unhealthy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthStatusSpec {
    /// The HealthCheck resource's name, the artifact's name.
    pub name: String,
    /// Desired: `true`. Observed: the verdict after the check's thresholds.
    pub healthy: bool,
    /// Observed: the address probed, once resolved (`192.0.2.1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Observed: the last probe's outcome and the run of equal outcomes (`reply in 0.4 ms`,
    /// `3 consecutive failures: no reply within 1s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl ArtifactType for HealthStatusSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::HealthCheck, self.name.clone())
    }

    observed_as_self!(Health);

    /// The verdict only: target and detail are reports, not intent.
    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare("healthy", &self.healthy, &o.healthy);
    }
}
