//! Ownership of the DNS controller's artifacts on a server routerd runs (issue 36 §4, design
//! brief `dns-bind9.md` §5): what a lost ledger entry, the removal of a zone, a zone routerd
//! does not own, a dry run and a reconcile killed (SIGKILL) in the middle of its batched
//! UPDATEs do to the real `named` that FakeSystemd starts from routerd's unit, in a namespace
//! of each test's own. The killed reconcile runs in a child process: this test binary again,
//! running [`child_reconciles_and_is_killed`]. Needs root and BIND 9 (`named`, `dig`,
//! `nsupdate`, `rndc`).

use std::time::SystemTime;

use crate::common;
use crate::common::{
    KEY, Lab, SERVER, WWW, ZONE_LAB, config, deletes, dig_status, failures, operations,
    operations_on, orphan, serial,
};
use routerd_engine::result::{OrphanCleanup, Phase};
use routerd_ledger::{LedgerChange, Origin};

const WWW_RRSET: &str = "local:auth/lab.example./www.lab.example./A";
const NAS_RRSET: &str = "local:auth/lab.example./nas.lab.example./A";
const PTR_RRSET: &str = "local:auth/2.0.192.in-addr.arpa./20.2.0.192.in-addr.arpa./PTR";

/// Zone `lab.example` on `auth` without records or reverse zones, its name server outside it
/// (no glue): only its `bind.zone`.
const ZONE_BARE: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSZone
      metadata: {name: lab}
      spec: {zone: lab.example, server: auth, nameServers: [{hostname: ns.other.example.}]}
";
/// Zone `lab.example` on `auth` with host `nas`, no reverse zone, no glue.
const ZONE_FORWARD: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSZone
      metadata: {name: lab}
      spec:
        zone: lab.example
        server: auth
        nameServers: [{hostname: ns.other.example.}]
        records: [{hostname: nas, ipv4: 192.0.2.20}]
";
/// Zone `two.example` on `auth`, no records, no glue.
const ZONE_TWO: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSZone
      metadata: {name: two}
      spec: {zone: two.example, server: auth, nameServers: [{hostname: ns.other.example.}]}
";
/// [`ZONE_LAB`] without its reverse zone.
const ZONE_LAB_NO_REVERSE: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSZone
      metadata: {name: lab}
      spec:
        zone: lab.example
        server: auth
        nameServers: [{hostname: ns1, ipv4: 127.0.0.1}]
        records: [{hostname: nas, ipv4: 192.0.2.20}]
";
/// `www.lab.example A 198.51.100.10`, the changed `www`.
const WWW_CHANGED: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: ARecord
      metadata: {name: www}
      spec: {zone: lab, name: www, ipv4Addresses: [198.51.100.10], ttl: 60}
";
/// A new TXT at the apex of `lab.example`.
const SPF: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: TXTRecord
      metadata: {name: spf}
      spec: {zone: lab, name: \"@\", text: [\"v=spf1 -all\"]}
";

/// The zone files and journals of server `auth`, by file name.
fn data_files(lab: &Lab) -> Vec<String> {
    let dir = lab.path("/var/lib/routerd/dns/auth");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the data directory")
        .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".zone") || n.ends_with(".jnl"))
        .collect();
    names.sort();
    names
}

/// The section names (`lab.example.`) of server `auth`'s `zones.conf`.
fn zone_sections(lab: &Lab) -> Vec<String> {
    let text = std::fs::read_to_string(lab.path("/etc/routerd/dns/servers/auth/zones.conf"))
        .expect("zones.conf");
    text.lines().filter_map(|l| l.strip_prefix("# routerd zone ")).map(str::to_owned).collect()
}

/// The ledger's entry of `kind`/`name`.
fn entry(lab: &mut Lab, kind: &str, name: &str) -> Option<routerd_ledger::LedgerEntry> {
    lab.session().ledger().get(kind, name).expect("the ledger reads")
}

/// The ledger's names of kind `kind`, sorted.
fn entries_of(lab: &mut Lab, kind: &str) -> Vec<String> {
    let entries = lab.session().ledger().entries().expect("the ledger reads");
    let mut names: Vec<String> =
        entries.into_iter().filter(|e| e.kind == kind).map(|e| e.name).collect();
    names.sort();
    names
}

