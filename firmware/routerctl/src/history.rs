//! `history`: the applied generations, one generation's YAML, the diff of two.

use hyper::Method;

use crate::cli::Cli;
use crate::client::{call, parse};
use crate::tables::history_table;
use crate::{Failure, console, print_doc};

/// `routerctl history`: the generations, the running one marked.
pub(crate) async fn list(cli: &Cli) -> Result<(), Failure> {
    let body = call(&cli.socket, Method::GET, "/v1/generations", None).await?;
    if cli.structured() {
        print_doc(cli.output, &body)?;
    } else {
        let status = parse(&call(&cli.socket, Method::GET, "/v1/status", None).await?)?;
        let running = status["generation"].as_u64();
        print!("{}", history_table(&parse(&body)?, running, console::width()));
    }
    Ok(())
}

/// `routerctl history show N`: generation `n`'s YAML as it was applied.
pub(crate) async fn show(cli: &Cli, n: u64) -> Result<(), Failure> {
    let body = call(&cli.socket, Method::GET, &format!("/v1/generations/{n}"), None).await?;
    if cli.structured() {
        print_doc(cli.output, &body)?;
    } else {
        let v: serde_json::Value = parse(&body)?;
        print!("{}", v["yaml"].as_str().unwrap_or_default());
    }
    Ok(())
}

/// `routerctl history diff FROM TO`: the unified diff of two generations' YAML.
pub(crate) async fn diff(cli: &Cli, from: u64, to: u64) -> Result<(), Failure> {
    let path = format!("/v1/generations/{from}/diff/{to}");
    let body = call(&cli.socket, Method::GET, &path, None).await?;
    if cli.structured() {
        print_doc(cli.output, &body)?;
    } else {
        print!("{}", parse(&body)?["diff"].as_str().unwrap_or_default());
    }
    Ok(())
}
