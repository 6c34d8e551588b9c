//! `Hostname`: the system hostname through systemd-hostnamed. Reconciled, never deleted.
//! `managed: false` only observes it.

use routerd_host::ArtifactSpec;
use routerd_host::artifact::SystemHostnameSpec;
use routerd_model::spec::system::HostnameSpec;

use super::Out;

pub(super) fn render(s: &HostnameSpec, out: &mut Out) {
    // The kernel's hostname follows the static one (hostnamed sets it from /etc/hostname).
    let spec = ArtifactSpec::Hostname(SystemHostnameSpec {
        hostname: s.hostname.clone(),
        kernel: s.hostname.clone(),
    });
    if s.managed {
        out.ensure(spec, Vec::new());
    } else {
        out.observe(spec);
    }
}

impl super::Render for routerd_model::spec::all::HostnameSpec {
    fn render(&self, _: &super::RenderCtx<'_>, _: &routerd_model::Resource, out: &mut super::Out) {
        render(self, out);
    }
}
