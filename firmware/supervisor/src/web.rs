//! The web UI's listener (`--listen ADDR:PORT`): the `routerd-webui` pages over the daemon's
//! snapshots and credentials.
//!
//! Plain HTTP is only served on a loopback address; TLS for other addresses (a certificate
//! generated on first boot) comes with the rest of the web UI, so until then a non-loopback
//! `--listen` is refused rather than served in the clear.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use routerd_ledger::Channel;
use routerd_webui::{
    ApplyRequest, ApplyView, AttributeChange, Backend, CandidateView, CheckView, ConfigProblem,
    ConfirmView, GenerationView, LedgerRow, OperationView, Options, OrphanView, Overview, PlanOp,
    PlanView, Refused,
};
use tokio::sync::{mpsc, oneshot, watch};

use crate::auth::AuthStore;
use crate::control::Snapshot;
use crate::daemon::{EngineAnswer, EngineQuery, Msg, Refusal, STOPPING, Stopping, request};

/// The daemon's side of the UI.
pub struct WebBackend {
    snapshot: watch::Receiver<Snapshot>,
    loop_tx: mpsc::Sender<Msg>,
    auth: AuthStore,
}

fn problems(errors: &routerd_model::ConfigErrors) -> Vec<ConfigProblem> {
    errors
        .0
        .iter()
        .map(|e| ConfigProblem {
            line: e.line,
            column: e.column,
            resource: e.resource.clone(),
            message: if e.path.is_empty() {
                e.message.clone()
            } else {
                format!("{}: {}", e.path, e.message)
            },
        })
        .collect()
}

fn sentence(refusal: Refusal) -> String {
    match refusal {
        Refusal::Invalid(errors) => errors.to_string(),
        Refusal::Conflict(m) | Refusal::NotFound(m) | Refusal::Failed(m) => m,
    }
}

/// An attribute difference as the UI shows it.
fn change(d: &routerd_host::AttributeDiff) -> AttributeChange {
    AttributeChange {
        attribute: d.attribute.clone(),
        before: d.observed.to_string(),
        after: d.desired.to_string(),
    }
}

/// A Result document's adoption candidates as the UI shows them.
fn candidate_views(doc: &routerd_engine::ResultDocument) -> Vec<CandidateView> {
    doc.adoption_candidates
        .iter()
        .map(|c| CandidateView {
            artifact: format!("{}/{}", c.kind, c.name),
            adoptable: c.adoptable,
            differs: c.diff.iter().map(change).collect(),
        })
        .collect()
}

impl WebBackend {
    /// The adopt Result document (recording the `only` candidates when `apply`).
    async fn adoption(
        &self,
        apply: bool,
        only: Option<Vec<String>>,
    ) -> Result<Box<routerd_engine::ResultDocument>, String> {
        match self.engine(EngineQuery::Adopt { apply, only }).await {
            Ok(EngineAnswer::Document(doc)) => Ok(doc),
            Ok(_) => Err("unexpected engine answer".into()),
            Err(refusal) => Err(sentence(refusal)),
        }
    }

    /// Recorded generations (all without text, or one with it) from the daemon loop.
    async fn history(
        &self,
        which: Option<u64>,
    ) -> Result<Vec<routerd_ledger::GenerationRecord>, String> {
        self.call(|tx| Msg::Generations(which, tx)).await.map_err(sentence)
    }

    /// The loop's answer to `make`; the loop being gone is a refusal like the others.
    async fn call<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<Result<T, Refusal>>) -> Msg,
    ) -> Result<T, Refusal> {
        request(&self.loop_tx, make)
            .await
            .unwrap_or_else(|Stopping| Err(Refusal::Failed(STOPPING.into())))
    }

    /// An engine query's answer.
    async fn engine(&self, query: EngineQuery) -> Result<EngineAnswer, Refusal> {
        self.call(|tx| Msg::Engine(query, tx)).await
    }
}

