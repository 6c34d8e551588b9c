//! Links routerd creates (VLANs, ip6tnl tunnels) against the real kernel.
//!
//! Whether the kernel has `8021q` / `ip6_tunnel` is found out independently with iproute2 in
//! the test's namespace, and each test asserts the matching outcome: created as declared, or a
//! clear `EOPNOTSUPP` ("Unknown device type") that changes nothing. Neither branch skips.

use std::net::Ipv6Addr;

use routerd_host::artifact::{
    EncapLimit, Ip6TunnelMode, Ip6TunnelSpec, LinkKind, LinkSpec, VlanProtocol,
};
use routerd_host::netlink::NetlinkBackend;
use routerd_host::{Artifact, ArtifactKind, ArtifactSpec, Backend, ErrorClass, HostError};
use serde_json::Value;

use crate::support::TestNetns;

fn backend(ns: &TestNetns) -> NetlinkBackend {
    NetlinkBackend::new(&ns.netns()).expect("netlink backend opens in the test namespace")
}

fn vlan(ifname: &str, parent: &str, id: u16) -> Artifact {
    Artifact::new(ArtifactSpec::Link(LinkSpec {
        ifname: ifname.into(),
        admin_up: Some(true),
        mtu: None,
        kind: Some(LinkKind::Vlan { parent: parent.into(), id, protocol: VlanProtocol::Ieee8021Q }),
    }))
}

fn ip6(s: &str) -> Ipv6Addr {
    s.parse().expect("test address")
}

fn tunnel(ifname: &str, underlying: &str) -> Artifact {
    Artifact::new(ArtifactSpec::Ip6Tunnel(Ip6TunnelSpec {
        ifname: ifname.into(),
        mode: Ip6TunnelMode::Ipip6,
        remote: ip6("2001:db8::1"),
        local: Some(ip6("2001:db8::2")),
        underlying: Some(underlying.into()),
        encap_limit: EncapLimit::None,
        mtu: None,
        admin_up: Some(true),
    }))
}

/// Whether iproute2 can create a link of `type_args` in the namespace (removed again).
fn kernel_creates(ns: &TestNetns, type_args: &[&str]) -> bool {
    let mut args = vec!["link", "add"];
    args.extend_from_slice(type_args);
    let ok = ns.ip_ok(&args);
    if ok {
        ns.ip(&["link", "del", type_args[1]]);
    }
    ok
}

/// `ip -j link show` names, sorted: what a failed create must leave unchanged.
fn link_names(ns: &TestNetns) -> Vec<String> {
    let mut names: Vec<String> = ns
        .ip_json(&["link", "show"])
        .iter()
        .filter_map(|l| l["ifname"].as_str().map(str::to_string))
        .collect();
    names.sort();
    names
}

fn assert_unknown_device_type(err: &HostError, ifname: &str) {
    assert!(
        matches!(err, HostError::Rejected { op: "create", errno: Some(libc::EOPNOTSUPP), .. }),
        "{err:?}"
    );
    assert_eq!(err.class(), ErrorClass::Rejected);
    assert_eq!(err.reason(), "KernelRejected");
    let text = err.to_string();
    assert!(text.contains(ifname) && text.contains("Unknown device type"), "{text}");
}

#[tokio::test]
async fn vlan_is_created_as_declared_or_refused_cleanly_by_a_kernel_without_8021q() {
    let ns = TestNetns::new();
    ns.add_veth("ve0", "ve1");
    let supported =
        kernel_creates(&ns, &["link", "ve0", "name", "probe0", "type", "vlan", "id", "9"]);
    let backend = backend(&ns);
    let before = link_names(&ns);
    let desired = vlan("ve0.20", "ve0", 20);

    match backend.create(&desired).await {
        Ok(()) => {
            assert!(supported, "created a VLAN the kernel cannot make");
            let shown = &ns.ip_json(&["-d", "link", "show", "dev", "ve0.20"])[0];
            assert_eq!(shown["link"], "ve0");
            assert_eq!(shown["linkinfo"]["info_kind"], "vlan");
            assert_eq!(shown["linkinfo"]["info_data"]["id"], 20);
            assert_eq!(shown["linkinfo"]["info_data"]["protocol"], "802.1Q");
            assert!(shown["flags"].as_array().is_some_and(|f| f.iter().any(|f| f == "UP")));
            // Observed exactly as desired: nothing to do on the next reconcile.
            let links = backend.observe(ArtifactKind::Link, &[]).await.expect("observe");
            let listed = links.iter().find(|a| a.key == desired.key).expect("listed");
            assert!(desired.spec.drift(&listed.spec).is_empty(), "{:?}", listed.spec);
        }
        Err(err) => {
            assert!(!supported, "the kernel makes VLANs but create failed: {err}");
            assert_unknown_device_type(&err, "ve0.20");
            assert_eq!(link_names(&ns), before, "a refused create changed the links");
        }
    }
}

#[tokio::test]
async fn vlan_on_a_missing_parent_is_missing() {
    let ns = TestNetns::new();
    let backend = backend(&ns);
    let err = backend.create(&vlan("eth9.20", "eth9", 20)).await.expect_err("no parent");
    assert!(matches!(err, HostError::Missing { .. }), "{err:?}");
    assert!(err.to_string().contains("link eth9 does not exist"), "{err}");
}

