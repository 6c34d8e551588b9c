//! `NixOSHost`: a NixOS host description. On this firmware only `hostname` applies (as the
//! system hostname); the other fields describe a NixOS system and are reported as ignored.

use routerd_host::ArtifactKind;
use routerd_model::spec::system::NixOsHostSpec;

use super::Out;
use crate::intent::ApplyWith;

pub(super) fn render(s: &NixOsHostSpec, out: &mut Out) {
    let attrs = serde_json::json!({"hostname": s.hostname});
    out.ensure_opaque(ArtifactKind::Hostname, "system", attrs, ApplyWith::Hostnamed, Vec::new());
    out.warn("NixOSHost fields other than hostname do not apply to this firmware and are ignored");
}
