//! `file`: blocks of lines routerd writes in files. Configurator and inventory: [`crate::files`].

use serde::{Deserialize, Serialize};

use super::orphans::{Kept, OrphanRule};
use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};

/// `file`, named `path#block`: one block of lines routerd writes in a file, between marker
/// comments (`# routerd block NAME` ... `# routerd end`). Lines outside routerd's blocks are the
/// operator's and are kept as they are (seed 000: "only routerd-owned blocks inside a file may
/// be safe to touch").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileBlockSpec {
    /// The file's absolute path on the router (below the target's root); no `#`.
    pub path: String,
    /// The block's name, unique in the file.
    pub block: String,
    /// The block's lines, in order, without line breaks.
    pub lines: Vec<String>,
    /// The file's permission bits (`0o644`; `0o600` for secrets). Blocks of one file share it.
    pub mode: u32,
}

impl FileBlockSpec {
    /// The artifact name: `path#block`.
    pub fn key_name(&self) -> String {
        format!("{}#{}", self.path, self.block)
    }
}

impl ArtifactType for FileBlockSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::File, self.key_name())
    }

    observed_as_self!(FileBlock);

    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare("lines", &self.lines, &o.lines);
        diffs.compare_mode(self.mode, o.mode);
    }
}

/// Orphans (ADR 0002): a block routerd wrote: deleted when the ledger records it; the operator's lines in the file stay, and so does the file.
pub const ORPHANS: OrphanRule = OrphanRule::Recorded {
    deleted: "block routerd wrote in the file, recorded in the ledger",
    unrecorded: Some(Kept {
        reason: "routerd deletes only blocks the ledger records, never whole files",
        remediation: "remove the block by hand if it is stale, or declare it and run adopt --apply",
    }),
};
