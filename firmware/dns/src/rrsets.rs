//! The `dns` family: inventory and configurator of `dns.rrset` (design brief §3).
//!
//! Inventory reads each zone that holds a wanted RRset by zone transfer (AXFR with TSIG),
//! cached by SOA serial, and lists every RRset in it (foreign ones too, so the engine reports
//! them; never SOA, the apex NS set or DNSSEC records, which routerd never manages). The
//! configurator replaces or deletes whole RRsets with RFC 2136 UPDATEs, as few messages as fit
//! ([`crate::wire::update`]); creates come in batches of up to [`CREATE_BATCH`].
//!
//! Where a zone's UPDATEs go is its server's block of the endpoint file
//! ([`crate::artifacts::ENDPOINTS_FILE`]): `address <ip>#<port>` and `key <key file>`. A zone
//! whose server has no block yet has nothing of routerd's in it (the block is written before
//! any RRset); a zone that cannot be read lists each wanted RRset as unobserved, so the engine
//! neither forgets the ledger's entries nor believes them gone.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use hickory_proto::rr::{Name, RecordType};
use routerd_host::kinds::external::ExternalArtifactSpec;
use routerd_host::{
    ApplyWith, Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, Backend, HostError, Netns, Target,
};

use crate::artifacts::{
    CONF_DIR, DATA_DIR, DNS_REMOTE_ZONE, DNS_RRSET, ENDPOINTS_FILE, RRset, RRsetName,
    RRsetNameParts, RemoteZone, Side, zone_file_name,
};
use crate::owner_records::Registry as OwnerRegistry;
use crate::wire::{self, Endpoint, RRsetChange, TsigKey, WireError};

/// How many RRset creates, modifies or deletes one call takes (the wire splits them into
/// messages that fit).
pub const CREATE_BATCH: usize = 2000;
/// How long one exchange with a server may take.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// A zone as last transferred: its RRsets as the artifacts observe lists, shared with every
/// observation while the serial stays.
struct Cached {
    serial: u32,
    sets: ZoneSets,
}

/// The RRsets of one zone, as [`Backend::observe_shared`] hands them out.
type ZoneSets = Arc<Vec<Arc<Artifact>>>;

/// The `dns` family of one target and namespace.
pub struct DnsBackend {
    target: Target,
    netns: Netns,
    /// Zones by `side:server/zone.`, so a zone whose serial did not move is not transferred.
    cache: Mutex<HashMap<String, Cached>>,
    /// CNAME RRsets the server ignored (RFC 2136 §3.4.2.2), by artifact name, with the zone's
    /// serial then: not sent again while the zone has not changed.
    ignored: Mutex<HashMap<String, u32>>,
}

/// A zone's RRsets, grouped for one server.
type ZoneKey = (Side, String, Name);

/// One block of the endpoints file: address, key file and TXT registry.
type EndpointBlock = (Option<SocketAddr>, Option<String>, Option<OwnerRegistry>);

/// Changes by zone (`(side, server, zone)`), with their position in the call.
type ByZone = BTreeMap<(u8, String, String), Vec<(usize, RRsetName, RRsetChange)>>;

impl DnsBackend {
    /// The backend for `target`, talking from inside `netns`.
    pub fn new(target: &Target, netns: &Netns) -> Self {
        Self {
            target: target.clone(),
            netns: netns.clone(),
            cache: Mutex::new(HashMap::new()),
            ignored: Mutex::new(HashMap::new()),
        }
    }

    /// The endpoint blocks of the endpoint file: block name → (address, key file).
    fn endpoints(&self) -> HashMap<String, (Option<SocketAddr>, Option<String>)> {
        self.endpoint_blocks().into_iter().map(|(b, (a, k, _))| (b, (a, k))).collect()
    }

    /// The TXT ownership registry of external server `server`, from its endpoint block's
    /// `registry <prefix> <owner id>` line.
    fn registry(&self, server: &str) -> Option<OwnerRegistry> {
        self.endpoint_blocks().remove(&block_name(Side::Remote, server)).and_then(|(.., r)| r)
    }

