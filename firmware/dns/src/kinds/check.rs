//! The DNS rules between resources (design brief §1, "Validation rejects"), run once per file:
//! one owner per RRset `(server, zone, name, type)`, no CNAME beside other data or at the
//! apex, no name outside its zone, no apex NS (the zone's `nameServers` is), one zone per
//! apex on a server, and no `listen` socket on an interface where dnsmasq holds port 53.

use std::collections::{HashMap, HashSet};

use hickory_proto::rr::{Name, RecordType};
use routerd_model::Resource;
use routerd_model::external::ConfigCheck;
use routerd_model::spec::all::{Ipv4DhcpScopeSpec, Ipv4DhcpServerSpec, Ipv6DhcpServerSpec};

use super::index::{DnsIndex, ZoneAt};
use super::server::{Role, ServerSpec};
use super::zone::ZoneSpec;
use super::{names, records};

/// Who first claimed an RRset: the resource and the field.
struct Claim<'a> {
    resource: &'a Resource,
    field: String,
}

/// The file-wide check, registered on `DNSZone` ([`super::zone::DNS_ZONE`]).
pub fn check_file(c: &mut ConfigCheck<'_, '_>) {
    let resources: Vec<&Resource> = c.resources().collect();
    let index = DnsIndex::of(resources.iter().copied());
    let mut owners: HashMap<(ZoneAt, Name, RecordType), Claim<'_>> = HashMap::new();
    let mut apexes: HashMap<(ZoneAt, Name), &Resource> = HashMap::new();
    let mut errors: Vec<(&Resource, String, String)> = Vec::new();

    let secondaries: HashSet<&str> = resources
        .iter()
        .filter(|r| r.external_spec::<ServerSpec>().is_some_and(|s| s.role == Role::Secondary))
        .map(|r| r.name.as_str())
        .collect();
    for r in &resources {
        let Some(spec) = r.external_spec::<ZoneSpec>() else { continue };
        let Some(zone) = index.zone(&r.name) else { continue };
        if let ZoneAt::Local(server) = &zone.at
            && secondaries.contains(server.as_str())
        {
            errors.push((
                r,
                "server".into(),
                format!("server {server:?} is a secondary: its zones come from its primaries' catalog zones"),
            ));
        }
        for (i, ns) in spec.name_servers.iter().enumerate() {
            let Ok(owner) = names::absolute(&ns.hostname, &zone.apex) else { continue };
            if !names::in_zone(&owner, &zone.apex) {
                continue;
            }
            let field = format!("nameServers[{i}].hostname");
            for (set, rtype) in
                [(ns.ipv4.is_some(), RecordType::A), (ns.ipv6.is_some(), RecordType::AAAA)]
            {
                let key = (zone.at.clone(), owner.to_lowercase(), rtype);
                if set
                    && let Some(first) = owners.get(&key)
                    && !std::ptr::eq(first.resource, *r)
                {
                    errors.push((r, field.clone(), owned_by(&key.1, rtype, first)));
                } else if set {
                    owners.entry(key).or_insert(Claim { resource: r, field: field.clone() });
                }
            }
        }
        let mut zone_apexes = vec![zone.apex.clone()];
        zone_apexes
            .extend(spec.reverse_zones.iter().filter_map(|z| names::zone_apex(&z.name).ok()));
        for (i, apex) in zone_apexes.into_iter().enumerate() {
            let field =
                if i == 0 { "zone".to_owned() } else { format!("reverseZones[{}].name", i - 1) };
            if let Some(first) = apexes.insert((zone.at.clone(), apex.clone()), r) {
                errors.push((
                    r,
                    field,
                    format!(
                        "zone {apex} is already declared by {} (line {})",
                        first.id(),
                        first.location.line
                    ),
                ));
            }
        }
        for (i, record) in spec.records.iter().enumerate() {
            let Ok(owner) = names::absolute(&record.hostname, &zone.apex) else { continue };
            let field = format!("records[{i}].hostname");
            if !names::in_zone(&owner, &zone.apex) {
                errors.push((r, field, format!("{owner} is outside zone {}", zone.apex)));
                continue;
            }
            for (set, rtype) in
                [(record.ipv4.is_some(), RecordType::A), (record.ipv6.is_some(), RecordType::AAAA)]
            {
                // Several entries of one host name in one zone make one RRset together.
                let key = (zone.at.clone(), owner.to_lowercase(), rtype);
                if set
                    && let Some(first) = owners.get(&key)
                    && !std::ptr::eq(first.resource, *r)
                {
                    errors.push((r, field.clone(), owned_by(&key.1, rtype, first)));
                } else if set {
                    owners.entry(key).or_insert(Claim { resource: r, field: field.clone() });
                }
            }
        }
    }
    for r in &resources {
        let Some(zone_name) = records::zone_of(r) else { continue };
        let Some(zone) = index.zone(zone_name) else { continue };
        let Some(Ok(set)) = records::rrset_of(r, &zone.apex) else { continue };
        let (rtype, owner) = (set.rtype, set.owner.to_lowercase());
        if !names::in_zone(&owner, &zone.apex) {
            errors.push((r, "name".into(), format!("{owner} is outside zone {}", zone.apex)));
            continue;
        }
        if owner == zone.apex {
            match rtype {
                RecordType::CNAME => {
                    errors.push((r, "name".into(), "a CNAME cannot be at the zone apex (RFC 1912 §2.4): the apex has SOA and NS".into()));
                    continue;
                }
                RecordType::NS => {
                    errors.push((r, "name".into(), "the apex NS set is the zone's nameServers; an NSRecord delegates a name below the apex".into()));
                    continue;
                }
                _ => {}
            }
        }
        let key = (zone.at.clone(), owner.clone(), rtype);
        if let Some(first) = owners.get(&key) {
            errors.push((r, "name".into(), owned_by(&owner, rtype, first)));
        } else {
            owners.insert(key, Claim { resource: r, field: "name".into() });
        }
    }
    // A CNAME owns its name alone (RFC 1034 §3.6.2, RFC 2181 §10.1).
    let mut types: HashMap<(ZoneAt, Name), Vec<RecordType>> = HashMap::new();
    for (at, owner, rtype) in owners.keys() {
        types.entry((at.clone(), owner.clone())).or_default().push(*rtype);
    }
    for ((at, owner), list) in &types {
        if list.len() > 1 && list.contains(&RecordType::CNAME) {
            let key = (at.clone(), owner.clone(), RecordType::CNAME);
            if let Some(claim) = owners.get(&key) {
                let others: Vec<String> = list
                    .iter()
                    .filter(|t| **t != RecordType::CNAME)
                    .map(ToString::to_string)
                    .collect();
                errors.push((
                    claim.resource,
                    claim.field.clone(),
                    format!("{owner} has a CNAME and {} data; a CNAME's name holds nothing else (RFC 1034 §3.6.2)", others.join(", ")),
                ));
            }
        }
    }
    dnsmasq_sockets(&resources, &mut errors);
    errors.sort_by(|a, b| (a.0.location.line, &a.1).cmp(&(b.0.location.line, &b.1)));
    errors.dedup_by(|a, b| std::ptr::eq(a.0, b.0) && a.1 == b.1);
    for (resource, field, message) in errors {
        c.error(resource, &field, message);
    }
}

