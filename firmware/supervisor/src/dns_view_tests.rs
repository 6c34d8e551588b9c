//! Tests of the DNS view ([`super`]) of a Result document with DNS artifacts: the rows the
//! control API serves (`GET /v1/dns`), `routerctl dns` prints and the DNS page shows.

use routerd_engine::ResultDocument;
use routerd_model::dns_view::{DnsRecordRow, DnsView, RecordState, Side};
use routerd_model::status::{CheckStatus, DoctorCheck};
use serde_json::{Value, json};

use super::view;

pub(crate) const API: &str = "net.routerd.net/v1alpha1";
const ROUTER: &str = "local:auth/lab.example./router.lab.example./A";
const WWW: &str = "local:auth/lab.example./www.lab.example./A";
const MX: &str = "local:auth/lab.example./lab.example./MX";
const NAS: &str = "local:auth/lab.example./nas.lab.example./AAAA";
const SPF: &str = "remote:corp/corp.example./corp.example./TXT";
const PRINTER: &str = "local:auth/lab.example./printer.lab.example./A";
const OLD: &str = "local:auth/lab.example./old.lab.example./CNAME";

/// A resource of `kind` named `name` declaring `artifacts` (`(kind, name, applyWith)`),
/// observed as `observed`.
fn resource(kind: &str, name: &str, artifacts: &[(&str, &str, &str)], observed: &[Value]) -> Value {
    let artifacts: Vec<Value> = artifacts
        .iter()
        .map(|(k, n, with)| json!({"kind": k, "name": n, "action": "ensure", "applyWith": with}))
        .collect();
    json!({"id": format!("{API}/{kind}/{name}"), "phase": "Healthy", "observed": observed,
        "plan": [], "artifacts": artifacts, "warnings": [], "conditions": []})
}

fn seen(kind: &str, name: &str, present: bool, owned: bool, drift: Value) -> Value {
    json!({"kind": kind, "name": name, "present": present, "owned": owned, "drift": drift})
}

/// An RRset spec as the ledger, an orphan or a candidate holds it.
fn spec(name: &str, ttl: u64, rdata: &[&str]) -> Value {
    json!({"type": "external", "kind": "dns.rrset", "name": name,
        "attributes": {"ttl": ttl, "rdata": rdata}})
}

/// A reconcile's Result document as `GET /v1/result` serves it, with a local server `auth`
/// (zone `lab.example.`, its unit stopped) and a remote one `corp` (zone `corp.example.`,
/// unreadable), RRsets in every state.
fn document_json() -> Value {
    let rrset = |name| ("dns.rrset", name, "dns");
    json!({
        "generation": 3, "timestamp": "2026-12-01T10:00:00Z", "phase": "Drifted",
        "mode": "reconcile",
        "resources": [
            resource("DNSServer", "auth",
                &[("bind.config", "auth/options", "bind"),
                  ("systemd.service", "routerd-named-auth.service", "systemd")],
                &[seen("bind.config", "auth/options", true, true, json!([])),
                  seen("systemd.service", "routerd-named-auth.service", true, true,
                    json!([{"attribute": "active", "desired": true, "observed": false}]))]),
            resource("DNSExternalServer", "corp",
                &[("file", "/etc/routerd/dns/endpoints.conf#remote:corp", "files")], &[]),
            resource("DNSZone", "lab",
                &[("bind.zone", "auth/lab.example.", "bind"), rrset(ROUTER)],
                &[seen("bind.zone", "auth/lab.example.", true, true, json!([])),
                  seen("dns.rrset", ROUTER, true, true, json!([]))]),
            resource("ARecord", "www", &[rrset(WWW)],
                &[seen("dns.rrset", WWW, true, true, json!([
                    {"attribute": "rdata", "desired": ["192.0.2.10"], "observed": ["192.0.2.99"]}
                ]))]),
            resource("MXRecord", "mail", &[rrset(MX)],
                &[seen("dns.rrset", MX, false, false, json!([]))]),
            resource("AAAARecord", "nas", &[rrset(NAS)],
                &[seen("dns.rrset", NAS, true, false, json!([]))]),
            resource("TXTRecord", "spf", &[rrset(SPF)],
                &[seen("dns.rrset", SPF, true, true, json!([{"attribute": "unobserved",
                    "desired": null, "observed": "TsigBadSig: the server refused the key"}]))]),
        ],
        "orphans": [
            {"kind": "dns.rrset", "name": PRINTER, "owner": "", "reason": "not in the ledger",
             "remediation": "declare it", "cleanup": "keep",
             "observed": spec(PRINTER, 3600, &["192.0.2.50"])},
            {"kind": "dns.rrset", "name": OLD, "owner": format!("{API}/CNAMERecord/old"),
             "reason": "owned, declared no more", "remediation": "deleted", "cleanup": "delete",
             "observed": spec(OLD, 600, &["www.lab.example."])},
        ],
        "adoptionCandidates": [
            {"kind": "dns.rrset", "name": NAS, "owner": format!("{API}/AAAARecord/nas"),
             "reason": "present", "adoptable": true, "desired": spec(NAS, 300, &["2001:db8::5"]),
             "observed": spec(NAS, 300, &["2001:db8::5"])},
        ],
        "adoptedArtifacts": [],
        "operations": [
            {"operation": "create", "kind": "dns.rrset", "name": MX,
             "owner": format!("{API}/MXRecord/mail"), "reason": "missing", "result": "failed",
             "error": "REFUSED: the MX target has no address"},
        ],
        "warnings": [],
    })
}

