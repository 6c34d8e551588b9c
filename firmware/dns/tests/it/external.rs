//! RRsets on a remote primary (`DNSExternalServer`, issue 36 §4, design brief `dns-bind9.md`
//! §5): a second `named` the test starts itself in its namespace (not through routerd), with
//! a hand-made zone, keys and update policies of its own. Which RRsets routerd changes there,
//! what it leaves when a zone leaves the config, and how a refused signature or policy is
//! reported. Needs root, BIND 9 (`named`, `dig`) and libfaketime (package `faketime`).
//!
//! A skewed clock (`TsigBadTime`): routerd signs every UPDATE at `SystemTime::now()`
//! (`rrsets.rs` → `wire::update`), so the remote named's clock is the one set apart: libfaketime
//! offsets it ([`RemoteNamed::start_skewed`]; a time namespace would not offset
//! `CLOCK_REALTIME`).

use crate::common;
use crate::common::{
    RemoteKey, RemoteNamed, RemoteZone, a_record, config, deletes, dig, external_server,
    external_zone, failures, operations, tsig_key,
};
use routerd_engine::ResultDocument;
use routerd_engine::result::{OperationResult, Phase};
use routerd_ledger::Origin;

/// Where the remote primary answers (routerd's own server, unused here, would take 5300).
const REMOTE_PORT: u16 = 5310;
const SECRET_A: &str = "ljxU0t8+3GA8F3N0TTbZ0Aau6Fsp0g/K4V9sMOJQ5vs=";
const SECRET_B: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const SECRET_C: &str = "ZGlmZmVyZW50LXNlY3JldC1vZi10aGUtdGhpcmQta2V5";
const SECRET_WRONG: &str = "d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldC13cm9uZy0=";

/// The records of the hand-made zone `ext.example` below its SOA and apex NS.
const HAND_RECORDS: &str = "hand A 198.51.100.7\nwww A 198.51.100.99\nsame 60 A 192.0.2.30\n\
                            @ MX 10 mail.other.example.\n";

fn rrset(owner: &str) -> String {
    format!("remote:remote/ext.example./{owner}.ext.example./A")
}

/// `dig` at the remote primary.
fn remote_dig(lab: &common::Lab, name: &str, rtype: &str) -> Vec<String> {
    dig(&lab.ns, REMOTE_PORT, name, rtype)
}

/// The remote primary with `ext.example` ([`HAND_RECORDS`]), updated and transferred with
/// `ext-key`.
fn remote_with_hand_zone(lab: &common::Lab) -> RemoteNamed {
    let keys = [RemoteKey { name: "ext-key", secret: SECRET_A }];
    let zones = [RemoteZone {
        apex: "ext.example",
        granted: &["ext-key"],
        transfer: &["ext-key"],
        records: HAND_RECORDS,
    }];
    RemoteNamed::start(&lab.ns, REMOTE_PORT, &keys, &zones)
}

/// Everything routerd may not change in `ext.example`: SOA (but its serial), apex NS and the
/// records not declared.
fn untouchables(lab: &common::Lab) -> Vec<Vec<String>> {
    let soa: Vec<String> = remote_dig(lab, "ext.example", "SOA")
        .into_iter()
        .map(|l| {
            let mut words: Vec<&str> = l.split_whitespace().collect();
            if words.len() > 5 {
                words[5] = "SERIAL";
            }
            words.join(" ")
        })
        .collect();
    vec![
        soa,
        remote_dig(lab, "ext.example", "NS"),
        remote_dig(lab, "ns1.ext.example", "A"),
        remote_dig(lab, "hand.ext.example", "A"),
        remote_dig(lab, "ext.example", "MX"),
    ]
}

fn ledger_origin(lab: &mut common::Lab, name: &str) -> Option<Origin> {
    let entry = lab.session().ledger().get("dns.rrset", name).expect("the ledger reads");
    entry.map(|e| e.origin)
}

fn candidates(doc: &ResultDocument) -> Vec<String> {
    let mut out: Vec<String> = doc
        .adoption_candidates
        .iter()
        .map(|c| format!("{}/{} {} {}", c.kind, c.name, c.adoptable, c.reason))
        .collect();
    out.sort();
    out
}

