//! `Sysctl`: a key under `/proc/sys` of the target namespace (runtime), and a block of
//! routerd's boot-time file `/etc/sysctl.d/90-routerd.conf` when `persistent` is set
//! (sysctl.d(5): systemd-sysctl applies it at boot).

use routerd_host::ArtifactSpec;
use routerd_host::artifact::{FileBlockSpec, SysctlSpec as HostSysctl};
use routerd_model::spec::system::SysctlSpec;

use super::Out;

/// routerd's sysctl.d file: `90-` sorts after the files packages ship, so routerd's values win.
pub(crate) const SYSCTL_D: &str = "/etc/sysctl.d/90-routerd.conf";

pub(super) fn render(s: &SysctlSpec, out: &mut Out) {
    if s.runtime.unwrap_or(true) {
        let spec = HostSysctl { key: s.key.clone(), value: s.value.clone() };
        out.ensure(ArtifactSpec::Sysctl(spec), Vec::new());
    }
    if s.persistent {
        let spec = FileBlockSpec {
            path: SYSCTL_D.into(),
            block: s.key.clone(),
            lines: vec![format!("{} = {}", s.key, s.value)],
            mode: 0o644,
        };
        out.ensure(ArtifactSpec::FileBlock(spec), Vec::new());
    }
}

impl super::Render for routerd_model::spec::all::SysctlSpec {
    fn render(&self, _: &super::RenderCtx<'_>, _: &routerd_model::Resource, out: &mut super::Out) {
        render(self, out);
    }
}
