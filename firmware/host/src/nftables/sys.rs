//! Every FFI call of the nftables backend, and nothing else.
//!
//! The `nftnl` crate wraps batches, chains, rules and the common expressions; this module adds
//! what it lacks, on the raw libnftnl bindings (`nftnl-sys`):
//!
//! - [`TableMsg`]: a table message with userdata (the ownership comment) and the `NLM_F_EXCL`
//!   flag, which `nftnl::Table` cannot carry;
//! - expressions `rt`, `byteorder`, `exthdr` (TCP option write), `nat`/`masq` with a port
//!   range and flags, `payload` loads into any register (`nftnl` always uses reg 1) and `hash`;
//! - parsing kernel messages into plain Rust values ([`parse_table`], [`parse_chain`],
//!   [`parse_rule`], [`parse_gen`]);
//! - the netlink socket ([`NfSocket`]): `mnl` plus the socket options and non-blocking receive
//!   it does not offer.
//!
//! Every libnftnl object allocated here is owned by a guard that frees it on drop, and every
//! value read from the kernel is checked (`*_is_set`, null pointers) before use.

#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_void};
use std::io;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

use nftnl::expr::{Expression, Register};
use nftnl::{MsgType, NlMsg, ProtoFamily, Rule};
use nftnl_sys::{self as sys, libc};

/// `SOL_NETLINK` option: report extended ACK messages (`include/uapi/linux/netlink.h`).
const NETLINK_EXT_ACK: libc::c_int = 11;
/// `SOL_NETLINK` option: do not echo the failed request in error replies.
const NETLINK_CAP_ACK: libc::c_int = 10;
/// `SO_RCVBUFFORCE` (`asm-generic/socket.h`): set the receive buffer beyond `rmem_max` as root.
const SO_RCVBUFFORCE: libc::c_int = 33;

// ---------------------------------------------------------------------------------------------
// Socket
// ---------------------------------------------------------------------------------------------

/// A `NETLINK_NETFILTER` socket with extended ACKs on. It lives in the network namespace of the
/// thread that opened it, also once moved to another thread.
pub(crate) struct NfSocket {
    inner: mnl::Socket,
}

// SAFETY: `mnl::Socket` is `!Send` only because it holds a raw pointer to libmnl's
// `struct mnl_socket` (a descriptor and its bound address, allocated by `mnl_socket_open`).
// libmnl keeps no thread-local or global state for it, so using it from another thread is
// sound; `NfSocket` is not `Sync`, so one thread uses it at a time.
unsafe impl Send for NfSocket {}

impl std::fmt::Debug for NfSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NfSocket").field("fd", &self.inner.as_raw_fd()).finish()
    }
}

impl NfSocket {
    /// Opens and binds a socket in the calling thread's network namespace.
    pub(crate) fn open() -> io::Result<Self> {
        let socket = Self { inner: mnl::Socket::new(mnl::Bus::Netfilter)? };
        // Both options are best effort: without them errors carry less detail, nothing breaks.
        let _ = socket.set_int_option(libc::SOL_NETLINK, NETLINK_EXT_ACK, 1);
        let _ = socket.set_int_option(libc::SOL_NETLINK, NETLINK_CAP_ACK, 1);
        Ok(socket)
    }

    /// Raises the receive buffer to at least `bytes` so a batch's acknowledgements all fit.
    pub(crate) fn grow_receive_buffer(&self, bytes: usize) -> io::Result<()> {
        let bytes = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        self.set_int_option(libc::SOL_SOCKET, SO_RCVBUFFORCE, bytes)
            .or_else(|_| self.set_int_option(libc::SOL_SOCKET, libc::SO_RCVBUF, bytes))
    }

    /// Sends one datagram holding `bytes`.
    pub(crate) fn send(&self, bytes: &[u8]) -> io::Result<()> {
        let sent = self.inner.send(bytes)?;
        if sent < bytes.len() {
            return Err(io::Error::other(format!("sent {sent} of {} bytes", bytes.len())));
        }
        Ok(())
    }

