//! Tests of `routerctl dns` ([`super`]): the daemon's DNS view (`GET /v1/dns`) read and printed
//! as tables. The view's derivation is tested with the daemon
//! (`firmware/supervisor/src/dns_view_tests.rs`).

use clap::Parser;
use routerd_model::dns_view::{DnsRecordRow, DnsView, RecordState, Side};
use routerd_model::status::{CheckStatus, DoctorCheck};
use serde_json::{Value, json};

use super::*;
use crate::cli::{Cli, Command, DnsCommand};
use crate::tables::{dns_records_table, dns_status_table, dns_zones_table, state_text};

const API: &str = "net.routerd.net/v1alpha1";

/// An RRset row as `GET /v1/dns` serves it.
fn record(
    (side, server, zone): (&str, &str, &str),
    (owner, rtype): (&str, &str),
    (ttl, rdata): (Option<u64>, &[&str]),
    resource: &str,
    state: &str,
    detail: &str,
) -> Value {
    json!({"side": side, "server": server, "zone": zone, "owner": owner, "type": rtype,
        "ttl": ttl, "rdata": rdata,
        "resource": if resource.is_empty() { String::new() } else { format!("{API}/{resource}") },
        "foreign": state == "foreign", "owned": !matches!(state, "foreign" | "missing" | "unowned"),
        "state": state, "detail": detail})
}

/// What `GET /v1/dns` answers for a local server `auth` (zone `lab.example.`) and a remote one
/// `corp` (zone `corp.example.`, unreadable), RRsets in every state.
fn answer() -> Value {
    let lab = ("local", "auth", "lab.example.");
    let corp = ("remote", "corp", "corp.example.");
    let unreachable = "ServerUnreachable: connection refused";
    json!({
        "observed": true,
        "servers": [
            {"name": "auth", "side": "local", "zones": 1,
             "state": "unit running, named.conf in place, zones readable", "ok": true},
            {"name": "corp", "side": "remote", "zones": 1,
             "state": format!("unreadable: corp.example. ({unreachable})"), "ok": false},
        ],
        "zones": [
            {"side": "local", "server": "auth", "zone": "lab.example.", "declared": 4,
             "owned": 2, "foreign": 1, "drifted": 1, "missing": 1, "unowned": 1,
             "undeclared": 1, "unreadable": null,
             "state": "1 drifted, 1 missing, 1 unowned, 1 undeclared", "ok": false},
            {"side": "remote", "server": "corp", "zone": "corp.example.", "declared": 1,
             "owned": 1, "foreign": 0, "drifted": 0, "missing": 0, "unowned": 0,
             "undeclared": 0, "unreadable": unreachable,
             "state": format!("unreadable: {unreachable}"), "ok": false},
        ],
        "records": [
            record(lab, ("lab.example.", "MX"), (None, &[]), "MXRecord/mail", "missing",
                "failed: REFUSED: the MX target mail.lab.example. has no address"),
            record(lab, ("nas.lab.example.", "AAAA"), (Some(300), &["2001:db8::5"]),
                "AAAARecord/nas", "unowned", ""),
            record(lab, ("old.lab.example.", "CNAME"), (Some(600), &["www.lab.example."]),
                "CNAMERecord/old", "undeclared", "deleted by the reconcile"),
            record(lab, ("printer.lab.example.", "A"), (Some(3600), &["192.0.2.50"]), "",
                "foreign", "not in router.yaml, left alone"),
            record(lab, ("router.lab.example.", "A"), (Some(3600), &["192.0.2.1"]),
                "DNSZone/lab", "in-sync", ""),
            record(lab, ("www.lab.example.", "A"), (Some(300), &["192.0.2.10", "192.0.2.11"]),
                "ARecord/www", "drift", "the server has ttl 60"),
            record(corp, ("corp.example.", "TXT"), (Some(300), &["\"v=spf1 -all\""]),
                "TXTRecord/spf", "unobserved", unreachable),
        ],
        "checks": [
            {"area": "dns", "code": "N001", "name": "zones loaded", "status": "pass",
             "detail": "", "remedy": ""},
        ],
    })
}

