//! `Sysctl`: a key under `/proc/sys` of the target namespace (runtime), and the persistent
//! `sysctl.d` drop-in when `persistent` is set (a managed file; configurator in a later issue).

use routerd_host::artifact::SysctlSpec as HostSysctl;
use routerd_host::{ArtifactKind, ArtifactSpec};
use routerd_model::spec::system::SysctlSpec;

use super::Out;
use crate::intent::ApplyWith;

pub(super) fn render(s: &SysctlSpec, out: &mut Out) {
    if s.runtime.unwrap_or(true) {
        let spec = HostSysctl { key: s.key.clone(), value: s.value.clone() };
        out.ensure(ArtifactSpec::Sysctl(spec), ApplyWith::Procfs, Vec::new());
    }
    if s.persistent {
        let path = "/etc/sysctl.d/90-routerd.conf";
        let attrs = serde_json::json!({"path": path, "line": format!("{} = {}", s.key, s.value)});
        out.ensure_opaque(ArtifactKind::File, path, attrs, ApplyWith::Files, Vec::new());
    }
}
