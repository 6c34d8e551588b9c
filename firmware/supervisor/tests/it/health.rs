//! HealthCheck failover with real probes: `routerd serve` on a router namespace with two
//! uplinks, each to an upstream namespace of its own. ICMP echo requests to the primary's
//! gateway are then dropped in its upstream namespace (the link stays up, so only the probes
//! can tell); the default route moves to the backup, and back once the drop is removed.

use std::process::Command;
use std::time::{Duration, Instant};

use routerd_test_kit::daemon::Daemon;
use routerd_test_kit::router::{NET, RouterDoc};

use crate::daemon::serve_command;
use crate::support::Netns;

/// Two uplinks with health-checked failover, as shipped.
const CONFIG: &str = include_str!("../../../../examples/two-uplinks.yaml");

/// `ip netns exec NS nft ARGS` (split at spaces), which must succeed.
fn nft(ns: &Netns, args: &str) {
    ns.nft(&args.split(' ').collect::<Vec<_>>());
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
        router.veth_to(link, ns, peer);
        ns.ip(&["addr", "add", gateway, "dev", peer]);
        ns.ip(&["link", "set", peer, "up"]);
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("router.yaml"), CONFIG).expect("config");
    let mut daemon = Daemon::spawn(&mut serve_command(router.name(), dir.path()));

    // Both checks turn healthy: the primary's preferred route carries the traffic.
    daemon.wait_until("the primary preferred", Duration::from_secs(30), || {
        router.ip(&["route", "show", "default"]).contains("metric 20 ")
            && routes_via(&router, "198.51.100.1")
    });

    // Echo requests to the primary's gateway are dropped; its link stays up.
    nft(&primary, "add table inet cut");
    nft(&primary, "add chain inet cut input { type filter hook input priority 0 ; }");
    nft(&primary, "add rule inet cut input icmp type echo-request drop");
    let cut = Instant::now();
    daemon.wait_until("failover to the backup", Duration::from_secs(30), || {
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
    daemon.wait_until("return to the primary", Duration::from_secs(30), || {
        routes_via(&router, "198.51.100.1")
    });
    eprintln!("returned after {:?} (interval 1s, healthyThreshold 2)", healed.elapsed());
}

/// The echo requests `ns` has received since `count_echo_requests` set up its counter.
fn echo_requests(ns: &Netns) -> u64 {
    let out = ns.command("nft").args(["list", "chain", "inet", "probes", "input"]).output();
    let text = String::from_utf8_lossy(&out.expect("nft runs").stdout).into_owned();
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
        router.veth_to(link, ns, peer);
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
    let mut daemon = Daemon::spawn(&mut serve_command(router.name(), dir.path()));

    // The primary is probed and preferred; several of the backup's intervals pass without a
    // probe to it, and without its preferred route.
    daemon.wait_until("the primary preferred", Duration::from_secs(30), || {
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
    daemon.wait_until("the backup probed and preferred", Duration::from_secs(30), || {
        echo_requests(&backup) > 0
            && router.ip(&["route", "show", "default"]).contains("metric 20 ")
    });
}

/// A router with one uplink (`wan0`, 198.51.100.2/24) and no HealthCheck: the default route
/// is added by hand, as an operator or a DHCP client would.
fn gateway_config() -> String {
    RouterDoc::new("gw")
        .resource(NET, "Interface", "wan", "ifname: wan0\nmanaged: true\nadminUp: true")
        .resource(NET, "IPv4StaticAddress", "wan-v4", "interface: wan\naddress: 198.51.100.2/24")
        .to_string()
}

/// `routerctl -o json doctor gateway` against the control socket in `dir`: the checks.
fn gateway_checks(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let routerd = std::path::Path::new(env!("CARGO_BIN_EXE_routerd"));
    let routerctl = routerd.parent().expect("target dir").join("routerctl");
    let out = Command::new(routerctl)
        .arg("--socket")
        .arg(dir.join("control.sock"))
        .args(["-o", "json", "doctor", "gateway"])
        .output()
        .expect("routerctl runs");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    report["checks"].as_array().cloned().unwrap_or_default()
}

/// The status of the G001 check of `gateway`, if the doctor has one.
fn gateway_status(dir: &std::path::Path, gateway: &str) -> Option<String> {
    gateway_checks(dir)
        .into_iter()
        .find(|c| c["code"] == "G001" && c["name"].as_str().is_some_and(|n| n.contains(gateway)))
        .and_then(|c| c["status"].as_str().map(str::to_string))
}

#[test]
fn the_doctor_fails_a_gateway_that_stops_answering_and_passes_it_when_it_is_back() {
    let router = Netns::new("gw-r");
    let upstream = Netns::new("gw-u");
    router.veth_to("wan0", &upstream, "up0");
    upstream.ip(&["addr", "add", "198.51.100.1/24", "dev", "up0"]);
    upstream.ip(&["link", "set", "up0", "up"]);
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("router.yaml"), gateway_config()).expect("config");
    let mut daemon = Daemon::spawn(
        serve_command(router.name(), dir.path())
            .args(["--gateway-interval", "200ms"])
            .stderr(std::process::Stdio::null()),
    );
    daemon.wait_until("the uplink address", Duration::from_secs(20), || {
        router.ip(&["-4", "addr", "show", "dev", "wan0"]).contains("198.51.100.2/24")
    });
    router.ip(&["route", "add", "default", "via", "198.51.100.1", "dev", "wan0"]);
    let gw = "198.51.100.1";
    daemon.wait_until("the gateway check to pass", Duration::from_secs(15), || {
        gateway_status(dir.path(), gw).as_deref() == Some("pass")
    });

    // The upstream loses its address: the route stays, nothing answers for the next hop.
    upstream.ip(&["addr", "del", "198.51.100.1/24", "dev", "up0"]);
    let lost = Instant::now();
    daemon.wait_until("the gateway check to fail", Duration::from_secs(10), || {
        gateway_status(dir.path(), gw).as_deref() == Some("fail")
    });
    eprintln!("gateway failure seen after {:?} (interval 200ms)", lost.elapsed());
    let checks = gateway_checks(dir.path());
    let g001 = checks.iter().find(|c| c["code"] == "G001").expect("G001");
    let detail = g001["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("last echo lost") && detail.contains("loss"), "{g001}");
    assert!(!g001["remedy"].as_str().unwrap_or_default().is_empty(), "{g001}");

    // Back: the check passes again once the loss window is clean.
    upstream.ip(&["addr", "add", "198.51.100.1/24", "dev", "up0"]);
    daemon.wait_until("the gateway check to pass again", Duration::from_secs(15), || {
        gateway_status(dir.path(), gw).as_deref() == Some("pass")
    });
}
