//! `routerd`: the daemon (`routerd serve`, see `daemon.rs`) and one-shot engine commands
//! against the host or a named network namespace: what the daemon runs on every reconcile,
//! exposed for the serial console, scripts and tests.

// The allocator's settings are the process's, made first thing in `main`: binary only.
mod malloc;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use routerd::{control, daemon, ota, service, web};
use routerd_engine::registry::Registry;
use routerd_engine::{
    ConfigInput, EngineError, OperationResult, ResultDocument, Session, SessionOptions,
};

const EXIT_CODES: &str = "\
Exit codes:
  0   success (reconcile: every resource Healthy or RequiresAdoption)
  1   the config is invalid; every error was printed and nothing was changed
  2   finished, but some resources are Blocked or some operations failed
  3   adopt --apply refused at least one candidate whose attributes differ
  64  usage error
  69  host unavailable (network namespace missing, not permitted)
  74  ledger file unreadable or unwritable
  75  temporary failure (ledger locked by another routerd, netlink busy); retry";

/// The note on `routerd serve --help`: durations take the config's grammar (`parse_duration`).
const DURATIONS: &str = "\
Durations are written as in router.yaml (Go's time.ParseDuration): numbers with
a unit (ns, us, ms, s, m, h), fractions and sums allowed: 300ms, 1.5s, 1h30m.
Words (1 minute, 5min) and days (1d) are refused.";

/// Reconciles a declarative router.yaml into the kernel, proving ownership before any delete.
#[derive(Parser, Debug)]
#[command(name = "routerd", version, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// A duration flag that must be more than zero (a zero `--resync` would be a busy loop, and
/// tokio's interval refuses it): the config's grammar, then the bound.
fn positive_duration(text: &str) -> Result<Duration, String> {
    match routerd_model::parse_duration(text) {
        Ok(d) if d.is_zero() => Err("must be more than 0".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the daemon: reconcile now, again on every host change and every resync interval,
    /// and serve the control API; stop cleanly on SIGTERM.
    #[command(after_help = DURATIONS)]
    Serve {
        #[command(flatten)]
        target: TargetArgs,
        /// The control API's Unix socket.
        #[arg(long, value_name = "PATH", default_value = control::DEFAULT_SOCKET)]
        control_socket: PathBuf,
        /// Reconcile at least this often (`60s`, `5m`, `1h`).
        #[arg(long, default_value = "60s", value_parser = positive_duration)]
        resync: Duration,
        /// Coalesce triggers arriving within this window into one reconcile.
        #[arg(long, default_value = "200ms", value_parser = routerd_model::parse_duration)]
        debounce: Duration,
        /// Read the interface counters the charts draw this often (they keep the last hour).
        #[arg(long, default_value = "10s", value_parser = routerd_model::parse_duration)]
        sample_interval: Duration,
        /// Probe each default route's gateway (neighbour and ICMP echo) this often.
        #[arg(long, default_value = "5s", value_parser = routerd_model::parse_duration)]
        gateway_interval: Duration,
        /// Where the daemon keeps its credentials (admin password hash, setup token).
        #[arg(long, value_name = "DIR", default_value = "/var/lib/routerd")]
        state_dir: PathBuf,
        /// Serve the web UI on this address: plain HTTP on loopback, HTTPS with a certificate
        /// made on first start (STATE_DIR/tls) on any other address.
        #[arg(long, value_name = "ADDR:PORT")]
        listen: Option<std::net::SocketAddr>,
        /// Confirm this boot's slot to RAUC (mark it good) once the doctor passes; mark it bad
        /// and reboot into the other slot when it does not pass within --health-window.
        #[arg(long)]
        health_gate: bool,
        /// How long a boot has to pass the doctor (`90s`, `5m`).
        #[arg(long, default_value = "5m", value_parser = routerd_model::parse_duration)]
        health_window: Duration,
        /// RAUC's D-Bus address (`unix:path=…`); the system bus by default.
        #[arg(long, value_name = "ADDRESS")]
        rauc_bus: Option<String>,
        /// Let the web UI's "install from a URL" download from loopback and this router's own
        /// addresses (refused by default: a URL must not reach the router's local services).
        #[arg(long)]
        ota_fetch_local: bool,
        /// Never reboot: the health gate marks a failing slot bad and the web UI's Reboot only
        /// logs (tests, which must not reboot their host).
        #[arg(long, hide = true)]
        no_reboot: bool,
    },
    /// Lay out Graphviz DOT from stdin and write the SVG to stdout (the daemon runs this as a
    /// child process for the web UI's graph page, so a layout failure cannot stop the daemon).
    #[command(hide = true)]
    RenderGraph,
    /// Parse and validate the config; print every error with file:line:column.
    Validate {
        /// The router.yaml to check.
        #[arg(long, default_value = "/etc/routerd/router.yaml")]
        config: PathBuf,
    },
    /// Show the artifacts of every resource as they are on the host (read-only).
    Observe(EngineArgs),
    /// Show what reconcile would change, orphans and adoption candidates (read-only).
    Plan(EngineArgs),
    /// Apply the config to the host.
    Reconcile {
        /// Run once and exit (the daemon that keeps reconciling is `routerd serve`).
        #[arg(long, required = true)]
        once: bool,
        /// Compute and print everything, change nothing on the host or in the ledger.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        engine: EngineArgs,
    },
    /// Record existing host artifacts that match the config as owned (ledger only).
    Adopt {
        /// List candidates (read-only).
        #[arg(long, conflicts_with = "apply", required_unless_present = "apply")]
        candidates: bool,
        /// Record every candidate whose observed attributes match the config.
        #[arg(long)]
        apply: bool,
        #[command(flatten)]
        engine: EngineArgs,
    },
}

/// What to apply, where, and the ledger that proves ownership there.
#[derive(Args, Debug)]
struct TargetArgs {
    /// The router.yaml to apply.
    #[arg(long, default_value = "/etc/routerd/router.yaml")]
    config: PathBuf,
    /// Target the network namespace /run/netns/NAME instead of the host's own.
    #[arg(long, value_name = "NAME")]
    netns: Option<String>,
    /// The ownership ledger.
    #[arg(long, value_name = "PATH", default_value = routerd_ledger::DEFAULT_LEDGER_PATH)]
    ledger: PathBuf,
    /// Keep the files of units and dnsmasq under PATH instead of / (one root per router when
    /// several run on one host).
    #[arg(long, value_name = "PATH")]
    host_root: Option<PathBuf>,
    /// D-Bus address of the bus systemd is on, instead of the system bus (tests).
    #[arg(long, value_name = "ADDRESS", hide = true)]
    systemd_bus: Option<String>,
}

#[derive(Args, Debug)]
struct EngineArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Table)]
    output: Output,
    /// Print the wall time of each phase (parse, render, observe, plan, apply, ...) to stderr.
    #[arg(long)]
    timings: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Output {
    /// The Result document as JSON.
    Json,
    /// A table that fits 80 columns.
    Table,
    /// The planned transition as Graphviz DOT (plan and --dry-run only).
    Dot,
}