/// The Result document of `doc` (as [`document_json`] makes it, perhaps changed).
fn typed(doc: Value) -> ResultDocument {
    // Reading the document back needs the DNS families (`applyWith: dns`) registered.
    crate::controllers::registry().expect("the controller crates register");
    serde_json::from_value(doc).expect("a Result document")
}

/// [`document_json`] as the daemon holds it.
pub(crate) fn document() -> ResultDocument {
    typed(document_json())
}

/// The ledger's entries as `GET /v1/ledger` answers (`state` apart): what routerd wrote into
/// the owned RRsets, and an entry of another kind.
pub(crate) fn ledger_json() -> Value {
    let entry = |name: &str, owner: &str, ttl, rdata: &[&str]| {
        json!({"kind": "dns.rrset", "name": name, "owner": format!("{API}/{owner}"),
            "origin": "created", "generation": 2, "recordedAt": 1_795_229_100,
            "attributes": spec(name, ttl, rdata)})
    };
    json!([
        entry(ROUTER, "DNSZone/lab", 3600, &["192.0.2.1"]),
        entry(WWW, "ARecord/www", 300, &["192.0.2.10"]),
        entry(SPF, "TXTRecord/spf", 300, &["\"v=spf1 -all\""]),
        entry(OLD, "CNAMERecord/old", 600, &["www.lab.example."]),
        {"kind": "linux.link", "name": "lan0", "owner": format!("{API}/Interface/lan"),
         "origin": "adopted", "generation": 1, "recordedAt": 1_795_229_000, "attributes": {}},
    ])
}

/// [`ledger_json`] as `(kind, name, attributes JSON)`.
fn ledger() -> Vec<(String, String, String)> {
    let text = |v: &Value| v.as_str().expect("a string").to_owned();
    ledger_json()
        .as_array()
        .expect("a list")
        .iter()
        .map(|e| (text(&e["kind"]), text(&e["name"]), e["attributes"].to_string()))
        .collect()
}

/// [`view`] of `doc` with `ledger` and `checks`.
fn view_of(
    doc: Option<&ResultDocument>,
    ledger: &[(String, String, String)],
    checks: Vec<DoctorCheck>,
) -> DnsView {
    view(doc, ledger.iter().map(|(k, n, j)| (k.as_str(), n.as_str(), j.as_str())), checks)
}

pub(crate) fn check(area: &str, code: &str, status: CheckStatus) -> DoctorCheck {
    DoctorCheck {
        area: area.into(),
        code: code.into(),
        name: format!("check {code}"),
        status,
        detail: String::new(),
        remedy: String::new(),
    }
}

fn row<'a>(rows: &'a [DnsRecordRow], zone: &str, name: &str, rtype: &str) -> &'a DnsRecordRow {
    rows.iter()
        .find(|r| r.zone == zone && r.relative_owner() == name && r.rtype == rtype)
        .unwrap_or_else(|| panic!("no {name} {rtype} in {zone}: {rows:#?}"))
}

