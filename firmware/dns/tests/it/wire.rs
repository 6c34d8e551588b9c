//! The wire client against a real BIND 9 (`named -g`) in a network namespace of each test's
//! own: UPDATEs read back with `dig`, zone transfers, SOA serials, and the error map of the
//! design brief (`dns-bind9.md` §3) as BIND really answers. Needs root (namespaces) and BIND's
//! `named`, `tsig-keygen` and `dig`; fails, never skips, without them.

use std::fs::File;
use std::net::SocketAddr;
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use hickory_proto::rr::{Name, RData, RecordType};
use routerd_dns::artifacts::TsigAlgorithm;
use routerd_dns::wire::{self, Endpoint, RRsetChange, TsigKey, WireError};
use routerd_test_kit::daemon::Daemon;
use routerd_test_kit::netns::Netns;
use tempfile::TempDir;

const PORT: u16 = 5300;
const TIMEOUT: Duration = Duration::from_secs(10);
/// The zone `KEY` may update and transfer.
const ZONE: &str = "lab.example.";
/// The zone only `OTHER_KEY` may update.
const OTHER_ZONE: &str = "other.example.";
const KEY: &str = "routerd-update";
const OTHER_KEY: &str = "other-key";

/// A `named` serving [`ZONE`] and [`OTHER_ZONE`] on 127.0.0.1#[`PORT`] inside its own
/// namespace; killed, and the namespace deleted, on drop.
struct Bind {
    // Dropped in this order: named before its namespace and its directory.
    _named: Daemon,
    ns: Netns,
    dir: TempDir,
    netns: routerd_host::Netns,
    /// [`KEY`], granted [`ZONE`].
    key: TsigKey,
    /// [`OTHER_KEY`], granted [`OTHER_ZONE`] only.
    other_key: TsigKey,
}

impl Bind {
    fn start() -> Self {
        let ns = Netns::new("dnsw");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let key_clause = |name: &str| {
            let out = ns.exec(&["tsig-keygen", "-a", "hmac-sha256", name]);
            (TsigKey::parse_key_file(&out).expect("tsig-keygen's key parses"), out)
        };
        let (key, key_text) = key_clause(KEY);
        let (other_key, other_text) = key_clause(OTHER_KEY);
        let path = dir.path().display();
        let conf = format!(
            "options {{
    directory \"{path}\";
    pid-file \"{path}/named.pid\";
    session-keyfile \"{path}/session.key\";
    listen-on port {PORT} {{ 127.0.0.1; }};
    listen-on-v6 {{ none; }};
    recursion no;
    dnssec-validation no;
    minimal-responses yes;
}};
{key_text}
{other_text}
zone \"{ZONE}\" {{
    type primary;
    file \"{ZONE}zone\";
    update-policy {{ grant {KEY} zonesub ANY; }};
    allow-transfer {{ key {KEY}; }};
}};
zone \"{OTHER_ZONE}\" {{
    type primary;
    file \"{OTHER_ZONE}zone\";
    update-policy {{ grant {OTHER_KEY} zonesub ANY; }};
}};
"
        );
        std::fs::write(dir.path().join("named.conf"), conf).expect("named.conf");
        for zone in [ZONE, OTHER_ZONE] {
            let text = format!(
                "$TTL 3600\n@ SOA ns1.{zone} hostmaster.{zone} 1 3600 600 86400 60\n\
                 @ NS ns1.{zone}\nns1 A 127.0.0.1\n"
            );
            std::fs::write(dir.path().join(format!("{zone}zone")), text).expect("a zone file");
        }
        let log = File::create(dir.path().join("named.log")).expect("named.log");
        let conf = dir.path().join("named.conf");
        let mut named = Daemon::spawn(
            ns.command("named").arg("-g").arg("-c").arg(&conf).stdout(Stdio::null()).stderr(log),
        );
        let netns = routerd_host::Netns::named(ns.name()).expect("the namespace");
        named.wait_until("named to answer SOA queries", Duration::from_secs(30), || {
            let out = ns
                .command("dig")
                .args(["@127.0.0.1", "-p", &PORT.to_string(), ZONE, "SOA", "+short"])
                .output();
            out.is_ok_and(|o| o.status.success() && !o.stdout.is_empty())
        });
        Self { _named: named, ns, dir, netns, key, other_key }
    }

    fn endpoint(&self, key: Option<TsigKey>) -> Endpoint {
        Endpoint { address: SocketAddr::from(([127, 0, 0, 1], PORT)), key }
    }

    /// The endpoint signing with the key the zone grants.
    fn granted(&self) -> Endpoint {
        self.endpoint(Some(self.key.clone()))
    }

    /// `dig`'s answer lines for `name` `rtype` (for NS, the referral's authority lines),
    /// whitespace collapsed, sorted.
    fn dig(&self, name: &str, rtype: &str) -> Vec<String> {
        let port = PORT.to_string();
        let section = if rtype == "NS" { "+authority" } else { "+answer" };
        let args = ["dig", "@127.0.0.1", "-p", &port, name, rtype, "+noall", section];
        let out = self.ns.exec(&args);
        let mut lines: Vec<String> =
            out.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
        lines.sort();
        lines
    }

    async fn update(&self, ep: &Endpoint, changes: &[RRsetChange]) -> Result<usize, WireError> {
        match wire::update(&self.netns, ep, &name(ZONE), changes, TIMEOUT).await {
            Ok(report) => Ok(report.messages),
            Err(failure) => {
                assert_eq!(failure.applied, 0, "{failure}");
                Err(failure.error)
            }
        }
    }

    /// named's log, for a failing assertion.
    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("named.log")).unwrap_or_default()
    }
}

