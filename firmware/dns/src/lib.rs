//! The DNS controller (seed 004, issue 36): BIND 9 servers the router runs, TSIG keys, remote
//! primaries, zones and their RRsets, reconciled like every other resource: rendered into
//! artifact intents, planned, applied, owned through the ledger and reported by the doctor.
//!
//! [`register`] is the crate's one entry point (ADR 0010): the supervisor calls it once.

pub mod artifacts;
pub mod bind;
pub mod wire;

/// The apiVersion of every kind of this crate: routerd's own group, where routerd's `DNSZone`
/// already lives (design brief §1).
pub const API_VERSION: &str = "net.routerd.net/v1alpha1";
pub mod doctor;
pub mod kinds;
pub mod lease_watch;
pub mod notify;
pub mod owner_records;
pub mod rrsets;
pub mod status;

use std::sync::Arc;

use routerd_engine::registry::{BackendContext, Registry, RegistryError, WatchContext};

/// Adds the DNS kinds, their artifact kinds, backends and doctor checks to `registry`: the one
/// line the supervisor writes for this crate.
///
/// Errors: a kind's name is taken (a build mistake).
pub fn register(registry: &mut Registry) -> Result<(), RegistryError> {
    use kinds::{key, records, server, zone};
    registry
        .resource_kind(&key::DNS_TSIG_KEY, key::KeyRender)?
        .resource_kind(&server::DNS_SERVER, server::ServerRender)?
        .resource_kind(&server::DNS_EXTERNAL_SERVER, server::ExternalServerRender)?
        .resource_kind(&zone::DNS_ZONE, zone::ZoneRender)?;
    for kind in records::RECORDS.iter().map(|record| record.kind) {
        registry.resource_kind(kind, zone::RecordRender)?;
    }
    registry
        .artifact_kind(&artifacts::BIND_CONFIG)?
        .artifact_kind(&artifacts::BIND_ZONE)?
        .artifact_kind(&artifacts::DNS_RRSET)?
        .artifact_kind(&artifacts::DNS_REMOTE_ZONE)?
        .backend(|cx: &BackendContext<'_>| {
            Ok(Arc::new(bind::BindBackend::new(cx.target, cx.netns)) as _)
        })
        .backend(|cx: &BackendContext<'_>| {
            Ok(Arc::new(rrsets::DnsBackend::new(cx.target, cx.netns)) as _)
        })
        .doctor_checks(doctor::DnsDoctor)
        .watcher(|cx: &WatchContext<'_>| Ok(lease_watch::watch(cx.target.dnsmasq_leases())))
        .watcher(|cx: &WatchContext<'_>| notify::listen(cx.netns));
    Ok(())
}
