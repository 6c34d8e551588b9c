//! The typed form of the option lines routerd writes into dnsmasq's configuration file.
//!
//! The engine renders resources into [`DnsmasqOption`] values; each is written as one line in
//! the configuration-file form of dnsmasq(8) (a long option without the leading `--`), which is
//! what a [`DnsmasqSectionSpec`](crate::artifact::DnsmasqSectionSpec) stores and compares:
//! the section's `lines` are the [`Display`](fmt::Display) of its options. Only the options
//! and the forms routerd writes are here; lines read back from the file stay text.
//!
//! dnsmasq's file reader gives `,` (a value separator) and `"` (quoting) a meaning (dnsmasq(8),
//! "CONFIG FILE"). Names routerd takes from the config (tags, interface names) are written
//! verbatim unless they contain one of these; then they are quoted, so that `set:lan,guest` does
//! not become the tag `lan` and a start address `guest`. Quoting cannot take away the meaning
//! of a leading `!` (or `#`) in a `tag:` match, "not" (dnsmasq(8), "Tags"); a tag is a resource
//! name, which the config may spell so.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

/// dnsmasq's shortest lease (dnsmasq(8), `--dhcp-range`: "The minimum lease time is two
/// minutes"): a shorter lease time is written as this.
pub const MIN_LEASE: Duration = Duration::from_secs(120);

/// One option line of routerd's dnsmasq configuration, in the forms routerd writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DnsmasqOption {
    /// `interface=<interface name>` (dnsmasq(8), `-i, --interface`): listen on this link (with
    /// `--bind-dynamic`, which the unit passes, as the link comes and goes).
    Interface(String),
    /// `port=<port>` (dnsmasq(8), `-p, --port`): the DNS port; 0 "completely disables DNS
    /// function, leaving only DHCP".
    Port(u16),
    /// `no-resolv` (dnsmasq(8), `-R, --no-resolv`): no upstream servers from
    /// `/etc/resolv.conf`, only from `server=` lines.
    NoResolv,
    /// `server=[/<domain>/]<server>` (dnsmasq(8), `-S, --server`): an upstream server, for
    /// every name or, with a domain, only for that domain and its subdomains. An IPv6 address
    /// is written bare (`server=/lan/2001:db8::1`; dnsmasq refuses brackets here).
    Server {
        /// The domain the server answers for, without leading or trailing dots; `None` for
        /// every name. An empty domain (`server=//addr`) means unqualified names.
        domain: Option<String>,
        /// The upstream server (port 53).
        address: IpAddr,
    },
    /// `server=/<domain>/<server>#<port>` (dnsmasq(8), `-S, --server`): the domain's server
    /// on a port of its own (a zone of routerd's BIND on loopback port 5300).
    DomainServer {
        /// The domain, without leading or trailing dots.
        domain: String,
        /// The server's address and port.
        address: std::net::SocketAddr,
    },
    /// `cache-size=<cachesize>` (dnsmasq(8), `-c, --cache-size`): cached names; 0 disables the
    /// cache.
    CacheSize(u32),
    /// `enable-ra` (dnsmasq(8), `--enable-ra`): send router advertisements on the links of the
    /// IPv6 ranges.
    EnableRa,
    /// `dhcp-range=set:<tag>,<start-addr>,<end-addr>[,<lease time>]` (dnsmasq(8),
    /// `-F, --dhcp-range`, IPv4): a DHCPv4 pool, tagged for its `dhcp-option` lines.
    DhcpRange {
        /// The tag the range sets (`set:`).
        tag: String,
        /// First address of the pool.
        start: Ipv4Addr,
        /// Last address of the pool.
        end: Ipv4Addr,
        /// Lease time, written in seconds and at least [`MIN_LEASE`]; `None` for dnsmasq's
        /// default (one hour).
        lease: Option<Duration>,
    },
    /// `dhcp-range=set:<tag>,<start-IPv6addr>,constructor:<interface>,<mode>[,<lease time>]`
    /// (dnsmasq(8), `-F, --dhcp-range`, IPv6): a range built from the global addresses of the
    /// interface, following them as they change (`::` with `ra-only` or `ra-stateless`: router
    /// advertisements, and for `ra-stateless` stateless DHCPv6, for whatever prefix the link
    /// holds). A lease of at most 128 seconds is written after the prefix length,
    /// `<mode>,64,<lease time>`: alone, dnsmasq would read it as the prefix length.
    DhcpRange6 {
        /// The tag the range sets (`set:`).
        tag: String,
        /// The network part of the start address (`::` for the whole prefix).
        start: Ipv6Addr,
        /// The interface whose addresses give the prefix (`constructor:`).
        constructor: String,
        /// What dnsmasq offers on the range.
        mode: Ipv6RangeMode,
        /// Lease time (the lifetimes of the advertised prefix), written in seconds and at least
        /// [`MIN_LEASE`]; `None` for dnsmasq's default (one day).
        lease: Option<Duration>,
    },
    /// `dhcp-option=tag:<tag>,option:<opt-name>[,<value>[,<value>]]` (dnsmasq(8),
    /// `-O, --dhcp-option`): a DHCPv4 option for the clients of the tagged range. Without
    /// addresses the option is sent empty, which for the router and DNS server options means
    /// none (rather than dnsmasq's own address).
    DhcpOption {
        /// The tag the option is sent for (`tag:`).
        tag: String,
        /// The option.
        option: Dhcp4OptionName,
        /// The option's addresses, in order.
        addresses: Vec<Ipv4Addr>,
    },
    /// `dhcp-option=tag:<tag>,option6:<opt-name>[,[<value>][,[<value>]]]` (dnsmasq(8),
    /// `-O, --dhcp-option`): a DHCPv6 option (and the matching RA option, for the DNS server)
    /// for the clients of the tagged range. IPv6 addresses are written in square brackets, as
    /// dnsmasq(8) requires. Without addresses the option is sent empty: none.
    DhcpOption6 {
        /// The tag the option is sent for (`tag:`).
        tag: String,
        /// The option.
        option: Dhcp6OptionName,
        /// The option's addresses, in order.
        addresses: Vec<Ipv6Addr>,
    },
    /// `dhcp-authoritative` (dnsmasq(8), `-K, --dhcp-authoritative`): dnsmasq is the only DHCP
    /// server on its networks; requests for unknown leases are answered.
    DhcpAuthoritative,
    /// `ra-param=<interface>,[mtu:<integer>|<interface>,]<ra-interval>[,<router lifetime>]`
    /// (dnsmasq(8), `--ra-param`): the router advertisements of one link.
    RaParam {
        /// The link.
        interface: String,
        /// The MTU option of the advertisements; `None` for none.
        mtu: Option<RaMtu>,
        /// Interval between advertisements, written in seconds; `None` for dnsmasq's default
        /// (written `0`: "a value of zero for the interval means the default value").
        interval: Option<Duration>,
        /// Router lifetime, written in seconds; zero advertises the prefixes but no route
        /// through the router (RFC 4861 section 4.2). `None` for dnsmasq's default.
        router_lifetime: Option<Duration>,
    },
}

