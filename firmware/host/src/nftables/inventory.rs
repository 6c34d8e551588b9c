//! Kernel → [`NftTableState`]: every table of families `ip`, `ip6` and `inet`, with its comment,
//! its chains in kernel order and each chain's rule comments in order.
//!
//! Tables, chains and rules come from three dumps; the ruleset generation is read before and
//! after, and the whole listing is retried when it changed in between (or a dump reports
//! `NLM_F_DUMP_INTR`), so the result is one consistent snapshot.
//!
//! A base chain whose hook, type or policy the IR cannot express (the `inet` `ingress` hook, a
//! chain type added by a newer kernel) is reported with `base: None`. It is still listed, so the
//! chain-name comparison sees it; for one of routerd's own tables this shows up as drift on
//! `chains.<name>.hook`, which a modify repairs.

use std::collections::HashMap;

use super::ir::{
    NftBaseChain, NftChainState, NftChainType, NftFamily, NftHook, NftPolicy, NftTableState,
};
use super::sys::{self, NfSocket, ParsedChain};
use super::transport::{self, DumpError};
use super::udata;

/// How often a listing is retried while the ruleset keeps changing.
const ATTEMPTS: usize = 8;

/// Why the listing failed.
#[derive(Debug)]
pub(crate) struct InventoryError(pub(crate) String);

/// Lists every `ip`, `ip6` and `inet` table.
pub(crate) fn list(socket: &NfSocket) -> Result<Vec<NftTableState>, InventoryError> {
    let mut seq = 0u32;
    let mut next_seq = || {
        seq += 1;
        seq
    };
    for _ in 0..ATTEMPTS {
        let before = transport::generation(socket, next_seq()).map_err(io_error)?;
        let snapshot = (|| {
            let tables = transport::dump(socket, libc::NFT_MSG_GETTABLE, next_seq())?;
            let chains = transport::dump(socket, libc::NFT_MSG_GETCHAIN, next_seq())?;
            let rules = transport::dump(socket, libc::NFT_MSG_GETRULE, next_seq())?;
            Ok::<_, DumpError>((tables, chains, rules))
        })();
        let (tables, chains, rules) = match snapshot {
            Ok(s) => s,
            Err(DumpError::Interrupted) => continue,
            Err(DumpError::Io(e)) => return Err(io_error(e)),
        };
        let after = transport::generation(socket, next_seq()).map_err(io_error)?;
        if before == after {
            return assemble(&tables, &chains, &rules);
        }
    }
    Err(InventoryError(format!("the ruleset changed during each of {ATTEMPTS} listings")))
}

fn io_error(e: std::io::Error) -> InventoryError {
    InventoryError(e.to_string())
}

/// Builds table states from the dumped messages (`NFT_MSG_NEWTABLE`/`NEWCHAIN`/`NEWRULE`).
fn assemble(
    tables: &[Vec<u8>],
    chains: &[Vec<u8>],
    rules: &[Vec<u8>],
) -> Result<Vec<NftTableState>, InventoryError> {
    let mut out: Vec<NftTableState> = Vec::new();
    let mut table_index: HashMap<(NftFamily, String), usize> = HashMap::new();
    for msg in of_type(tables, libc::NFT_MSG_NEWTABLE) {
        let t = sys::parse_table(msg).ok_or_else(|| unparsable("table"))?;
        let Some(family) = family(t.family) else { continue };
        table_index.insert((family, t.name.clone()), out.len());
        out.push(NftTableState {
            family,
            name: t.name,
            comment: t.userdata.as_deref().and_then(udata::decode_comment),
            chains: Vec::new(),
        });
    }

    let mut chain_index: HashMap<(usize, String), usize> = HashMap::new();
    for msg in of_type(chains, libc::NFT_MSG_NEWCHAIN) {
        let c = sys::parse_chain(msg).ok_or_else(|| unparsable("chain"))?;
        let Some(family) = family(c.family) else { continue };
        let Some(&t) = table_index.get(&(family, c.table.clone())) else { continue };
        let base = base_chain(&c);
        let table = &mut out[t];
        chain_index.insert((t, c.name.clone()), table.chains.len());
        table.chains.push(NftChainState { name: c.name, base, rules: Vec::new() });
    }

    for msg in of_type(rules, libc::NFT_MSG_NEWRULE) {
        let r = sys::parse_rule(msg).ok_or_else(|| unparsable("rule"))?;
        let Some(family) = family(r.family) else { continue };
        let Some(&t) = table_index.get(&(family, r.table)) else { continue };
        let Some(&c) = chain_index.get(&(t, r.chain)) else { continue };
        let comment = r.userdata.as_deref().and_then(udata::decode_comment);
        out[t].chains[c].rules.push(comment);
    }
    Ok(out)
}

