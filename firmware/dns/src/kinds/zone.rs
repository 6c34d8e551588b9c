//! `DNSZone`: a zone on a `DNSServer` the router runs (`server`), or records of a zone on a
//! remote primary (`externalServer`). routerd's own fields are accepted unchanged (`zone`,
//! `ttl`, `records[{hostname, ipv4, ipv6, ttl}]`, `reverseZones[{name}]`, `dhcpDerived`,
//! `dnssec`, `ownerRefs`); SOA, name servers, catalog membership, extra update keys and
//! forwarding from dnsmasq are this firmware's.
//!
//! On a local server the zone renders its clause (`bind.zone <server>/<zone>.`) with the
//! zone file it starts from, one per reverse zone, and its records as `dns.rrset`s; on a
//! remote primary only the `dns.rrset`s. Record resources render through the same index.

use hickory_proto::rr::rdata::PTR;
use hickory_proto::rr::{Name, RData, RecordType};
use routerd_engine::intent::IntentDep;
use routerd_engine::kind_status::{KindStatus, StatusFacts};
use routerd_engine::registry::KindRender;
use routerd_engine::render::{Out, RenderCtx};
use routerd_host::artifact::DnsmasqSectionSpec;
use routerd_host::dnsmasq::DnsmasqOption;
use routerd_host::kinds::external::ExternalArtifactSpec;
use routerd_host::{ArtifactKey, ArtifactSpec};
use routerd_model::Resource;
use routerd_model::external::{ExternalCheck, ExternalKind, ExternalKindSpec};
use serde::Deserialize;

use super::index::{DnsIndex, ZoneAt, ZoneInfo};
use super::{names, records, server};
use crate::API_VERSION;
use crate::artifacts::{
    BIND_ZONE, BindZone, DNS_REMOTE_ZONE, DNS_RRSET, RRset, RRsetName, RemoteZone, Side,
    remote_zone_name, zone_file_name,
};

/// A zone's TTL when `ttl` is absent (routerd's default).
pub const DEFAULT_TTL: u32 = 300;

/// One entry of routerd's `records` list: a host's addresses.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ZoneRecord {
    /// The host name, relative to the zone (or `@`, or absolute inside it).
    pub hostname: String,
    /// Its IPv4 address.
    #[serde(default)]
    pub ipv4: Option<String>,
    /// Its IPv6 address.
    #[serde(default)]
    pub ipv6: Option<String>,
    /// routerd's status-derived address; accepted, not supported here.
    #[serde(default)]
    pub ipv4_from: Option<serde_json::Value>,
    /// routerd's status-derived address; accepted, not supported here.
    #[serde(default)]
    pub ipv6_from: Option<serde_json::Value>,
    /// TTL in seconds; default the zone's.
    #[serde(default)]
    pub ttl: Option<u32>,
}

/// One of routerd's `reverseZones`: a reverse zone whose PTRs the records give.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReverseZone {
    /// `2.0.192.in-addr.arpa`, `8.b.d.0.1.0.0.2.ip6.arpa`.
    pub name: String,
}

/// routerd's `dhcpDerived`: names from the leases of the router's DHCP servers (dnsmasq's
/// lease file), one A or AAAA RRset per client name and a PTR in a `reverseZones` zone
/// ([`super::dhcp_derived`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DhcpDerived {
    /// The `IPv4DHCPServer` and `IPv6DHCPServer` resources whose leases give names, by name or
    /// routerd's `<Kind>/<name>`. Empty: none.
    #[serde(default)]
    pub sources: Vec<String>,
    /// The domain a client's name goes under: the zone or a name inside it (relative to the
    /// zone without a trailing dot, unless it already ends with the zone); default the zone.
    #[serde(default)]
    pub hostname_suffix: Option<String>,
    /// routerd's flag for dynamic updates; accepted, no effect (the names are always written
    /// over RFC 2136).
    #[serde(default)]
    pub ddns: bool,
    /// TTL of the derived records, seconds; default the zone's `ttl`.
    #[serde(default)]
    pub ttl: Option<u32>,
    /// The lease file to read (an absolute path, dnsmasq's format); default routerd's own
    /// dnsmasq's, `/var/lib/routerd/dnsmasq/dnsmasq.leases`.
    #[serde(default)]
    pub lease_file: Option<String>,
}