    /// Each block of the endpoints file: address, key file, registry.
    fn endpoint_blocks(&self) -> HashMap<String, EndpointBlock> {
        let path = self.target.path(ENDPOINTS_FILE);
        let Ok(text) = std::fs::read_to_string(path) else { return HashMap::new() };
        routerd_host::files::blocks(&text)
            .into_iter()
            .map(|(block, lines)| {
                let mut address = None;
                let mut key = None;
                let mut registry = None;
                for line in lines {
                    if let Some((prefix, owner_id)) =
                        line.strip_prefix("registry ").and_then(|r| r.split_once(' '))
                    {
                        registry = Some(OwnerRegistry {
                            prefix: prefix.to_owned(),
                            owner_id: owner_id.trim().to_owned(),
                        });
                    }
                    if let Some(a) = line.strip_prefix("address ") {
                        address =
                            a.replacen('#', ":", 1).parse::<SocketAddr>().ok().or_else(|| {
                                // IPv6: `2001:db8::1#53`.
                                let (ip, port) = a.rsplit_once('#')?;
                                Some(SocketAddr::new(ip.parse().ok()?, port.parse().ok()?))
                            });
                    } else if let Some(k) = line.strip_prefix("key ") {
                        key = Some(k.to_owned());
                    }
                }
                (block, (address, key, registry))
            })
            .collect()
    }

    /// The endpoint of `server` on `side`, `Ok(None)` when it has no block yet.
    ///
    /// Errors: the block is unreadable, or its key file.
    fn endpoint(&self, side: Side, server: &str) -> Result<Option<Endpoint>, String> {
        let block = block_name(side, server);
        let Some((address, key)) = self.endpoints().remove(&block) else { return Ok(None) };
        let address =
            address.ok_or_else(|| format!("{ENDPOINTS_FILE}: block {block} has no address"))?;
        let key = match key {
            None => None,
            Some(path) => {
                let text =
                    std::fs::read_to_string(&path).map_err(|e| format!("key file {path}: {e}"))?;
                Some(TsigKey::parse_key_file(&text).map_err(|e| format!("key file {path}: {e}"))?)
            }
        };
        Ok(Some(Endpoint { address, key }))
    }

    /// Whether a local zone is served from routerd's files: its zone file exists and its
    /// section is in the server's `zones.conf`. Before that nothing of it can be on the
    /// server; after its section is removed, its RRsets went with it (a zone's removal drops
    /// them from the ledger with no UPDATE each: the brief's cascade).
    fn local_zone_exists(&self, server: &str, zone: &Name) -> bool {
        let file = self.target.path(&format!("{DATA_DIR}/{server}/{}", zone_file_name(zone)));
        let zones_conf = self.target.path(&format!("{CONF_DIR}/{server}/zones.conf"));
        let marker = format!("# routerd zone {}", zone.to_lowercase());
        file.exists()
            && std::fs::read_to_string(zones_conf)
                .is_ok_and(|t| t.lines().any(|l| l.trim_end() == marker))
    }