#[test]
fn a_result_document_with_dns_artifacts_gives_the_rows() {
    let doc = document();
    let checks =
        vec![check("routes", "T001", CheckStatus::Pass), check("dns", "N003", CheckStatus::Fail)];
    let page = view_of(Some(&doc), &ledger(), checks);
    assert!(page.observed);
    assert_eq!(page.checks.iter().map(|c| c.code.as_str()).collect::<Vec<_>>(), ["N003"]);

    let servers: Vec<(&str, Side, usize, &str, bool)> = page
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.side, s.zones, s.state.as_str(), s.ok))
        .collect();
    assert_eq!(
        servers,
        [
            (
                "auth",
                Side::Local,
                1,
                "unit not running, named.conf in place, zones readable",
                false
            ),
            (
                "corp",
                Side::Remote,
                1,
                "unreadable: corp.example. (TsigBadSig: the server refused the key)",
                false
            ),
        ]
    );

    let zones: Vec<(&str, &str, usize, usize, usize, &str)> = page
        .zones
        .iter()
        .map(|z| {
            (z.server.as_str(), z.zone.as_str(), z.declared, z.owned, z.foreign, z.state.as_str())
        })
        .collect();
    assert_eq!(
        zones,
        [
            ("auth", "lab.example.", 4, 2, 1, "1 drifted, 1 missing, 1 unowned, 1 undeclared"),
            (
                "corp",
                "corp.example.",
                1,
                1,
                0,
                "unreadable: TsigBadSig: the server refused the key"
            ),
        ]
    );
    let sides: Vec<(Side, bool)> = page.zones.iter().map(|z| (z.side, z.ok)).collect();
    assert_eq!(sides, [(Side::Local, false), (Side::Remote, false)]);
    let lab = &page.zones[0];
    assert_eq!((lab.drifted, lab.missing, lab.unowned, lab.undeclared), (1, 1, 1, 1));
    assert_eq!(lab.unreadable, None);
    let corp = &page.zones[1];
    assert_eq!(corp.unreadable.as_deref(), Some("TsigBadSig: the server refused the key"));

    let rows = &page.records;
    // Local before remote, then by zone, owner and type.
    let order: Vec<(String, &str)> =
        rows.iter().map(|r| (r.relative_owner(), r.rtype.as_str())).collect();
    let order: Vec<(&str, &str)> = order.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    assert_eq!(
        order,
        [
            ("@", "MX"),
            ("nas", "AAAA"),
            ("old", "CNAME"),
            ("printer", "A"),
            ("router", "A"),
            ("www", "A"),
            ("@", "TXT"),
        ]
    );
    let router = row(rows, "lab.example.", "router", "A");
    assert_eq!((router.state, router.ttl, router.owned), (RecordState::InSync, Some(3600), true));
    assert_eq!(router.rdata, ["192.0.2.1"]);
    assert_eq!(router.resource, format!("{API}/DNSZone/lab"));
    assert_eq!(router.short_resource(), "DNSZone/lab");
    assert_eq!(router.owner, "router.lab.example.");
    let www = row(rows, "lab.example.", "www", "A");
    assert_eq!(www.state, RecordState::Drift);
    assert_eq!(www.detail, "the server has rdata 192.0.2.99");
    assert_eq!(www.rdata, ["192.0.2.10"], "the declared data");
    let mx = row(rows, "lab.example.", "@", "MX");
    assert_eq!((mx.state, mx.ttl, mx.owned), (RecordState::Missing, None, false));
    assert_eq!(mx.detail, "failed: REFUSED: the MX target has no address");
    let nas = row(rows, "lab.example.", "nas", "AAAA");
    assert_eq!((nas.state, nas.ttl), (RecordState::Unowned, Some(300)), "data of the candidate");
    assert_eq!(nas.rdata, ["2001:db8::5"]);
    let spf = row(rows, "corp.example.", "@", "TXT");
    assert_eq!(
        (spf.state, spf.side, spf.server.as_str()),
        (RecordState::Unobserved, Side::Remote, "corp")
    );
    assert_eq!(spf.detail, "TsigBadSig: the server refused the key");
    assert_eq!(spf.rdata, ["\"v=spf1 -all\""], "as routerd wrote it");
    let printer = row(rows, "lab.example.", "printer", "A");
    assert_eq!((printer.state, printer.resource.as_str()), (RecordState::Foreign, ""));
    assert!(printer.foreign && !printer.owned, "{printer:?}");
    assert_eq!((printer.ttl, printer.rdata.as_slice()), (Some(3600), &["192.0.2.50".into()][..]));
    assert_eq!(printer.detail, "not in router.yaml, left alone");
    assert!(rows.iter().filter(|r| r.owner != printer.owner).all(|r| !r.foreign));
    let old = row(rows, "lab.example.", "old", "CNAME");
    assert_eq!(
        (old.state, old.resource.as_str()),
        (RecordState::Undeclared, "net.routerd.net/v1alpha1/CNAMERecord/old")
    );
    assert_eq!(old.detail, "deleted by the reconcile");
    assert!(old.owned);

    // The JSON `GET /v1/dns` serves, `routerctl dns records -o json` prints.
    let json = serde_json::to_value(www).expect("serializes");
    assert_eq!(
        json,
        json!({"side": "local", "server": "auth", "zone": "lab.example.",
            "owner": "www.lab.example.", "type": "A", "ttl": 300, "rdata": ["192.0.2.10"],
            "resource": format!("{API}/ARecord/www"), "foreign": false, "owned": true,
            "state": "drift", "detail": "the server has rdata 192.0.2.99"})
    );
    assert_eq!(serde_json::to_value(printer).expect("serializes")["foreign"], true);
}

