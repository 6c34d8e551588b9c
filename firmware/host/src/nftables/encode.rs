//! IR → nf_tables batch: the table with its ownership comment, its chains and its rules, as the
//! same expression sequences nft generates for the equivalent nft syntax (checked against
//! `nft --debug=netlink` output in the tests below).
//!
//! | IR | expressions |
//! |---|---|
//! | `IifName(n)` / `OifName(n)` | `meta load iifname/oifname => reg 1`, `cmp eq reg 1` name NUL-padded to 16 bytes |
//! | `NfProto(f)` | `meta load nfproto => reg 1`, `cmp eq reg 1` 2 or 10 (1 byte) |
//! | `Ip4Saddr/Daddr(p)`, `Ip6Saddr/Daddr(p)` | in `inet` tables, unless the rule already established the family: `meta load nfproto`, `cmp eq`; then `payload load` of the address (network header + 12/16 or + 8/24): whole-byte prefixes load only the prefix bytes and `cmp eq`; others load the whole address, `bitwise` with the prefix mask, `cmp eq` |
//! | `L4Proto(p)` | `meta load l4proto => reg 1`, `cmp eq reg 1` protocol number (1 byte) |
//! | `Dport(p)` | `payload load 2b @ transport header + 2`, `cmp eq` port in network order |
//! | `CtState(s)` | `ct load state => reg 1`, `bitwise reg 1 = (reg 1 & mask) ^ 0`, `cmp neq reg 1 0` |
//! | `Mark(m)` | `meta load mark => reg 1`, `cmp eq reg 1 m` |
//! | `TcpSyn` | (`meta load l4proto`, `cmp eq 6` unless the rule already matched tcp), `payload load 1b @ transport header + 13`, `bitwise & 0x06`, `cmp eq 0x02` |
//! | `Accept` / `Drop` / `Return` / `Jump(c)` | `immediate reg 0 <verdict>` |
//! | `Masquerade{None}` | `masq` |
//! | `Masquerade{Some(a,b)}` | `immediate reg 1 a`, `immediate reg 2 b` (network order), `masq proto_min reg 1 proto_max reg 2 flags 0x2` |
//! | `Snat{addr, ports}` | `immediate reg 1 addr`, [`immediate reg 2 a`, `immediate reg 3 b`], `nat snat ip/ip6 addr_min reg 1 [proto_min reg 2 proto_max reg 3 flags 0x2]` |
//! | `Dnat{addr, port}` | `immediate reg 1 addr`, [`immediate reg 2 port`], `nat dnat ip/ip6 addr_min reg 1 [proto_min reg 2 flags 0x2]` |
//! | `SetMark(m)` | `immediate reg 1 m`, `meta set mark with reg 1` |
//! | `SetMarkHash{fields, modulus, offset}` | in `inet` tables, unless the rule already established the family: `meta load nfproto`, `cmp eq 2`; then per field `payload load 4b @ network header + 12/16` into consecutive 32-bit registers from reg 2 (reg 2, reg 13, reg 14, ...), `hash reg 1 = jhash(reg 2, 4 * fields, 0x0) % mod modulus offset offset`, `meta set mark with reg 1` |
//! | `ClampMssToPmtu` | `rt load tcpmss => reg 1`, `byteorder reg 1 = hton(reg 1, 2, 2)`, `exthdr write tcpopt reg 1 => 2b @ 2 + 2` |
//! | `SetMss(s)` | `immediate reg 1 s` (network order), `exthdr write tcpopt reg 1 => 2b @ 2 + 2` |
//!
//! Each rule's userdata is its comment `routerd:<digest>`, the table's `routerd owner=<id>`.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::net::IpAddr;
use std::ops::Range;

use ipnet::{Ipv4Net, Ipv6Net};
use nftnl::expr::{
    Bitwise, Cmp, CmpOp, Conntrack, Immediate, Masquerade, Meta, NetworkHeaderField, Payload,
    Register, TransportHeaderField, Verdict,
};
use nftnl::{Batch, Chain, ChainType, Hook, MsgType, NlMsg, Policy, ProtoFamily, Rule, Table};