/// routerd's `dnssec`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Dnssec {
    /// Whether DNSSEC is wanted.
    #[serde(default)]
    pub enabled: bool,
    /// `validate` or `sign`.
    #[serde(default)]
    pub mode: Option<String>,
}

/// The zone's SOA (RFC 1035 §3.3.13), written when the zone is created.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Soa {
    /// MNAME: the primary name server.
    pub primary_name_server: String,
    /// RNAME: the administrator's mailbox as a name (`hostmaster.lab.example.`).
    pub admin_email: String,
    /// Seconds between a secondary's checks; default 3600.
    #[serde(default = "soa_refresh")]
    pub refresh: u32,
    /// Seconds before a failed check is retried; default 600.
    #[serde(default = "soa_retry")]
    pub retry: u32,
    /// Seconds a secondary serves without reaching the primary; default 1209600.
    #[serde(default = "soa_expire")]
    pub expire: u32,
    /// Negative-answer TTL (RFC 2308); default 300.
    #[serde(default = "soa_negative")]
    pub negative_ttl: u32,
}

fn soa_refresh() -> u32 {
    3600
}
fn soa_retry() -> u32 {
    600
}
fn soa_expire() -> u32 {
    1_209_600
}
fn soa_negative() -> u32 {
    300
}

/// One apex name server, with its glue when it is inside the zone.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NameServer {
    /// Its name.
    pub hostname: String,
    /// Glue IPv4 address.
    #[serde(default)]
    pub ipv4: Option<std::net::Ipv4Addr>,
    /// Glue IPv6 address.
    #[serde(default)]
    pub ipv6: Option<std::net::Ipv6Addr>,
}

/// `spec` of a `DNSZone`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ZoneSpec {
    /// The zone apex (`lab.example`).
    pub zone: String,
    /// Default TTL of its records, seconds; default 300.
    #[serde(default)]
    pub ttl: Option<u32>,
    /// routerd's host records.
    #[serde(default)]
    pub records: Vec<ZoneRecord>,
    /// Reverse zones given PTRs for the records' addresses.
    #[serde(default)]
    pub reverse_zones: Vec<ReverseZone>,
    /// Names from the router's DHCP leases.
    #[serde(default)]
    pub dhcp_derived: Option<DhcpDerived>,
    /// Accepted; signing is not supported yet.
    #[serde(default)]
    pub dnssec: Option<Dnssec>,
    /// routerd's owner references; accepted, unused (the ledger records ownership).
    #[serde(default)]
    pub owner_refs: Vec<serde_json::Value>,
    /// The `DNSServer` that holds the zone (XOR `externalServer`).
    #[serde(default)]
    pub server: Option<String>,
    /// The `DNSExternalServer` whose zone routerd adds records to (XOR `server`).
    #[serde(default)]
    pub external_server: Option<String>,
    /// The SOA written when the zone is created.
    #[serde(default)]
    pub soa: Option<Soa>,
    /// The apex NS set written when the zone is created.
    #[serde(default)]
    pub name_servers: Vec<NameServer>,
    /// Listed in its server's catalog zone.
    #[serde(default)]
    pub catalog: bool,
    /// More `DNSTSIGKey`s that may update the zone (a DHCP server's DDNS key).
    #[serde(default)]
    pub extra_update_keys: Vec<String>,
    /// dnsmasq forwards the zone's names to the server.
    #[serde(default)]
    pub forward_from_dnsmasq: bool,
}

