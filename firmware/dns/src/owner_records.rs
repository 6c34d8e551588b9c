//! The TXT ownership registry on remote primaries (design brief §3; external-dns's TXT
//! registry format): beside each RRset routerd publishes through a `DNSExternalServer` with
//! `ownership.txtRegistry`, an owner record
//!
//! ```text
//! _routerd.a-www.ext.example. TXT "heritage=routerd,routerd/owner=edge-1,routerd/resource=ARecord/www"
//! ```
//!
//! named `<prefix><type>-<first label>.<rest of the owner>` (the apex: `<prefix><type>.<apex>`,
//! which stays inside the zone). It is a second signal beside the ledger: routerd deletes an
//! RRset there only when the ledger holds it **and** its owner record names this router's
//! owner id, as an nftables table needs the ledger and routerd's prefix. The owner record is an
//! owned RRset itself, removed after what it owns.

use hickory_proto::rr::{Name, RecordType};

/// `heritage=routerd`: what marks an owner record as routerd's format.
pub const HERITAGE: &str = "heritage=routerd";

/// A server's registry: the owner records' name prefix (`_routerd.`) and this router's owner
/// id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registry {
    /// The prefix, one or more labels, written with a trailing dot (`_routerd.`).
    pub prefix: String,
    /// This router's owner id (no `,`, `"` or `=`).
    pub owner_id: String,
}

impl Registry {
    /// The owner record of the RRset `owner`/`rtype` in `zone`, or `None` when the name would
    /// be too long (then nothing is published for it, and deletes are refused).
    pub fn record_name(&self, zone: &Name, owner: &Name, rtype: RecordType) -> Option<Name> {
        let t = rtype.to_string().to_ascii_lowercase();
        let prefix = self.prefix.trim_end_matches('.');
        let owner = owner.to_lowercase();
        let zone = zone.to_lowercase();
        let text = if owner == zone {
            format!("{prefix}.{t}.{}", zone.to_ascii())
        } else {
            let first = owner.iter().next().map(|l| String::from_utf8_lossy(l).into_owned())?;
            let rest = owner.base_name();
            format!("{prefix}.{t}-{first}.{}", rest.to_ascii())
        };
        Name::from_ascii(text).ok().filter(|n| n.is_fqdn() && zone.zone_of(n))
    }

    /// Whether `name` is an owner record of this registry (its first labels are the prefix).
    pub fn is_record(&self, name: &Name) -> bool {
        let prefix = format!("{}.", self.prefix.trim_end_matches('.')).to_ascii_lowercase();
        name.to_lowercase().to_ascii().starts_with(&prefix)
    }

    /// The owner record's text for the resource `resource` (`ARecord/www`).
    pub fn text(&self, resource: &str) -> String {
        format!("{HERITAGE},routerd/owner={},routerd/resource={resource}", self.owner_id)
    }

    /// Whether the TXT strings `texts` (one owner record's, as published) name this router.
    pub fn owns(&self, texts: &[String]) -> bool {
        let owner = format!("routerd/owner={}", self.owner_id);
        texts.iter().any(|t| {
            let fields: Vec<&str> = t.trim_matches('"').split(',').collect();
            fields.contains(&HERITAGE) && fields.contains(&owner.as_str())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        Registry { prefix: "_routerd.".into(), owner_id: "edge-1".into() }
    }

    fn name(text: &str) -> Name {
        Name::from_ascii(text).expect("valid in the test")
    }

    #[test]
    fn owner_records_are_named_inside_the_zone() {
        let zone = name("ext.example.");
        let r = registry();
        let www = r.record_name(&zone, &name("www.ext.example."), RecordType::A);
        assert_eq!(www, Some(name("_routerd.a-www.ext.example.")));
        let apex = r.record_name(&zone, &zone, RecordType::MX);
        assert_eq!(apex, Some(name("_routerd.mx.ext.example.")));
        let deep = r.record_name(&zone, &name("_sip._tcp.ext.example."), RecordType::SRV);
        assert_eq!(deep, Some(name("_routerd.srv-_sip._tcp.ext.example.")));
        assert!(r.is_record(&name("_routerd.a-www.ext.example.")));
        assert!(!r.is_record(&name("www.ext.example.")));
    }

    #[test]
    fn only_this_routers_owner_record_counts() {
        let r = registry();
        assert!(r.owns(&[r.text("ARecord/www")]));
        assert!(r.owns(&[format!("\"{}\"", r.text("ARecord/www"))]));
        let other = Registry { owner_id: "edge-2".into(), ..registry() };
        assert!(!r.owns(&[other.text("ARecord/www")]));
        assert!(!r.owns(&["routerd/owner=edge-1".into()]), "no heritage");
        assert!(!r.owns(&[]));
    }
}
