//! `PPPoEInterface`: a PPPoE session (RFC 2516) over an Ethernet interface.
//!
//! Always: the PPP link as an external item (`linux.ppp.link`, observed over rtnetlink), so
//! what runs over the session waits for it and is withdrawn when it goes. With `managed: true`
//! routerd also runs the session (seed 000's coverage table): pppd in
//! `routerd-pppoe-<name>.service` with the options file `/etc/ppp/peers/routerd-<name>` (a
//! routerd block) and the entry for `username` in both pppd secrets files (`ppp.secret`, mode
//! 0600), so PAP and CHAP both find it. The password reaches those files only: every document
//! shows a digest ([`routerd_host::secret`]). A changed options file or secret restarts the
//! unit (it depends on them with `recreate_when_modified`), so the session redials with them.
//!
//! The options are pppd 2.5's (Buildroot's `pppd`): the `pppoe.so` plugin, whose
//! `rp_pppoe_service`/`rp_pppoe_ac` spellings pppd 2.4.9 reads too.

use routerd_host::artifact::{FileBlockSpec, PppLinkSpec, PppSecretSpec, PppSecretValue, UnitSpec};
use routerd_host::secret::Secret;
use routerd_host::{ArtifactKey, ArtifactSpec};
use routerd_model::Resource;
use routerd_model::spec::net::PppoeInterfaceSpec;

use super::ctx::dep;
use super::{Out, RenderCtx};
use crate::intent::IntentDep;

/// The secrets files pppd reads: CHAP's and PAP's (pppd(8), FILES).
const SECRETS_FILES: [&str; 2] = ["/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets"];

/// The pppd binary the unit runs.
const PPPD: &str = "/usr/sbin/pppd";

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &PppoeInterfaceSpec, out: &mut Out) {
    let Some(lower) = ctx.interface(&s.interface) else {
        return out.unresolved("interface", &s.interface);
    };
    let ifname = s.ifname.clone().unwrap_or_else(|| "ppp0".into());
    // pppd makes the link when the session is up: an external item either way.
    let link = PppLinkSpec { ifname: ifname.clone(), admin_up: None, mtu: None };
    out.observe(ArtifactSpec::PppLink(link));
    if !s.managed {
        return;
    }
    let peer = peer_file(&res.name, &lower.ifname, &ifname, s);
    let peer_key = out.ensure(ArtifactSpec::FileBlock(peer), Vec::new());
    let mut deps = vec![
        dep(&lower.key, format!("PPPoE runs over {}", lower.ifname)),
        redial_on_change(&peer_key, "the options file"),
    ];
    let secret = match (&s.password, &s.password_file) {
        (Some(p), _) => Some(PppSecretValue::Inline(Secret::new(p.clone()))),
        (None, Some(f)) => Some(PppSecretValue::File(f.clone())),
        (None, None) => {
            out.warn(
                "no password or passwordFile: pppd has no secret to answer the access \
                 concentrator's PAP or CHAP request with",
            );
            None
        }
    };
    // Validation refuses what an entry cannot carry (an inline password starting with `@`).
    if let Some(secret) = secret {
        for path in SECRETS_FILES {
            let spec = PppSecretSpec {
                path: path.into(),
                block: res.name.clone(),
                client: s.username.clone(),
                secret: secret.clone(),
                mode: 0o600,
            };
            let key = out.ensure(ArtifactSpec::PppSecret(spec), Vec::new());
            deps.push(redial_on_change(&key, "the secret"));
        }
    }
    let unit = unit(ctx, &res.name, &lower.ifname);
    out.ensure(ArtifactSpec::Unit(unit), deps);
}

/// A dependency whose change restarts the unit: pppd reads its options and secrets when it
/// starts and authenticates.
fn redial_on_change(key: &ArtifactKey, what: &str) -> IntentDep {
    IntentDep { recreate_when_modified: true, ..dep(key, format!("pppd reads {what}")) }
}

/// `/etc/ppp/peers/routerd-<name>`: the session's pppd options (pppd(8), PPPOE OPTIONS).
fn peer_file(name: &str, lower: &str, ifname: &str, s: &PppoeInterfaceSpec) -> FileBlockSpec {
    let quote = |v: &str| format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""));
    let mut lines = vec![
        "plugin pppoe.so".to_string(),
        format!("nic-{lower}"),
        format!("user {}", quote(&s.username)),
        format!("ifname {ifname}"),
        // The router authenticates itself; it does not ask the access concentrator to.
        "noauth".into(),
        "hide-password".into(),
        "noipdefault".into(),
        "nodetach".into(),
    ];
    if let Some(service) = &s.service_name {
        lines.push(format!("rp_pppoe_service {}", quote(service)));
    }
    if let Some(ac) = &s.ac_name {
        lines.push(format!("rp_pppoe_ac {}", quote(ac)));
    }
    if s.persist.unwrap_or(true) {
        // Redial for ever, 5 s apart (pppd's holdoff); systemd restarts pppd if it exits.
        lines.extend(["persist".into(), "maxfail 0".into(), "holdoff 5".into()]);
    }
    if s.default_route {
        lines.push("defaultroute".into());
    }
    if s.use_peer_dns {
        lines.push("usepeerdns".into());
    }
    if s.ipv6 {
        lines.push("+ipv6".into());
    }
    if let Some(mtu) = s.mtu {
        lines.push(format!("mtu {mtu}"));
    }
    if let Some(mru) = s.mru {
        lines.push(format!("mru {mru}"));
    }
    if let Some(i) = s.lcp_interval {
        lines.push(format!("lcp-echo-interval {i}"));
    }
    if let Some(f) = s.lcp_failure {
        lines.push(format!("lcp-echo-failure {f}"));
    }
    FileBlockSpec {
        path: format!("/etc/ppp/peers/routerd-{name}"),
        block: name.to_string(),
        lines,
        mode: 0o644,
    }
}

/// `routerd-pppoe-<name>.service`: pppd in the foreground (`nodetach`), restarted when it
/// exits; in the router's namespace when routerd runs in one.
fn unit(ctx: &RenderCtx<'_>, name: &str, lower: &str) -> UnitSpec {
    let unit = format!("routerd-pppoe-{name}.service");
    let mut content = format!(
        "# Written by routerd for the PPPoEInterface {name} of router.yaml.\n\
         [Unit]\n\
         Description=routerd PPPoE session {name} over {lower} (pppd)\n\
         \n\
         [Service]\n\
         Type=simple\n\
         ExecStart={PPPD} call routerd-{name}\n\
         Restart=always\n\
         RestartSec=5\n"
    );
    if let Some(ns) = ctx.target.netns_path() {
        content.push_str(&format!("NetworkNamespacePath={}\n", ns.display()));
    }
    content.push_str("\n[Install]\nWantedBy=multi-user.target\n");
    UnitSpec { unit, content, active: true }
}

impl super::Render for routerd_model::spec::all::PppoeInterfaceSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, res, self, out);
    }
}
