//! DNS names as written in router.yaml: `www` (relative to the zone, as in a zone file,
//! RFC 1035 §5.1), `@` (the apex), or `host.example.` (absolute).

use hickory_proto::rr::Name;

/// `text` as an absolute name; relative names are completed with `origin`.
///
/// Errors: not a domain name (empty label, a label over 63 bytes, a name over 255 bytes).
pub fn absolute(text: &str, origin: &Name) -> Result<Name, String> {
    if text == "@" {
        return Ok(origin.clone());
    }
    if text.is_empty() {
        return Err("a name must not be empty (use @ for the zone apex)".into());
    }
    let name = Name::from_ascii(text).map_err(|e| format!("{text:?} is not a domain name: {e}"))?;
    if name.is_fqdn() {
        return Ok(name);
    }
    name.append_domain(origin).map_err(|e| format!("{text:?} in {origin}: {e}"))
}

/// `text` as a zone apex (`lab.example`, a trailing dot optional), absolute and lowercased.
///
/// Errors: not a domain name, or the root.
pub fn zone_apex(text: &str) -> Result<Name, String> {
    let trimmed = text.trim_end_matches('.');
    if trimmed.is_empty() {
        return Err("the zone must not be the root".into());
    }
    let mut name =
        Name::from_ascii(trimmed).map_err(|e| format!("{text:?} is not a domain name: {e}"))?;
    name.set_fqdn(true);
    Ok(name.to_lowercase())
}

/// A DHCP client's host name as one DNS label (RFC 1123 §2.1: letters, digits and hyphens, at
/// most 63 bytes), lowercased: the part before its first dot (a domain the client names is not
/// the zone's), every other character a hyphen, runs of hyphens one (so no `xn--` label looks
/// like IDNA, RFC 5891 §4.2.3.1), no hyphen at either end. `None` when nothing is left.
pub fn host_label(hostname: &str) -> Option<String> {
    let first = hostname.split('.').next().unwrap_or_default();
    let mut label = String::new();
    for c in first.chars() {
        if label.len() >= 63 {
            break;
        }
        let c = if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' };
        if c != '-' || !(label.is_empty() || label.ends_with('-')) {
            label.push(c);
        }
    }
    let label = label.trim_end_matches('-');
    (!label.is_empty()).then(|| label.to_owned())
}

/// Whether `name` is `zone` or below it.
pub fn in_zone(name: &Name, zone: &Name) -> bool {
    zone.zone_of(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_complete_relative_to_the_origin() {
        let origin = zone_apex("Lab.Example").expect("valid in the test");
        assert_eq!(origin.to_ascii(), "lab.example.");
        assert_eq!(absolute("@", &origin).expect("valid in the test"), origin);
        assert_eq!(
            absolute("www", &origin).expect("valid in the test").to_ascii(),
            "www.lab.example."
        );
        assert_eq!(
            absolute("_sip._tcp", &origin).expect("valid in the test").to_ascii(),
            "_sip._tcp.lab.example."
        );
        assert_eq!(
            absolute("mail.other.", &origin).expect("valid in the test").to_ascii(),
            "mail.other."
        );
        assert!(absolute("", &origin).is_err());
        assert!(absolute("a..b", &origin).is_err());
        assert!(absolute(&"x".repeat(64), &origin).is_err());
        assert!(zone_apex(".").is_err());
        assert!(in_zone(&absolute("a.b", &origin).expect("valid in the test"), &origin));
        assert!(!in_zone(&absolute("x.other.", &origin).expect("valid in the test"), &origin));
    }

    #[test]
    fn client_host_names_become_one_label() {
        assert_eq!(host_label("Laptop").as_deref(), Some("laptop"));
        assert_eq!(host_label("my laptop_2").as_deref(), Some("my-laptop-2"));
        assert_eq!(host_label("pc.corp.example").as_deref(), Some("pc"));
        assert_eq!(host_label("--x--y--").as_deref(), Some("x-y"));
        assert_eq!(host_label("xn--nxasmq6b").as_deref(), Some("xn-nxasmq6b"));
        assert_eq!(host_label("Jörg's iPhone").as_deref(), Some("j-rg-s-iphone"));
        assert_eq!(host_label(&"a".repeat(100)).map(|l| l.len()), Some(63));
        let label = host_label(&format!("{}-b", "a".repeat(62))).expect("a label");
        assert_eq!(label, "a".repeat(62), "no hyphen at the end after cutting");
        for nothing in ["", "*", "-", "___", ".hidden", "\u{0}", "日本"] {
            assert_eq!(host_label(nothing), None, "{nothing:?}");
        }
        assert!(
            absolute(&host_label("a b c").expect("a label"), &zone_apex("x").expect("x")).is_ok()
        );
    }
}
