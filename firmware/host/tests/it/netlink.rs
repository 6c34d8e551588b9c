//! `NetlinkBackend` against the real kernel: every test gets its own namespace and checks the
//! result with `ip -j` (an independent reader).

use std::net::IpAddr;
use std::time::Instant;

use ipnet::IpNet;
use routerd_host::artifact::{
    AddressSpec, FwmarkRuleSpec, LinkKind, LinkSpec, RouteSpec, RouteTableSpec,
};
use routerd_host::netlink::NetlinkBackend;
use routerd_host::{
    Artifact, ArtifactKind, ArtifactSpec, Backend, ErrorClass, HostError, ROUTERD_ROUTE_PROTOCOL,
};
use serde_json::Value;

use crate::support::TestNetns;

fn backend(ns: &TestNetns) -> NetlinkBackend {
    NetlinkBackend::new(&ns.netns()).expect("netlink backend opens in the test namespace")
}

fn net(s: &str) -> IpNet {
    s.parse().expect("test prefix")
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("test address")
}

fn link(ifname: &str, admin_up: Option<bool>, mtu: Option<u32>) -> Artifact {
    Artifact::new(ArtifactSpec::Link(LinkSpec { ifname: ifname.into(), admin_up, mtu, kind: None }))
}

/// A veth end as observe lists it.
fn veth(ifname: &str, admin_up: bool, mtu: u32) -> Artifact {
    let kind = Some(LinkKind::Other { name: "veth".into() });
    let spec = LinkSpec { ifname: ifname.into(), admin_up: Some(admin_up), mtu: Some(mtu), kind };
    Artifact::new(ArtifactSpec::Link(spec))
}

fn address(ifname: &str, prefix: &str) -> Artifact {
    Artifact::new(ArtifactSpec::Address(AddressSpec {
        ifname: ifname.into(),
        address: net(prefix),
    }))
}

fn route(table: u32, dst: &str, gateway: Option<&str>, oif: Option<&str>, metric: u32) -> Artifact {
    Artifact::new(ArtifactSpec::Route(RouteSpec {
        table,
        destination: net(dst),
        gateway: gateway.map(ip),
        oif: oif.map(str::to_string),
        metric,
        protocol: ROUTERD_ROUTE_PROTOCOL,
    }))
}

fn rule(mark: u32, mask: u32, table: u32, priority: u32) -> Artifact {
    Artifact::new(ArtifactSpec::FwmarkRule(FwmarkRuleSpec { mark, mask, table, priority }))
}

fn table(table: u32) -> Artifact {
    Artifact::new(ArtifactSpec::RouteTable(RouteTableSpec { table }))
}

async fn observe(backend: &NetlinkBackend, kind: ArtifactKind) -> Vec<Artifact> {
    backend.observe(kind, &[]).await.unwrap_or_else(|e| panic!("observe {kind}: {e}"))
}

fn find<'a>(listed: &'a [Artifact], name: &str) -> Option<&'a Artifact> {
    listed.iter().find(|a| a.key.name == name)
}

/// `addr_info[].local/prefixlen` of `dev` as printed by `ip -j address show`.
fn addresses_of(ns: &TestNetns, dev: &str) -> Vec<String> {
    let listed = ns.ip_json(&["address", "show", "dev", dev]);
    let infos = listed.first().and_then(|l| l["addr_info"].as_array().cloned()).unwrap_or_default();
    infos
        .iter()
        .map(|a| format!("{}/{}", a["local"].as_str().unwrap_or("?"), a["prefixlen"]))
        .collect()
}

