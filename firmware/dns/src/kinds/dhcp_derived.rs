//! A `DNSZone`'s `dhcpDerived`: the names of the clients of the router's DHCP servers, taken
//! from dnsmasq's leases (a runtime value, ADR 0008; the session reads the lease file with
//! each observation). Pure: the leases come through [`RenderCtx::dhcp_leases`], which also
//! records that the render reads them.
//!
//! Which leases give a name: live ones (the runtime values hold no others) with a host name,
//! of a DHCP server `sources` names (an IPv4 lease inside the range of one of its
//! `IPv4DHCPScope`s, any IPv6 lease for an `IPv6DHCPServer`), never a temporary IPv6 address.
//! The host name becomes one label under `hostnameSuffix` (default the zone). A name the
//! config declares (`records`, glue of `nameServers`, a record resource of the zone) is the
//! config's: the lease is skipped, without a warning. Of two leases giving one name and
//! family, the one that ends last counts.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

use hickory_proto::rr::Name;
use routerd_engine::render::{Out, RenderCtx};
use routerd_engine::runtime::DhcpLease;
use routerd_model::Config;
use routerd_model::spec::all::{Ipv4DhcpScopeSpec, Ipv4DhcpServerSpec, Ipv6DhcpServerSpec};

use super::index::DnsIndex;
use super::zone::DhcpDerived;
use super::{names, records};

/// Labels a lease never takes, whatever a client calls itself: `localhost`, and the names
/// clients look up to configure themselves (`wpad`, web proxy auto-discovery; `isatap`, RFC
/// 5214), which a client naming itself so would otherwise answer for the whole LAN (Windows
/// blocks both by default, its "global query block list").
const RESERVED_LABELS: [&str; 3] = ["localhost", "wpad", "isatap"];

/// A name one lease gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LeaseName {
    /// The owner: the client's label under the suffix, lowercased.
    pub owner: Name,
    /// The leased address (A or AAAA).
    pub address: IpAddr,
    /// When the lease ends, seconds since the Unix epoch; `None`: never.
    pub expiry: Option<u64>,
}

/// The DHCP servers `sources` names, as the leases they grant are told apart: IPv4 ranges of
/// their scopes, and whether an IPv6 server is among them.
#[derive(Debug, Default, PartialEq, Eq)]
struct Sources {
    ranges: Vec<(Ipv4Addr, Ipv4Addr)>,
    ipv6: bool,
}

impl Sources {
    /// Whether `address` is granted by one of these servers.
    fn grant(&self, address: IpAddr) -> bool {
        match address {
            IpAddr::V4(a) => self.ranges.iter().any(|(start, end)| (*start..=*end).contains(&a)),
            IpAddr::V6(_) => self.ipv6,
        }
    }
}

/// The owner names the config declares per zone resource: record resources' (any type), as
/// the zone's own `records` and glue are known to its render. Built once per render pass.
#[derive(Debug, Default)]
pub(crate) struct DeclaredNames {
    by_zone: HashMap<String, HashSet<Name>>,
}

impl DeclaredNames {
    /// The names record resources of `config` declare.
    pub fn build(config: &Config, index: &DnsIndex) -> Self {
        let mut declared = Self::default();
        for r in &config.spec.resources {
            let Some(zone_name) = records::zone_of(r) else { continue };
            let Some(zone) = index.zone(zone_name) else { continue };
            if let Some(Ok(set)) = records::rrset_of(r, &zone.apex) {
                declared
                    .by_zone
                    .entry(zone_name.to_owned())
                    .or_default()
                    .insert(set.owner.to_lowercase());
            }
        }
        declared
    }

    /// Whether a record resource of zone resource `zone` declares `owner` (lowercased).
    pub fn contains(&self, zone: &str, owner: &Name) -> bool {
        self.by_zone.get(zone).is_some_and(|names| names.contains(owner))
    }
}

/// The lease file `derived` reads, below the render's target root: `leaseFile`, else routerd's
/// own dnsmasq's.
pub(crate) fn lease_file(ctx: &RenderCtx<'_>, derived: &DhcpDerived) -> PathBuf {
    match derived.lease_file.as_deref() {
        Some(path) => ctx.target.path(path),
        None => ctx.target.dnsmasq_leases(),
    }
}

/// The owner names leases get under (`hostnameSuffix`, default the zone `apex`): an absolute
/// name (trailing dot) must be inside the zone; one without the dot is taken as written when
/// it is the zone or inside it (routerd's examples repeat the zone), else relative to the zone
/// (`dhcp` is `dhcp.<zone>`).
///
/// Errors: not a domain name, or outside the zone.
pub fn suffix(text: Option<&str>, apex: &Name) -> Result<Name, String> {
    let Some(text) = text.map(|t| t.trim_start_matches('.')).filter(|t| !t.is_empty()) else {
        return Ok(apex.clone());
    };
    let outside = |name: &Name| format!("{name} is outside zone {apex}");
    if text.ends_with('.') {
        let name = names::absolute(text, apex)?.to_lowercase();
        return if names::in_zone(&name, apex) { Ok(name) } else { Err(outside(&name)) };
    }
    if text != "@"
        && let Ok(name) = names::zone_apex(text)
        && names::in_zone(&name, apex)
    {
        return Ok(name);
    }
    let name = names::absolute(text, apex)?.to_lowercase();
    if names::in_zone(&name, apex) { Ok(name) } else { Err(outside(&name)) }
}

