//! The DNS controller end to end on real parts: a session opened as the daemon opens it, the
//! service manager stand-in (`FakeSystemd`) running the real `named` from the unit routerd
//! wrote, inside a namespace of the test's own, and `dig`/`nsupdate` reading and editing the
//! zone from beside it (issue 36 §4).

use std::path::Path;
use std::time::{Duration, SystemTime};

use routerd_engine::registry::Registry;
use routerd_engine::{ConfigInput, ResultDocument, Session, SessionOptions};
use routerd_host::testing::FakeSystemd;
use routerd_test_kit::netns::Netns;

const SECRET: &str = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA==";

fn registry() -> Registry {
    let mut registry = Registry::new();
    routerd_dns::register(&mut registry).expect("the DNS kinds are free");
    registry
}

/// The server, its key and zone `lab.example` with one record of every kind, plus `extra`.
fn config(extra: &str) -> ConfigInput {
    let text = format!(
        "apiVersion: routerd.net/v1alpha1
kind: Router
metadata: {{name: dns-e2e}}
spec:
  resources:
    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSTSIGKey
      metadata: {{name: routerd-update}}
      spec: {{secret: \"{SECRET}\"}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSServer
      metadata: {{name: auth}}
      spec: {{updateKey: routerd-update, control: {{port: 9953}}, statistics: {{port: 9980}}}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSZone
      metadata: {{name: lab}}
      spec:
        zone: lab.example
        server: auth
        nameServers: [{{hostname: ns1, ipv4: 127.0.0.1}}]
        records: [{{hostname: nas, ipv4: 192.0.2.20}}, {{hostname: mx1, ipv4: 192.0.2.25}}, {{hostname: sip, ipv4: 192.0.2.26}}]
        reverseZones: [{{name: 2.0.192.in-addr.arpa}}]
        forwardFromDnsmasq: true
    - apiVersion: net.routerd.net/v1alpha1
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
{extra}",
        long = "x".repeat(300),
    );
    ConfigInput::parse(&text, "router.yaml").expect("valid config")
}

const WWW: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: ARecord
      metadata: {name: www}
      spec: {zone: lab, name: www, ipv4Addresses: [192.0.2.11, 192.0.2.10], ttl: 60}
";

fn operations(doc: &ResultDocument) -> Vec<String> {
    let mut ops: Vec<String> = doc
        .operations
        .iter()
        .map(|op| match &op.error {
            Some(error) => {
                format!("{} {}/{} {}: {error}", op.operation, op.kind, op.name, op.result)
            }
            None => format!("{} {}/{} {}", op.operation, op.kind, op.name, op.result),
        })
        .collect();
    ops.sort();
    ops
}

/// `dig` in the namespace: the answer section's `name ttl type data` lines, sorted.
fn dig(ns: &Netns, name: &str, rtype: &str) -> Vec<String> {
    let out =
        ns.exec(&["dig", "@127.0.0.1", "-p", "5300", "+tcp", "+noall", "+answer", name, rtype]);
    let mut lines: Vec<String> = out
        .lines()
        .map(|l| l.split_whitespace().filter(|w| *w != "IN").collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect();
    lines.sort();
    lines
}

async fn session(ns: &Netns, root: &Path, bus: &FakeSystemd, registry: &Registry) -> Session {
    let opts = SessionOptions {
        netns: Some(ns.name().to_owned()),
        ledger_path: root.join("ledger.redb"),
        read_only: false,
        root: Some(root.to_path_buf()),
        system_bus: Some(bus.address().to_owned()),
        exit_after_command: false,
    };
    Session::open_with(opts, registry).await.expect("session")
}

/// Waits until `check` holds, for at most 10 s.
async fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_of_every_kind_are_published_kept_repaired_and_removed() {
    let ns = Netns::new("dnse");
    let registry = registry();
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    let target = routerd_host::Target::new(Some(ns.name().to_owned()), Some(root.clone()));
    let fake = FakeSystemd::start(dir.path(), &target.unit_dir()).await;
    let mut session = session(&ns, &root, &fake, &registry).await;
    let now = SystemTime::now();

    let input = config(WWW);
    let applied = session.reconcile(&input, now).await.expect("reconcile");
    let failed: Vec<String> = operations(&applied)
        .into_iter()
        .filter(|o| !o.ends_with(" done"))
        .filter(|o| !o.contains(" skipped"))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(
        operations(&applied).contains(
            &"create dns.rrset/local:auth/lab.example./www.lab.example./A done".to_owned()
        )
    );

    // Every kind answers with exactly its RRset and TTL.
    assert_eq!(
        dig(&ns, "www.lab.example", "A"),
        ["www.lab.example. 60 A 192.0.2.10", "www.lab.example. 60 A 192.0.2.11"]
    );
    assert_eq!(dig(&ns, "www.lab.example", "AAAA"), ["www.lab.example. 300 AAAA 2001:db8::10"]);
    assert_eq!(
        dig(&ns, "ftp.lab.example", "CNAME"),
        ["ftp.lab.example. 300 CNAME www.lab.example."]
    );
    assert_eq!(
        dig(&ns, "lab.example", "MX"),
        ["lab.example. 300 MX 10 mx1.lab.example.", "lab.example. 300 MX 20 mx2.other.example."]
    );
    assert_eq!(
        dig(&ns, "sub.lab.example", "NS"),
        Vec::<String>::new(),
        "a delegation is not an answer"
    );
    assert_eq!(
        dig(&ns, "_sip._tcp.lab.example", "SRV"),
        ["_sip._tcp.lab.example. 300 SRV 0 5 5060 sip.lab.example."]
    );
    assert_eq!(
        dig(&ns, "lab.example", "CAA"),
        ["lab.example. 300 CAA 0 issue \"letsencrypt.org\""]
    );
    let txt = dig(&ns, "lab.example", "TXT");
    assert_eq!(txt.len(), 2, "{txt:?}");
    assert!(txt.contains(&"lab.example. 300 TXT \"v=spf1 mx -all\"".to_owned()), "{txt:?}");
    assert_eq!(dig(&ns, "nas.lab.example", "A"), ["nas.lab.example. 300 A 192.0.2.20"]);
    assert_eq!(
        dig(&ns, "20.2.0.192.in-addr.arpa", "PTR"),
        ["20.2.0.192.in-addr.arpa. 300 PTR nas.lab.example."]
    );

    // The router's resolver (dnsmasq on port 53) answers the zone's names from named.
    let through_dnsmasq =
        ns.exec(&["dig", "@127.0.0.1", "-p", "53", "+short", "nas.lab.example", "A"]);
    assert_eq!(through_dnsmasq.trim(), "192.0.2.20");
    let reverse = ns.exec(&["dig", "@127.0.0.1", "-p", "53", "+short", "-x", "192.0.2.20"]);
    assert_eq!(reverse.trim(), "nas.lab.example.");

    // Read back by transfer, the zone matches: nothing to do.
    let again = session.plan(&input, now, false).await.expect("plan");
    assert_eq!(operations(&again), Vec::<String>::new());

    // A hand edit of an owned RRset is drift, repaired with one modify; a hand-added RRset is
    // foreign and stays.
    let key = root.join("etc/routerd/dns/keys/routerd-update.key");
    let nsupdate = |script: &str| {
        let mut cmd = ns.command("nsupdate");
        cmd.args(["-k", key.to_str().expect("utf-8")]);
        cmd.stdin(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("nsupdate");
        use std::io::Write;
        child.stdin.take().expect("stdin").write_all(script.as_bytes()).expect("script");
        assert!(child.wait().expect("nsupdate").success(), "nsupdate failed: {script}");
    };
    nsupdate(
        "server 127.0.0.1 5300\nzone lab.example\nupdate delete www.lab.example A\nupdate add www.lab.example 60 A 198.51.100.1\nupdate add hand.lab.example 60 TXT \"by hand\"\nsend\n",
    );
    wait_until("the hand edit", || {
        dig(&ns, "www.lab.example", "A") == ["www.lab.example. 60 A 198.51.100.1"]
    })
    .await;
    let repaired = session.reconcile(&input, now).await.expect("reconcile");
    assert_eq!(
        operations(&repaired),
        ["modify dns.rrset/local:auth/lab.example./www.lab.example./A done"]
    );
    assert_eq!(
        dig(&ns, "www.lab.example", "A"),
        ["www.lab.example. 60 A 192.0.2.10", "www.lab.example. 60 A 192.0.2.11"]
    );
    assert_eq!(dig(&ns, "hand.lab.example", "TXT"), ["hand.lab.example. 60 TXT \"by hand\""]);

    // Removed from the config, the owned RRset is deleted and leaves the ledger; the foreign one
    // stays.
    let without = config("");
    let removed = session.reconcile(&without, now).await.expect("reconcile");
    assert_eq!(
        operations(&removed),
        ["delete dns.rrset/local:auth/lab.example./www.lab.example./A done"]
    );
    assert_eq!(dig(&ns, "www.lab.example", "A"), Vec::<String>::new());
    assert_eq!(dig(&ns, "hand.lab.example", "TXT"), ["hand.lab.example. 60 TXT \"by hand\""]);
    let entry = session
        .ledger()
        .get("dns.rrset", "local:auth/lab.example./www.lab.example./A")
        .expect("ledger");
    assert!(entry.is_none(), "{entry:?}");
}
