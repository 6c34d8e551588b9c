//! A primary's catalog zone (RFC 9432, version 2): the zone `DNSServer.catalogZone` names,
//! listing the server's zones marked `catalog: true` (and their reverse zones) so that its
//! secondaries serve them without a configuration of their own (BIND's `catalog-zones`).
//!
//! The catalog is a zone like any other on the server (`bind.zone <server>/<catalog>.`,
//! updated by routerd's key); its seed holds the SOA, the `invalid.` NS the RFC asks for and
//! the schema version. Each member is one owned `dns.rrset`: the PTR at
//! `<id>.zones.<catalog>.` naming the member zone, so a zone joining or leaving the catalog is
//! an UPDATE, and the ledger proves which members are routerd's.

use hickory_proto::rr::rdata::PTR;
use hickory_proto::rr::{Name, RData, RecordType};
use routerd_engine::intent::IntentDep;
use routerd_engine::render::{Out, RenderCtx};
use routerd_host::kinds::external::ExternalArtifactSpec;
use routerd_host::{ArtifactKey, ArtifactSpec};
use sha2::{Digest, Sha256};

use super::index::{ZoneAt, ZoneInfo};
use super::names;
use super::server::{options_name, unit_name};
use super::zone::{
    NameServer, ZoneSpec, ensure_rrset, rrset_name, zone_artifact_name, zone_clause, zone_seed,
};
use crate::artifacts::{BIND_CONFIG, BIND_ZONE, BindZone, RRset};

/// The TTL of the catalog's records: secondaries read the catalog by transfer, not by query.
const CATALOG_TTL: u32 = 0;

/// The member label of `zone` (RFC 9432 §4.1: unique within the catalog, stable for the
/// zone): the first 16 hex digits of SHA-256 over its lowercased presentation form.
pub fn member_label(zone: &Name) -> String {
    let digest = Sha256::digest(zone.to_lowercase().to_ascii().as_bytes());
    data_encoding::HEXLOWER.encode(&digest[..8])
}

/// Renders the catalog zone `catalog` of primary `server` (updated with `update_key`) and its
/// members: the zones of `DNSZone`s on `server` with `catalog: true`, and their reverse zones.
pub(crate) fn render(
    ctx: &RenderCtx<'_>,
    server: &str,
    catalog: &str,
    update_key: Option<&str>,
    out: &mut Out,
) {
    let Ok(apex) = names::zone_apex(catalog) else {
        return out.warn(format!("catalogZone {catalog:?} is not a zone name; no catalog"));
    };
    let Some(config_kind) = BIND_CONFIG.artifact_kind() else { return };
    let deps = vec![
        IntentDep::on(
            &ArtifactKey::new(config_kind, options_name(server)),
            "the server's named.conf includes the catalog",
        ),
        IntentDep::on(
            &ArtifactKey::new(routerd_host::ArtifactKind::SystemdService, unit_name(server)),
            "named serves the catalog",
        ),
    ];
    let invalid = NameServer { hostname: "invalid.".into(), ipv4: None, ipv6: None };
    let mut seed = zone_seed(&apex, &apex, 3600, None, std::slice::from_ref(&invalid));
    seed.push_str("version IN TXT \"2\"\n");
    let keys: Vec<&str> = update_key.into_iter().collect();
    let attrs = BindZone { clause: zone_clause(&apex, &keys), seed, ..Default::default() };
    match ExternalArtifactSpec::new(&BIND_ZONE, zone_artifact_name(server, &apex), &attrs) {
        Ok(artifact) => {
            out.ensure(ArtifactSpec::External(artifact), deps);
        }
        Err(e) => return out.warn(format!("catalog zone {apex} not rendered: {e}")),
    }

    let info = ZoneInfo { apex: apex.clone(), ttl: CATALOG_TTL, at: ZoneAt::Local(server.into()) };
    let Ok(zones) = Name::from_ascii("zones").and_then(|z| z.append_domain(&apex)) else {
        return out.warn(format!("catalog zone {apex} is too long for its members"));
    };
    for member in members(ctx, server) {
        let owner = Name::from_ascii(member_label(&member)).and_then(|l| l.append_domain(&zones));
        let Ok(owner) = owner else {
            out.warn(format!("{member} cannot be listed in catalog {apex}: the name is too long"));
            continue;
        };
        let rrset = RRset::new(CATALOG_TTL, [RData::PTR(PTR(member))]);
        ensure_rrset(out, &rrset_name(&info, owner, RecordType::PTR), &rrset, &info);
    }
}

/// The zones `DNSZone`s on `server` put in its catalog: each zone marked `catalog: true` and
/// its reverse zones, lowercased and absolute, without duplicates.
fn members(ctx: &RenderCtx<'_>, server: &str) -> Vec<Name> {
    let mut out: Vec<Name> = Vec::new();
    for res in &ctx.config().spec.resources {
        let Some(spec) = res.external_spec::<ZoneSpec>() else { continue };
        if !spec.catalog || spec.server.as_deref() != Some(server) {
            continue;
        }
        let zones = std::iter::once(&spec.zone).chain(spec.reverse_zones.iter().map(|r| &r.name));
        out.extend(zones.filter_map(|z| names::zone_apex(z).ok()).map(|n| n.to_lowercase()));
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_label_is_stable_unique_and_case_blind() {
        let lab = Name::from_ascii("lab.example.").expect("valid");
        let upper = Name::from_ascii("LAB.example.").expect("valid");
        let other = Name::from_ascii("other.example.").expect("valid");
        assert_eq!(member_label(&lab), member_label(&upper));
        assert_ne!(member_label(&lab), member_label(&other));
        assert_eq!(member_label(&lab).len(), 16);
        assert!(member_label(&lab).chars().all(|c| c.is_ascii_hexdigit()));
    }
}
