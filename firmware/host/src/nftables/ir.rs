//! A small typed IR for the nftables tables routerd owns, and the fingerprint the kernel gives
//! back.
//!
//! The engine renders resources into [`NftTableSpec`]; the nftnl backend encodes it into one
//! atomic batch. Reading rules back from the kernel yields expressions, not our IR, so drift is
//! judged on a fingerprint: every table carries the comment `routerd owner=<resource id>` and
//! every rule the comment `routerd:<digest>` where the digest covers the rule's IR
//! ([`NftRule::digest`]). A rule deleted, added or replaced by hand changes the fingerprint.
//! This module does not touch the host.

use std::fmt;
use std::net::IpAddr;

use ipnet::{Ipv4Net, Ipv6Net};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// nftables address family of a table (`nft add table <family> <name>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NftFamily {
    /// `ip` (NFPROTO_IPV4).
    Ip,
    /// `ip6` (NFPROTO_IPV6).
    Ip6,
    /// `inet` (NFPROTO_INET), both.
    Inet,
}

impl NftFamily {
    /// The nft keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ip => "ip",
            Self::Ip6 => "ip6",
            Self::Inet => "inet",
        }
    }

    /// Parses the nft keyword.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "ip" => Some(Self::Ip),
            "ip6" => Some(Self::Ip6),
            "inet" => Some(Self::Inet),
            _ => None,
        }
    }
}

/// A whole table as routerd wants it. Replaced atomically: one batch deletes the old table (if
/// any) and adds this one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NftTableSpec {
    /// Address family.
    pub family: NftFamily,
    /// Table name; routerd's tables start with `routerd_`.
    pub name: String,
    /// Resource ID of the owner, written into the table comment as `routerd owner=<id>`.
    pub owner: String,
    /// Chains in order.
    pub chains: Vec<NftChainSpec>,
}

/// A chain, base (hooked) or regular (jump target).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NftChainSpec {
    /// Chain name.
    pub name: String,
    /// Hook attachment; `None` for a regular chain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<NftBaseChain>,
    /// Rules in order.
    pub rules: Vec<NftRule>,
}

/// Hook attachment of a base chain (`type filter hook forward priority 0; policy drop;`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NftBaseChain {
    /// Chain type.
    pub chain_type: NftChainType,
    /// Netfilter hook.
    pub hook: NftHook,
    /// Priority; lower runs first (`srcnat` = 100, `dstnat` = -100, `mangle` = -150).
    pub priority: i32,
    /// Verdict when no rule decides.
    pub policy: NftPolicy,
}

/// `type` of a base chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NftChainType {
    /// `filter`.
    Filter,
    /// `nat`.
    Nat,
    /// `route`.
    Route,
}

/// Netfilter hook of a base chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NftHook {
    /// `prerouting`.
    Prerouting,
    /// `input`.
    Input,
    /// `forward`.
    Forward,
    /// `output`.
    Output,
    /// `postrouting`.
    Postrouting,
}

/// Base chain policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NftPolicy {
    /// `accept`.
    Accept,
    /// `drop`.
    Drop,
}

/// One rule: all matches AND-ed, then the actions in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NftRule {
    /// Conditions, AND-ed.
    pub matches: Vec<NftMatch>,
    /// Statements, in order; a verdict, if any, is last.
    pub actions: Vec<NftAction>,
}

/// A rule condition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum NftMatch {
    /// `iifname "NAME"`.
    IifName(String),
    /// `oifname "NAME"`.
    OifName(String),
    /// `meta nfproto ipv4|ipv6` (only meaningful in `inet` tables).
    NfProto(NftIpFamily),
    /// `ip saddr PREFIX`.
    Ip4Saddr(Ipv4Net),
    /// `ip daddr PREFIX`.
    Ip4Daddr(Ipv4Net),
    /// `ip6 saddr PREFIX`.
    Ip6Saddr(Ipv6Net),
    /// `ip6 daddr PREFIX`.
    Ip6Daddr(Ipv6Net),
    /// `meta l4proto tcp|udp|icmp|ipv6-icmp`.
    L4Proto(NftL4Proto),
    /// `th dport PORT`: transport destination port; requires an [`NftMatch::L4Proto`] of tcp or
    /// udp earlier in the same rule.
    Dport(u16),
    /// `ct state { ... }`: any of these states.
    CtState(Vec<NftCtState>),
    /// `meta mark MARK`.
    Mark(u32),
    /// `tcp flags & (syn|rst) == syn`: TCP SYN segments; requires `L4Proto(Tcp)`.
    TcpSyn,
}