    /// Every RRset routerd may manage in `zone` on `ep`, by artifact name.
    ///
    /// Errors: the reason the zone could not be read (`TsigBadSig: …`).
    async fn read_zone(&self, key: &ZoneKey, ep: &Endpoint) -> Result<ZoneSets, String> {
        let unread = |e: WireError| format!("{}: {e}", e.reason());
        let (side, server, zone) = key;
        let cache_key = format!("{}/{zone}", block_name(*side, server));
        let serial = wire::soa_serial(&self.netns, ep, zone, TIMEOUT).await.map_err(unread)?;
        if let Some(cached) = self.lock().get(&cache_key)
            && cached.serial == serial
        {
            return Ok(Arc::clone(&cached.sets));
        }
        let contents = wire::axfr(&self.netns, ep, zone, TIMEOUT).await.map_err(unread)?;
        let mut grouped: BTreeMap<(Name, RecordType), (u32, Vec<hickory_proto::rr::RData>)> =
            BTreeMap::new();
        for record in contents.records {
            let rtype = record.record_type();
            let owner = record.name.to_lowercase();
            if !manageable(rtype) || (rtype == RecordType::NS && &owner == zone) {
                continue;
            }
            let entry = grouped.entry((owner, rtype)).or_insert((record.ttl, Vec::new()));
            entry.0 = entry.0.min(record.ttl);
            entry.1.push(record.data);
        }
        let sets: Vec<Arc<Artifact>> = grouped
            .into_iter()
            .map(|((owner, rtype), (ttl, rdata))| {
                let name = RRsetName {
                    side: *side,
                    server: server.clone(),
                    zone: zone.clone(),
                    owner,
                    rtype,
                };
                let spec =
                    ExternalArtifactSpec::new(&DNS_RRSET, name.key_name(), &RRset::new(ttl, rdata))
                        .map_err(|e| format!("RRsets of {zone}: {e}"))?;
                Ok(Arc::new(Artifact::new(ArtifactSpec::External(spec))))
            })
            .collect::<Result<_, String>>()?;
        let sets = Arc::new(sets);
        self.lock().insert(cache_key, Cached { serial: contents.serial, sets: Arc::clone(&sets) });
        Ok(sets)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Cached>> {
        self.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Applies `artifacts` (creates or modifies: each replaces its RRset; `delete` empties it),
    /// grouped by zone, one result per artifact in order.
    async fn apply(
        &self,
        artifacts: &[&Artifact],
        delete: bool,
        op: &'static str,
    ) -> Vec<Result<(), HostError>> {
        let mut results: Vec<Option<Result<(), HostError>>> =
            artifacts.iter().map(|_| None).collect();
        let mut zones: ByZone = BTreeMap::new();
        for (i, artifact) in artifacts.iter().enumerate() {
            match change_of(artifact, delete, op == "create") {
                Ok((name, change)) => {
                    let side = u8::from(name.side == Side::Remote);
                    zones
                        .entry((side, name.server.clone(), name.zone.to_ascii()))
                        .or_default()
                        .push((i, name, change));
                }
                Err(e) => results[i] = Some(Err(e)),
            }
        }
        for (_, group) in zones {
            let Some((_, first, _)) = group.first() else { continue };
            let (side, server, zone) = (first.side, first.server.clone(), first.zone.clone());
            let ep = match self.endpoint(side, &server) {
                Ok(Some(ep)) => ep,
                Ok(None) => {
                    let message = format!(
                        "no endpoint for {} in {ENDPOINTS_FILE}",
                        block_name(side, &server)
                    );
                    for (i, ..) in &group {
                        results[*i] = Some(Err(service(&artifacts[*i].key, op, message.clone())));
                    }
                    continue;
                }
                Err(message) => {
                    for (i, ..) in &group {
                        results[*i] = Some(Err(service(&artifacts[*i].key, op, message.clone())));
                    }
                    continue;
                }
            };
            let zone_key: ZoneKey = (side, server.clone(), first.zone.clone());
            let held = if delete {
                let unconfirmed = self.unconfirmed_deletes(&ep, &zone_key, &group).await;
                for (i, message) in &unconfirmed {
                    let e = HostError::Refused {
                        key: artifacts[*i].key.clone(),
                        reason: crate::status::words::OWNER_RECORD_MISSING,
                        message: message.clone(),
                    };
                    results[*i] = Some(Err(e));
                }
                unconfirmed.into_iter().map(|(i, _)| i).collect()
            } else {
                self.still_ignored(&ep, &zone_key, &group).await
            };
            let sent: Vec<&(usize, RRsetName, RRsetChange)> =
                group.iter().filter(|(i, ..)| !held.contains(i)).collect();
            let changes: Vec<RRsetChange> = sent.iter().map(|(_, _, c)| c.clone()).collect();
            // Only a local named may still be loading a zone this apply added.
            let wait_for_zone = !delete && side == Side::Local;
            let mut outcomes = self.send(&ep, &zone, &changes, wait_for_zone).await;
            if delete && side == Side::Local {
                // The zone's section went first: its RRsets went with it.
                for outcome in &mut outcomes {
                    if matches!(outcome, Err(WireError::NotAuthoritative { .. })) {
                        *outcome = Ok(());
                    }
                }
            }
            // The zone changed: the next observe transfers it again.
            self.lock().remove(&format!("{}/{zone}", block_name(side, &server)));
            if !delete {
                self.read_back_cnames(&ep, &zone_key, &sent, &mut outcomes).await;
            }
            for ((i, ..), outcome) in sent.iter().zip(outcomes) {
                results[*i] = Some(outcome.map_err(|e| refused(&artifacts[*i].key, op, &e)));
            }
            for (i, name, _) in group.iter().filter(|(i, ..)| held.contains(i) && !delete) {
                let e = ignored_error(&ep, name);
                results[*i] = Some(Err(refused(&artifacts[*i].key, op, &e)));
            }
        }
        results.into_iter().map(|r| r.unwrap_or(Ok(()))).collect()
    }

    /// The `dns.remoteZone`s of `wanted` that their primary serves (or that cannot be read,
    /// with the reason), each by an SOA query.
    async fn remote_zones(&self, wanted: &[ArtifactKey]) -> Result<Vec<Artifact>, HostError> {
        let mut out = Vec::new();
        for key in wanted {
            let Some((server, zone)) =
                key.name.strip_prefix("remote:").and_then(|r| r.split_once('/'))
            else {
                continue;
            };
            let Ok(zone) = Name::from_ascii(zone) else { continue };
            let attrs = match self.endpoint(Side::Remote, server) {
                // Not read yet (its endpoint comes with this apply): present, so its RRsets are
                // tried after the endpoint, and the next observation reads it.
                Ok(None) => RemoteZone {
                    serial: None,
                    unreadable: Some(format!("not read yet: no endpoint in {ENDPOINTS_FILE}")),
                },
                Err(message) => RemoteZone { serial: None, unreadable: Some(message) },
                Ok(Some(ep)) => match wire::soa_serial(&self.netns, &ep, &zone, TIMEOUT).await {
                    Ok(serial) => RemoteZone { serial: Some(serial), unreadable: None },
                    Err(WireError::NotAuthoritative { .. }) => continue,
                    Err(e) => RemoteZone {
                        serial: None,
                        unreadable: Some(format!("{}: {e}", e.reason())),
                    },
                },
            };
            let spec =
                ExternalArtifactSpec::new(&DNS_REMOTE_ZONE, key.name.clone(), &attrs).map_err(
                    |e| HostError::Dump { what: "remote zones".into(), message: e.to_string() },
                )?;
            out.push(Artifact::new(ArtifactSpec::External(spec)));
        }
        Ok(out)
    }

    /// The deletes in `group` that a remote primary's TXT registry does not confirm, with
    /// why: the RRset's owner record is missing or names another owner. Empty without a
    /// registry, and for the owner records themselves (removed after what they own).
    async fn unconfirmed_deletes(
        &self,
        ep: &Endpoint,
        zone: &ZoneKey,
        group: &[(usize, RRsetName, RRsetChange)],
    ) -> Vec<(usize, String)> {
        if zone.0 != Side::Remote {
            return Vec::new();
        }
        let Some(registry) = self.registry(&zone.1) else { return Vec::new() };
        let sets = match self.read_zone(zone, ep).await {
            Ok(sets) => sets,
            Err(why) => {
                let message = format!("the zone's owner records cannot be read: {why}");
                return group.iter().map(|(i, ..)| (*i, message.clone())).collect();
            }
        };
        let texts: HashMap<&str, &ExternalArtifactSpec> = sets
            .iter()
            .filter_map(|a| match &a.spec {
                ArtifactSpec::External(e) => Some((a.key.name.as_str(), e)),
                _ => None,
            })
            .collect();
        let mut out = Vec::new();
        for (i, name, _) in group {
            if registry.is_record(&name.owner) {
                continue;
            }
            let record = registry.record_name(&name.zone, &name.owner, name.rtype);
            let record = record.map(|r| rrset_name_in(name, r, RecordType::TXT).key_name());
            let owned = record.as_deref().and_then(|r| texts.get(r)).is_some_and(|spec| {
                spec.attributes::<RRset>().is_ok_and(|set| registry.owns(&set.rdata))
            });
            if !owned {
                out.push((
                    *i,
                    format!(
                        "delete: the registry has no owner record of {} for {} {} \
                         ({}): routerd deletes only what both its ledger and the registry \
                         say are its",
                        registry.owner_id,
                        name.owner,
                        name.rtype,
                        record.unwrap_or_default()
                    ),
                ));
            }
        }
        out
    }

    /// The positions in `group` of CNAME RRsets the server ignored before while the zone's
    /// serial has not moved since: sending them again would be ignored again.
    async fn still_ignored(
        &self,
        ep: &Endpoint,
        zone: &ZoneKey,
        group: &[(usize, RRsetName, RRsetChange)],
    ) -> Vec<usize> {
        let known: Vec<(usize, u32)> = {
            let ignored = self.ignored.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            group
                .iter()
                .filter_map(|(i, name, _)| ignored.get(&name.key_name()).map(|s| (*i, *s)))
                .collect()
        };
        if known.is_empty() {
            return Vec::new();
        }
        let Ok(serial) = wire::soa_serial(&self.netns, ep, &zone.2, TIMEOUT).await else {
            return Vec::new();
        };
        known.into_iter().filter(|(_, s)| *s == serial).map(|(i, _)| i).collect()
    }

    /// Reads the zone back after CNAME RRsets were sent and accepted: one the server left out
    /// (RFC 2136 §3.4.2.2, a name holding other data) becomes [`WireError::Ignored`] and is
    /// remembered with the zone's serial ([`DnsBackend::still_ignored`]).
    async fn read_back_cnames(
        &self,
        ep: &Endpoint,
        zone: &ZoneKey,
        sent: &[&(usize, RRsetName, RRsetChange)],
        outcomes: &mut [Result<(), WireError>],
    ) {
        let cname = |c: &RRsetChange| c.rtype == RecordType::CNAME && !c.rdata.is_empty();
        let accepted = sent.iter().zip(outcomes.iter()).any(|(s, o)| cname(&s.2) && o.is_ok());
        if !accepted {
            return;
        }
        let Ok(sets) = self.read_zone(zone, ep).await else { return };
        let present: HashSet<&str> = sets.iter().map(|a| a.key.name.as_str()).collect();
        let cache_key = format!("{}/{}", block_name(zone.0, &zone.1), zone.2);
        let serial = self.lock().get(&cache_key).map(|c| c.serial);
        let mut ignored = self.ignored.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for ((_, name, change), outcome) in sent.iter().map(|s| &**s).zip(outcomes.iter_mut()) {
            let key = name.key_name();
            if !cname(change) || outcome.is_err() {
                continue;
            }
            if present.contains(key.as_str()) {
                ignored.remove(&key);
            } else {
                *outcome = Err(ignored_error(ep, name));
                if let Some(serial) = serial {
                    ignored.insert(key, serial);
                }
            }
        }
    }

    /// Sends `changes`, one result per change. When the server refuses a message for what it
    /// holds (its update policy, or its integrity check: an MX whose in-zone target has no
    /// address), or one RRset cannot be sent at all, the changes from that message on are sent
    /// one by one, so one bad RRset does not hold back the others of its batch.
    async fn send(
        &self,
        ep: &Endpoint,
        zone: &Name,
        changes: &[RRsetChange],
        wait_for_zone: bool,
    ) -> Vec<Result<(), WireError>> {
        let failure = match self.update_with_retry(ep, zone, changes, wait_for_zone).await {
            Ok(_) => return changes.iter().map(|_| Ok(())).collect(),
            Err(failure) => failure,
        };
        let mut results: Vec<Result<(), WireError>> =
            (0..failure.applied).map(|_| Ok(())).collect();
        let rest = &changes[failure.applied.min(changes.len())..];
        let per_rrset = matches!(
            failure.error,
            WireError::UpdateRefused { .. }
                | WireError::Rcode { .. }
                | WireError::Exists { .. }
                | WireError::TooLarge { .. }
                | WireError::BadChange { .. }
        );
        if rest.len() > 1 && per_rrset {
            for change in rest {
                let outcome =
                    wire::update(&self.netns, ep, zone, std::slice::from_ref(change), TIMEOUT)
                        .await;
                results.push(outcome.map(|_| ()).map_err(|f| f.error));
            }
        } else {
            let error = failure.error;
            results.extend(rest.iter().map(|_| Err(error.clone())));
        }
        results
    }

    /// [`wire::update`], retried for a few seconds while the server refuses connections (or,
    /// with `wait_for_zone`, does not serve the zone yet): a local named started or
    /// reconfigured by this same apply takes a moment to listen and load.
    async fn update_with_retry(
        &self,
        ep: &Endpoint,
        zone: &Name,
        changes: &[RRsetChange],
        wait_for_zone: bool,
    ) -> Result<wire::UpdateReport, wire::UpdateFailure> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            match wire::update(&self.netns, ep, zone, changes, TIMEOUT).await {
                Err(failure)
                    if failure.applied == 0
                        && (matches!(failure.error, WireError::Unreachable { .. })
                            || wait_for_zone
                                && matches!(failure.error, WireError::NotAuthoritative { .. }))
                        && tokio::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                outcome => return outcome,
            }
        }
    }
}

