//! Change notifications of nf_tables in one namespace: a `NETLINK_NETFILTER` socket joined to
//! the `NFNLGRP_NFTABLES` multicast group (`linux/netfilter/nfnetlink.h`), which the kernel
//! sends every committed transaction to, object by object (`NFT_MSG_NEWTABLE`,
//! `NFT_MSG_DELRULE`, …), closed by one `NFT_MSG_NEWGEN` naming the new ruleset generation and
//! the process that committed it (`NFTA_GEN_PROC_PID`, `NFTA_GEN_PROC_NAME`, kernel 4.20 and
//! later). This is what `nft monitor` reads.
//!
//! The supervisor uses it as it uses the rtnetlink groups ([`crate::netlink::NetlinkMonitor`]):
//! to notice a table deleted or changed by hand within a second. A notification only says that
//! a transaction touched some tables; the reconcile that follows observes the host itself, so
//! a lost or coalesced notification costs only latency (an overrun is reported as a change).
//!
//! Parsing is safe code over the datagram bytes: the netlink header, `struct nfgenmsg` and the
//! attributes (`NLA_*` framing, 4-byte aligned). A message that does not parse is skipped.

use std::collections::BTreeSet;

use rtnetlink::sys::protocols::NETLINK_NETFILTER;
use rtnetlink::sys::{AsyncSocket, AsyncSocketExt, TokioSocket};

use crate::error::HostError;
use crate::netns::Netns;

/// `NFNLGRP_NFTABLES` (`linux/netfilter/nfnetlink.h`).
const NFNLGRP_NFTABLES: u32 = 7;
/// `NFNL_SUBSYS_NFTABLES`: the high byte of an nf_tables message's `nlmsg_type`.
const NFNL_SUBSYS_NFTABLES: u16 = 10;
/// `NFT_MSG_NEWGEN`: closes a transaction's notifications.
const NFT_MSG_NEWGEN: u16 = 15;
/// `NFTA_GEN_PROC_PID`, `NFTA_GEN_PROC_NAME` (`enum nft_gen_attributes`).
const NFTA_GEN_PROC_PID: u16 = 2;
const NFTA_GEN_PROC_NAME: u16 = 3;
/// The table name of a table, chain, rule, set, set element list, object or flowtable message:
/// attribute 1 in each (`NFTA_TABLE_NAME`, `NFTA_CHAIN_TABLE`, `NFTA_RULE_TABLE`, …).
const NFTA_TABLE: u16 = 1;
/// `struct nlmsghdr` and `struct nfgenmsg` sizes.
const NLMSG_HDRLEN: usize = 16;
const NFGENMSG_LEN: usize = 4;
/// `NLA_TYPE_MASK`: attribute type without the nested and byte-order flags.
const NLA_TYPE_MASK: u16 = 0x3fff;
/// Receive buffer asked for: a `nft -f` of thousands of rules notifies every rule.
const RECEIVE_BUFFER: usize = 4 << 20;

/// One committed nf_tables transaction as its notifications describe it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NftChange {
    /// The tables the transaction's objects belong to (of every family, by name).
    pub tables: BTreeSet<String>,
    /// The committing thread's ID (`NFTA_GEN_PROC_PID`, `task_pid_nr`: as the initial PID
    /// namespace sees it), when the kernel sent it.
    pub pid: Option<u32>,
    /// The committing process's name (`NFTA_GEN_PROC_NAME`, its `comm`: `nft`, `routerd`).
    pub process: Option<String>,
    /// Notifications were lost (`ENOBUFS`): anything may have changed.
    pub overrun: bool,
}

impl NftChange {
    /// Whether this process committed the transaction: its thread ID is one of ours
    /// (`/proc/self/task/<pid>` exists). Only as good as the PID namespaces agree: in a PID
    /// namespace of its own the daemon sees other IDs than the kernel sends, and every
    /// transaction counts as someone else's.
    pub fn is_own(&self) -> bool {
        !self.overrun
            && self
                .pid
                .is_some_and(|pid| std::path::Path::new(&format!("/proc/self/task/{pid}")).exists())
    }

