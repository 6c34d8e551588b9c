//! DHCP client bindings through systemd-networkd (issue "every seed resource kind applied for
//! real", §1): the engine writes routerd's `.network` file for the WAN, the real networkd
//! (`routerd_host::testing::Networkd`) runs inside the router namespace and takes a lease from
//! a real DHCP server (dnsmasq) in the upstream namespace, and leaves routerd's own addresses,
//! routes and policy rules alone.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use routerd_engine::Phase;
use routerd_engine::result::OperationResult;
use routerd_host::testing::{FakeSystemd, Networkd};

use crate::support::{Daemon, LAB, Lab, lab_with_systemd, ops, wait_for};

/// The lab plus a DHCP client on the WAN; `extra` goes at the end of its spec.
fn config(extra: &str) -> String {
    format!(
        "{LAB}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPAddress
      metadata:
        name: wan-dhcp
      spec:
        interface: wan
{extra}
"
    )
}

/// The firmware's networkd.conf drop-in, as the images ship it.
fn networkd_conf() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../board/common/rootfs-overlay/etc/systemd/networkd.conf.d/routerd.conf")
}

fn network_dir(lab: &Lab) -> PathBuf {
    lab.root().join("etc/systemd/network")
}

fn start_networkd(lab: &Lab, systemd: &FakeSystemd) -> Networkd {
    Networkd::start(
        lab.router.name(),
        &network_dir(lab),
        &networkd_conf(),
        systemd.address(),
        lab.dir(),
    )
}

/// The ISP: a DHCP server on the upstream side of the WAN cable, handing out
/// 198.51.100.50-60 with the upstream as gateway and DNS server.
fn isp_dhcp_server(lab: &Lab) -> Daemon {
    let dir = lab.dir().display().to_string();
    Daemon::spawn(
        lab.upstream
            .command("dnsmasq")
            .args(["--keep-in-foreground", "--port=0"])
            .args(["--conf-file=/dev/null", "--interface=up0", "--bind-interfaces"])
            .args(["--dhcp-range=198.51.100.50,198.51.100.60,2m"])
            .args(["--dhcp-option=option:router,198.51.100.1", "--user=root", "--pid-file="])
            .args(["--dhcp-option=option:dns-server,198.51.100.1"])
            .arg(format!("--dhcp-leasefile={dir}/isp.leases"))
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )
}

