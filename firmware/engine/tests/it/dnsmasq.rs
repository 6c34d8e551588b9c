//! DHCP and DNS through dnsmasq (issue "every seed resource kind applied for real", §2): the
//! engine writes routerd's dnsmasq file and unit, the service manager (the test stand-in for
//! systemd, `routerd_host::testing::FakeSystemd`) runs the real dnsmasq inside the router
//! namespace, and a real DHCP client (busybox `udhcpc`) and resolver (busybox `nslookup`) in
//! the client namespace use it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use routerd_engine::Phase;
use routerd_engine::result::{ConditionStatus, ConditionType, OperationResult, Reason};

use crate::support::{Daemon, LAB, Lab, condition, lab_with_systemd, ops, resource, run, wait_for};

const UNIT: &str = "routerd-dnsmasq.service";

/// The lab plus a DHCP server on lan0 with a pool, and `example.test` forwarded to the
/// upstream namespace's resolver. `scope_extra` goes at the end of the scope's spec.
fn config(scope_extra: &str) -> String {
    format!(
        "{LAB}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPServer
      metadata:
        name: dhcp
      spec:
        managed: true
        listenInterfaces: [lan]
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPScope
      metadata:
        name: lan-pool
      spec:
        server: dhcp
        interface: lan
        rangeStart: 192.168.50.100
        rangeEnd: 192.168.50.150
        leaseTime: 10m
{scope_extra}
    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSConditionalForwarder
      metadata:
        name: example
      spec:
        domain: example.test
        upstreamServers: [198.51.100.1]
"
    )
}

/// Starts busybox `udhcpc` in the foreground on the client's eth0; every event its script gets
/// (`bound`, `renew`, …) is appended to `events` as `EVENT ip=… router=… dns=…`.
fn udhcpc(lab: &Lab, events: &Path) -> Daemon {
    let script = lab.dir().join("udhcpc.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$1 ip=$ip router=$router dns=$dns lease=$lease\" >> {}\n",
            events.display()
        ),
    )
    .expect("script");
    run("chmod", &["0755", &script.display().to_string()]);
    Daemon::spawn(
        lab.client
            .command("busybox")
            .args(["udhcpc", "-f", "-i", "eth0", "-t", "20", "-T", "1", "-s"])
            .arg(&script)
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )
}

/// The last event line of `events` that starts with one of `kinds`.
fn last_event(events: &Path, kinds: &[&str]) -> Option<String> {
    let text = std::fs::read_to_string(events).ok()?;
    text.lines().rev().find(|l| kinds.iter().any(|k| l.starts_with(k))).map(str::to_owned)
}

/// A resolver for `example.test` in the upstream namespace: a second dnsmasq that knows one
/// name and nothing else.
fn upstream_resolver(lab: &Lab) -> Daemon {
    Daemon::spawn(
        lab.upstream
            .command("dnsmasq")
            .args(["--keep-in-foreground", "--no-resolv"])
            .args(["--no-hosts", "--conf-file=/dev/null", "--listen-address=198.51.100.1"])
            .args(["--bind-interfaces", "--address=/www.example.test/203.0.113.7"])
            .args(["--pid-file=", "--user=root"])
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )
}

