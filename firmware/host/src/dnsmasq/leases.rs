//! dnsmasq's lease file (`--dhcp-leasefile`, [`Target::dnsmasq_leases`]): the leases its DHCP
//! server granted, read only (dnsmasq owns the file and rewrites it on every change).
//!
//! The format is the one `lease_update_file` writes (dnsmasq's `src/lease.c`), one lease a
//! line, fields separated by one space:
//!
//! ```text
//! 1717171717 52:54:00:12:34:56 192.168.50.123 laptop 01:52:54:00:12:34:56
//! duid 00:01:00:01:2c:9a:3b:11:52:54:00:aa:bb:cc
//! 1717171717 305419896 2001:db8:50::123 laptop 00:01:00:01:2c:9a:3b:11:52:54:00:12:34:56
//! ```
//!
//! IPv4 lines (`expiry hwaddr address hostname client-id`) come first; the line `duid
//! <dnsmasq's DUID>` starts the IPv6 ones (`expiry iaid address hostname client-duid`, the IAID
//! prefixed `T` for a temporary address, RFC 8415 IA_TA). `*` stands for a missing hostname or
//! client ID. The expiry is in seconds since the Unix epoch, `0` for an infinite lease.
//!
//! Reading never fails on the content: a line that is not a lease (too few fields, an expiry or
//! address that does not parse, not UTF-8, over [`MAX_LINE`] bytes, or the unterminated last
//! line dnsmasq is still writing) is skipped, and only the first [`MAX_FILE`] bytes are read.
//!
//! [`Target::dnsmasq_leases`]: crate::Target::dnsmasq_leases

use std::io::{ErrorKind, Read};
use std::net::IpAddr;
use std::path::Path;

/// The longest line read as a lease; a longer one is skipped. dnsmasq's longest is about 600
/// bytes (a 255-byte client ID as hex, a 63-byte hostname, an IPv6 address).
pub const MAX_LINE: usize = 2048;

/// How much of the file is read: 16 MiB, about 150,000 leases of dnsmasq's.
pub const MAX_FILE: u64 = 16 << 20;

/// One lease of the file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DhcpLease {
    /// When the lease ends, seconds since the Unix epoch; `None` for an infinite lease (dnsmasq
    /// writes `0`).
    pub expiry: Option<u64>,
    /// The leased address.
    pub address: IpAddr,
    /// The host name the client sent, as dnsmasq stored it; `None` when it sent none (`*`).
    pub hostname: Option<String>,
    /// A temporary IPv6 address (IA_TA, RFC 8415 §21.5): never a host's name.
    pub temporary: bool,
}

impl DhcpLease {
    /// Whether the lease holds at `now` (seconds since the Unix epoch): it is infinite or ends
    /// at `now` or later.
    pub fn is_live(&self, now: u64) -> bool {
        self.expiry.is_none_or(|end| end >= now)
    }
}

/// The leases in the lease file at `path`, in file order; none when the file does not exist
/// (dnsmasq has not started yet).
///
/// Errors: the file exists and cannot be read (permissions, I/O), or is not a regular file (a
/// FIFO would block the reader, a device never end); its content never fails.
pub fn read(path: &Path) -> Result<Vec<DhcpLease>, std::io::Error> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => {
            return Err(std::io::Error::new(ErrorKind::InvalidInput, "not a regular file"));
        }
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    }
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut bytes = Vec::new();
    file.take(MAX_FILE).read_to_end(&mut bytes)?;
    Ok(parse(&bytes))
}

/// The leases in `bytes` (a lease file's content), in order. Lines that are not leases are
/// skipped, and so is the last line when it does not end with a line break: dnsmasq rewrites
/// the file in place, so a reader may see it half written, and every line it writes ends with
/// one.
pub fn parse(bytes: &[u8]) -> Vec<DhcpLease> {
    let mut leases = Vec::new();
    let mut ipv6 = false;
    let complete = match bytes.iter().rposition(|b| *b == b'\n') {
        Some(end) => &bytes[..end],
        None => return leases,
    };
    for line in complete.split(|b| *b == b'\n') {
        if line.len() > MAX_LINE {
            continue;
        }
        let Ok(line) = std::str::from_utf8(line) else { continue };
        let mut fields = line.split_ascii_whitespace();
        let Some(first) = fields.next() else { continue };
        if first == "duid" {
            ipv6 = true;
            continue;
        }
        if let Some(lease) = lease(first, fields, ipv6) {
            leases.push(lease);
        }
    }
    leases
}