impl ExternalKindSpec for ZoneSpec {
    fn validate(&self, c: &mut ExternalCheck<'_, '_, '_>) {
        let apex = match names::zone_apex(&self.zone) {
            Ok(apex) => Some(apex),
            Err(message) => {
                c.error("zone", message);
                None
            }
        };
        match (&self.server, &self.external_server) {
            (Some(s), None) => {
                if let Some(kind) = server::DNS_SERVER.resource_kind() {
                    c.reference("server", s, kind);
                }
            }
            (None, Some(s)) => {
                if let Some(kind) = server::DNS_EXTERNAL_SERVER.resource_kind() {
                    c.reference("externalServer", s, kind);
                }
                for (field, set) in [
                    ("soa", self.soa.is_some()),
                    ("nameServers", !self.name_servers.is_empty()),
                    ("catalog", self.catalog),
                    ("extraUpdateKeys", !self.extra_update_keys.is_empty()),
                    ("reverseZones", !self.reverse_zones.is_empty()),
                    ("forwardFromDnsmasq", self.forward_from_dnsmasq),
                ] {
                    if set {
                        c.error(field, format!("{field} is for a zone on a DNSServer: a remote zone is the remote primary's"));
                    }
                }
            }
            _ => c.error("", "give exactly one of server and externalServer"),
        }
        for (i, key) in self.extra_update_keys.iter().enumerate() {
            if let Some(kind) = super::key::DNS_TSIG_KEY.resource_kind() {
                c.reference(&format!("extraUpdateKeys[{i}]"), key, kind);
            }
        }
        if self.ttl.is_some_and(|t| t > records::MAX_TTL) {
            c.error("ttl", format!("a TTL is at most {} seconds", records::MAX_TTL));
        }
        let Some(apex) = apex else { return };
        for (i, r) in self.records.iter().enumerate() {
            if let Err(message) = names::absolute(&r.hostname, &apex) {
                c.error(&format!("records[{i}].hostname"), message);
            }
            if let Some(v4) = &r.ipv4
                && v4.parse::<std::net::Ipv4Addr>().is_err()
            {
                c.error(&format!("records[{i}].ipv4"), format!("{v4:?} is not an IPv4 address"));
            }
            if let Some(v6) = &r.ipv6
                && v6.parse::<std::net::Ipv6Addr>().is_err()
            {
                c.error(&format!("records[{i}].ipv6"), format!("{v6:?} is not an IPv6 address"));
            }
            if r.ipv4.is_none()
                && r.ipv6.is_none()
                && r.ipv4_from.is_none()
                && r.ipv6_from.is_none()
            {
                c.error(&format!("records[{i}]"), "a record needs ipv4 or ipv6");
            }
        }
        if let Some(derived) = &self.dhcp_derived {
            validate_dhcp_derived(derived, &apex, c);
        }
        for (i, rz) in self.reverse_zones.iter().enumerate() {
            match names::zone_apex(&rz.name) {
                Ok(name) if is_reverse(&name) => {}
                Ok(_) => c.error(
                    &format!("reverseZones[{i}].name"),
                    "a reverse zone is below in-addr.arpa or ip6.arpa",
                ),
                Err(message) => c.error(&format!("reverseZones[{i}].name"), message),
            }
        }
        if let Some(soa) = &self.soa {
            for (field, text) in [
                ("soa.primaryNameServer", &soa.primary_name_server),
                ("soa.adminEmail", &soa.admin_email),
            ] {
                if let Err(message) = names::absolute(text, &apex) {
                    c.error(field, message);
                }
            }
        }
        for (i, ns) in self.name_servers.iter().enumerate() {
            match names::absolute(&ns.hostname, &apex) {
                Err(message) => c.error(&format!("nameServers[{i}].hostname"), message),
                Ok(name)
                    if names::in_zone(&name, &apex) && ns.ipv4.is_none() && ns.ipv6.is_none() =>
                {
                    c.error(
                        &format!("nameServers[{i}]"),
                        "a name server inside the zone needs its glue: ipv4 or ipv6",
                    );
                }
                Ok(_) => {}
            }
        }
    }
}