/// Waits (up to 5 s) until the kernel has given `dev` its IPv6 link-local address, which it
/// does once the link has carrier (linkwatch runs asynchronously).
fn wait_for_link_local(ns: &TestNetns, dev: &str) {
    for _ in 0..100 {
        if addresses_of(ns, dev).iter().any(|a| a.starts_with("fe80")) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("{dev} got no IPv6 link-local address");
}

fn routes_in(ns: &TestNetns, family: &str, table: &str) -> Vec<Value> {
    ns.ip_json(&[family, "route", "show", "table", table])
}

fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[tokio::test]
async fn observe_lists_veth_link_with_admin_state_mtu_and_type() {
    let ns = TestNetns::new();
    ns.add_veth("ve0", "ve1");
    ns.ip(&["link", "set", "ve0", "mtu", "1400", "up"]);
    let backend = backend(&ns);

    let links = observe(&backend, ArtifactKind::Link).await;

    let ve0 = find(&links, "ve0").expect("ve0 listed");
    assert_eq!(ve0.spec, veth("ve0", true, 1400).spec);
    let ve1 = find(&links, "ve1").expect("ve1 listed");
    assert_eq!(ve1.spec, veth("ve1", false, 1500).spec);
    // Loopback has no IFLA_INFO_KIND.
    assert_eq!(
        find(&links, "lo").expect("lo listed").spec,
        link("lo", Some(true), Some(65536)).spec
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modify_link_sets_admin_up_and_mtu() {
    let ns = TestNetns::new();
    ns.add_veth("ve0", "ve1");
    let backend = backend(&ns);
    let observed = link("ve0", Some(false), Some(1500));

    let desired = link("ve0", Some(true), Some(1280));
    backend.modify(&observed, &desired).await.expect("modify up + mtu");

    let shown = ns.link("ve0");
    assert_eq!(shown["mtu"], 1280);
    assert!(shown["flags"].as_array().expect("flags").iter().any(|f| f == "UP"), "{shown}");

    // Fields left None are left as found.
    backend.modify(&desired, &link("ve0", Some(false), None)).await.expect("modify down");
    let shown = ns.link("ve0");
    assert_eq!(shown["mtu"], 1280);
    assert!(!shown["flags"].as_array().expect("flags").iter().any(|f| f == "UP"), "{shown}");
}

#[tokio::test]
async fn link_create_of_missing_link_fails_and_delete_is_refused() {
    let ns = TestNetns::new();
    let backend = backend(&ns);

    let err = backend.create(&link("nope0", Some(true), None)).await.expect_err("no such link");
    assert!(matches!(err, HostError::Missing { .. }), "{err:?}");
    assert!(err.to_string().contains("link nope0 does not exist"), "{err}");

    let err = backend.delete(&link("lo", Some(true), Some(65536))).await.expect_err("refused");
    assert!(matches!(err, HostError::Invalid { .. }), "{err:?}");
    assert!(matches!(ns.link("lo")["flags"].as_array(), Some(f) if f.iter().any(|f| f == "UP")));
}

#[tokio::test]
async fn ipv4_address_create_observe_delete() {
    let ns = TestNetns::new();
    ns.add_veth("ve0", "ve1");
    let backend = backend(&ns);
    let addr = address("ve0", "192.0.2.10/24");

    backend.create(&addr).await.expect("create address");
    assert_eq!(addresses_of(&ns, "ve0"), ["192.0.2.10/24"]);

    let listed = observe(&backend, ArtifactKind::Ipv4Address).await;
    assert_eq!(find(&listed, "ve0/192.0.2.10/24"), Some(&addr));
    assert!(find(&listed, "lo/127.0.0.1/8").is_some(), "{listed:?}");
    assert!(listed.iter().all(|a| a.key.kind == ArtifactKind::Ipv4Address));

    let err = backend.create(&addr).await.expect_err("second add");
    assert!(matches!(err, HostError::Rejected { errno: Some(libc::EEXIST), .. }), "{err:?}");
    assert_eq!(err.class(), ErrorClass::Conflict);

    backend.delete(&addr).await.expect("delete address");
    assert!(addresses_of(&ns, "ve0").is_empty());
    assert!(
        find(&observe(&backend, ArtifactKind::Ipv4Address).await, "ve0/192.0.2.10/24").is_none()
    );
}

#[tokio::test]
async fn ipv6_address_create_observe_delete_skips_link_local() {
    let ns = TestNetns::new();
    ns.add_veth("ve0", "ve1");
    ns.ip(&["link", "set", "ve0", "up"]);
    ns.ip(&["link", "set", "ve1", "up"]);
    wait_for_link_local(&ns, "ve0");
    let backend = backend(&ns);
    let addr = address("ve0", "2001:db8::10/64");

    backend.create(&addr).await.expect("create address");
    assert!(addresses_of(&ns, "ve0").contains(&"2001:db8::10/64".to_string()));

    let listed = observe(&backend, ArtifactKind::Ipv6Address).await;
    assert_eq!(find(&listed, "ve0/2001:db8::10/64"), Some(&addr));
    assert!(listed.iter().all(|a| !a.key.name.contains("fe80")), "{listed:?}");

    assert!(address("ve0", "2001:db8::11/64").spec.needs_recreate(&addr.spec));
    backend.delete(&addr).await.expect("delete address");
    assert!(!addresses_of(&ns, "ve0").contains(&"2001:db8::10/64".to_string()));
}

#[tokio::test]
async fn address_create_on_missing_link_fails_with_missing() {
    let ns = TestNetns::new();
    let backend = backend(&ns);
    let err = backend.create(&address("nope0", "192.0.2.1/24")).await.expect_err("no link");
    assert!(matches!(err, HostError::Missing { .. }), "{err:?}");
    assert_eq!(err.reason(), "DependencyMissing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn route_create_observe_replace_delete_in_table_100() {
    let ns = TestNetns::new();
    ns.add_veth_with_address("ve0", "ve1", "10.0.0.1/24");
    let backend = backend(&ns);
    let desired = route(100, "198.51.100.0/24", Some("10.0.0.2"), Some("ve0"), 10);

    backend.create(&desired).await.expect("create route");
    let shown = routes_in(&ns, "-4", "100");
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0]["dst"], "198.51.100.0/24");
    assert_eq!(shown[0]["gateway"], "10.0.0.2");
    assert_eq!(shown[0]["dev"], "ve0");
    assert_eq!(shown[0]["metric"], 10);
    assert_eq!(as_text(&shown[0]["protocol"]), "208");

    let listed = observe(&backend, ArtifactKind::Ipv4Route).await;
    let observed = find(&listed, "100:198.51.100.0/24:10").expect("route observed");
    assert_eq!(observed, &desired);
    assert!(desired.spec.drift(&observed.spec).is_empty());
    assert!(find(&listed, "254:10.0.0.0/24:0").is_some(), "connected route in main: {listed:?}");
    assert!(listed.iter().all(|a| !a.key.name.starts_with("255:")), "no local table");

    let replaced = route(100, "198.51.100.0/24", Some("10.0.0.3"), Some("ve0"), 10);
    backend.modify(observed, &replaced).await.expect("replace route");
    let shown = routes_in(&ns, "-4", "100");
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0]["gateway"], "10.0.0.3");
    assert_eq!(as_text(&shown[0]["protocol"]), "208");

    let listed = observe(&backend, ArtifactKind::Ipv4Route).await;
    let observed = find(&listed, "100:198.51.100.0/24:10").expect("route observed");
    backend.delete(observed).await.expect("delete route");
    assert!(routes_in(&ns, "-4", "100").is_empty());
}

