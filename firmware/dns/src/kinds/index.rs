//! One pass over the config that every DNS render and the file-wide check share: each
//! `DNSZone` by resource name with its apex, TTL and server, built once per render
//! ([`routerd_engine::render::RenderCtx::memo`]).

use std::collections::HashMap;

use hickory_proto::rr::Name;
use routerd_model::{Config, Resource};

use super::names;
use super::zone::{DEFAULT_TTL, ZoneSpec};
use crate::owner_records::Registry;

/// Where a zone is served.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ZoneAt {
    /// On the `DNSServer` of this name.
    Local(String),
    /// On the `DNSExternalServer` of this name.
    Remote(String),
}

/// A `DNSZone` as records see it.
#[derive(Debug, Clone)]
pub struct ZoneInfo {
    /// The apex, absolute and lowercased.
    pub apex: Name,
    /// Its records' default TTL.
    pub ttl: u32,
    /// Its server.
    pub at: ZoneAt,
}

/// The zones of a config, and the keys that may update each.
#[derive(Debug, Default)]
pub struct DnsIndex {
    zones: HashMap<String, ZoneInfo>,
    keys: HashMap<String, Vec<String>>,
    registries: HashMap<String, Registry>,
}

impl DnsIndex {
    /// The index of `config`.
    pub fn build(config: &Config) -> Self {
        Self::of(config.spec.resources.iter())
    }

    /// The index of `resources`.
    pub fn of<'a>(resources: impl Iterator<Item = &'a Resource>) -> Self {
        let mut index = Self::default();
        let mut server_keys: HashMap<&str, &str> = HashMap::new();
        let mut zones: Vec<(&str, &ZoneSpec)> = Vec::new();
        for r in resources {
            if let Some(spec) = r.external_spec::<super::server::ServerSpec>()
                && let Some(key) = &spec.update_key
            {
                server_keys.insert(r.name.as_str(), key.as_str());
            }
            if let Some(spec) = r.external_spec::<ZoneSpec>() {
                zones.push((r.name.as_str(), spec));
            }
            if let Some(registry) = r
                .external_spec::<super::server::ExternalServerSpec>()
                .and_then(|s| s.ownership.as_ref()?.txt_registry.as_ref())
            {
                let registry = Registry {
                    prefix: registry.prefix.clone(),
                    owner_id: registry.owner_id.clone(),
                };
                index.registries.insert(r.name.clone(), registry);
            }
        }
        for (name, spec) in zones {
            let Ok(apex) = names::zone_apex(&spec.zone) else { continue };
            let at = match (&spec.server, &spec.external_server) {
                (Some(s), None) => ZoneAt::Local(s.clone()),
                (None, Some(s)) => ZoneAt::Remote(s.clone()),
                _ => continue,
            };
            let mut keys: Vec<String> = Vec::new();
            if let ZoneAt::Local(server) = &at
                && let Some(key) = server_keys.get(server.as_str())
            {
                keys.push((*key).to_owned());
            }
            keys.extend(spec.extra_update_keys.iter().cloned());
            keys.dedup();
            index.keys.insert(name.to_owned(), keys);
            let ttl = spec.ttl.unwrap_or(DEFAULT_TTL);
            index.zones.insert(name.to_owned(), ZoneInfo { apex, ttl, at });
        }
        index
    }

    /// The `DNSZone` resource `name`.
    pub fn zone(&self, name: &str) -> Option<&ZoneInfo> {
        self.zones.get(name)
    }

    /// Every zone, by resource name.
    pub fn zones(&self) -> impl Iterator<Item = (&str, &ZoneInfo)> {
        self.zones.iter().map(|(n, z)| (n.as_str(), z))
    }

    /// The keys granted UPDATEs on zone `name`: its server's update key, then its extra keys.
    pub fn update_keys(&self, name: &str) -> Vec<&str> {
        self.keys.get(name).map(|k| k.iter().map(String::as_str).collect()).unwrap_or_default()
    }

    /// The TXT ownership registry of external server `server`, if it has one.
    pub fn registry(&self, server: &str) -> Option<&Registry> {
        self.registries.get(server)
    }

    /// The extra update keys of the zones on server `server`, which its named.conf includes.
    pub fn zone_keys_on(&self, server: &str) -> Vec<&str> {
        self.zones
            .iter()
            .filter(|(_, z)| z.at == ZoneAt::Local(server.to_owned()))
            .flat_map(|(n, _)| self.update_keys(n))
            .collect()
    }
}