/// Checks `dhcpDerived` of a zone at `apex`: its TTL, suffix and lease file. Its `sources`
/// are resolved when rendering (a name that is no DHCP server there is a warning: routerd's
/// files name servers of kinds this firmware spells differently).
fn validate_dhcp_derived(derived: &DhcpDerived, apex: &Name, c: &mut ExternalCheck<'_, '_, '_>) {
    if derived.ttl.is_some_and(|t| t > records::MAX_TTL) {
        c.error("dhcpDerived.ttl", format!("a TTL is at most {} seconds", records::MAX_TTL));
    }
    if let Err(message) = super::dhcp_derived::suffix(derived.hostname_suffix.as_deref(), apex) {
        c.error("dhcpDerived.hostnameSuffix", message);
    }
    if let Some(path) = &derived.lease_file
        && !path.starts_with('/')
    {
        c.error("dhcpDerived.leaseFile", format!("{path:?} is not an absolute path"));
    }
}

/// Whether `name` is a reverse-mapping name (RFC 1035 §3.5, RFC 3596 §2.5).
fn is_reverse(name: &Name) -> bool {
    let text = name.to_ascii();
    text.ends_with(".in-addr.arpa.") || text.ends_with(".ip6.arpa.")
}

/// The resource kind `DNSZone`.
pub static DNS_ZONE: ExternalKind = ExternalKind::of::<ZoneSpec>(API_VERSION, "DNSZone")
    .with_config_check(super::check::check_file);

/// The `bind.zone` name of `apex` on `server`.
pub fn zone_artifact_name(server: &str, apex: &Name) -> String {
    format!("{server}/{}", apex.to_lowercase())
}

/// The zone clause of `apex` on a primary, granting UPDATEs to `keys`.
pub fn zone_clause(apex: &Name, keys: &[&str]) -> String {
    let zone = apex.to_ascii();
    let zone = zone.trim_end_matches('.');
    let grants: String = keys.iter().map(|k| format!(" grant \"{k}\" zonesub ANY;")).collect();
    format!(
        "zone \"{zone}\" {{\n\ttype primary;\n\tfile \"{file}\";\n\tupdate-policy {{{grants} }};\n}};\n",
        file = zone_file_name(apex),
    )
}

/// The zone file a new zone starts from: `$TTL`, SOA (serial 1), apex NS and in-zone glue
/// (RFC 1035 §5).
///
/// Names of the SOA and the name servers are completed with `origin`, the `DNSZone`'s own zone
/// (so `ns1` is `ns1.lab.example.` in its reverse zones too); glue is written for the name
/// servers inside `apex` only.
pub fn zone_seed(
    apex: &Name,
    origin_zone: &Name,
    ttl: u32,
    soa: Option<&Soa>,
    name_servers: &[NameServer],
) -> String {
    let origin = apex.to_ascii();
    let absolute =
        |text: &str| names::absolute(text, origin_zone).map(|n| n.to_ascii()).unwrap_or_default();
    let mut ns: Vec<(String, &NameServer)> =
        name_servers.iter().map(|n| (absolute(&n.hostname), n)).collect();
    let fallback = NameServer { hostname: "localhost.".into(), ipv4: None, ipv6: None };
    if ns.is_empty() {
        ns.push(("localhost.".into(), &fallback));
    }
    let (mname, rname, refresh, retry, expire, negative) = match soa {
        Some(s) => (
            absolute(&s.primary_name_server),
            absolute(&s.admin_email),
            s.refresh,
            s.retry,
            s.expire,
            s.negative_ttl,
        ),
        None => (
            ns[0].0.clone(),
            format!("hostmaster.{origin}"),
            soa_refresh(),
            soa_retry(),
            soa_expire(),
            soa_negative(),
        ),
    };
    let mut text = format!(
        "; Written once by routerd when the zone was created; BIND keeps it from then on.\n\
         $ORIGIN {origin}\n$TTL {ttl}\n\
         @ IN SOA {mname} {rname} 1 {refresh} {retry} {expire} {negative}\n"
    );
    for (name, _) in &ns {
        text.push_str(&format!("@ IN NS {name}\n"));
    }
    for (name, server) in &ns {
        let inside = Name::from_ascii(name).is_ok_and(|n| names::in_zone(&n, apex));
        if inside {
            if let Some(a) = server.ipv4 {
                text.push_str(&format!("{name} IN A {a}\n"));
            }
            if let Some(a) = server.ipv6 {
                text.push_str(&format!("{name} IN AAAA {a}\n"));
            }
        }
    }
    text
}

