//! Golden plan cases (issue 35 §2; holo's conformance steps, nmstate's `gen_diff_test_files`):
//! one directory per case under `firmware/engine/tests/golden/`, holding
//!
//! - `router.yaml`: the config;
//! - `observed.json`: the host, a list of artifact specs as the inventories give them
//!   (`{"type": "link", "ifname": "eth0", ...}`), served by a recorded host;
//! - `ledger.json` (optional): the ledger's owned entries (`kind`, `name`, `owner`);
//! - `plan.txt`: the expected plan, one line per operation, orphan, adoption candidate and
//!   resource phase, for review;
//! - `result.json`: the expected Result document of `routerd plan`.
//!
//! The engine plans the config against that host through [`Session::with_backends`], exactly as
//! `routerd plan` does against a real one, at a fixed time. `ROUTERD_GOLDEN_UPDATE=1` rewrites
//! `plan.txt` and `result.json` from what the engine plans; review them as diffs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use routerd_engine::{ConfigInput, ResultDocument, Session};
use routerd_host::{
    ApplyWith, Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, Backend, HostError, Target,
};
use routerd_ledger::{Attributes, EntryState, Ledger, LedgerChange, LedgerEntry, Origin};
use serde::Deserialize;

/// Set to rewrite the expected files.
const UPDATE: &str = "ROUTERD_GOLDEN_UPDATE";
/// The time every case is planned at: 2026-01-01T00:00:00Z.
const AT_UNIX: u64 = 1_767_225_600;

/// A host recorded in a file: lists its artifacts of one configurator family, applies nothing.
struct RecordedHost {
    family: ApplyWith,
    kinds: &'static [ArtifactKind],
    host: Arc<Vec<Artifact>>,
}

impl RecordedHost {
    /// One backend per family a routerd build has a configurator for; rtnetlink also lists
    /// the PPP links pppd brings up, as the real one does.
    fn all(host: Vec<Artifact>) -> Vec<Arc<dyn Backend>> {
        let host = Arc::new(host);
        let families = [
            ApplyWith::Rtnetlink,
            ApplyWith::Nftnl,
            ApplyWith::Procfs,
            ApplyWith::Systemd,
            ApplyWith::Dnsmasq,
            ApplyWith::Networkd,
            ApplyWith::Timesyncd,
            ApplyWith::Files,
            ApplyWith::Hostnamed,
            ApplyWith::LogSinks,
            ApplyWith::Scheduler,
        ];
        families
            .into_iter()
            .map(|family| {
                let mut kinds: Vec<ArtifactKind> = family.kinds().collect();
                if family == ApplyWith::Rtnetlink {
                    kinds.extend(ApplyWith::Pppd.kinds());
                }
                let kinds: &'static [ArtifactKind] = Vec::leak(kinds);
                Arc::new(RecordedHost { family, kinds, host: Arc::clone(&host) })
                    as Arc<dyn Backend>
            })
            .collect()
    }

    fn refuse(&self, key: &ArtifactKey) -> HostError {
        HostError::Invalid { key: key.clone(), message: "a recorded host applies nothing".into() }
    }
}

impl Backend for RecordedHost {
    fn apply_with(&self) -> ApplyWith {
        self.family
    }

    fn kinds(&self) -> &'static [ArtifactKind] {
        self.kinds
    }

    fn observe<'a>(
        &'a self,
        kind: ArtifactKind,
        _wanted: &'a [ArtifactKey],
    ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
        let listed = self.host.iter().filter(|a| a.key.kind == kind).cloned().collect();
        Box::pin(async move { Ok(listed) })
    }

    fn create<'a>(&'a self, desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move { Err(self.refuse(&desired.key)) })
    }

    fn modify<'a>(
        &'a self,
        _observed: &'a Artifact,
        desired: &'a Artifact,
    ) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move { Err(self.refuse(&desired.key)) })
    }

    fn delete<'a>(&'a self, observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move { Err(self.refuse(&observed.key)) })
    }
}

/// An owned ledger entry of `ledger.json`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OwnedEntry {
    kind: String,
    name: String,
    owner: String,
    #[serde(default)]
    adopted: bool,
}

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/golden")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("router.yaml").is_file())
        .collect();
    cases.sort();
    cases
}

