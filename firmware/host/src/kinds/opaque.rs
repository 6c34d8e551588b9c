//! Artifacts of kinds this build has no typed spec or configurator for (firewall zones,
//! address selection, delegated addresses before networkd serves them): their attributes as
//! rendered, compared as JSON.

use serde::{Deserialize, Serialize};

use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// Attributes of a kind this build has no configurator for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpaqueSpec {
    /// The artifact kind.
    pub kind: ArtifactKind,
    /// The artifact name.
    pub name: String,
    /// Attributes as rendered from the resource.
    pub attributes: serde_json::Value,
}

impl ArtifactType for OpaqueSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(self.kind, self.name.clone())
    }

    observed_as_self!(Opaque);

    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare("attributes", &self.attributes, &o.attributes);
    }
}