/// IP family of a `meta nfproto` match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NftIpFamily {
    /// `ipv4`.
    Ipv4,
    /// `ipv6`.
    Ipv6,
}

/// Layer-4 protocol of a `meta l4proto` match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NftL4Proto {
    /// 6.
    Tcp,
    /// 17.
    Udp,
    /// 1.
    Icmp,
    /// 58.
    Icmpv6,
}

impl NftL4Proto {
    /// IANA protocol number.
    pub fn number(self) -> u8 {
        match self {
            Self::Tcp => 6,
            Self::Udp => 17,
            Self::Icmp => 1,
            Self::Icmpv6 => 58,
        }
    }
}

/// Conntrack state (`ct state`), bit values of `NF_CT_STATE_*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NftCtState {
    /// `invalid` (bit 0).
    Invalid,
    /// `established` (bit 1).
    Established,
    /// `related` (bit 2).
    Related,
    /// `new` (bit 3).
    New,
}

impl NftCtState {
    /// Every state, in bit order.
    pub const ALL: [NftCtState; 4] = [Self::Invalid, Self::Established, Self::Related, Self::New];

    /// The `NF_CT_STATE_*_BIT` value.
    pub fn bit(self) -> u32 {
        match self {
            Self::Invalid => 1,
            Self::Established => 1 << 1,
            Self::Related => 1 << 2,
            Self::New => 1 << 3,
        }
    }
}

/// A rule statement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum NftAction {
    /// `accept`.
    Accept,
    /// `drop`.
    Drop,
    /// `return`.
    Return,
    /// `jump CHAIN`.
    Jump(String),
    /// `masquerade`, optionally `to :START-END` for the source port.
    Masquerade {
        /// Source port range, inclusive.
        #[serde(skip_serializing_if = "Option::is_none")]
        ports: Option<(u16, u16)>,
    },
    /// `snat ip to ADDR[-LAST][:START-END]` (family from the address).
    Snat {
        /// Translated source address: the first of the range with `last`.
        address: IpAddr,
        /// The range's last address (`NFTA_NAT_REG_ADDR_MAX`): the kernel picks each
        /// connection's source among `address..=last`. Absent: `address` only (and the
        /// serialized form, which the rule's digest hashes, is as before).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last: Option<IpAddr>,
        /// Source port range, inclusive.
        #[serde(skip_serializing_if = "Option::is_none")]
        ports: Option<(u16, u16)>,
    },
    /// `dnat ip to ADDR[:PORT]` (family from the address).
    Dnat {
        /// Translated destination address.
        address: IpAddr,
        /// Translated destination port.
        #[serde(skip_serializing_if = "Option::is_none")]
        port: Option<u16>,
    },
    /// `meta mark set MARK`.
    SetMark(u32),
    /// `meta mark set jhash FIELDS mod MODULUS seed 0x0 offset OFFSET`: the mark becomes
    /// `OFFSET + jhash(FIELDS, seed 0) % MODULUS`, so every packet with the same field values
    /// gets the same mark. The seed is fixed (nft would pick a random one) so that replacing
    /// the table does not move flows. nft lists the offset in decimal, and not at all when 0.
    SetMarkHash {
        /// Header fields hashed, concatenated in this order; at least one, at most 12.
        fields: Vec<NftHashField>,
        /// Number of buckets, at least 1.
        modulus: u32,
        /// First mark; `offset + modulus - 1` must fit u32.
        offset: u32,
    },
    /// `tcp option maxseg size set rt mtu`: clamp MSS to the route's path MTU.
    ClampMssToPmtu,
    /// `tcp option maxseg size set SIZE`.
    SetMss(u16),
}

/// A packet header field hashed by [`NftAction::SetMarkHash`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum NftHashField {
    /// `ip saddr`: IPv4 source address.
    Ip4Saddr,
    /// `ip daddr`: IPv4 destination address.
    Ip4Daddr,
}

/// What the kernel gives back for a table: enough to detect drift, not enough to rebuild it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NftTableState {
    /// Address family.
    pub family: NftFamily,
    /// Table name.
    pub name: String,
    /// Table comment (`NFTNL_UDATA_TABLE_COMMENT`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Chains in kernel order.
    pub chains: Vec<NftChainState>,
}

