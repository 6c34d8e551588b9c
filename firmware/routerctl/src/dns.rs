//! `dns zones|records|status`: the DNS controller's zones, RRsets and servers (ADR 0012) as the
//! daemon derives them from its last reconcile, the ledger and the `dns` doctor checks
//! (`GET /v1/dns`, [`DnsView`]; the web UI's DNS page shows the same rows).
//!
//! The table output is in [`crate::tables`]; `-o json` and `-o yaml` print the rows (`zones`,
//! `records`) or `{servers, checks}` (`status`).

use hyper::Method;
use routerd_model::dns_view::DnsView;
use routerd_model::status::CheckStatus;
use serde_json::json;

use crate::cli::Cli;
use crate::client::call;
use crate::tables::{dns_records_table, dns_status_table, dns_zones_table};
use crate::{Failure, console, print_doc};

/// `routerctl dns zones`.
pub(crate) async fn zones(cli: &Cli) -> Result<(), Failure> {
    let dns = read(cli).await?;
    if cli.structured() {
        print_doc(cli.output, &json_text(&dns.zones)?)
    } else {
        print!("{}", dns_zones_table(&dns.zones, console::width()));
        Ok(())
    }
}

/// `routerctl dns records [--zone Z]`.
pub(crate) async fn records(cli: &Cli, zone: Option<&str>) -> Result<(), Failure> {
    let mut dns = read(cli).await?;
    if let Some(zone) = zone {
        let apex = absolute(zone);
        dns.records.retain(|r| r.zone == apex);
    }
    if cli.structured() {
        print_doc(cli.output, &json_text(&dns.records)?)
    } else {
        print!("{}", dns_records_table(&dns.records, console::width()));
        Ok(())
    }
}

/// `routerctl dns status`: the servers, then the `dns` doctor checks; fails with
/// [`Failure::ChecksFailed`] when one fails, as `routerctl doctor` does.
pub(crate) async fn status(cli: &Cli) -> Result<(), Failure> {
    let dns = read(cli).await?;
    if cli.structured() {
        let doc = json!({"servers": to_value(&dns.servers)?, "checks": to_value(&dns.checks)?});
        print_doc(cli.output, &doc.to_string())?;
    } else {
        print!("{}", dns_status_table(&dns.servers, &dns.checks, console::width()));
    }
    if dns.checks.iter().any(|c| c.status == CheckStatus::Fail) {
        return Err(Failure::ChecksFailed);
    }
    Ok(())
}

/// The daemon's DNS view; a failure before its first reconcile (nothing is known yet).
async fn read(cli: &Cli) -> Result<DnsView, Failure> {
    let body = call(&cli.socket, Method::GET, "/v1/dns", None).await?;
    let dns: DnsView = serde_json::from_str(&body)
        .map_err(|e| Failure::Answered(format!("unexpected DNS view: {e}")))?;
    if !dns.observed {
        return Err(Failure::Answered("no reconcile has finished yet".into()));
    }
    Ok(dns)
}

/// `rows` as JSON.
fn to_value<T: serde::Serialize>(rows: &T) -> Result<serde_json::Value, Failure> {
    serde_json::to_value(rows).map_err(|e| Failure::Answered(format!("writing JSON: {e}")))
}

/// `rows` as JSON text.
fn json_text<T: serde::Serialize>(rows: &T) -> Result<String, Failure> {
    Ok(to_value(rows)?.to_string())
}

/// `zone` as an absolute, lowercased apex: `Lab.Example` → `lab.example.`.
pub(crate) fn absolute(zone: &str) -> String {
    let zone = zone.trim().to_ascii_lowercase();
    if zone.ends_with('.') { zone } else { format!("{zone}.") }
}

#[cfg(test)]
#[path = "dns_tests.rs"]
mod tests;
