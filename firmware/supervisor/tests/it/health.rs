//! HealthCheck failover with real probes: `routerd serve` on a router namespace with two
//! uplinks, each to an upstream namespace of its own. ICMP echo requests to the primary's
//! gateway are then dropped in its upstream namespace (the link stays up, so only the probes
//! can tell); the default route moves to the backup, and back once the drop is removed.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::daemon::{Daemon, serve_command, wait_for};
use crate::support::Netns;

/// Two uplinks with health-checked failover, as shipped.
const CONFIG: &str = include_str!("../../../../examples/two-uplinks.yaml");

/// `ip netns exec NS nft ARGS`, which must succeed.
fn nft(ns: &Netns, args: &str) {
    let out = Command::new("ip")
        .args(["netns", "exec", &ns.0, "nft"])
        .args(args.split(' '))
        .output()
        .expect("nft runs");
    assert!(out.status.success(), "nft {args}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Whether the router sends traffic for the internet through `gateway`.
fn routes_via(router: &Netns, gateway: &str) -> bool {
    router.ip(&["route", "get", "192.0.2.9"]).contains(&format!("via {gateway} "))
}

#[test]
fn the_default_route_fails_over_to_the_backup_and_returns_when_the_primary_recovers() {
    let router = Netns::new("hc-r");
    let primary = Netns::new("hc-p");
    let backup = Netns::new("hc-b");
    for (ns, link, peer, gateway) in
        [(&primary, "wan0", "up0", "198.51.100.1/24"), (&backup, "wan1", "up1", "203.0.113.1/24")]
    {
        router.ip(&["link", "add", link, "type", "veth", "peer", "name", peer, "netns", &ns.0]);
        ns.ip(&["addr", "add", gateway, "dev", peer]);
        ns.ip(&["link", "set", peer, "up"]);
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("router.yaml"), CONFIG).expect("config");
    let child = serve_command(&router.0, dir.path()).spawn().expect("routerd serve starts");
    let _daemon = Daemon(child);

    // Both checks turn healthy: the primary's preferred route carries the traffic.
    wait_for("the primary preferred", Duration::from_secs(30), || {
        router.ip(&["route", "show", "default"]).contains("metric 20 ")
            && routes_via(&router, "198.51.100.1")
    });

    // Echo requests to the primary's gateway are dropped; its link stays up.
    nft(&primary, "add table inet cut");
    nft(&primary, "add chain inet cut input { type filter hook input priority 0 ; }");
    nft(&primary, "add rule inet cut input icmp type echo-request drop");
    let cut = Instant::now();
    wait_for("failover to the backup", Duration::from_secs(30), || {
        routes_via(&router, "203.0.113.1")
    });
    eprintln!("failover after {:?} (interval 1s, unhealthyThreshold 2)", cut.elapsed());
    let routes = router.ip(&["route", "show", "default"]);
    assert!(
        routes.contains("via 198.51.100.1 dev wan0") && routes.contains("metric 1000010"),
        "{routes}"
    );
    assert!(!routes.contains("metric 10 "), "the preferred route is withdrawn: {routes}");

    // The primary answers again: it is preferred again after healthyThreshold successes.
    nft(&primary, "delete table inet cut");
    let healed = Instant::now();
    wait_for("return to the primary", Duration::from_secs(30), || {
        routes_via(&router, "198.51.100.1")
    });
    eprintln!("returned after {:?} (interval 1s, healthyThreshold 2)", healed.elapsed());
}

/// The echo requests `ns` has received since `count_echo_requests` set up its counter.
fn echo_requests(ns: &Netns) -> u64 {
    let out = Command::new("ip")
        .args(["netns", "exec", &ns.0, "nft", "list", "chain", "inet", "probes", "input"])
        .output()
        .expect("nft runs");
    let text = String::from_utf8_lossy(&out.stdout);
    text.split("packets ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn count_echo_requests(ns: &Netns) {
    nft(ns, "add table inet probes");
    nft(ns, "add chain inet probes input { type filter hook input priority 0 ; }");
    nft(ns, "add rule inet probes input icmp type echo-request counter");
}

#[test]
fn a_check_whose_when_does_not_hold_sends_no_probe_until_it_does() {
    let router = Netns::new("hw-r");
    let primary = Netns::new("hw-p");
    let backup = Netns::new("hw-b");
    for (ns, link, peer, gateway) in
        [(&primary, "wan0", "up0", "198.51.100.1/24"), (&backup, "wan1", "up1", "203.0.113.1/24")]
    {
        router.ip(&["link", "add", link, "type", "veth", "peer", "name", peer, "netns", &ns.0]);
        ns.ip(&["addr", "add", gateway, "dev", peer]);
        ns.ip(&["link", "set", peer, "up"]);
    }
    count_echo_requests(&backup);
    // The backup (a metered LTE link, say) is probed only while `uplink` is `lte`: while wan1
    // has a global IPv6 address, which it has not yet.
    let config = CONFIG.replace(
        "      spec: {interface: backup, target: 203.0.113.1, interval: 1s, timeout: 500ms}\n",
        "      spec:
        interface: backup
        target: 203.0.113.1
        interval: 1s
        timeout: 500ms
        when: {state: {uplink: {equals: lte}}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: StatePolicy
      metadata: {name: uplink}
      spec:
        variable: uplink
        interface: backup
        values:
          - {value: lte, when: {ipv6Address: {global: true}}}
",
    );
    assert!(config.contains("equals: lte"), "the example's backup check moved");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("router.yaml"), config).expect("config");
    let child = serve_command(&router.0, dir.path()).spawn().expect("routerd serve starts");
    let _daemon = Daemon(child);

    // The primary is probed and preferred; several of the backup's intervals pass without a
    // probe to it, and without its preferred route.
    wait_for("the primary preferred", Duration::from_secs(30), || {
        router.ip(&["route", "show", "default"]).contains("metric 10 ")
    });
    let quiet = Instant::now();
    while quiet.elapsed() < Duration::from_secs(4) {
        assert_eq!(echo_requests(&backup), 0, "the paused check probed the backup");
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(!router.ip(&["route", "show", "default"]).contains("metric 20 "));

    // The condition holds: the probes start, and the backup's preferred route comes.
    router.ip(&["addr", "add", "2001:db8:1::2/64", "dev", "wan1", "nodad"]);
    wait_for("the backup probed and preferred", Duration::from_secs(30), || {
        echo_requests(&backup) > 0
            && router.ip(&["route", "show", "default"]).contains("metric 20 ")
    });
}
