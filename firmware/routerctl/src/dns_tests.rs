//! Tests of `routerctl dns` ([`super`]): the view of a Result document and its tables.

use clap::Parser;
use routerd_model::status::{CheckStatus, DoctorCheck};
use serde_json::{Value, json};

use super::*;
use crate::cli::{Cli, Command, DnsCommand};
use crate::tables::{dns_records_table, dns_status_table, dns_zones_table};

const API: &str = "net.routerd.net/v1alpha1";

/// A resource of `kind` named `name` declaring `artifacts` (`(kind, name)`), observed as
/// `observed` (`(kind, name, present, owned, drift)`).
fn resource(kind: &str, name: &str, artifacts: &[(&str, &str)], observed: &[Value]) -> Value {
    let artifacts: Vec<Value> = artifacts
        .iter()
        .map(|(k, n)| json!({"kind": k, "name": n, "action": "ensure", "applyWith": "dns"}))
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

const ROUTER: &str = "local:auth/lab.example./router.lab.example./A";
const WWW: &str = "local:auth/lab.example./www.lab.example./A";
const MX: &str = "local:auth/lab.example./lab.example./MX";
const NAS: &str = "local:auth/lab.example./nas.lab.example./AAAA";
const SPF: &str = "remote:corp/corp.example./corp.example./TXT";
const PRINTER: &str = "local:auth/lab.example./printer.lab.example./A";
const OLD: &str = "local:auth/lab.example./old.lab.example./CNAME";

/// A reconcile's Result document with a local server `auth` (zone `lab.example.`) and a
/// remote one `corp` (zone `corp.example.`, unreadable), RRsets in every state.
fn document() -> Value {
    let rrset = "dns.rrset";
    json!({
        "generation": 3, "timestamp": "2026-12-01T10:00:00Z", "phase": "Drifted",
        "mode": "reconcile",
        "resources": [
            resource("DNSServer", "auth",
                &[("bind.config", "auth/options"), ("systemd.service", "routerd-named-auth.service")],
                &[seen("bind.config", "auth/options", true, true, json!([])),
                  seen("systemd.service", "routerd-named-auth.service", true, true, json!([]))]),
            resource("DNSExternalServer", "corp",
                &[("file", "/etc/routerd/dns/endpoints.conf#remote:corp")], &[]),
            resource("DNSZone", "lab", &[("bind.zone", "auth/lab.example."), (rrset, ROUTER)],
                &[seen("bind.zone", "auth/lab.example.", true, true, json!([])),
                  seen(rrset, ROUTER, true, true, json!([]))]),
            resource("ARecord", "www", &[(rrset, WWW)],
                &[seen(rrset, WWW, true, true,
                    json!([{"attribute": "ttl", "desired": 300, "observed": 60}]))]),
            resource("MXRecord", "mail", &[(rrset, MX)],
                &[seen(rrset, MX, false, false, json!([]))]),
            resource("AAAARecord", "nas", &[(rrset, NAS)],
                &[seen(rrset, NAS, true, false, json!([]))]),
            resource("TXTRecord", "spf", &[(rrset, SPF)],
                &[seen(rrset, SPF, true, true, json!([{"attribute": "unobserved",
                    "desired": null, "observed": "ServerUnreachable: connection refused"}]))]),
        ],
        "orphans": [
            {"kind": rrset, "name": PRINTER, "owner": "", "reason": "not in the ledger",
             "remediation": "declare it", "cleanup": "keep",
             "observed": spec(PRINTER, 3600, &["192.0.2.50"])},
            {"kind": rrset, "name": OLD, "owner": format!("{API}/CNAMERecord/old"),
             "reason": "owned, declared no more", "remediation": "deleted", "cleanup": "delete",
             "observed": spec(OLD, 600, &["www.lab.example."])},
        ],
        "adoptionCandidates": [
            {"kind": rrset, "name": NAS, "owner": format!("{API}/AAAARecord/nas"),
             "reason": "present", "adoptable": true, "desired": spec(NAS, 300, &["2001:db8::5"]),
             "observed": spec(NAS, 300, &["2001:db8::5"])},
        ],
        "adoptedArtifacts": [],
        "operations": [
            {"operation": "create", "kind": rrset, "name": MX, "owner": format!("{API}/MXRecord/mail"),
             "reason": "missing", "result": "failed",
             "error": "REFUSED: the MX target mail.lab.example. has no address"},
        ],
        "warnings": [],
    })
}

/// The ledger as `GET /v1/ledger` answers: what routerd wrote.
fn ledger() -> Value {
    let entry = |name: &str, owner: &str, ttl, rdata: &[&str]| {
        json!({"kind": "dns.rrset", "name": name, "owner": format!("{API}/{owner}"),
            "origin": "created", "state": "owned", "generation": 2, "recordedAt": 1_795_229_100,
            "attributes": spec(name, ttl, rdata)})
    };
    json!([
        entry(ROUTER, "DNSZone/lab", 3600, &["192.0.2.1"]),
        entry(WWW, "ARecord/www", 300, &["192.0.2.10", "192.0.2.11"]),
        entry(SPF, "TXTRecord/spf", 300, &["\"v=spf1 -all\""]),
        entry(OLD, "CNAMERecord/old", 600, &["www.lab.example."]),
    ])
}

fn record<'a>(dns: &'a Dns, name: &str) -> &'a Record {
    let parsed = RRsetName::parse(name).expect("a valid name");
    dns.records.iter().find(|r| r.name == parsed).unwrap_or_else(|| panic!("no {name}"))
}

