//! The management lockout guard (as LuCI's "apply unchecked" warning): before an apply, find
//! whether the change touches the address or the link the requesting client reaches the router
//! through. Such an apply is only accepted with a confirm window, so an operator who cuts
//! themselves off gets the previous config back at the deadline.

use std::net::IpAddr;

use ipnet::IpNet;
use routerd_model::spec::net::Ipv4StaticAddressSpec;
use routerd_model::{Config, ResourceKind};

/// An interface address of a config: (interface resource, kernel name, address with prefix).
fn addresses(config: &Config) -> Vec<(String, String, IpNet)> {
    config
        .resources_of(ResourceKind::Ipv4StaticAddress)
        .filter_map(|r| {
            let spec = r.spec_as::<Ipv4StaticAddressSpec>()?;
            let net: IpNet = spec.address.parse().ok()?;
            let ifname = config.interface_ifname(&spec.interface)?.into_owned();
            Some((spec.interface.clone(), ifname, net))
        })
        .collect()
}

/// What in the change from `current` to `next` touches the way `client` reaches the router:
/// the router address on the client's subnet disappears or changes, or the link carrying it
/// changes or leaves the config. Empty when the client is not on a connected subnet of
/// `current` (a routed client is beyond this check).
pub fn risks(current: &Config, next: &Config, client: IpAddr) -> Vec<String> {
    let Some((interface, ifname, net)) =
        addresses(current).into_iter().find(|(_, _, net)| net.contains(&client))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let kept =
        addresses(next).into_iter().any(|(_, n_ifname, n_net)| n_ifname == ifname && n_net == net);
    if !kept {
        out.push(format!(
            "address {net} on {ifname}, through which {client} reaches the router, is removed or changed"
        ));
    }
    // Any link provider: a changed VLANInterface (ID, parent) cuts the client off as surely
    // as a changed Interface.
    let link = |config: &Config| config.interface_resource(&interface).map(|r| r.spec.clone());
    match (link(current), link(next)) {
        (Some(a), Some(b)) if a != b => out.push(format!(
            "interface {interface} ({ifname}), through which {client} reaches the router, changes"
        )),
        (Some(_), None) => out.push(format!(
            "interface {interface} ({ifname}), through which {client} reaches the router, leaves the config"
        )),
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use routerd_test_kit::router::{NET, RouterDoc};

    use super::*;

    /// Interface `lan` on lan0 (its spec ending in `extra` lines) with `address` on it.
    fn config(address: &str, extra: &str) -> Config {
        let yaml = RouterDoc::new("t")
            .resource(NET, "Interface", "lan", &format!("ifname: lan0\nmanaged: true{extra}"))
            .resource(
                NET,
                "IPv4StaticAddress",
                "lan-v4",
                &format!("interface: lan\naddress: {address}"),
            )
            .to_string();
        routerd_model::parse_config(&yaml, "t.yaml").expect("valid")
    }

    #[test]
    fn changing_the_clients_address_or_link_is_a_risk_and_other_clients_are_not() {
        let client: IpAddr = "192.168.50.10".parse().expect("ip");
        let now = config("192.168.50.1/24", "");
        assert!(risks(&now, &now, client).is_empty());
        let moved = risks(&now, &config("192.168.60.1/24", ""), client);
        assert_eq!(moved.len(), 1, "{moved:?}");
        assert!(moved[0].contains("192.168.50.1/24 on lan0"), "{moved:?}");
        let link = risks(&now, &config("192.168.50.1/24", "\nadminUp: true"), client);
        assert!(link.iter().any(|r| r.contains("interface lan (lan0)")), "{link:?}");
        let elsewhere: IpAddr = "10.1.1.1".parse().expect("ip");
        assert!(risks(&now, &config("192.168.60.1/24", ""), elsewhere).is_empty());
    }
}
