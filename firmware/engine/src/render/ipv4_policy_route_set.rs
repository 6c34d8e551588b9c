//! `IPv4PolicyRouteSet`: like `IPv4PolicyRoute` with several targets; matching flows are spread
//! over the targets by a hash (`mode: hash`). Owns, per target, a route table, its default
//! route and a fwmark rule, plus `nft.table/ip/routerd_policyset_<name>`.
//!
//! With N ≥ 2 targets, the table's prerouting chain gets, for each (source, destination)
//! prefix pair, one hash rule and N remap rules (nft syntax as `nft list` prints it; the offset
//! is 0x7f000000):
//!
//! ```text
//! <prefix matches> meta mark set jhash ip saddr . ip daddr mod N seed 0x0 offset 2130706432
//! <prefix matches> meta mark 0x7f000000 meta mark set <mark of targets[0]>
//! ...
//! <prefix matches> meta mark 0x7f00000<N-1> meta mark set <mark of targets[N-1]>
//! ```
//!
//! The hash puts a scratch mark `0x7f000000 + bucket` on the packet, and the remap rule of
//! that bucket replaces it with the target's mark. The scratch offset keeps the buckets away
//! from mark 0, which unrelated traffic carries, so no remap rule matches a packet the hash
//! rule did not mark. It also keeps them away from the small marks targets use, so a packet
//! that has just been remapped does not match a later remap rule. A target mark inside the
//! bucket range would break this: such a set renders no nft table, only a warning. The seed is fixed (`0x0`), which
//! means a flow keeps its target when the table is replaced. The hash is computed per packet,
//! from addresses only: every packet of a flow gets the same target, and no conntrack state is
//! needed. Changing N moves flows.
//!
//! `hashFields` picks the hashed fields in order: `sourceAddress` is `ip saddr` and
//! `destinationAddress` is `ip daddr`. An empty list means `[sourceAddress]`, so each client
//! stays on one target. With one target the rule is a plain `meta mark set <mark>`.
//! Targets whose interface does not resolve are left out, and N counts only the others.

use routerd_host::nftables::ir::{NftAction, NftHashField, NftMatch, NftRule};
use routerd_model::Resource;
use routerd_model::spec::routing::Ipv4PolicyRouteSetSpec;

use super::ctx::dep;
use super::nft_match::{ipv4_pairs, rule};
use super::policy_table::{self, PolicyTarget};
use super::{Out, RenderCtx};

/// Scratch mark of hash bucket 0; bucket `i` is `HASH_MARK_OFFSET + i`.
const HASH_MARK_OFFSET: u32 = 0x7f00_0000;

pub(super) fn render(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &Ipv4PolicyRouteSetSpec,
    out: &mut Out,
) {
    let mut rule_deps = Vec::new();
    let mut marks = Vec::new();
    for t in &s.targets {
        let Some(link) = ctx.interface(&t.outbound_interface) else {
            out.unresolved("outboundInterface", &t.outbound_interface);
            continue;
        };
        let metric = t.route_metric.unwrap_or(0);
        let target = PolicyTarget::through(
            ctx,
            &t.outbound_interface,
            &link,
            t.table,
            metric,
            (t.mark, t.priority),
        );
        let key = policy_table::render(&target, out);
        rule_deps.push(dep(&key, format!("mark {:#x} has its rule", t.mark)));
        marks.push(t.mark);
    }
    if marks.is_empty() {
        return;
    }
    let pairs = match ipv4_pairs(&s.source_cidrs, &s.destination_cidrs) {
        Ok(p) => p,
        Err(e) => return out.warn(e),
    };
    let fields = hash_fields(&s.hash_fields, out);
    let rules = match marking_rules(pairs, &marks, &fields) {
        Ok(rules) => rules,
        Err(e) => return out.warn(e),
    };
    policy_table::ensure_mark_table(out, "routerd_policyset_", &res.name, rules, rule_deps, false);
}