    /// Receives one datagram into `buf`. With `wait` false, returns `None` when nothing is
    /// queued. Errors when the datagram did not fit.
    pub(crate) fn recv(&self, buf: &mut [u8], wait: bool) -> io::Result<Option<usize>> {
        let flags = libc::MSG_TRUNC | if wait { 0 } else { libc::MSG_DONTWAIT };
        loop {
            // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the whole call, and the
            // descriptor stays open while `self.inner` lives.
            let n = unsafe {
                libc::recv(self.inner.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), flags)
            };
            if n >= 0 {
                let n = n.unsigned_abs();
                if n > buf.len() {
                    return Err(io::Error::other(format!(
                        "netlink message of {n} bytes does not fit the {} byte buffer",
                        buf.len()
                    )));
                }
                return Ok(Some(n));
            }
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock if !wait => return Ok(None),
                _ => return Err(err),
            }
        }
    }

    fn set_int_option(
        &self,
        level: libc::c_int,
        name: libc::c_int,
        value: libc::c_int,
    ) -> io::Result<()> {
        // SAFETY: `value` is a live c_int and the length passed is its exact size; the
        // descriptor stays open while `self.inner` lives.
        let rc = unsafe {
            libc::setsockopt(
                self.inner.as_raw_fd(),
                level,
                name,
                (&raw const value).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }
}

// ---------------------------------------------------------------------------------------------
// Table message
// ---------------------------------------------------------------------------------------------

/// A table add/delete message carrying userdata and the exclusive-create flag.
pub(crate) struct TableMsg {
    raw: NonNull<sys::nftnl_table>,
    family: ProtoFamily,
    add_flags: u16,
}

impl TableMsg {
    /// A table `name` of `family`. `userdata` becomes `NFTA_TABLE_USERDATA`; `exclusive` makes an
    /// add fail with `EEXIST` when the table exists (`NLM_F_EXCL`), otherwise an add of an
    /// existing table is a no-op.
    pub(crate) fn new(
        name: &CStr,
        family: ProtoFamily,
        userdata: Option<&[u8]>,
        exclusive: bool,
    ) -> Self {
        let raw = alloc_or_abort(
            // SAFETY: plain allocation, no arguments.
            unsafe { sys::nftnl_table_alloc() },
        );
        // SAFETY: `raw` is a valid table; libnftnl copies the string and the userdata bytes
        // (`strdup`/`memcpy`), so the borrowed inputs need not outlive the call. The userdata
        // length fits u32 because callers pass comments of at most a few hundred bytes.
        unsafe {
            sys::nftnl_table_set_u32(raw.as_ptr(), sys::NFTNL_TABLE_FAMILY as u16, family as u32);
            sys::nftnl_table_set_str(raw.as_ptr(), sys::NFTNL_TABLE_NAME as u16, name.as_ptr());
            if let Some(data) = userdata {
                let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
                let rc = sys::nftnl_table_set_data(
                    raw.as_ptr(),
                    sys::NFTNL_TABLE_USERDATA as u16,
                    data.as_ptr().cast(),
                    len,
                );
                if rc < 0 {
                    // Only fails on allocation failure; see `alloc_or_abort`.
                    std::process::abort();
                }
            }
        }
        let mut add_flags = (libc::NLM_F_ACK | libc::NLM_F_CREATE) as u16;
        if exclusive {
            add_flags |= libc::NLM_F_EXCL as u16;
        }
        Self { raw, family, add_flags }
    }
}

// SAFETY: `write` emits one table message: a header plus the payload of one small table, far
// below `nft_nlmsg_maxsize()`, which callers guarantee `buf` has room for.
unsafe impl NlMsg for TableMsg {
    unsafe fn write(&self, buf: *mut c_void, seq: u32, msg_type: MsgType) {
        let (kind, flags) = match msg_type {
            MsgType::Add => (libc::NFT_MSG_NEWTABLE, self.add_flags),
            MsgType::Del => (libc::NFT_MSG_DELTABLE, libc::NLM_F_ACK as u16),
        };
        // SAFETY: the caller guarantees `buf` has room for a maximal message; `self.raw` is a
        // valid table.
        unsafe {
            let header = sys::nftnl_nlmsg_build_hdr(
                buf.cast::<c_char>(),
                kind as u16,
                self.family as u16,
                flags,
                seq,
            );
            sys::nftnl_table_nlmsg_build_payload(header, self.raw.as_ptr());
        }
    }
}

impl Drop for TableMsg {
    fn drop(&mut self) {
        // SAFETY: `raw` came from `nftnl_table_alloc` and is freed exactly once, here.
        unsafe { sys::nftnl_table_free(self.raw.as_ptr()) };
    }
}

// ---------------------------------------------------------------------------------------------
// Expressions nftnl lacks
// ---------------------------------------------------------------------------------------------

/// `rt load tcpmss => reg 1`: the MSS the route's path MTU allows (`NFT_RT_TCPMSS`).
pub(crate) struct RtTcpMss;

/// `byteorder reg 1 = hton(reg 1, LEN, SIZE)`.
pub(crate) struct HtonReg1 {
    /// Bytes to convert.
    pub(crate) len: u32,
    /// Element size.
    pub(crate) size: u32,
}

/// `exthdr write tcpopt reg 1 => LENb @ KIND + OFFSET`: overwrite a TCP option field.
pub(crate) struct TcpOptionWrite {
    /// TCP option kind (2 = maximum segment size).
    pub(crate) kind: u8,
    /// Offset inside the option.
    pub(crate) offset: u32,
    /// Bytes written.
    pub(crate) len: u32,
}

/// Which NAT expression.
#[derive(Clone, Copy)]
pub(crate) enum NatKind {
    /// `nat snat`.
    Snat,
    /// `nat dnat`.
    Dnat,
    /// `masq`.
    Masquerade,
}

/// `nat`/`masq` with the registers nft uses: address in `addr`, ports in `proto_min` and
/// `proto_max`, and `flags` (`NF_NAT_RANGE_PROTO_SPECIFIED` when ports are given).
pub(crate) struct NatStmt {
    /// Statement.
    pub(crate) kind: NatKind,
    /// Address family of the address register (ignored for masquerade).
    pub(crate) family: ProtoFamily,
    /// Register holding the address (snat/dnat), the first of a range.
    pub(crate) addr: Option<Register>,
    /// Register holding the range's last address.
    pub(crate) addr_max: Option<Register>,
    /// Register holding the first port.
    pub(crate) proto_min: Option<Register>,
    /// Register holding the last port.
    pub(crate) proto_max: Option<Register>,
    /// `NF_NAT_RANGE_*` flags; 0 leaves the attribute out, as nft does.
    pub(crate) flags: u32,
}

/// `payload load LENb @ network header + OFFSET => reg DREG`.
pub(crate) struct NetworkLoad {
    /// Byte offset into the network header.
    pub(crate) offset: u32,
    /// Bytes loaded.
    pub(crate) len: u32,
    /// Destination register in nft's numbering: `NFT_REG_1..=4` for a 16-byte-aligned
    /// register, `NFT_REG32_00..=15` otherwise.
    pub(crate) dreg: u32,
}

/// `hash reg 1 = jhash(reg SREG, LEN, SEED) % mod MODULUS offset OFFSET`: Jenkins hash of
/// `len` bytes starting at `sreg`, reduced to `offset..offset + modulus`, into reg 1.
pub(crate) struct Jhash {
    /// First source register, numbered as in [`NetworkLoad::dreg`].
    pub(crate) sreg: u32,
    /// Bytes hashed.
    pub(crate) len: u32,
    /// Number of buckets.
    pub(crate) modulus: u32,
    /// Hash seed; always sent, as nft does when the rule names one.
    pub(crate) seed: u32,
    /// Added to the bucket.
    pub(crate) offset: u32,
}

/// `rt` key of the TCP MSS (`enum nft_rt_keys`).
const NFT_RT_TCPMSS: u32 = 3;
/// `exthdr` operation on TCP options (`enum nft_exthdr_op`).
const NFT_EXTHDR_OP_TCPOPT: u32 = 1;
/// Jenkins hash (`enum nft_hash_types`).
const NFT_HASH_JENKINS: u32 = 0;

impl Expression for RtTcpMss {
    fn to_expr(&self, _rule: &Rule) -> NonNull<sys::nftnl_expr> {
        let expr = alloc_expr(c"rt");
        // SAFETY: `expr` is a valid, freshly allocated `rt` expression; u32 attributes.
        unsafe {
            sys::nftnl_expr_set_u32(expr.as_ptr(), sys::NFTNL_EXPR_RT_KEY as u16, NFT_RT_TCPMSS);
            sys::nftnl_expr_set_u32(expr.as_ptr(), sys::NFTNL_EXPR_RT_DREG as u16, reg1());
        }
        expr
    }
}

impl Expression for HtonReg1 {
    fn to_expr(&self, _rule: &Rule) -> NonNull<sys::nftnl_expr> {
        let expr = alloc_expr(c"byteorder");
        // SAFETY: `expr` is a valid, freshly allocated `byteorder` expression; u32 attributes.
        unsafe {
            let e = expr.as_ptr();
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_BYTEORDER_SREG as u16, reg1());
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_BYTEORDER_DREG as u16, reg1());
            let op = libc::NFT_BYTEORDER_HTON as u32;
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_BYTEORDER_OP as u16, op);
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_BYTEORDER_LEN as u16, self.len);
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_BYTEORDER_SIZE as u16, self.size);
        }
        expr
    }
}

