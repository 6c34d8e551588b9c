//! `routerctl`: the operator CLI. Talks to `routerd serve` over its control socket (HTTP+JSON
//! on a Unix socket, `docs/control-api.md`); output fits 80 columns on a serial console, or is
//! JSON with `-o json`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use routerd_model::status::DaemonStatus;
use tokio::net::UnixStream;

const EXIT_CODES: &str = "\
Exit codes:
  0   success
  1   the daemon answered with an error
  64  usage error
  69  the daemon is not reachable (not running, wrong --socket, not permitted)";

/// Operate the routerd daemon from the console.
#[derive(Parser, Debug)]
#[command(name = "routerctl", version, after_help = EXIT_CODES)]
struct Cli {
    /// The daemon's control socket.
    #[arg(long, global = true, value_name = "PATH", default_value = "/run/routerd/control.sock")]
    socket: PathBuf,
    /// Output format.
    #[arg(short = 'o', long = "output", global = true, value_enum, default_value_t = Output::Table)]
    output: Output,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// What the daemon is doing and what its last reconcile found.
    Status,
    /// Ask the daemon to reconcile now.
    Reconcile,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Output {
    /// Plain text that fits 80 columns.
    Table,
    /// The API's JSON.
    Json,
}

/// Failures with their exit codes.
#[derive(Debug)]
enum Failure {
    /// Not reachable: 69.
    Unreachable(anyhow::Error),
    /// The daemon answered with an error: 1.
    Answered(String),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 64 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("routerctl: starting the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(run(&cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Unreachable(e)) => {
            eprintln!("routerctl: {e:#}");
            ExitCode::from(69)
        }
        Err(Failure::Answered(message)) => {
            eprintln!("routerctl: {message}");
            ExitCode::from(1)
        }
    }
}

async fn run(cli: &Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Status => {
            let body = call(&cli.socket, Method::GET, "/v1/status").await?;
            match cli.output {
                Output::Json => println!("{body}"),
                Output::Table => {
                    let status: DaemonStatus = serde_json::from_str(&body).map_err(|e| {
                        Failure::Answered(format!("unexpected status document: {e}"))
                    })?;
                    print!("{}", status_table(&status));
                }
            }
        }
        Command::Reconcile => {
            let body = call(&cli.socket, Method::POST, "/v1/reconcile").await?;
            match cli.output {
                Output::Json => println!("{body}"),
                Output::Table => println!("reconcile requested"),
            }
        }
    }
    Ok(())
}

/// One request; the body of a 2xx answer as text.
async fn call(socket: &Path, method: Method, path: &str) -> Result<String, Failure> {
    let stream = UnixStream::connect(socket)
        .await
        .with_context(|| format!("cannot reach routerd on {}", socket.display()))
        .map_err(Failure::Unreachable)?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .context("HTTP handshake on the control socket")
        .map_err(Failure::Unreachable)?;
    tokio::spawn(connection);
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "routerd")
        .body(Empty::<Bytes>::new())
        .map_err(|e| Failure::Answered(format!("building the request: {e}")))?;
    let response = sender
        .send_request(request)
        .await
        .context("control socket request")
        .map_err(Failure::Unreachable)?;
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .context("reading the answer")
        .map_err(Failure::Unreachable)?
        .to_bytes();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if status.is_success() {
        return Ok(text);
    }
    let message = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
        .unwrap_or(text);
    Err(Failure::Answered(format!("{} {message}", status_text(status))))
}

fn status_text(status: StatusCode) -> String {
    format!("{} {}", status.as_u16(), status.canonical_reason().unwrap_or(""))
}

/// `key  value` lines, at most 80 columns (long values are cut with `…`).
fn status_table(s: &DaemonStatus) -> String {
    let mut rows: Vec<(&str, String)> = vec![
        ("state", s.state.clone()),
        ("config", s.config.clone()),
        ("netns", s.netns.clone().unwrap_or_else(|| "(host)".into())),
        ("phase", s.phase.clone().unwrap_or_else(|| "-".into())),
        (
            "generation",
            match s.observed_generation {
                Some(o) => format!("{} (observed {o})", s.generation),
                None => format!("{} (not yet observed)", s.generation),
            },
        ),
        ("reconciles", s.reconciles.to_string()),
    ];
    if let Some(r) = &s.last_reconcile {
        rows.push(("last", format!("{} by {}, {} ms", r.started, r.trigger, r.duration_ms)));
        rows.push(("operations", format!("{} ({} failed)", r.operations, r.failed)));
        rows.push((
            "resources",
            format!(
                "{} ({} drifted, {} blocked, {} to adopt), {} orphans",
                r.resources, r.drifted, r.blocked, r.requires_adoption, r.orphans
            ),
        ));
    }
    if let Some(e) = &s.last_error {
        rows.push(("error", e.clone()));
    }
    let mut out = String::new();
    for (key, value) in rows {
        let line = format!("{key:<12}{value}");
        if line.chars().count() > 80 {
            out.extend(line.chars().take(79));
            out.push('…');
        } else {
            out.push_str(&line);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use routerd_model::status::ReconcileSummary;

    #[test]
    fn the_status_table_fits_80_columns() {
        let status = DaemonStatus {
            config: format!("/etc/routerd/{}.yaml", "x".repeat(120)),
            netns: None,
            state: "running".into(),
            generation: 3,
            observed_generation: Some(3),
            phase: Some("Healthy".into()),
            reconciles: 7,
            last_reconcile: Some(ReconcileSummary {
                trigger: "address,route".into(),
                started: "2026-11-21T02:00:00Z".into(),
                duration_ms: 41,
                operations: 1,
                failed: 0,
                resources: 12,
                drifted: 0,
                blocked: 0,
                requires_adoption: 2,
                orphans: 0,
            }),
            last_error: Some("e".repeat(200)),
        };
        let table = status_table(&status);
        assert!(table.lines().all(|l| l.chars().count() <= 80), "{table}");
        assert!(table.contains("generation  3 (observed 3)"), "{table}");
        assert!(table.contains("last        2026-11-21T02:00:00Z by address,route, 41 ms"));
    }
}
