//! Semantic validation of a deserialized `netbird.json`: references between its objects and
//! the limits NetBird's API v0.77.1 enforces (brief §1). Collects every error, each located
//! through the [`Located`] positions of the text. No I/O.

use crate::desired::{NameserverGroup, NetbirdState, Policy, Route, SetupKey, SetupKeyType};
use routerd_model::Located;

use crate::error::{NetbirdStateError, child_index, child_key};

/// The group NetBird creates in every account, which `netbird.json` may name without defining
/// (it cannot be updated, so it must not be defined: brief §1, Group).
pub(crate) const BUILTIN_GROUP: &str = "All";

/// Setup key validity NetBird accepts, in seconds (brief §1, Setup key: 1 to 365 days).
const EXPIRES_IN: std::ops::RangeInclusive<u64> = 86_400..=31_536_000;

/// Route metrics NetBird accepts (brief §1, Route).
const METRIC: std::ops::RangeInclusive<u32> = 1..=9999;

/// Longest `network_id` NetBird accepts (brief §1, Route).
const NETWORK_ID_MAX: usize = 40;

/// Every semantic error of `state`, ordered by position; `located` locates them (without it,
/// none has a location).
pub(crate) fn check(
    state: &NetbirdState,
    located: Option<&Located>,
    file: &str,
) -> Vec<NetbirdStateError> {
    let mut check = Check { state, located, file, errors: Vec::new() };
    for (name, group) in &state.groups {
        let path = child_key("groups", name);
        check.peers(&child_key(&path, "peers"), &group.peers);
    }
    for (name, key) in &state.setup_keys {
        check.setup_key(&child_key("setup_keys", name), key);
    }
    for (name, policy) in &state.policies {
        check.policy(&child_key("policies", name), policy);
    }
    for (network_id, route) in &state.routes {
        check.route(network_id, route);
    }
    for (name, group) in &state.dns.nameserver_groups {
        check.nameserver_group(&child_key("dns.nameserver_groups", name), group);
    }
    let mut errors = check.errors;
    errors.sort_by(|a, b| (a.location, &a.path).cmp(&(b.location, &b.path)));
    errors
}

/// The error sink of one validation.
struct Check<'s> {
    state: &'s NetbirdState,
    located: Option<&'s Located>,
    file: &'s str,
    errors: Vec<NetbirdStateError>,
}