/// The names the leases give zone resource `zone_name` (apex `apex`), newest lease first for
/// each name and family; `declared` tells the names the config declares (lowercased owners),
/// which leases never take.
///
/// Warnings (into `out`): a source that names no DHCP server, no sources at all, a suffix that
/// does not resolve. Then no lease is read for what they concern.
pub(crate) fn lease_names(
    ctx: &RenderCtx<'_>,
    derived: &DhcpDerived,
    apex: &Name,
    declared: &dyn Fn(&Name) -> bool,
    out: &mut Out,
) -> Vec<LeaseName> {
    let sources = resolve_sources(ctx.config(), &derived.sources, out);
    if sources == Sources::default() {
        return Vec::new();
    }
    let suffix = match suffix(derived.hostname_suffix.as_deref(), apex) {
        Ok(suffix) => suffix,
        Err(message) => {
            out.warn(format!("dhcpDerived.hostnameSuffix: {message}; no names come from leases"));
            return Vec::new();
        }
    };
    let leases = ctx.dhcp_leases(&lease_file(ctx, derived));
    names_of(leases, &sources, &suffix, declared)
}

/// [`lease_names`] over `leases` (live ones) granted by `sources`.
fn names_of(
    leases: &[DhcpLease],
    sources: &Sources,
    suffix: &Name,
    declared: &dyn Fn(&Name) -> bool,
) -> Vec<LeaseName> {
    let mut chosen: BTreeMap<(Name, bool), LeaseName> = BTreeMap::new();
    for lease in leases {
        if lease.temporary || !sources.grant(lease.address) {
            continue;
        }
        let Some(label) = lease.hostname.as_deref().and_then(names::host_label) else { continue };
        if RESERVED_LABELS.contains(&label.as_str()) {
            continue;
        }
        let Ok(owner) = names::absolute(&label, suffix).map(|n| n.to_lowercase()) else {
            continue;
        };
        if declared(&owner) {
            continue;
        }
        let name = LeaseName { owner, address: lease.address, expiry: lease.expiry };
        let key = (name.owner.clone(), name.address.is_ipv6());
        match chosen.get(&key) {
            Some(held) if !ends_later(name.expiry, held.expiry) => {}
            _ => {
                chosen.insert(key, name);
            }
        }
    }
    let mut names: Vec<LeaseName> = chosen.into_values().collect();
    // Newest first: of two names for one address, the PTR is the newest's.
    names.sort_by(|a, b| {
        let end = |e: Option<u64>| e.unwrap_or(u64::MAX);
        end(b.expiry).cmp(&end(a.expiry)).then_with(|| a.owner.cmp(&b.owner))
    });
    names
}

/// Whether a lease ending at `a` ends after one ending at `b` (`None`: never ends).
fn ends_later(a: Option<u64>, b: Option<u64>) -> bool {
    a.unwrap_or(u64::MAX) > b.unwrap_or(u64::MAX)
}

/// The servers `sources` names: a resource name, or routerd's `<Kind>/<name>` reference (the
/// part after the last `/` names the server). A name that is no `IPv4DHCPServer` or
/// `IPv6DHCPServer` is a warning.
fn resolve_sources(config: &Config, sources: &[String], out: &mut Out) -> Sources {
    let mut resolved = Sources::default();
    if sources.is_empty() {
        out.warn("dhcpDerived has no sources: no names come from leases");
    }
    for (i, source) in sources.iter().enumerate() {
        let name = source.rsplit('/').next().unwrap_or_default();
        let v4 = config.spec::<Ipv4DhcpServerSpec>(name).is_some();
        let v6 = config.spec::<Ipv6DhcpServerSpec>(name).is_some();
        if !v4 && !v6 {
            out.warn(format!(
                "dhcpDerived.sources[{i}]: {source:?} names no IPv4DHCPServer or IPv6DHCPServer; \
                 no names come from it"
            ));
        }
        resolved.ipv6 |= v6;
        if v4 {
            for (_, scope) in config.specs::<Ipv4DhcpScopeSpec>() {
                if scope.server != name {
                    continue;
                }
                let start = scope.range_start.trim().parse::<Ipv4Addr>();
                let end = scope.range_end.trim().parse::<Ipv4Addr>();
                if let (Ok(start), Ok(end)) = (start, end) {
                    resolved.ranges.push((start, end));
                }
            }
        }
    }
    resolved
}

#[cfg(test)]
#[path = "dhcp_derived_tests.rs"]
mod tests;
