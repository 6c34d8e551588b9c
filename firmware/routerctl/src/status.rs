//! `status`, `resources`, `doctor`: what the daemon is doing, how each resource stands and what
//! its checks find.

use hyper::Method;
use routerd_model::status::{CheckStatus, DaemonStatus, DoctorCheck, ResourceStatus};

use crate::cli::{Cli, Output};
use crate::client::{call, parse};
use crate::tables::{doctor_table, resources_table, status_table};
use crate::{Failure, console, print_doc};

/// `routerctl status`: the daemon's state, phase, generation and last reconcile.
pub(crate) async fn status(cli: &Cli) -> Result<(), Failure> {
    let body = call(&cli.socket, Method::GET, "/v1/status", None).await?;
    match cli.output {
        Output::Json | Output::Yaml => print_doc(cli.output, &body)?,
        Output::Table => {
            let status: DaemonStatus = serde_json::from_str(&body)
                .map_err(|e| Failure::Answered(format!("unexpected status document: {e}")))?;
            print!("{}", status_table(&status, unix_now(), console::width()));
        }
    }
    Ok(())
}

/// `routerctl resources`: per resource, its generations, phase and conditions.
pub(crate) async fn resources(cli: &Cli) -> Result<(), Failure> {
    let body = call(&cli.socket, Method::GET, "/v1/resources", None).await?;
    if cli.structured() {
        print_doc(cli.output, &body)?;
    } else {
        let list: Vec<ResourceStatus> = serde_json::from_str(&body)
            .map_err(|e| Failure::Answered(format!("unexpected resources document: {e}")))?;
        print!("{}", resources_table(&list, console::width()));
    }
    Ok(())
}

/// `routerctl doctor [AREA]`: the daemon's checks (of one area when given); fails with
/// [`Failure::ChecksFailed`] when any check fails.
pub(crate) async fn doctor(cli: &Cli, area: Option<&str>) -> Result<(), Failure> {
    let path = match area {
        Some(a) => format!("/v1/doctor?area={a}"),
        None => "/v1/doctor".to_string(),
    };
    let body = call(&cli.socket, Method::GET, &path, None).await?;
    let report: serde_json::Value = parse(&body)?;
    let checks: Vec<DoctorCheck> = serde_json::from_value(report["checks"].clone())
        .map_err(|e| Failure::Answered(format!("unexpected doctor report: {e}")))?;
    if cli.structured() {
        print_doc(cli.output, &body)?;
    } else {
        print!("{}", doctor_table(&checks, console::width()));
    }
    if checks.iter().any(|c| c.status == CheckStatus::Fail) {
        return Err(Failure::ChecksFailed);
    }
    Ok(())
}

/// Seconds since the Unix epoch by the local clock (0 if it reads before 1970).
fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