/// Asserts that `text` fits `width` columns and cuts nothing with `…`.
fn assert_fits(text: &str, width: usize) {
    for line in text.lines() {
        assert!(line.chars().count() <= width, "over {width} columns: {line:?}\n{text}");
        assert!(!line.contains('…'), "cut: {line:?}\n{text}");
    }
}

#[test]
fn rrset_names_parse_as_adr_0012_writes_them() {
    let www = RRsetName::parse(WWW).expect("local");
    assert_eq!(
        (www.side, www.server.as_str(), www.zone.as_str(), www.owner.as_str(), www.rtype.as_str()),
        (Side::Local, "auth", "lab.example.", "www.lab.example.", "A")
    );
    assert_eq!(www.relative_owner(), "www");
    let apex = RRsetName::parse(SPF).expect("remote");
    assert_eq!((apex.side, apex.relative_owner().as_str()), (Side::Remote, "@"));
    let deep = RRsetName::parse("local:a/example./_ldap._tcp.dc.example./SRV").expect("valid");
    assert_eq!(deep.relative_owner(), "_ldap._tcp.dc");
    let root = RRsetName::parse("local:a/./example./NS").expect("the root zone");
    assert_eq!(root.relative_owner(), "example");
    for bad in [
        "auth/lab.example./www.lab.example./A",
        "other:auth/lab.example./www.lab.example./A",
        "local:auth/lab.example/www.lab.example./A",
        "local:auth/lab.example./www.other.example./A",
        "local:auth/lab.example./www.lab.example./",
        "local:auth/lab.example./www.lab.example.",
        "local:/lab.example./www.lab.example./A",
        // A label ending like the zone is not inside it.
        "local:auth/lab.example./xlab.example./A",
    ] {
        assert_eq!(RRsetName::parse(bad), None, "{bad}");
    }
}

#[test]
fn each_rrset_has_its_data_resource_and_state() {
    let dns = read(&document(), Some(&ledger()));
    assert_eq!(dns.records.len(), 7, "{:#?}", dns.records);
    let router = record(&dns, ROUTER);
    assert_eq!(
        (router.state, router.ttl, router.rdata.as_slice()),
        (RecordState::InSync, Some(3600), &["192.0.2.1".to_string()][..])
    );
    assert_eq!(router.resource, format!("{API}/DNSZone/lab"));
    assert_eq!(router.state_text(), "in sync");
    let www = record(&dns, WWW);
    assert_eq!((www.state, www.ttl), (RecordState::Drift, Some(300)));
    assert_eq!(www.state_text(), "drift: the server has ttl 60");
    assert_eq!(www.rdata, ["192.0.2.10", "192.0.2.11"]);
    let mx = record(&dns, MX);
    assert_eq!((mx.state, mx.ttl, mx.owned), (RecordState::Missing, None, false));
    assert!(mx.detail.starts_with("failed: REFUSED: the MX target"), "{}", mx.detail);
    let nas = record(&dns, NAS);
    assert_eq!((nas.state, nas.ttl), (RecordState::Unowned, Some(300)), "data of the candidate");
    let spf = record(&dns, SPF);
    assert_eq!(spf.state, RecordState::Unobserved);
    assert_eq!(spf.state_text(), "unobserved: ServerUnreachable: connection refused");
    assert_eq!(spf.rdata, ["\"v=spf1 -all\""], "as routerd wrote it");
    let printer = record(&dns, PRINTER);
    assert_eq!((printer.state, printer.resource.as_str()), (RecordState::Foreign, ""));
    assert_eq!((printer.ttl, printer.rdata.as_slice()), (Some(3600), &["192.0.2.50".into()][..]));
    let old = record(&dns, OLD);
    assert_eq!(old.state, RecordState::Undeclared);
    assert_eq!(old.state_text(), "undeclared: deleted by the reconcile");
    // Local before remote, then by zone, owner and type.
    let order: Vec<String> = dns.records.iter().map(|r| r.name.relative_owner()).collect();
    assert_eq!(order, ["@", "nas", "old", "printer", "router", "www", "@"]);
    let json = www.to_json();
    assert_eq!(json["state"], "drift");
    assert_eq!(json["zone"], "lab.example.");
    assert_eq!(json["foreign"], false);
    assert_eq!(printer.to_json()["foreign"], true);
}

