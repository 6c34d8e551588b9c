//! `routerctl`: the operator CLI. Talks to `routerd serve` over its control socket (HTTP+JSON
//! on a Unix socket, `docs/control-api.md`); output fits the console's width (80 columns on a
//! serial console; long values wrap under their column, never cut: [`console`]), or is the
//! API's JSON with `-o json`, or the same as YAML with `-o yaml`, for every command.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use routerd_model::status::{CheckStatus, DaemonStatus, DoctorCheck, ResourceStatus};
use tokio::net::UnixStream;

mod console;
mod tables;

use tables::*;

const EXIT_CODES: &str = "\
Exit codes:
  0   success
  1   the daemon answered with an error
  2   doctor: at least one check failed
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
    /// Each resource's generation, observed generation, phase and conditions.
    Resources,
    /// What a reconcile would change: of FILE, or of the applied config. Changes nothing.
    Plan {
        /// A candidate router.yaml (default: the applied config).
        #[arg(short = 'f', long = "file", value_name = "FILE")]
        file: Option<PathBuf>,
    },
    /// Adoption candidates (existing host artifacts the config declares but the ledger does
    /// not own); --apply records the matching ones as owned.
    Adopt {
        /// List them (read-only).
        #[arg(long, conflicts_with = "apply", required_unless_present = "apply")]
        candidates: bool,
        /// Record every candidate whose attributes match (ledger only; the host is untouched).
        #[arg(long)]
        apply: bool,
        /// With --apply: only these candidates (`kind/name`, as --candidates lists them).
        #[arg(requires = "apply", value_name = "ID")]
        artifacts: Vec<String>,
    },
    /// The ownership ledger: what routerd created or adopted.
    Ledger,
    /// The applied config's planned transition as Graphviz DOT.
    Graph {
        /// Print DOT (the only format; pipe it to `dot -Tsvg`).
        #[arg(long, required = true)]
        dot: bool,
    },
    /// Set the admin password (asked twice without echo on a terminal; otherwise the first
    /// line of standard input).
    Passwd,
    /// Run the daemon's checks; exits 2 when any fails.
    Doctor {
        /// Only this area (reconcile, ledger, routes, firewall, mgmt, leases, disk, runtime).
        area: Option<String>,
    },
    /// Apply a config; unless confirmed within the window, the previous one comes back.
    Apply {
        /// The router.yaml to apply.
        #[arg(short = 'f', long = "file", value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        window: Window,
        /// The generation FILE was edited from (`routerctl history N` prints its text); by
        /// default the one applied when the command starts. If another has been applied
        /// since, nothing is applied and the command fails, instead of undoing it unseen.
        #[arg(long, value_name = "GENERATION")]
        base: Option<u64>,
    },
    /// Keep the config applied last (ends its confirm window).
    Confirm,
    /// Apply an earlier generation again; without GENERATION, the one before the pending apply.
    ///
    /// Rolling back to GENERATION shows what would change and asks first; like an apply, it
    /// opens a confirm window (unconfirmed, the running generation comes back).
    Rollback {
        /// The generation to go back to.
        generation: Option<u64>,
        #[command(flatten)]
        window: Window,
        /// Do not ask (scripts; the question needs a terminal).
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// The applied generations; `show N` prints one's YAML, `diff A B` compares two.
    History {
        #[command(subcommand)]
        what: Option<HistoryCommand>,
    },
    /// Firmware slots and updates (RAUC): status, marking slots.
    Ota {
        #[command(subcommand)]
        what: OtaCommand,
    },
}

/// The confirm window and comment of a change (an apply, a rollback to a generation).
#[derive(clap::Args, Debug)]
struct Window {
    /// The confirm window, written as router.yaml writes durations (`90s`, `2.5m`, `1h30m`):
    /// unconfirmed by then, the running config comes back.
    #[arg(long, default_value = "90s", value_parser = routerd_model::parse_duration)]
    confirm_timeout: Duration,
    /// Without a confirm window.
    #[arg(long, conflicts_with = "confirm_timeout")]
    no_confirm: bool,
    /// Why (kept with the new generation).
    #[arg(long, default_value = "")]
    comment: String,
}