fn read(case: &Path, file: &str) -> Option<String> {
    std::fs::read_to_string(case.join(file)).ok()
}

/// Plans `case` and returns the Result document.
async fn plan(case: &Path) -> ResultDocument {
    let name = case.display();
    let yaml = read(case, "router.yaml").expect("router.yaml");
    let input = ConfigInput::parse(&yaml, "router.yaml")
        .unwrap_or_else(|e| panic!("{name}: router.yaml: {e}"));
    let specs: Vec<ArtifactSpec> = read(case, "observed.json")
        .map(|text| serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}")))
        .unwrap_or_default();
    let host = specs.into_iter().map(Artifact::new).collect();

    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = Ledger::open(&dir.path().join("ledger.redb")).expect("ledger");
    if let Some(text) = read(case, "ledger.json") {
        let owned: Vec<OwnedEntry> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: ledger.json: {e}"));
        let puts: Vec<LedgerChange> = owned
            .into_iter()
            .map(|e| {
                LedgerChange::Put(LedgerEntry {
                    kind: e.kind,
                    name: e.name,
                    owner: e.owner,
                    co_owners: Vec::new(),
                    origin: if e.adopted { Origin::Adopted } else { Origin::Created },
                    state: EntryState::Owned,
                    generation: 1,
                    recorded_at: AT_UNIX,
                    attributes: Attributes::of(&serde_json::Value::Null),
                })
            })
            .collect();
        ledger.apply(&puts).expect("ledger entries");
    }
    let target = Target::new(None, Some(dir.path().to_path_buf()));
    let session = Session::with_backends(RecordedHost::all(host), ledger, target);
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(AT_UNIX);
    session.plan(&input, at, false).await.unwrap_or_else(|e| panic!("{name}: plan: {e}"))
}

/// The review form of a plan: operations in order, then orphans, candidates and phases.
fn summary(doc: &ResultDocument) -> String {
    let mut out = String::new();
    for op in &doc.operations {
        let (what, kind, name) = (&op.operation, &op.kind, &op.name);
        out.push_str(&format!("{what} {kind}/{name} {} ({})\n", op.result, op.reason));
    }
    for orphan in &doc.orphans {
        let cleanup = serde_json::to_value(orphan.cleanup).expect("serialises");
        out.push_str(&format!("orphan {}/{} {cleanup}\n", orphan.kind, orphan.name));
    }
    for c in &doc.adoption_candidates {
        let adoptable = if c.adoptable { "adoptable" } else { "not adoptable" };
        out.push_str(&format!("candidate {}/{} {adoptable} ({})\n", c.kind, c.name, c.reason));
    }
    for resource in &doc.resources {
        out.push_str(&format!("phase {} {}\n", resource.id, resource.phase.as_str()));
    }
    out.push_str(&format!("phase document {}\n", doc.phase.as_str()));
    out
}

#[tokio::test]
async fn every_golden_case_plans_as_recorded() {
    let update = std::env::var_os(UPDATE).is_some();
    let mut failures = Vec::new();
    let cases = cases();
    assert!(!cases.is_empty(), "no golden cases");
    let mut kinds_covered = BTreeSet::new();
    for case in &cases {
        let doc = plan(case).await;
        for r in &doc.resources {
            if let Some(kind) = r.id.split('/').nth(2) {
                kinds_covered.insert(kind.to_string());
            }
        }
        let plan_txt = summary(&doc);
        let mut result = serde_json::to_string_pretty(&doc).expect("serialises");
        result.push('\n');
        for (file, got) in [("plan.txt", &plan_txt), ("result.json", &result)] {
            if update {
                std::fs::write(case.join(file), got).expect("write");
            } else if read(case, file).as_deref() != Some(got.as_str()) {
                failures.push(format!("{}/{file}", case.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "plans differ from the recorded ones (rerun with {UPDATE}=1 and review the diff): {failures:#?}"
    );
    // At least one case per resource kind.
    let missing: Vec<&str> = routerd_model::ResourceKind::ALL
        .iter()
        .map(|k| k.as_str())
        .filter(|k| !kinds_covered.contains(*k))
        .collect();
    assert!(missing.is_empty(), "resource kinds without a golden case: {missing:?}");
}
