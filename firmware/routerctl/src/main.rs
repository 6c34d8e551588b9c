//! `routerctl`: the operator CLI. Talks to `routerd serve` over its control socket (HTTP+JSON
//! on a Unix socket, `docs/control-api.md`); output fits the console's width (80 columns on a
//! serial console; long values wrap under their column, never cut: [`console`]), or is the
//! API's JSON with `-o json`, or the same as YAML with `-o yaml`, for every command.

use std::process::ExitCode;

use clap::Parser;

mod cli;
mod client;
mod config;
mod console;
mod dns;
mod history;
mod ledger;
mod ota;
mod passwd;
mod status;
mod tables;

use cli::{Cli, Command, DnsCommand, HistoryCommand, OtaCommand, Output};
use client::parse;

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

/// Runs the command `cli` names: one function per subcommand, in the module of its family.
async fn run(cli: &Cli) -> Result<(), Failure> {
    match &cli.command {
        Command::Status => status::status(cli).await,
        Command::Reconcile => config::reconcile(cli).await,
        Command::Resources => status::resources(cli).await,
        Command::Plan { file } => config::plan(cli, file.as_deref()).await,
        Command::Adopt { apply, artifacts, .. } => ledger::adopt(cli, *apply, artifacts).await,
        Command::Ledger => ledger::ledger(cli).await,
        Command::Graph { .. } => config::graph(cli).await,
        Command::Passwd => passwd::passwd(cli).await,
        Command::Doctor { area } => status::doctor(cli, area.as_deref()).await,
        Command::Apply { file, window, base } => config::apply(cli, file, window, *base).await,
        Command::Confirm => config::confirm(cli).await,
        Command::Rollback { generation, window, yes } => {
            config::rollback(cli, *generation, window, *yes).await
        }
        Command::History { what: None } => history::list(cli).await,
        Command::History { what: Some(HistoryCommand::Show { generation }) } => {
            history::show(cli, *generation).await
        }
        Command::History { what: Some(HistoryCommand::Diff { from, to }) } => {
            history::diff(cli, *from, *to).await
        }
        Command::Ota { what } => match what {
            OtaCommand::Status => ota::status(cli).await,
            OtaCommand::MarkGood { slot } => ota::mark(cli, "good", slot).await,
            OtaCommand::MarkBad { slot } => ota::mark(cli, "bad", slot).await,
            OtaCommand::MarkActive { slot } => ota::mark(cli, "active", slot).await,
            OtaCommand::Inspect { file } => ota::inspect(cli, file).await,
            OtaCommand::Install { file, digest } => {
                ota::install(cli, file, digest.as_deref()).await
            }
        },
        Command::Dns { what } => match what {
            DnsCommand::Zones => dns::zones(cli).await,
            DnsCommand::Records { zone } => dns::records(cli, zone.as_deref()).await,
            DnsCommand::Status => dns::status(cli).await,
        },
    }
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

/// Prints `text`, ending it with one newline.
fn print_line(text: String) {
    if text.ends_with('\n') {
        print!("{text}");
    } else {
        println!("{text}");
    }
}

#[cfg(test)]
#[path = "main_tests.rs"]
mod tests;