/// The zones that hold the `dns.rrset`s named in `wanted`, each with its keys in `wanted`'s
/// order, ordered by side, server and zone text: what [`RRsetName::parse`] of each key gives,
/// grouped by `(side, server, zone.to_ascii())`, without it. Keys that do not parse are left
/// out, and so is a zone with none that does. Keys sharing a `side:server/zone/` prefix share
/// one parse of the zone.
fn zones_of(wanted: &[ArtifactKey]) -> Vec<(ZoneKey, Vec<&ArtifactKey>)> {
    /// A prefix seen: its zone (`None`: no key of it parses) and its group, once it has one.
    struct Prefix {
        zone: Option<Name>,
        group: Option<usize>,
    }
    let mut prefixes: HashMap<&str, Prefix> = HashMap::new();
    // Prefixes whose zones parse alike (`lab.` and `la\142.`, hickory's octal escape) share a
    // group.
    let mut ids: BTreeMap<(u8, String, String), usize> = BTreeMap::new();
    let mut groups: Vec<Option<(ZoneKey, Vec<&ArtifactKey>)>> = Vec::new();
    for key in wanted {
        let Some(parts) = RRsetNameParts::split(&key.name) else { continue };
        let prefix = prefixes
            .entry(parts.zone_prefix)
            .or_insert_with(|| Prefix { zone: parts.zone(), group: None });
        let Some(zone) = &prefix.zone else { continue };
        if !parts.parses_in(zone) {
            continue;
        }
        let group = *prefix.group.get_or_insert_with(|| {
            let id =
                (u8::from(parts.side == Side::Remote), parts.server.to_owned(), zone.to_ascii());
            *ids.entry(id).or_insert_with(|| {
                groups
                    .push(Some(((parts.side, parts.server.to_owned(), zone.clone()), Vec::new())));
                groups.len() - 1
            })
        });
        if let Some((_, keys)) = &mut groups[group] {
            keys.push(key);
        }
    }
    ids.into_values().filter_map(|group| groups[group].take()).collect()
}