/// Declares the RRset `name` holding `rrset` for resource `resource` (`ARecord/www`), and on
/// a remote primary with a TXT registry its owner record ([`crate::owner_records`]), which
/// depends on it (so it is removed after it).
pub(crate) fn ensure_owned_rrset(
    out: &mut Out,
    index: &DnsIndex,
    resource: &str,
    name: &RRsetName,
    rrset: &RRset,
    zone: &ZoneInfo,
) {
    let Some(key) = ensure_rrset(out, name, rrset, zone) else { return };
    let ZoneAt::Remote(server) = &zone.at else { return };
    let Some(registry) = index.registry(server) else { return };
    if registry.is_record(&name.owner) {
        return;
    }
    let Some(owner) = registry.record_name(&name.zone, &name.owner, name.rtype) else {
        return out.warn(format!(
            "{}: its owner record's name is too long; routerd will not delete it",
            name.key_name()
        ));
    };
    let record = RRset::new(zone.ttl, [RData::TXT(records::txt(&registry.text(resource)))]);
    let dep = IntentDep::on(&key, "the owner record of this RRset");
    ensure_rrset_with(out, &rrset_name(zone, owner, RecordType::TXT), &record, zone, vec![dep]);
}

/// Declares the RRset `name` holding `rrset`, depending on its zone; its key.
pub(crate) fn ensure_rrset(
    out: &mut Out,
    name: &RRsetName,
    rrset: &RRset,
    zone: &ZoneInfo,
) -> Option<ArtifactKey> {
    ensure_rrset_with(out, name, rrset, zone, Vec::new())
}

/// [`ensure_rrset`] with `deps` besides the zone's.
fn ensure_rrset_with(
    out: &mut Out,
    name: &RRsetName,
    rrset: &RRset,
    zone: &ZoneInfo,
    mut deps: Vec<IntentDep>,
) -> Option<ArtifactKey> {
    match &zone.at {
        ZoneAt::Local(server) => {
            if let Some(kind) = BIND_ZONE.artifact_kind() {
                let key = ArtifactKey::new(kind, zone_artifact_name(server, &name.zone));
                deps.push(IntentDep::on(&key, "the zone holds the RRset"));
            }
            deps.push(IntentDep::on(
                &server::endpoint_key(&server::local_endpoint(server)),
                "where UPDATEs go",
            ));
        }
        ZoneAt::Remote(server) => {
            deps.push(IntentDep::on(
                &server::endpoint_key(&server::remote_endpoint(server)),
                "where UPDATEs go",
            ));
            if let Some(kind) = DNS_REMOTE_ZONE.artifact_kind() {
                let key = ArtifactKey::new(kind, remote_zone_name(server, &name.zone));
                deps.push(IntentDep::on(&key, "the primary serves the zone"));
            }
        }
    }
    match ExternalArtifactSpec::new(&DNS_RRSET, name.key_name(), rrset) {
        Ok(artifact) => Some(out.ensure(ArtifactSpec::External(artifact), deps)),
        Err(e) => {
            out.warn(format!("RRset {} not rendered: {e}", name.key_name()));
            None
        }
    }
}

