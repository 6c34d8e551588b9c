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
}
