//! The DNS controller end to end on real parts: a session opened as the daemon opens it, the
//! service manager stand-in (`FakeSystemd`) running the real `named` from the unit routerd
//! wrote, inside a namespace of the test's own, and `dig`/`nsupdate` reading and editing the
//! zone from beside it (issue 36 §4).

use crate::common::{self, AUTH_PORT, KEY, Lab, SERVER, a_record, condition, operations, resource};

/// Zone `lab.example` on `auth` with hosts (and the PTR of `nas`), forwarded from dnsmasq.
const ZONE: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSZone
      metadata: {name: lab}
      spec:
        zone: lab.example
        server: auth
        nameServers: [{hostname: ns1, ipv4: 127.0.0.1}]
        records: [{hostname: nas, ipv4: 192.0.2.20}, {hostname: mx1, ipv4: 192.0.2.25}, {hostname: sip, ipv4: 192.0.2.26}]
        reverseZones: [{name: 2.0.192.in-addr.arpa}]
        forwardFromDnsmasq: true
";

/// One record of every other kind in `lab` (the TXT RRset has a string over 255 bytes).
fn every_kind() -> String {
    format!(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: AAAARecord
      metadata: {{name: www6}}
      spec: {{zone: lab, name: www, ipv6Addresses: [\"2001:db8::10\"]}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: CNAMERecord
      metadata: {{name: ftp}}
      spec: {{zone: lab, name: ftp, target: www}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: TXTRecord
      metadata: {{name: spf}}
      spec: {{zone: lab, name: \"@\", text: [\"v=spf1 mx -all\", \"{long}\"]}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: MXRecord
      metadata: {{name: mail}}
      spec: {{zone: lab, name: \"@\", exchanges: [{{priority: 10, mailServer: mx1}}, {{priority: 20, mailServer: mx2.other.example.}}]}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: NSRecord
      metadata: {{name: sub}}
      spec: {{zone: lab, name: sub, nameservers: [ns1.sub]}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: SRVRecord
      metadata: {{name: sip}}
      spec: {{zone: lab, name: _sip._tcp, targets: [{{priority: 0, weight: 5, port: 5060, target: sip}}]}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: CAARecord
      metadata: {{name: caa}}
      spec: {{zone: lab, name: \"@\", entries: [{{tag: issue, value: letsencrypt.org}}]}}
",
        long = "x".repeat(300),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_of_every_kind_are_published_kept_repaired_and_removed() {
    let mut lab = Lab::new("dnse").await;
    let www = a_record("www", "lab", "www", &["192.0.2.11", "192.0.2.10"]);
    let every = every_kind();
    let input = common::config(&[KEY, SERVER, ZONE, &every, &www]);
    let applied = lab.reconcile_ok(&input).await;
    assert!(
        operations(&applied).contains(
            &"create dns.rrset/local:auth/lab.example./www.lab.example./A done".to_owned()
        )
    );

    // Every kind answers with exactly its RRset and TTL.
    assert_eq!(
        lab.dig("www.lab.example", "A"),
        ["www.lab.example. 60 A 192.0.2.10", "www.lab.example. 60 A 192.0.2.11"]
    );
    assert_eq!(lab.dig("www.lab.example", "AAAA"), ["www.lab.example. 300 AAAA 2001:db8::10"]);
    assert_eq!(
        lab.dig("ftp.lab.example", "CNAME"),
        ["ftp.lab.example. 300 CNAME www.lab.example."]
    );
    assert_eq!(
        lab.dig("lab.example", "MX"),
        ["lab.example. 300 MX 10 mx1.lab.example.", "lab.example. 300 MX 20 mx2.other.example."]
    );
    assert_eq!(
        lab.dig("sub.lab.example", "NS"),
        Vec::<String>::new(),
        "a delegation is not an answer"
    );
    assert_eq!(
        lab.dig("_sip._tcp.lab.example", "SRV"),
        ["_sip._tcp.lab.example. 300 SRV 0 5 5060 sip.lab.example."]
    );
    assert_eq!(lab.dig("lab.example", "CAA"), ["lab.example. 300 CAA 0 issue \"letsencrypt.org\""]);
    let txt = lab.dig("lab.example", "TXT");
    assert_eq!(txt.len(), 2, "{txt:?}");
    assert!(txt.contains(&"lab.example. 300 TXT \"v=spf1 mx -all\"".to_owned()), "{txt:?}");
    assert_eq!(lab.dig("nas.lab.example", "A"), ["nas.lab.example. 300 A 192.0.2.20"]);
    assert_eq!(
        lab.dig("20.2.0.192.in-addr.arpa", "PTR"),
        ["20.2.0.192.in-addr.arpa. 300 PTR nas.lab.example."]
    );

    // The router's resolver (dnsmasq on port 53) answers the zone's names from named.
    let through_dnsmasq =
        lab.ns.exec(&["dig", "@127.0.0.1", "-p", "53", "+short", "nas.lab.example", "A"]);
    assert_eq!(through_dnsmasq.trim(), "192.0.2.20");
    let reverse = lab.ns.exec(&["dig", "@127.0.0.1", "-p", "53", "+short", "-x", "192.0.2.20"]);
    assert_eq!(reverse.trim(), "nas.lab.example.");

    // Read back by transfer, the zone matches: nothing to do.
    let again = lab.plan(&input, false).await;
    assert_eq!(operations(&again), Vec::<String>::new());

    // Status: each record is published, the zone and its reverse zone are loaded with their
    // serials, and the zone counts its RRsets.
    let www_rrset = "local:auth/lab.example./www.lab.example./A";
    let serial = common::serial(&lab.ns, AUTH_PORT, "lab.example");
    assert_eq!(
        condition(&again, "ARecord/www", "Published"),
        Some(format!("True RRsetsPublished: {www_rrset} is on the server as declared"))
    );
    let loaded = condition(&again, "DNSZone/lab", "Loaded").expect("Loaded");
    assert!(loaded.starts_with("True ZoneLoaded: zone "), "{loaded}");
    let status = resource(&again, "DNSZone/lab").status.clone().expect("zone status");
    let servers = status["servers"].as_array().expect("servers[]");
    assert_eq!(servers.len(), 2, "{status}");
    assert_eq!(servers[0]["zone"], "lab.example.");
    assert_eq!(servers[0]["role"], "primary");
    assert_eq!(servers[0]["state"], "Configured");
    assert_eq!(servers[0]["serial"], serial, "{status}");
    assert_eq!(servers[1]["zone"], "2.0.192.in-addr.arpa.");
    assert_eq!(status["foreignRecords"], 0, "{status}");
    let declared = status["recordsCount"].as_u64().expect("recordsCount");
    assert!(declared >= 12, "{status}");
    let zone_published = condition(&again, "DNSZone/lab", "Published").expect("Published");
    assert!(zone_published.starts_with("True RRsetsPublished: "), "{zone_published}");

    // A change not applied yet is pending in a plan.
    let moved = a_record("www", "lab", "www", &["192.0.2.12"]);
    let planned = lab.plan(&common::config(&[KEY, SERVER, ZONE, &every, &moved]), false).await;
    assert_eq!(
        condition(&planned, "ARecord/www", "Published").as_deref(),
        Some(format!("False UpdatePending: pending: {www_rrset}").as_str())
    );

    // A hand edit of an owned RRset is drift, repaired with one modify; a hand-added RRset is
    // foreign and stays.
    lab.nsupdate(
        "zone lab.example\nupdate delete www.lab.example A\nupdate add www.lab.example 60 A 198.51.100.1\nupdate add hand.lab.example 60 TXT \"by hand\"\n",
    );
    common::wait_until("the hand edit", || {
        lab.dig("www.lab.example", "A") == ["www.lab.example. 60 A 198.51.100.1"]
    })
    .await;
    let repaired = lab.reconcile(&input).await;
    assert_eq!(
        operations(&repaired),
        ["modify dns.rrset/local:auth/lab.example./www.lab.example./A done"]
    );
    assert_eq!(
        lab.dig("www.lab.example", "A"),
        ["www.lab.example. 60 A 192.0.2.10", "www.lab.example. 60 A 192.0.2.11"]
    );
    assert_eq!(lab.dig("hand.lab.example", "TXT"), ["hand.lab.example. 60 TXT \"by hand\""]);

    let foreign = resource(&repaired, "DNSZone/lab").status.clone().expect("zone status");
    assert_eq!(foreign["foreignRecords"], 1, "the hand-added TXT: {foreign}");

    // Removed from the config, the owned RRset is deleted and leaves the ledger; the foreign one
    // stays.
    let without = common::config(&[KEY, SERVER, ZONE, &every]);
    let removed = lab.reconcile(&without).await;
    assert_eq!(
        operations(&removed),
        ["delete dns.rrset/local:auth/lab.example./www.lab.example./A done"]
    );
    assert_eq!(lab.dig("www.lab.example", "A"), Vec::<String>::new());
    assert_eq!(lab.dig("hand.lab.example", "TXT"), ["hand.lab.example. 60 TXT \"by hand\""]);
    let entry = lab
        .session()
        .ledger()
        .get("dns.rrset", "local:auth/lab.example./www.lab.example./A")
        .expect("ledger");
    assert!(entry.is_none(), "{entry:?}");
    lab.finish();
}

/// `CNAMERecord alias` in `lab` pointing at `nas`.
const ALIAS: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: CNAMERecord
      metadata: {name: alias}
      spec: {zone: lab, name: alias, target: nas}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cname_the_server_ignores_is_a_conflict_until_the_name_is_free() {
    let mut lab = Lab::new("dnse").await;
    lab.reconcile_ok(&common::config(&[KEY, SERVER, common::ZONE_LAB])).await;
    // Someone else's data at the name: named silently ignores a CNAME there (RFC 2136
    // §3.4.2.2) and still answers NOERROR.
    lab.nsupdate("zone lab.example\nupdate add alias.lab.example 60 A 198.51.100.5\n");
    let input = common::config(&[KEY, SERVER, common::ZONE_LAB, ALIAS]);
    let rrset = "local:auth/lab.example./alias.lab.example./CNAME";
    for pass in ["first", "second"] {
        let doc = lab.reconcile(&input).await;
        let failed = common::failures(&doc);
        assert_eq!(failed.len(), 1, "{pass}: {failed:#?}");
        assert!(
            failed[0].starts_with(&format!("create dns.rrset/{rrset} failed: UpdateIgnored: "))
        );
        assert!(failed[0].contains("the name holds other data"), "{}", failed[0]);
        assert_eq!(
            condition(&doc, "CNAMERecord/alias", "Conflict").as_deref(),
            Some(
                format!(
                    "True UpdateIgnored: the server ignored it, its name holds other data: {rrset}"
                )
                .as_str()
            ),
            "{pass}"
        );
        assert_eq!(lab.dig("alias.lab.example", "A"), ["alias.lab.example. 60 A 198.51.100.5"]);
    }

    // The name freed, the CNAME is published.
    lab.nsupdate("zone lab.example\nupdate delete alias.lab.example A\n");
    let doc = lab.reconcile_ok(&input).await;
    assert_eq!(operations(&doc), [format!("create dns.rrset/{rrset} done")]);
    assert_eq!(
        lab.dig("alias.lab.example", "CNAME"),
        ["alias.lab.example. 300 CNAME nas.lab.example."]
    );
    let published = condition(&doc, "CNAMERecord/alias", "Published").expect("Published");
    assert!(published.starts_with("True RRsetsPublished: "), "{published}");
    lab.finish();
}