/// The router's IPv4 addresses on wan0 that a DHCP lease gave (`dynamic`), as `a.b.c.d/len`.
fn leased(lab: &Lab) -> Vec<String> {
    lab.ip(&["-4", "-o", "addr", "show", "dev", "wan0"])
        .lines()
        .filter(|l| l.contains(" dynamic"))
        .filter_map(|l| l.split_whitespace().nth(3).map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn networkd_takes_a_lease_on_the_wan_and_leaves_routerds_state_alone() {
    let (lab, systemd) = lab_with_systemd().await;
    let networkd = start_networkd(&lab, &systemd);
    let _isp = isp_dhcp_server(&lab);

    let doc = lab.reconcile(&config("        routeMetric: 500")).await;
    assert!(
        ops(&doc, OperationResult::Failed).is_empty(),
        "{:#?}\n{}",
        doc.operations,
        networkd.log()
    );
    assert!(ops(&doc, OperationResult::Done).contains(&"create dhcp.ipv4.client/wan0".to_string()));
    let res = doc.resources.iter().find(|r| r.id.ends_with("/wan-dhcp")).expect("resource");
    assert_eq!(res.phase, Phase::Healthy, "{:#?}", res.conditions);
    let file = std::fs::read_to_string(network_dir(&lab).join("10-routerd-wan0.network"))
        .expect("routerd's .network file");
    assert!(file.contains("Name=wan0\n") && file.contains("DHCP=ipv4\n"), "{file}");
    assert!(file.contains("RouteMetric=500\n") && file.contains("UseHostname=no\n"), "{file}");
    assert!(lab.ledger_keys().contains(&"dhcp.ipv4.client/wan0".to_string()));

    // A lease from the ISP's pool, and the default route it gives, with the metric asked for.
    let lease = wait_for("a DHCP lease on wan0", Duration::from_secs(30), || {
        leased(&lab).into_iter().next()
    });
    assert!(lease.starts_with("198.51.100.5") || lease.starts_with("198.51.100.60"), "{lease}");
    wait_for("the lease's default route", Duration::from_secs(10), || {
        let routes = lab.ip(&["-4", "route", "show", "default"]);
        routes.lines().any(|l| l.contains("proto dhcp") && l.contains("metric 500")).then_some(())
    });

    // routerd's own state on the same link survives networkd taking the link over: the static
    // address, the static default route and the policy routing rule and table.
    let addrs = lab.ip(&["-4", "-o", "addr", "show", "dev", "wan0"]);
    assert!(addrs.contains("198.51.100.2/24"), "{addrs}");
    let routes = lab.ip(&["-4", "route", "show", "default"]);
    assert!(
        routes
            .lines()
            .any(|l| l.starts_with("default via 198.51.100.1") && !l.contains("proto dhcp")),
        "{routes}"
    );
    let rules = lab.ip(&["-4", "rule", "show"]);
    assert!(rules.contains("fwmark 0x100"), "{rules}");
    assert!(lab.ip(&["-4", "route", "show", "table", "100"]).contains("default"));

    // The no-op: networkd's lease is not drift, routerd's state is not disturbed.
    let again = lab.reconcile(&config("        routeMetric: 500")).await;
    assert!(again.operations.is_empty(), "{:#?}", again.operations);

    // A changed setting rewrites the block; networkd reconfigures the link with it.
    let doc = lab.reconcile(&config("        routeMetric: 600")).await;
    assert_eq!(ops(&doc, OperationResult::Done), vec!["modify dhcp.ipv4.client/wan0".to_string()]);
    wait_for("the default route with the new metric", Duration::from_secs(30), || {
        let routes = lab.ip(&["-4", "route", "show", "default"]);
        routes.lines().any(|l| l.contains("proto dhcp") && l.contains("metric 600")).then_some(())
    });

    // Without the resource, the ledger-owned binding is removed: the file is gone and networkd
    // gives the lease back; routerd's static address stays.
    let doc = lab.reconcile(LAB).await;
    assert_eq!(ops(&doc, OperationResult::Done), vec!["delete dhcp.ipv4.client/wan0".to_string()]);
    assert!(!network_dir(&lab).join("10-routerd-wan0.network").exists());
    wait_for("the lease released", Duration::from_secs(30), || {
        leased(&lab).is_empty().then_some(())
    });
    let addrs = lab.ip(&["-4", "-o", "addr", "show", "dev", "wan0"]);
    assert!(addrs.contains("198.51.100.2/24"), "{addrs}");
    assert!(!lab.ledger_keys().iter().any(|k| k.starts_with("dhcp.")));
}

/// The ISP's resolver at its DHCP server's address: a second dnsmasq that knows one name in
/// `isp.example` and nothing else.
fn isp_resolver(lab: &Lab) -> Daemon {
    Daemon::spawn(
        lab.upstream
            .command("dnsmasq")
            .args(["--keep-in-foreground", "--no-resolv"])
            .args(["--no-hosts", "--conf-file=/dev/null", "--listen-address=198.51.100.1"])
            .args(["--bind-interfaces", "--address=/portal.isp.example/203.0.113.80"])
            .args(["--pid-file=", "--user=root", "--dhcp-leasefile=/dev/null"])
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )
}

/// The lease's router and DNS servers are runtime values (ADR 0008) read from networkd: a
/// default-route candidate with `gatewaySource: dhcp4` routes through the router, a forwarder
/// with `upstreamSource: dhcp4` sends its domain to the lease's DNS server, and a LAN scope
/// with `dnsSource: dhcp4` hands that server out. The route and the forwarder wait for the
/// lease, and go when it does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leases_router_and_dns_server_reach_a_default_route_a_forwarder_and_a_lan_scope() {
    let (lab, systemd) = lab_with_systemd().await;
    let networkd = start_networkd(&lab, &systemd);
    let _resolver = isp_resolver(&lab);
    let extra = "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DefaultRoutePolicy
      metadata: {name: isp}
      spec:
        candidates:
          - {name: isp, interface: wan, gatewaySource: dhcp4, priority: 50}
    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSConditionalForwarder
      metadata: {name: isp}
      spec: {domain: isp.example, upstreamSource: dhcp4, upstreamInterface: wan}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPServer
      metadata: {name: dhcp}
      spec: {managed: true, listenInterfaces: [lan]}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPScope
      metadata: {name: isp}
      spec:
        server: dhcp
        interface: lan
        rangeStart: 192.168.50.100
        rangeEnd: 192.168.50.150
        dnsSource: dhcp4
        dnsInterface: wan";
    let yaml = config(extra);
    let conf = lab.root().join("var/lib/routerd/dnsmasq/dnsmasq.conf");
    let candidate_route = |lab: &Lab| {
        let routes = lab.ip(&["-4", "route", "show", "default", "metric", "50"]);
        routes.lines().find(|l| l.contains("proto 208")).map(str::to_owned)
    };

    // No DHCP server yet, so no lease: the route and the forwarder's section wait on it.
    let doc = lab.reconcile(&yaml).await;
    assert!(
        ops(&doc, OperationResult::Failed).is_empty(),
        "{:#?}\n{}",
        doc.operations,
        networkd.log()
    );
    let done = ops(&doc, OperationResult::Done);
    assert!(!done.iter().any(|o| o.contains("0.0.0.0/0:50") || o.contains("server/isp.example")));
    assert_eq!(candidate_route(&lab), None);

    // The lease: the next reconciles read its router and DNS server from networkd.
    let _isp = isp_dhcp_server(&lab);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let route = loop {
        let doc = lab.reconcile(&yaml).await;
        assert!(
            ops(&doc, OperationResult::Failed).is_empty(),
            "{:#?}\n{}",
            doc.operations,
            networkd.log()
        );
        let forwarded = std::fs::read_to_string(&conf).unwrap_or_default();
        if let Some(route) = candidate_route(&lab)
            && forwarded.contains("server=/isp.example/198.51.100.1\n")
            && forwarded.contains("dhcp-option=tag:isp,option:dns-server,198.51.100.1\n")
        {
            break route;
        }
        assert!(std::time::Instant::now() < deadline, "no lease values: {forwarded}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert!(route.starts_with("default via 198.51.100.1 dev wan0"), "{route}");
    let doc = lab.reconcile(&yaml).await;
    for r in doc.resources.iter().filter(|r| r.id.ends_with("/isp")) {
        assert_eq!(r.phase, Phase::Healthy, "{}: {:#?}", r.id, r.conditions);
    }
    // The router's dnsmasq answers for the ISP's domain with what the ISP's resolver says.
    let answer = lab
        .router
        .command("busybox")
        .args(["nslookup", "portal.isp.example", "127.0.0.1"])
        .output()
        .expect("busybox nslookup");
    let text = String::from_utf8_lossy(&answer.stdout);
    assert!(text.contains("203.0.113.80"), "{text}{}", String::from_utf8_lossy(&answer.stderr));

    // The binding removed: the lease is given back, and what was built from it goes.
    let doc = lab.reconcile(&format!("{LAB}\n{extra}\n")).await;
    let done = ops(&doc, OperationResult::Done);
    for expected in [
        "delete dhcp.ipv4.client/wan0",
        "delete linux.ipv4.route/254:0.0.0.0/0:50",
        "delete dnsmasq.config/server/isp.example",
        "modify dnsmasq.config/dhcpv4-range/isp",
    ] {
        assert!(done.contains(&expected.to_string()), "missing {expected} in {done:#?}");
    }
    assert_eq!(candidate_route(&lab), None);
    let forwarded = std::fs::read_to_string(&conf).unwrap_or_default();
    assert!(!forwarded.contains("isp.example"), "{forwarded}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binding_without_effect_is_reported_and_repaired() {
    let (lab, systemd) = lab_with_systemd().await;

    // No networkd: the binding fails, saying so, and writes nothing.
    let doc = lab.reconcile(&config("")).await;
    let failed = doc
        .operations
        .iter()
        .find(|o| o.result == OperationResult::Failed)
        .expect("a failed operation");
    let err = failed.error.clone().unwrap_or_default();
    assert!(err.contains("systemd-networkd is not running"), "{err}");
    assert!(!network_dir(&lab).join("10-routerd-wan0.network").exists());

    // Someone else's file matches wan0 first: networkd takes it, the binding has no effect,
    // and the error names the file.
    std::fs::create_dir_all(network_dir(&lab)).expect("dir");
    std::fs::write(
        network_dir(&lab).join("05-wired.network"),
        "[Match]\nName=wan*\n\n[Network]\nDHCP=no\n",
    )
    .expect("foreign file");
    let networkd = start_networkd(&lab, &systemd);
    let doc = lab.reconcile(&config("")).await;
    let failed = doc
        .operations
        .iter()
        .find(|o| o.result == OperationResult::Failed)
        .expect("a failed operation");
    let err = failed.error.clone().unwrap_or_default();
    assert!(err.contains("05-wired.network"), "{err}\n{}", networkd.log());
    let res = doc.resources.iter().find(|r| r.id.ends_with("/wan-dhcp")).expect("resource");
    assert_eq!(res.phase, Phase::Blocked);

    // The failed change took its file back: nothing is left that looks applied.
    assert!(!network_dir(&lab).join("10-routerd-wan0.network").exists());

    // With that file gone, the binding applies.
    std::fs::remove_file(network_dir(&lab).join("05-wired.network")).expect("rm");
    let doc = lab.reconcile(&config("")).await;
    assert_eq!(
        ops(&doc, OperationResult::Done),
        vec!["create dhcp.ipv4.client/wan0".to_string()],
        "{:#?}",
        doc.operations
    );
    let res = doc.resources.iter().find(|r| r.id.ends_with("/wan-dhcp")).expect("resource");
    assert_eq!(res.phase, Phase::Healthy, "{:#?}", res.conditions);

    // Drift: a file of someone else's comes to match wan0 first (and networkd reloads). The
    // binding is without effect; plan shows it, and reconcile says why it cannot repair it.
    std::fs::write(network_dir(&lab).join("05-wired.network"), "[Match]\nName=wan*\n")
        .expect("foreign file");
    reload_networkd(&systemd);
    let plan = lab.plan(&config(""), false).await;
    assert_eq!(
        ops(&plan, OperationResult::Planned),
        vec!["modify dhcp.ipv4.client/wan0".to_string()]
    );
    let doc = lab.reconcile(&config("")).await;
    let err = doc.operations.iter().find_map(|o| o.error.clone()).unwrap_or_default();
    assert!(err.contains("05-wired.network"), "{err}");
    std::fs::remove_file(network_dir(&lab).join("05-wired.network")).expect("rm");
    let doc = lab.reconcile(&config("")).await;
    assert_eq!(ops(&doc, OperationResult::Done), vec!["modify dhcp.ipv4.client/wan0".to_string()]);
    drop(networkd);
}

/// `networkctl reload`, as an administrator would run it (busctl, not routerd's client).
fn reload_networkd(systemd: &FakeSystemd) {
    crate::support::run(
        "busctl",
        &[
            "--address",
            systemd.address(),
            "call",
            "org.freedesktop.network1",
            "/org/freedesktop/network1",
            "org.freedesktop.network1.Manager",
            "Reload",
        ],
    );
}
