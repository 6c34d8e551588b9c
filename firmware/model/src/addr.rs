//! Parsing of the address strings that appear in specs: IP addresses, CIDR prefixes (host bits
//! zero) and interface addresses (host bits allowed).
//!
//! The validator uses these to report errors; the engine uses them to get typed values out of a
//! validated [`crate::Config`]. Pure functions, no I/O.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::{IpNet, Ipv4Net, Ipv6Net};

use crate::spec::AddressFamily;

/// Why an address string was rejected. Display is a lowercase message naming the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    /// Not an IP address at all.
    #[error("{input:?} is not a valid IP address")]
    NotAddress {
        /// The text as written.
        input: String,
    },
    /// Not of the form `address/length`.
    #[error("{input:?} is not a valid CIDR prefix (expected address/length, like {example})")]
    NotPrefix {
        /// The text as written.
        input: String,
        /// An example of the expected family.
        example: &'static str,
    },
    /// Not of the form `address/length` where an interface address is needed.
    #[error("{input:?} is not a valid interface address (expected address/length, like {example})")]
    NotInterfaceAddress {
        /// The text as written.
        input: String,
        /// An example of the expected family.
        example: &'static str,
    },
    /// A bare address where a prefix is needed.
    #[error("{input:?} is an address, not a prefix; write {input}/{max_len} for a single host")]
    BareAddress {
        /// The text as written.
        input: String,
        /// 32 or 128.
        max_len: u8,
    },
    /// The keyword `default`, which routerd does not accept as a prefix.
    #[error("\"default\" is not accepted; write {0}")]
    DefaultKeyword(&'static str),
    /// An address or prefix of the other family.
    #[error("{input:?} is an {found} address, expected {expected}")]
    WrongFamily {
        /// The text as written.
        input: String,
        /// Family of `input`.
        found: AddressFamily,
        /// Family the field requires.
        expected: AddressFamily,
    },
    /// A prefix whose host bits are not zero.
    #[error("prefix {input:?} has host bits set; host bits must be zero (did you mean {network}?)")]
    HostBitsSet {
        /// The text as written.
        input: String,
        /// The prefix with host bits cleared.
        network: IpNet,
    },
}

/// Parses an IP address, optionally requiring a family.
///
/// Errors: [`AddressError::NotAddress`], [`AddressError::WrongFamily`].
pub fn parse_ip(input: &str, family: Option<AddressFamily>) -> Result<IpAddr, AddressError> {
    let ip: IpAddr =
        input.parse().map_err(|_| AddressError::NotAddress { input: input.to_owned() })?;
    check_family(input, AddressFamily::of(&ip), family)?;
    Ok(ip)
}

/// Parses an IPv4 address such as `192.168.1.1`.
///
/// Errors: as [`parse_ip`].
pub fn parse_ipv4(input: &str) -> Result<Ipv4Addr, AddressError> {
    match parse_ip(input, Some(AddressFamily::Ipv4))? {
        IpAddr::V4(ip) => Ok(ip),
        IpAddr::V6(_) => unreachable!("invariant: family checked by parse_ip"),
    }
}

/// Parses an IPv6 address such as `2001:db8::1`.
///
/// Errors: as [`parse_ip`].
pub fn parse_ipv6(input: &str) -> Result<Ipv6Addr, AddressError> {
    match parse_ip(input, Some(AddressFamily::Ipv6))? {
        IpAddr::V6(ip) => Ok(ip),
        IpAddr::V4(_) => unreachable!("invariant: family checked by parse_ip"),
    }
}

/// Parses a CIDR prefix such as `192.168.1.0/24`; host bits must be zero.
///
/// `default` and bare addresses are rejected with a hint (`0.0.0.0/0`, `/32`).
/// Errors: [`AddressError::DefaultKeyword`], [`AddressError::BareAddress`],
/// [`AddressError::NotPrefix`], [`AddressError::WrongFamily`], [`AddressError::HostBitsSet`].
pub fn parse_prefix(input: &str, family: Option<AddressFamily>) -> Result<IpNet, AddressError> {
    let net = parse_net(input, family, false)?;
    if net.addr() != net.network() {
        return Err(AddressError::HostBitsSet { input: input.to_owned(), network: net.trunc() });
    }
    Ok(net)
}

/// Parses an IPv4 CIDR prefix with host bits zero, such as `10.0.0.0/8`.
///
/// Errors: as [`parse_prefix`].
pub fn parse_ipv4_prefix(input: &str) -> Result<Ipv4Net, AddressError> {
    match parse_prefix(input, Some(AddressFamily::Ipv4))? {
        IpNet::V4(net) => Ok(net),
        IpNet::V6(_) => unreachable!("invariant: family checked by parse_prefix"),
    }
}