fn owned_by(owner: &Name, rtype: RecordType, first: &Claim<'_>) -> String {
    format!(
        "the RRset {owner} {rtype} is already owned by {} ({}, line {}); one resource owns one RRset: list every value there",
        first.resource.id(),
        first.field,
        first.resource.location.line
    )
}

/// `listen` entries on port 53 of an interface dnsmasq serves (a DHCP server's or scope's
/// interface: dnsmasq binds port 53 there too, `--bind-dynamic`).
fn dnsmasq_sockets<'a>(
    resources: &[&'a Resource],
    errors: &mut Vec<(&'a Resource, String, String)>,
) {
    let mut held: HashSet<&str> = HashSet::new();
    for r in resources {
        if let Some(s) = r.spec_as::<Ipv4DhcpServerSpec>() {
            held.extend(s.listen_interfaces.iter().map(String::as_str));
        }
        if let Some(s) = r.spec_as::<Ipv6DhcpServerSpec>() {
            held.extend(s.listen_interfaces.iter().map(String::as_str));
        }
        if let Some(s) = r.spec_as::<Ipv4DhcpScopeSpec>() {
            held.insert(s.interface.as_str());
        }
    }
    for r in resources {
        let Some(spec) = r.external_spec::<ServerSpec>() else { continue };
        for (i, l) in spec.listen.iter().enumerate() {
            if l.port == 53 && l.interface.as_deref().is_some_and(|i| held.contains(i)) {
                errors.push((
                    r,
                    format!("listen[{i}].port"),
                    format!(
                        "dnsmasq answers DNS on port 53 of {:?} (it serves DHCP there): use another port, \
                         or forward the zone from dnsmasq (forwardFromDnsmasq)",
                        l.interface.as_deref().unwrap_or_default()
                    ),
                ));
            }
        }
    }
}