    /// Whether the transaction touched a table whose name starts with `prefix` (or may have:
    /// an overrun).
    pub fn touches(&self, prefix: &str) -> bool {
        self.overrun || self.tables.iter().any(|t| t.starts_with(prefix))
    }
}

/// A socket subscribed to nf_tables notifications inside one namespace.
///
/// Shape: [`NftMonitor::next`] returns one [`NftChange`] per committed transaction, in commit
/// order, and `None` once the socket fails.
pub struct NftMonitor {
    socket: TokioSocket,
    /// Objects seen since the last `NFT_MSG_NEWGEN`.
    pending: NftChange,
}

impl NftMonitor {
    /// Opens the socket inside `netns` and joins `NFNLGRP_NFTABLES`; the socket is registered
    /// with the current tokio runtime.
    ///
    /// Errors: [`HostError::Netns`] when the namespace cannot be entered;
    /// [`HostError::Socket`] outside a tokio runtime or when the socket cannot be opened or
    /// joined (joining needs `CAP_NET_ADMIN` in the namespace).
    pub fn open(netns: &Netns) -> Result<Self, HostError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|e| {
            HostError::Socket(std::io::Error::other(format!(
                "no tokio runtime to drive the nftables monitor: {e}"
            )))
        })?;
        let opened = netns.run(|| {
            let _entered = runtime.enter();
            let mut socket = TokioSocket::new(NETLINK_NETFILTER)?;
            let inner = socket.socket_mut();
            inner.bind_auto()?;
            // Best effort: a small buffer only means an overrun, reported as a change.
            let _ = inner.set_rx_buf_sz(RECEIVE_BUFFER);
            inner.add_membership(NFNLGRP_NFTABLES)?;
            Ok::<_, std::io::Error>(socket)
        })?;
        let socket = opened.map_err(HostError::Socket)?;
        Ok(Self { socket, pending: NftChange::default() })
    }

    /// The next committed transaction, or `None` when the socket is gone.
    pub async fn next(&mut self) -> Option<NftChange> {
        loop {
            let datagram = match self.socket.recv_from_full().await {
                Ok((bytes, _)) => bytes,
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                    let mut lost = std::mem::take(&mut self.pending);
                    lost.overrun = true;
                    return Some(lost);
                }
                Err(_) => return None,
            };
            if let Some(change) = take_datagram(&mut self.pending, &datagram) {
                return Some(change);
            }
        }
    }
}

/// Adds a datagram's messages to the `pending` transaction; returns it once its
/// `NFT_MSG_NEWGEN` arrived. (A datagram holds one notification: the kernel multicasts each on
/// its own.)
fn take_datagram(pending: &mut NftChange, datagram: &[u8]) -> Option<NftChange> {
    let mut done = None;
    for (kind, payload) in messages(datagram) {
        if kind >> 8 != NFNL_SUBSYS_NFTABLES {
            continue;
        }
        let attrs = payload.get(NFGENMSG_LEN..).unwrap_or_default();
        if kind & 0xff == NFT_MSG_NEWGEN {
            let mut change = std::mem::take(pending);
            for (ty, value) in attributes(attrs) {
                match ty {
                    NFTA_GEN_PROC_PID => change.pid = be_u32(value),
                    NFTA_GEN_PROC_NAME => change.process = c_string(value),
                    _ => {}
                }
            }
            done = Some(change);
        } else if let Some(table) =
            attributes(attrs).find(|(ty, _)| *ty == NFTA_TABLE).and_then(|(_, v)| c_string(v))
        {
            pending.tables.insert(table);
        }
    }
    done
}