fn of_type(msgs: &[Vec<u8>], kind: i32) -> impl Iterator<Item = &[u8]> {
    let wanted = transport::nft_type(kind);
    msgs.iter()
        .map(Vec::as_slice)
        .filter(move |m| m.get(4..6).is_some_and(|t| u16::from_ne_bytes([t[0], t[1]]) == wanted))
}

fn unparsable(what: &str) -> InventoryError {
    InventoryError(format!("the kernel sent an nf_tables {what} message libnftnl cannot parse"))
}

/// The table family, for the families routerd manages.
fn family(nfproto: u32) -> Option<NftFamily> {
    match i32::try_from(nfproto).ok()? {
        libc::NFPROTO_IPV4 => Some(NftFamily::Ip),
        libc::NFPROTO_IPV6 => Some(NftFamily::Ip6),
        libc::NFPROTO_INET => Some(NftFamily::Inet),
        _ => None,
    }
}

/// The hook attachment, when the IR can express all of it.
fn base_chain(c: &ParsedChain) -> Option<NftBaseChain> {
    let hook = match i32::try_from(c.hook?).ok()? {
        libc::NF_INET_PRE_ROUTING => NftHook::Prerouting,
        libc::NF_INET_LOCAL_IN => NftHook::Input,
        libc::NF_INET_FORWARD => NftHook::Forward,
        libc::NF_INET_LOCAL_OUT => NftHook::Output,
        libc::NF_INET_POST_ROUTING => NftHook::Postrouting,
        _ => return None,
    };
    let chain_type = match c.chain_type.as_deref()? {
        "filter" => NftChainType::Filter,
        "nat" => NftChainType::Nat,
        "route" => NftChainType::Route,
        _ => return None,
    };
    let policy = match i32::try_from(c.policy?).ok()? {
        libc::NF_ACCEPT => NftPolicy::Accept,
        libc::NF_DROP => NftPolicy::Drop,
        _ => return None,
    };
    Some(NftBaseChain { chain_type, hook, priority: c.priority?, policy })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(hook: Option<u32>, chain_type: Option<&str>, policy: Option<u32>) -> ParsedChain {
        ParsedChain {
            table: "t".into(),
            name: "c".into(),
            family: libc::NFPROTO_INET as u32,
            hook,
            priority: Some(-150),
            chain_type: chain_type.map(str::to_string),
            policy,
        }
    }

    #[test]
    fn maps_base_chains_the_ir_knows() {
        let c = chain(Some(libc::NF_INET_FORWARD as u32), Some("filter"), Some(0));
        assert_eq!(
            base_chain(&c),
            Some(NftBaseChain {
                chain_type: NftChainType::Filter,
                hook: NftHook::Forward,
                priority: -150,
                policy: NftPolicy::Drop,
            })
        );
    }

    #[test]
    fn other_hooks_and_types_map_to_none() {
        assert_eq!(base_chain(&chain(None, None, None)), None, "regular chain");
        let ingress = chain(Some(libc::NF_INET_INGRESS as u32), Some("filter"), Some(1));
        assert_eq!(base_chain(&ingress), None);
        let odd_type = chain(Some(libc::NF_INET_LOCAL_IN as u32), Some("bogus"), Some(1));
        assert_eq!(base_chain(&odd_type), None);
    }

    #[test]
    fn only_ip_families_are_listed() {
        assert_eq!(family(libc::NFPROTO_INET as u32), Some(NftFamily::Inet));
        assert_eq!(family(libc::NFPROTO_IPV4 as u32), Some(NftFamily::Ip));
        assert_eq!(family(libc::NFPROTO_IPV6 as u32), Some(NftFamily::Ip6));
        assert_eq!(family(libc::NFPROTO_BRIDGE as u32), None);
        assert_eq!(family(libc::NFPROTO_NETDEV as u32), None);
        assert_eq!(family(libc::NFPROTO_ARP as u32), None);
    }
}