/// The RRset name of `owner`/`rtype` in `zone`.
pub(crate) fn rrset_name(zone: &ZoneInfo, owner: Name, rtype: RecordType) -> RRsetName {
    let (side, server) = match &zone.at {
        ZoneAt::Local(s) => (Side::Local, s.clone()),
        ZoneAt::Remote(s) => (Side::Remote, s.clone()),
    };
    RRsetName { side, server, zone: zone.apex.clone(), owner, rtype }
}

/// The reverse name of `address` (RFC 1035 §3.5, RFC 3596 §2.5).
pub fn reverse_name(address: std::net::IpAddr) -> Name {
    Name::from(address)
}

/// dnsmasq sections `server=/<zone>/<server's address>#<port>`, one per apex: the router's
/// resolver (and so the LAN's) answers the zone's names from routerd's BIND.
fn forward_from_dnsmasq(ctx: &RenderCtx<'_>, server_name: &str, apexes: &[Name], out: &mut Out) {
    let server = server::DNS_SERVER
        .resource_kind()
        .and_then(|kind| ctx.config().resources_of(kind).find(|r| r.name == server_name));
    let Some(address) = server
        .and_then(|r| r.external_spec::<server::ServerSpec>())
        .and_then(|spec| server::update_address(ctx.config(), spec))
    else {
        return out.warn("forwardFromDnsmasq: the server has no listen address to forward to");
    };
    let unit = routerd_engine::render::ensure_dnsmasq_unit(ctx, out);
    for apex in apexes {
        let domain = apex.to_ascii().trim_end_matches('.').to_owned();
        let option = DnsmasqOption::DomainServer { domain: domain.clone(), address };
        let section = DnsmasqSectionSpec::from_options(format!("server/{domain}"), [option]);
        out.ensure(
            ArtifactSpec::DnsmasqSection(section),
            vec![IntentDep::on(&unit, "dnsmasq forwards the zone")],
        );
    }
}

/// Renders a `DNSZone`.
pub(crate) struct ZoneRender;

impl KindRender for ZoneRender {
    fn status(&self, res: &Resource, facts: &StatusFacts<'_>) -> KindStatus {
        res.external_spec::<ZoneSpec>()
            .map(|spec| crate::status::zone_status(spec, facts))
            .unwrap_or_default()
    }

