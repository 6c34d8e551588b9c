//! BIND's own checks of a candidate, run before anything reaches a running named:
//! `named-checkconf` on a configuration file (with its includes) and `named-checkzone` on a
//! zone file. They play the role `dnsmasq --test` plays for dnsmasq (design brief §2): BIND has
//! no API to ask whether it would accept a configuration.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Where Debian (bind9-utils) and Buildroot install `named-checkconf`.
pub const NAMED_CHECKCONF: &str = "/usr/bin/named-checkconf";
/// Where Debian (bind9-utils) and Buildroot install `named-checkzone`.
pub const NAMED_CHECKZONE: &str = "/usr/bin/named-checkzone";

/// Why a check did not pass.
#[derive(Debug)]
pub(crate) enum CheckError {
    /// The program ran and refused the candidate; its words (it prints them on stdout).
    Rejected(String),
    /// The program could not be run.
    NotRun(String),
}

/// The two check programs.
#[derive(Debug, Clone)]
pub(crate) struct Checker {
    pub checkconf: PathBuf,
    pub checkzone: PathBuf,
}

impl Default for Checker {
    fn default() -> Self {
        Self {
            checkconf: PathBuf::from(NAMED_CHECKCONF),
            checkzone: PathBuf::from(NAMED_CHECKZONE),
        }
    }
}

impl Checker {
    /// `named-checkconf <conf>`: syntax and semantics of the file and its includes, zone files
    /// not loaded.
    pub async fn conf(&self, conf: &Path) -> Result<(), CheckError> {
        run(&self.checkconf, &[conf.as_os_str()]).await
    }

    /// `named-checkzone <zone> <file>`: the zone file loads as `zone` (SOA, NS, glue).
    pub async fn zone(&self, zone: &str, file: &Path) -> Result<(), CheckError> {
        run(&self.checkzone, &[OsStr::new(zone), file.as_os_str()]).await
    }
}

async fn run(program: &Path, args: &[&OsStr]) -> Result<(), CheckError> {
    let out = tokio::process::Command::new(program)
        .args(args)
        .output()
        .await
        .map_err(|e| CheckError::NotRun(format!("{}: {e}", program.display())))?;
    if out.status.success() {
        return Ok(());
    }
    let said: Vec<String> = [&out.stdout, &out.stderr]
        .iter()
        .map(|b| String::from_utf8_lossy(b).trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    let said = if said.is_empty() { out.status.to_string() } else { said.join("; ") };
    Err(CheckError::Rejected(said.replace('\n', "; ")))
}