/// The `(nlmsg_type, payload)` of each netlink message in `datagram`; stops at the first
/// malformed header.
fn messages(datagram: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    let mut rest = datagram;
    std::iter::from_fn(move || {
        let len = u32::from_ne_bytes(rest.get(0..4)?.try_into().ok()?) as usize;
        let kind = u16::from_ne_bytes(rest.get(4..6)?.try_into().ok()?);
        let message = rest.get(..len).filter(|_| len >= NLMSG_HDRLEN)?;
        rest = rest.get(align(len)..).unwrap_or_default();
        Some((kind, message.get(NLMSG_HDRLEN..).unwrap_or_default()))
    })
}

/// The `(type, value)` of each attribute in `bytes` (`struct nlattr`, `NLA_ALIGNTO` 4).
fn attributes(bytes: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        let len = u16::from_ne_bytes(rest.get(0..2)?.try_into().ok()?) as usize;
        let ty = u16::from_ne_bytes(rest.get(2..4)?.try_into().ok()?) & NLA_TYPE_MASK;
        let value = rest.get(4..len).filter(|_| len >= 4)?;
        rest = rest.get(align(len)..).unwrap_or_default();
        Some((ty, value))
    })
}

fn align(len: usize) -> usize {
    (len + 3) & !3
}

/// A big-endian `u32` attribute (nf_tables sends its integers in network order).
fn be_u32(value: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(value.get(0..4)?.try_into().ok()?))
}

/// A NUL-terminated string attribute.
fn c_string(value: &[u8]) -> Option<String> {
    let text = value.split(|b| *b == 0).next()?;
    std::str::from_utf8(text).ok().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One netlink message of `kind` with `struct nfgenmsg` and `attrs`.
    fn message(kind: u16, attrs: &[(u16, &[u8])]) -> Vec<u8> {
        let mut body = vec![1, 0, 0, 0];
        for (ty, value) in attrs {
            let len = 4 + value.len();
            body.extend_from_slice(&(len as u16).to_ne_bytes());
            body.extend_from_slice(&ty.to_ne_bytes());
            body.extend_from_slice(value);
            body.resize(align(body.len()), 0);
        }
        let mut out = Vec::new();
        out.extend_from_slice(&((NLMSG_HDRLEN + body.len()) as u32).to_ne_bytes());
        out.extend_from_slice(&kind.to_ne_bytes());
        out.extend_from_slice(&[0; 10]);
        out.extend_from_slice(&body);
        out
    }

    #[test]
    fn a_transaction_is_reported_at_its_newgen_with_its_tables_and_committer() {
        let subsys = NFNL_SUBSYS_NFTABLES << 8;
        let deltable = message(subsys | 2, &[(NFTA_TABLE, b"routerd_filter_home\0")]);
        let delrule = message(subsys | 8, &[(NFTA_TABLE, b"other\0"), (2, b"chain\0")]);
        let newgen = message(
            subsys | NFT_MSG_NEWGEN,
            &[(1, &7u32.to_be_bytes()), (2, &4242u32.to_be_bytes()), (3, b"nft\0")],
        );
        let mut pending = NftChange::default();
        assert_eq!(take_datagram(&mut pending, &deltable), None, "open until NEWGEN");
        assert_eq!(take_datagram(&mut pending, &delrule), None);
        assert_eq!(take_datagram(&mut pending, b"\x03\0\0"), None, "a short datagram is skipped");
        let done = take_datagram(&mut pending, &newgen);
        assert_eq!(pending, NftChange::default(), "the next transaction starts empty");
        let change = done.expect("closed by NEWGEN");
        assert_eq!(change.pid, Some(4242));
        assert_eq!(change.process.as_deref(), Some("nft"));
        assert!(change.touches("routerd_"));
        assert_eq!(change.tables.len(), 2);
        let own = NftChange { pid: Some(std::process::id()), ..NftChange::default() };
        assert!(own.is_own(), "the main thread is one of ours");
        assert!(!NftChange { pid: Some(u32::MAX), ..own }.is_own());
    }
}
