//! `Interface`: an existing link. `managed: true` (and `owner` not `external`) ensures its
//! admin state and MTU; otherwise the link is observed only. The link has no kind in its spec, so
//! routerd never creates it (only `VLANInterface` links are created) and never deletes it.

use routerd_host::ArtifactSpec;
use routerd_host::artifact::LinkSpec;
use routerd_model::spec::net::{InterfaceOwner, InterfaceSpec};

use super::Out;

pub(super) fn render(s: &InterfaceSpec, out: &mut Out) {
    let owned = s.managed && s.owner != Some(InterfaceOwner::External);
    if owned {
        let link = LinkSpec {
            ifname: s.ifname.clone(),
            admin_up: s.admin_up.then_some(true),
            mtu: s.mtu,
            kind: None,
        };
        out.ensure(ArtifactSpec::Link(link), Vec::new());
    } else {
        if let Some(mtu) = s.mtu {
            out.warn(format!(
                "mtu {mtu} is not applied: routerd changes only a link it manages \
                 (managed: true, owner not external)"
            ));
        }
        let link = LinkSpec { ifname: s.ifname.clone(), admin_up: None, mtu: None, kind: None };
        out.observe(ArtifactSpec::Link(link));
    }
}

impl super::Render for routerd_model::spec::all::InterfaceSpec {
    fn render(&self, _: &super::RenderCtx<'_>, _: &routerd_model::Resource, out: &mut super::Out) {
        render(self, out);
    }
}