/// A chain as observed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NftChainState {
    /// Chain name.
    pub name: String,
    /// Hook attachment; `None` for a regular chain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<NftBaseChain>,
    /// Rule comments in order (`NFTNL_UDATA_RULE_COMMENT`); `None` for a rule without one.
    pub rules: Vec<Option<String>>,
}

impl NftTableSpec {
    /// Artifact name: `family/name`.
    pub fn key_name(&self) -> String {
        format!("{}/{}", self.family.as_str(), self.name)
    }

    /// The table comment: `routerd owner=<resource id>`.
    pub fn comment(&self) -> String {
        format!("routerd owner={}", self.owner)
    }

    /// The state the kernel should report once this spec is applied.
    pub fn expected_state(&self) -> NftTableState {
        NftTableState {
            family: self.family,
            name: self.name.clone(),
            comment: Some(self.comment()),
            chains: self
                .chains
                .iter()
                .map(|c| NftChainState {
                    name: c.name.clone(),
                    base: c.base,
                    rules: c.rules.iter().map(|r| Some(r.comment())).collect(),
                })
                .collect(),
        }
    }
}

impl NftTableState {
    /// Artifact name: `family/name`.
    pub fn key_name(&self) -> String {
        format!("{}/{}", self.family.as_str(), self.name)
    }
}

impl NftRule {
    /// Hex digest (16 chars) of the rule's IR; stable across builds because it hashes the
    /// serde JSON form, whose field names are part of this format.
    pub fn digest(&self) -> String {
        let json = serde_json::to_vec(self).expect("invariant: NftRule always serialises");
        let hash = Sha256::digest(&json);
        hash.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// The rule comment: `routerd:<digest>`.
    pub fn comment(&self) -> String {
        format!("routerd:{}", self.digest())
    }
}

impl fmt::Display for NftTableSpec {
    /// nft syntax, exactly as `nft list table` (nftables 1.0.6) prints it, without handles.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "table {} {} {{", self.family.as_str(), self.name)?;
        writeln!(f, "\tcomment \"{}\"", self.comment())?;
        for (i, chain) in self.chains.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            writeln!(f, "\tchain {} {{", chain.name)?;
            if let Some(b) = &chain.base {
                writeln!(
                    f,
                    "\t\ttype {} hook {} priority {}; policy {};",
                    b.chain_type.as_str(),
                    b.hook.as_str(),
                    b.priority_display(),
                    b.policy.as_str()
                )?;
            }
            for rule in &chain.rules {
                writeln!(f, "\t\t{}", rule.to_nft(self.family))?;
            }
            writeln!(f, "\t}}")?;
        }
        write!(f, "}}")
    }
}

impl NftBaseChain {
    /// The priority as nft prints it: a standard name (`filter`, `srcnat`, `mangle - 5`) when one
    /// applies to this hook within +-10, the number otherwise.
    pub fn priority_display(&self) -> String {
        const STANDARD: [(&str, i32); 6] = [
            ("raw", -300),
            ("mangle", -150),
            ("dstnat", -100),
            ("filter", 0),
            ("security", 50),
            ("srcnat", 100),
        ];
        for (name, value) in STANDARD {
            let applies = match name {
                "dstnat" => self.hook == NftHook::Prerouting,
                "srcnat" => self.hook == NftHook::Postrouting,
                _ => true,
            };
            let diff = i64::from(self.priority) - i64::from(value);
            if applies && (-10..=10).contains(&diff) {
                return match diff {
                    0 => name.to_string(),
                    d if d > 0 => format!("{name} + {d}"),
                    d => format!("{name} - {}", -d),
                };
            }
        }
        self.priority.to_string()
    }
}

impl NftRule {
    /// The rule in nft syntax as `nft list table` prints it inside a table of `family`.
    ///
    /// nft hides the protocol match a later header match depends on (`meta l4proto tcp th dport
    /// 80` lists as `tcp dport 80`, `meta nfproto ipv4 ip saddr ..` as `ip saddr ..`, and
    /// `meta nfproto ipv4 meta mark set jhash ip saddr ..` as `meta mark set jhash ip saddr ..`),
    /// and omits the NAT family keyword outside `inet` tables; so does this.
    pub fn to_nft(&self, family: NftFamily) -> String {
        let hidden = self.hidden_dependencies();
        let mut l4 = None;
        let mut parts = Vec::with_capacity(self.matches.len() + self.actions.len() + 1);
        for (m, hide) in self.matches.iter().zip(hidden) {
            match m {
                NftMatch::L4Proto(p) => l4 = Some(*p),
                NftMatch::TcpSyn => l4 = Some(NftL4Proto::Tcp),
                _ => {}
            }
            if hide {
                continue;
            }
            parts.push(match (m, l4) {
                (NftMatch::Dport(p), Some(proto @ (NftL4Proto::Tcp | NftL4Proto::Udp))) => {
                    format!("{} dport {p}", proto.as_str())
                }
                _ => m.to_string(),
            });
        }
        parts.extend(self.actions.iter().map(|a| a.to_nft(family)));
        parts.push(format!("comment \"{}\"", self.comment()));
        parts.join(" ")
    }