/// The lease of one line whose first field is `expiry`, the others `fields`; `ipv6` after the
/// `duid` line. `None` when it is not one.
fn lease<'a>(
    expiry: &str,
    mut fields: impl Iterator<Item = &'a str>,
    ipv6: bool,
) -> Option<DhcpLease> {
    let expiry: u64 = expiry.parse().ok()?;
    let client = fields.next()?;
    let address: IpAddr = fields.next()?.parse().ok()?;
    let hostname = fields.next()?;
    // The address family must be the section's: an IPv4 lease has a hardware address, not an
    // IAID, and the other way round.
    if address.is_ipv6() != ipv6 {
        return None;
    }
    Some(DhcpLease {
        expiry: (expiry != 0).then_some(expiry),
        address,
        hostname: (hostname != "*").then(|| hostname.to_owned()),
        temporary: ipv6 && client.starts_with('T'),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(expiry: Option<u64>, address: &str, hostname: Option<&str>) -> DhcpLease {
        DhcpLease {
            expiry,
            address: address.parse().expect("valid in the test"),
            hostname: hostname.map(str::to_owned),
            temporary: false,
        }
    }

    #[test]
    fn the_leases_dnsmasq_writes_are_read_in_order() {
        let file = "1717171717 52:54:00:12:34:56 192.168.50.123 laptop 01:52:54:00:12:34:56\n\
                    0 52:54:00:12:34:57 192.168.50.124 printer *\n\
                    1717171000 06-52:54:00:12:34:58 192.168.50.125 * *\n";
        assert_eq!(
            parse(file.as_bytes()),
            [
                lease(Some(1_717_171_717), "192.168.50.123", Some("laptop")),
                lease(None, "192.168.50.124", Some("printer")),
                lease(Some(1_717_171_000), "192.168.50.125", None),
            ]
        );
    }

    #[test]
    fn ipv6_leases_follow_the_duid_line_and_temporary_ones_are_marked() {
        let file = "1717171717 52:54:00:12:34:56 192.168.50.123 laptop *\n\
                    duid 00:01:00:01:2c:9a:3b:11:52:54:00:aa:bb:cc\n\
                    1717171717 305419896 2001:db8:50::123 laptop 00:01:00:01:2c:9a\n\
                    1717171717 T305419897 2001:db8:50::9:1 laptop 00:01:00:01:2c:9a\n";
        let leases = parse(file.as_bytes());
        assert_eq!(leases.len(), 3, "{leases:?}");
        assert_eq!(leases[1], lease(Some(1_717_171_717), "2001:db8:50::123", Some("laptop")));
        assert!(!leases[1].temporary);
        assert!(leases[2].temporary, "{:?}", leases[2]);
    }

    #[test]
    fn malformed_lines_are_skipped_and_nothing_panics() {
        let long = format!("1717171717 aa 192.168.50.9 {} *\n", "x".repeat(MAX_LINE));
        let mut file: Vec<u8> = Vec::new();
        for line in [
            "\n",
            "   \n",
            "garbage\n",
            "1717171717\n",
            "1717171717 52:54:00:12:34:56\n",
            "1717171717 52:54:00:12:34:56 192.168.50.300 bad *\n",
            "-5 52:54:00:12:34:56 192.168.50.10 negative *\n",
            "99999999999999999999999 52:54:00:12:34:56 192.168.50.11 overflow *\n",
            "1717171717 52:54:00:12:34:56 2001:db8::1 v6-before-duid *\n",
            "1717171717 52:54:00:12:34:56 192.168.50.12\n",
            &long,
            "1717171717 52:54:00:12:34:56 192.168.50.13 good *\n",
        ] {
            file.extend_from_slice(line.as_bytes());
        }
        file.extend_from_slice(b"1717171717 52:54:00:12:34:56 192.168.50.14 \xff\xfe *\n");
        file.extend_from_slice(b"duid\n1717171717 1 192.168.50.15 v4-after-duid *\n");
        file.extend_from_slice(b"1717171717 1 2001:db8::2 half-writ");
        assert_eq!(parse(&file), [lease(Some(1_717_171_717), "192.168.50.13", Some("good"))]);
        assert_eq!(parse(b""), []);
        assert_eq!(parse(b"no line break"), []);
        assert_eq!(parse(&[0u8; 4096]), []);
    }

    #[test]
    fn mangled_files_never_panic() {
        let valid: &[u8] = b"1717171717 52:54:00:12:34:56 192.168.50.123 laptop 01:52\n\
                             duid 00:01:00:01\n1717171717 T1 2001:db8::1 x 00:01\n";
        // xorshift64: the same thousands of mangled files on every run.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..5000 {
            let mut bytes = valid.to_vec();
            for _ in 0..=next() % 8 {
                let at = usize::try_from(next() % valid.len() as u64).unwrap_or_default();
                bytes[at] = next().to_le_bytes()[0];
            }
            bytes.truncate(usize::try_from(next() % 200).unwrap_or_default());
            assert!(parse(&bytes).len() <= 2);
        }
    }

    #[test]
    fn a_lease_is_live_until_its_expiry_and_an_infinite_one_always() {
        let ends = lease(Some(1000), "192.0.2.1", None);
        assert!(ends.is_live(999));
        assert!(ends.is_live(1000));
        assert!(!ends.is_live(1001));
        assert!(lease(None, "192.0.2.1", None).is_live(u64::MAX));
    }

    #[test]
    fn a_missing_file_has_no_leases_and_what_is_no_regular_file_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(read(&dir.path().join("dnsmasq.leases")).expect("no file, no leases"), []);
        let path = dir.path().join("present.leases");
        std::fs::write(&path, "0 aa 192.0.2.7 host *\n").expect("written");
        assert_eq!(read(&path).expect("read"), [lease(None, "192.0.2.7", Some("host"))]);
        let not_a_file = read(dir.path()).expect_err("a directory is no lease file");
        assert_eq!(not_a_file.kind(), ErrorKind::InvalidInput);
        assert!(read(Path::new("/dev/zero")).is_err(), "a device is never read");
    }
}