fn phase(doc: &ResultDocument, id: &str) -> Phase {
    let id = format!("net.routerd.net/v1alpha1/{id}");
    doc.resources.iter().find(|r| r.id == id).map(|r| r.phase).expect("the resource")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_remote_primary_only_routerds_rrsets_change_and_the_zone_survives_removal() {
    let mut lab = common::Lab::new("dnso").await;
    let remote = remote_with_hand_zone(&lab);
    let key = tsig_key("ext-key", SECRET_A);
    let server = external_server("remote", REMOTE_PORT, "ext-key");
    let zone = external_zone("ext", "ext.example", "remote");
    let new = a_record("new", "ext", "new", &["192.0.2.40"]);
    let www = a_record("www", "ext", "www", &["192.0.2.10"]);
    let same = a_record("same", "ext", "same", &["192.0.2.30"]);
    let untouched = untouchables(&lab);
    let serial = |lab: &common::Lab| common::serial(&lab.ns, REMOTE_PORT, "ext.example");
    let first_serial = serial(&lab);

    // A new RRset: created, recorded; nothing else in the zone changes.
    let first = config(&[&key, &server, &zone, &new]);
    let created = lab.reconcile_ok(&first).await;
    assert_eq!(
        operations(&created),
        [
            "create bind.config/key/ext-key done".to_owned(),
            format!("create dns.rrset/{} done", rrset("new")),
            "create file//etc/routerd/dns/endpoints.conf#remote:remote done".to_owned(),
        ]
    );
    assert_eq!(remote_dig(&lab, "new.ext.example", "A"), ["new.ext.example. 60 A 192.0.2.40"]);
    assert_eq!(untouchables(&lab), untouched, "{}", remote.log());
    assert_eq!(remote_dig(&lab, "www.ext.example", "A"), ["www.ext.example. 3600 A 198.51.100.99"]);
    assert_eq!(serial(&lab), first_serial + 1, "one UPDATE");
    assert_eq!(ledger_origin(&mut lab, &rrset("new")), Some(Origin::Created));
    let quiet = lab.plan(&first, false).await;
    assert_eq!(operations(&quiet), Vec::<String>::new());

    // Declaring RRsets the zone already holds: the matching one is an adoption candidate; the
    // differing one is someone else's (design brief §3): never modified, a `Conflict` until
    // the config matches it and it is adopted.
    let declared = config(&[&key, &server, &zone, &new, &www, &same]);
    let planned = lab.plan(&declared, false).await;
    assert_eq!(operations(&planned), Vec::<String>::new());
    assert_eq!(
        candidates(&planned),
        [
            format!("dns.rrset/{} true present on the host and matches the config", rrset("same")),
            format!("dns.rrset/{} false present but differs: ttl, rdata", rrset("www")),
        ]
    );
    assert_eq!(phase(&planned, "ARecord/www"), Phase::Blocked);
    assert_eq!(phase(&planned, "ARecord/same"), Phase::RequiresAdoption);
    let applied = lab.reconcile_ok(&declared).await;
    assert_eq!(operations(&applied), Vec::<String>::new());
    assert_eq!(remote_dig(&lab, "www.ext.example", "A"), ["www.ext.example. 3600 A 198.51.100.99"]);
    assert_eq!(remote_dig(&lab, "same.ext.example", "A"), ["same.ext.example. 60 A 192.0.2.30"]);
    assert_eq!(ledger_origin(&mut lab, &rrset("www")), None);
    assert_eq!(ledger_origin(&mut lab, &rrset("same")), None);
    assert_eq!(phase(&applied, "ARecord/www"), Phase::Blocked);
    assert_eq!(untouchables(&lab), untouched);

    // The config comes to match the RRset; adopted, it is routerd's, and a change to it is
    // then applied.
    let matching = "    - apiVersion: net.routerd.net/v1alpha1
      kind: ARecord
      metadata: {name: www}
      spec: {zone: ext, name: www, ipv4Addresses: [198.51.100.99], ttl: 3600}
";
    let matched = config(&[&key, &server, &zone, &new, matching, &same]);
    let only = std::collections::BTreeSet::from([format!("dns.rrset/{}", rrset("www"))]);
    let now = std::time::SystemTime::now();
    let adopted = lab.session().adopt_only(&matched, now, true, Some(&only)).await;
    let adopted = adopted.expect("adopt");
    assert_eq!(adopted.adopted_artifacts.len(), 1, "{:?}", adopted.adopted_artifacts);
    assert_eq!(ledger_origin(&mut lab, &rrset("www")), Some(Origin::Adopted));
    let changed = lab.reconcile_ok(&declared).await;
    assert_eq!(operations(&changed), [format!("modify dns.rrset/{} done", rrset("www"))]);
    assert_eq!(remote_dig(&lab, "www.ext.example", "A"), ["www.ext.example. 60 A 192.0.2.10"]);

    // The zone leaves the config: only the RRset routerd created is deleted; the zone, its
    // SOA and apex NS, the hand-made records and the unrecorded ones stay.
    let removed = lab.reconcile_ok(&config(&[&key, &server])).await;
    let mut gone = deletes(&removed);
    gone.sort();
    assert_eq!(
        gone,
        [format!("dns.rrset/{}", rrset("new")), format!("dns.rrset/{}", rrset("www"))],
        "what routerd created or was handed over"
    );
    assert_eq!(remote_dig(&lab, "new.ext.example", "A"), Vec::<String>::new());
    assert_eq!(remote_dig(&lab, "www.ext.example", "A"), Vec::<String>::new());
    assert_eq!(remote_dig(&lab, "same.ext.example", "A"), ["same.ext.example. 60 A 192.0.2.30"]);
    assert_eq!(untouchables(&lab), untouched);
    assert_eq!(ledger_origin(&mut lab, &rrset("new")), None);
    let pid = remote.pid();
    drop(remote);
    assert!(!common::is_running(pid), "the remote named is gone");
    lab.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_reconcile_does_not_take_over_pre_existing_remote_rrsets() {
    let mut lab = common::Lab::new("dnso").await;
    let _remote = remote_with_hand_zone(&lab);
    let key = tsig_key("ext-key", SECRET_A);
    let server = external_server("remote", REMOTE_PORT, "ext-key");
    let zone = external_zone("ext", "ext.example", "remote");
    let new = a_record("new", "ext", "new", &["192.0.2.40"]);
    let www = a_record("www", "ext", "www", &["192.0.2.10"]);
    let same = a_record("same", "ext", "same", &["192.0.2.30"]);

    // The server, the zone and the records all at once, as on a first boot.
    // The plan lists `create` for all three (the zone is not read before its endpoint block
    // exists); a create on a remote primary only creates what does not exist yet.
    let all = config(&[&key, &server, &zone, &new, &www, &same]);
    let doc = lab.reconcile(&all).await;
    // The two that were there are refused as someone else's, naming what to do.
    let failed = common::failures(&doc);
    assert_eq!(failed.len(), 2, "{failed:#?}");
    assert!(
        failed.iter().all(|f| f.contains("ForeignRRset") && f.contains("adopt")),
        "{failed:#?}"
    );
    assert_eq!(remote_dig(&lab, "new.ext.example", "A"), ["new.ext.example. 60 A 192.0.2.40"]);
    assert_eq!(ledger_origin(&mut lab, &rrset("new")), Some(Origin::Created));
    assert_eq!(ledger_origin(&mut lab, &rrset("same")), None, "routerd did not create it");
    assert_eq!(ledger_origin(&mut lab, &rrset("www")), None, "routerd did not create it");

    // Read now, `www` differs from the config and is someone else's: never modified, a
    // conflict until the config matches it and it is adopted. `same` matches: a candidate.
    let doc = lab.reconcile(&all).await;
    assert_eq!(common::operations(&doc), Vec::<String>::new());
    assert_eq!(remote_dig(&lab, "www.ext.example", "A"), ["www.ext.example. 3600 A 198.51.100.99"]);
    let name = rrset("www");
    let conflict = common::condition(&doc, "ARecord/www", "Conflict").expect("Conflict");
    assert_eq!(
        conflict,
        format!(
            "True ForeignRRset: already on the server with other data, left alone until adopted: {name}"
        )
    );
    let blocked = common::condition(&doc, "ARecord/www", "Blocked").expect("Blocked");
    assert!(blocked.starts_with("True ForeignObject: dns.rrset/"), "{blocked}");
    assert_eq!(phase(&doc, "ARecord/www"), Phase::Blocked);
    assert_eq!(phase(&doc, "ARecord/same"), Phase::RequiresAdoption);

    // Removing the zone must not delete what was there before routerd.
    lab.reconcile(&config(&[&key, &server])).await;
    assert_eq!(remote_dig(&lab, "same.ext.example", "A"), ["same.ext.example. 60 A 192.0.2.30"]);
    assert_eq!(remote_dig(&lab, "www.ext.example", "A").len(), 1);
    lab.finish();
}

/// The failed operations of `doc` on RRsets, by artifact name.
fn failed_rrsets(doc: &ResultDocument) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = doc
        .operations
        .iter()
        .filter(|op| op.kind == "dns.rrset" && op.result == OperationResult::Failed)
        .map(|op| (op.name.to_string(), op.error.clone().unwrap_or_default()))
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_signatures_and_policies_name_the_key_and_the_server_with_a_stable_reason() {
    let mut lab = common::Lab::new("dnso").await;
    // named knows `shared` (another secret than routerd's), `known` and `elsewhere`; the
    // zones grant `shared`, `known` and `known` respectively.
    let keys = [
        RemoteKey { name: "shared", secret: SECRET_A },
        RemoteKey { name: "known", secret: SECRET_B },
        RemoteKey { name: "elsewhere", secret: SECRET_C },
    ];
    let zones = [
        RemoteZone {
            apex: "sig.example",
            granted: &["shared"],
            transfer: &["shared"],
            records: "",
        },
        RemoteZone { apex: "key.example", granted: &["known"], transfer: &["known"], records: "" },
        RemoteZone {
            apex: "policy.example",
            granted: &["known"],
            transfer: &["known", "elsewhere"],
            records: "",
        },
    ];
    let remote = RemoteNamed::start(&lab.ns, REMOTE_PORT, &keys, &zones);
    let resources = [
        // Bad secret: routerd's `shared` is not named's.
        tsig_key("shared", SECRET_WRONG),
        external_server("badsig", REMOTE_PORT, "shared"),
        external_zone("sig", "sig.example", "badsig"),
        a_record("sig-www", "sig", "www", &["192.0.2.1"]),
        // Unknown key: named has no `stranger`.
        tsig_key("stranger", SECRET_B),
        external_server("badkey", REMOTE_PORT, "stranger"),
        external_zone("key", "key.example", "badkey"),
        a_record("key-www", "key", "www", &["192.0.2.2"]),
        // Refusing policy: `elsewhere` signs correctly, but only `known` may update.
        tsig_key("elsewhere", SECRET_C),
        external_server("refused", REMOTE_PORT, "elsewhere"),
        external_zone("policy", "policy.example", "refused"),
        a_record("policy-www", "policy", "www", &["192.0.2.3"]),
    ];
    let refs: Vec<&str> = resources.iter().map(String::as_str).collect();
    let input = config(&refs);
    let expected = [
        ("remote:badkey/key.example./www.key.example./A", "TsigBadKey", "stranger"),
        ("remote:badsig/sig.example./www.sig.example./A", "TsigBadSig", "shared"),
        ("remote:refused/policy.example./www.policy.example./A", "UpdateRefused", "elsewhere"),
    ];
    // Both reconciles create: first because the endpoints are new, then because an RRset the
    // ledger does not hold in a zone that cannot be read counts as absent. Each fails the
    // same way.
    let passes = [["create", "create", "create"], ["create", "create", "create"]];
    for (pass, ops) in ["first", "second"].into_iter().zip(passes) {
        let doc = lab.reconcile(&input).await;
        let failed = failed_rrsets(&doc);
        assert_eq!(failed.len(), 3, "{pass}: {:#?}\n{}", failures(&doc), remote.log());
        for ((name, error), (want, reason, key)) in failed.iter().zip(expected) {
            assert_eq!(name, want);
            assert!(error.contains(&format!("{reason}: ")), "{pass} {name}: {error}");
            assert!(error.contains(&format!("TSIG key \"{key}\"")), "{pass} {name}: {error}");
            assert!(error.contains("server 127.0.0.1#5310"), "{pass} {name}: {error}");
        }
        let mut ran: Vec<String> = doc
            .operations
            .iter()
            .filter(|op| op.kind == "dns.rrset")
            .map(|op| format!("{} {}", op.operation, op.name))
            .collect();
        ran.sort();
        let mut want: Vec<String> =
            expected.iter().zip(ops).map(|((name, ..), op)| format!("{op} {name}")).collect();
        want.sort();
        assert_eq!(ran, want, "{pass}");
        for (name, ..) in expected {
            assert_eq!(ledger_origin(&mut lab, name), None, "{pass}: {name} is not routerd's");
        }
        for id in ["ARecord/sig-www", "ARecord/key-www", "ARecord/policy-www"] {
            assert_eq!(phase(&doc, id), Phase::Blocked, "{pass}: {id}");
        }
        // The records' `Published` names the server's reason; the zones, unreadable with
        // the same keys, are of unknown standing for that reason.
        for ((id, zone), (name, reason, _)) in
            [("ARecord/key-www", "DNSZone/key"), ("ARecord/sig-www", "DNSZone/sig")]
                .into_iter()
                .zip(expected)
        {
            let published = common::condition(&doc, id, "Published").expect("Published");
            let error = &failed.iter().find(|(n, _)| n == name).expect("failed").1;
            let said = error.splitn(4, ": ").nth(3).expect("the server's words");
            assert_eq!(published, format!("False {reason}: not published: {name} ({said})"));
            assert!(said.contains("server 127.0.0.1#5310") && said.contains("TSIG key"), "{said}");
            let loaded = common::condition(&doc, zone, "Loaded").expect("Loaded");
            assert!(loaded.starts_with(&format!("Unknown {reason}: ")), "{pass}: {loaded}");
        }
        let refused = common::condition(&doc, "ARecord/policy-www", "Published");
        let said = failed[2].1.splitn(4, ": ").nth(3).expect("the server's words");
        assert!(said.contains("server 127.0.0.1#5310"), "{said}");
        let want = format!("False UpdateRefused: not published: {} ({said})", expected[2].0);
        assert_eq!(refused.as_deref(), Some(want.as_str()), "{pass}");
    }
    for zone in ["www.sig.example", "www.key.example", "www.policy.example"] {
        assert_eq!(remote_dig(&lab, zone, "A"), Vec::<String>::new());
    }
    drop(remote);
    lab.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_published_once_its_key_is_fixed_is_routerds() {
    let mut lab = common::Lab::new("dnso").await;
    let keys = [RemoteKey { name: "shared", secret: SECRET_A }];
    let zones = [RemoteZone {
        apex: "sig.example",
        granted: &["shared"],
        transfer: &["shared"],
        records: "",
    }];
    let _remote = RemoteNamed::start(&lab.ns, REMOTE_PORT, &keys, &zones);
    let server = external_server("remote", REMOTE_PORT, "shared");
    let zone = external_zone("sig", "sig.example", "remote");
    let www = a_record("www", "sig", "www", &["192.0.2.1"]);
    let name = "remote:remote/sig.example./www.sig.example./A";

    // The secret is wrong: the create fails, and then a modify (the zone cannot be read).
    let wrong = tsig_key("shared", SECRET_WRONG);
    let input = config(&[&wrong, &server, &zone, &www]);
    for _ in 0..2 {
        let doc = lab.reconcile(&input).await;
        assert_eq!(failed_rrsets(&doc).len(), 1, "{:#?}", failures(&doc));
    }

    // The secret fixed, the RRset is published by routerd: it is routerd's, as a create is.
    let right = tsig_key("shared", SECRET_A);
    let fixed = config(&[&right, &server, &zone, &www]);
    lab.reconcile_ok(&fixed).await;
    assert_eq!(remote_dig(&lab, "www.sig.example", "A"), ["www.sig.example. 60 A 192.0.2.1"]);
    let settled = lab.plan(&fixed, false).await;
    assert_eq!(candidates(&settled), Vec::<String>::new());
    assert_eq!(ledger_origin(&mut lab, name), Some(Origin::Created));

    // Removed from the config, it goes.
    let removed = lab.reconcile_ok(&config(&[&right, &server])).await;
    assert_eq!(deletes(&removed), [format!("dns.rrset/{name}")]);
    assert_eq!(remote_dig(&lab, "www.sig.example", "A"), Vec::<String>::new());
    lab.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_of_a_zone_the_primary_does_not_serve_wait_for_it() {
    let mut lab = common::Lab::new("dnso").await;
    let _remote = remote_with_hand_zone(&lab);
    let key = tsig_key("ext-key", SECRET_A);
    let server = external_server("remote", REMOTE_PORT, "ext-key");
    let served = external_zone("ext", "ext.example", "remote");
    let missing = external_zone("gone", "gone.example", "remote");
    let in_served = a_record("new", "ext", "new", &["192.0.2.40"]);
    let in_missing = a_record("lost", "gone", "lost", &["192.0.2.41"]);
    let input = config(&[&key, &server, &served, &missing, &in_served, &in_missing]);
    // The first apply writes the endpoint: neither zone was read yet, both RRsets are tried;
    // the one in the zone the primary does not serve fails NOTAUTH.
    let first = lab.reconcile(&input).await;
    let failed = common::failures(&first);
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert!(failed[0].contains("gone.example") && failed[0].contains("NotAuthoritative"));
    assert_eq!(remote_dig(&lab, "new.ext.example", "A"), ["new.ext.example. 60 A 192.0.2.40"]);

    // Read now: the zone is not served, its RRset waits rather than fails again, and the
    // zones say so.
    let second = lab.reconcile(&input).await;
    assert_eq!(operations(&second), Vec::<String>::new());
    let loaded = common::condition(&second, "DNSZone/gone", "Loaded").expect("Loaded");
    assert_eq!(
        loaded,
        "False ZoneNotLoaded: remote does not serve zone gone.example.: its RRsets wait for it"
    );
    let serial = common::serial(&lab.ns, REMOTE_PORT, "ext.example");
    assert_eq!(
        common::condition(&second, "DNSZone/ext", "Loaded"),
        Some(format!("True ZoneLoaded: zone ext.example. served by remote with serial {serial}"))
    );
    let blocked = common::condition(&second, "ARecord/lost", "Blocked").expect("Blocked");
    assert!(blocked.contains("DependencyPending"), "{blocked}");
    assert_eq!(phase(&second, "ARecord/lost"), Phase::Blocked);
    lab.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_txt_registry_a_delete_needs_the_owner_record_too() {
    let mut lab = common::Lab::new("dnso").await;
    let _remote = remote_with_hand_zone(&lab);
    let key = tsig_key("ext-key", SECRET_A);
    let server = format!(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSExternalServer
      metadata: {{name: remote}}
      spec:
        address: 127.0.0.1
        port: {REMOTE_PORT}
        tsigKey: ext-key
        ownership: {{txtRegistry: {{prefix: _routerd., ownerId: edge-1}}}}
"
    );
    let zone = external_zone("ext", "ext.example", "remote");
    let new = a_record("new", "ext", "new", &["192.0.2.40"]);
    let kept = a_record("kept", "ext", "kept", &["192.0.2.41"]);
    lab.reconcile_ok(&config(&[&key, &server, &zone, &new, &kept])).await;
    // Each RRset has its owner record beside it, in external-dns's format.
    assert_eq!(remote_dig(&lab, "new.ext.example", "A"), ["new.ext.example. 60 A 192.0.2.40"]);
    assert_eq!(
        remote_dig(&lab, "_routerd.a-new.ext.example", "TXT"),
        [
            "_routerd.a-new.ext.example. 300 TXT \"heritage=routerd,routerd/owner=edge-1,routerd/resource=ARecord/new\""
        ]
    );

    // Someone removes `kept`'s owner record: routerd puts it back while `kept` is declared.
    let key_file = lab.path("/etc/routerd/dns/keys/ext-key.key");
    let hand_delete = |lab: &common::Lab, name: &str| {
        let script = format!(
            "server 127.0.0.1 {REMOTE_PORT}\nzone ext.example\nupdate delete {name} TXT\nsend\n"
        );
        common::nsupdate(&lab.ns, &key_file, &script);
    };
    hand_delete(&lab, "_routerd.a-kept.ext.example");
    let both = config(&[&key, &server, &zone, &new, &kept]);
    let repaired = lab.reconcile_ok(&both).await;
    assert_eq!(operations(&repaired).len(), 1, "{:?}", operations(&repaired));
    assert_eq!(remote_dig(&lab, "_routerd.a-kept.ext.example", "TXT").len(), 1);

    // Removed from the config with its owner record intact, `new` is deleted with it. With
    // its owner record gone, `kept` is not: the registry no longer confirms it is routerd's.
    hand_delete(&lab, "_routerd.a-kept.ext.example");
    let doc = lab.reconcile(&config(&[&key, &server, &zone])).await;
    assert_eq!(remote_dig(&lab, "new.ext.example", "A"), Vec::<String>::new());
    assert_eq!(remote_dig(&lab, "_routerd.a-new.ext.example", "TXT"), Vec::<String>::new());
    assert_eq!(remote_dig(&lab, "kept.ext.example", "A"), ["kept.ext.example. 60 A 192.0.2.41"]);
    let failed = common::failures(&doc);
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert!(
        failed[0].starts_with(&format!(
            "delete dns.rrset/{} failed: OwnerRecordMissing: ",
            rrset("kept")
        )),
        "{}",
        failed[0]
    );
    assert!(failed[0].contains("no owner record of edge-1"), "{}", failed[0]);
    assert!(ledger_origin(&mut lab, &rrset("kept")).is_some(), "the ledger keeps it");
    lab.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skewed_clock_on_the_remote_primary_names_the_key_and_the_server_with_tsig_bad_time() {
    let mut lab = common::Lab::new("dnso").await;
    // named's clock runs an hour ahead, far beyond the fudge (300 s) routerd signs with.
    let keys = [RemoteKey { name: "skew-key", secret: SECRET_A }];
    let zones = [RemoteZone {
        apex: "time.example",
        granted: &["skew-key"],
        transfer: &["skew-key"],
        records: "",
    }];
    let remote = RemoteNamed::start_skewed(&lab.ns, REMOTE_PORT, &keys, &zones, 3600);
    let key = tsig_key("skew-key", SECRET_A);
    let server = external_server("skewed", REMOTE_PORT, "skew-key");
    let zone = external_zone("time", "time.example", "skewed");
    let www = a_record("www", "time", "www", &["192.0.2.4"]);
    let input = config(&[&key, &server, &zone, &www]);
    let name = "remote:skewed/time.example./www.time.example./A";
    let rejected = "server 127.0.0.1#5310 rejected the signing time of TSIG key \"skew-key\": \
                    the clocks differ by more than the fudge (BADTIME)";
    let message = format!("TsigBadTime: dns.rrset/{name}: create: {rejected}");
    // Both reconciles create (the zone cannot be read either), and fail the same way.
    for pass in ["first", "second"] {
        let doc = lab.reconcile(&input).await;
        let failed = failed_rrsets(&doc);
        assert_eq!(failed.len(), 1, "{pass}: {:#?}\n{}", failures(&doc), remote.log());
        let (failed_name, error) = &failed[0];
        assert_eq!(failed_name, name, "{pass}");
        assert!(error.contains("TsigBadTime: "), "{pass}: {error}");
        assert!(error.contains("TSIG key \"skew-key\""), "{pass}: {error}");
        assert!(error.contains("server 127.0.0.1#5310"), "{pass}: {error}");
        assert_eq!(error, &message, "{pass}");
        assert_eq!(common::operations_on(&doc, "dns.rrset"), [format!("create {name}")], "{pass}");
        assert_eq!(ledger_origin(&mut lab, name), None, "{pass}: {name} is not routerd's");
        assert_eq!(phase(&doc, "ARecord/www"), Phase::Blocked, "{pass}");
        // The record's `Published` names the server's reason; the zone, unreadable with the
        // same key, is of unknown standing for that reason.
        let published = common::condition(&doc, "ARecord/www", "Published").expect("Published");
        assert_eq!(
            published,
            format!("False TsigBadTime: not published: {name} ({rejected})"),
            "{pass}"
        );
        let loaded = common::condition(&doc, "DNSZone/time", "Loaded").expect("Loaded");
        assert_eq!(
            loaded,
            format!(
                "Unknown TsigBadTime: zone time.example. on skewed cannot be read: TsigBadTime: \
                 {rejected}"
            ),
            "{pass}"
        );
    }
    assert!(remote.log().contains("(BADTIME)"), "named saw the skew: {}", remote.log());
    assert_eq!(remote_dig(&lab, "www.time.example", "A"), Vec::<String>::new());
    drop(remote);
    lab.finish();
}