#[tokio::test]
async fn ipv6_route_create_observe_delete_skips_kernel_routes() {
    let ns = TestNetns::new();
    ns.add_veth("ve0", "ve1");
    ns.ip(&["link", "set", "ve0", "up"]);
    ns.ip(&["link", "set", "ve1", "up"]);
    ns.ip(&["address", "add", "2001:db8:1::1/64", "dev", "ve0", "nodad"]);
    let backend = backend(&ns);
    let desired = route(100, "2001:db8:99::/48", Some("2001:db8:1::2"), Some("ve0"), 1024);

    backend.create(&desired).await.expect("create route");
    let shown = routes_in(&ns, "-6", "100");
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0]["gateway"], "2001:db8:1::2");

    let listed = observe(&backend, ArtifactKind::Ipv6Route).await;
    assert_eq!(find(&listed, "100:2001:db8:99::/48:1024"), Some(&desired));
    assert!(listed.iter().all(|a| !a.key.name.contains("fe80::/64")), "{listed:?}");
    assert!(listed.iter().all(|a| !a.key.name.contains(":ff00::/8")), "{listed:?}");

    backend.delete(&desired).await.expect("delete route");
    assert!(routes_in(&ns, "-6", "100").is_empty());
}

#[tokio::test]
async fn route_with_unreachable_gateway_is_rejected_with_enetunreach() {
    let ns = TestNetns::new();
    ns.add_veth_with_address("ve0", "ve1", "10.0.0.1/24");
    let backend = backend(&ns);

    let err = backend
        .create(&route(100, "198.51.100.0/24", Some("203.0.113.1"), None, 0))
        .await
        .expect_err("gateway not reachable");

    let HostError::Rejected { errno, message, op, .. } = &err else {
        panic!("expected Rejected, got {err:?}")
    };
    assert_eq!(*errno, Some(libc::ENETUNREACH));
    assert_eq!(*op, "create");
    assert!(message.to_lowercase().contains("gateway"), "kernel's message kept: {message}");
    assert_eq!(err.class(), ErrorClass::Rejected);
    assert_eq!(err.reason(), "KernelRejected");
}