impl Backend for WebBackend {
    fn overview(&self) -> Overview {
        let snap = self.snapshot.borrow();
        let s = &snap.status;
        let doc = snap.result.as_deref();
        let r = s.last_reconcile.as_ref();
        Overview {
            phase: s.phase.clone().unwrap_or_else(|| "-".into()),
            generation: s.generation,
            last_reconcile: r.map_or_else(
                || "none yet".into(),
                |r| format!("{} by {}, {} ms", r.started, r.trigger, r.duration_ms),
            ),
            last_error: s.last_error.clone(),
            drifted: r.map_or(0, |r| r.drifted),
            blocked: r.map_or(0, |r| r.blocked),
            orphans: r.map_or(0, |r| r.orphans),
            candidates: doc.map_or(0, |d| d.adoption_candidates.len()),
            operations: doc
                .map(|d| {
                    d.operations
                        .iter()
                        .take(20)
                        .map(|o| OperationView {
                            operation: o.operation.to_string(),
                            artifact: format!("{}/{}", o.kind, o.name),
                            result: o.result.to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            pending_confirm: s.pending_confirm.as_ref().map(|c| ConfirmView {
                generation: c.generation,
                previous: c.previous,
                deadline: c.deadline.clone(),
                deadline_unix: c.deadline_unix,
            }),
        }
    }

    fn password_set(&self) -> bool {
        self.auth.password_set()
    }

    fn verify_password(&self, password: &str) -> bool {
        self.auth.verify_password(password)
    }

    fn verify_setup_token(&self, token: &str) -> bool {
        self.auth.verify_setup_token(token)
    }

    fn set_password(&self, password: &str) -> Result<(), String> {
        self.auth.set_password(password).map_err(|e| e.to_string())
    }

    fn config_text(&self) -> String {
        self.snapshot.borrow().yaml.to_string()
    }

    fn validate(&self, yaml: &str) -> Result<usize, Vec<ConfigProblem>> {
        routerd_model::parse_config(yaml, "editor")
            .map(|c| c.spec.resources.len())
            .map_err(|e| problems(&e))
    }

    async fn apply(&self, request: ApplyRequest) -> Result<ApplyView, Refused> {
        let apply = crate::daemon::ApplyRequest {
            yaml: request.yaml,
            source: "editor".into(),
            author: "admin".into(),
            channel: Channel::Web,
            comment: request.comment,
            confirm: (request.confirm_seconds > 0)
                .then(|| std::time::Duration::from_secs(request.confirm_seconds)),
            client: Some(request.client),
        };
        match self.call(|reply| Msg::Apply(apply, reply)).await {
            Ok(o) => {
                Ok(ApplyView { generation: o.generation, phase: o.phase, warnings: o.warnings })
            }
            Err(Refusal::Invalid(errors)) => Err(Refused::Invalid(problems(&errors))),
            Err(other) => Err(Refused::Other(sentence(other))),
        }
    }

    async fn confirm(&self) -> Result<(), String> {
        self.call(Msg::Confirm).await.map(|_| ()).map_err(sentence)
    }

    async fn plan(&self, yaml: String) -> Result<PlanView, Refused> {
        let doc = match self.engine(EngineQuery::Plan(Some(yaml))).await {
            Ok(EngineAnswer::Document(doc)) => doc,
            Ok(_) => return Err(Refused::Other("unexpected engine answer".into())),
            Err(Refusal::Invalid(errors)) => return Err(Refused::Invalid(problems(&errors))),
            Err(other) => return Err(Refused::Other(sentence(other))),
        };
        Ok(PlanView {
            phase: doc.phase.as_str().to_string(),
            operations: doc
                .operations
                .iter()
                .map(|o| PlanOp {
                    operation: o.operation.to_string(),
                    artifact: format!("{}/{}", o.kind, o.name),
                    owner: o.owner.to_string(),
                    reason: o.reason.clone(),
                    diff: o.diff.iter().map(change).collect(),
                })
                .collect(),
            orphans: doc
                .orphans
                .iter()
                .map(|o| OrphanView {
                    artifact: format!("{}/{}", o.kind, o.name),
                    cleanup: o.cleanup.clone(),
                    reason: o.reason.clone(),
                    remediation: o.remediation.clone(),
                })
                .collect(),
            candidates: candidate_views(&doc),
        })
    }

    async fn generations(&self) -> Result<Vec<GenerationView>, String> {
        let records = self.history(None).await?;
        Ok(records
            .into_iter()
            .map(|r| GenerationView {
                generation: r.generation,
                applied_at: humantime::format_rfc3339_seconds(
                    std::time::UNIX_EPOCH + std::time::Duration::from_secs(r.applied_at),
                )
                .to_string(),
                result: serde_json::to_value(r.result)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                by: format!(
                    "{}/{}",
                    serde_json::to_value(r.channel)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    r.author
                ),
                comment: r.comment,
            })
            .collect())
    }

    async fn diff(&self, from: u64, to: u64) -> Result<String, String> {
        let old = self.history(Some(from)).await?.pop().map(|r| r.yaml).unwrap_or_default();
        let new = self.history(Some(to)).await?.pop().map(|r| r.yaml).unwrap_or_default();
        Ok(crate::control::unified_diff(from, &old, to, &new))
    }

    async fn candidates(&self) -> Result<Vec<CandidateView>, String> {
        Ok(candidate_views(&*self.adoption(false, None).await?))
    }

    async fn adopt(&self, artifacts: Vec<String>) -> Result<Vec<String>, String> {
        let doc = self.adoption(true, Some(artifacts)).await?;
        Ok(doc.adopted_artifacts.iter().map(|a| format!("{}/{}", a.kind, a.name)).collect())
    }

    async fn ledger(&self) -> Result<Vec<LedgerRow>, String> {
        let entries = match self.engine(EngineQuery::Ledger).await {
            Ok(EngineAnswer::Entries(entries)) => entries,
            Ok(_) => return Err("unexpected engine answer".into()),
            Err(refusal) => return Err(sentence(refusal)),
        };
        let word = |v: serde_json::Result<serde_json::Value>| {
            v.ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
        };
        Ok(entries
            .into_iter()
            .map(|e| LedgerRow {
                origin: word(serde_json::to_value(e.origin)),
                state: word(serde_json::to_value(e.state)),
                kind: e.kind,
                name: e.name,
                owner: e.owner,
                generation: e.generation,
            })
            .collect())
    }

    async fn doctor(&self) -> Result<Vec<CheckView>, String> {
        let checks =
            request(&self.loop_tx, Msg::Doctor).await.map_err(|Stopping| STOPPING.to_string())?;
        Ok(checks
            .into_iter()
            .map(|c| CheckView {
                status: c.status.as_str().to_string(),
                area: c.area,
                code: c.code,
                name: c.name,
                detail: c.detail,
                remedy: c.remedy,
            })
            .collect())
    }

    async fn rollback_to(&self, generation: u64) -> Result<(), String> {
        self.call(|reply| Msg::Rollback(Some(generation), reply))
            .await
            .map(|_| ())
            .map_err(sentence)
    }

    async fn rollback(&self) -> Result<(), String> {
        self.call(|reply| Msg::Rollback(None, reply)).await.map(|_| ()).map_err(sentence)
    }
}

/// Binds `addr` and serves the UI until the process stops.
///
/// Errors: `addr` is not loopback (no TLS yet), or the bind fails.
pub async fn bind(
    addr: SocketAddr,
    snapshot: watch::Receiver<Snapshot>,
    loop_tx: mpsc::Sender<Msg>,
    state_dir: &Path,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    if !addr.ip().is_loopback() {
        anyhow::bail!(
            "--listen {addr}: only loopback addresses are served for now (plain HTTP); \
             TLS for other addresses comes with the rest of the web UI"
        );
    }
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let backend = Arc::new(WebBackend { snapshot, loop_tx, auth: AuthStore::new(state_dir) });
    let app = routerd_webui::router(backend, Options { tls: false });
    tracing::info!("web UI on http://{addr}/");
    Ok(tokio::spawn(async move {
        let service = app.into_make_service_with_connect_info::<SocketAddr>();
        if let Err(e) = axum::serve(listener, service).await {
            tracing::error!("web UI: {e}");
        }
    }))
}