#[test]
fn a_changed_ttl_shows_the_servers_and_the_declared_one() {
    let mut doc = document_json();
    doc["resources"][3]["observed"][0]["drift"] =
        json!([{"attribute": "ttl", "desired": 300, "observed": 60}]);
    let doc = typed(doc);
    let page = view_of(Some(&doc), &ledger(), Vec::new());
    let www = row(&page.records, "lab.example.", "www", "A");
    assert_eq!((www.state, www.ttl), (RecordState::Drift, Some(300)));
    assert_eq!(www.detail, "the server has ttl 60");
    assert_eq!(www.rdata, ["192.0.2.10"], "as routerd wrote it");
}

#[test]
fn without_the_ledger_owned_rrsets_have_no_data_but_the_same_states() {
    let mut doc = document_json();
    doc["resources"][3]["observed"][0]["drift"] =
        json!([{"attribute": "ttl", "desired": 300, "observed": 60}]);
    let doc = typed(doc);
    let page = view_of(Some(&doc), &[], Vec::new());
    let router = row(&page.records, "lab.example.", "router", "A");
    assert_eq!((router.state, router.ttl, router.rdata.len()), (RecordState::InSync, None, 0));
    let www = row(&page.records, "lab.example.", "www", "A");
    assert_eq!((www.state, www.ttl), (RecordState::Drift, Some(300)), "the drift's desired value");
}

#[test]
fn a_clean_zone_is_ok_and_a_refused_clause_is_what_is_wrong() {
    let mut clean = document_json();
    clean["resources"] = json!([clean["resources"][2].clone()]);
    clean["orphans"] = json!([]);
    clean["adoptionCandidates"] = json!([]);
    clean["operations"] = json!([]);
    let zone = &view_of(Some(&typed(clean.clone())), &[], Vec::new()).zones[0];
    assert_eq!((zone.state.as_str(), zone.ok), ("OK", true));
    // A zone clause named refused it.
    clean["operations"] = json!([{"operation": "create", "kind": "bind.zone",
        "name": "auth/lab.example.", "owner": format!("{API}/DNSZone/lab"), "reason": "missing",
        "result": "failed", "error": "named-checkconf: unknown option"}]);
    let zone = &view_of(Some(&typed(clean)), &[], Vec::new()).zones[0];
    assert_eq!(
        (zone.state.as_str(), zone.ok),
        ("zone refused: named-checkconf: unknown option", false)
    );
}