use super::ir::{
    NftAction, NftChainType, NftFamily, NftHashField, NftHook, NftIpFamily, NftL4Proto, NftMatch,
    NftPolicy, NftRule, NftTableSpec,
};
use super::sys::{
    HtonReg1, Jhash, NatKind, NatStmt, NetworkLoad, RtTcpMss, TableMsg, TcpOptionWrite,
};
use super::udata;

/// `IFNAMSIZ`: interface names are compared as 16 NUL-padded bytes.
const IFNAMSIZ: usize = 16;
/// `NF_NAT_RANGE_PROTO_SPECIFIED`.
const NAT_PROTO_SPECIFIED: u32 = 2;
/// TCP option kind of the maximum segment size.
const TCPOPT_MAXSEG: u8 = 2;
/// Bytes of an IPv4 address.
const IPV4_ADDR_LEN: u32 = 4;

/// A finalized batch with a description of each message, for error reports.
pub(crate) struct EncodedBatch {
    /// The bytes to send, begin and end messages included.
    pub(crate) bytes: Vec<u8>,
    /// One description per message between begin and end, in order.
    pub(crate) labels: Vec<String>,
    /// Sequence numbers of the messages between begin and end, in order.
    pub(crate) seqs: Range<u32>,
}

impl EncodedBatch {
    /// What the message with sequence number `seq` did.
    pub(crate) fn label(&self, seq: u32) -> &str {
        if self.seqs.contains(&seq) {
            let i = (seq - self.seqs.start) as usize;
            self.labels.get(i).map_or("commit", String::as_str)
        } else {
            "commit"
        }
    }
}

/// The batch creating `spec`; fails with `EEXIST` if the table exists.
pub(crate) fn create(spec: &NftTableSpec) -> Result<EncodedBatch, String> {
    let mut b = Builder::new();
    add_table(&mut b, spec)?;
    Ok(b.finish())
}

/// The batch replacing the table with `spec` atomically: add (no-op if present), delete, add
/// with contents. The leading add makes it succeed even if the table vanished meanwhile.
pub(crate) fn replace(spec: &NftTableSpec) -> Result<EncodedBatch, String> {
    let mut b = Builder::new();
    let name = cstring(&spec.name, "table name")?;
    let family = proto_family(spec.family);
    let key = spec.key_name();
    b.add(&TableMsg::new(&name, family, None, false), MsgType::Add, format!("add table {key}"));
    b.add(&TableMsg::new(&name, family, None, false), MsgType::Del, format!("delete table {key}"));
    add_table(&mut b, spec)?;
    Ok(b.finish())
}

/// The batch deleting table `name` of `family`.
pub(crate) fn delete(family: NftFamily, name: &str) -> Result<EncodedBatch, String> {
    let mut b = Builder::new();
    let cname = cstring(name, "table name")?;
    let label = format!("delete table {}/{name}", family.as_str());
    b.add(&TableMsg::new(&cname, proto_family(family), None, false), MsgType::Del, label);
    Ok(b.finish())
}

/// Collects messages and their descriptions.
struct Builder {
    batch: Batch,
    labels: Vec<String>,
}

impl Builder {
    fn new() -> Self {
        Self { batch: Batch::new(), labels: Vec::new() }
    }

    fn add<T: NlMsg>(&mut self, msg: &T, kind: MsgType, label: String) {
        self.batch.add(msg, kind);
        self.labels.push(label);
    }

    fn finish(self) -> EncodedBatch {
        let finalized = self.batch.finalize();
        let bytes: Vec<u8> = finalized.iter().flatten().copied().collect();
        let all = finalized.sequence_numbers();
        // With ACKed begin/end messages (kernel >= 6.10) the range includes both.
        let first = if all.len() == self.labels.len() + 2 { all.start + 1 } else { all.start };
        let seqs = first..first + self.labels.len() as u32;
        EncodedBatch { bytes, labels: self.labels, seqs }
    }
}

