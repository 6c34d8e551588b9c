//! Tests of the DNS page's rows ([`super`]) from a Result document with DNS artifacts.

use routerd_engine::ResultDocument;
use routerd_webui::{CheckView, DnsRecordRow};
use serde_json::{Value, json};

use super::view;

const API: &str = "net.routerd.net/v1alpha1";
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

/// A reconcile's Result document (as `GET /v1/result` serves it) with a local server `auth`
/// (zone `lab.example.`) and a remote one `corp` (zone `corp.example.`, unreadable), RRsets in
/// every state.
fn document() -> ResultDocument {
    // Reading the document back needs the DNS families (`applyWith: dns`) registered.
    crate::controllers::registry().expect("the controller crates register");
    let rrset = |name| ("dns.rrset", name, "dns");
    let doc = json!({
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
    });
    serde_json::from_value(doc).expect("a Result document")
}

/// The ledger's `dns.rrset` entries: `(kind, name, attributes JSON)`.
fn ledger() -> Vec<(&'static str, &'static str, String)> {
    let entry = |name, ttl, rdata: &[&str]| ("dns.rrset", name, spec(name, ttl, rdata).to_string());
    vec![
        entry(ROUTER, 3600, &["192.0.2.1"]),
        entry(WWW, 300, &["192.0.2.10"]),
        entry(SPF, 300, &["\"v=spf1 -all\""]),
        ("linux.link", "lan0", "{}".into()),
    ]
}

fn check(area: &str, code: &str, status: &str) -> CheckView {
    CheckView {
        area: area.into(),
        code: code.into(),
        name: format!("check {code}"),
        status: status.into(),
        detail: String::new(),
        remedy: String::new(),
        action: None,
    }
}

fn row<'a>(rows: &'a [DnsRecordRow], zone: &str, name: &str, rtype: &str) -> &'a DnsRecordRow {
    rows.iter()
        .find(|r| r.zone == zone && r.name == name && r.rtype == rtype)
        .unwrap_or_else(|| panic!("no {name} {rtype} in {zone}: {rows:#?}"))
}

#[test]
fn a_result_document_with_dns_artifacts_gives_the_pages_rows() {
    let doc = document();
    let ledger = ledger();
    let checks = vec![check("routes", "T001", "pass"), check("dns", "N003", "fail")];
    let page = view(Some(&doc), ledger.iter().map(|(k, n, j)| (*k, *n, j.as_str())), checks);
    assert!(page.observed);
    assert_eq!(page.checks.iter().map(|c| c.code.as_str()).collect::<Vec<_>>(), ["N003"]);

    let servers: Vec<(&str, &str, usize, &str, bool)> = page
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.side.as_str(), s.zones, s.state.as_str(), s.ok))
        .collect();
    assert_eq!(
        servers,
        [
            ("auth", "local", 1, "unit not running, named.conf in place, zones readable", false),
            (
                "corp",
                "remote",
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

    let rows = &page.records;
    let order: Vec<(&str, &str)> =
        rows.iter().map(|r| (r.name.as_str(), r.rtype.as_str())).collect();
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
    assert_eq!((router.status.as_str(), router.ttl), ("in-sync", Some(3600)));
    assert_eq!(
        (router.data.as_slice(), router.resource.as_str()),
        (&["192.0.2.1".into()][..], "DNSZone/lab")
    );
    let www = row(rows, "lab.example.", "www", "A");
    assert_eq!(www.status, "drift");
    assert_eq!(www.detail, "the server has rdata 192.0.2.99");
    assert_eq!(www.data, ["192.0.2.10"], "the declared data");
    let mx = row(rows, "lab.example.", "@", "MX");
    assert_eq!((mx.status.as_str(), mx.ttl), ("missing", None));
    assert_eq!(mx.detail, "failed: REFUSED: the MX target has no address");
    let nas = row(rows, "lab.example.", "nas", "AAAA");
    assert_eq!(
        (nas.status.as_str(), nas.data.as_slice()),
        ("unowned", &["2001:db8::5".into()][..])
    );
    let spf = row(rows, "corp.example.", "@", "TXT");
    assert_eq!(
        (spf.status.as_str(), spf.side.as_str(), spf.server.as_str()),
        ("unobserved", "remote", "corp")
    );
    assert_eq!(spf.detail, "TsigBadSig: the server refused the key");
    let printer = row(rows, "lab.example.", "printer", "A");
    assert!(printer.foreign() && printer.resource.is_empty(), "{printer:?}");
    assert_eq!((printer.ttl, printer.data.as_slice()), (Some(3600), &["192.0.2.50".into()][..]));
    let old = row(rows, "lab.example.", "old", "CNAME");
    assert_eq!((old.status.as_str(), old.resource.as_str()), ("undeclared", "CNAMERecord/old"));
    assert_eq!(old.detail, "deleted by the reconcile");
}

#[test]
fn before_the_first_reconcile_only_the_checks_are_known() {
    let page = view(None, [], vec![check("dns", "N001", "skip")]);
    assert!(!page.observed && page.records.is_empty() && page.zones.is_empty());
    assert_eq!(page.checks.len(), 1);
}

#[test]
fn a_config_without_dns_has_no_rows() {
    let mut doc = document();
    doc.resources.retain(|r| r.id.ends_with("/Interface/lan"));
    doc.orphans.clear();
    let page = view(Some(&doc), [], Vec::new());
    assert!(page.observed && page.servers.is_empty() && page.zones.is_empty());
    assert!(page.records.is_empty());
}