impl Check<'_> {
    fn push(&mut self, location: Option<crate::Location>, path: &str, message: String) {
        self.errors.push(NetbirdStateError {
            file: self.file.to_owned(),
            location,
            path: path.to_owned(),
            message,
        });
    }

    /// An error at the value of `path`.
    fn at_value(&mut self, path: &str, message: String) {
        let at = self.located.map(|located| located.value_location(path).into());
        self.push(at, path, message);
    }

    /// An error at the key that introduced `path`.
    fn at_key(&mut self, path: &str, message: String) {
        let at = self.located.map(|located| located.key_location(path).into());
        self.push(at, path, message);
    }

    /// Each name of the list at `path` must be a group of `groups` (or "All").
    fn groups(&mut self, path: &str, names: &[String]) {
        for (index, name) in names.iter().enumerate() {
            if name != BUILTIN_GROUP && !self.state.groups.contains_key(name) {
                self.at_value(
                    &child_index(path, index),
                    format!("group `{name}` is not defined in `groups`"),
                );
            }
        }
    }

    /// Each name of the list at `path` must be a setup key: peers are named by their key.
    fn peers(&mut self, path: &str, names: &[String]) {
        for (index, name) in names.iter().enumerate() {
            self.peer(&child_index(path, index), name);
        }
    }

    fn peer(&mut self, path: &str, name: &str) {
        if !self.state.setup_keys.contains_key(name) {
            self.at_value(
                path,
                format!(
                    "peer `{name}` is not defined in `setup_keys` (peers are named by their \
                     setup key)"
                ),
            );
        }
    }

    fn setup_key(&mut self, path: &str, key: &SetupKey) {
        self.groups(&child_key(path, "auto_groups"), &key.auto_groups);
        if !EXPIRES_IN.contains(&key.expires_in) {
            self.at_value(
                &child_key(path, "expires_in"),
                format!(
                    "expires_in {} is out of range: NetBird accepts 86400 to 31536000 seconds \
                     (1 to 365 days)",
                    key.expires_in
                ),
            );
        }
        if key.key_type == SetupKeyType::OneOff && key.usage_limit > 1 {
            self.at_value(
                &child_key(path, "usage_limit"),
                format!(
                    "a one-off key is used once: usage_limit must be 0 or 1, not {} (NetBird \
                     refuses it)",
                    key.usage_limit
                ),
            );
        }
    }

    fn policy(&mut self, path: &str, policy: &Policy) {
        self.groups(&child_key(path, "sources"), &policy.sources);
        self.groups(&child_key(path, "destinations"), &policy.destinations);
        let ports_path = child_key(path, "ports");
        for (index, port) in policy.ports.iter().flatten().enumerate() {
            if !matches!(port.parse::<u16>(), Ok(1..)) {
                self.at_value(
                    &child_index(&ports_path, index),
                    format!("port `{port}` is not a number from 1 to 65535"),
                );
            }
        }
    }

    fn route(&mut self, network_id: &str, route: &Route) {
        let path = child_key("routes", network_id);
        let length = network_id.chars().count();
        if length > NETWORK_ID_MAX {
            self.at_key(
                &path,
                format!(
                    "the network_id `{network_id}` has {length} characters; NetBird accepts at \
                     most {NETWORK_ID_MAX}"
                ),
            );
        }
        let has_domains = route.domains.as_ref().is_some_and(|d| !d.is_empty());
        match (route.network.is_some(), has_domains) {
            (true, true) => self.at_key(
                &path,
                "a route has exactly one of `network` and `domains`, not both".to_owned(),
            ),
            (false, false) => self.at_key(
                &path,
                "a route needs exactly one of `network` (a CIDR) and `domains`".to_owned(),
            ),
            _ => {}
        }
        let has_peer_groups = route.peer_groups.as_ref().is_some_and(|g| !g.is_empty());
        match (&route.peer, has_peer_groups) {
            (Some(_), true) => self.at_key(
                &path,
                "a route has exactly one of `peer` and `peer_groups`, not both".to_owned(),
            ),
            (None, false) => self.at_key(
                &path,
                "a route needs exactly one of `peer` and `peer_groups`, the peers that route it"
                    .to_owned(),
            ),
            _ => {}
        }
        if let Some(peer) = &route.peer {
            self.peer(&child_key(&path, "peer"), peer);
        }
        self.groups(&child_key(&path, "peer_groups"), route.peer_groups.as_deref().unwrap_or(&[]));
        if route.groups.is_empty() {
            self.at_key(
                &child_key(&path, "groups"),
                "routes need `groups`, the groups that receive the route (NetBird's API \
                 requires them)"
                    .to_owned(),
            );
        }
        self.groups(&child_key(&path, "groups"), &route.groups);
        if let Some(metric) = route.metric.filter(|m| !METRIC.contains(m)) {
            self.at_value(
                &child_key(&path, "metric"),
                format!("metric {metric} is out of range: NetBird accepts 1 to 9999"),
            );
        }
    }

    fn nameserver_group(&mut self, path: &str, group: &NameserverGroup) {
        self.groups(&child_key(path, "groups"), &group.groups);
        if group.primary && !group.domains.is_empty() {
            self.at_value(
                &child_key(path, "domains"),
                "a primary nameserver group resolves every domain: `domains` must be empty"
                    .to_owned(),
            );
        } else if !group.primary && group.domains.is_empty() {
            self.at_key(
                &child_key(path, "domains"),
                "a nameserver group that is not primary needs `domains`".to_owned(),
            );
        }
    }
}