/// Adds the table (with its comment), then every chain, then every rule: rules come last so a
/// `jump` may target a chain declared after it.
fn add_table(b: &mut Builder, spec: &NftTableSpec) -> Result<(), String> {
    let name = cstring(&spec.name, "table name")?;
    let family = proto_family(spec.family);
    let comment = udata::encode_comment(&spec.comment()).map_err(|e| format!("table {e}"))?;
    let key = spec.key_name();
    let table = TableMsg::new(&name, family, Some(&comment), true);
    b.add(&table, MsgType::Add, format!("add table {key}"));

    // `nftnl` chains and rules take only the table's name and family from this handle.
    let parent = Table::new(&name, family);
    let mut chains = Vec::with_capacity(spec.chains.len());
    for c in &spec.chains {
        let mut chain = Chain::new(cstring(&c.name, "chain name")?, &parent);
        if let Some(base) = &c.base {
            chain.set_hook(hook(base.hook), base.priority);
            chain.set_type(chain_type(base.chain_type));
            chain.set_policy(policy(base.policy));
        }
        b.add(&chain, MsgType::Add, format!("add chain {} in table {key}", c.name));
        chains.push(chain);
    }

    let chain_names: BTreeSet<&str> = spec.chains.iter().map(|c| c.name.as_str()).collect();
    for (c, chain) in spec.chains.iter().zip(&chains) {
        for (i, r) in c.rules.iter().enumerate() {
            let rule = encode_rule(chain, r, spec.family, &chain_names)
                .map_err(|e| format!("chain {} rule {}: {e}", c.name, i + 1))?;
            let label = format!("add rule {} in chain {} of table {key}", i + 1, c.name);
            b.add(&rule, MsgType::Add, format!("{label}: {}", r.to_nft(spec.family)));
        }
    }
    Ok(())
}

/// Builds one rule of `chain`, comment included.
pub(crate) fn encode_rule<'a>(
    chain: &'a Chain<'a>,
    spec: &NftRule,
    family: NftFamily,
    chains: &BTreeSet<&str>,
) -> Result<Rule<'a>, String> {
    let mut enc = RuleEncoder::new(Rule::new(chain), family);
    for m in &spec.matches {
        enc.matcher(m)?;
    }
    for a in &spec.actions {
        enc.action(a, chains)?;
    }
    let mut rule = enc.rule;
    let comment = CString::new(spec.comment()).map_err(|_| "comment contains NUL".to_string())?;
    rule.set_comment(comment).map_err(str::to_string)?;
    Ok(rule)
}

/// Encodes matches and actions into a rule, tracking which network family and transport
/// protocol the rule has already established, as nft's dependency logic does.
struct RuleEncoder<'a> {
    rule: Rule<'a>,
    family: NftFamily,
    nfproto: Option<NftIpFamily>,
    l4proto: Option<NftL4Proto>,
}

impl<'a> RuleEncoder<'a> {
    fn new(rule: Rule<'a>, family: NftFamily) -> Self {
        let nfproto = match family {
            NftFamily::Ip => Some(NftIpFamily::Ipv4),
            NftFamily::Ip6 => Some(NftIpFamily::Ipv6),
            NftFamily::Inet => None,
        };
        Self { rule, family, nfproto, l4proto: None }
    }

