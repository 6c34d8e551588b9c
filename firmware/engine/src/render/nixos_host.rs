//! `NixOSHost`: a NixOS host description. On this firmware only `hostname` applies, as the
//! system hostname through systemd-hostnamed (as a `Hostname` with `managed: true` would); the
//! other fields describe a NixOS system and are reported as ignored. Without `hostname` the
//! resource only observes the hostname, so a `Hostname` resource's declaration wins.

use routerd_host::ArtifactSpec;
use routerd_host::artifact::SystemHostnameSpec;
use routerd_model::spec::system::NixOsHostSpec;

use super::Out;

pub(super) fn render(s: &NixOsHostSpec, out: &mut Out) {
    let name = s.hostname.clone().unwrap_or_default();
    let spec = ArtifactSpec::Hostname(SystemHostnameSpec { hostname: name.clone(), kernel: name });
    if s.hostname.is_some() {
        out.ensure(spec, Vec::new());
    } else {
        out.observe(spec);
    }
    out.warn("NixOSHost fields other than hostname do not apply to this firmware and are ignored");
}

impl super::Render for routerd_model::spec::all::NixOsHostSpec {
    fn render(&self, _: &super::RenderCtx<'_>, _: &routerd_model::Resource, out: &mut super::Out) {
        render(self, out);
    }
}
