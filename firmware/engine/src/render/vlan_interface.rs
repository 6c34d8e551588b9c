//! `VLANInterface` (extension kind, `docs/adr/0004-vlan-interface-kind.md`): a VLAN link that
//! routerd creates on its parent `Interface`'s link, depending on that link. Once created it is
//! ledger-owned like any created link, and like any link it is never deleted as an orphan.

use routerd_host::ArtifactSpec;
use routerd_host::artifact::{LinkKind, LinkSpec, VlanProtocol};
use routerd_model::spec::net::{VlanInterfaceSpec, VlanProtocol as ModelVlanProtocol};

use super::ctx::dep;
use super::{Out, RenderCtx};

pub(super) fn render(ctx: &RenderCtx<'_>, s: &VlanInterfaceSpec, out: &mut Out) {
    let Some(parent) = ctx.interface(&s.interface) else {
        return out.unresolved("interface", &s.interface);
    };
    let protocol = match s.protocol {
        ModelVlanProtocol::Ieee8021Q => VlanProtocol::Ieee8021Q,
        ModelVlanProtocol::Ieee8021Ad => VlanProtocol::Ieee8021Ad,
    };
    let link = LinkSpec {
        ifname: s.ifname_on(&parent.ifname),
        admin_up: Some(s.admin_up),
        mtu: s.mtu,
        kind: Some(LinkKind::Vlan { parent: parent.ifname.clone(), id: s.vlan_id, protocol }),
    };
    out.ensure(
        ArtifactSpec::Link(link),
        vec![dep(&parent.key, format!("tags frames on {}", parent.ifname))],
    );
}

impl super::Render for routerd_model::spec::all::VlanInterfaceSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        _: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, self, out);
    }
}