fn main() -> ExitCode {
    // Cannot fail with the constants it passes; a refusal would only cost memory.
    let _ = malloc::fix_mmap_threshold();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 64 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let code = e.downcast_ref::<EngineError>().map_or(1, EngineError::exit_code);
            eprintln!("routerd: {e:#}");
            ExitCode::from(code)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<u8> {
    // Before any config is parsed: registering the controller crates' kinds makes every parse
    // of this process know them.
    let registry = routerd::controllers::registry()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    match cli.command {
        Command::Serve {
            target,
            control_socket,
            resync,
            debounce,
            sample_interval,
            gateway_interval,
            state_dir,
            listen,
            health_gate,
            health_window,
            rauc_bus,
            ota_fetch_local,
            no_reboot,
        } => {
            service::init_logging();
            let ota = ota::OtaOptions {
                health_gate,
                health_window,
                rauc_bus,
                state_file: state_dir.join(ota::GATE_STATE_FILE),
                reboot: !no_reboot,
                staging_dir: state_dir.join(ota::STAGING_DIR),
                fetch_local: ota_fetch_local,
            };
            let opts = daemon::ServeOptions {
                config: target.config,
                netns: target.netns,
                ledger: target.ledger,
                host_root: target.host_root,
                systemd_bus: target.systemd_bus,
                control_socket,
                resync,
                debounce,
                state_dir,
                listen,
                ota,
                sample_interval: sample_interval.max(Duration::from_millis(100)),
                gateway_interval,
            };
            runtime.block_on(daemon::serve(opts, registry))
        }
        Command::RenderGraph => web::render_graph_child(),
        Command::Validate { config } => Ok(validate(&config)),
        Command::Observe(args) => runtime.block_on(engine_command(args, Mode::Observe, &registry)),
        Command::Plan(args) => runtime.block_on(engine_command(args, Mode::Plan, &registry)),
        Command::Reconcile { once: _, dry_run, engine } => {
            let mode = if dry_run { Mode::DryRun } else { Mode::Reconcile };
            runtime.block_on(engine_command(engine, mode, &registry))
        }
        Command::Adopt { candidates: _, apply, engine } => {
            let mode = if apply { Mode::AdoptApply } else { Mode::AdoptCandidates };
            runtime.block_on(engine_command(engine, mode, &registry))
        }
    }
}

fn validate(path: &std::path::Path) -> u8 {
    match routerd_model::load(path) {
        Ok(cfg) => {
            println!("{}: valid ({} resources)", path.display(), cfg.spec.resources.len());
            // What applies with a caveat (two resources declaring one artifact, a value the
            // firmware replaces): the render's warnings, from the config alone.
            for (id, messages) in routerd_engine::config_warnings(&cfg) {
                for message in messages {
                    println!("warning: {id}: {message}");
                }
            }
            0
        }
        Err(errors) => {
            eprintln!("{errors}");
            1
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Observe,
    Plan,
    DryRun,
    Reconcile,
    AdoptCandidates,
    AdoptApply,
}

async fn engine_command(args: EngineArgs, mode: Mode, registry: &Registry) -> anyhow::Result<u8> {
    let started = std::time::Instant::now();
    let config = match ConfigInput::load(&args.target.config) {
        Ok(c) => c,
        Err(errors) => {
            eprintln!("{errors}");
            return Ok(1);
        }
    };
    let parse_time = started.elapsed();
    let writes = matches!(mode, Mode::Reconcile | Mode::AdoptApply);
    let opts = SessionOptions {
        netns: args.target.netns.clone(),
        ledger_path: args.target.ledger.clone(),
        read_only: !writes,
        root: args.target.host_root.clone(),
        system_bus: args.target.systemd_bus.clone(),
        exit_after_command: true,
    };
    let opened = std::time::Instant::now();
    let mut session = Session::open_with(opts, registry).await?;
    let open_time = opened.elapsed();
    if matches!(args.output, Output::Dot) {
        if !matches!(mode, Mode::Plan | Mode::DryRun) {
            eprintln!("routerd: -o dot is for plan and reconcile --dry-run");
            return Ok(64);
        }
        print!("{}", session.dot(&config, SystemTime::now()).await?);
        return Ok(0);
    }
    let now = SystemTime::now();
    let (doc, code) = match mode {
        Mode::Observe => {
            let doc = session.observe(&config, now).await?;
            (doc, 0)
        }
        Mode::Plan | Mode::DryRun => {
            let doc = session.plan(&config, now, mode == Mode::DryRun).await?;
            let code = if doc.phase == routerd_engine::Phase::Blocked { 2 } else { 0 };
            (doc, code)
        }
        Mode::Reconcile => {
            let doc = session.reconcile(&config, now).await?;
            let failed = doc.operations.iter().any(|o| o.result == OperationResult::Failed);
            let code = if failed || doc.phase == routerd_engine::Phase::Blocked { 2 } else { 0 };
            (doc, code)
        }
        Mode::AdoptCandidates => (session.adopt(&config, now, false).await?, 0),
        Mode::AdoptApply => {
            let doc = session.adopt(&config, now, true).await?;
            let refused = doc.adoption_candidates.iter().any(|c| !c.adoptable);
            (doc, if refused { 3 } else { 0 })
        }
    };
    let printed = std::time::Instant::now();
    print_doc(&doc, args.output)?;
    let output_time = printed.elapsed();
    if args.timings {
        eprintln!("timing parse {:.1} ms", parse_time.as_secs_f64() * 1e3);
        eprintln!("timing open {:.1} ms", open_time.as_secs_f64() * 1e3);
        for (phase, took) in session.timings() {
            eprintln!("timing {phase} {:.1} ms", took.as_secs_f64() * 1e3);
        }
        eprintln!("timing output {:.1} ms", output_time.as_secs_f64() * 1e3);
        eprintln!("timing total {:.1} ms", started.elapsed().as_secs_f64() * 1e3);
    }
    // The session (ledger file, sockets) closes properly; the config and the document of a
    // large router are hundreds of thousands of small allocations that the exit frees anyway.
    drop(session);
    std::mem::forget((config, doc));
    Ok(code)
}

fn print_doc(doc: &ResultDocument, output: Output) -> anyhow::Result<()> {
    match output {
        Output::Json => {
            // Streamed: the document of a large config is megabytes of JSON.
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            doc.write_json_pretty(&mut out).context("writing JSON")?;
            std::io::Write::write_all(&mut out, b"\n").context("writing JSON")?;
            std::io::Write::flush(&mut out).context("writing JSON")?;
        }
        Output::Table | Output::Dot => print!("{}", routerd_engine::table::render(doc)),
    }
    Ok(())
}
