//! Building blocks for the nft rules several kinds render.

use ipnet::{IpNet, Ipv4Net};
use routerd_host::nftables::ir::{
    NftAction, NftBaseChain, NftChainSpec, NftChainType, NftCtState, NftHook, NftMatch, NftPolicy,
    NftRule,
};

/// One match list per (source, destination) pair of IPv4 prefixes; a single empty list when
/// both are empty (match everything). Err names the first unparsable prefix.
pub(super) fn ipv4_pairs(
    sources: &[String],
    destinations: &[String],
) -> Result<Vec<Vec<NftMatch>>, String> {
    let parse = |list: &[String]| -> Result<Vec<Option<Ipv4Net>>, String> {
        if list.is_empty() {
            return Ok(vec![None]);
        }
        list.iter()
            .map(|s| {
                s.parse::<Ipv4Net>()
                    .map(|n| Some(n.trunc()))
                    .map_err(|_| format!("{s:?} is not an IPv4 prefix"))
            })
            .collect()
    };
    let (srcs, dsts) = (parse(sources)?, parse(destinations)?);
    let mut out = Vec::new();
    for s in &srcs {
        for d in &dsts {
            let mut m = Vec::new();
            if let Some(s) = s {
                m.push(NftMatch::Ip4Saddr(*s));
            }
            if let Some(d) = d {
                m.push(NftMatch::Ip4Daddr(*d));
            }
            out.push(m);
        }
    }
    Ok(out)
}

/// An `ip saddr`/`ip6 saddr` match for a prefix of either family.
pub(super) fn saddr(net: IpNet) -> NftMatch {
    match net {
        IpNet::V4(n) => NftMatch::Ip4Saddr(n.trunc()),
        IpNet::V6(n) => NftMatch::Ip6Saddr(n.trunc()),
    }
}

/// A base chain.
pub(super) fn base_chain(
    name: &str,
    chain_type: NftChainType,
    hook: NftHook,
    priority: i32,
    policy: NftPolicy,
    rules: Vec<NftRule>,
) -> NftChainSpec {
    NftChainSpec {
        name: name.to_string(),
        base: Some(NftBaseChain { chain_type, hook, priority, policy }),
        rules,
    }
}

/// A rule.
pub(super) fn rule(matches: Vec<NftMatch>, actions: Vec<NftAction>) -> NftRule {
    NftRule { matches, actions }
}

/// `ct state { established, related } accept` and `ct state invalid drop`: the first two rules
/// of every stateful filter chain.
pub(super) fn stateful_preamble() -> Vec<NftRule> {
    vec![
        rule(
            vec![NftMatch::CtState(vec![NftCtState::Established, NftCtState::Related])],
            vec![NftAction::Accept],
        ),
        rule(vec![NftMatch::CtState(vec![NftCtState::Invalid])], vec![NftAction::Drop]),
    ]
}