    fn render(&self, ctx: &RenderCtx<'_>, res: &Resource, out: &mut Out) {
        let Some(spec) = res.external_spec::<ZoneSpec>() else { return };
        let index = ctx.memo(DnsIndex::build);
        let Some(zone) = index.zone(&res.name) else {
            return out.warn("the zone's server does not resolve; nothing is rendered");
        };
        if spec.dnssec.as_ref().is_some_and(|d| d.enabled) {
            out.warn("dnssec is not supported yet: the zone is served unsigned");
        }
        if spec.records.iter().any(|r| r.ipv4_from.is_some() || r.ipv6_from.is_some()) {
            out.warn("ipv4From and ipv6From are not supported: those addresses are left out");
        }
        let mut reverse = Vec::new();
        if let ZoneAt::Remote(server_name) = &zone.at {
            // The zone itself is the primary's: observed, never changed.
            let name = remote_zone_name(server_name, &zone.apex);
            match ExternalArtifactSpec::new(&DNS_REMOTE_ZONE, name, &RemoteZone::default()) {
                Ok(artifact) => {
                    out.observe(ArtifactSpec::External(artifact));
                }
                Err(e) => out.warn(format!("zone {} not observed: {e}", zone.apex)),
            }
        }
        if let ZoneAt::Local(server_name) = &zone.at {
            let keys = index.update_keys(&res.name);
            let Some(config_kind) = crate::artifacts::BIND_CONFIG.artifact_kind() else { return };
            let deps = vec![
                IntentDep::on(
                    &ArtifactKey::new(config_kind, server::options_name(server_name)),
                    "the server's named.conf includes the zone",
                ),
                IntentDep::on(
                    &ArtifactKey::new(
                        routerd_host::ArtifactKind::SystemdService,
                        server::unit_name(server_name),
                    ),
                    "named serves the zone",
                ),
            ];
            let mut apexes = vec![zone.apex.clone()];
            for rz in &spec.reverse_zones {
                if let Ok(name) = names::zone_apex(&rz.name) {
                    reverse.push(name.clone());
                    apexes.push(name);
                }
            }
            if spec.forward_from_dnsmasq {
                forward_from_dnsmasq(ctx, server_name, &apexes, out);
            }
            for apex in &apexes {
                let seed =
                    zone_seed(apex, &zone.apex, zone.ttl, spec.soa.as_ref(), &spec.name_servers);
                let attrs =
                    BindZone { clause: zone_clause(apex, &keys), seed, ..Default::default() };
                match ExternalArtifactSpec::new(
                    &BIND_ZONE,
                    zone_artifact_name(server_name, apex),
                    &attrs,
                ) {
                    Ok(artifact) => {
                        out.ensure(ArtifactSpec::External(artifact), deps.clone());
                    }
                    Err(e) => out.warn(format!("zone {apex} not rendered: {e}")),
                }
            }
        }
        // routerd's host records: one A and one AAAA RRset per host name, PTRs per address.
        let mut sets = Sets::default();
        let mut ptrs = Ptrs::default();
        // The glue of in-zone name servers is in the zone file from the start; declared here
        // too, it is owned and kept as declared rather than reported foreign.
        for ns in &spec.name_servers {
            let Ok(owner) = names::absolute(&ns.hostname, &zone.apex) else { continue };
            if !names::in_zone(&owner, &zone.apex) || !matches!(zone.at, ZoneAt::Local(_)) {
                continue;
            }
            let owner = owner.to_lowercase();
            if let Some(a) = ns.ipv4 {
                let entry =
                    sets.entry((owner.clone(), RecordType::A)).or_insert((zone.ttl, Vec::new()));
                entry.1.push(RData::A(a.into()));
            }
            if let Some(a) = ns.ipv6 {
                let entry =
                    sets.entry((owner.clone(), RecordType::AAAA)).or_insert((zone.ttl, Vec::new()));
                entry.1.push(RData::AAAA(a.into()));
            }
        }
        for r in &spec.records {
            let Ok(owner) = names::absolute(&r.hostname, &zone.apex) else { continue };
            let owner = owner.to_lowercase();
            let ttl = r.ttl.unwrap_or(zone.ttl);
            let addresses = [
                r.ipv4
                    .as_deref()
                    .and_then(|a| a.parse::<std::net::Ipv4Addr>().ok())
                    .map(std::net::IpAddr::V4),
                r.ipv6
                    .as_deref()
                    .and_then(|a| a.parse::<std::net::Ipv6Addr>().ok())
                    .map(std::net::IpAddr::V6),
            ];
            for address in addresses.into_iter().flatten() {
                let (rtype, rdata) = match address {
                    std::net::IpAddr::V4(a) => (RecordType::A, RData::A(a.into())),
                    std::net::IpAddr::V6(a) => (RecordType::AAAA, RData::AAAA(a.into())),
                };
                let entry = sets.entry((owner.clone(), rtype)).or_insert((ttl, Vec::new()));
                entry.1.push(rdata);
                let rev = reverse_name(address).to_lowercase();
                if let Some(apex) = reverse.iter().find(|z| names::in_zone(&rev, z)) {
                    let entry = ptrs.entry(rev).or_insert((ttl, apex.clone(), Vec::new()));
                    entry.2.push(RData::PTR(PTR(owner.clone())));
                }
            }
        }
        add_lease_names(ctx, res, zone, &reverse, &mut sets, &mut ptrs, out);
        let resource = format!("{}/{}", res.kind, res.name);
        for ((owner, rtype), (ttl, rdata)) in sets {
            let name = rrset_name(zone, owner, rtype);
            ensure_owned_rrset(out, &index, &resource, &name, &RRset::new(ttl, rdata), zone);
        }
        for (owner, (ttl, apex, rdata)) in ptrs {
            let rzone = ZoneInfo { apex: apex.clone(), ttl: zone.ttl, at: zone.at.clone() };
            let name = rrset_name(&rzone, owner, RecordType::PTR);
            ensure_owned_rrset(out, &index, &resource, &name, &RRset::new(ttl, rdata), &rzone);
        }
    }
}

