//! The eight record kinds (`ARecord` … `CAARecord`, Bindy's names): one resource owns one
//! whole RRset (RFC 2181 §5), so its values are a list. Two `MXRecord`s of one name would own
//! one RRset, which validation refuses, instead of overwriting each other as they do in Bindy
//! (design brief §1).
//!
//! Each kind's spec is `zone` (a `DNSZone` resource), `name` (relative to the zone, `@` for
//! the apex, or absolute inside it), an optional `ttl` (default: the zone's) and its value
//! field. Rendering is [`super::zone`]'s: a record becomes a `dns.rrset` of its zone's server.

use std::net::{Ipv4Addr, Ipv6Addr};

use hickory_proto::rr::rdata::{self, MX, SRV, TXT};
use hickory_proto::rr::{Name, RData, RecordType};
use routerd_model::Resource;
use routerd_model::external::{ExternalCheck, ExternalKind, ExternalKindSpec};
use serde::Deserialize;

use super::names;
use crate::API_VERSION;

/// The longest character-string of a TXT record (RFC 1035 §3.3: one length byte).
pub const TXT_CHUNK: usize = 255;
/// The largest TTL (RFC 2181 §8).
pub const MAX_TTL: u32 = (1 << 31) - 1;

/// What every record kind's spec gives: where its RRset is and what it holds.
pub trait RecordSpec: ExternalKindSpec {
    /// The RR type.
    const TYPE: RecordType;
    /// The `DNSZone` resource.
    fn zone(&self) -> &str;
    /// The owner name as written.
    fn name(&self) -> &str;
    /// The TTL, if set.
    fn ttl(&self) -> Option<u32>;
    /// The records' data, names completed with `origin`.
    ///
    /// Errors: `(field, message)` of the first value that is not valid.
    fn rdata(&self, origin: &Name) -> Result<Vec<RData>, FieldError>;
}

