//! HealthCheck failover with real probes: `routerd serve` on a router namespace with two
//! uplinks, each to an upstream namespace of its own. ICMP echo requests to the primary's
//! gateway are then dropped in its upstream namespace (the link stays up, so only the probes
//! can tell); the default route moves to the backup, and back once the drop is removed.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::daemon::wait_for;
use crate::support::Netns;

const ROUTERD: &str = env!("CARGO_BIN_EXE_routerd");

const CONFIG: &str = "apiVersion: routerd.net/v1alpha1
kind: Router
metadata:
  name: t
spec:
  resources:
    - apiVersion: net.routerd.net/v1alpha1
      kind: Interface
      metadata: {name: wan}
      spec: {ifname: wan0, managed: true, adminUp: true}
    - apiVersion: net.routerd.net/v1alpha1
      kind: Interface
      metadata: {name: backup}
      spec: {ifname: wan1, managed: true, adminUp: true}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticAddress
      metadata: {name: wan-v4}
      spec: {interface: wan, address: 198.51.100.2/24}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticAddress
      metadata: {name: backup-v4}
      spec: {interface: backup, address: 203.0.113.2/24}
    - apiVersion: net.routerd.net/v1alpha1
      kind: HealthCheck
      metadata: {name: wan-gw}
      spec: {interface: wan, targetSource: defaultGateway, interval: 1s, timeout: 500ms, unhealthyThreshold: 2, healthyThreshold: 2}
    - apiVersion: net.routerd.net/v1alpha1
      kind: HealthCheck
      metadata: {name: backup-gw}
      spec: {interface: backup, target: 203.0.113.1, interval: 1s, timeout: 500ms}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DefaultRoutePolicy
      metadata: {name: uplinks}
      spec:
        candidates:
          - {name: fiber, interface: wan, gatewaySource: static, gateway: 198.51.100.1, priority: 10, healthCheck: wan-gw}
          - {name: lte, interface: backup, gatewaySource: static, gateway: 203.0.113.1, priority: 20, healthCheck: backup-gw}
";

/// The daemon process, killed on drop.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

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
    let child = Command::new(ROUTERD)
        .args(["serve", "--netns", &router.0, "--resync", "1h"])
        .arg("--config")
        .arg(dir.path().join("router.yaml"))
        .arg("--ledger")
        .arg(dir.path().join("l.redb"))
        .arg("--control-socket")
        .arg(dir.path().join("control.sock"))
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .spawn()
        .expect("routerd serve starts");
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