impl Expression for TcpOptionWrite {
    fn to_expr(&self, _rule: &Rule) -> NonNull<sys::nftnl_expr> {
        let expr = alloc_expr(c"exthdr");
        // SAFETY: `expr` is a valid, freshly allocated `exthdr` expression; TYPE is a u8
        // attribute, the others u32.
        unsafe {
            let e = expr.as_ptr();
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_EXTHDR_SREG as u16, reg1());
            sys::nftnl_expr_set_u8(e, sys::NFTNL_EXPR_EXTHDR_TYPE as u16, self.kind);
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_EXTHDR_OFFSET as u16, self.offset);
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_EXTHDR_LEN as u16, self.len);
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_EXTHDR_OP as u16, NFT_EXTHDR_OP_TCPOPT);
        }
        expr
    }
}

impl Expression for NetworkLoad {
    fn to_expr(&self, _rule: &Rule) -> NonNull<sys::nftnl_expr> {
        let expr = alloc_expr(c"payload");
        // SAFETY: `expr` is a valid, freshly allocated `payload` expression; u32 attributes.
        unsafe {
            let e = expr.as_ptr();
            let base = libc::NFT_PAYLOAD_NETWORK_HEADER as u32;
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_PAYLOAD_DREG as u16, self.dreg);
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_PAYLOAD_BASE as u16, base);
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_PAYLOAD_OFFSET as u16, self.offset);
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_PAYLOAD_LEN as u16, self.len);
        }
        expr
    }
}

