//! Runtime values: what rendering reads from the host besides the config, for attributes known
//! only once something on the host has produced them (the address networkd derives from a
//! delegated prefix, which a DS-Lite tunnel uses as its local end). ADR 0008.
//!
//! They come from external items of an observation, so the desired state is a pure function of
//! the config and these values: a session renders again when an observation brings other
//! values, and the graph withdraws what needs a value while it is missing (the dependency on
//! its source is met only while the source has it: [`crate::intent::IntentDep::addressed`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use ipnet::Ipv6Net;
use routerd_host::{Artifact, ArtifactKey, ArtifactKind, ArtifactSpec};

/// The runtime values one observation gives. Empty when nothing on the host produced any (and
/// for a render from the config alone).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuntimeValues {
    /// The IPv6 addresses systemd-networkd configured from a delegated prefix, by downstream
    /// link name (`dhcp.ipv6.delegatedAddress` bindings' observed `addresses`), in the order
    /// networkd lists them.
    pub delegated: BTreeMap<String, Vec<Ipv6Net>>,
}

impl RuntimeValues {
    /// The values in `observed` (the inventory of one snapshot, by key).
    pub fn from_observed(observed: &BTreeMap<ArtifactKey, Arc<Artifact>>) -> Self {
        let kind = ArtifactKind::Dhcp6DelegatedAddress;
        let first = ArtifactKey::new(kind, String::new());
        let mut delegated = BTreeMap::new();
        // The map is in key order, kind first: the bindings are one range.
        for (key, artifact) in observed.range(first..).take_while(|(k, _)| k.kind == kind) {
            let ArtifactSpec::DhcpClient(d) = &artifact.spec else { continue };
            let addresses: Vec<Ipv6Net> =
                d.addresses.iter().filter_map(|a| a.parse().ok()).collect();
            if !addresses.is_empty() {
                delegated.insert(key.name.clone(), addresses);
            }
        }
        Self { delegated }
    }

    /// The first address networkd derived on `ifname` from a delegated prefix, if any.
    pub fn delegated_address(&self, ifname: &str) -> Option<Ipv6Net> {
        self.delegated.get(ifname).and_then(|a| a.first().copied())
    }
}

#[cfg(test)]
mod tests {
    use routerd_host::artifact::{DhcpBinding, DhcpClientSpec};

    use super::*;

    fn binding(binding: DhcpBinding, ifname: &str, addresses: &[&str]) -> Arc<Artifact> {
        Arc::new(Artifact::new(ArtifactSpec::DhcpClient(DhcpClientSpec {
            binding,
            ifname: ifname.into(),
            settings: Vec::new(),
            effective: true,
            addresses: addresses.iter().map(|a| a.to_string()).collect(),
        })))
    }

    #[test]
    fn delegated_addresses_are_read_from_the_bindings_only() {
        let observed: BTreeMap<ArtifactKey, Arc<Artifact>> = [
            binding(DhcpBinding::DelegatedAddress, "lan0", &["2001:db8:0:2a::1/64"]),
            binding(DhcpBinding::DelegatedAddress, "lan1", &[]),
            binding(DhcpBinding::Ipv6, "wan0", &["2001:db8:ffff::5/128"]),
        ]
        .into_iter()
        .map(|a| (a.key.clone(), a))
        .collect();
        let v = RuntimeValues::from_observed(&observed);
        assert_eq!(v.delegated_address("lan0"), "2001:db8:0:2a::1/64".parse().ok());
        assert_eq!(v.delegated_address("lan1"), None);
        assert_eq!(v.delegated.len(), 1, "{v:?}");
        assert_eq!(RuntimeValues::from_observed(&BTreeMap::new()), RuntimeValues::default());
    }
}
