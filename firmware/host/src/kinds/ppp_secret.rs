//! `ppp.secret`: entries of pppd's secrets files. Configurator and inventory: [`crate::files`].

use serde::{Deserialize, Serialize};

use super::orphans::OrphanRule;
use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};
use crate::secret::Secret;

/// `ppp.secret`, named `path#block`: one entry of a pppd secrets file (`/etc/ppp/chap-secrets`,
/// `/etc/ppp/pap-secrets`; pppd(8), AUTHENTICATION), in a routerd block of that file like a
/// [`FileBlockSpec`](super::file_block::FileBlockSpec): the line `"client" * "secret" *`, any server and any address. The file is
/// kept at mode 0600. The secret is a [`Secret`], so the password itself is in no document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PppSecretSpec {
    /// The secrets file's absolute path on the router.
    pub path: String,
    /// The block's name, unique in the file (the `PPPoEInterface`'s name).
    pub block: String,
    /// The client: the PPP user name the router authenticates as.
    pub client: String,
    /// The secret, or the file pppd reads it from.
    pub secret: PppSecretValue,
    /// The file's permission bits: desired 0o600.
    pub mode: u32,
}

impl PppSecretSpec {
    /// The artifact name: `path#block`.
    pub fn key_name(&self) -> String {
        format!("{}#{}", self.path, self.block)
    }
}

/// The secret of a [`PppSecretSpec`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PppSecretValue {
    /// The password, written into the secrets file.
    Inline(Secret),
    /// A file holding the password, written as `@path`: pppd reads the secret from it when it
    /// authenticates (pppd(8): "If the secret starts with an `@`").
    File(String),
}

impl ArtifactType for PppSecretSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::PppSecret, self.key_name())
    }

    observed_as_self!(PppSecret);

    /// The secret is compared by digest only: the value is in no document.
    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare("client", &self.client, &o.client);
        diffs.compare("secret", &self.secret, &o.secret);
        diffs.compare_mode(self.mode, o.mode);
    }
}

/// Orphans (ADR 0002): as a file block.
pub const ORPHANS: OrphanRule = super::file_block::ORPHANS;