#[test]
fn without_the_ledger_owned_rrsets_have_no_data_but_the_same_states() {
    let dns = read(&document(), None);
    let router = record(&dns, ROUTER);
    assert_eq!((router.state, router.ttl, router.rdata.len()), (RecordState::InSync, None, 0));
    assert_eq!(record(&dns, WWW).ttl, Some(300), "the drift's desired value");
}

#[test]
fn zones_count_owned_and_foreign_rrsets_and_say_what_is_wrong() {
    let dns = read(&document(), Some(&ledger()));
    let zones: Vec<(&str, &str, Side)> =
        dns.zones.iter().map(|z| (z.server.as_str(), z.zone.as_str(), z.side)).collect();
    assert_eq!(
        zones,
        [("auth", "lab.example.", Side::Local), ("corp", "corp.example.", Side::Remote)]
    );
    let lab = &dns.zones[0];
    assert_eq!((lab.declared, lab.owned, lab.foreign), (4, 2, 1));
    assert_eq!(lab.state(), "1 drifted, 1 missing, 1 unowned, 1 undeclared");
    let corp = &dns.zones[1];
    assert_eq!(corp.state(), "unreadable: ServerUnreachable: connection refused");
    assert_eq!(corp.to_json()["unreadable"], "ServerUnreachable: connection refused");
    let mut clean = document();
    clean["resources"] = json!([clean["resources"][2].clone()]);
    clean["orphans"] = json!([]);
    assert_eq!(read(&clean, None).zones[0].state(), "OK");
    // A zone clause named refused it.
    clean["operations"] = json!([{"kind": "bind.zone", "name": "auth/lab.example.",
        "result": "failed", "error": "named-checkconf: unknown option"}]);
    assert_eq!(
        read(&clean, None).zones[0].state(),
        "zone refused: named-checkconf: unknown option"
    );
}

#[test]
fn servers_show_their_unit_and_named_conf_or_their_zones_read() {
    let dns = read(&document(), None);
    let rows: Vec<(&str, Side, usize, &str, bool)> = dns
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.side, s.zones, s.state.as_str(), s.ok))
        .collect();
    assert_eq!(
        rows,
        [
            ("auth", Side::Local, 1, "unit running, named.conf in place, zones readable", true),
            (
                "corp",
                Side::Remote,
                1,
                "unreadable: corp.example. (ServerUnreachable: connection refused)",
                false
            ),
        ]
    );
    let mut stopped = document();
    stopped["resources"][0]["observed"][1]["drift"] =
        json!([{"attribute": "active", "desired": true, "observed": false}]);
    stopped["resources"][0]["observed"][0]["present"] = json!(false);
    let auth = &read(&stopped, None).servers[0];
    assert_eq!(auth.state, "unit not running, named.conf missing, zones readable");
    assert!(!auth.ok);
}