fn unit_file(lab: &Lab) -> PathBuf {
    lab.root().join("etc/systemd/system").join(UNIT)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dnsmasq_serves_leases_and_forwards_a_domain_and_scope_changes_reach_the_client() {
    let (lab, systemd) = lab_with_systemd().await;
    let _resolver = upstream_resolver(&lab);

    let doc = lab.reconcile(&config("")).await;
    assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
    let done = ops(&doc, OperationResult::Done);
    for expected in [
        "create systemd.service/routerd-dnsmasq.service",
        "create dnsmasq.config/dhcpv4-server/dhcp",
        "create dnsmasq.config/dhcpv4-range/lan-pool",
        "create dnsmasq.config/server/example.test",
    ] {
        assert!(done.contains(&expected.to_string()), "missing {expected} in {done:#?}");
    }
    for r in doc.resources.iter().filter(|r| r.id.contains("DHCP") || r.id.contains("DNS")) {
        assert_eq!(r.phase, Phase::Healthy, "{}: {:#?}", r.id, r.conditions);
    }
    // The unit was written, enabled and started, and dnsmasq runs inside the router namespace.
    let unit = std::fs::read_to_string(unit_file(&lab)).expect("unit file");
    assert!(
        unit.contains(&format!("NetworkNamespacePath={}", lab.router.path().display())),
        "{unit}"
    );
    assert!(systemd.is_enabled(UNIT));
    assert_eq!(systemd.active_state(UNIT), "active");
    let ledger = lab.ledger_keys();
    assert!(ledger.contains(&format!("systemd.service/{UNIT}")), "{ledger:#?}");
    assert!(ledger.contains(&"dnsmasq.config/dhcpv4-range/lan-pool".to_string()));

    // A lease from the pool, with the router as gateway and resolver.
    let events = lab.dir().join("udhcpc.events");
    let client = udhcpc(&lab, &events);
    let bound =
        wait_for("a DHCP lease", Duration::from_secs(30), || last_event(&events, &["bound"]));
    let ip = bound
        .split_whitespace()
        .find_map(|f| f.strip_prefix("ip="))
        .expect("ip in the event")
        .to_string();
    let last_octet: u32 = ip.rsplit('.').next().and_then(|o| o.parse().ok()).expect("an address");
    assert!(ip.starts_with("192.168.50.") && (100..=150).contains(&last_octet), "{bound}");
    assert!(bound.contains("router=192.168.50.1 "), "{bound}");
    assert!(bound.contains("dns=192.168.50.1 "), "{bound}");
    assert!(bound.contains("lease=600"), "{bound}");

    // The router answers for example.test with what the upstream resolver says.
    let answer = lab
        .client
        .command("busybox")
        .args(["nslookup", "www.example.test", "192.168.50.1"])
        .output()
        .expect("busybox nslookup");
    let text = String::from_utf8_lossy(&answer.stdout);
    assert!(text.contains("203.0.113.7"), "{text}{}", String::from_utf8_lossy(&answer.stderr));

    // The no-op: nothing to do, dnsmasq not restarted.
    let starts = systemd.starts(UNIT);
    let again = lab.reconcile(&config("")).await;
    assert!(again.operations.is_empty(), "{:#?}", again.operations);
    assert_eq!(systemd.starts(UNIT), starts);

    // A scope change (static resolvers) reaches the client when it renews, with the same
    // address: the restart kept the lease.
    let changed = config("        dnsSource: static\n        dnsServers: [192.0.2.53, 192.0.2.54]");
    let doc = lab.reconcile(&changed).await;
    assert_eq!(
        ops(&doc, OperationResult::Done),
        vec!["modify dnsmasq.config/dhcpv4-range/lan-pool".to_string()],
        "{:#?}",
        doc.operations
    );
    let lines = std::fs::read_to_string(lab.root().join("var/lib/routerd/dnsmasq/dnsmasq.conf"))
        .expect("dnsmasq.conf");
    assert!(lines.contains("dhcp-option=tag:lan-pool,option:dns-server,192.0.2.53,192.0.2.54"));
    let before = std::fs::read_to_string(&events).expect("events").lines().count();
    // SIGUSR1: udhcpc renews now (a unicast DHCPREQUEST to the server that gave the lease).
    client.signal("USR1");
    let renewed = wait_for("a renewal with the new resolvers", Duration::from_secs(30), || {
        let text = std::fs::read_to_string(&events).ok()?;
        text.lines().skip(before).find(|l| l.starts_with("renew")).map(str::to_owned)
    });
    assert!(renewed.contains("dns=192.0.2.53 192.0.2.54"), "{renewed}");
    assert!(renewed.contains(&format!("ip={ip} ")), "{renewed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_dnsmasq_is_restarted_and_a_removed_server_is_cleaned_up() {
    let (lab, systemd) = lab_with_systemd().await;
    let doc = lab.reconcile(&config("")).await;
    assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);

    // Drift: the service died. The next reconcile starts it again.
    systemd.crash(UNIT);
    let doc = lab.reconcile(&config("")).await;
    assert_eq!(
        ops(&doc, OperationResult::Done),
        vec![format!("modify systemd.service/{UNIT}")],
        "{:#?}",
        doc.operations
    );
    assert_eq!(systemd.active_state(UNIT), "active");

    // Without the DHCP and DNS resources, the ledger-owned sections and unit are removed:
    // dnsmasq stopped and disabled, its unit file gone.
    let doc = lab.reconcile(LAB).await;
    let done = ops(&doc, OperationResult::Done);
    for expected in [
        format!("delete systemd.service/{UNIT}"),
        "delete dnsmasq.config/dhcpv4-range/lan-pool".into(),
        "delete dnsmasq.config/dhcpv4-server/dhcp".into(),
        "delete dnsmasq.config/server/example.test".into(),
    ] {
        assert!(done.contains(&expected), "missing {expected} in {done:#?}");
    }
    assert_eq!(systemd.active_state(UNIT), "inactive");
    assert!(!systemd.is_enabled(UNIT));
    assert!(!unit_file(&lab).exists());
    let conf = std::fs::read_to_string(lab.root().join("var/lib/routerd/dnsmasq/dnsmasq.conf"))
        .expect("dnsmasq.conf");
    assert!(!conf.contains("# routerd section"), "{conf}");
    let calls = systemd.calls();
    let stop = calls.iter().position(|c| c == &format!("StopUnit {UNIT}")).expect("stopped");
    let disable =
        calls.iter().position(|c| c == &format!("DisableUnitFiles {UNIT}")).expect("disabled");
    assert!(stop < disable, "{calls:#?}");
    assert!(calls[disable..].iter().any(|c| c == "Reload"), "{calls:#?}");
    assert!(!lab.ledger_keys().iter().any(|k| k.contains("dnsmasq")));
}

/// The lab plus IPv6 service on lan0: RA and stateless DHCPv6 for the delegated address's
/// prefix, and the WAN path's MTU in the RAs. `scope_extra` goes at the end of the scope.
fn ipv6_config(scope_extra: &str) -> String {
    format!(
        "{LAB}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6PrefixDelegation
      metadata:
        name: wan-pd
      spec:
        interface: wan
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6DelegatedAddress
      metadata:
        name: lan-v6
      spec:
        prefixDelegation: wan-pd
        interface: lan
        addressSuffix: \"::1\"
        sendRA: true
        announce: true
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6DHCPServer
      metadata:
        name: v6
      spec:
        managed: true
        listenInterfaces: [lan]
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6DHCPScope
      metadata:
        name: lan-ra
      spec:
        server: v6
        delegatedAddress: lan-v6
        mode: stateless
        leaseTime: 1h
        dnsSource: static
        dnsServers: [\"2001:db8:53::53\"]
{scope_extra}
    - apiVersion: net.routerd.net/v1alpha1
      kind: PathMTUPolicy
      metadata:
        name: wan-mtu
      spec:
        fromInterface: wan
        toInterfaces: [lan]
        mtu:
          source: static
          value: 1454
        ipv6RA:
          enabled: true
"
    )
}

/// One router advertisement solicited from the client's eth0 by `rdisc6` (ndisc6), as it
/// prints it; `None` until an RA with a prefix arrives.
fn router_advertisement(lab: &Lab) -> Option<String> {
    let out =
        lab.client.command("rdisc6").args(["-1", "-r", "1", "-w", "1000", "eth0"]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.contains("Prefix").then_some(text)
}

/// The value after `label :` in rdisc6's output (`MTU`, `Router lifetime`).
fn ra_field<'a>(ra: &'a str, label: &str) -> Option<&'a str> {
    ra.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        (name.trim() == label).then(|| value.trim())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dnsmasq_advertises_the_delegated_prefix_the_path_mtu_and_the_dns_server_on_the_lan() {
    let (lab, systemd) = lab_with_systemd().await;
    // The delegated address, as IPv6DelegatedAddress puts it once a prefix is delegated; dnsmasq
    // builds its RA from whatever global prefix the link holds.
    lab.router.ip(&["addr", "add", "2001:db8:1::1/64", "dev", "lan0"]);

    let doc = lab.reconcile(&ipv6_config("")).await;
    let done = ops(&doc, OperationResult::Done);
    for expected in [
        "create dnsmasq.config/dhcpv6-server/v6",
        "create dnsmasq.config/dhcpv6-range/lan-ra",
        "create dnsmasq.config/ra-mtu/lan0",
    ] {
        assert!(done.contains(&expected.to_string()), "missing {expected} in {done:#?}");
    }
    for r in doc.resources.iter().filter(|r| {
        ["IPv6DHCPServer", "IPv6DHCPScope", "PathMTUPolicy"].iter().any(|k| r.id.contains(k))
    }) {
        assert_eq!(r.phase, Phase::Healthy, "{}: {:#?}", r.id, r.conditions);
    }
    assert_eq!(systemd.active_state(UNIT), "active");
    let conf = std::fs::read_to_string(lab.root().join("var/lib/routerd/dnsmasq/dnsmasq.conf"))
        .expect("dnsmasq.conf");
    assert!(conf.contains("dhcp-range=set:lan-ra,::,constructor:lan0,ra-stateless,3600"), "{conf}");
    // Without defaultRoute the router lifetime is 0; the MTU line carries it.
    assert!(conf.contains("ra-param=lan0,mtu:1454,0,0"), "{conf}");

    let ra =
        wait_for("a router advertisement", Duration::from_secs(30), || router_advertisement(&lab));
    assert_eq!(ra_field(&ra, "Prefix"), Some("2001:db8:1::/64"), "{ra}");
    assert_eq!(ra_field(&ra, "MTU").map(|m| m.starts_with("1454 bytes")), Some(true), "{ra}");
    assert_eq!(ra_field(&ra, "Recursive DNS server"), Some("2001:db8:53::53"), "{ra}");
    assert!(ra_field(&ra, "Router lifetime").is_some_and(|v| v.starts_with("0 ")), "{ra}");
    assert_eq!(ra_field(&ra, "Stateful other conf."), Some("Yes"), "stateless DHCPv6: {ra}");

    // defaultRoute: the router becomes the LAN's IPv6 default router; the MTU stays.
    let doc = lab.reconcile(&ipv6_config("        defaultRoute: true")).await;
    assert_eq!(
        ops(&doc, OperationResult::Done),
        vec!["modify dnsmasq.config/ra-mtu/lan0".to_string()]
    );
    let ra = wait_for("an RA with a router lifetime", Duration::from_secs(30), || {
        router_advertisement(&lab)
            .filter(|ra| ra_field(ra, "Router lifetime").is_some_and(|v| !v.starts_with("0 ")))
    });
    assert_eq!(ra_field(&ra, "MTU").map(|m| m.starts_with("1454 bytes")), Some(true), "{ra}");
}

/// `ipv6_config` with the scope announcing what SelfAddressPolicy `lan-dns` selects: an
/// address on lan0 ending in `::53`, else the address on lan0 ending in `::1` with `::35` as
/// its identifier.
fn self_address_config() -> String {
    let policy = "    - apiVersion: net.routerd.net/v1alpha1
      kind: SelfAddressPolicy
      metadata:
        name: lan-dns
      spec:
        addressFamily: ipv6
        candidates:
          - source: interfaceAddress
            interface: lan
            matchSuffix: \"::53\"
          - source: interfaceAddress
            interface: lan
            matchSuffix: \"::1\"
            addressSuffix: \"::35\"
";
    let static_dns = "        dnsSource: static\n        dnsServers: [\"2001:db8:53::53\"]\n";
    let config = ipv6_config("");
    assert!(config.contains(static_dns), "the scope's DNS lines moved");
    let by_policy = "        dnsSource: self\n        selfAddressPolicy: lan-dns\n";
    format!("{}{policy}", config.replace(static_dns, by_policy))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lan_hears_the_dns_server_a_self_address_policy_selects_and_follows_it() {
    let (lab, systemd) = lab_with_systemd().await;
    lab.router.ip(&["addr", "add", "2001:db8:1::1/64", "dev", "lan0"]);
    lab.router.ip(&["addr", "add", "fd00:53::53/64", "dev", "lan0"]);

    // The lab runs no systemd-networkd: the delegation's binding fails, which this test does
    // not need (the addresses on lan0 are put there by hand).
    let doc = lab.reconcile(&self_address_config()).await;
    let done = ops(&doc, OperationResult::Done);
    assert!(done.contains(&"create dnsmasq.config/dhcpv6-range/lan-ra".to_string()), "{done:#?}");
    let policy = resource(&doc, "SelfAddressPolicy/lan-dns");
    assert_eq!(policy.phase, Phase::Healthy, "{:#?}", policy.conditions);
    assert_eq!(
        condition(policy, ConditionType::Selected),
        Some((ConditionStatus::True, Reason::CandidateSelected))
    );
    assert_eq!(systemd.active_state(UNIT), "active");
    let rdnss = |ra: &str| ra_field(ra, "Recursive DNS server").map(str::to_string);
    let ra = wait_for("an RA naming fd00:53::53", Duration::from_secs(30), || {
        router_advertisement(&lab).filter(|ra| rdnss(ra).as_deref() == Some("fd00:53::53"))
    });
    assert!(ra.contains("2001:db8:1::/64"), "the delegated prefix is still advertised: {ra}");

    // The ::53 address goes: the next candidate, ::35 in the prefix of the ::1 address, is
    // announced after the next reconcile, which rewrites the scope and reloads dnsmasq.
    lab.router.ip(&["addr", "del", "fd00:53::53/64", "dev", "lan0"]);
    let doc = lab.reconcile(&self_address_config()).await;
    assert_eq!(
        ops(&doc, OperationResult::Done),
        vec!["modify dnsmasq.config/dhcpv6-range/lan-ra".to_string()]
    );
    wait_for("an RA naming 2001:db8:1::35", Duration::from_secs(30), || {
        router_advertisement(&lab).filter(|ra| rdnss(ra).as_deref() == Some("2001:db8:1::35"))
    });
    assert_eq!(systemd.active_state(UNIT), "active");
}
