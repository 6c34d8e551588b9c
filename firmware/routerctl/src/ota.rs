//! `ota`: the firmware slots (RAUC) through the daemon: their status, marking them, inspecting
//! and installing a bundle.

use std::path::Path;

use hyper::Method;

use crate::cli::Cli;
use crate::client::{call, parse, stream_lines};
use crate::tables::{inspect_table, ota_table, progress_bar};
use crate::{Failure, console, print_doc};

/// `routerctl ota status`: both slots and the health gate's decisions.
pub(crate) async fn status(cli: &Cli) -> Result<(), Failure> {
    let body = call(&cli.socket, Method::GET, "/v1/ota", None).await?;
    if cli.structured() {
        print_doc(cli.output, &body)?;
    } else {
        print!("{}", ota_table(&parse(&body)?, console::width()));
    }
    Ok(())
}

/// `routerctl ota mark-good|mark-bad|mark-active SLOT`: marks `slot` as `state` (`good`, `bad`,
/// `active`).
pub(crate) async fn mark(cli: &Cli, state: &str, slot: &str) -> Result<(), Failure> {
    let request = serde_json::json!({ "state": state, "slot": slot });
    let body = call(&cli.socket, Method::POST, "/v1/ota/mark", Some(request)).await?;
    if cli.structured() {
        print_doc(cli.output, &body)?;
    } else {
        let answer: serde_json::Value = parse(&body)?;
        println!("{}", answer["message"].as_str().unwrap_or_default());
    }
    Ok(())
}

/// `routerctl ota inspect FILE`: the bundle's signature check and manifest.
pub(crate) async fn inspect(cli: &Cli, file: &Path) -> Result<(), Failure> {
    let info = inspect_bundle(cli, file).await?;
    if cli.structured() {
        print_doc(cli.output, &info.to_string())?;
    } else {
        print!("{}", inspect_table(&info, console::width()));
    }
    Ok(())
}

/// `routerctl ota install`: inspects first unless given the digest, then installs and shows
/// RAUC's progress (a bar redrawn in place on a terminal, one line per step otherwise, the
/// daemon's JSON lines with `-o json`). Fails with RAUC's reason when the install fails.
pub(crate) async fn install(cli: &Cli, file: &Path, digest: Option<&str>) -> Result<(), Failure> {
    use std::io::{IsTerminal, Write};
    let structured = cli.structured();
    let width = console::width();
    let (path, digest) = match digest {
        Some(digest) => {
            let path = std::path::absolute(file)
                .map_err(|e| Failure::Answered(format!("{}: {e}", file.display())))?;
            (path.display().to_string(), digest.to_string())
        }
        None => {
            let info = inspect_bundle(cli, file).await?;
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

/// `POST /v1/ota/inspect` of `file` (made absolute: the daemon does not share our directory).
async fn inspect_bundle(cli: &Cli, file: &Path) -> Result<serde_json::Value, Failure> {
    let path = std::path::absolute(file)
        .map_err(|e| Failure::Answered(format!("{}: {e}", file.display())))?;
    let body = serde_json::json!({ "path": path });
    parse(&call(&cli.socket, Method::POST, "/v1/ota/inspect", Some(body)).await?)
}