#[test]
fn the_tables_fit_80_columns_and_list_every_row() {
    let dns = read(&document(), Some(&ledger()));
    let zones = dns_zones_table(&dns.zones, 80);
    assert_fits(&zones, 80);
    let lines: Vec<&str> = zones.lines().collect();
    assert_eq!(lines[0], "SERVER ZONE          SIDE   OWNED FOREIGN STATE", "{zones}");
    assert_eq!(
        lines[1],
        "auth   lab.example.  local  2     1       1 drifted, 1 missing, 1 unowned, 1"
    );
    assert_eq!(lines[2], format!("{:42}undeclared", ""), "{zones}");
    assert!(lines[3].starts_with("corp   corp.example. remote 1     0       unreadable:"));

    let records = dns_records_table(&dns.records, 80);
    assert_fits(&records, 80);
    let lines: Vec<&str> = records.lines().collect();
    assert_eq!(lines[0], "SERVER ZONE          NAME    TYPE  TTL  STATE", "{records}");
    let www = lines.iter().position(|l| l.contains(" www ")).expect("www");
    assert_eq!(lines[www], "auth   lab.example.  www     A     300  drift: the server has ttl 60");
    assert_eq!(
        lines[www + 1..www + 4],
        ["    192.0.2.10", "    192.0.2.11", "    resource ARecord/www"]
    );
    let printer = lines.iter().position(|l| l.contains(" printer ")).expect("printer");
    assert!(lines[printer].ends_with("foreign: not in router.yaml, left alone"), "{records}");
    assert_eq!(lines[printer + 1..printer + 3], ["    192.0.2.50", "    foreign"]);
    let mx = lines.iter().position(|l| l.contains(" MX ")).expect("mx");
    assert!(lines[mx].contains(" -    missing: failed: REFUSED:"), "no TTL known: {records}");
    // A long reason wraps under the state column.
    assert!(lines[mx + 1].starts_with(&" ".repeat(40)), "{records}");

    assert_eq!(dns_zones_table(&[], 80), "no DNS zones in the applied config\n");
    assert_eq!(dns_records_table(&[], 80), "no RRsets\n");
}

#[test]
fn long_names_and_data_wrap_instead_of_being_cut() {
    let long = format!("{}.lab.example.", "service-".repeat(6));
    let name = format!("local:auth/lab.example./{long}/TXT");
    let mut doc = document();
    doc["resources"] = json!([resource(
        "TXTRecord",
        "long",
        &[("dns.rrset", &name)],
        &[seen("dns.rrset", &name, true, true, json!([]))]
    )]);
    doc["orphans"] = json!([]);
    let text = format!("\"{}\"", "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOC ".repeat(4));
    let ledger =
        json!([{"kind": "dns.rrset", "name": name, "attributes": spec(&name, 300, &[&text])}]);
    let table = dns_records_table(&read(&doc, Some(&ledger)).records, 80);
    assert_fits(&table, 80);
    let flat: String = table.split_whitespace().collect();
    assert!(flat.contains(&long.trim_end_matches(".lab.example.").replace(' ', "")), "{table}");
    assert!(flat.contains(&text.replace(' ', "")), "the data is whole: {table}");
}

#[test]
fn the_status_lists_the_servers_then_the_dns_checks() {
    let dns = read(&document(), None);
    let check = |code: &str, status| DoctorCheck {
        area: "dns".into(),
        code: code.into(),
        name: "zones loaded".into(),
        status,
        detail: "corp/corp.example. (ServerUnreachable: connection refused)".into(),
        remedy: "routerctl dns status; journalctl -u routerd-named-<server>".into(),
    };
    let checks = [check("N001", CheckStatus::Pass), check("N003", CheckStatus::Fail)];
    let table = dns_status_table(&dns.servers, &checks, 80);
    assert_fits(&table, 80);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], "SERVER SIDE   ZONES STATE");
    assert_eq!(lines[1], "auth   local  1     unit running, named.conf in place, zones readable");
    assert!(lines[2].starts_with("corp   remote 1     unreadable: corp.example."), "{table}");
    assert!(table.contains("\nfail  N003  dns        zones loaded\n"), "{table}");
    assert!(table.ends_with("1 pass, 0 warn, 1 fail, 0 skip\n"), "{table}");
    let empty = dns_status_table(&[], &[], 80);
    assert_eq!(empty, "no DNS servers in the applied config\n\nno dns checks\n");
}

#[test]
fn dns_subcommands_parse_and_a_zone_is_matched_absolute_and_lowercased() {
    let parse = |args: &[&str]| {
        Cli::try_parse_from(std::iter::once("routerctl").chain(args.iter().copied()))
            .map(|cli| cli.command)
    };
    assert!(matches!(parse(&["dns", "zones"]), Ok(Command::Dns { what: DnsCommand::Zones })));
    assert!(matches!(parse(&["dns", "status"]), Ok(Command::Dns { what: DnsCommand::Status })));
    match parse(&["-o", "json", "dns", "records", "--zone", "Lab.Example"]) {
        Ok(Command::Dns { what: DnsCommand::Records { zone: Some(zone) } }) => {
            assert_eq!(absolute(&zone), "lab.example.");
        }
        other => panic!("{other:?}"),
    }
    assert!(parse(&["dns"]).is_err(), "a subcommand is required");
    assert_eq!(absolute("corp.example."), "corp.example.");
}