    fn matcher(&mut self, m: &NftMatch) -> Result<(), String> {
        match m {
            NftMatch::IifName(n) => self.ifname(Meta::IifName, n)?,
            NftMatch::OifName(n) => self.ifname(Meta::OifName, n)?,
            NftMatch::NfProto(f) => {
                self.meta_eq(Meta::NfProto, nfproto_number(*f));
                self.nfproto = Some(*f);
            }
            NftMatch::Ip4Saddr(p) => self.ip4_prefix(12, p)?,
            NftMatch::Ip4Daddr(p) => self.ip4_prefix(16, p)?,
            NftMatch::Ip6Saddr(p) => self.ip6_prefix(8, p)?,
            NftMatch::Ip6Daddr(p) => self.ip6_prefix(24, p)?,
            NftMatch::L4Proto(p) => {
                self.meta_eq(Meta::L4Proto, p.number());
                self.l4proto = Some(*p);
            }
            NftMatch::Dport(port) => {
                if !matches!(self.l4proto, Some(NftL4Proto::Tcp | NftL4Proto::Udp)) {
                    return Err("th dport needs meta l4proto tcp or udp earlier in the rule".into());
                }
                self.rule.add_expr(&transport(2, 2));
                self.rule.add_expr(&Cmp::new(CmpOp::Eq, port.to_be_bytes().as_slice()));
            }
            NftMatch::CtState(states) => {
                let mask = states.iter().fold(0u32, |m, s| m | s.bit());
                if mask == 0 {
                    return Err("ct state needs at least one state".into());
                }
                self.rule.add_expr(&Conntrack::State);
                self.rule.add_expr(&Bitwise::new(mask, 0u32));
                self.rule.add_expr(&Cmp::new(CmpOp::Neq, 0u32));
            }
            NftMatch::Mark(mark) => {
                self.rule.add_expr(&Meta::Mark { set: false });
                self.rule.add_expr(&Cmp::new(CmpOp::Eq, *mark));
            }
            NftMatch::TcpSyn => {
                self.require_l4(NftL4Proto::Tcp)?;
                self.rule.add_expr(&transport(13, 1));
                self.rule.add_expr(&Bitwise::new(0x06u8, 0u8));
                self.rule.add_expr(&Cmp::new(CmpOp::Eq, 0x02u8));
            }
        }
        Ok(())
    }

    fn action(&mut self, a: &NftAction, chains: &BTreeSet<&str>) -> Result<(), String> {
        match a {
            NftAction::Accept => self.rule.add_expr(&Verdict::Accept),
            NftAction::Drop => self.rule.add_expr(&Verdict::Drop),
            NftAction::Return => self.rule.add_expr(&Verdict::Return),
            NftAction::Jump(target) => {
                if !chains.contains(target.as_str()) {
                    return Err(format!("jump to chain {target}, which the table does not have"));
                }
                let chain = cstring(target, "chain name")?;
                self.rule.add_expr(&Verdict::Jump { chain });
            }
            NftAction::Masquerade { ports } => match ports {
                None => self.rule.add_expr(&Masquerade),
                Some((lo, hi)) => {
                    check_range(*lo, *hi)?;
                    self.immediate(lo.to_be_bytes(), Register::Reg1);
                    self.immediate(hi.to_be_bytes(), Register::Reg2);
                    self.rule.add_expr(&NatStmt {
                        kind: NatKind::Masquerade,
                        family: ProtoFamily::Unspec,
                        addr: None,
                        addr_max: None,
                        proto_min: Some(Register::Reg1),
                        proto_max: Some(Register::Reg2),
                        flags: NAT_PROTO_SPECIFIED,
                    });
                }
            },
            NftAction::Snat { address, last, ports } => {
                let family = self.nat_family(address)?;
                self.address(address);
                // A range's last address in reg 2, as nft loads it; the ports follow.
                let addr_max = match last {
                    Some(last) if last.is_ipv4() != address.is_ipv4() => {
                        return Err(format!("snat range {address}-{last} mixes families"));
                    }
                    Some(IpAddr::V4(a)) => {
                        self.immediate(a.octets(), Register::Reg2);
                        Some(Register::Reg2)
                    }
                    Some(IpAddr::V6(a)) => {
                        self.immediate(a.octets(), Register::Reg2);
                        Some(Register::Reg2)
                    }
                    None => None,
                };
                let (lo_reg, hi_reg) = match addr_max {
                    Some(_) => (Register::Reg3, Register::Reg4),
                    None => (Register::Reg2, Register::Reg3),
                };
                let (proto_min, proto_max) = match ports {
                    Some((lo, hi)) => {
                        check_range(*lo, *hi)?;
                        self.immediate(lo.to_be_bytes(), lo_reg);
                        self.immediate(hi.to_be_bytes(), hi_reg);
                        (Some(lo_reg), Some(hi_reg))
                    }
                    None => (None, None),
                };
                let flags = if proto_min.is_some() { NAT_PROTO_SPECIFIED } else { 0 };
                let stmt = NatStmt {
                    kind: NatKind::Snat,
                    family,
                    addr: Some(Register::Reg1),
                    addr_max,
                    proto_min,
                    proto_max,
                    flags,
                };
                self.rule.add_expr(&stmt);
            }
            NftAction::Dnat { address, port } => {
                let family = self.nat_family(address)?;
                self.address(address);
                let proto_min = port.map(|p| {
                    self.immediate(p.to_be_bytes(), Register::Reg2);
                    Register::Reg2
                });
                self.nat(NatKind::Dnat, family, proto_min, None);
            }
            NftAction::SetMark(mark) => {
                self.immediate(*mark, Register::Reg1);
                self.rule.add_expr(&Meta::Mark { set: true });
            }
            NftAction::SetMarkHash { fields, modulus, offset } => {
                self.jhash(fields, *modulus, *offset)?;
                self.rule.add_expr(&Meta::Mark { set: true });
            }
            NftAction::ClampMssToPmtu => {
                self.rule.add_expr(&RtTcpMss);
                self.rule.add_expr(&HtonReg1 { len: 2, size: 2 });
                self.rule.add_expr(&mss_write());
            }
            NftAction::SetMss(mss) => {
                self.immediate(mss.to_be_bytes(), Register::Reg1);
                self.rule.add_expr(&mss_write());
            }
        }
        Ok(())
    }