/// The DHCPv4 options routerd sets, by the names `dnsmasq --help dhcp` lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dhcp4OptionName {
    /// `router`, option 3 (RFC 2132 section 3.5).
    Router,
    /// `dns-server`, option 6 (RFC 2132 section 3.8).
    DnsServer,
}

/// The DHCPv6 options routerd sets, by the names `dnsmasq --help dhcp6` lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dhcp6OptionName {
    /// `dns-server`, option 23 (RFC 3646); dnsmasq announces the same servers as RDNSS in its
    /// router advertisements.
    DnsServer,
}

/// The `<mode>` of an IPv6 `dhcp-range` (dnsmasq(8), `--dhcp-range`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ipv6RangeMode {
    /// `ra-only`: router advertisements only, no DHCPv6.
    RaOnly,
    /// `ra-stateless`: router advertisements with the O and A bits set, and stateless DHCPv6
    /// for the options.
    RaStateless,
}

/// The `mtu:` value of an `ra-param` line (dnsmasq(8), `--ra-param`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RaMtu {
    /// `mtu:<integer>`: this MTU.
    Value(u16),
    /// `mtu:<interface>`: the MTU of this link, which dnsmasq reads ("useful for advertising
    /// the MTU of a WAN interface on the other interfaces of a router").
    Interface(String),
}

impl Dhcp4OptionName {
    /// The name after `option:`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Router => "router",
            Self::DnsServer => "dns-server",
        }
    }

    /// The option code.
    pub fn code(self) -> u8 {
        match self {
            Self::Router => 3,
            Self::DnsServer => 6,
        }
    }
}

impl Dhcp6OptionName {
    /// The name after `option6:`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DnsServer => "dns-server",
        }
    }

    /// The option code.
    pub fn code(self) -> u16 {
        match self {
            Self::DnsServer => 23,
        }
    }
}

impl Ipv6RangeMode {
    /// The dnsmasq keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RaOnly => "ra-only",
            Self::RaStateless => "ra-stateless",
        }
    }
}