#[test]
fn a_zone_shows_its_serial_and_its_secondaries_from_the_zone_status() {
    let mut doc = document_json();
    doc["resources"] = json!([doc["resources"][2].clone()]);
    doc["orphans"] = json!([]);
    doc["adoptionCandidates"] = json!([]);
    doc["operations"] = json!([]);
    doc["resources"][0]["status"] = json!({"servers": [
        {"server": "auth", "zone": "lab.example.", "role": "primary", "state": "Configured",
         "serial": 7},
        {"server": "127.0.0.1#5301", "zone": "lab.example.", "role": "secondary",
         "state": "Configured", "serial": 7, "inSync": true},
        {"server": "192.0.2.53#53", "zone": "lab.example.", "role": "secondary",
         "state": "Pending", "serial": 6, "inSync": false},
    ], "recordsCount": 1, "foreignRecords": 0});
    let zone = &view_of(Some(&typed(doc)), &[], Vec::new()).zones[0];
    assert_eq!(zone.serial, Some(7));
    let secondaries: Vec<(&str, Option<u32>, bool)> =
        zone.secondaries.iter().map(|s| (s.address.as_str(), s.serial, s.in_sync)).collect();
    assert_eq!(secondaries, [("127.0.0.1#5301", Some(7), true), ("192.0.2.53#53", Some(6), false)]);
    assert_eq!((zone.state.as_str(), zone.ok), ("secondary 192.0.2.53#53 behind", false));
}

#[test]
fn servers_show_their_unit_and_named_conf_or_their_zones_read() {
    let mut doc = document_json();
    doc["resources"][0]["observed"][1]["drift"] = json!([]);
    let auth = &view_of(Some(&typed(doc.clone())), &[], Vec::new()).servers[0];
    assert_eq!(
        (auth.state.as_str(), auth.ok),
        ("unit running, named.conf in place, zones readable", true)
    );
    doc["resources"][0]["observed"][0]["present"] = json!(false);
    doc["resources"][0]["observed"][1]["drift"] =
        json!([{"attribute": "active", "desired": true, "observed": false}]);
    let auth = &view_of(Some(&typed(doc.clone())), &[], Vec::new()).servers[0];
    assert_eq!(auth.state, "unit not running, named.conf missing, zones readable");
    assert!(!auth.ok);
    // A remote server without zones says so.
    doc["resources"] = json!([doc["resources"][1].clone()]);
    doc["orphans"] = json!([]);
    let corp = &view_of(Some(&typed(doc)), &[], Vec::new()).servers[0];
    assert_eq!((corp.name.as_str(), corp.side, corp.zones), ("corp", Side::Remote, 0));
    assert_eq!((corp.state.as_str(), corp.ok), ("no zones", true));
}

#[test]
fn names_that_are_not_rrset_names_are_left_out() {
    let mut doc = document_json();
    let orphan = |name: &str| {
        json!({"kind": "dns.rrset", "name": name, "owner": "", "reason": "not in the ledger",
            "remediation": "declare it", "cleanup": "keep", "observed": spec(name, 60, &["x"])})
    };
    doc["orphans"] = json!([
        orphan("auth/lab.example./www.lab.example./A"),
        orphan("other:auth/lab.example./www.lab.example./A"),
        orphan("local:auth/lab.example/www.lab.example./A"),
        orphan("local:auth/lab.example./www.other.example./A"),
        orphan("local:auth/lab.example./www.lab.example./"),
        orphan("local:auth/lab.example./www.lab.example."),
        // A label ending like the zone is not inside it.
        orphan("local:auth/lab.example./xlab.example./A"),
    ]);
    let page = view_of(Some(&typed(doc)), &ledger(), Vec::new());
    assert_eq!(page.records.len(), 5, "only the declared RRsets: {:#?}", page.records);
    assert!(page.zones.iter().all(|z| z.foreign == 0 && z.undeclared == 0), "{:#?}", page.zones);
}

#[test]
fn before_the_first_reconcile_only_the_checks_are_known() {
    let page = view_of(None, &[], vec![check("dns", "N001", CheckStatus::Skip)]);
    assert!(!page.observed && page.records.is_empty() && page.zones.is_empty());
    assert_eq!(page.checks.len(), 1);
}

#[test]
fn a_config_without_dns_has_no_rows() {
    let mut doc = document();
    doc.resources.retain(|r| r.id.ends_with("/Interface/lan"));
    doc.orphans.clear();
    let page = view_of(Some(&doc), &[], Vec::new());
    assert!(page.observed && page.servers.is_empty() && page.zones.is_empty());
    assert!(page.records.is_empty());
    assert_eq!(
        serde_json::to_value(&page).expect("serializes"),
        json!({"observed": true, "servers": [], "zones": [], "records": [], "checks": []})
    );
}
