//! A secondary fed by the primary's catalog zone (RFC 9432; issue 36 §1, design brief §5
//! "secondary"): both servers run by routerd in the test's namespace, the secondary with no
//! zone of its own. The primary's catalog lists the zone; the secondary finds it there,
//! transfers it, and catches up after every change (NOTIFY, then IXFR).

use routerd_engine::registry::DoctorChecks;

use crate::common::{self, AUTH_PORT, KEY, Lab, WWW};

/// The port the secondary answers on.
const SECONDARY_PORT: u16 = 5301;

/// `xfer`: the key transfers and NOTIFYs between the two servers are signed with.
const XFER: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSTSIGKey
      metadata: {name: xfer}
      spec: {secret: \"eGZlci14ZmVyLXhmZXIteGZlci14ZmVyLXhmZXIteGY=\"}
";

/// Primary `auth` (as `common::SERVER`) with the secondary and catalog `catalog.lab.example`.
const PRIMARY: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSServer
      metadata: {name: auth}
      spec:
        updateKey: routerd-update
        control: {port: 9953}
        statistics: {port: 9980}
        catalogZone: catalog.lab.example
        secondaries: [{address: 127.0.0.1, port: 5301, tsigKey: xfer}]
";

/// Secondary `sec` on 127.0.0.1#5301, following the primary's catalog.
const SECONDARY: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSServer
      metadata: {name: sec}
      spec:
        role: secondary
        listen: [{address: 127.0.0.1, port: 5301}]
        control: {port: 9954}
        statistics: {port: 9981}
        primaries: [{address: 127.0.0.1, port: 5300, tsigKey: xfer}]
        catalogZones: [catalog.lab.example]
";

/// Zone `lab.example` on `auth` with host `nas`, a catalog member, and its reverse zone.
const ZONE: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSZone
      metadata: {name: lab}
      spec:
        zone: lab.example
        server: auth
        catalog: true
        nameServers: [{hostname: ns1, ipv4: 127.0.0.1}]
        records: [{hostname: nas, ipv4: 192.0.2.20}]
        reverseZones: [{name: 2.0.192.in-addr.arpa}]
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secondary_finds_the_zone_in_the_catalog_and_catches_up() {
    let mut lab = Lab::new("dnss").await;
    let input = common::config(&[KEY, XFER, PRIMARY, SECONDARY, ZONE]);
    let applied = lab.reconcile_ok(&input).await;

    // The catalog: one owned PTR per member zone, the forward and the reverse one.
    let members: Vec<String> = common::operations_on(&applied, "dns.rrset")
        .into_iter()
        .filter(|op| op.contains("/catalog.lab.example./"))
        .collect();
    assert_eq!(members.len(), 2, "{members:?}");
    let catalog = lab.dig("zones.catalog.lab.example", "PTR");
    assert!(catalog.is_empty(), "members are below zones., not at it: {catalog:?}");
    let version = common::dig(&lab.ns, AUTH_PORT, "version.catalog.lab.example", "TXT");
    assert_eq!(version, ["version.catalog.lab.example. 3600 TXT \"2\""]);

    // The secondary, configured with no zone of its own, serves both members.
    let on_secondary =
        |lab: &Lab, name: &str, rtype: &str| common::dig(&lab.ns, SECONDARY_PORT, name, rtype);
    common::wait_until("the secondary to serve lab.example", || {
        on_secondary(&lab, "nas.lab.example", "A") == ["nas.lab.example. 300 A 192.0.2.20"]
    })
    .await;
    common::wait_until("the secondary to serve the reverse zone", || {
        on_secondary(&lab, "20.2.0.192.in-addr.arpa", "PTR")
            == ["20.2.0.192.in-addr.arpa. 300 PTR nas.lab.example."]
    })
    .await;

    // A change on the primary reaches the secondary: its serial catches up.
    let changed = common::config(&[KEY, XFER, PRIMARY, SECONDARY, ZONE, WWW]);
    lab.reconcile_ok(&changed).await;
    let primary = common::serial(&lab.ns, AUTH_PORT, "lab.example");
    common::wait_until("the secondary to reach the primary's serial", || {
        common::serial(&lab.ns, SECONDARY_PORT, "lab.example") == primary
    })
    .await;
    assert_eq!(on_secondary(&lab, "www.lab.example", "A"), ["www.lab.example. 60 A 192.0.2.10"]);

    // Nothing left to do; the zone's status lists the secondary in sync, for both zones, and
    // the doctor agrees.
    let again = lab.plan(&changed, false).await;
    assert_eq!(common::operations(&again), Vec::<String>::new());
    let in_sync = common::condition(&again, "DNSZone/lab", "SecondariesInSync");
    assert_eq!(
        in_sync.as_deref(),
        Some("True SerialsMatch: 2 secondary zone(s) at the primary's serial")
    );
    let status = common::resource(&again, "DNSZone/lab").status.clone().expect("status");
    let rows: Vec<String> = status["servers"]
        .as_array()
        .expect("servers[]")
        .iter()
        .map(|r| format!("{} {} {} {}", r["role"], r["server"], r["zone"], r["inSync"]))
        .collect();
    assert_eq!(
        rows,
        [
            "\"primary\" \"auth\" \"lab.example.\" null",
            "\"secondary\" \"127.0.0.1#5301\" \"lab.example.\" true",
            "\"primary\" \"auth\" \"2.0.192.in-addr.arpa.\" null",
            "\"secondary\" \"127.0.0.1#5301\" \"2.0.192.in-addr.arpa.\" true",
        ]
    );
    assert_eq!(status["servers"][1]["serial"], primary);
    let mut checks = Vec::new();
    routerd_dns::doctor::DnsDoctor.run(&changed.config, Some(&again), &mut checks);
    let n007 = checks.iter().find(|c| c.code == "N007").expect("N007");
    assert_eq!(n007.status, routerd_model::status::CheckStatus::Pass, "{n007:?}");

    // The secondary stops: the primary's status says it is behind, and so does the doctor.
    let pid = lab.fake.main_pid("routerd-named-sec.service").expect("the secondary runs");
    let killed = std::process::Command::new("kill").arg(pid.to_string()).status();
    assert!(killed.expect("kill runs").success());
    common::wait_until("the secondary to stop", || !common::is_running(pid)).await;
    let stopped = lab.plan(&changed, false).await;
    let behind = common::condition(&stopped, "DNSZone/lab", "SecondariesInSync");
    let behind = behind.expect("SecondariesInSync");
    assert!(
        behind.starts_with("False SecondaryBehind: 127.0.0.1#5301 does not serve lab.example."),
        "{behind}"
    );
    let mut checks = Vec::new();
    routerd_dns::doctor::DnsDoctor.run(&changed.config, Some(&stopped), &mut checks);
    let n007 = checks.iter().find(|c| c.code == "N007").expect("N007");
    assert_eq!(n007.status, routerd_model::status::CheckStatus::Warn, "{n007:?}");
    lab.finish();
}
