//! Shape checks for names that end up in the kernel or on the wire: interface names, host
//! names, DNS domains, sysctl keys, hex IDs. Each returns a lowercase message on failure.
//! Pure functions.

/// Longest interface name: `IFNAMSIZ` (16) minus the NUL, from `linux/if.h`.
const IFNAME_MAX: usize = 15;

/// Checks a kernel interface name as `dev_valid_name()` in `net/core/dev.c` does: 1..=15
/// bytes, not `.` or `..`, no `/`, `:` or whitespace.
pub(super) fn check_ifname(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("interface name must not be empty".into());
    }
    if name.len() > IFNAME_MAX {
        return Err(format!("interface name {name:?} is longer than {IFNAME_MAX} bytes"));
    }
    if name == "." || name == ".." {
        return Err(format!("interface name {name:?} is not allowed"));
    }
    if let Some(c) = name.chars().find(|c| *c == '/' || *c == ':' || c.is_whitespace()) {
        return Err(format!("interface name {name:?} must not contain {c:?}"));
    }
    Ok(())
}

/// Longest `metadata.name`, in bytes: a Kubernetes object name's limit (a DNS subdomain,
/// RFC 1123), well within the 255 bytes of a file or unit name that embeds it.
pub(crate) const NAME_MAX: usize = 253;

/// Checks a `metadata.name`: 1..=[`NAME_MAX`] bytes, no whitespace and no `/`. A name is a part
/// of the resource ID (`apiVersion/kind/name`) and of unit and file names
/// (`routerd-pppoe-<name>.service`, `/etc/ppp/peers/routerd-<name>`), where `/` would make a
/// path and whitespace split a word. Control and bidirectional characters are refused for every
/// string by the YAML front end.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("name must not be empty".into());
    }
    if name.len() > NAME_MAX {
        return Err(format!("name is {} bytes long, longer than {NAME_MAX}", name.len()));
    }
    if let Some(c) = name.chars().find(|c| *c == '/' || c.is_whitespace()) {
        return Err(format!("name {name:?} must not contain {c:?}"));
    }
    Ok(())
}

/// Checks an RFC 1123 host name, optionally fully qualified (`router` or `router.home.arpa`).
pub(super) fn check_hostname(name: &str) -> Result<(), String> {
    check_dns_name(name.strip_suffix('.').unwrap_or(name), "host name", false)
}

/// Checks a DNS domain (`flets-east.jp`, `home.arpa.`); labels may contain `_`.
pub(super) fn check_domain(name: &str) -> Result<(), String> {
    check_dns_name(name.strip_suffix('.').unwrap_or(name), "domain", true)
}

fn check_dns_name(name: &str, what: &str, allow_underscore: bool) -> Result<(), String> {
    if name.is_empty() {
        return Err(format!("{what} must not be empty"));
    }
    if name.len() > 253 {
        return Err(format!("{what} {name:?} is longer than 253 characters"));
    }
    for label in name.split('.') {
        let ok_char =
            |c: char| c.is_ascii_alphanumeric() || c == '-' || (allow_underscore && c == '_');
        if label.is_empty() || label.len() > 63 {
            return Err(format!("{what} {name:?} has an empty or over-long (>63) label"));
        }
        if !label.chars().all(ok_char) || label.starts_with('-') || label.ends_with('-') {
            return Err(format!(
                "{what} {name:?} has invalid label {label:?} (letters, digits and inner hyphens)"
            ));
        }
    }
    Ok(())
}

/// Checks a sysctl key in dotted form, as `sysctl(8)` prints it (`net.ipv4.ip_forward`).
pub(super) fn check_sysctl_key(key: &str) -> Result<(), String> {
    if key.is_empty() {
        return Err("sysctl key must not be empty".into());
    }
    if key.contains('/') {
        return Err(format!(
            "sysctl key {key:?} must use dots, not slashes (write {:?})",
            key.trim_matches('/').replace('/', ".")
        ));
    }
    if key.split('.').any(str::is_empty) {
        return Err(format!("sysctl key {key:?} has an empty segment (leading, trailing or `..`)"));
    }
    if let Some(c) = key.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("sysctl key {key:?} must not contain {c:?}"));
    }
    Ok(())
}

/// Checks a hexadecimal number of at most `max_digits` digits, optional `0x` prefix.
pub(super) fn check_hex(text: &str, max_digits: usize) -> Result<(), String> {
    let digits = text.strip_prefix("0x").unwrap_or(text);
    if digits.is_empty()
        || digits.len() > max_digits
        || !digits.chars().all(|c| c.is_ascii_hexdigit())
    {
        return Err(format!("{text:?} is not a hexadecimal number of at most {max_digits} digits"));
    }
    Ok(())
}

/// Checks hex bytes, optionally separated by `:` (`00:03:00:01:...` or `00030001...`).
pub(super) fn check_hex_bytes(text: &str) -> Result<(), String> {
    let digits: String = text.chars().filter(|c| *c != ':').collect();
    if digits.is_empty()
        || !digits.len().is_multiple_of(2)
        || !digits.chars().all(|c| c.is_ascii_hexdigit())
    {
        return Err(format!("{text:?} is not a sequence of hex bytes (like 00:03:00:01:...)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ifname_follows_the_kernel_rules() {
        assert!(check_ifname("eth0").is_ok());
        assert!(check_ifname("enp1s0.100").is_ok());
        assert!(check_ifname("a-very-long-name0").is_err());
        assert!(check_ifname("eth0:1").is_err());
        assert!(check_ifname("..").is_err());
        assert!(check_ifname("").is_err());
    }

    #[test]
    fn sysctl_key_must_be_dotted_without_empty_segments() {
        assert!(check_sysctl_key("net.ipv4.ip_forward").is_ok());
        assert_eq!(
            check_sysctl_key("net/ipv4/ip_forward").expect_err("slashes"),
            "sysctl key \"net/ipv4/ip_forward\" must use dots, not slashes (write \
             \"net.ipv4.ip_forward\")"
        );
        assert!(check_sysctl_key("net..ipv4").is_err());
        assert!(check_sysctl_key(".net").is_err());
        assert!(check_sysctl_key("net.ipv4 .x").is_err());
    }

    #[test]
    fn host_names_and_domains() {
        assert!(check_hostname("router.home.arpa").is_ok());
        assert!(check_hostname("-bad").is_err());
        assert!(check_hostname("under_score").is_err());
        assert!(check_domain("_dmarc.example.com.").is_ok());
        assert!(check_domain("a..b").is_err());
    }

    #[test]
    fn hex_checks() {
        assert!(check_hex("a0", 16).is_ok());
        assert!(check_hex("0x1f", 16).is_ok());
        assert!(check_hex("g", 16).is_err());
        assert!(check_hex_bytes("00:03:00:01:aa:bb").is_ok());
        assert!(check_hex_bytes("abc").is_err());
    }
}