macro_rules! record_kind {
    ($(#[$doc:meta])* $spec:ident, $kind_static:ident, $kind:literal, $rtype:ident,
     $(#[$fdoc:meta])* $field:ident: $ty:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Deserialize)]
        #[serde(deny_unknown_fields, rename_all = "camelCase")]
        pub struct $spec {
            /// The `DNSZone` resource the RRset is in.
            pub zone: String,
            /// The owner name: relative to the zone (`www`, `_sip._tcp`), `@` for the apex, or
            /// absolute inside the zone (`www.lab.example.`).
            pub name: String,
            /// TTL in seconds; default the zone's `ttl`.
            #[serde(default)]
            pub ttl: Option<u32>,
            $(#[$fdoc])*
            pub $field: $ty,
        }

        impl ExternalKindSpec for $spec {
            fn validate(&self, c: &mut ExternalCheck<'_, '_, '_>) {
                check_common(c, &self.zone, &self.name, self.ttl);
                // The names inside the values are checked against a placeholder origin here;
                // against the zone itself in the file-wide check.
                if let Err((field, message)) = self.rdata(&placeholder_origin()) {
                    c.error(&field, message);
                }
            }
        }

        /// The resource kind.
        pub static $kind_static: ExternalKind =
            ExternalKind::of::<$spec>(API_VERSION, $kind);

        impl RecordSpec for $spec {
            const TYPE: RecordType = RecordType::$rtype;
            fn zone(&self) -> &str {
                &self.zone
            }
            fn name(&self) -> &str {
                &self.name
            }
            fn ttl(&self) -> Option<u32> {
                self.ttl
            }
            fn rdata(&self, origin: &Name) -> Result<Vec<RData>, FieldError> {
                rdata_of(&self.$field, origin, stringify!($field))
            }
        }
    };
}

macro_rules! record_kinds {
    ($($(#[$doc:meta])* $spec:ident, $kind_static:ident, $kind:literal, $rtype:ident,
       $(#[$fdoc:meta])* $field:ident: $ty:ty;)*) => {
        $(record_kind!($(#[$doc])* $spec, $kind_static, $kind, $rtype, $(#[$fdoc])* $field: $ty);)*

        /// Every record kind with its typed readers, in registration order: the one table
        /// [`rrset_of`], [`zone_of`] and registration go through.
        pub static RECORDS: &[RecordKind] = &[$(RecordKind::of::<$spec>(&$kind_static)),*];
    };
}

record_kinds! {
    /// `spec` of an `ARecord`: IPv4 addresses (RFC 1035 §3.4.1).
    ARecordSpec, A_RECORD, "ARecord", A,
    /// `ipv4Addresses`: at least one.
    ipv4_addresses: Vec<Ipv4Addr>;
    /// `spec` of an `AAAARecord`: IPv6 addresses (RFC 3596).
    AaaaRecordSpec, AAAA_RECORD, "AAAARecord", AAAA,
    /// `ipv6Addresses`: at least one.
    ipv6_addresses: Vec<Ipv6Addr>;
    /// `spec` of a `CNAMERecord`: an alias (RFC 1034 §3.6.2): no other data at its name, never
    /// at the apex.
    CnameRecordSpec, CNAME_RECORD, "CNAMERecord", CNAME,
    /// `target`: the canonical name (relative to the zone unless it ends with a dot).
    target: String;
    /// `spec` of a `TXTRecord`: one TXT record per entry (RFC 1035 §3.3.14), split into
    /// character-strings of at most 255 bytes.
    TxtRecordSpec, TXT_RECORD, "TXTRecord", TXT,
    /// `text`: at least one entry.
    text: Vec<String>;
    /// `spec` of an `MXRecord`: mail exchangers (RFC 1035 §3.3.9).
    MxRecordSpec, MX_RECORD, "MXRecord", MX,
    /// `exchanges`: at least one.
    exchanges: Vec<MxExchange>;
    /// `spec` of an `NSRecord`: a delegation below the apex (RFC 1034 §4.2.2); the apex NS
    /// set is the zone's `nameServers`.
    NsRecordSpec, NS_RECORD, "NSRecord", NS,
    /// `nameservers`: at least one.
    nameservers: Vec<String>;
    /// `spec` of an `SRVRecord`: service locations (RFC 2782); `name` is `_service._proto`.
    SrvRecordSpec, SRV_RECORD, "SRVRecord", SRV,
    /// `targets`: at least one.
    targets: Vec<SrvTarget>;
    /// `spec` of a `CAARecord`: certification authority authorization (RFC 8659).
    CaaRecordSpec, CAA_RECORD, "CAARecord", CAA,
    /// `entries`: at least one.
    entries: Vec<CaaEntry>;
}

/// One mail exchanger of an `MXRecord`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MxExchange {
    /// Preference: lower is tried first.
    pub priority: u16,
    /// The host (relative to the zone unless it ends with a dot).
    pub mail_server: String,
}

/// One target of an `SRVRecord`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SrvTarget {
    /// Lower is tried first.
    pub priority: u16,
    /// Share among targets of one priority.
    pub weight: u16,
    /// The service's port.
    pub port: u16,
    /// The host (relative to the zone unless it ends with a dot); `.` for "not offered".
    pub target: String,
}

/// One property of a `CAARecord`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CaaEntry {
    /// Flags: 0, or 128 for "issuer critical".
    #[serde(default)]
    pub flags: u8,
    /// `issue`, `issuewild` or `iodef`.
    pub tag: String,
    /// The property's value (`letsencrypt.org`, `mailto:security@example.com`).
    pub value: String,
}

/// The origin the values of a record are checked against before its zone is known.
fn placeholder_origin() -> Name {
    Name::from_ascii("zone.invalid.").unwrap_or_else(|_| Name::root())
}

fn check_common(c: &mut ExternalCheck<'_, '_, '_>, zone: &str, name: &str, ttl: Option<u32>) {
    if let Some(kind) = super::zone::DNS_ZONE.resource_kind() {
        c.reference("zone", zone, kind);
    }
    if let Err(message) = names::absolute(name, &placeholder_origin()) {
        c.error("name", message);
    }
    if ttl.is_some_and(|t| t > MAX_TTL) {
        c.error("ttl", format!("a TTL is at most {MAX_TTL} seconds (RFC 2181 §8)"));
    }
}

/// The values of one field, typed as RData.
trait Values {
    fn rdata(&self, origin: &Name, field: &str) -> Result<Vec<RData>, FieldError>;
}

fn rdata_of<V: Values>(v: &V, origin: &Name, field: &str) -> Result<Vec<RData>, FieldError> {
    v.rdata(origin, field)
}

fn name_at(text: &str, origin: &Name, field: String) -> Result<Name, FieldError> {
    if text == "." {
        return Ok(Name::root());
    }
    names::absolute(text, origin).map_err(|m| (field, m))
}

fn non_empty<T>(list: &[T], field: &str) -> Result<(), FieldError> {
    if list.is_empty() {
        return Err((field.to_owned(), format!("{field} must not be empty")));
    }
    Ok(())
}

impl Values for Vec<Ipv4Addr> {
    fn rdata(&self, _: &Name, field: &str) -> Result<Vec<RData>, FieldError> {
        non_empty(self, field)?;
        Ok(self.iter().map(|a| RData::A(rdata::A(*a))).collect())
    }
}

impl Values for Vec<Ipv6Addr> {
    fn rdata(&self, _: &Name, field: &str) -> Result<Vec<RData>, FieldError> {
        non_empty(self, field)?;
        Ok(self.iter().map(|a| RData::AAAA(rdata::AAAA(*a))).collect())
    }
}

impl Values for String {
    fn rdata(&self, origin: &Name, field: &str) -> Result<Vec<RData>, FieldError> {
        let target = name_at(self, origin, field.to_owned())?;
        Ok(vec![RData::CNAME(rdata::CNAME(target))])
    }
}

/// `nameservers` (NS) and `text` (TXT) are both lists of strings: told apart by field name.
impl Values for Vec<String> {
    fn rdata(&self, origin: &Name, field: &str) -> Result<Vec<RData>, FieldError> {
        non_empty(self, field)?;
        if field == "nameservers" {
            return self
                .iter()
                .enumerate()
                .map(|(i, ns)| {
                    name_at(ns, origin, format!("{field}[{i}]")).map(|n| RData::NS(rdata::NS(n)))
                })
                .collect();
        }
        Ok(self.iter().map(|t| RData::TXT(txt(t))).collect())
    }
}

/// One TXT record holding `text`, cut into character-strings of at most [`TXT_CHUNK`] bytes,
/// each ending on a character boundary (so each is UTF-8 on its own, and reads back).
pub fn txt(text: &str) -> TXT {
    let mut chunks: Vec<&[u8]> = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = rest.len().min(TXT_CHUNK);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (chunk, tail) = rest.split_at(end);
        chunks.push(chunk.as_bytes());
        rest = tail;
    }
    if chunks.is_empty() {
        chunks.push(&[]);
    }
    TXT::from_bytes(chunks)
}

impl Values for Vec<MxExchange> {
    fn rdata(&self, origin: &Name, field: &str) -> Result<Vec<RData>, FieldError> {
        non_empty(self, field)?;
        self.iter()
            .enumerate()
            .map(|(i, mx)| {
                let host = name_at(&mx.mail_server, origin, format!("{field}[{i}].mailServer"))?;
                Ok(RData::MX(MX::new(mx.priority, host)))
            })
            .collect()
    }
}

impl Values for Vec<SrvTarget> {
    fn rdata(&self, origin: &Name, field: &str) -> Result<Vec<RData>, FieldError> {
        non_empty(self, field)?;
        self.iter()
            .enumerate()
            .map(|(i, t)| {
                let host = name_at(&t.target, origin, format!("{field}[{i}].target"))?;
                Ok(RData::SRV(SRV::new(t.priority, t.weight, t.port, host)))
            })
            .collect()
    }
}

impl Values for Vec<CaaEntry> {
    fn rdata(&self, _: &Name, field: &str) -> Result<Vec<RData>, FieldError> {
        non_empty(self, field)?;
        self.iter()
            .enumerate()
            .map(|(i, e)| {
                let at = |what: &str| format!("{field}[{i}].{what}");
                if e.flags != 0 && e.flags != 128 {
                    return Err((at("flags"), "flags are 0 or 128 (issuer critical)".into()));
                }
                if !["issue", "issuewild", "iodef"].contains(&e.tag.as_str()) {
                    return Err((at("tag"), format!("tag {:?}: issue, issuewild or iodef", e.tag)));
                }
                if e.value.contains('"') || e.value.contains('\\') {
                    return Err((at("value"), "a value holds no quote or backslash".into()));
                }
                let text = format!("{} {} \"{}\"", e.flags, e.tag, e.value);
                RData::try_from_str(RecordType::CAA, &text).map_err(|err| {
                    (at("value"), format!("{:?} is not a valid value: {err}", e.value))
                })
            })
            .collect()
    }
}

/// A record resource's RRset, in its zone.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordRRset {
    /// The type.
    pub rtype: RecordType,
    /// The owner name, absolute.
    pub owner: Name,
    /// The TTL, if the resource sets one.
    pub ttl: Option<u32>,
    /// The records' data.
    pub rdata: Vec<RData>,
}

/// A problem at a field: `(field path below spec, message)`.
pub type FieldError = (String, String);

/// One record kind: the resource kind and readers of its typed spec.
pub struct RecordKind {
    /// The resource kind, for registration.
    pub kind: &'static ExternalKind,
    rrset: fn(&Resource, &Name) -> Option<Result<RecordRRset, FieldError>>,
    zone: fn(&Resource) -> Option<&str>,
}

impl RecordKind {
    const fn of<T: RecordSpec>(kind: &'static ExternalKind) -> Self {
        Self { kind, rrset: typed_rrset::<T>, zone: typed_zone::<T> }
    }
}

fn typed_rrset<T: RecordSpec>(
    res: &Resource,
    origin: &Name,
) -> Option<Result<RecordRRset, FieldError>> {
    let spec = res.external_spec::<T>()?;
    let owner = match names::absolute(spec.name(), origin) {
        Ok(owner) => owner,
        Err(message) => return Some(Err(("name".to_owned(), message))),
    };
    Some(spec.rdata(origin).map(|rdata| RecordRRset {
        rtype: T::TYPE,
        owner,
        ttl: spec.ttl(),
        rdata,
    }))
}

fn typed_zone<T: RecordSpec>(res: &Resource) -> Option<&str> {
    res.external_spec::<T>().map(RecordSpec::zone)
}

/// A record resource's RRset in `origin`; `None` when `res` is not a record.
///
/// Errors: [`FieldError`] as [`RecordSpec::rdata`], or a name that does not parse.
pub fn rrset_of(res: &Resource, origin: &Name) -> Option<Result<RecordRRset, FieldError>> {
    RECORDS.iter().find_map(|kind| (kind.rrset)(res, origin))
}

/// The `zone` field of a record resource, if `res` is one.
pub fn zone_of(res: &Resource) -> Option<&str> {
    RECORDS.iter().find_map(|kind| (kind.zone)(res))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Name {
        names::zone_apex("lab.example").expect("valid in the test")
    }

    #[test]
    fn values_become_rdata_relative_to_the_zone() {
        let mx = vec![MxExchange { priority: 10, mail_server: "mail".into() }];
        let rdata = rdata_of(&mx, &origin(), "exchanges").expect("valid in the test");
        assert_eq!(rdata[0].to_string(), "10 mail.lab.example.");
        let srv = vec![SrvTarget { priority: 0, weight: 5, port: 5060, target: "sip.x.".into() }];
        assert_eq!(
            rdata_of(&srv, &origin(), "targets").expect("valid in the test")[0].to_string(),
            "0 5 5060 sip.x."
        );
        let caa = vec![CaaEntry { flags: 0, tag: "issue".into(), value: "letsencrypt.org".into() }];
        let caa = rdata_of(&caa, &origin(), "entries").expect("valid in the test");
        assert_eq!(caa[0].to_string(), "0 issue \"letsencrypt.org\"");
    }

    #[test]
    fn long_text_is_cut_into_character_strings() {
        let long = "x".repeat(600);
        let record = txt(&long);
        let lens: Vec<usize> = record.txt_data.iter().map(|s| s.len()).collect();
        assert_eq!(lens, [255, 255, 90]);
    }

    #[test]
    fn bad_values_name_their_field() {
        let empty: Vec<Ipv4Addr> = Vec::new();
        assert_eq!(
            rdata_of(&empty, &origin(), "ipv4Addresses").expect_err("refused").0,
            "ipv4Addresses"
        );
        let caa = vec![CaaEntry { flags: 3, tag: "issue".into(), value: "ca".into() }];
        assert_eq!(
            rdata_of(&caa, &origin(), "entries").expect_err("refused").0,
            "entries[0].flags"
        );
        let caa = vec![CaaEntry { flags: 0, tag: "nope".into(), value: "ca".into() }];
        assert_eq!(rdata_of(&caa, &origin(), "entries").expect_err("refused").0, "entries[0].tag");
        let ns = vec!["ok".to_owned(), "bad..name".to_owned()];
        assert_eq!(
            rdata_of(&ns, &origin(), "nameservers").expect_err("refused").0,
            "nameservers[1]"
        );
    }
}