    /// `hash reg 1 = jhash(...)` over `fields`, loaded into registers as nft allocates them:
    /// the concatenation starts at reg 2 and takes one 32-bit register per field.
    fn jhash(&mut self, fields: &[NftHashField], modulus: u32, offset: u32) -> Result<(), String> {
        if fields.is_empty() {
            return Err("jhash needs at least one field".into());
        }
        if modulus == 0 {
            return Err("jhash modulus must be at least 1".into());
        }
        if offset.checked_add(modulus - 1).is_none() {
            return Err(format!("jhash offset {offset} + modulus {modulus} overflows the mark"));
        }
        self.require_nfproto(NftIpFamily::Ipv4)?;
        for (i, field) in fields.iter().enumerate() {
            let dreg = concat_register(i).ok_or_else(|| {
                format!("jhash over {} fields does not fit the registers", fields.len())
            })?;
            let offset = match field {
                NftHashField::Ip4Saddr => 12,
                NftHashField::Ip4Daddr => 16,
            };
            self.rule.add_expr(&NetworkLoad { offset, len: IPV4_ADDR_LEN, dreg });
        }
        let len = IPV4_ADDR_LEN * fields.len() as u32;
        let sreg = concat_register(0).expect("invariant: the first register exists");
        self.rule.add_expr(&Jhash { sreg, len, modulus, seed: 0, offset });
        Ok(())
    }

    fn ifname(&mut self, meta: Meta, name: &str) -> Result<(), String> {
        let bytes = name.as_bytes();
        if bytes.is_empty() || bytes.len() >= IFNAMSIZ || bytes.contains(&0) {
            return Err(format!("interface name {name:?} is not 1..=15 bytes without NUL"));
        }
        let mut padded = [0u8; IFNAMSIZ];
        padded[..bytes.len()].copy_from_slice(bytes);
        self.rule.add_expr(&meta);
        self.rule.add_expr(&Cmp::new(CmpOp::Eq, padded.as_slice()));
        Ok(())
    }

