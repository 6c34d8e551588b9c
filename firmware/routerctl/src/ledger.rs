//! `ledger` and `adopt`: what routerd owns, and taking over existing artifacts the config
//! declares.

use hyper::Method;

use crate::cli::Cli;
use crate::client::{call, parse};
use crate::tables::ledger_table;
use crate::{Failure, console, print_doc, print_line};

/// `routerctl ledger`: the ownership ledger.
pub(crate) async fn ledger(cli: &Cli) -> Result<(), Failure> {
    let body = call(&cli.socket, Method::GET, "/v1/ledger", None).await?;
    if cli.structured() {
        print_doc(cli.output, &body)?;
    } else {
        print!("{}", ledger_table(&parse(&body)?, console::width()));
    }
    Ok(())
}

/// `routerctl adopt`: lists the adoption candidates, or with `apply` records the matching ones
/// (only `artifacts` when given) as owned.
pub(crate) async fn adopt(cli: &Cli, apply: bool, artifacts: &[String]) -> Result<(), Failure> {
    let structured = cli.structured();
    let path = if structured { "/v1/adopt" } else { "/v1/adopt?format=table" };
    let only = (!artifacts.is_empty()).then_some(artifacts);
    let request = serde_json::json!({ "apply": apply, "artifacts": only });
    let body = call(&cli.socket, Method::POST, path, Some(request)).await?;
    if structured {
        print_doc(cli.output, &body)?
    } else {
        print_line(body)
    }
    Ok(())
}
