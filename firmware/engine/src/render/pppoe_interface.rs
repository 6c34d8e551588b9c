//! `PPPoEInterface`: a `routerd-pppoe-<name>.service` running pppd with rendered peer and
//! secret files, and the PPP link it brings up (configurators in a later issue). The password
//! never appears in intents, plans or logs: attributes say only whether one is configured.

use routerd_host::artifact::OpaqueSpec;
use routerd_host::{ArtifactKind, ArtifactSpec};
use routerd_model::Resource;
use routerd_model::spec::net::PppoeInterfaceSpec;

use super::ctx::dep;
use super::{Out, RenderCtx};
use crate::intent::ApplyWith;

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &PppoeInterfaceSpec, out: &mut Out) {
    let Some(lower) = ctx.interface(&s.interface) else {
        return out.unresolved("interface", &s.interface);
    };
    let ifname = s.ifname.clone().unwrap_or_else(|| "ppp0".into());
    let peer = format!("/etc/ppp/peers/routerd-{}", res.name);
    let secret = format!("/etc/ppp/routerd-{}.secret", res.name);
    let unit = format!("routerd-pppoe-{}.service", res.name);
    let link_dep = dep(&lower.key, format!("PPPoE runs over {}", lower.ifname));
    let peer_key = out.ensure_opaque(
        ArtifactKind::File,
        peer.clone(),
        serde_json::json!({
            "path": peer, "interface": lower.ifname, "ifname": ifname, "user": s.username,
            "serviceName": s.service_name, "acName": s.ac_name, "mtu": s.mtu, "mru": s.mru,
            "defaultRoute": s.default_route, "usePeerDNS": s.use_peer_dns, "ipv6": s.ipv6,
            "persist": s.persist.unwrap_or(true), "lcpInterval": s.lcp_interval,
            "lcpFailure": s.lcp_failure,
        }),
        ApplyWith::Files,
        Vec::new(),
    );
    let secret_key = out.ensure_opaque(
        ArtifactKind::File,
        secret.clone(),
        serde_json::json!({
            "path": secret, "mode": "0600",
            "passwordConfigured": s.password.is_some() || s.password_file.is_some(),
            "passwordFile": s.password_file,
        }),
        ApplyWith::Files,
        Vec::new(),
    );
    let unit_key = out.ensure_opaque(
        ArtifactKind::SystemdService,
        unit.clone(),
        serde_json::json!({"unit": unit, "exec": "pppd", "peer": peer}),
        ApplyWith::Systemd,
        vec![link_dep, dep(&peer_key, "peer file"), dep(&secret_key, "secret file")],
    );
    // pppd creates the link: it is an external item whose appearance lets dependents proceed.
    let _ = unit_key;
    let link = OpaqueSpec {
        kind: ArtifactKind::PppLink,
        name: ifname.clone(),
        attributes: serde_json::json!({"ifname": ifname, "unit": unit}),
    };
    out.observe(ArtifactSpec::Opaque(link), ApplyWith::Pppd);
}