#[tokio::test]
async fn a_link_of_another_type_under_the_vlan_name_is_a_conflict_and_is_left_alone() {
    let ns = TestNetns::new();
    ns.add_veth("ve0", "ve1");
    ns.add_veth("ve0.20", "peer20");
    ns.ip(&["link", "set", "ve0.20", "mtu", "1400"]);
    let backend = backend(&ns);
    let desired = vlan("ve0.20", "ve0", 20);
    let links = backend.observe(ArtifactKind::Link, &[]).await.expect("observe");
    let observed = links.iter().find(|a| a.key == desired.key).expect("the veth is listed");

    // The planner's path (the name exists: modify) and a create racing with it both refuse.
    let err = backend.modify(observed, &desired).await.expect_err("conflict");
    assert!(matches!(err, HostError::Conflict { .. }), "{err:?}");
    assert_eq!((err.class(), err.reason()), (ErrorClass::Conflict, "ArtifactConflict"));
    let text = err.to_string();
    assert!(text.contains("the host has link ve0.20: veth"), "{text}");
    assert!(text.contains("the config wants link ve0.20: vlan 20 (802.1Q) on ve0"), "{text}");
    let err = backend.create(&desired).await.expect_err("conflict");
    assert!(err.to_string().contains("the host has link ve0.20: veth"), "{err}");

    // Nothing changed: still a veth, still down, MTU as set.
    let shown = &ns.ip_json(&["-d", "link", "show", "dev", "ve0.20"])[0];
    assert_eq!(shown["linkinfo"]["info_kind"], "veth");
    assert_eq!(shown["mtu"], 1400);
    assert!(!shown["flags"].as_array().is_some_and(|f| f.iter().any(|f| f == "UP")), "{shown}");
}

#[tokio::test]
async fn ip6tnl_is_created_changed_and_deleted_or_refused_cleanly_without_ip6_tunnel() {
    let ns = TestNetns::new();
    ns.add_veth("wan0", "up0");
    let supported = kernel_creates(
        &ns,
        &["probe0", "type", "ip6tnl", "mode", "ipip6", "remote", "2001:db8::99", "local", "::"],
    );
    let backend = backend(&ns);
    let before = link_names(&ns);
    let desired = tunnel("dslite0", "wan0");

    match backend.create(&desired).await {
        Ok(()) => {
            assert!(supported, "created a tunnel the kernel cannot make");
            let shown = &ns.ip_json(&["-d", "link", "show", "dev", "dslite0"])[0];
            assert_eq!(shown["linkinfo"]["info_kind"], "ip6tnl");
            assert_eq!(shown["linkinfo"]["info_data"]["remote"], "2001:db8::1");
            let listed = backend.observe(ArtifactKind::Ipip6Tunnel, &[]).await.expect("observe");
            let names: Vec<&str> = listed.iter().map(|a| a.key.name.as_str()).collect();
            assert_eq!(names, ["dslite0"], "the fallback ip6tnl0 is never listed");
            assert!(desired.spec.drift(&listed[0].spec).is_empty(), "{:?}", listed[0].spec);
            // A change of endpoint is made in place, then delete removes the link.
            let ArtifactSpec::Ip6Tunnel(spec) = &desired.spec else { panic!("tunnel") };
            let moved = Artifact::new(ArtifactSpec::Ip6Tunnel(Ip6TunnelSpec {
                remote: ip6("2001:db8::5"),
                ..spec.clone()
            }));
            backend.modify(&listed[0], &moved).await.expect("changelink");
            let shown = &ns.ip_json(&["-d", "link", "show", "dev", "dslite0"])[0];
            assert_eq!(shown["linkinfo"]["info_data"]["remote"], "2001:db8::5");
            backend.delete(&moved).await.expect("delete");
            assert!(!link_names(&ns).contains(&"dslite0".to_string()));
        }
        Err(err) => {
            assert!(!supported, "the kernel makes ip6tnl links but create failed: {err}");
            assert_unknown_device_type(&err, "dslite0");
            assert_eq!(link_names(&ns), before, "a refused create changed the links");
            let listed = backend.observe(ArtifactKind::Ipip6Tunnel, &[]).await.expect("observe");
            assert!(listed.is_empty(), "{listed:?}");
            // Deleting a tunnel that is not there is success (it is gone).
            backend.delete(&desired).await.expect("delete of an absent tunnel");
        }
    }
}

#[tokio::test]
async fn tunnel_on_a_missing_underlying_link_is_missing_and_sends_nothing() {
    let ns = TestNetns::new();
    let backend = backend(&ns);
    let err = backend.create(&tunnel("dslite0", "wan9")).await.expect_err("no underlying link");
    assert!(matches!(err, HostError::Missing { .. }), "{err:?}");
    assert!(err.to_string().contains("link wan9 does not exist"), "{err}");
    let names: Vec<Value> =
        ns.ip_json(&["link", "show"]).iter().map(|l| l["ifname"].clone()).collect();
    assert_eq!(names, [Value::from("lo")]);
}