impl Window {
    /// The window in seconds as the control API takes it (0: none; at least 1 otherwise).
    fn seconds(&self) -> u64 {
        if self.no_confirm { 0 } else { self.confirm_timeout.as_secs().max(1) }
    }
}

#[derive(Subcommand, Debug)]
enum OtaCommand {
    /// Both slots (booted, version, boot status) and the health gate's decisions.
    Status,
    /// Mark a slot good: the boot loader keeps booting it.
    MarkGood {
        /// `booted` (default), `other` or a slot name (`rootfs.1`).
        #[arg(default_value = "booted")]
        slot: String,
    },
    /// Mark a slot bad: the boot loader skips it until it is installed again or marked good.
    MarkBad {
        /// `booted` (default), `other` or a slot name.
        #[arg(default_value = "booted")]
        slot: String,
    },
    /// Boot this slot next (make it primary).
    MarkActive {
        /// `booted`, `other` or a slot name.
        slot: String,
    },
    /// Check a bundle's signature and show its manifest; installs nothing.
    Inspect {
        /// The bundle file on the router.
        file: PathBuf,
    },
    /// Install a bundle into the slot not booted, with a progress bar; reboot to run it.
    Install {
        /// The bundle file on the router.
        file: PathBuf,
        /// Install only if the bundle still has this digest (from `inspect`); without it the
        /// bundle is inspected first and exactly that bundle is installed.
        #[arg(long)]
        digest: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
enum HistoryCommand {
    /// Print a generation's YAML as it was applied.
    Show {
        /// The generation.
        generation: u64,
    },
    /// Unified diff of two generations' YAML.
    Diff {
        /// The older generation.
        from: u64,
        /// The newer generation.
        to: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Output {
    /// Plain text that fits 80 columns.
    Table,
    /// The API's JSON.
    Json,
    /// The same document as YAML.
    Yaml,
}

/// Prints the daemon's JSON document `body` as `output` asks: as it came, or as YAML.
fn print_doc(output: Output, body: &str) -> Result<(), Failure> {
    if output == Output::Yaml {
        let value: serde_json::Value = parse(body)?;
        print!("{}", yaml_text(&value));
    } else {
        println!("{body}");
    }
    Ok(())
}

/// `value` as a YAML document (saphyr's emitter: strings quoted where YAML would read them as
/// something else, multi-line strings as literal blocks).
fn yaml_text(value: &serde_json::Value) -> String {
    fn node(v: &serde_json::Value) -> saphyr::Yaml<'_> {
        use saphyr::{Scalar, Yaml};
        match v {
            serde_json::Value::Null => Yaml::Value(Scalar::Null),
            serde_json::Value::Bool(b) => Yaml::Value(Scalar::Boolean(*b)),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Yaml::Value(Scalar::Integer(i)),
                None => Yaml::Value(Scalar::FloatingPoint(n.as_f64().unwrap_or(f64::NAN).into())),
            },
            serde_json::Value::String(s) => Yaml::Value(Scalar::String(s.as_str().into())),
            serde_json::Value::Array(items) => Yaml::Sequence(items.iter().map(node).collect()),
            serde_json::Value::Object(map) => Yaml::Mapping(
                map.iter()
                    .map(|(k, v)| (Yaml::Value(Scalar::String(k.as_str().into())), node(v)))
                    .collect(),
            ),
        }
    }
    let mut out = String::new();
    let mut emitter = saphyr::YamlEmitter::new(&mut out);
    emitter.multiline(true);
    if let Err(e) = emitter.dump(&node(value)) {
        return format!("# cannot write YAML: {e}\n");
    }
    out.push('\n');
    out
}

/// Failures with their exit codes.
#[derive(Debug)]
enum Failure {
    /// The doctor found failures: 2 (already printed).
    ChecksFailed,
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
        Err(Failure::ChecksFailed) => ExitCode::from(2),
    }
}

async fn run(cli: &Cli) -> Result<(), Failure> {
    let structured = cli.output != Output::Table;
    let width = console::width();
    match &cli.command {
        Command::Status => {
            let body = call(&cli.socket, Method::GET, "/v1/status", None).await?;
            match cli.output {
                Output::Json | Output::Yaml => print_doc(cli.output, &body)?,
                Output::Table => {
                    let status: DaemonStatus = serde_json::from_str(&body).map_err(|e| {
                        Failure::Answered(format!("unexpected status document: {e}"))
                    })?;
                    print!("{}", status_table(&status, unix_now(), width));
                }
            }
        }
        Command::Resources => {
            let body = call(&cli.socket, Method::GET, "/v1/resources", None).await?;
            if structured {
                print_doc(cli.output, &body)?;
            } else {
                let list: Vec<ResourceStatus> = serde_json::from_str(&body).map_err(|e| {
                    Failure::Answered(format!("unexpected resources document: {e}"))
                })?;
                print!("{}", resources_table(&list, width));
            }
        }
        Command::Doctor { area } => {
            let path = match area {
                Some(a) => format!("/v1/doctor?area={a}"),
                None => "/v1/doctor".to_string(),
            };
            let body = call(&cli.socket, Method::GET, &path, None).await?;
            let report: serde_json::Value = parse(&body)?;
            let checks: Vec<DoctorCheck> = serde_json::from_value(report["checks"].clone())
                .map_err(|e| Failure::Answered(format!("unexpected doctor report: {e}")))?;
            if structured {
                print_doc(cli.output, &body)?;
            } else {
                print!("{}", doctor_table(&checks, width));
            }
            if checks.iter().any(|c| c.status == CheckStatus::Fail) {
                return Err(Failure::ChecksFailed);
            }
        }
        Command::Passwd => {
            let password = read_new_password()?;
            let request = serde_json::json!({ "password": password });
            call(&cli.socket, Method::POST, "/v1/passwd", Some(request)).await?;
            if structured {
                print_doc(cli.output, "{}")?;
            } else {
                println!("password set");
            }
        }
        Command::Plan { file } => {
            let request = match file {
                Some(f) => {
                    let yaml = std::fs::read_to_string(f)
                        .map_err(|e| Failure::Answered(format!("{}: {e}", f.display())))?;
                    Some(serde_json::json!({ "yaml": yaml }))
                }
                None => None,
            };
            let path = if structured { "/v1/plan" } else { "/v1/plan?format=table" };
            let body =
                call_about(&cli.socket, Method::POST, path, request, file.as_deref()).await?;
            if structured { print_doc(cli.output, &body)? } else { print_line(body) }
        }
        Command::Adopt { apply, artifacts, .. } => {
            let path = if structured { "/v1/adopt" } else { "/v1/adopt?format=table" };
            let only = (!artifacts.is_empty()).then_some(artifacts);
            let request = serde_json::json!({ "apply": apply, "artifacts": only });
            let body = call(&cli.socket, Method::POST, path, Some(request)).await?;
            if structured { print_doc(cli.output, &body)? } else { print_line(body) }
        }
        Command::Ledger => {
            let body = call(&cli.socket, Method::GET, "/v1/ledger", None).await?;
            if structured {
                print_doc(cli.output, &body)?;
            } else {
                print!("{}", ledger_table(&parse(&body)?, width));
            }
        }
        Command::Graph { .. } => {
            print_line(call(&cli.socket, Method::GET, "/v1/graph", None).await?);
        }
        Command::Ota { what: OtaCommand::Inspect { file } } => {
            let info = inspect(cli, file).await?;
            if structured {
                print_doc(cli.output, &info.to_string())?;
            } else {
                print!("{}", inspect_table(&info, width));
            }
        }
        Command::Ota { what: OtaCommand::Install { file, digest } } => {
            install(cli, file, digest.as_deref()).await?;
        }
        Command::Ota { what } => {
            let mark = match what {
                OtaCommand::Status | OtaCommand::Inspect { .. } | OtaCommand::Install { .. } => {
                    None
                }
                OtaCommand::MarkGood { slot } => Some(("good", slot)),
                OtaCommand::MarkBad { slot } => Some(("bad", slot)),
                OtaCommand::MarkActive { slot } => Some(("active", slot)),
            };
            let Some((state, slot)) = mark else {
                let body = call(&cli.socket, Method::GET, "/v1/ota", None).await?;
                if structured {
                    print_doc(cli.output, &body)?;
                } else {
                    print!("{}", ota_table(&parse(&body)?, width));
                }
                return Ok(());
            };
            let request = serde_json::json!({ "state": state, "slot": slot });
            let body = call(&cli.socket, Method::POST, "/v1/ota/mark", Some(request)).await?;
            if structured {
                print_doc(cli.output, &body)?;
            } else {
                let answer: serde_json::Value = parse(&body)?;
                println!("{}", answer["message"].as_str().unwrap_or_default());
            }
        }
        Command::Reconcile => {
            let body = call(&cli.socket, Method::POST, "/v1/reconcile", None).await?;
            if structured {
                print_doc(cli.output, &body)?;
            } else {
                println!("reconcile requested");
            }
        }
        Command::Apply { file, window, base } => {
            let comment = &window.comment;
            let yaml = std::fs::read_to_string(file)
                .map_err(|e| Failure::Answered(format!("{}: {e}", file.display())))?;
            let base = match base {
                Some(base) => *base,
                None => {
                    let status = parse(&call(&cli.socket, Method::GET, "/v1/status", None).await?)?;
                    status["generation"].as_u64().unwrap_or(0)
                }
            };
            let seconds = window.seconds();
            let client = ssh_client();
            let request = serde_json::json!({
                "yaml": yaml,
                "comment": comment,
                "author": user(),
                "channel": "cli",
                "confirmTimeoutSeconds": seconds,
                "clientAddress": client,
                "baseGeneration": base,
            });
            let body =
                call_about(&cli.socket, Method::POST, "/v1/apply", Some(request), Some(file))
                    .await?;
            if structured {
                print_doc(cli.output, &body)?;
            } else {
                println!("{}", outcome_line(&body, "applied", width));
            }
        }
        Command::Confirm => {
            let request = serde_json::json!({ "author": user(), "channel": "cli" });
            let body = call(&cli.socket, Method::POST, "/v1/confirm", Some(request)).await?;
            if structured {
                print_doc(cli.output, &body)?;
            } else {
                println!("{}", outcome_line(&body, "confirmed", width));
            }
        }
        Command::Rollback { generation, window, yes } => {
            let (seconds, comment) = (window.seconds(), &window.comment);
            if let Some(target) = generation
                && !*yes
            {
                ask_rollback(&cli.socket, *target, seconds).await?;
            }
            let request = serde_json::json!({
                "generation": generation,
                "author": user(),
                "channel": "cli",
                "confirmTimeoutSeconds": seconds,
                "comment": comment,
                "clientAddress": ssh_client(),
            });
            let body = call(&cli.socket, Method::POST, "/v1/rollback", Some(request)).await?;
            if structured {
                print_doc(cli.output, &body)?;
            } else {
                println!("{}", outcome_line(&body, "rolled back; now", width));
            }
        }
        Command::History { what: Some(HistoryCommand::Diff { from, to }) } => {
            let path = format!("/v1/generations/{from}/diff/{to}");
            let body = call(&cli.socket, Method::GET, &path, None).await?;
            if structured {
                print_doc(cli.output, &body)?;
            } else {
                print!("{}", parse(&body)?["diff"].as_str().unwrap_or_default());
            }
        }
        Command::History { what: Some(HistoryCommand::Show { generation: n }) } => {
            let body =
                call(&cli.socket, Method::GET, &format!("/v1/generations/{n}"), None).await?;
            if structured {
                print_doc(cli.output, &body)?;
            } else {
                let v: serde_json::Value = parse(&body)?;
                print!("{}", v["yaml"].as_str().unwrap_or_default());
            }
        }
        Command::History { what: None } => {
            let body = call(&cli.socket, Method::GET, "/v1/generations", None).await?;
            if structured {
                print_doc(cli.output, &body)?;
            } else {
                let status = parse(&call(&cli.socket, Method::GET, "/v1/status", None).await?)?;
                let running = status["generation"].as_u64();
                print!("{}", history_table(&parse(&body)?, running, width));
            }
        }
    }
    Ok(())
}

/// The new password: typed twice without echo on a terminal, or the first line of stdin.
fn read_new_password() -> Result<String, Failure> {
    use std::io::IsTerminal;
    let unreadable = |e: std::io::Error| Failure::Answered(format!("reading the password: {e}"));
    if !std::io::stdin().is_terminal() {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map_err(unreadable)?;
        return Ok(line.trim_end_matches(['\r', '\n']).to_string());
    }
    let first = rpassword::prompt_password("New admin password: ").map_err(unreadable)?;
    let again = rpassword::prompt_password("Again: ").map_err(unreadable)?;
    if first != again {
        return Err(Failure::Answered("the two passwords differ; nothing changed".into()));
    }
    Ok(first)
}

/// Prints `text`, ending it with one newline.
fn print_line(text: String) {
    if text.ends_with('\n') {
        print!("{text}");
    } else {
        println!("{text}");
    }
}

/// Seconds since the Unix epoch by the local clock (0 if it reads before 1970).
fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Over SSH, the address the operator connects from (`SSH_CONNECTION`'s first field): what the
/// lockout guard checks.
fn ssh_client() -> Option<String> {
    std::env::var("SSH_CONNECTION")
        .ok()
        .and_then(|c| c.split_whitespace().next().map(str::to_owned))
        .filter(|a| a.parse::<std::net::IpAddr>().is_ok())
}

/// Shows what a rollback to `target` changes (the diff from the running generation) and asks
/// on the terminal; fails unless the operator answers yes. With no terminal to ask on, fails
/// and names `--yes`.
async fn ask_rollback(socket: &Path, target: u64, seconds: u64) -> Result<(), Failure> {
    use std::io::{BufRead, IsTerminal, Write};
    let status = parse(&call(socket, Method::GET, "/v1/status", None).await?)?;
    let running = status["generation"].as_u64().unwrap_or(0);
    let path = format!("/v1/generations/{running}/diff/{target}");
    let diff = parse(&call(socket, Method::GET, &path, None).await?)?;
    let text = diff["diff"].as_str().unwrap_or_default();
    if !std::io::stdin().is_terminal() {
        return Err(Failure::Answered(
            "rollback asks first, and stdin is not a terminal: add --yes to roll back without              the question"
                .into(),
        ));
    }
    if text.is_empty() {
        println!("generation {target}'s config is the running one's (generation {running})");
    } else {
        print!("{text}");
    }
    let window = if seconds == 0 {
        "without a confirm window".to_string()
    } else {
        format!("confirm within {seconds} s, else generation {running} comes back")
    };
    print!("Roll back to generation {target} ({window})? [y/N] ");
    std::io::stdout().flush().ok();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).ok();
    if matches!(answer.trim(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        Err(Failure::Answered("not rolled back".into()))
    }
}

/// The console user (`$USER`, `root` when unset): the author the daemon records.
fn user() -> String {
    std::env::var("USER").unwrap_or_else(|_| "root".into())
}

fn parse(body: &str) -> Result<serde_json::Value, Failure> {
    serde_json::from_str(body).map_err(|e| Failure::Answered(format!("unexpected answer: {e}")))
}

/// One request (with a JSON body when given); the body of a 2xx answer as text.
async fn call(
    socket: &Path,
    method: Method,
    path: &str,
    body: Option<serde_json::Value>,
) -> Result<String, Failure> {
    call_about(socket, method, path, body, None).await
}

/// [`call`] of a request carrying the text of `file` (`apply -f`, `plan -f`): the config errors
/// of a refusal name `file` as the operator gave it, not the daemon's name for the text
/// (`apply`, `plan`), so an editor can jump to them (issue 34 §8).
async fn call_about(
    socket: &Path,
    method: Method,
    path: &str,
    body: Option<serde_json::Value>,
    file: Option<&Path>,
) -> Result<String, Failure> {
    let response = send(socket, method, path, body).await?;
    let status = response.status();
    let text = read_all(response).await?;
    if status.is_success() { Ok(text) } else { Err(answered_error_about(status, text, file)) }
}

/// Sends one request on the control socket; the response's body is still to be read.
async fn send(
    socket: &Path,
    method: Method,
    path: &str,
    body: Option<serde_json::Value>,
) -> Result<hyper::Response<hyper::body::Incoming>, Failure> {
    let stream = UnixStream::connect(socket)
        .await
        .with_context(|| format!("cannot reach routerd on {}", socket.display()))
        .map_err(Failure::Unreachable)?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .context("HTTP handshake on the control socket")
        .map_err(Failure::Unreachable)?;
    tokio::spawn(connection);
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "routerd")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| Failure::Answered(format!("building the request: {e}")))?;
    sender
        .send_request(request)
        .await
        .context("control socket request")
        .map_err(Failure::Unreachable)
}