    fn meta_eq(&mut self, meta: Meta, value: u8) {
        self.rule.add_expr(&meta);
        self.rule.add_expr(&Cmp::new(CmpOp::Eq, value));
    }

    /// Makes sure the rule has matched network family `f`, adding nft's implicit dependency.
    fn require_nfproto(&mut self, f: NftIpFamily) -> Result<(), String> {
        match self.nfproto {
            Some(have) if have == f => Ok(()),
            Some(_) => Err(format!("conflicting protocols: {} match in this rule", ip_name(f))),
            None => {
                self.meta_eq(Meta::NfProto, nfproto_number(f));
                self.nfproto = Some(f);
                Ok(())
            }
        }
    }

    /// Makes sure the rule has matched transport protocol `p`, adding nft's implicit
    /// dependency.
    fn require_l4(&mut self, p: NftL4Proto) -> Result<(), String> {
        match self.l4proto {
            Some(have) if have == p => Ok(()),
            Some(have) => {
                Err(format!("conflicting protocols: {} vs {}", have.as_str(), p.as_str()))
            }
            None => {
                self.meta_eq(Meta::L4Proto, p.number());
                self.l4proto = Some(p);
                Ok(())
            }
        }
    }

    fn ip4_prefix(&mut self, offset: u32, p: &Ipv4Net) -> Result<(), String> {
        self.require_nfproto(NftIpFamily::Ipv4)?;
        let n = p.trunc();
        self.prefix(offset, &n.network().octets(), &n.netmask().octets(), n.prefix_len());
        Ok(())
    }

    fn ip6_prefix(&mut self, offset: u32, p: &Ipv6Net) -> Result<(), String> {
        self.require_nfproto(NftIpFamily::Ipv6)?;
        let n = p.trunc();
        self.prefix(offset, &n.network().octets(), &n.netmask().octets(), n.prefix_len());
        Ok(())
    }

    /// nft's prefix match: full address `cmp`; whole-byte prefix `cmp` on the leading bytes;
    /// otherwise full address, `bitwise` mask, `cmp`.
    fn prefix(&mut self, offset: u32, addr: &[u8], mask: &[u8], len: u8) {
        let full = addr.len() * 8;
        let len = usize::from(len);
        if len == full || (len > 0 && len % 8 == 0) {
            let bytes = &addr[..len / 8];
            self.rule.add_expr(&network(offset, bytes.len() as u32));
            self.rule.add_expr(&Cmp::new(CmpOp::Eq, bytes));
        } else {
            self.rule.add_expr(&network(offset, addr.len() as u32));
            self.rule.add_expr(&Bitwise::new(mask, vec![0u8; mask.len()].as_slice()));
            self.rule.add_expr(&Cmp::new(CmpOp::Eq, addr));
        }
    }

    fn nat_family(&self, address: &IpAddr) -> Result<ProtoFamily, String> {
        let (needed, proto) = match address {
            IpAddr::V4(_) => (NftIpFamily::Ipv4, ProtoFamily::Ipv4),
            IpAddr::V6(_) => (NftIpFamily::Ipv6, ProtoFamily::Ipv6),
        };
        match self.family {
            NftFamily::Inet => Ok(proto),
            _ if self.nfproto == Some(needed) => Ok(proto),
            _ => Err(format!("NAT to {address} in a {} table", self.family.as_str())),
        }
    }

    fn address(&mut self, address: &IpAddr) {
        match address {
            IpAddr::V4(a) => self.immediate(a.octets(), Register::Reg1),
            IpAddr::V6(a) => self.immediate(a.octets(), Register::Reg1),
        }
    }