fn name(text: &str) -> Name {
    Name::from_ascii(text).expect("a name")
}

fn rrset(owner: &str, rtype: RecordType, ttl: u32, rdata: &[&str]) -> RRsetChange {
    let rdata =
        rdata.iter().map(|text| RData::try_from_str(rtype, text).expect("record data")).collect();
    RRsetChange { owner: name(owner), rtype, ttl, rdata, absent_before: false }
}

#[tokio::test]
async fn an_update_creates_rrsets_of_every_common_type_with_their_ttls() {
    let bind = Bind::start();
    let changes = [
        rrset("www.lab.example.", RecordType::A, 300, &["192.0.2.10", "192.0.2.11"]),
        rrset("www.lab.example.", RecordType::AAAA, 600, &["2001:db8::10"]),
        rrset("alias.lab.example.", RecordType::CNAME, 60, &["www.lab.example."]),
        rrset("txt.lab.example.", RecordType::TXT, 120, &["\"hello world\"", "v=spf1"]),
        rrset("lab.example.", RecordType::MX, 3600, &["10 mail.lab.example."]),
        rrset("sub.lab.example.", RecordType::NS, 86400, &["ns.example.net."]),
        rrset("_sip._tcp.lab.example.", RecordType::SRV, 300, &["10 60 5060 sip.lab.example."]),
        rrset("lab.example.", RecordType::CAA, 300, &["0 issue \"letsencrypt.org\""]),
        // named refuses an in-zone MX or SRV target without an address (its integrity check).
        rrset("mail.lab.example.", RecordType::A, 300, &["192.0.2.25"]),
        rrset("sip.lab.example.", RecordType::A, 300, &["192.0.2.26"]),
    ];
    let applied = bind.update(&bind.granted(), &changes).await;
    assert_eq!(applied.unwrap_or_else(|e| panic!("{e}\n{}", bind.log())), 1);

    let expected = [
        (
            "www",
            "A",
            vec!["www.lab.example. 300 IN A 192.0.2.10", "www.lab.example. 300 IN A 192.0.2.11"],
        ),
        ("www", "AAAA", vec!["www.lab.example. 600 IN AAAA 2001:db8::10"]),
        ("alias", "CNAME", vec!["alias.lab.example. 60 IN CNAME www.lab.example."]),
        (
            "txt",
            "TXT",
            vec![
                "txt.lab.example. 120 IN TXT \"hello world\"",
                "txt.lab.example. 120 IN TXT \"v=spf1\"",
            ],
        ),
        ("", "MX", vec!["lab.example. 3600 IN MX 10 mail.lab.example."]),
        ("sub", "NS", vec!["sub.lab.example. 86400 IN NS ns.example.net."]),
        ("_sip._tcp", "SRV", vec!["_sip._tcp.lab.example. 300 IN SRV 10 60 5060 sip.lab.example."]),
        ("", "CAA", vec!["lab.example. 300 IN CAA 0 issue \"letsencrypt.org\""]),
    ];
    for (label, rtype, lines) in expected {
        let owner = if label.is_empty() { ZONE.to_owned() } else { format!("{label}.{ZONE}") };
        assert_eq!(bind.dig(&owner, rtype), lines, "{owner} {rtype}\n{}", bind.log());
    }
}

