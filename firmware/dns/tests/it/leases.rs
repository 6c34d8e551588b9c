//! `dhcpDerived` end to end (issue 36): a LAN client in a namespace of its own gets a lease from
//! routerd's dnsmasq (busybox `udhcpc`, sending a host name), the lease watcher notices the
//! lease file change, and the next reconcile publishes the client's name in the zone (answered
//! through dnsmasq on port 53, the zone forwarded to routerd's `named`) and its PTR in the
//! reverse zone. Released, the lease goes from the file and the reconcile after the next
//! notice removes both RRsets.

use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use futures::StreamExt;
use routerd_engine::registry::{Notices, WatchContext};
use routerd_test_kit::daemon::{Daemon, wait_for};
use routerd_test_kit::netns::Netns;

use crate::common::{self, DEADLINE, KEY, Lab, SERVER, operations_on};

/// The LAN (`lan0`, 192.168.50.1/24) with a DHCP pool, and zone `lab.example` on `auth` taking
/// its clients' names (TTL 1, so dnsmasq's cache forgets them at once), forwarded from dnsmasq.
const LAN: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: Interface
      metadata: {name: lan}
      spec: {ifname: lan0, managed: true, adminUp: true}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticAddress
      metadata: {name: lan-v4}
      spec: {interface: lan, address: 192.168.50.1/24}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPServer
      metadata: {name: dhcp}
      spec: {managed: true, listenInterfaces: [lan]}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPScope
      metadata: {name: pool}
      spec:
        server: dhcp
        interface: lan
        rangeStart: 192.168.50.100
        rangeEnd: 192.168.50.150
        leaseTime: 10m
    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSZone
      metadata: {name: lab}
      spec:
        zone: lab.example
        server: auth
        nameServers: [{hostname: ns1, ipv4: 127.0.0.1}]
        records: [{hostname: nas, ipv4: 192.168.50.20}]
        reverseZones: [{name: 50.168.192.in-addr.arpa}]
        forwardFromDnsmasq: true
        dhcpDerived: {sources: [dhcp], ttl: 1}
";

/// Starts busybox `udhcpc` in the foreground on `client`'s eth0, sending host name `Laptop`;
/// its script puts the leased address on the link (so a release can be sent from it) and
/// appends each event to `events` as `EVENT ip=…`.
fn udhcpc(client: &Netns, dir: &Path, events: &Path) -> Daemon {
    let script = dir.join("udhcpc.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n\
             case \"$1\" in\n\
             bound|renew) ip addr replace \"$ip/$mask\" dev \"$interface\" ;;\n\
             deconfig) ip addr flush dev \"$interface\" ;;\n\
             esac\n\
             echo \"$1 ip=$ip\" >> {}\n",
            events.display()
        ),
    )
    .expect("script");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("executable");
    Daemon::spawn(
        client
            .command("busybox")
            .args(["udhcpc", "-f", "-i", "eth0", "-t", "20", "-T", "1", "-x", "hostname:Laptop"])
            .arg("-s")
            .arg(&script)
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )
}

/// The lines of `events` from line `from` on that start with `kind`.
fn events_after(events: &Path, from: usize, kind: &str) -> Option<String> {
    let text = std::fs::read_to_string(events).ok()?;
    text.lines().skip(from).find(|l| l.starts_with(kind)).map(str::to_owned)
}

/// Waits for a notice of the lease watcher among `notices` (the NOTIFY listener's pass by).
async fn lease_notice(notices: &mut Notices) -> String {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let next = tokio::time::timeout(left, notices.next()).await;
        match next {
            Ok(Some(notice)) if notice.contains("DHCP lease") => return notice,
            Ok(Some(_)) => {}
            Ok(None) => panic!("the watchers ended"),
            Err(_) => panic!("no lease notice within {DEADLINE:?}"),
        }
    }
}