impl Expression for Jhash {
    fn to_expr(&self, _rule: &Rule) -> NonNull<sys::nftnl_expr> {
        let expr = alloc_expr(c"hash");
        // SAFETY: `expr` is a valid, freshly allocated `hash` expression; every attribute set
        // here is u32.
        unsafe {
            let e = expr.as_ptr();
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_HASH_SREG as u16, self.sreg);
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_HASH_DREG as u16, reg1());
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_HASH_TYPE as u16, NFT_HASH_JENKINS);
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_HASH_LEN as u16, self.len);
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_HASH_MODULUS as u16, self.modulus);
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_HASH_SEED as u16, self.seed);
            sys::nftnl_expr_set_u32(e, sys::NFTNL_EXPR_HASH_OFFSET as u16, self.offset);
        }
        expr
    }
}

impl Expression for NatStmt {
    fn to_expr(&self, _rule: &Rule) -> NonNull<sys::nftnl_expr> {
        let set = |expr: NonNull<sys::nftnl_expr>, attr: u32, value: u32| {
            // SAFETY: `expr` is the valid expression allocated below; all nat/masq attributes
            // set here are u32.
            unsafe { sys::nftnl_expr_set_u32(expr.as_ptr(), attr as u16, value) }
        };
        match self.kind {
            NatKind::Masquerade => {
                let expr = alloc_expr(c"masq");
                if let Some(r) = self.proto_min {
                    set(expr, sys::NFTNL_EXPR_MASQ_REG_PROTO_MIN, r.to_raw());
                }
                if let Some(r) = self.proto_max {
                    set(expr, sys::NFTNL_EXPR_MASQ_REG_PROTO_MAX, r.to_raw());
                }
                if self.flags != 0 {
                    set(expr, sys::NFTNL_EXPR_MASQ_FLAGS, self.flags);
                }
                expr
            }
            NatKind::Snat | NatKind::Dnat => {
                let expr = alloc_expr(c"nat");
                let kind = match self.kind {
                    NatKind::Dnat => libc::NFT_NAT_DNAT,
                    _ => libc::NFT_NAT_SNAT,
                };
                set(expr, sys::NFTNL_EXPR_NAT_TYPE, kind as u32);
                set(expr, sys::NFTNL_EXPR_NAT_FAMILY, self.family as u32);
                if let Some(r) = self.addr {
                    set(expr, sys::NFTNL_EXPR_NAT_REG_ADDR_MIN, r.to_raw());
                }
                if let Some(r) = self.addr_max {
                    set(expr, sys::NFTNL_EXPR_NAT_REG_ADDR_MAX, r.to_raw());
                }
                if let Some(r) = self.proto_min {
                    set(expr, sys::NFTNL_EXPR_NAT_REG_PROTO_MIN, r.to_raw());
                }
                if let Some(r) = self.proto_max {
                    set(expr, sys::NFTNL_EXPR_NAT_REG_PROTO_MAX, r.to_raw());
                }
                if self.flags != 0 {
                    set(expr, sys::NFTNL_EXPR_NAT_FLAGS, self.flags);
                }
                expr
            }
        }
    }
}