#[tokio::test]
async fn replacing_an_rrset_leaves_exactly_the_new_set_and_an_empty_one_deletes_it() {
    let bind = Bind::start();
    let ep = bind.granted();
    let three =
        rrset("www.lab.example.", RecordType::A, 300, &["192.0.2.1", "192.0.2.2", "192.0.2.3"]);
    bind.update(&ep, &[three]).await.expect("created");
    assert_eq!(bind.dig("www.lab.example.", "A").len(), 3);

    let one = rrset("www.lab.example.", RecordType::A, 60, &["192.0.2.9"]);
    bind.update(&ep, &[one]).await.expect("replaced");
    assert_eq!(bind.dig("www.lab.example.", "A"), ["www.lab.example. 60 IN A 192.0.2.9"]);

    let none = rrset("www.lab.example.", RecordType::A, 60, &[]);
    bind.update(&ep, &[none]).await.expect("deleted");
    assert_eq!(bind.dig("www.lab.example.", "A"), Vec::<String>::new());
}

#[tokio::test]
async fn a_create_that_must_not_replace_refuses_an_existing_rrset_and_changes_nothing() {
    let bind = Bind::start();
    let ep = bind.granted();
    let theirs = rrset("mail.lab.example.", RecordType::A, 300, &["192.0.2.25"]);
    bind.update(&ep, &[theirs]).await.expect("someone else's RRset");

    let mut ours = rrset("mail.lab.example.", RecordType::A, 60, &["198.51.100.25"]);
    ours.absent_before = true;
    let mut fresh = rrset("new.lab.example.", RecordType::A, 60, &["198.51.100.26"]);
    fresh.absent_before = true;
    let failure = bind.update(&ep, &[ours]).await.expect_err("exists");
    assert_eq!(failure.reason().as_str(), "ForeignRRset");
    assert!(failure.to_string().contains("does not overwrite"), "{}", failure);
    assert_eq!(bind.dig("mail.lab.example.", "A"), ["mail.lab.example. 300 IN A 192.0.2.25"]);
    bind.update(&ep, &[fresh]).await.expect("an absent RRset is created");
    assert_eq!(bind.dig("new.lab.example.", "A"), ["new.lab.example. 60 IN A 198.51.100.26"]);
}

#[tokio::test]
async fn a_transfer_returns_the_zone_and_its_serial_grows_with_an_update() {
    let bind = Bind::start();
    let (ep, zone) = (bind.granted(), name(ZONE));
    let before = wire::axfr(&bind.netns, &ep, &zone, TIMEOUT).await.expect("transferred");
    assert_eq!(before.serial, 1);
    let types: Vec<_> = before.records.iter().map(|r| r.record_type()).collect();
    assert_eq!(types, [RecordType::SOA, RecordType::NS, RecordType::A], "no trailing SOA");

    let change = rrset("www.lab.example.", RecordType::A, 300, &["192.0.2.10"]);
    bind.update(&ep, &[change]).await.expect("applied");
    let after = wire::axfr(&bind.netns, &ep, &zone, TIMEOUT).await.expect("transferred");
    assert!(after.serial > before.serial, "{} after {}", after.serial, before.serial);
    let www: Vec<_> = after.records.iter().filter(|r| r.name == name("www.lab.example.")).collect();
    assert_eq!(www.len(), 1);
    assert_eq!((www[0].ttl, www[0].data.to_string()), (300, "192.0.2.10".to_owned()));

    for key in [Some(bind.key.clone()), None] {
        let serial = wire::soa_serial(&bind.netns, &bind.endpoint(key), &zone, TIMEOUT).await;
        assert_eq!(serial.expect("a serial"), after.serial);
    }
}