/// A batch of route creates large enough to go in two lanes (the machines this runs on have
/// two CPUs): every route lands, one result per route in order, and a route the kernel refuses
/// fails alone with its own errno.
#[tokio::test]
async fn a_batch_of_routes_is_created_in_two_lanes_with_one_result_each() {
    let ns = TestNetns::new();
    ns.add_veth_with_address("ve0", "ve1", "10.0.0.1/24");
    let backend = backend(&ns);
    let limit = backend.create_batch_limit(ArtifactKind::Ipv4Route);
    let two_cpus = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
    assert_eq!(limit > 1, two_cpus, "routes are batched exactly when there are two CPUs");
    assert_eq!(backend.create_batch_limit(ArtifactKind::Ipv4Address), 1);
    let mut routes: Vec<Artifact> = (0..200u32)
        .map(|i| route(100, &format!("172.16.{i}.0/24"), Some("10.0.0.2"), Some("ve0"), 0))
        .collect();
    // In the second half: unreachable gateway.
    routes[150] = route(100, "198.51.100.0/24", Some("203.0.113.1"), None, 0);
    let batch: Vec<&Artifact> = routes.iter().collect();

    let results = backend.create_many(&batch).await;

    assert_eq!(results.len(), routes.len());
    for (i, result) in results.iter().enumerate() {
        if i == 150 {
            let Err(HostError::Rejected { errno, .. }) = result else {
                panic!("route 150 must be rejected, got {result:?}")
            };
            assert_eq!(*errno, Some(libc::ENETUNREACH));
        } else {
            assert!(result.is_ok(), "route {i}: {result:?}");
        }
    }
    let installed = routes_in(&ns, "-4", "100");
    assert_eq!(installed.len(), 199, "every route but the refused one is in table 100");
    for i in [0u32, 99, 100, 199] {
        let dst = format!("172.16.{i}.0/24");
        assert!(installed.iter().any(|r| r["dst"] == dst.as_str()), "{dst} missing");
    }
}

/// A route whose gateway is reachable only through another route of the same batch (a
/// dependency the config does not name) lands even when the two go in different lanes and the
/// dependent one is sent first: it is sent again once the batch's other routes are in.
#[tokio::test]
async fn a_route_refused_in_a_lane_is_sent_again_after_the_rest_of_the_batch() {
    let ns = TestNetns::new();
    ns.add_veth_with_address("ve0", "ve1", "10.0.0.1/24");
    let backend = backend(&ns);
    // First half: routes via 192.0.2.1, reachable only once the on-link route of the second
    // half (the batch's last route) is in. Index 0 is sent before the other lane starts.
    let mut routes: Vec<Artifact> = (0..64u32)
        .map(|i| route(254, &format!("172.17.{i}.0/24"), Some("192.0.2.1"), Some("ve0"), 0))
        .collect();
    routes.extend(
        (0..63u32)
            .map(|i| route(254, &format!("172.18.{i}.0/24"), Some("10.0.0.2"), Some("ve0"), 0)),
    );
    routes.push(route(254, "192.0.2.0/24", None, Some("ve0"), 0));
    let batch: Vec<&Artifact> = routes.iter().collect();

    let results = backend.create_many(&batch).await;

    for (i, result) in results.iter().enumerate() {
        assert!(result.is_ok(), "route {i}: {result:?}");
    }
    let installed = routes_in(&ns, "-4", "main");
    for dst in ["172.17.0.0/24", "172.17.63.0/24", "172.18.0.0/24", "192.0.2.0/24"] {
        assert!(installed.iter().any(|r| r["dst"] == dst), "{dst} missing from table main");
    }
}

