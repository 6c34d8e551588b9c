//! Which config `routerd serve` starts with (issue 33 §3): a file that is missing or does not
//! load no longer keeps the daemon from starting; it runs the last applied generation, or
//! nothing on a first boot, and says so.

use std::path::Path;

use routerd_engine::ConfigInput;
use routerd_ledger::{GenerationRecord, GenerationResult};
use routerd_model::status::{ConfigFallback, FALLBACK_ERRORS};

/// The config the daemon starts with.
pub(crate) struct Startup {
    pub(crate) yaml: String,
    pub(crate) input: ConfigInput,
    /// Set when the config file could not be used.
    pub(crate) fallback: Option<ConfigFallback>,
}

/// An empty router: what runs (without reconciling) when nothing else can.
const UNCONFIGURED: &str = "apiVersion: routerd.net/v1alpha1\nkind: Router\nmetadata:\n  name: unconfigured\nspec:\n  resources: []\n";

/// Picks the config to start with, in this order: the generation waiting for its confirm
/// (`pending`); the config file; the newest applied generation in the ledger (the file missing
/// or invalid, say after a refused SIGHUP edit); nothing at all (first boot without a valid
/// file). Each fallback is logged and reported in the status and the doctor.
///
/// Errors: the ledger cannot be read.
pub(crate) fn startup_config(
    ledger: &routerd_ledger::Ledger,
    pending: Option<u64>,
    path: &Path,
) -> anyhow::Result<Startup> {
    let parse = |yaml: String, file: &str| {
        ConfigInput::parse(&yaml, file).map(|input| Startup { yaml, input, fallback: None })
    };
    if let Some(generation) = pending
        && let Some(record) = ledger.generation_record(generation)?
    {
        match parse(record.yaml, &format!("generation {generation}")) {
            Ok(start) => return Ok(start),
            Err(errors) => tracing::error!(
                "generation {generation} waits for its confirm but does not load:\n{errors}"
            ),
        }
    }
    let errors = match routerd_model::read_source(path)
        .and_then(|yaml| parse(yaml, &path.display().to_string()))
    {
        Ok(start) => return Ok(start),
        Err(errors) => errors,
    };
    let listed: Vec<String> =
        errors.iter().take(FALLBACK_ERRORS).map(ToString::to_string).collect();
    let applied = |r: &GenerationRecord| {
        matches!(r.result, GenerationResult::Applied | GenerationResult::Degraded)
    };
    for record in ledger.generation_records()?.into_iter().rev().filter(applied) {
        let generation = record.generation;
        if let Ok(mut start) = parse(record.yaml, &format!("generation {generation}")) {
            tracing::error!(
                "{} does not load; running generation {generation}, the last applied, instead:\n{errors}",
                path.display()
            );
            start.fallback = Some(ConfigFallback { errors: listed, running: Some(generation) });
            return Ok(start);
        }
    }
    tracing::error!(
        "{} does not load and no applied generation does; nothing is applied until a config is:\n{errors}",
        path.display()
    );
    let mut start = parse(UNCONFIGURED.to_string(), "unconfigured")
        .map_err(|e| anyhow::anyhow!("the empty config: {e}"))?;
    start.fallback = Some(ConfigFallback { errors: listed, running: None });
    Ok(start)
}