/// The RRset `owner`/`rtype` in the zone and on the server of `name`.
fn rrset_name_in(name: &RRsetName, owner: Name, rtype: RecordType) -> RRsetName {
    RRsetName {
        side: name.side,
        server: name.server.clone(),
        zone: name.zone.clone(),
        owner,
        rtype,
    }
}

/// [`WireError::Ignored`] for the RRset `name` on `ep`.
fn ignored_error(ep: &Endpoint, name: &RRsetName) -> WireError {
    WireError::Ignored {
        server: ep.address,
        zone: name.zone.to_ascii(),
        owner: name.owner.to_ascii(),
        rtype: name.rtype,
    }
}

/// The endpoint block of `server`.
fn block_name(side: Side, server: &str) -> String {
    match side {
        Side::Local => crate::kinds::server::local_endpoint(server),
        Side::Remote => crate::kinds::server::remote_endpoint(server),
    }
}

/// Whether routerd may manage RRsets of `rtype`: not the SOA, not DNSSEC's.
fn manageable(rtype: RecordType) -> bool {
    !matches!(
        rtype,
        RecordType::SOA
            | RecordType::RRSIG
            | RecordType::NSEC
            | RecordType::NSEC3
            | RecordType::NSEC3PARAM
            | RecordType::DNSKEY
            | RecordType::CDS
            | RecordType::CDNSKEY
    ) && u16::from(rtype) != 65534
}

