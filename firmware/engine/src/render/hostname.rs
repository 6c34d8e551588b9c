//! `Hostname`: the system hostname through systemd-hostnamed (configurator in a later issue).
//! Reconciled, never deleted. `managed: false` only observes it.

use routerd_host::ArtifactKind;
use routerd_host::ArtifactSpec;
use routerd_host::artifact::OpaqueSpec;
use routerd_model::spec::system::HostnameSpec;

use super::Out;
use crate::intent::ApplyWith;

pub(super) fn render(s: &HostnameSpec, out: &mut Out) {
    let attrs = serde_json::json!({"hostname": s.hostname});
    if s.managed {
        out.ensure_opaque(
            ArtifactKind::Hostname,
            "system",
            attrs,
            ApplyWith::Hostnamed,
            Vec::new(),
        );
    } else {
        let spec =
            OpaqueSpec { kind: ArtifactKind::Hostname, name: "system".into(), attributes: attrs };
        out.observe(ArtifactSpec::Opaque(spec), ApplyWith::Hostnamed);
    }
}