fn reg1() -> u32 {
    Register::Reg1.to_raw()
}

/// Allocates an expression; the rule it is added to takes ownership.
fn alloc_expr(name: &CStr) -> NonNull<sys::nftnl_expr> {
    alloc_or_abort(
        // SAFETY: `name` is a valid NUL-terminated string naming a libnftnl expression type.
        unsafe { sys::nftnl_expr_alloc(name.as_ptr()) },
    )
}

/// libnftnl allocations fail only when memory is exhausted; like `nftnl` and libstd, abort.
fn alloc_or_abort<T>(ptr: *mut T) -> NonNull<T> {
    NonNull::new(ptr).unwrap_or_else(|| std::process::abort())
}

// ---------------------------------------------------------------------------------------------
// Parsing kernel messages
// ---------------------------------------------------------------------------------------------

/// A table as the kernel reported it.
#[derive(Debug)]
pub(crate) struct ParsedTable {
    /// `NFTA_TABLE_NAME`.
    pub(crate) name: String,
    /// `NFPROTO_*`.
    pub(crate) family: u32,
    /// `NFTA_TABLE_USERDATA`, raw.
    pub(crate) userdata: Option<Vec<u8>>,
}

/// A chain as the kernel reported it. Hook fields are `None` for a regular chain.
#[derive(Debug)]
pub(crate) struct ParsedChain {
    /// Table name.
    pub(crate) table: String,
    /// Chain name.
    pub(crate) name: String,
    /// `NFPROTO_*`.
    pub(crate) family: u32,
    /// `NF_INET_*` hook number.
    pub(crate) hook: Option<u32>,
    /// Hook priority.
    pub(crate) priority: Option<i32>,
    /// `filter`, `nat`, `route`.
    pub(crate) chain_type: Option<String>,
    /// `NF_ACCEPT` / `NF_DROP`.
    pub(crate) policy: Option<u32>,
}

/// A rule as the kernel reported it; only what drift detection needs.
#[derive(Debug)]
pub(crate) struct ParsedRule {
    /// Table name.
    pub(crate) table: String,
    /// Chain name.
    pub(crate) chain: String,
    /// `NFPROTO_*`.
    pub(crate) family: u32,
    /// `NFTA_RULE_USERDATA`, raw.
    pub(crate) userdata: Option<Vec<u8>>,
}

/// Owns a libnftnl object and frees it on drop.
struct Owned<T> {
    ptr: NonNull<T>,
    free: unsafe extern "C" fn(*const T),
}

impl<T> Owned<T> {
    fn new(ptr: *mut T, free: unsafe extern "C" fn(*const T)) -> Self {
        Self { ptr: alloc_or_abort(ptr), free }
    }
}

impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from the matching `nftnl_*_alloc` and is freed once, here.
        unsafe { (self.free)(self.ptr.as_ptr()) };
    }
}

/// A netlink message copied into storage aligned for `nlmsghdr`.
struct AlignedMsg {
    words: Vec<u32>,
}

impl AlignedMsg {
    /// `None` when `msg` is shorter than a header or disagrees with its own length field.
    fn new(msg: &[u8]) -> Option<Self> {
        let header_len = std::mem::size_of::<libc::nlmsghdr>();
        let declared = u32::from_ne_bytes(msg.get(..4)?.try_into().ok()?) as usize;
        if msg.len() < header_len || declared != msg.len() {
            return None;
        }
        let mut words = vec![0u32; msg.len().div_ceil(4)];
        for (word, chunk) in words.iter_mut().zip(msg.chunks(4)) {
            let mut bytes = [0u8; 4];
            bytes[..chunk.len()].copy_from_slice(chunk);
            *word = u32::from_ne_bytes(bytes);
        }
        Some(Self { words })
    }