    fn nat(
        &mut self,
        kind: NatKind,
        family: ProtoFamily,
        proto_min: Option<Register>,
        proto_max: Option<Register>,
    ) {
        let flags = if proto_min.is_some() { NAT_PROTO_SPECIFIED } else { 0 };
        let stmt = NatStmt {
            kind,
            family,
            addr: Some(Register::Reg1),
            addr_max: None,
            proto_min,
            proto_max,
            flags,
        };
        self.rule.add_expr(&stmt);
    }

    fn immediate<T>(&mut self, data: T, register: Register) {
        self.rule.add_expr(&Immediate::new(data, register));
    }
}

/// `payload load LEN @ network header + OFFSET => reg 1` (nftnl's `Raw` fields are bytes,
/// despite their names).
fn network(offset: u32, len: u32) -> Payload {
    Payload::Network(NetworkHeaderField::Raw { offset_bits: offset, length_bits: len })
}

/// `payload load LEN @ transport header + OFFSET => reg 1`.
fn transport(offset: u32, len: u32) -> Payload {
    Payload::Transport(TransportHeaderField::Raw { offset_bits: offset, length_bits: len })
}

/// The register of the `index`th 4-byte field of a concatenation starting at reg 2, in the
/// numbering nft writes (its `netlink_put_register`): a 16-byte-aligned position as the
/// 128-bit `NFT_REG_1..=4`, any other as `NFT_REG32_00..=15`. `None` past the last register.
fn concat_register(index: usize) -> Option<u32> {
    // 32-bit slot of reg 2 (`NFT_REG32_04`); slot 15 is the last.
    let slot = u32::try_from(index).ok()?.checked_add(4).filter(|s| *s <= 15)?;
    Some(if slot % 4 == 0 {
        libc::NFT_REG_1 as u32 + slot / 4
    } else {
        libc::NFT_REG32_00 as u32 + slot
    })
}

/// `exthdr write tcpopt reg 1 => 2b @ 2 + 2`: the MSS option's value.
fn mss_write() -> TcpOptionWrite {
    TcpOptionWrite { kind: TCPOPT_MAXSEG, offset: 2, len: 2 }
}

fn check_range(lo: u16, hi: u16) -> Result<(), String> {
    if lo > hi {
        return Err(format!("port range {lo}-{hi} is reversed"));
    }
    Ok(())
}

fn nfproto_number(f: NftIpFamily) -> u8 {
    match f {
        NftIpFamily::Ipv4 => libc::NFPROTO_IPV4 as u8,
        NftIpFamily::Ipv6 => libc::NFPROTO_IPV6 as u8,
    }
}

fn ip_name(f: NftIpFamily) -> &'static str {
    match f {
        NftIpFamily::Ipv4 => "ip",
        NftIpFamily::Ipv6 => "ip6",
    }
}

fn cstring(s: &str, what: &str) -> Result<CString, String> {
    CString::new(s).map_err(|_| format!("{what} {s:?} contains NUL"))
}

/// The nftnl protocol family of a table family.
pub(crate) fn proto_family(f: NftFamily) -> ProtoFamily {
    match f {
        NftFamily::Ip => ProtoFamily::Ipv4,
        NftFamily::Ip6 => ProtoFamily::Ipv6,
        NftFamily::Inet => ProtoFamily::Inet,
    }
}

fn hook(h: NftHook) -> Hook {
    match h {
        NftHook::Prerouting => Hook::PreRouting,
        NftHook::Input => Hook::In,
        NftHook::Forward => Hook::Forward,
        NftHook::Output => Hook::Out,
        NftHook::Postrouting => Hook::PostRouting,
    }
}

fn chain_type(t: NftChainType) -> ChainType {
    match t {
        NftChainType::Filter => ChainType::Filter,
        NftChainType::Nat => ChainType::Nat,
        NftChainType::Route => ChainType::Route,
    }
}

fn policy(p: NftPolicy) -> Policy {
    match p {
        NftPolicy::Accept => Policy::Accept,
        NftPolicy::Drop => Policy::Drop,
    }
}

#[cfg(test)]
#[path = "encode_tests.rs"]
mod tests;