/// The rules marking traffic of each prefix pair: `meta mark set MARK` for one target; for
/// more, the hash rule and one remap rule per target (see the module docs).
///
/// Errors: a target mark inside the scratch bucket range (it would be remapped again).
pub(super) fn marking_rules(
    pairs: Vec<Vec<NftMatch>>,
    marks: &[u32],
    fields: &[NftHashField],
) -> Result<Vec<NftRule>, String> {
    if let [mark] = marks {
        return Ok(pairs.into_iter().map(|m| rule(m, vec![NftAction::SetMark(*mark)])).collect());
    }
    let modulus = u32::try_from(marks.len()).map_err(|_| "too many targets".to_string())?;
    let buckets = HASH_MARK_OFFSET..HASH_MARK_OFFSET.saturating_add(modulus);
    if let Some(mark) = marks.iter().find(|m| buckets.contains(m)) {
        return Err(format!(
            "target mark {mark:#x} lies in the hash's scratch marks {:#x}..={:#x}; \
             no traffic is marked",
            buckets.start,
            buckets.end - 1
        ));
    }
    let mut rules = Vec::with_capacity(pairs.len() * (marks.len() + 1));
    for matches in pairs {
        let hash =
            NftAction::SetMarkHash { fields: fields.to_vec(), modulus, offset: HASH_MARK_OFFSET };
        rules.push(rule(matches.clone(), vec![hash]));
        for (bucket, mark) in buckets.clone().zip(marks) {
            let mut remap = matches.clone();
            remap.push(NftMatch::Mark(bucket));
            rules.push(rule(remap, vec![NftAction::SetMark(*mark)]));
        }
    }
    Ok(rules)
}

/// `hashFields` as hashed header fields, in order; empty means `[sourceAddress]`. Names the
/// validator rejects are skipped with a warning.
pub(super) fn hash_fields(names: &[String], out: &mut Out) -> Vec<NftHashField> {
    let mut fields = Vec::with_capacity(names.len());
    for name in names {
        match name.as_str() {
            "sourceAddress" => fields.push(NftHashField::Ip4Saddr),
            "destinationAddress" => fields.push(NftHashField::Ip4Daddr),
            other => out.warn(format!("hashFields entry {other:?} is not supported; ignored")),
        }
    }
    if fields.is_empty() {
        fields.push(NftHashField::Ip4Saddr);
    }
    fields
}

impl super::Render for routerd_model::spec::all::Ipv4PolicyRouteSetSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, res, self, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use routerd_host::nftables::ir::NftFamily;

    fn pair(src: &str) -> Vec<NftMatch> {
        vec![NftMatch::Ip4Saddr(src.parse().expect("prefix"))]
    }

    #[test]
    fn each_prefix_pair_gets_a_hash_rule_and_a_remap_rule_per_target() {
        let pairs = vec![pair("10.0.0.0/8"), pair("192.168.0.0/16")];
        let fields = [NftHashField::Ip4Daddr];
        let rules = marking_rules(pairs, &[7, 8, 9], &fields).expect("renders");
        let text: Vec<String> = rules
            .iter()
            .map(|r| r.to_nft(NftFamily::Ip).split(" comment ").next().unwrap_or("").into())
            .collect();
        assert_eq!(
            text,
            [
                "ip saddr 10.0.0.0/8 meta mark set jhash ip daddr mod 3 seed 0x0 offset 2130706432",
                "ip saddr 10.0.0.0/8 meta mark 0x7f000000 meta mark set 0x00000007",
                "ip saddr 10.0.0.0/8 meta mark 0x7f000001 meta mark set 0x00000008",
                "ip saddr 10.0.0.0/8 meta mark 0x7f000002 meta mark set 0x00000009",
                "ip saddr 192.168.0.0/16 meta mark set jhash ip daddr mod 3 seed 0x0 offset \
                 2130706432",
                "ip saddr 192.168.0.0/16 meta mark 0x7f000000 meta mark set 0x00000007",
                "ip saddr 192.168.0.0/16 meta mark 0x7f000001 meta mark set 0x00000008",
                "ip saddr 192.168.0.0/16 meta mark 0x7f000002 meta mark set 0x00000009",
            ]
        );
    }

    #[test]
    fn target_mark_among_the_scratch_marks_is_refused() {
        let fields = [NftHashField::Ip4Saddr];
        let err = marking_rules(vec![vec![]], &[1, 0x7f00_0001], &fields).expect_err("refused");
        assert_eq!(
            err,
            "target mark 0x7f000001 lies in the hash's scratch marks 0x7f000000..=0x7f000001; \
             no traffic is marked"
        );
        assert!(marking_rules(vec![vec![]], &[1, 0x7f00_0002], &fields).is_ok());
    }
}