async fn read_all(response: hyper::Response<hyper::body::Incoming>) -> Result<String, Failure> {
    let bytes = response
        .into_body()
        .collect()
        .await
        .context("reading the answer")
        .map_err(Failure::Unreachable)?
        .to_bytes();
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The daemon's error answer as a failure: its `error` message, and config errors one per
/// line as `routerd validate` prints them.
fn answered_error(status: StatusCode, text: String) -> Failure {
    answered_error_about(status, text, None)
}

/// [`answered_error`], the config errors naming `file` when given (see [`call_about`]).
fn answered_error_about(status: StatusCode, text: String, file: Option<&Path>) -> Failure {
    let answer = serde_json::from_str::<serde_json::Value>(&text).ok();
    let mut message = answer
        .as_ref()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
        .unwrap_or(text);
    let file = file.map(|f| f.display().to_string());
    for e in answer.iter().flat_map(|v| v["errors"].as_array().into_iter().flatten()) {
        message.push('\n');
        message.push_str(&config_error_line(e, file.as_deref()));
    }
    Failure::Answered(format!("{} {message}", status_text(status)))
}

/// One config error of a 422 answer (`docs/control-api.md`) as `routerd validate` prints it:
/// `FILE:LINE:COLUMN: RESOURCE: PATH: MESSAGE` (`FILE: ` alone when it has no position, the
/// resource and path parts only when given), with `file` instead of the daemon's name.
fn config_error_line(e: &serde_json::Value, file: Option<&str>) -> String {
    let file = file.or(e["file"].as_str()).unwrap_or("");
    let mut line = match (e["line"].as_u64().unwrap_or(0), e["column"].as_u64().unwrap_or(0)) {
        (0, _) => format!("{file}: "),
        (l, c) => format!("{file}:{l}:{c}: "),
    };
    for part in [e["resource"].as_str(), e["path"].as_str()].into_iter().flatten() {
        if !part.is_empty() {
            line.push_str(part);
            line.push_str(": ");
        }
    }
    line.push_str(e["message"].as_str().unwrap_or(""));
    line
}

/// `POST /v1/ota/install` with its newline-delimited JSON answer: each line is handed to
/// `on_line` as it arrives. Returns the last line (the `completed` event).
async fn stream_lines(
    socket: &Path,
    path: &str,
    body: serde_json::Value,
    mut on_line: impl FnMut(&serde_json::Value),
) -> Result<serde_json::Value, Failure> {
    let response = send(socket, Method::POST, path, Some(body)).await?;
    let status = response.status();
    if !status.is_success() {
        return Err(answered_error(status, read_all(response).await?));
    }
    let mut body = response.into_body();
    let mut pending = Vec::new();
    let mut last = serde_json::Value::Null;
    while let Some(frame) = body.frame().await {
        let frame = frame.context("reading the answer").map_err(Failure::Unreachable)?;
        let Ok(data) = frame.into_data() else { continue };
        pending.extend_from_slice(&data);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let value: serde_json::Value = serde_json::from_slice(&line)
                .map_err(|e| Failure::Answered(format!("unexpected line from the daemon: {e}")))?;
            on_line(&value);
            last = value;
        }
    }
    Ok(last)
}