    /// Which matches nft folds into a later header match or hashed header field (see
    /// [`NftRule::to_nft`]): the latest pending protocol match of the header's layer, when it
    /// names the header's protocol.
    fn hidden_dependencies(&self) -> Vec<bool> {
        use NftIpFamily::{Ipv4, Ipv6};
        use NftL4Proto::{Tcp, Udp};
        let mut hidden = vec![false; self.matches.len()];
        let mut nfproto: Option<(usize, NftIpFamily)> = None;
        let mut l4proto: Option<(usize, NftL4Proto)> = None;
        for (i, m) in self.matches.iter().enumerate() {
            let consumed = match m {
                NftMatch::NfProto(f) => {
                    nfproto = Some((i, *f));
                    None
                }
                NftMatch::L4Proto(p) => {
                    l4proto = Some((i, *p));
                    None
                }
                NftMatch::Ip4Saddr(_) | NftMatch::Ip4Daddr(_) => {
                    nfproto.take().filter(|(_, f)| *f == Ipv4).map(|(j, _)| j)
                }
                NftMatch::Ip6Saddr(_) | NftMatch::Ip6Daddr(_) => {
                    nfproto.take().filter(|(_, f)| *f == Ipv6).map(|(j, _)| j)
                }
                NftMatch::Dport(_) => {
                    l4proto.take().filter(|(_, p)| matches!(p, Tcp | Udp)).map(|(j, _)| j)
                }
                NftMatch::TcpSyn => l4proto.take().filter(|(_, p)| *p == Tcp).map(|(j, _)| j),
                _ => None,
            };
            if let Some(j) = consumed {
                hidden[j] = true;
            }
        }
        // Header fields a statement reads consume the pending family match too.
        let hashes_ip4 = self
            .actions
            .iter()
            .any(|a| matches!(a, NftAction::SetMarkHash { fields, .. } if !fields.is_empty()));
        if let Some((j, Ipv4)) = nfproto.filter(|_| hashes_ip4) {
            hidden[j] = true;
        }
        hidden
    }
}

impl fmt::Display for NftRule {
    /// nft syntax as listed inside an `inet` table; see [`NftRule::to_nft`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_nft(NftFamily::Inet))
    }
}

impl fmt::Display for NftMatch {
    /// nft syntax of this match on its own (nftables 1.0.6 listing style).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::IifName(n) => write!(f, "iifname \"{n}\""),
            Self::OifName(n) => write!(f, "oifname \"{n}\""),
            Self::NfProto(NftIpFamily::Ipv4) => f.write_str("meta nfproto ipv4"),
            Self::NfProto(NftIpFamily::Ipv6) => f.write_str("meta nfproto ipv6"),
            Self::Ip4Saddr(n) => write!(f, "ip saddr {}", v4_prefix(n)),
            Self::Ip4Daddr(n) => write!(f, "ip daddr {}", v4_prefix(n)),
            Self::Ip6Saddr(n) => write!(f, "ip6 saddr {}", v6_prefix(n)),
            Self::Ip6Daddr(n) => write!(f, "ip6 daddr {}", v6_prefix(n)),
            Self::L4Proto(p) => write!(f, "meta l4proto {}", p.as_str()),
            Self::Dport(p) => write!(f, "th dport {p}"),
            Self::CtState(states) => {
                // nft lists a state bitmask in bit order, comma separated.
                let mask = states.iter().fold(0, |m, s| m | s.bit());
                let names: Vec<&str> = NftCtState::ALL
                    .iter()
                    .filter(|s| mask & s.bit() != 0)
                    .map(|s| s.as_str())
                    .collect();
                write!(f, "ct state {}", names.join(","))
            }
            Self::Mark(m) => write!(f, "meta mark 0x{m:08x}"),
            Self::TcpSyn => f.write_str("tcp flags syn / syn,rst"),
        }
    }
}

