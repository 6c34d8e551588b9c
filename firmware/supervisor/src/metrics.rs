//! Prometheus metrics (`GET /metrics`, text exposition format 0.0.4 / OpenMetrics).
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `routerd_reconcile_duration_seconds` | histogram | |
//! | `routerd_reconciles_total` | counter | `outcome` (`ok`, `error`) |
//! | `routerd_operations_total` | counter | `kind`, `op`, `result` |
//! | `routerd_resources` | gauge | `phase` |
//! | `routerd_orphans` | gauge | |
//! | `routerd_last_successful_reconcile_timestamp_seconds` | gauge | |
//! | `routerd_config_generation` | gauge | |

use std::sync::atomic::AtomicU64;
use std::time::{Duration, SystemTime};

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use routerd_engine::{Phase, ResultDocument};

type Labels = Vec<(&'static str, String)>;

/// The daemon's metrics; cheap to update from the loop, encoded on request.
pub struct Metrics {
    registry: Registry,
    duration: Histogram,
    reconciles: Family<Labels, Counter>,
    operations: Family<Labels, Counter>,
    resources: Family<Labels, Gauge>,
    orphans: Gauge,
    last_success: Gauge<f64, AtomicU64>,
    generation: Gauge,
}

impl Metrics {
    /// Registers every metric.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("routerd");
        let buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];
        let duration = Histogram::new(buckets);
        let reconciles = Family::<Labels, Counter>::default();
        let operations = Family::<Labels, Counter>::default();
        let resources = Family::<Labels, Gauge>::default();
        let orphans = Gauge::default();
        let last_success = Gauge::<f64, AtomicU64>::default();
        let generation = Gauge::default();
        registry.register_with_unit(
            "reconcile_duration",
            "Wall time of a reconcile (observe, plan, apply, verify)",
            prometheus_client::registry::Unit::Seconds,
            duration.clone(),
        );
        registry.register("reconciles", "Reconciles by outcome", reconciles.clone());
        registry.register(
            "operations",
            "Operations executed, by artifact kind, operation and result",
            operations.clone(),
        );
        registry.register(
            "resources",
            "Resources by phase after the last reconcile",
            resources.clone(),
        );
        registry.register("orphans", "Orphans reported by the last reconcile", orphans.clone());
        registry.register_with_unit(
            "last_successful_reconcile_timestamp",
            "Unix time the last reconcile that ran finished",
            prometheus_client::registry::Unit::Seconds,
            last_success.clone(),
        );
        registry.register(
            "config_generation",
            "Generation of the applied config",
            generation.clone(),
        );
        Self {
            registry,
            duration,
            reconciles,
            operations,
            resources,
            orphans,
            last_success,
            generation,
        }
    }

    /// Records a reconcile that produced `doc` in `took`.
    pub fn reconciled(&self, doc: &ResultDocument, took: Duration) {
        self.duration.observe(took.as_secs_f64());
        self.reconciles.get_or_create(&vec![("outcome", "ok".to_string())]).inc();
        for o in &doc.operations {
            let labels = vec![
                ("kind", o.kind.to_string()),
                ("op", o.operation.to_string()),
                ("result", o.result.to_string()),
            ];
            self.operations.get_or_create(&labels).inc();
        }
        for phase in [Phase::Healthy, Phase::RequiresAdoption, Phase::Drifted, Phase::Blocked] {
            let n = doc.resources.iter().filter(|r| r.phase == phase).count();
            let n = i64::try_from(n).unwrap_or(i64::MAX);
            self.resources.get_or_create(&vec![("phase", phase.as_str().to_string())]).set(n);
        }
        self.orphans.set(i64::try_from(doc.orphans.len()).unwrap_or(i64::MAX));
        self.generation.set(i64::try_from(doc.generation).unwrap_or(i64::MAX));
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
        self.last_success.set(now.as_secs_f64());
    }

    /// Records a reconcile that could not run.
    pub fn failed(&self) {
        self.reconciles.get_or_create(&vec![("outcome", "error".to_string())]).inc();
    }

    /// The text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if let Err(e) = encode(&mut out, &self.registry) {
            tracing::error!("encoding metrics: {e}");
        }
        out
    }
}