/// Parses an IPv6 CIDR prefix with host bits zero, such as `2001:db8::/32`.
///
/// Errors: as [`parse_prefix`].
pub fn parse_ipv6_prefix(input: &str) -> Result<Ipv6Net, AddressError> {
    match parse_prefix(input, Some(AddressFamily::Ipv6))? {
        IpNet::V6(net) => Ok(net),
        IpNet::V4(_) => unreachable!("invariant: family checked by parse_prefix"),
    }
}

/// Parses an interface address such as `192.168.1.1/24`: address plus on-link prefix length,
/// host bits allowed.
///
/// Errors: as [`parse_prefix`] except that host bits are allowed and a malformed value is
/// [`AddressError::NotInterfaceAddress`].
pub fn parse_interface_address(
    input: &str,
    family: Option<AddressFamily>,
) -> Result<IpNet, AddressError> {
    parse_net(input, family, true)
}

fn parse_net(
    input: &str,
    family: Option<AddressFamily>,
    interface_address: bool,
) -> Result<IpNet, AddressError> {
    let v6 = family == Some(AddressFamily::Ipv6);
    if input.eq_ignore_ascii_case("default") {
        return Err(AddressError::DefaultKeyword(match family {
            Some(AddressFamily::Ipv6) => "::/0",
            Some(AddressFamily::Ipv4) => "0.0.0.0/0",
            None => "0.0.0.0/0 or ::/0",
        }));
    }
    if let Ok(ip) = input.parse::<IpAddr>() {
        check_family(input, AddressFamily::of(&ip), family)?;
        let input = input.to_owned();
        return Err(match (interface_address, ip.is_ipv4()) {
            (true, true) => AddressError::NotInterfaceAddress { input, example: "192.168.1.1/24" },
            (true, false) => AddressError::NotInterfaceAddress { input, example: "2001:db8::1/64" },
            (false, true) => AddressError::BareAddress { input, max_len: 32 },
            (false, false) => AddressError::BareAddress { input, max_len: 128 },
        });
    }
    let net: IpNet = input.parse().map_err(|_| {
        let input = input.to_owned();
        match (interface_address, v6) {
            (true, true) => AddressError::NotInterfaceAddress { input, example: "2001:db8::1/64" },
            (true, false) => AddressError::NotInterfaceAddress { input, example: "192.168.1.1/24" },
            (false, true) => AddressError::NotPrefix { input, example: "2001:db8::/64" },
            (false, false) => AddressError::NotPrefix { input, example: "192.168.1.0/24" },
        }
    })?;
    check_family(input, AddressFamily::of(&net.addr()), family)?;
    Ok(net)
}

fn check_family(
    input: &str,
    found: AddressFamily,
    expected: Option<AddressFamily>,
) -> Result<(), AddressError> {
    match expected {
        Some(expected) if expected != found => {
            Err(AddressError::WrongFamily { input: input.to_owned(), found, expected })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V4: Option<AddressFamily> = Some(AddressFamily::Ipv4);
    const V6: Option<AddressFamily> = Some(AddressFamily::Ipv6);

    #[test]
    fn prefix_with_host_bits_is_rejected_with_the_network() {
        let err = parse_prefix("10.1.2.3/8", V4).expect_err("host bits");
        assert_eq!(
            err.to_string(),
            "prefix \"10.1.2.3/8\" has host bits set; host bits must be zero (did you mean \
             10.0.0.0/8?)"
        );
    }

    #[test]
    fn interface_address_allows_host_bits() {
        let net = parse_interface_address("192.168.1.1/24", V4).expect("valid");
        assert_eq!(net.addr().to_string(), "192.168.1.1");
    }

    #[test]
    fn wrong_family_is_named() {
        let err = parse_ip("2001:db8::1", V4).expect_err("v6 in v4 field");
        assert_eq!(err.to_string(), "\"2001:db8::1\" is an IPv6 address, expected IPv4");
        assert!(parse_prefix("10.0.0.0/8", V6).is_err());
    }

    #[test]
    fn default_keyword_and_bare_address_get_hints() {
        assert_eq!(
            parse_prefix("default", V6).expect_err("default").to_string(),
            "\"default\" is not accepted; write ::/0"
        );
        assert_eq!(
            parse_prefix("10.0.0.1", V4).expect_err("bare").to_string(),
            "\"10.0.0.1\" is an address, not a prefix; write 10.0.0.1/32 for a single host"
        );
    }

    #[test]
    fn typed_helpers_return_the_family_type() {
        assert_eq!(parse_ipv4_prefix("0.0.0.0/0").expect("valid").prefix_len(), 0);
        assert_eq!(parse_ipv6_prefix("2001:db8::/32").expect("valid").prefix_len(), 32);
        assert_eq!(parse_ipv4("192.0.2.1").expect("valid"), Ipv4Addr::new(192, 0, 2, 1));
        assert!(parse_ipv6("192.0.2.1").is_err());
        assert!(parse_prefix("10.0.0.0/33", V4).is_err());
    }
}