/// A refused or failed UPDATE, with the wire reason (`TsigBadKey`) the engine prefixes to its
/// error and the `Published` condition reads back.
fn refused(key: &ArtifactKey, op: &'static str, e: &WireError) -> HostError {
    HostError::Refused { key: key.clone(), reason: e.reason(), message: format!("{op}: {e}") }
}

fn service(key: &ArtifactKey, op: &'static str, message: String) -> HostError {
    HostError::Service { key: key.clone(), op, message }
}

fn invalid(key: &ArtifactKey, message: impl Into<String>) -> HostError {
    HostError::Invalid { key: key.clone(), message: message.into() }
}

/// The UPDATE change of `artifact`.
///
/// A create on a remote primary carries the "RRset does not exist" prerequisite: what is there
/// already is someone else's until adopted. In a local zone routerd made, only its seed (SOA,
/// apex NS, glue) was there before, and those are declared.
fn change_of(
    artifact: &Artifact,
    delete: bool,
    create: bool,
) -> Result<(RRsetName, RRsetChange), HostError> {
    let key = &artifact.key;
    let name = RRsetName::parse(&key.name).ok_or_else(|| invalid(key, "not a dns.rrset name"))?;
    if !manageable(name.rtype) || (name.rtype == RecordType::NS && name.owner == name.zone) {
        return Err(invalid(key, "routerd never changes SOA, apex NS or DNSSEC records"));
    }
    let (ttl, rdata) = if delete {
        (0, Vec::new())
    } else {
        let ArtifactSpec::External(spec) = &artifact.spec else {
            return Err(invalid(key, "not a dns.rrset"));
        };
        let rrset: RRset = spec.attributes().map_err(|e| invalid(key, e.to_string()))?;
        let rdata = rrset.records(name.rtype).map_err(|e| invalid(key, e))?;
        if rdata.is_empty() {
            return Err(invalid(key, "an RRset holds at least one record"));
        }
        (rrset.ttl, rdata)
    };
    let absent_before = create && name.side == Side::Remote;
    let change =
        RRsetChange { owner: name.owner.clone(), rtype: name.rtype, ttl, rdata, absent_before };
    Ok((name, change))
}

