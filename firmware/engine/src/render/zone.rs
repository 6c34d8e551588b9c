//! `Zone`: a named group of interfaces. It has no host state of its own: the firewall and
//! DNAT tables compile zones into `iifname`/`oifname` matches. Rendered as an engine-internal
//! `routerd.firewallZone` artifact (applyWith `routerd`) so plans show its members.

use routerd_host::ArtifactKind;
use routerd_model::Resource;
use routerd_model::spec::firewall::ZoneSpec;

use super::{Out, RenderCtx};

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &ZoneSpec, out: &mut Out) {
    let mut ifnames = Vec::new();
    for name in &s.interfaces {
        match ctx.interface(name) {
            Some(i) => ifnames.push(i.ifname),
            None => out.unresolved("interface", name),
        }
    }
    let attrs = serde_json::json!({ "interfaces": ifnames });
    out.ensure_opaque(ArtifactKind::FirewallZone, res.name.clone(), attrs, Vec::new());
}

impl super::Render for routerd_model::spec::all::ZoneSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, res, self, out);
    }
}
