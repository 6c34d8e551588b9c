//! The command line: [`Cli`] and its subcommands as clap derives them. The doc comments are the
//! help text.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};

const EXIT_CODES: &str = "\
Exit codes:
  0   success
  1   the daemon answered with an error
  2   doctor, dns status: at least one check failed
  64  usage error
  69  the daemon is not reachable (not running, wrong --socket, not permitted)";

/// Operate the routerd daemon from the console.
#[derive(Parser, Debug)]
#[command(name = "routerctl", version, after_help = EXIT_CODES)]
pub(crate) struct Cli {
    /// The daemon's control socket.
    #[arg(long, global = true, value_name = "PATH", default_value = "/run/routerd/control.sock")]
    pub(crate) socket: PathBuf,
    /// Output format.
    #[arg(short = 'o', long = "output", global = true, value_enum, default_value_t = Output::Table)]
    pub(crate) output: Output,
    #[command(subcommand)]
    pub(crate) command: Command,
}

impl Cli {
    /// Whether to print the API's document (`-o json`, `-o yaml`) rather than a table.
    pub(crate) fn structured(&self) -> bool {
        self.output != Output::Table
    }
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
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
        /// Only this area (reconcile, ledger, routes, firewall, mgmt, leases, gateway, disk,
        /// runtime, dns).
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
    /// The DNS controller: zones, RRsets and servers as the last reconcile found them.
    Dns {
        #[command(subcommand)]
        what: DnsCommand,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum DnsCommand {
    /// One row per zone and server: RRsets owned, foreign RRsets, and what is wrong.
    Zones,
    /// One row per RRset: its TTL and data, the resource declaring it (or `foreign`), its
    /// state.
    Records {
        /// Only the RRsets of this zone (`lab.example`; the final dot is optional).
        #[arg(long, value_name = "ZONE")]
        zone: Option<String>,
    },
    /// The servers (unit running, named.conf in place), then the `dns` doctor checks; exits 2
    /// when one fails.
    Status,
}

/// The confirm window and comment of a change (an apply, a rollback to a generation).
#[derive(clap::Args, Debug)]
pub(crate) struct Window {
    /// The confirm window, written as router.yaml writes durations (`90s`, `2.5m`, `1h30m`):
    /// unconfirmed by then, the running config comes back.
    #[arg(long, default_value = "90s", value_parser = routerd_model::parse_duration)]
    pub(crate) confirm_timeout: Duration,
    /// Without a confirm window.
    #[arg(long, conflicts_with = "confirm_timeout")]
    pub(crate) no_confirm: bool,
    /// Why (kept with the new generation).
    #[arg(long, default_value = "")]
    pub(crate) comment: String,
}

impl Window {
    /// The window in seconds as the control API takes it (0: none; at least 1 otherwise).
    pub(crate) fn seconds(&self) -> u64 {
        if self.no_confirm { 0 } else { self.confirm_timeout.as_secs().max(1) }
    }
}

#[derive(Subcommand, Debug)]
pub(crate) enum OtaCommand {
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
pub(crate) enum HistoryCommand {
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
pub(crate) enum Output {
    /// Plain text that fits 80 columns.
    Table,
    /// The API's JSON.
    Json,
    /// The same document as YAML.
    Yaml,
}