fn status_text(status: StatusCode) -> String {
    format!("{} {}", status.as_u16(), status.canonical_reason().unwrap_or(""))
}

/// `POST /v1/ota/inspect` of `file` (made absolute: the daemon does not share our directory).
async fn inspect(cli: &Cli, file: &Path) -> Result<serde_json::Value, Failure> {
    let path = std::path::absolute(file)
        .map_err(|e| Failure::Answered(format!("{}: {e}", file.display())))?;
    let body = serde_json::json!({ "path": path });
    parse(&call(&cli.socket, Method::POST, "/v1/ota/inspect", Some(body)).await?)
}

/// `routerctl ota install`: inspects first unless given the digest, then installs and shows
/// RAUC's progress (a bar redrawn in place on a terminal, one line per step otherwise, the
/// daemon's JSON lines with `-o json`). Fails with RAUC's reason when the install fails.
async fn install(cli: &Cli, file: &Path, digest: Option<&str>) -> Result<(), Failure> {
    use std::io::{IsTerminal, Write};
    let structured = cli.output != Output::Table;
    let width = console::width();
    let (path, digest) = match digest {
        Some(digest) => {
            let path = std::path::absolute(file)
                .map_err(|e| Failure::Answered(format!("{}: {e}", file.display())))?;
            (path.display().to_string(), digest.to_string())
        }
        None => {
            let info = inspect(cli, file).await?;
            if !structured {
                print!("{}", inspect_table(&info, width));
            }
            let text = |key: &str| info[key].as_str().unwrap_or_default().to_string();
            (text("path"), text("digest"))
        }
    };
    let terminal = std::io::stdout().is_terminal();
    let body = serde_json::json!({ "path": path, "digest": digest });
    // Padding that blanks the rest of the line a bar is redrawn on.
    let pad = width.saturating_sub(1);
    // The last message too long to share the bar's line, printed above it.
    let mut above = String::new();
    let last = stream_lines(&cli.socket, "/v1/ota/install", body, |line| {
        if structured {
            println!("{line}");
        } else if line["event"] == "progress" {
            let percent = line["percent"].as_u64().unwrap_or(0).min(100);
            let message = line["message"].as_str().unwrap_or_default();
            let bar = progress_bar(percent, message, width);
            if !terminal {
                println!("{bar}");
            } else if bar.contains('\n') {
                // A redraw in place holds one line: the long message scrolls above the bar.
                if above != message {
                    println!("\r{:pad$}\r{}", "", console::wrap_row("", message, 0, width));
                    above = message.to_string();
                }
                print!("\r{:<pad$}", progress_bar(percent, "", width));
            } else {
                print!("\r{bar:<pad$}");
            }
            let _ = std::io::stdout().flush();
        }
    })
    .await?;
    if terminal && !structured {
        println!();
    }
    match (last["event"].as_str(), last["ok"].as_bool()) {
        (Some("completed"), Some(true)) => {
            if !structured {
                println!("installed; reboot to run it (the health gate confirms it)");
            }
            Ok(())
        }
        (Some("completed"), _) => Err(Failure::Answered(format!(
            "install failed: {}",
            last["lastError"].as_str().unwrap_or("RAUC gave no reason")
        ))),
        _ => Err(Failure::Answered(format!(
            "install: {}",
            last["error"].as_str().unwrap_or("the daemon stopped reporting before the end")
        ))),
    }
}

#[cfg(test)]
#[path = "main_tests.rs"]
mod tests;