#[tokio::test]
async fn route_table_is_observed_only_while_it_holds_our_routes_and_its_delete_removes_no_route() {
    let ns = TestNetns::new();
    ns.add_veth_with_address("ve0", "ve1", "10.0.0.1/24");
    ns.ip(&[
        "route",
        "add",
        "203.0.113.0/24",
        "via",
        "10.0.0.2",
        "table",
        "100",
        "proto",
        "static",
    ]);
    let backend = backend(&ns);
    let tables = |listed: Vec<Artifact>| listed.into_iter().map(|a| a.key.name).collect::<Vec<_>>();

    assert!(tables(observe(&backend, ArtifactKind::Ipv4RouteTable).await).is_empty());

    backend.create(&table(100)).await.expect("table create is a no-op");
    for dst in ["198.51.100.0/24", "198.51.101.0/24"] {
        backend.create(&route(100, dst, Some("10.0.0.2"), None, 0)).await.expect("create route");
    }
    backend.create(&route(254, "198.51.102.0/24", Some("10.0.0.2"), None, 0)).await.expect("main");
    // main (254) holds one of our routes too, but system tables are never route-table artifacts.
    assert_eq!(tables(observe(&backend, ArtifactKind::Ipv4RouteTable).await), ["100"]);

    // Its routes go one by one, as the ledger records them: the table's delete takes none,
    // not even a route with routerd's protocol that routerd did not install (issue 33 §2).
    backend.delete(&table(100)).await.expect("table delete");
    assert_eq!(routes_in(&ns, "-4", "100").len(), 3);
    for dst in ["198.51.100.0/24", "198.51.101.0/24"] {
        backend.delete(&route(100, dst, Some("10.0.0.2"), None, 0)).await.expect("delete route");
    }

    let left = routes_in(&ns, "-4", "100");
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["dst"], "203.0.113.0/24");
    assert_eq!(as_text(&left[0]["protocol"]), "static");
    assert_eq!(
        routes_in(&ns, "-4", "main").iter().filter(|r| r["dst"] == "198.51.102.0/24").count(),
        1
    );
    assert!(tables(observe(&backend, ArtifactKind::Ipv4RouteTable).await).is_empty());
    let refused = backend.delete(&table(254)).await;
    assert!(matches!(refused, Err(HostError::Invalid { .. })), "{refused:?}");
}

#[tokio::test]
async fn fwmark_rule_create_observe_modify_delete() {
    let ns = TestNetns::new();
    let backend = backend(&ns);
    let shown_rules = |ns: &TestNetns| {
        ns.ip_json(&["-4", "rule", "show"])
            .into_iter()
            .filter(|r| r.get("fwmark").is_some())
            .map(|r| {
                let mask = r.get("fwmask").map(as_text).unwrap_or_default();
                format!(
                    "{} {}/{} {}",
                    r["priority"],
                    as_text(&r["fwmark"]),
                    mask,
                    as_text(&r["table"])
                )
            })
            .collect::<Vec<_>>()
    };
    let desired = rule(0x100, 0xff00, 100, 1000);

    backend.create(&desired).await.expect("create rule");
    assert_eq!(shown_rules(&ns), ["1000 0x100/0xff00 100"]);

    let listed = observe(&backend, ArtifactKind::Ipv4FwmarkRule).await;
    assert_eq!(listed, std::slice::from_ref(&desired), "only fwmark rules are listed");

    let changed = rule(0x100, 0xffffffff, 101, 1001);
    backend.modify(&desired, &changed).await.expect("modify rule");
    assert_eq!(shown_rules(&ns), ["1001 0x100/ 101"]);
    assert_eq!(
        observe(&backend, ArtifactKind::Ipv4FwmarkRule).await,
        std::slice::from_ref(&changed)
    );

    backend.delete(&changed).await.expect("delete rule");
    assert!(shown_rules(&ns).is_empty());
    let err = backend.delete(&changed).await.expect_err("already gone");
    assert!(matches!(err, HostError::Rejected { errno: Some(_), .. }), "{err:?}");
}

