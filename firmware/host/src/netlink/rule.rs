//! `linux.ipv4.fwmarkRule`: inventory and configurator for IPv4 policy rules selecting on
//! `fwmark`.
//!
//! Lists every IPv4 rule that has `FRA_FWMARK`, inside routerd's fwmark range or not: whether a
//! rule may be deleted is the engine's decision.

use rtnetlink::packet_core::{NLM_F_CREATE, NLM_F_EXCL};

use super::conn::Conn;
use super::convert;
use crate::artifact::{Artifact, ArtifactKey, ArtifactSpec, FwmarkRuleSpec};
use crate::error::HostError;

/// Lists every IPv4 rule with `FRA_FWMARK` set (one `RTM_GETRULE` dump).
///
/// Shape: one [`FwmarkRuleSpec`] per rule, mask `0xffffffff` when `FRA_FWMASK` is absent.
/// Errors: [`HostError::Dump`] when the dump fails.
pub(crate) async fn observe(conn: &Conn) -> Result<Vec<Artifact>, HostError> {
    let rule = |m: &_| convert::rule_from_nl(m).map(|r| Artifact::new(ArtifactSpec::FwmarkRule(r)));
    conn.dump(convert::rule_dump_request(), rule).await.map_err(|e| e.dump("rules"))
}

/// Adds `ip rule add fwmark MARK/MASK lookup TABLE priority PRIORITY`
/// (`NLM_F_CREATE | NLM_F_EXCL`).
///
/// Errors: [`HostError::Rejected`] with errno (`EEXIST` for an identical rule).
pub(crate) async fn create(
    conn: &Conn,
    key: &ArtifactKey,
    spec: &FwmarkRuleSpec,
) -> Result<(), HostError> {
    let request = convert::rule_to_nl(spec, false);
    conn.change(request, NLM_F_CREATE | NLM_F_EXCL).await.map_err(|e| e.rejected(key, "create"))
}

/// Replaces `observed` by `desired`: deletes the old rule (already gone is fine), then adds the
/// new one. Not atomic: between the two, packets with the mark use the following rules.
///
/// Errors: as [`delete`] and [`create`].
pub(crate) async fn modify(
    conn: &Conn,
    key: &ArtifactKey,
    observed: &FwmarkRuleSpec,
    desired: &FwmarkRuleSpec,
) -> Result<(), HostError> {
    let request = convert::rule_to_nl(observed, true);
    match conn.change(request, 0).await {
        Err(e) if e.errno() == Some(libc::ENOENT) => {}
        other => other.map_err(|e| e.rejected(key, "modify"))?,
    }
    let request = convert::rule_to_nl(desired, false);
    conn.change(request, NLM_F_CREATE | NLM_F_EXCL).await.map_err(|e| e.rejected(key, "modify"))
}

/// Deletes the rule matching (mark, mask, table, priority) (`RTM_DELRULE`).
///
/// Errors: [`HostError::Rejected`] (`ENOENT`) when no rule matches.
pub(crate) async fn delete(
    conn: &Conn,
    key: &ArtifactKey,
    spec: &FwmarkRuleSpec,
) -> Result<(), HostError> {
    let request = convert::rule_to_nl(spec, true);
    conn.change(request, 0).await.map_err(|e| e.rejected(key, "delete"))
}
