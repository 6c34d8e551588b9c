//! A server's routerd `named.conf`: its first line names the control channel the backend
//! talks rndc to, and the rest is BIND configuration the renderer wrote whole.
//!
//! ```text
//! # routerd-control 127.0.0.1 953
//! options { … };
//! include "/etc/routerd/dns/servers/auth/rndc.key";
//! controls { inet 127.0.0.1 port 953 allow { 127.0.0.1; } keys { "routerd-rndc"; }; };
//! include "/etc/routerd/dns/keys/routerd-update.key";
//! include "/etc/routerd/dns/servers/auth/zones.conf";
//! ```

use std::net::{Ipv4Addr, SocketAddrV4};

/// The prefix of a `named.conf`'s first line: `# routerd-control <ipv4> <port>`.
pub const CONTROL_PREFIX: &str = "# routerd-control ";

/// The prefix of the lines after the first that name a secondary the server notifies:
/// `# routerd-secondary <address> <port>`. The backend asks each for the serials of the
/// server's zones (`bind.zone`'s observed `secondaries`).
pub const SECONDARY_PREFIX: &str = "# routerd-secondary ";

/// The secondaries `named_conf` names ([`SECONDARY_PREFIX`] lines), in order; lines that do
/// not parse are skipped.
pub fn secondary_addresses(named_conf: &str) -> Vec<std::net::SocketAddr> {
    named_conf
        .lines()
        .take_while(|l| l.starts_with('#'))
        .filter_map(|l| l.strip_prefix(SECONDARY_PREFIX))
        .filter_map(|rest| {
            let mut words = rest.split_whitespace();
            let ip: std::net::IpAddr = words.next()?.parse().ok()?;
            let port: u16 = words.next()?.parse().ok()?;
            (words.next().is_none()).then_some(std::net::SocketAddr::new(ip, port))
        })
        .collect()
}

/// The name of each server's rndc key (in its `rndc.key`, never an artifact attribute).
pub const RNDC_KEY_NAME: &str = "routerd-rndc";

/// The first line of a `named.conf` whose control channel is `address`, without its line
/// break: `# routerd-control 127.0.0.1 953`. BIND 9.18 takes no unix control socket ("not yet
/// supported"), so it is an IPv4 socket inside the server's namespace (design brief §2).
pub fn control_line(address: SocketAddrV4) -> String {
    format!("{CONTROL_PREFIX}{} {}", address.ip(), address.port())
}

/// The control channel named by the first line of `named_conf` ([`control_line`]), if that
/// line is one.
pub fn control_address(named_conf: &str) -> Option<SocketAddrV4> {
    let first = named_conf.lines().next()?;
    let mut words = first.strip_prefix(CONTROL_PREFIX)?.split_whitespace();
    let ip: Ipv4Addr = words.next()?.parse().ok()?;
    let port: u16 = words.next()?.parse().ok()?;
    (words.next().is_none() && port != 0).then_some(SocketAddrV4::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_line_round_trips_and_only_the_first_line_counts() {
        let at = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 953);
        let text = format!("{}\noptions {{ }};\n", control_line(at));
        assert_eq!(text.lines().next(), Some("# routerd-control 127.0.0.1 953"));
        assert_eq!(control_address(&text), Some(at));
        assert_eq!(control_address("options { };\n# routerd-control 127.0.0.1 953\n"), None);
    }

    #[test]
    fn malformed_control_lines_name_no_channel() {
        for bad in [
            "",
            "# routerd-control 127.0.0.1",
            "# routerd-control ::1 953",
            "# routerd-control 127.0.0.1 0",
            "# routerd-control 127.0.0.1 70000",
            "# routerd-control 127.0.0.1 953 extra",
            "#routerd-control 127.0.0.1 953",
        ] {
            assert_eq!(control_address(bad), None, "{bad}");
        }
        let spaced = "# routerd-control   10.0.0.1   8953  \n";
        assert_eq!(control_address(spaced), Some(SocketAddrV4::new([10, 0, 0, 1].into(), 8953)));
    }
}