#[tokio::test]
async fn backend_names_its_kinds_and_refuses_others() {
    let ns = TestNetns::new();
    let backend = backend(&ns);
    assert_eq!(backend.apply_with(), routerd_host::ApplyWith::Rtnetlink);
    assert!(backend.kinds().contains(&ArtifactKind::Ipv4FwmarkRule));
    assert!(backend.kinds().contains(&ArtifactKind::Ipip6Tunnel));
    let err = backend.observe(ArtifactKind::Sysctl, &[]).await.expect_err("not ours");
    assert_eq!(err.class(), ErrorClass::Bug);
}

/// Timing of creating and observing many routes; prints, asserts nothing about time.
/// Run: `cargo test -p routerd-host --test it -- --ignored --nocapture bench_`
/// (`ROUTERD_BENCH_ROUTES` sets the count, default 2000).
#[tokio::test]
#[ignore = "benchmark: prints timings"]
async fn bench_create_and_observe_many_routes() {
    let count: u32 =
        std::env::var("ROUTERD_BENCH_ROUTES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let ns = TestNetns::new();
    ns.add_veth_with_address("ve0", "ve1", "10.0.0.1/24");
    let backend = backend(&ns);
    let routes: Vec<Artifact> = (0..count)
        .map(|i| {
            let dst = format!("172.{}.{}.{}/32", 16 + (i >> 16), (i >> 8) & 0xff, i & 0xff);
            route(100, &dst, Some("10.0.0.2"), Some("ve0"), 0)
        })
        .collect();

    let start = Instant::now();
    for r in &routes {
        backend.create(r).await.expect("create route");
    }
    let created = start.elapsed();

    let start = Instant::now();
    let listed = observe(&backend, ArtifactKind::Ipv4Route).await;
    let observed = start.elapsed();
    assert!(listed.len() >= routes.len());

    let start = Instant::now();
    backend.delete(&table(100)).await.expect("flush");
    let flushed = start.elapsed();
    println!(
        "{count} routes: create {created:?} ({:?}/route), observe {observed:?}, flush table {flushed:?}",
        created / count.max(1)
    );
}

#[tokio::test]
async fn delegated_prefixes_are_the_unreachable_dhcp_routes_of_table_main() {
    let ns = TestNetns::new();
    ns.ip(&["link", "set", "lo", "up"]);
    ns.add_veth("wan0", "wan0-peer");
    ns.ip(&["link", "set", "wan0", "up"]);
    // What systemd-networkd installs for a delegated /56, and what is not a delegation: an
    // unreachable route of another protocol, one in another table, a unicast dhcp route.
    ns.ip(&[
        "-6",
        "route",
        "add",
        "unreachable",
        "2001:db8:a0ff::/56",
        "dev",
        "lo",
        "proto",
        "dhcp",
    ]);
    ns.ip(&["-6", "route", "add", "unreachable", "2001:db8:b000::/48", "proto", "static"]);
    ns.ip(&[
        "-6",
        "route",
        "add",
        "unreachable",
        "2001:db8:c000::/56",
        "proto",
        "dhcp",
        "table",
        "100",
    ]);
    ns.ip(&["-6", "route", "add", "2001:db8:d000::/64", "dev", "wan0", "proto", "dhcp"]);
    let backend = backend(&ns);
    let found = backend.delegated_prefixes().await.expect("dump");
    assert_eq!(found, vec!["2001:db8:a0ff::/56".parse::<ipnet::Ipv6Net>().expect("net")]);
    // The delegation lost: networkd removes the route.
    ns.ip(&["-6", "route", "del", "unreachable", "2001:db8:a0ff::/56"]);
    assert!(backend.delegated_prefixes().await.expect("dump").is_empty());
}