    fn header(&self) -> *const libc::nlmsghdr {
        self.words.as_ptr().cast()
    }
}

/// Parses an `NFT_MSG_NEWTABLE` message. `None` when it does not parse or lacks a name.
pub(crate) fn parse_table(msg: &[u8]) -> Option<ParsedTable> {
    let msg = AlignedMsg::new(msg)?;
    // SAFETY: plain allocation.
    let table = Owned::new(unsafe { sys::nftnl_table_alloc() }, sys::nftnl_table_free);
    let t = table.ptr.as_ptr();
    // SAFETY: `msg` holds a complete, aligned netlink message whose length field matches its
    // size, so libnftnl's attribute walk stays inside it; `t` is a valid table. The getters are
    // only called for attributes `nftnl_table_is_set` reports, and returned pointers are copied
    // before `table` is freed.
    unsafe {
        if sys::nftnl_table_nlmsg_parse(msg.header(), t) < 0 {
            return None;
        }
        let name = get_string(
            |a| sys::nftnl_table_is_set(t, a),
            |a| sys::nftnl_table_get_str(t, a),
            sys::NFTNL_TABLE_NAME,
        )?;
        if !sys::nftnl_table_is_set(t, sys::NFTNL_TABLE_FAMILY as u16) {
            return None;
        }
        let family = sys::nftnl_table_get_u32(t, sys::NFTNL_TABLE_FAMILY as u16);
        let userdata = if sys::nftnl_table_is_set(t, sys::NFTNL_TABLE_USERDATA as u16) {
            let mut len = 0u32;
            let data = sys::nftnl_table_get_data(t, sys::NFTNL_TABLE_USERDATA as u16, &mut len);
            copy_bytes(data, len)
        } else {
            None
        };
        Some(ParsedTable { name, family, userdata })
    }
}

/// Parses an `NFT_MSG_NEWCHAIN` message. `None` when it does not parse or lacks a name.
pub(crate) fn parse_chain(msg: &[u8]) -> Option<ParsedChain> {
    let msg = AlignedMsg::new(msg)?;
    // SAFETY: plain allocation.
    let chain = Owned::new(unsafe { sys::nftnl_chain_alloc() }, sys::nftnl_chain_free);
    let c = chain.ptr.as_ptr();
    // SAFETY: as in `parse_table`, for a chain.
    unsafe {
        if sys::nftnl_chain_nlmsg_parse(msg.header(), c) < 0 {
            return None;
        }
        let is_set = |a: u16| sys::nftnl_chain_is_set(c, a);
        let get_str = |a: u16| sys::nftnl_chain_get_str(c, a);
        let table = get_string(is_set, get_str, sys::NFTNL_CHAIN_TABLE)?;
        let name = get_string(is_set, get_str, sys::NFTNL_CHAIN_NAME)?;
        let u32_attr = |a: u32| is_set(a as u16).then(|| sys::nftnl_chain_get_u32(c, a as u16));
        let family = u32_attr(sys::NFTNL_CHAIN_FAMILY)?;
        let hook = u32_attr(sys::NFTNL_CHAIN_HOOKNUM);
        let priority = is_set(sys::NFTNL_CHAIN_PRIO as u16)
            .then(|| sys::nftnl_chain_get_s32(c, sys::NFTNL_CHAIN_PRIO as u16));
        let policy = u32_attr(sys::NFTNL_CHAIN_POLICY);
        let chain_type = get_string(is_set, get_str, sys::NFTNL_CHAIN_TYPE);
        Some(ParsedChain { table, name, family, hook, priority, chain_type, policy })
    }
}