#[tokio::test]
async fn tsig_and_policy_failures_map_to_their_conditions_naming_key_and_server() {
    let bind = Bind::start();
    let change = [rrset("www.lab.example.", RecordType::A, 300, &["192.0.2.10"])];
    let key = |key: &str, secret: &[u8]| {
        Some(TsigKey::new(name(key), TsigAlgorithm::HmacSha256, secret.to_vec()))
    };
    let server = "127.0.0.1#5300";

    let wrong_secret = bind.endpoint(key(KEY, b"not the secret"));
    let err = bind.update(&wrong_secret, &change).await.expect_err("bad signature");
    assert_eq!(err.reason().as_str(), "TsigBadSig", "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "server {server} rejected the signature of TSIG key \"{KEY}\": the secrets differ \
             (BADSIG)"
        )
    );
    let unknown = bind.endpoint(key("nobody", b"secret"));
    let err = bind.update(&unknown, &change).await.expect_err("unknown key");
    assert_eq!(err.reason().as_str(), "TsigBadKey", "{err}");
    assert_eq!(
        err.to_string(),
        format!("server {server} does not know TSIG key \"nobody\" (BADKEY)")
    );

    let skewed = wire::update_at(
        &bind.netns,
        &bind.granted(),
        &name(ZONE),
        &change,
        TIMEOUT,
        SystemTime::now() - Duration::from_secs(3600),
    )
    .await
    .expect_err("clock skew");
    assert_eq!(skewed.error.reason().as_str(), "TsigBadTime", "{skewed}");
    assert!(
        skewed
            .to_string()
            .contains(&format!("{server} rejected the signing time of TSIG key \"{KEY}\"")),
        "{skewed}"
    );

    let (granted, ungranted) = (bind.granted(), name(OTHER_ZONE));
    let other = [rrset("www.other.example.", RecordType::A, 300, &["192.0.2.10"])];
    let refused = wire::update(&bind.netns, &granted, &ungranted, &other, TIMEOUT).await;
    let refused = refused.expect_err("policy denies").error;
    assert!(matches!(refused, WireError::UpdateRefused { .. }), "{refused}");
    assert_eq!(
        refused.to_string(),
        format!(
            "server {server} refused the UPDATE of zone other.example. signed with TSIG key \
             \"{KEY}\" (REFUSED: the update-policy does not grant it, or named's checks reject \
             it)"
        )
    );

    let elsewhere = [rrset("www.nowhere.example.", RecordType::A, 300, &["192.0.2.10"])];
    let zone = name("nowhere.example.");
    let not_served = wire::update(&bind.netns, &granted, &zone, &elsewhere, TIMEOUT).await;
    let not_served = not_served.expect_err("not served").error;
    assert_eq!(not_served.reason().as_str(), "NotAuthoritative", "{not_served}");
    assert!(not_served.to_string().contains(KEY) && not_served.to_string().contains(server));
    let soa = wire::soa_serial(&bind.netns, &granted, &zone, TIMEOUT).await;
    assert_eq!(soa.expect_err("not served").reason().as_str(), "NotAuthoritative");

    let unsigned = bind.update(&bind.endpoint(None), &change).await.expect_err("unsigned");
    assert!(matches!(unsigned, WireError::TsigRequired { .. }), "{unsigned}");

    let other_key = bind.endpoint(Some(bind.other_key.clone()));
    let transfer = wire::axfr(&bind.netns, &other_key, &name(ZONE), TIMEOUT).await;
    let transfer = transfer.expect_err("allow-transfer denies");
    assert!(matches!(transfer, WireError::TransferRefused { .. }), "{transfer}");
    assert!(transfer.to_string().contains(OTHER_KEY), "{transfer}");
    let transfer = wire::axfr(&bind.netns, &bind.endpoint(None), &name(ZONE), TIMEOUT).await;
    assert!(matches!(transfer, Err(WireError::TsigRequired { .. })), "{transfer:?}");

    let closed = Endpoint { address: SocketAddr::from(([127, 0, 0, 1], 5399)), key: None };
    let err = bind.update(&closed, &change).await.expect_err("nothing listens");
    assert_eq!(err.reason().as_str(), "ServerUnreachable", "{err}");
    assert!(err.to_string().starts_with("server 127.0.0.1#5399 is unreachable: "), "{err}");
}

#[tokio::test]
async fn two_thousand_rrsets_in_one_call_are_all_applied() {
    let bind = Bind::start();
    let changes: Vec<_> = (0..2000)
        .map(|i| {
            let owner = format!("host-{i}.lab.example.");
            rrset(&owner, RecordType::A, 300, &["192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"])
        })
        .collect();
    let messages = bind.update(&bind.granted(), &changes).await.expect("applied");
    assert!(messages > 1, "one connection carries several messages: {messages}");
    let zone = wire::axfr(&bind.netns, &bind.granted(), &name(ZONE), TIMEOUT).await.expect("zone");
    let hosts = zone
        .records
        .iter()
        .filter(|r| r.record_type() == RecordType::A && r.name.to_string().starts_with("host-"))
        .count();
    assert_eq!(hosts, 8000, "{messages} messages");
}