impl DnsmasqOption {
    /// The option's long name, the line's text before `=` (`dhcp-range`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Interface(_) => "interface",
            Self::Port(_) => "port",
            Self::NoResolv => "no-resolv",
            Self::Server { .. } | Self::DomainServer { .. } => "server",
            Self::CacheSize(_) => "cache-size",
            Self::EnableRa => "enable-ra",
            Self::DhcpRange { .. } | Self::DhcpRange6 { .. } => "dhcp-range",
            Self::DhcpOption { .. } | Self::DhcpOption6 { .. } => "dhcp-option",
            Self::DhcpAuthoritative => "dhcp-authoritative",
            Self::RaParam { .. } => "ra-param",
        }
    }

    /// The line as it goes into the file (the [`Display`](fmt::Display) form).
    pub fn line(&self) -> String {
        self.to_string()
    }
}

/// The configuration-file line.
impl fmt::Display for DnsmasqOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name();
        match self {
            Self::NoResolv | Self::EnableRa | Self::DhcpAuthoritative => f.write_str(name),
            Self::Interface(ifname) => write!(f, "{name}={}", Word(ifname)),
            Self::Port(port) => write!(f, "{name}={port}"),
            Self::CacheSize(n) => write!(f, "{name}={n}"),
            Self::Server { domain: None, address } => write!(f, "{name}={address}"),
            Self::Server { domain: Some(domain), address } => {
                write!(f, "{name}=/{domain}/{address}")
            }
            Self::DomainServer { domain, address } => {
                write!(f, "{name}=/{domain}/{}#{}", address.ip(), address.port())
            }
            Self::DhcpRange { tag, start, end, lease } => {
                write!(f, "{name}=set:{},{start},{end}", Word(tag))?;
                write_lease(f, *lease)
            }
            Self::DhcpRange6 { tag, start, constructor, mode, lease } => {
                let (tag, constructor, mode) = (Word(tag), Word(constructor), mode.as_str());
                write!(f, "{name}=set:{tag},{start},constructor:{constructor},{mode}")?;
                // dnsmasq reads a bare number up to 128 in this place as the prefix length, so a
                // lease that short follows the prefix length, 64 (the default, and the only
                // length RA subnets may have).
                if lease.is_some_and(|l| l.max(MIN_LEASE).as_secs() <= 128) {
                    write!(f, ",{RA_PREFIX_LEN}")?;
                }
                write_lease(f, *lease)
            }
            Self::DhcpOption { tag, option, addresses } => {
                write!(f, "{name}=tag:{},option:{}", Word(tag), option.as_str())?;
                addresses.iter().try_for_each(|a| write!(f, ",{a}"))
            }
            Self::DhcpOption6 { tag, option, addresses } => {
                write!(f, "{name}=tag:{},option6:{}", Word(tag), option.as_str())?;
                addresses.iter().try_for_each(|a| write!(f, ",[{a}]"))
            }
            Self::RaParam { interface, mtu, interval, router_lifetime } => {
                write!(f, "{name}={},", Word(interface))?;
                match mtu {
                    Some(RaMtu::Value(v)) => write!(f, "mtu:{v},")?,
                    Some(RaMtu::Interface(i)) => write!(f, "mtu:{},", Word(i))?,
                    None => {}
                }
                write!(f, "{}", interval.unwrap_or_default().as_secs())?;
                match router_lifetime {
                    Some(l) => write!(f, ",{}", l.as_secs()),
                    None => Ok(()),
                }
            }
        }
    }
}

/// The prefix length of the ranges of `--enable-ra` (dnsmasq(8), `--dhcp-range`: for IPv6 "an
/// optional prefix length ... If not given, this defaults to 64"; dnsmasq refuses any other for
/// RA subnets).
const RA_PREFIX_LEN: u8 = 64;

/// `,<seconds>` of a lease time, raised to [`MIN_LEASE`]; nothing for `None`.
fn write_lease(f: &mut fmt::Formatter<'_>, lease: Option<Duration>) -> fmt::Result {
    match lease {
        Some(l) => write!(f, ",{}", l.max(MIN_LEASE).as_secs()),
        None => Ok(()),
    }
}

/// A name from the config (a tag, an interface name) as one value of a dnsmasq line: verbatim,
/// or quoted when it contains a character dnsmasq's file reader gives a meaning (`,` `"`), with
/// `"` and `\` escaped (dnsmasq(8), "CONFIG FILE": between quotes "the special meanings of
/// ,:. and # are removed and the following escapes are allowed: `\\` `\"`").
struct Word<'a>(&'a str);

impl fmt::Display for Word<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.0.contains([',', '"']) {
            return f.write_str(self.0);
        }
        f.write_str("\"")?;
        for c in self.0.chars() {
            if matches!(c, '"' | '\\') {
                f.write_str("\\")?;
            }
            write!(f, "{c}")?;
        }
        f.write_str("\"")
    }
}

#[cfg(test)]
#[path = "option_tests.rs"]
mod tests;