/// Parses an `NFT_MSG_NEWRULE` message. `None` when it does not parse or lacks its table or
/// chain.
pub(crate) fn parse_rule(msg: &[u8]) -> Option<ParsedRule> {
    let msg = AlignedMsg::new(msg)?;
    // SAFETY: plain allocation.
    let rule = Owned::new(unsafe { sys::nftnl_rule_alloc() }, sys::nftnl_rule_free);
    let r = rule.ptr.as_ptr();
    // SAFETY: as in `parse_table`, for a rule.
    unsafe {
        if sys::nftnl_rule_nlmsg_parse(msg.header(), r) < 0 {
            return None;
        }
        let is_set = |a: u16| sys::nftnl_rule_is_set(r, a);
        let get_str = |a: u16| sys::nftnl_rule_get_str(r, a);
        let table = get_string(is_set, get_str, sys::NFTNL_RULE_TABLE)?;
        let chain = get_string(is_set, get_str, sys::NFTNL_RULE_CHAIN)?;
        if !is_set(sys::NFTNL_RULE_FAMILY as u16) {
            return None;
        }
        let family = sys::nftnl_rule_get_u32(r, sys::NFTNL_RULE_FAMILY as u16);
        let userdata = if is_set(sys::NFTNL_RULE_USERDATA as u16) {
            let mut len = 0u32;
            let data = sys::nftnl_rule_get_data(r, sys::NFTNL_RULE_USERDATA as u16, &mut len);
            copy_bytes(data, len)
        } else {
            None
        };
        Some(ParsedRule { table, chain, family, userdata })
    }
}

/// Parses an `NFT_MSG_NEWGEN` message into the ruleset generation ID.
pub(crate) fn parse_gen(msg: &[u8]) -> Option<u32> {
    let msg = AlignedMsg::new(msg)?;
    // SAFETY: plain allocation.
    let generation = Owned::new(unsafe { sys::nftnl_gen_alloc() }, sys::nftnl_gen_free);
    let g = generation.ptr.as_ptr();
    // SAFETY: as in `parse_table`, for a generation object.
    unsafe {
        if sys::nftnl_gen_nlmsg_parse(msg.header(), g) < 0
            || !sys::nftnl_gen_is_set(g, sys::NFTNL_GEN_ID as u16)
        {
            return None;
        }
        Some(sys::nftnl_gen_get_u32(g, sys::NFTNL_GEN_ID as u16))
    }
}

/// Reads a string attribute: `None` when unset or null; invalid UTF-8 is replaced.
///
/// # Safety
///
/// `get` must return null or a pointer to a NUL-terminated string that stays valid until this
/// function returns.
unsafe fn get_string(
    is_set: impl Fn(u16) -> bool,
    get: impl Fn(u16) -> *const c_char,
    attr: u32,
) -> Option<String> {
    if !is_set(attr as u16) {
        return None;
    }
    let ptr = get(attr as u16);
    if ptr.is_null() {
        return None;
    }
    // SAFETY: non-null, NUL-terminated and alive per this function's contract.
    Some(unsafe { CStr::from_ptr(ptr) }.to_string_lossy().into_owned())
}

/// Copies `len` bytes at `data`; `None` for a null pointer.
///
/// # Safety
///
/// `data` must be null or valid for reads of `len` bytes.
unsafe fn copy_bytes(data: *const c_void, len: u32) -> Option<Vec<u8>> {
    if data.is_null() {
        return None;
    }
    // SAFETY: non-null and valid for `len` bytes per this function's contract.
    Some(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len as usize) }.to_vec())
}

/// libnftnl's text form of a rule message (`[ meta load ... ]` lines), as
/// `nft --debug=netlink` prints it. For tests comparing our encoding with nft's.
#[cfg(test)]
pub(crate) fn rule_debug_text(msg: &[u8]) -> Option<String> {
    let msg = AlignedMsg::new(msg)?;
    // SAFETY: plain allocation.
    let rule = Owned::new(unsafe { sys::nftnl_rule_alloc() }, sys::nftnl_rule_free);
    let r = rule.ptr.as_ptr();
    let mut buf = vec![0u8; 16384];
    // SAFETY: as in `parse_table`; `nftnl_rule_snprintf` writes at most `buf.len()` bytes
    // including the NUL it always places.
    unsafe {
        if sys::nftnl_rule_nlmsg_parse(msg.header(), r) < 0 {
            return None;
        }
        let n = sys::nftnl_rule_snprintf(
            buf.as_mut_ptr().cast(),
            buf.len(),
            r,
            sys::NFTNL_OUTPUT_DEFAULT,
            0,
        );
        if n < 0 {
            return None;
        }
    }
    let end = buf.iter().position(|b| *b == 0)?;
    String::from_utf8(buf[..end].to_vec()).ok()
}