/// Removes the ledger entry `kind`/`name` behind the session's back (a lost entry).
fn lose(lab: &mut Lab, kind: &str, name: &str) {
    let change = LedgerChange::Remove { kind: kind.into(), name: name.into() };
    lab.session().ledger().apply(&[change]).expect("the ledger writes");
    assert!(entry(lab, kind, name).is_none());
}

/// The adoption candidates of a document as `kind/name adoptable`.
fn candidates(doc: &routerd_engine::ResultDocument) -> Vec<String> {
    let mut out: Vec<String> = doc
        .adoption_candidates
        .iter()
        .map(|c| format!("{}/{} {}", c.kind, c.name, c.adoptable))
        .collect();
    out.sort();
    out
}

/// The phase of resource `id` (`ARecord/www`).
fn phase(doc: &routerd_engine::ResultDocument, id: &str) -> Phase {
    let id = format!("net.routerd.net/v1alpha1/{id}");
    doc.resources.iter().find(|r| r.id == id).map(|r| r.phase).expect("the resource")
}

/// Writes a zone file and a marked section for `hand.example` into `auth`'s files by hand, as
/// an operator would, and has named load it (`rndc reconfig` with routerd's control key).
fn add_hand_zone(lab: &Lab) {
    let data = lab.path("/var/lib/routerd/dns/auth");
    std::fs::write(
        data.join("hand.example.zone"),
        "$ORIGIN hand.example.\n$TTL 300\n@ SOA ns1 hostmaster 1 3600 600 86400 60\n\
         @ NS ns1\nns1 A 127.0.0.1\nwww A 198.51.100.5\n",
    )
    .expect("a zone file");
    let zones = lab.path("/etc/routerd/dns/servers/auth/zones.conf");
    let mut text = std::fs::read_to_string(&zones).expect("zones.conf");
    text.push_str(
        "# routerd zone hand.example.\n\
         zone \"hand.example\" { type primary; file \"hand.example.zone\"; };\n# routerd end\n",
    );
    std::fs::write(&zones, text).expect("zones.conf");
    let key = lab.path("/etc/routerd/dns/servers/auth/rndc.key");
    let key = key.to_str().expect("utf-8");
    lab.ns.exec(&["rndc", "-k", key, "-s", "127.0.0.1", "-p", "9953", "reconfig"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_whose_ledger_entry_is_lost_is_kept_until_adopted() {
    let mut lab = Lab::new("dnso").await;
    let full = config(&[KEY, SERVER, ZONE_LAB, WWW]);
    lab.reconcile_ok(&full).await;
    let created = entry(&mut lab, "dns.rrset", WWW_RRSET).expect("an entry");
    assert_eq!(created.origin, Origin::Created);

    // The entry is lost: the RRset is still declared, so it is an adoption candidate, neither
    // created again nor changed.
    lose(&mut lab, "dns.rrset", WWW_RRSET);
    let planned = lab.plan(&full, false).await;
    assert_eq!(operations(&planned), Vec::<String>::new());
    assert_eq!(candidates(&planned), [format!("dns.rrset/{WWW_RRSET} true")]);
    assert_eq!(phase(&planned, "ARecord/www"), Phase::RequiresAdoption);

    // Removed from the config, the RRset routerd cannot prove its own stays on the server.
    let without = config(&[KEY, SERVER, ZONE_LAB]);
    let removed = lab.reconcile_ok(&without).await;
    assert_eq!(deletes(&removed), Vec::<String>::new());
    assert_eq!(lab.dig("www.lab.example", "A"), ["www.lab.example. 60 A 192.0.2.10"]);
    assert!(entry(&mut lab, "dns.rrset", WWW_RRSET).is_none());
    let again = lab.reconcile_ok(&without).await;
    assert_eq!(operations(&again), Vec::<String>::new());
    assert_eq!(lab.dig("www.lab.example", "A"), ["www.lab.example. 60 A 192.0.2.10"]);

    // Declared and adopted again, it is routerd's: removing it deletes it.
    let now = SystemTime::now();
    let adopted = lab.session().adopt(&full, now, true).await.expect("adopt");
    let names: Vec<&str> = adopted.adopted_artifacts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, [WWW_RRSET]);
    let adopted = entry(&mut lab, "dns.rrset", WWW_RRSET).expect("an entry");
    assert_eq!(adopted.origin, Origin::Adopted);
    let removed = lab.reconcile_ok(&without).await;
    assert_eq!(deletes(&removed), [format!("dns.rrset/{WWW_RRSET}")]);
    assert_eq!(lab.dig("www.lab.example", "A"), Vec::<String>::new());
    lab.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unrecorded_records_and_zones_are_reported_as_orphans_kept() {
    let mut lab = Lab::new("dnso").await;
    let full = config(&[KEY, SERVER, ZONE_FORWARD, WWW]);
    lab.reconcile_ok(&full).await;
    lab.nsupdate("zone lab.example\nupdate add hand.lab.example 60 TXT \"by hand\"\n");
    add_hand_zone(&lab);
    lose(&mut lab, "dns.rrset", WWW_RRSET);

    // ADR 0012, Inventory: foreign RRsets are orphans the ledger does not hold, kept and
    // reported; so are a lost entry's RRset and a zone section routerd did not write.
    let doc = lab.reconcile_ok(&config(&[KEY, SERVER, ZONE_FORWARD])).await;
    assert_eq!(deletes(&doc), Vec::<String>::new());
    let hand = "local:auth/lab.example./hand.lab.example./TXT";
    assert_eq!(orphan(&doc, "dns.rrset", hand), Some(OrphanCleanup::Keep), "{:#?}", doc.orphans);
    assert_eq!(orphan(&doc, "dns.rrset", WWW_RRSET), Some(OrphanCleanup::Keep));
    assert_eq!(orphan(&doc, "bind.zone", "auth/hand.example."), Some(OrphanCleanup::Keep));
    assert_eq!(lab.dig("www.lab.example", "A"), ["www.lab.example. 60 A 192.0.2.10"]);
    lab.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_ledger_deletes_nothing() {
    let mut lab = Lab::new("dnso").await;
    let full = config(&[KEY, SERVER, ZONE_LAB, WWW]);
    lab.reconcile_ok(&full).await;

    // The whole ledger is lost (a new file): nothing routerd wrote is provably its own.
    lab.session = None;
    std::fs::remove_file(lab.ledger_path()).expect("the ledger file");
    lab.session = Some(lab.open(false).await);
    let planned = lab.plan(&full, false).await;
    assert_eq!(operations(&planned), Vec::<String>::new());
    let listed = candidates(&planned);
    for artifact in [
        "bind.config/key/routerd-update",
        "bind.config/auth/options",
        "systemd.service/routerd-named-auth.service",
        "bind.zone/auth/lab.example.",
        "bind.zone/auth/2.0.192.in-addr.arpa.",
        &format!("dns.rrset/{WWW_RRSET}"),
        &format!("dns.rrset/{NAS_RRSET}"),
        &format!("dns.rrset/{PTR_RRSET}"),
    ] {
        assert!(listed.contains(&format!("{artifact} true")), "{artifact}: {listed:#?}");
    }
    assert!(planned.adoption_candidates.iter().all(|c| c.adoptable), "{listed:#?}");

    // Neither a record nor a whole zone removed from the config is deleted.
    let without_www = lab.reconcile_ok(&config(&[KEY, SERVER, ZONE_LAB])).await;
    assert_eq!(operations(&without_www), Vec::<String>::new());
    let without_zone = lab.reconcile_ok(&config(&[KEY, SERVER])).await;
    assert_eq!(operations(&without_zone), Vec::<String>::new());
    assert_eq!(lab.dig("www.lab.example", "A"), ["www.lab.example. 60 A 192.0.2.10"]);
    assert_eq!(
        lab.dig("20.2.0.192.in-addr.arpa", "PTR"),
        ["20.2.0.192.in-addr.arpa. 300 PTR nas.lab.example."]
    );
    assert_eq!(zone_sections(&lab), ["2.0.192.in-addr.arpa.", "lab.example."]);
    lab.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_an_owned_zone_refuses_it_and_keeps_its_files() {
    let mut lab = Lab::new("dnso").await;
    let with_zone = config(&[KEY, SERVER, ZONE_BARE]);
    lab.reconcile_ok(&with_zone).await;
    // A record added by hand puts a journal beside the zone file.
    lab.nsupdate("zone lab.example\nupdate add hand.lab.example 60 TXT \"by hand\"\n");
    assert_eq!(lab.dig("hand.lab.example", "TXT"), ["hand.lab.example. 60 TXT \"by hand\""]);
    assert_eq!(data_files(&lab), ["lab.example.zone", "lab.example.zone.jnl"]);
    assert!(entry(&mut lab, "bind.zone", "auth/lab.example.").is_some());

    // Removed from the config: its section goes, named refuses the zone, both files stay.
    let removed = lab.reconcile_ok(&config(&[KEY, SERVER])).await;
    assert_eq!(operations(&removed), ["delete bind.zone/auth/lab.example. done"]);
    assert_eq!(zone_sections(&lab), Vec::<String>::new());
    common::wait_until("named to refuse lab.example", || {
        dig_status(&lab.ns, common::AUTH_PORT, "lab.example", "SOA") == "REFUSED"
    })
    .await;
    assert_eq!(data_files(&lab), ["lab.example.zone", "lab.example.zone.jnl"]);
    assert!(entry(&mut lab, "bind.zone", "auth/lab.example.").is_none());

    // Declared again, the zone resumes from its files: the hand-made record is back.
    lab.reconcile_ok(&with_zone).await;
    common::wait_until("named to serve lab.example again", || {
        lab.dig("hand.lab.example", "TXT") == ["hand.lab.example. 60 TXT \"by hand\""]
    })
    .await;
    lab.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_a_zone_with_owned_records_converges() {
    let mut lab = Lab::new("dnso").await;
    let full = config(&[KEY, SERVER, ZONE_LAB, WWW]);
    lab.reconcile_ok(&full).await;

    // Brief §5, zone removal: the zone is refused, its files kept, and its RRsets leave the
    // ledger with it, without failed operations. They go with the zone (the graph's cascade):
    // the plan and the reconcile list them, but no UPDATE is sent for them.
    let without = config(&[KEY, SERVER]);
    let cascaded = |doc: &routerd_engine::ResultDocument| -> Vec<String> {
        let mut ops: Vec<String> = doc
            .operations
            .iter()
            .map(|op| {
                format!("{} {}/{} {} ({})", op.operation, op.kind, op.name, op.result, op.reason)
            })
            .collect();
        ops.sort();
        ops
    };
    const REVERSE: &str = "auth/2.0.192.in-addr.arpa.";
    const NS1_RRSET: &str = "local:auth/lab.example./ns1.lab.example./A";
    let recorded = "orphan: recorded in the ledger";
    let goes_with = "orphan: goes with bind.zone/auth/lab.example.";
    assert_eq!(
        cascaded(&lab.plan(&without, false).await),
        [
            format!("delete bind.zone/{REVERSE} planned ({recorded})"),
            format!("delete bind.zone/auth/lab.example. planned ({recorded})"),
            format!("delete dns.rrset/{PTR_RRSET} planned (orphan: goes with bind.zone/{REVERSE})"),
            format!("delete dns.rrset/{NAS_RRSET} planned ({goes_with})"),
            format!("delete dns.rrset/{NS1_RRSET} planned ({goes_with})"),
            format!("delete dns.rrset/{WWW_RRSET} planned ({goes_with})"),
        ]
    );
    let jnl = lab.path("/var/lib/routerd/dns/auth/lab.example.zone.jnl");
    let journal = || std::fs::read(&jnl);
    let before = journal().expect("routerd's UPDATEs wrote the zone's journal");
    let removed = lab.reconcile(&without).await;
    assert_eq!(failures(&removed), Vec::<String>::new());
    assert_eq!(
        cascaded(&removed),
        [
            format!("delete bind.zone/{REVERSE} done ({recorded})"),
            format!("delete bind.zone/auth/lab.example. done ({recorded})"),
            format!("delete dns.rrset/{PTR_RRSET} done (orphan: goes with bind.zone/{REVERSE})"),
            format!("delete dns.rrset/{NAS_RRSET} done ({goes_with})"),
            format!("delete dns.rrset/{NS1_RRSET} done ({goes_with})"),
            format!("delete dns.rrset/{WWW_RRSET} done ({goes_with})"),
        ]
    );
    // Nothing was sent to the zone before its section went: its journal is as it was.
    assert_eq!(journal().expect("the journal stays"), before, "no UPDATE for the RRsets");
    assert_eq!(dig_status(&lab.ns, common::AUTH_PORT, "lab.example", "SOA"), "REFUSED");
    assert_eq!(entries_of(&mut lab, "dns.rrset"), Vec::<String>::new());
    assert_eq!(entries_of(&mut lab, "bind.zone"), Vec::<String>::new());
    let again = lab.reconcile(&without).await;
    assert_eq!(operations(&again), Vec::<String>::new());

    // Declared again, it comes back in one reconcile.
    lab.reconcile_ok(&full).await;
    assert_eq!(lab.dig("www.lab.example", "A"), ["www.lab.example. 60 A 192.0.2.10"]);
    assert_eq!(lab.dig("nas.lab.example", "A"), ["nas.lab.example. 300 A 192.0.2.20"]);
    let settled = lab.plan(&full, false).await;
    assert_eq!(operations(&settled), Vec::<String>::new());
    lab.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zone_routerd_does_not_own_is_kept_and_still_served() {
    let mut lab = Lab::new("dnso").await;
    let full = config(&[KEY, SERVER, ZONE_FORWARD, ZONE_TWO, WWW]);
    lab.reconcile_ok(&full).await;

    // A section added to zones.conf by hand is served, and reconcile leaves it.
    add_hand_zone(&lab);
    common::wait_until("named to serve hand.example", || {
        lab.dig("www.hand.example", "A") == ["www.hand.example. 300 A 198.51.100.5"]
    })
    .await;
    let same = lab.reconcile_ok(&full).await;
    assert_eq!(operations(&same), Vec::<String>::new());

    // lab.example's entry is lost; both zones leave the config. two.example, owned, goes (and
    // zones.conf is rewritten); lab.example and the hand-made zone stay and answer. The RRsets
    // of lab.example the ledger still holds are deleted from it.
    lose(&mut lab, "bind.zone", "auth/lab.example.");
    let removed = lab.reconcile_ok(&config(&[KEY, SERVER])).await;
    assert_eq!(operations_on(&removed, "bind.zone"), ["delete auth/two.example."]);
    assert_eq!(
        operations_on(&removed, "dns.rrset"),
        [format!("delete {NAS_RRSET}"), format!("delete {WWW_RRSET}")]
    );
    assert_eq!(zone_sections(&lab), ["hand.example.", "lab.example."]);
    common::wait_until("named to refuse two.example", || {
        dig_status(&lab.ns, common::AUTH_PORT, "two.example", "SOA") == "REFUSED"
    })
    .await;
    assert_eq!(dig_status(&lab.ns, common::AUTH_PORT, "lab.example", "SOA"), "NOERROR");
    assert_eq!(lab.dig("www.hand.example", "A"), ["www.hand.example. 300 A 198.51.100.5"]);
    assert_eq!(lab.dig("www.lab.example", "A"), Vec::<String>::new());
    let again = lab.reconcile_ok(&config(&[KEY, SERVER])).await;
    assert_eq!(operations(&again), Vec::<String>::new());
    assert_eq!(zone_sections(&lab), ["hand.example.", "lab.example."]);
    lab.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_leaves_the_serial_and_the_ledger_untouched() {
    let mut lab = Lab::new("dnso").await;
    lab.reconcile_ok(&config(&[KEY, SERVER, ZONE_LAB, WWW])).await;
    // Drift by hand too, so the plan modifies, creates and deletes.
    lab.nsupdate("zone lab.example\nupdate delete nas.lab.example A\nupdate add nas.lab.example 300 A 198.51.100.20\n");
    common::wait_until("the hand edit", || {
        lab.dig("nas.lab.example", "A") == ["nas.lab.example. 300 A 198.51.100.20"]
    })
    .await;
    let changed = config(&[KEY, SERVER, ZONE_LAB_NO_REVERSE, WWW_CHANGED, SPF]);
    let expected = [
        "create dns.rrset/local:auth/lab.example./lab.example./TXT planned".to_owned(),
        "delete bind.zone/auth/2.0.192.in-addr.arpa. planned".to_owned(),
        format!("delete dns.rrset/{PTR_RRSET} planned"),
        format!("modify dns.rrset/{NAS_RRSET} planned"),
        format!("modify dns.rrset/{WWW_RRSET} planned"),
    ];
    let files = [
        "/etc/routerd/dns/servers/auth/zones.conf",
        "/etc/routerd/dns/endpoints.conf",
        "/var/lib/routerd/dns/auth/lab.example.zone.jnl",
    ];
    let state = |lab: &Lab| {
        let mut bytes = vec![std::fs::read(lab.ledger_path()).expect("the ledger file")];
        bytes.extend(files.iter().map(|f| std::fs::read(lab.path(f)).expect("a file")));
        let serials = [
            serial(&lab.ns, common::AUTH_PORT, "lab.example"),
            serial(&lab.ns, common::AUTH_PORT, "2.0.192.in-addr.arpa"),
        ];
        (bytes, serials)
    };

    // With the daemon's writable session, plan and dry run alike.
    let before = state(&lab);
    let dry = lab.plan(&changed, true).await;
    assert_eq!(dry.mode, "dry-run");
    assert_eq!(operations(&dry), expected);
    let planned = lab.plan(&changed, false).await;
    assert_eq!(operations(&planned), expected);
    assert!(before == state(&lab), "a plan changed the ledger, a file or a serial");

    // As `routerd reconcile --dry-run` runs: a read-only session.
    lab.session = None;
    let before = state(&lab);
    let read_only = lab.open(true).await;
    let dry = read_only.plan(&changed, SystemTime::now(), true).await.expect("plan");
    assert_eq!(operations(&dry), expected);
    drop(read_only);
    assert!(before == state(&lab), "a dry run changed the ledger, a file or a serial");
    assert_eq!(lab.dig("nas.lab.example", "A"), ["nas.lab.example. 300 A 198.51.100.20"]);
    assert_eq!(lab.dig("lab.example", "TXT"), Vec::<String>::new());
    lab.finish();
}

/// The environment variable that makes [`child_reconciles_and_is_killed`] run: the namespace,
/// the root, the bus address and the config file, one a line.
const CHILD_ENV: &str = "ROUTERD_DNS_TEST_CHILD";
/// Host records of the zone in [`a_reconcile_killed_mid_batch_converges_with_nothing_lost`].
const HOSTS: usize = 6000;

/// Zone `lab.example` with [`HOSTS`] host records `h<i>`, no reverse zone.
fn big_zone() -> String {
    let mut text = String::from(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSZone
      metadata: {name: lab}
      spec:
        zone: lab.example
        server: auth
        nameServers: [{hostname: ns.other.example.}]
        records:
",
    );
    for i in 0..HOSTS {
        text.push_str(&format!(
            "          - {{hostname: h{i}, ipv4: 10.{}.{}.{}}}\n",
            i / 65536,
            (i / 256) % 256,
            i % 256
        ));
    }
    text
}

/// The host records `h<i>` of `lab.example` on `auth`, read by zone transfer.
fn hosts_served(lab: &Lab) -> usize {
    let records = common::axfr(&lab.ns, common::AUTH_PORT, &lab.update_key_file(), "lab.example");
    let hosts: std::collections::BTreeSet<&str> = records
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|owner| owner.starts_with('h') && owner.ends_with(".lab.example."))
        .collect();
    hosts.len()
}

/// Not a test: the process [`a_reconcile_killed_mid_batch_converges_with_nothing_lost`]
/// starts and kills. Opens a session as the daemon does and reconciles the config it is given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "not a test: run in a child process by a_reconcile_killed_mid_batch_converges_with_nothing_lost"]
async fn child_reconciles_and_is_killed() {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let lines: Vec<&str> = spec.lines().collect();
    let [netns, root, bus, path] = lines[..] else { panic!("{CHILD_ENV}: {spec:?}") };
    let registry = common::registry();
    let root = std::path::PathBuf::from(root);
    let opts = routerd_engine::SessionOptions {
        netns: Some(netns.to_owned()),
        ledger_path: root.join("ledger.redb"),
        read_only: false,
        root: Some(root),
        system_bus: Some(bus.to_owned()),
        exit_after_command: false,
    };
    let mut session = routerd_engine::Session::open_with(opts, &registry).await.expect("session");
    let text = std::fs::read_to_string(path).expect("the config");
    let input = routerd_engine::ConfigInput::parse(&text, "router.yaml").expect("valid config");
    session.reconcile(&input, SystemTime::now()).await.expect("reconcile");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_killed_mid_batch_converges_with_nothing_lost() {
    use std::os::unix::process::ExitStatusExt;

    let mut lab = Lab::new("dnso").await;
    lab.reconcile_ok(&config(&[KEY, SERVER, ZONE_BARE])).await;
    let seeded = serial(&lab.ns, common::AUTH_PORT, "lab.example");
    let big = big_zone();
    let text = common::config_text(&[KEY, SERVER, &big]);
    let path = lab.dir.path().join("router.yaml");
    std::fs::write(&path, &text).expect("the config");

    // Another process reconciles the zone's thousands of records (a few UPDATEs of batched
    // creates) and is killed (SIGKILL) as soon as the first UPDATE has landed.
    lab.session = None;
    let spec = [
        lab.ns.name().to_owned(),
        lab.root.display().to_string(),
        lab.fake.address().to_owned(),
        path.display().to_string(),
    ]
    .join("\n");
    let exe = std::env::current_exe().expect("the test binary");
    let mut child = routerd_test_kit::daemon::Daemon::spawn(
        std::process::Command::new(exe)
            .args([
                "ownership::child_reconciles_and_is_killed",
                "--exact",
                "--ignored",
                "--nocapture",
            ])
            .env(CHILD_ENV, spec)
            .stdout(std::process::Stdio::null()),
    );
    child.wait_until("the first UPDATE", common::DEADLINE, || {
        serial(&lab.ns, common::AUTH_PORT, "lab.example") != seeded
    });
    child.signal("KILL");
    let status = child.wait_exit(common::DEADLINE);
    assert_eq!(status.signal(), Some(9), "the reconcile was killed before it finished: {status}");
    let landed = hosts_served(&lab);
    assert!(landed > 0, "the first UPDATE landed");

    // The next reconcile finds the pending creates, keeps those on the server, creates the
    // rest, and owns every one.
    lab.session = Some(lab.open(false).await);
    let input = common::config(&[KEY, SERVER, &big]);
    let resumed = lab.reconcile_ok(&input).await;
    let created = operations_on(&resumed, "dns.rrset").len();
    assert!(created <= HOSTS - landed, "{created} creates after {landed} landed");
    assert_eq!(hosts_served(&lab), HOSTS);
    let heads = lab.session().ledger().heads().expect("the ledger reads");
    let rrsets: Vec<_> = heads.iter().filter(|e| e.kind == "dns.rrset").collect();
    assert_eq!(rrsets.len(), HOSTS);
    assert!(
        rrsets
            .iter()
            .all(|e| e.origin == Origin::Created && e.state == routerd_ledger::EntryState::Owned)
    );
    assert!(entry(&mut lab, "bind.zone", "auth/lab.example.").is_some(), "no entry lost");
    let settled = lab.plan(&input, false).await;
    assert_eq!(operations(&settled), Vec::<String>::new());
    assert_eq!(candidates(&settled), Vec::<String>::new());
    eprintln!("killed after {landed} of {HOSTS} host records had landed");
    lab.finish();
}