/// `dig +short` through dnsmasq on port 53 in `ns`.
fn through_dnsmasq(ns: &Netns, args: &[&str]) -> String {
    let mut cmd = vec!["dig", "@127.0.0.1", "-p", "53", "+short", "+tries=1", "+time=2"];
    cmd.extend_from_slice(args);
    ns.exec(&cmd).trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dhcp_client_s_name_resolves_while_it_holds_its_lease() {
    let mut lab = Lab::new("dnsl").await;
    let client = Netns::new("dnslc");
    lab.ns.veth_to("lan0", &client, "eth0");
    client.ip(&["link", "set", "eth0", "up"]);
    let input = common::config(&[KEY, SERVER, LAN]);
    lab.reconcile_ok(&input).await;

    // The watchers the daemon starts, on this lab's namespace and root.
    let target = routerd_host::Target::new(Some(lab.ns.name().to_owned()), Some(lab.root.clone()));
    let netns = routerd_host::Netns::named(lab.ns.name()).expect("the lab's namespace");
    let started =
        lab.registry.watchers(&WatchContext { target: &target, netns: &netns }).expect("watching");
    let mut notices: Notices = futures::stream::select_all(started).boxed();

    // The client's lease: the watcher notices it, and the next reconcile publishes the name.
    let events = lab.dir.path().join("udhcpc.events");
    let udhcpc = udhcpc(&client, lab.dir.path(), &events);
    let bound = wait_for("a DHCP lease", DEADLINE, || events_after(&events, 0, "bound"));
    let ip = bound.strip_prefix("bound ip=").expect("the leased address").to_owned();
    assert!(ip.starts_with("192.168.50."), "{bound}");
    wait_for("the lease in dnsmasq's lease file", DEADLINE, || {
        let leases = std::fs::read_to_string(target.dnsmasq_leases()).ok()?;
        leases.contains(&format!(" {ip} Laptop ")).then_some(())
    });
    let notice = lease_notice(&mut notices).await;
    assert!(notice.starts_with("DHCP leases changed"), "{notice}");

    let octet = ip.rsplit('.').next().expect("an IPv4 address");
    let a = "local:auth/lab.example./laptop.lab.example./A".to_owned();
    let ptr = format!("local:auth/50.168.192.in-addr.arpa./{octet}.50.168.192.in-addr.arpa./PTR");
    let published = lab.reconcile_ok(&input).await;
    assert_eq!(
        operations_on(&published, "dns.rrset"),
        [format!("create {ptr}"), format!("create {a}")]
    );
    assert_eq!(through_dnsmasq(&lab.ns, &["laptop.lab.example", "A"]), ip);
    assert_eq!(lab.dig("laptop.lab.example", "A"), [format!("laptop.lab.example. 1 A {ip}")]);
    assert_eq!(
        lab.dig(&format!("{octet}.50.168.192.in-addr.arpa"), "PTR"),
        [format!("{octet}.50.168.192.in-addr.arpa. 1 PTR laptop.lab.example.")]
    );
    // A reverse lookup through dnsmasq is answered by dnsmasq itself from its leases (the
    // client's own name; dnsmasq(8): DHCP leases override `--server`), not forwarded.
    assert_eq!(through_dnsmasq(&lab.ns, &["-x", &ip]).to_lowercase(), "laptop.");
    assert_eq!(through_dnsmasq(&lab.ns, &["nas.lab.example", "A"]), "192.168.50.20");
    assert!(lab.session().ledger().get("dns.rrset", &a).expect("ledger").is_some());

    // Nothing changed: nothing to do.
    let again = lab.reconcile(&input).await;
    assert_eq!(operations_on(&again, "dns.rrset"), Vec::<String>::new());

    // Released (SIGUSR2), the lease leaves dnsmasq's file; the reconcile after the notice
    // removes the name and its PTR, which leave the ledger.
    let before = std::fs::read_to_string(&events).expect("events").lines().count();
    udhcpc.signal("USR2");
    wait_for("the release", DEADLINE, || events_after(&events, before, "deconfig"));
    let notice = lease_notice(&mut notices).await;
    assert!(notice.starts_with("DHCP leases changed"), "{notice}");
    let removed = lab.reconcile_ok(&input).await;
    assert_eq!(
        operations_on(&removed, "dns.rrset"),
        [format!("delete {ptr}"), format!("delete {a}")]
    );
    assert_eq!(lab.dig("laptop.lab.example", "A"), Vec::<String>::new());
    assert_eq!(lab.dig(&format!("{octet}.50.168.192.in-addr.arpa"), "PTR"), Vec::<String>::new());
    common::wait_until("dnsmasq to forget the name", || {
        through_dnsmasq(&lab.ns, &["laptop.lab.example", "A"]).is_empty()
    })
    .await;
    assert!(lab.session().ledger().get("dns.rrset", &a).expect("ledger").is_none());
    assert_eq!(through_dnsmasq(&lab.ns, &["nas.lab.example", "A"]), "192.168.50.20");

    drop(notices);
    drop(udhcpc);
    drop(client);
    lab.finish();
}
