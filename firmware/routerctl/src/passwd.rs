//! `passwd`: the web UI's admin password.

use hyper::Method;

use crate::cli::Cli;
use crate::client::call;
use crate::{Failure, print_doc};

/// `routerctl passwd`: reads the new password and hands it to the daemon.
pub(crate) async fn passwd(cli: &Cli) -> Result<(), Failure> {
    let password = read_new_password()?;
    let request = serde_json::json!({ "password": password });
    call(&cli.socket, Method::POST, "/v1/passwd", Some(request)).await?;
    if cli.structured() {
        print_doc(cli.output, "{}")?;
    } else {
        println!("password set");
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