impl NftAction {
    /// nft syntax of this statement inside a table of `family`: NAT statements name their
    /// address family (`snat ip to`) only in `inet` tables.
    pub fn to_nft(&self, family: NftFamily) -> String {
        let nat = |verb: &str, address: &IpAddr| match family {
            NftFamily::Inet => format!("{verb} {} to", ip_keyword(address)),
            NftFamily::Ip | NftFamily::Ip6 => format!("{verb} to"),
        };
        match self {
            Self::Snat { address, last, ports } => {
                let to = match last {
                    Some(last) => format!("{}-{}", nat_addr(address), nat_addr(last)),
                    None => nat_addr(address),
                };
                match ports {
                    Some((a, b)) => format!("{} {to}:{a}-{b}", nat("snat", address)),
                    None if last.is_none() => format!("{} {address}", nat("snat", address)),
                    None => format!("{} {to}", nat("snat", address)),
                }
            }
            Self::Dnat { address, port } => match port {
                Some(p) => format!("{} {}:{p}", nat("dnat", address), nat_addr(address)),
                None => format!("{} {address}", nat("dnat", address)),
            },
            other => other.to_string(),
        }
    }
}

impl fmt::Display for NftAction {
    /// nft syntax as listed inside an `inet` table; see [`NftAction::to_nft`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Accept => f.write_str("accept"),
            Self::Drop => f.write_str("drop"),
            Self::Return => f.write_str("return"),
            Self::Jump(c) => write!(f, "jump {c}"),
            Self::Masquerade { ports: None } => f.write_str("masquerade"),
            Self::Masquerade { ports: Some((a, b)) } => write!(f, "masquerade to :{a}-{b}"),
            Self::Snat { .. } | Self::Dnat { .. } => f.write_str(&self.to_nft(NftFamily::Inet)),
            Self::SetMark(m) => write!(f, "meta mark set 0x{m:08x}"),
            Self::SetMarkHash { fields, modulus, offset } => {
                let fields: Vec<&str> = fields.iter().map(|h| h.as_str()).collect();
                write!(f, "meta mark set jhash {} mod {modulus} seed 0x0", fields.join(" . "))?;
                if *offset != 0 {
                    write!(f, " offset {offset}")?;
                }
                Ok(())
            }
            Self::ClampMssToPmtu => f.write_str("tcp option maxseg size set rt mtu"),
            Self::SetMss(s) => write!(f, "tcp option maxseg size set {s}"),
        }
    }
}

fn ip_keyword(a: &IpAddr) -> &'static str {
    if a.is_ipv4() { "ip" } else { "ip6" }
}

/// An address followed by `:port`: IPv6 in brackets.
fn nat_addr(a: &IpAddr) -> String {
    match a {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

/// A prefix as nft lists it: host bits cleared, a full-length prefix as a bare address.
fn v4_prefix(n: &Ipv4Net) -> String {
    let n = n.trunc();
    if n.prefix_len() == 32 { n.addr().to_string() } else { n.to_string() }
}

/// See [`v4_prefix`].
fn v6_prefix(n: &Ipv6Net) -> String {
    let n = n.trunc();
    if n.prefix_len() == 128 { n.addr().to_string() } else { n.to_string() }
}

impl NftChainType {
    /// The nft keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Filter => "filter",
            Self::Nat => "nat",
            Self::Route => "route",
        }
    }
}

impl NftHook {
    /// The nft keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Prerouting => "prerouting",
            Self::Input => "input",
            Self::Forward => "forward",
            Self::Output => "output",
            Self::Postrouting => "postrouting",
        }
    }
}

impl NftPolicy {
    /// The nft keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Accept => "accept",
            Self::Drop => "drop",
        }
    }
}

impl NftL4Proto {
    /// The nft keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tcp => "tcp",
            Self::Udp => "udp",
            Self::Icmp => "icmp",
            Self::Icmpv6 => "ipv6-icmp",
        }
    }
}

impl NftHashField {
    /// The nft expression.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ip4Saddr => "ip saddr",
            Self::Ip4Daddr => "ip daddr",
        }
    }
}

impl NftCtState {
    /// The nft keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Invalid => "invalid",
            Self::Established => "established",
            Self::Related => "related",
            Self::New => "new",
        }
    }
}
