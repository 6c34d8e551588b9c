//! Changing the config: `plan`, `graph`, `reconcile`, `apply`, `confirm` and `rollback`.

use std::path::Path;

use hyper::Method;

use crate::cli::{Cli, Window};
use crate::client::{call, call_about, parse};
use crate::tables::outcome_line;
use crate::{Failure, console, print_doc, print_line};

/// `routerctl plan [-f FILE]`: what a reconcile of `file` (or of the applied config) would do.
pub(crate) async fn plan(cli: &Cli, file: Option<&Path>) -> Result<(), Failure> {
    let structured = cli.structured();
    let request = match file {
        Some(f) => {
            let yaml = std::fs::read_to_string(f)
                .map_err(|e| Failure::Answered(format!("{}: {e}", f.display())))?;
            Some(serde_json::json!({ "yaml": yaml }))
        }
        None => None,
    };
    let path = if structured { "/v1/plan" } else { "/v1/plan?format=table" };
    let body = call_about(&cli.socket, Method::POST, path, request, file).await?;
    if structured {
        print_doc(cli.output, &body)?
    } else {
        print_line(body)
    }
    Ok(())
}

/// `routerctl graph --dot`: the applied config's planned transition as Graphviz DOT.
pub(crate) async fn graph(cli: &Cli) -> Result<(), Failure> {
    print_line(call(&cli.socket, Method::GET, "/v1/graph", None).await?);
    Ok(())
}

/// `routerctl reconcile`: asks the daemon to reconcile now.
pub(crate) async fn reconcile(cli: &Cli) -> Result<(), Failure> {
    let body = call(&cli.socket, Method::POST, "/v1/reconcile", None).await?;
    if cli.structured() {
        print_doc(cli.output, &body)?;
    } else {
        println!("reconcile requested");
    }
    Ok(())
}

/// `routerctl apply -f FILE`: applies `file`, edited from generation `base` (by default the
/// one applied now), with the confirm window and comment of `window`.
pub(crate) async fn apply(
    cli: &Cli,
    file: &Path,
    window: &Window,
    base: Option<u64>,
) -> Result<(), Failure> {
    let comment = &window.comment;
    let yaml = std::fs::read_to_string(file)
        .map_err(|e| Failure::Answered(format!("{}: {e}", file.display())))?;
    let base = match base {
        Some(base) => base,
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
        call_about(&cli.socket, Method::POST, "/v1/apply", Some(request), Some(file)).await?;
    if cli.structured() {
        print_doc(cli.output, &body)?;
    } else {
        println!("{}", outcome_line(&body, "applied", console::width()));
    }
    Ok(())
}

/// `routerctl confirm`: keeps the config applied last.
pub(crate) async fn confirm(cli: &Cli) -> Result<(), Failure> {
    let request = serde_json::json!({ "author": user(), "channel": "cli" });
    let body = call(&cli.socket, Method::POST, "/v1/confirm", Some(request)).await?;
    if cli.structured() {
        print_doc(cli.output, &body)?;
    } else {
        println!("{}", outcome_line(&body, "confirmed", console::width()));
    }
    Ok(())
}

/// `routerctl rollback [GENERATION]`: applies `generation` again (by default the one before the
/// pending apply), asking first when given one unless `yes`.
pub(crate) async fn rollback(
    cli: &Cli,
    generation: Option<u64>,
    window: &Window,
    yes: bool,
) -> Result<(), Failure> {
    let (seconds, comment) = (window.seconds(), &window.comment);
    if let Some(target) = generation
        && !yes
    {
        ask_rollback(&cli.socket, target, seconds).await?;
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
    if cli.structured() {
        print_doc(cli.output, &body)?;
    } else {
        println!("{}", outcome_line(&body, "rolled back; now", console::width()));
    }
    Ok(())
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
            "rollback asks first, and stdin is not a terminal: add --yes to roll back without \
             the question"
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

/// Over SSH, the address the operator connects from (`SSH_CONNECTION`'s first field): what the
/// lockout guard checks.
fn ssh_client() -> Option<String> {
    std::env::var("SSH_CONNECTION")
        .ok()
        .and_then(|c| c.split_whitespace().next().map(str::to_owned))
        .filter(|a| a.parse::<std::net::IpAddr>().is_ok())
}