/// The RRsets of a zone's render by owner and type: TTL and data.
type Sets = std::collections::BTreeMap<(Name, RecordType), (u32, Vec<RData>)>;
/// The PTR RRsets of a zone's render by owner: TTL, reverse zone and data.
type Ptrs = std::collections::BTreeMap<Name, (u32, Name, Vec<RData>)>;

/// Adds the names the `dhcpDerived` of zone resource `res` takes from the DHCP leases to
/// `sets` (one A or AAAA RRset each) and their PTRs to `ptrs` (when the address is in one of
/// the `reverse` zones and no declared PTR is there). Names already in `sets` (the zone's
/// `records` and glue) or declared by a record resource of the zone are left to the config.
fn add_lease_names(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    zone: &ZoneInfo,
    reverse: &[Name],
    sets: &mut Sets,
    ptrs: &mut Ptrs,
    out: &mut Out,
) {
    let Some(derived) = res.external_spec::<ZoneSpec>().and_then(|s| s.dhcp_derived.as_ref())
    else {
        return;
    };
    let index = ctx.memo(DnsIndex::build);
    let records = ctx.memo(|config| super::dhcp_derived::DeclaredNames::build(config, &index));
    let in_sets: std::collections::HashSet<&Name> = sets.keys().map(|(owner, _)| owner).collect();
    let declared = |owner: &Name| in_sets.contains(owner) || records.contains(&res.name, owner);
    let names = super::dhcp_derived::lease_names(ctx, derived, &zone.apex, &declared, out);
    let ttl = derived.ttl.unwrap_or(zone.ttl);
    // Newest lease first: the PTR of an address two names share is the newest's.
    for name in names {
        let (rtype, rdata) = match name.address {
            std::net::IpAddr::V4(a) => (RecordType::A, RData::A(a.into())),
            std::net::IpAddr::V6(a) => (RecordType::AAAA, RData::AAAA(a.into())),
        };
        let rev = reverse_name(name.address).to_lowercase();
        if let Some(apex) = reverse.iter().find(|z| names::in_zone(&rev, z))
            && !ptrs.contains_key(&rev)
        {
            ptrs.insert(rev, (ttl, apex.clone(), vec![RData::PTR(PTR(name.owner.clone()))]));
        }
        sets.insert((name.owner, rtype), (ttl, vec![rdata]));
    }
}

/// Renders a record resource (any of the eight kinds) into its RRset.
pub(crate) struct RecordRender;

impl KindRender for RecordRender {
    fn status(&self, _res: &Resource, facts: &StatusFacts<'_>) -> KindStatus {
        crate::status::record_status(facts)
    }

    fn render(&self, ctx: &RenderCtx<'_>, res: &Resource, out: &mut Out) {
        let index = ctx.memo(DnsIndex::build);
        let Some(zone) = records::zone_of(res).and_then(|z| index.zone(z)) else {
            return out.warn("the record's zone does not resolve; nothing is rendered");
        };
        match records::rrset_of(res, &zone.apex) {
            Some(Ok(set)) => {
                let name = rrset_name(zone, set.owner.to_lowercase(), set.rtype);
                let rrset = RRset::new(set.ttl.unwrap_or(zone.ttl), set.rdata);
                let resource = format!("{}/{}", res.kind, res.name);
                ensure_owned_rrset(out, &index, &resource, &name, &rrset, zone);
            }
            Some(Err((field, message))) => out.warn(format!("{field}: {message}")),
            None => {}
        }
    }
}