/// [`answer`] as routerctl reads it.
fn view() -> DnsView {
    serde_json::from_value(answer()).expect("the DNS view")
}

fn find<'a>(dns: &'a DnsView, owner: &str, rtype: &str) -> &'a DnsRecordRow {
    dns.records
        .iter()
        .find(|r| r.owner == owner && r.rtype == rtype)
        .unwrap_or_else(|| panic!("no {owner} {rtype}"))
}

/// Asserts that `text` fits `width` columns and cuts nothing with `…`.
fn assert_fits(text: &str, width: usize) {
    for line in text.lines() {
        assert!(line.chars().count() <= width, "over {width} columns: {line:?}\n{text}");
        assert!(!line.contains('…'), "cut: {line:?}\n{text}");
    }
}

#[test]
fn the_daemons_view_reads_with_its_words() {
    let dns = view();
    assert!(dns.observed);
    assert_eq!(dns.records.len(), 7);
    let www = find(&dns, "www.lab.example.", "A");
    assert_eq!((www.side, www.state, www.ttl), (Side::Local, RecordState::Drift, Some(300)));
    assert_eq!(state_text(www), "drift: the server has ttl 60");
    assert_eq!(state_text(find(&dns, "router.lab.example.", "A")), "in sync");
    let spf = find(&dns, "corp.example.", "TXT");
    assert_eq!((spf.side, spf.relative_owner().as_str()), (Side::Remote, "@"));
    assert_eq!(state_text(spf), "unobserved: ServerUnreachable: connection refused");
    let old = find(&dns, "old.lab.example.", "CNAME");
    assert_eq!(state_text(old), "undeclared: deleted by the reconcile");
    assert!(find(&dns, "printer.lab.example.", "A").foreign);
    assert_eq!(dns.checks[0].status, CheckStatus::Pass);
    // What `-o json` prints is what the daemon sent.
    let records = serde_json::to_value(&dns.records).expect("serializes");
    assert_eq!(records, answer()["records"]);
}

#[test]
fn the_tables_fit_80_columns_and_list_every_row() {
    let dns = view();
    let zones = dns_zones_table(&dns.zones, 80);
    assert_fits(&zones, 80);
    let lines: Vec<&str> = zones.lines().collect();
    assert_eq!(lines[0], "SERVER ZONE          SIDE   SERIAL OWNED FOREIGN STATE", "{zones}");
    assert_eq!(
        lines[1],
        "auth   lab.example.  local  -      2     1       1 drifted, 1 missing, 1"
    );
    assert_eq!(lines[2], format!("{:49}unowned, 1 undeclared", ""), "{zones}");
    assert!(lines[3].starts_with("corp   corp.example. remote -      1     0       unreadable:"));

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
    // Local before remote, as the daemon ordered them.
    let names: Vec<&str> = lines
        .iter()
        .filter(|l| !l.starts_with(' ') && !l.starts_with("SERVER"))
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert_eq!(names, ["@", "nas", "old", "printer", "router", "www", "@"], "{records}");

    assert_eq!(dns_zones_table(&[], 80), "no DNS zones in the applied config\n");
    assert_eq!(dns_records_table(&[], 80), "no RRsets\n");
}

#[test]
fn long_names_and_data_wrap_instead_of_being_cut() {
    let long = format!("{}.lab.example.", "service-".repeat(6));
    let text = format!("\"{}\"", "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOC ".repeat(4));
    let row = record(
        ("local", "auth", "lab.example."),
        (&long, "TXT"),
        (Some(300), &[&text]),
        "TXTRecord/long",
        "in-sync",
        "",
    );
    let rows: Vec<DnsRecordRow> = serde_json::from_value(json!([row])).expect("a row");
    let table = dns_records_table(&rows, 80);
    assert_fits(&table, 80);
    let flat: String = table.split_whitespace().collect();
    assert!(flat.contains(&long.trim_end_matches(".lab.example.").replace(' ', "")), "{table}");
    assert!(flat.contains(&text.replace(' ', "")), "the data is whole: {table}");
}

#[test]
fn the_status_lists_the_servers_then_the_dns_checks() {
    let dns = view();
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