impl Backend for DnsBackend {
    fn apply_with(&self) -> ApplyWith {
        DNS_RRSET.family()
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        static KINDS: OnceLock<[ArtifactKind; 2]> = OnceLock::new();
        if let Some(kinds) = KINDS.get() {
            return kinds;
        }
        match (DNS_RRSET.artifact_kind(), DNS_REMOTE_ZONE.artifact_kind()) {
            (Some(rrset), Some(zone)) => KINDS.get_or_init(|| [rrset, zone]),
            _ => &[],
        }
    }

    fn observes_wanted_only(&self) -> bool {
        true
    }

    fn observe<'a>(
        &'a self,
        kind: ArtifactKind,
        wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        Box::pin(async move {
            let shared = self.observe_shared(kind, wanted).await?;
            Ok(shared.into_iter().map(Arc::unwrap_or_clone).collect())
        })
    }

    /// A zone whose serial did not move lists the artifacts of its last transfer, shared.
    fn observe_shared<'a>(
        &'a self,
        kind: ArtifactKind,
        wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Arc<Artifact>>, HostError>> {
        Box::pin(async move {
            if Some(kind) == DNS_REMOTE_ZONE.artifact_kind() {
                let zones = self.remote_zones(wanted).await?;
                return Ok(zones.into_iter().map(Arc::new).collect());
            }
            let mut listed = Vec::new();
            for (zone_key, keys) in zones_of(wanted) {
                let (side, server, zone) = &zone_key;
                if *side == Side::Local && !self.local_zone_exists(server, zone) {
                    continue;
                }
                let outcome = match self.endpoint(*side, server) {
                    Ok(None) => continue,
                    Ok(Some(ep)) => self.read_zone(&zone_key, &ep).await,
                    Err(message) => Err(message),
                };
                match outcome {
                    Ok(sets) => listed.extend(sets.iter().cloned()),
                    Err(reason) => {
                        for key in keys {
                            let rrset = RRset {
                                ttl: 0,
                                rdata: Vec::new(),
                                unobserved: Some(reason.clone()),
                            };
                            let spec =
                                ExternalArtifactSpec::new(&DNS_RRSET, key.name.clone(), &rrset)
                                    .map_err(|e| HostError::Dump {
                                        what: "RRsets".into(),
                                        message: e.to_string(),
                                    })?;
                            listed.push(Arc::new(Artifact::new(ArtifactSpec::External(spec))));
                        }
                    }
                }
            }
            Ok(listed)
        })
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            self.apply(&[desired], false, "create").await.into_iter().next().unwrap_or(Ok(()))
        })
    }

    fn create_batch_limit(&self, _kind: ArtifactKind) -> usize {
        CREATE_BATCH
    }

    fn create_many<'a>(
        &'a self,
        desired: &'a [&'a Artifact],
    ) -> BoxFuture<'a, Vec<Result<(), HostError>>> {
        Box::pin(async move { self.apply(desired, false, "create").await })
    }

    fn change_batch_limit(&self, _kind: ArtifactKind) -> usize {
        CREATE_BATCH
    }

    /// Modifies and deletes of many RRsets in as few UPDATEs as fit: a TTL change on 10,000
    /// records is a few messages, not 10,000.
    fn change_many<'a>(
        &'a self,
        changes: &'a [(&'a Artifact, Option<&'a Artifact>)],
    ) -> BoxFuture<'a, Vec<Result<(), HostError>>> {
        Box::pin(async move {
            let delete = changes.first().is_some_and(|(_, desired)| desired.is_none());
            let artifacts: Vec<&Artifact> =
                changes.iter().map(|(observed, desired)| desired.unwrap_or(observed)).collect();
            self.apply(&artifacts, delete, if delete { "delete" } else { "modify" }).await
        })
    }

    fn modify<'a>(
        &'a self,
        _observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            self.apply(&[desired], false, "modify").await.into_iter().next().unwrap_or(Ok(()))
        })
    }

    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            self.apply(&[observed], true, "delete").await.into_iter().next().unwrap_or(Ok(()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The grouping as [`RRsetName::parse`] of every key gives it.
    fn zones_by_parse(wanted: &[ArtifactKey]) -> Vec<(ZoneKey, Vec<&ArtifactKey>)> {
        let mut zones: BTreeMap<(u8, String, String), (ZoneKey, Vec<&ArtifactKey>)> =
            BTreeMap::new();
        for key in wanted {
            let Some(name) = RRsetName::parse(&key.name) else { continue };
            let id =
                (u8::from(name.side == Side::Remote), name.server.clone(), name.zone.to_ascii());
            zones
                .entry(id)
                .or_insert_with(|| ((name.side, name.server, name.zone), Vec::new()))
                .1
                .push(key);
        }
        zones.into_values().collect()
    }

    /// Side, server, zone as written, key names: comparable (`Name`'s `==` ignores case).
    type Shown<'a> = Vec<(Side, String, String, Vec<&'a str>)>;

    fn shown<'a>(groups: Vec<(ZoneKey, Vec<&'a ArtifactKey>)>) -> Shown<'a> {
        groups
            .into_iter()
            .map(|((side, server, zone), keys)| {
                (side, server, zone.to_ascii(), keys.iter().map(|k| k.name.as_str()).collect())
            })
            .collect()
    }

    fn keys(names: &[String]) -> Vec<ArtifactKey> {
        routerd_host::kinds::external::register(&DNS_RRSET).expect("dns.rrset registers");
        let kind = DNS_RRSET.artifact_kind().expect("dns.rrset is registered");
        names.iter().map(|n| ArtifactKey::new(kind, n.clone())).collect()
    }

    #[test]
    fn zones_of_groups_by_prefix_as_parse_does() {
        let names: Vec<String> = [
            "local:auth/lab.example./www.lab.example./A",
            "local:auth/lab.example./lab.example./MX",
            "remote:ext/lab.example./www.lab.example./A",
            "local:auth/other.example./a.other.example./AAAA",
            "local:auth/lab.example./WWW.Lab.Example./TXT",
            "local:auth/Lab.Example./www.lab.example./A",
            "local:auth/lab.example./www.other./A",
            "local:auth/lab.example./xlab.example./A",
            "local:auth/lab.example./www.lab.example./BOGUS",
            "local:auth/lab.example./www.lab.example./A/extra",
            "local:auth/lab.example./www.lab.example",
            "local:auth/lab.example./www.lab.example/A",
            "local:/lab.example./www.lab.example./A",
            "elsewhere:auth/lab.example./www.lab.example./A",
            "local:auth/lab.example/www.lab.example./A",
            "local:auth/la\\142.example./www.lab.example./A",
            "local:auth/only.example./bad..only.example./A",
            "local:auth/./www.lab.example./A",
            "local:auth/lab.example./w\\.x.lab.example./A",
            "local:auth/lab.example./*.lab.example./CNAME",
            "local:auth/lab.example./_sip._tcp.lab.example./SRV",
            "local:auth/lab.example./-w.lab.example./A",
        ]
        .map(String::from)
        .into();
        let wanted = keys(&names);
        let groups = shown(zones_of(&wanted));
        assert_eq!(groups, shown(zones_by_parse(&wanted)));
        let zones: Vec<(Side, &str, &str, usize)> =
            groups.iter().map(|(s, v, z, k)| (*s, v.as_str(), z.as_str(), k.len())).collect();
        assert_eq!(
            zones,
            [
                (Side::Local, "auth", ".", 1),
                (Side::Local, "auth", "Lab.Example.", 1),
                (Side::Local, "auth", "lab.example.", 7),
                (Side::Local, "auth", "other.example.", 1),
                (Side::Remote, "ext", "lab.example.", 1),
            ]
        );
    }
}
