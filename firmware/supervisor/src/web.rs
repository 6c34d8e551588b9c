//! The web UI's listener (`--listen ADDR:PORT`): the `routerd-webui` pages over the daemon's
//! snapshots and credentials.
//!
//! Plain HTTP is only served on a loopback address (reached over an SSH tunnel or from the box
//! itself); any other address is served over TLS with a certificate made on first start
//! ([`crate::tls`]), and the session cookie is then `Secure`.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use axum::serve::ListenerExt;

use routerd_ledger::Channel;
use routerd_model::dns_view::DnsView;
use routerd_model::status::{CheckStatus, DoctorCheck};
use routerd_webui::{
    ActivityView, ApplyRequest, ApplyView, ArtifactRow, ArtifactStatus, AttributeChange, Backend,
    BundleView, CandidateView, CheckView, ConfigProblem, ConfirmView, EditRefused, GatewayPoint,
    GatewaySeries, GenerationView, GraphChoice, GraphShown, GraphSvg, InstallView, LedgerRow,
    LinkSeries, OperationView, Options, OrphanView, OtaView, Overview, PlanOp, PlanView,
    RollbackTo, SeriesView, StaleView, Valid, WHOLE_UP_TO,
};
use tokio::sync::{mpsc, oneshot, watch};

use crate::auth::AuthStore;
use crate::control::Snapshot;
use crate::daemon::{
    Actor, ChangeRefused, EngineAnswer, EngineQuery, Msg, RollbackRequest, STOPPING, Stopping,
    Trigger, request,
};
use crate::metrics::Metrics;

/// The daemon's side of the UI.
pub struct WebBackend {
    snapshot: watch::Receiver<Snapshot>,
    loop_tx: mpsc::Sender<Msg>,
    auth: AuthStore,
    metrics: Arc<Metrics>,
    updates: Arc<crate::ota::Updates>,
    /// The last graph layout.
    drawn: Layouts,
    /// The charts' recent history.
    series: crate::series::SharedSeries,
    /// The gateways' probes (their charts).
    gateways: Arc<crate::gateway::GatewayStore>,
}

/// The last graph layout, by the SHA-256 of its DOT, and how it went: the graph page and the
/// image it embeds ask for the same graph, and a layout that failed (or timed out) is not tried
/// again for the same graph. The async lock makes it one layout at a time: a request for the
/// graph being laid out waits for that layout and reads its result (issue 33 §3: each request
/// had started a layout of its own, and failures were not kept).
#[derive(Default)]
struct Layouts(tokio::sync::Mutex<Option<Layout>>);

/// A graph layout: the SHA-256 of its DOT and the drawing, or why there is none.
type Layout = ([u8; 32], Result<GraphSvg, String>);

impl Layouts {
    /// The layout of `dot`: the kept one if it is of the same DOT, else `draw`'s (kept).
    async fn of<F>(&self, dot: &str, draw: impl FnOnce() -> F) -> Result<GraphSvg, String>
    where
        F: std::future::Future<Output = Result<GraphSvg, String>>,
    {
        use sha2::{Digest, Sha256};
        let digest: [u8; 32] = Sha256::digest(dot.as_bytes()).into();
        let mut slot = self.0.lock().await;
        if let Some((_, drawn)) = slot.as_ref().filter(|(seen, _)| *seen == digest) {
            return drawn.clone();
        }
        let drawn = draw().await;
        *slot = Some((digest, drawn.clone()));
        drawn
    }
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

fn sentence(refusal: ChangeRefused) -> String {
    match refusal {
        ChangeRefused::Invalid(errors) => errors.to_string(),
        ChangeRefused::Conflict(m) | ChangeRefused::NotFound(m) | ChangeRefused::Failed(m) => m,
        ChangeRefused::Stale { base, current } => stale_sentence(base, current),
    }
}

/// A stale apply as a sentence.
pub fn stale_sentence(base: u64, current: u64) -> String {
    format!(
        "the text was edited from generation {base}, but generation {current} has been applied \
         since: nothing was changed (look at what changed with `routerctl history diff {base} \
         {current}`, then edit generation {current})"
    )
}

/// A doctor check as the UI shows it: a warn or fail with the page that does its remedy.
fn check_view(c: DoctorCheck) -> CheckView {
    CheckView {
        action: (c.status != CheckStatus::Pass)
            .then(|| crate::doctor::action(&c.code))
            .flatten()
            .map(|(label, href)| (label.to_string(), href.to_string())),
        status: c.status.as_str().to_string(),
        area: c.area,
        code: c.code,
        name: c.name,
        detail: c.detail,
        remedy: c.remedy,
    }
}

/// An attribute difference as the UI shows it.
fn change(d: &routerd_engine::AttributeDiff) -> AttributeChange {
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

    /// Why an apply of `edit`, edited from generation `base`, came too late for `current`:
    /// what changed in between and the edit re-applied to `current` (diffy's three-way merge,
    /// conflicts marked as diff3 marks them).
    async fn stale(&self, base: u64, current: u64, edit: &str) -> StaleView {
        let record = |n| async move { self.history(Some(n)).await.ok().and_then(|mut r| r.pop()) };
        let (old, new) = (record(base).await, record(current).await);
        let old_text = old.map(|r| r.yaml).unwrap_or_default();
        let (new_text, applied_by) = match new {
            Some(r) => {
                let at = humantime::format_rfc3339_seconds(
                    std::time::UNIX_EPOCH + std::time::Duration::from_secs(r.applied_at),
                );
                let channel = serde_json::to_value(r.channel)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                let why = if r.comment.is_empty() { "no comment".into() } else { r.comment };
                (r.yaml, format!("{}/{channel} at {at}: {why}", r.author))
            }
            None => (self.config_text().1, "by another client".into()),
        };
        let (merged, conflicts) = match diffy::merge(&old_text, edit, &new_text) {
            Ok(merged) => (merged, false),
            Err(marked) => (marked, true),
        };
        StaleView {
            base,
            current,
            applied_by,
            changes: crate::control::unified_diff(base, &old_text, current, &new_text),
            merged,
            conflicts,
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
        make: impl FnOnce(oneshot::Sender<Result<T, ChangeRefused>>) -> Msg,
    ) -> Result<T, ChangeRefused> {
        request(&self.loop_tx, make)
            .await
            .unwrap_or_else(|Stopping| Err(ChangeRefused::Failed(STOPPING.into())))
    }

    /// An engine query's answer.
    async fn engine(&self, query: EngineQuery) -> Result<EngineAnswer, ChangeRefused> {
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
            config_fallback: s.config_fallback.as_ref().map(|f| routerd_webui::FallbackView {
                running: f.running,
                errors: f.errors.clone(),
            }),
            timed_out: s.last_timed_out.as_ref().map(|t| routerd_webui::TimedOutView {
                generation: t.generation,
                restored: t.restored,
                at: t.at.clone(),
            }),
            last_reconcile_unix: r.map_or(0, |r| unix_of(&r.started)),
            last_apply: s.last_apply.as_ref().map(|a| ActivityView {
                generation: a.generation,
                by: format!("{} ({})", a.author, a.channel),
                comment: a.comment.clone(),
                at: a.at.clone(),
                at_unix: unix_of(&a.at),
                operations: operation_views(&a.operations),
                total: a.operations_total,
            }),
            last_repair: s.last_repair.as_ref().map(|r| ActivityView {
                generation: 0,
                by: trigger_phrase(&r.trigger),
                comment: String::new(),
                at: r.at.clone(),
                at_unix: unix_of(&r.at),
                operations: operation_views(&r.operations),
                total: r.operations_total,
            }),
            pending_confirm: s.pending_confirm.as_ref().map(|c| ConfirmView {
                generation: c.generation,
                previous: c.previous,
                deadline: c.deadline.clone(),
                deadline_unix: c.deadline_unix,
            }),
        }
    }

    fn series(&self) -> SeriesView {
        let series = self.series.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        SeriesView {
            now_unix_ms: routerd_engine::state::now_ms(),
            interval_seconds: series.interval().as_secs().max(1),
            interfaces: series
                .links()
                .map(|(ifname, points)| LinkSeries {
                    ifname: ifname.to_string(),
                    points: points.iter().copied().collect(),
                })
                .collect(),
            gateways: self
                .gateways
                .all()
                .into_iter()
                .map(|g| GatewaySeries {
                    gateway: g.gateway.to_string(),
                    interface: g.interface,
                    points: g
                        .samples
                        .iter()
                        .map(|s| GatewayPoint {
                            at_unix_ms: s.at_unix_ms,
                            rtt_ms: s.rtt_ms,
                            loss_percent: s.loss_percent,
                        })
                        .collect(),
                })
                .collect(),
            reconciles: series.reconciles().iter().cloned().collect(),
        }
    }

    fn metrics(&self) -> String {
        self.metrics.encode()
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

    fn credentials_stamp(&self) -> String {
        self.auth.stamp()
    }

    fn set_password(&self, password: &str) -> Result<(), String> {
        self.auth.set_password(password).map_err(|e| e.to_string())
    }

    fn config_text(&self) -> (u64, String) {
        let snap = self.snapshot.borrow();
        (snap.status.generation, snap.yaml.to_string())
    }

    fn config_diff(&self, yaml: &str) -> (u64, String) {
        let (generation, running) = self.config_text();
        let diff = similar::TextDiff::from_lines(running.as_str(), yaml)
            .unified_diff()
            .context_radius(3)
            .header(&format!("generation {generation} (running)"), "edited")
            .to_string();
        (generation, diff)
    }

    fn validate(&self, yaml: &str) -> Result<Valid, Vec<ConfigProblem>> {
        let config = routerd_model::parse_config(yaml, "editor").map_err(|e| problems(&e))?;
        let warnings = routerd_engine::config_warnings(&config)
            .into_iter()
            .flat_map(|(id, messages)| messages.into_iter().map(move |m| (id.clone(), m)))
            .collect();
        Ok(Valid { resources: config.spec.resources.len(), warnings })
    }

    async fn apply(&self, request: ApplyRequest) -> Result<ApplyView, EditRefused> {
        let edit = request.yaml.clone();
        let apply = crate::daemon::ApplyRequest {
            yaml: request.yaml,
            source: "editor".into(),
            author: "admin".into(),
            channel: Channel::Web,
            comment: request.comment,
            confirm: (request.confirm_seconds > 0)
                .then(|| std::time::Duration::from_secs(request.confirm_seconds)),
            client: Some(request.client),
            base: request.base,
        };
        match self.call(|reply| Msg::Apply(apply, reply)).await {
            Ok(o) => {
                Ok(ApplyView { generation: o.generation, phase: o.phase, warnings: o.warnings })
            }
            Err(ChangeRefused::Invalid(errors)) => Err(EditRefused::Invalid(problems(&errors))),
            Err(ChangeRefused::Stale { base, current }) => {
                Err(EditRefused::Stale(self.stale(base, current, &edit).await))
            }
            Err(other) => Err(EditRefused::Other(sentence(other))),
        }
    }

    async fn confirm(&self, client: IpAddr) -> Result<(), String> {
        let by = Actor::web(client);
        self.call(|reply| Msg::Confirm(by, reply)).await.map(|_| ()).map_err(sentence)
    }

    async fn plan(&self, yaml: String) -> Result<PlanView, EditRefused> {
        let doc = match self.engine(EngineQuery::Plan(Some(yaml))).await {
            Ok(EngineAnswer::Document(doc)) => doc,
            Ok(_) => return Err(EditRefused::Other("unexpected engine answer".into())),
            Err(ChangeRefused::Invalid(errors)) => {
                return Err(EditRefused::Invalid(problems(&errors)));
            }
            Err(other) => return Err(EditRefused::Other(sentence(other))),
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
                    cleanup: o.cleanup.to_string(),
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
                owner: std::iter::once(e.owner).chain(e.co_owners).collect::<Vec<_>>().join(", "),
                generation: e.generation,
            })
            .collect())
    }

    fn artifacts(&self) -> Vec<ArtifactRow> {
        let snap = self.snapshot.borrow();
        snap.result.as_deref().map(artifact_rows).unwrap_or_default()
    }

    async fn graph_dot(&self) -> Result<String, String> {
        match self.engine(EngineQuery::Graph).await {
            Ok(EngineAnswer::Dot(dot)) => Ok(dot),
            Ok(_) => Err("unexpected engine answer".into()),
            Err(refusal) => Err(sentence(refusal)),
        }
    }

    async fn graph_svg(&self, choice: GraphChoice) -> Result<GraphSvg, String> {
        use routerd_engine::drawing::{GraphView, Shown};
        let view = match choice {
            GraphChoice::Auto => GraphView::Auto { up_to: WHOLE_UP_TO },
            GraphChoice::Whole => GraphView::Whole,
            GraphChoice::Resource(id) => GraphView::Resource(id),
        };
        let drawing = match self.engine(EngineQuery::Drawing(view)).await {
            Ok(EngineAnswer::Drawing(drawing)) => drawing,
            Ok(_) => return Err("unexpected engine answer".into()),
            Err(refusal) => return Err(sentence(refusal)),
        };
        let shown = match drawing.shown {
            Shown::Whole => GraphShown::Whole,
            Shown::Kinds => GraphShown::Kinds,
            Shown::Resource => GraphShown::Resource,
        };
        let drawn = self.drawn.of(&drawing.dot, || render_graph(&drawing.dot)).await;
        drawn.map(|g| GraphSvg { shown, artifacts: drawing.artifacts, own: drawing.own, ..g })
    }

    fn resource_ids(&self) -> Vec<String> {
        self.snapshot.borrow().resources.iter().map(|r| r.id.clone()).collect()
    }

    async fn doctor(&self) -> Result<Vec<CheckView>, String> {
        let checks =
            request(&self.loop_tx, Msg::Doctor).await.map_err(|Stopping| STOPPING.to_string())?;
        Ok(checks.into_iter().map(check_view).collect())
    }

    async fn dns(&self) -> Result<DnsView<CheckView>, String> {
        let view = crate::dns_view::read(&self.snapshot, &self.loop_tx)
            .await
            .unwrap_or_else(|Stopping| Err(ChangeRefused::Failed(STOPPING.into())))
            .map_err(sentence)?;
        Ok(view.map_checks(check_view))
    }

    async fn ota(&self) -> Result<OtaView, String> {
        self.updates.view().await
    }

    async fn ota_upload(
        &self,
        file_name: String,
        chunks: mpsc::Receiver<Result<axum::body::Bytes, String>>,
    ) -> Result<BundleView, String> {
        self.updates.upload(file_name, chunks).await
    }

    async fn ota_fetch(&self, url: String) -> Result<BundleView, String> {
        self.updates.fetch(url).await
    }

    async fn ota_discard(&self) {
        self.updates.discard().await;
    }

    async fn ota_install(&self, digest: String) -> Result<(), String> {
        self.updates.install_staged(&digest).await
    }

    fn ota_progress(&self) -> watch::Receiver<InstallView> {
        self.updates.progress()
    }

    async fn ota_boot_next(&self, slot: String) -> Result<String, String> {
        self.updates.boot_next(slot).await
    }

    async fn reboot(&self) -> Result<(), String> {
        self.updates.reboot().await
    }

    async fn rollback_to(&self, request: RollbackTo) -> Result<(), String> {
        let rollback = RollbackRequest {
            target: Some(request.generation),
            by: Actor::web(request.client),
            confirm: (request.confirm_seconds > 0)
                .then(|| std::time::Duration::from_secs(request.confirm_seconds)),
            comment: request.comment,
        };
        self.call(|reply| Msg::Rollback(rollback, reply)).await.map(|_| ()).map_err(sentence)
    }

    async fn rollback(&self, client: IpAddr) -> Result<(), String> {
        let rollback = RollbackRequest::pending(Actor::web(client));
        self.call(|reply| Msg::Rollback(rollback, reply)).await.map(|_| ()).map_err(sentence)
    }
}

/// Seconds since the Unix epoch of an RFC 3339 time the daemon wrote (0 if it does not parse).
fn unix_of(rfc3339: &str) -> u64 {
    humantime::parse_rfc3339(rfc3339)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs())
}

/// What triggered a reconcile, as the Overview says it: `address,route` → "a change of the
/// host's addresses and routes".
fn trigger_phrase(triggers: &[Trigger]) -> String {
    let mut host = Vec::new();
    let mut other = Vec::new();
    for t in triggers {
        match t {
            Trigger::Link => host.push("links"),
            Trigger::Address => host.push("addresses"),
            Trigger::Route => host.push("routes"),
            Trigger::Rule => host.push("rules"),
            Trigger::Nftables => host.push("nftables"),
            Trigger::Controller => other.push("a controller's notice (a DNS NOTIFY)"),
            Trigger::Other => host.push("objects"),
            Trigger::Resync => other.push("the periodic resync"),
            Trigger::Start => other.push("the start"),
            Trigger::Api => other.push("a reconcile asked for"),
            Trigger::Health => other.push("a health check's verdict"),
            Trigger::State => other.push("a state change"),
            Trigger::Aftr => other.push("an AFTR lookup"),
            Trigger::Apply => other.push("apply"),
        }
    }
    let mut parts: Vec<String> = Vec::new();
    if !host.is_empty() {
        parts.push(format!("a change of the host's {}", host.join(" and ")));
    }
    parts.extend(other.into_iter().map(str::to_owned));
    parts.join(" and ")
}

/// The status's operations as the Overview lists them.
fn operation_views(ops: &[routerd_model::status::OperationSummary]) -> Vec<OperationView> {
    ops.iter()
        .map(|o| OperationView {
            operation: o.operation.clone(),
            artifact: o.artifact.clone(),
            result: o.result.clone(),
        })
        .collect()
}

/// A Result document's artifacts as the browser lists them: each resource's intents joined
/// with what was observed, then the orphans.
fn artifact_rows(doc: &routerd_engine::ResultDocument) -> Vec<ArtifactRow> {
    use std::collections::HashMap;
    let mut rows = Vec::new();
    for resource in &doc.resources {
        let observed: HashMap<(&str, &str), &routerd_engine::result::ObservedArtifact> =
            resource.observed.iter().map(|o| ((o.kind.as_ref(), &*o.name), o)).collect();
        for intent in &resource.artifacts {
            let seen = observed.get(&(intent.kind.as_ref(), &*intent.name));
            let (status, detail) = match seen {
                None => (ArtifactStatus::Unobserved, String::new()),
                Some(o) if !o.present => (ArtifactStatus::Missing, String::new()),
                Some(o) if !o.owned => (ArtifactStatus::Unowned, differing(&o.drift)),
                Some(o) if !o.drift.is_empty() => (ArtifactStatus::Drifted, differing(&o.drift)),
                Some(_) => (ArtifactStatus::InSync, String::new()),
            };
            rows.push(ArtifactRow {
                kind: intent.kind.to_string(),
                name: intent.name.to_string(),
                owner: resource.id.clone(),
                status,
                apply_with: intent.apply_with.as_str().to_string(),
                detail,
            });
        }
    }
    rows.extend(doc.orphans.iter().map(|o| ArtifactRow {
        kind: o.kind.clone(),
        name: o.name.clone(),
        owner: o.owner.clone(),
        status: ArtifactStatus::Orphan,
        apply_with: String::new(),
        detail: format!("{}: {}", o.cleanup, o.reason),
    }));
    rows
}

/// `differs: mtu, adminUp` for drifted attributes.
fn differing(drift: &[routerd_engine::AttributeDiff]) -> String {
    if drift.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = drift.iter().map(|d| d.attribute.as_str()).collect();
    format!("differs: {}", names.join(", "))
}

/// How long a graph layout may take before its child is killed.
const RENDER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Draws `dot` in a child process (`routerd render-graph`): layout-rs can panic, and a release
/// build aborts on panic, so the daemon never runs it itself.
async fn render_graph(dot: &str) -> Result<GraphSvg, String> {
    use tokio::io::AsyncWriteExt;
    let exe = std::env::current_exe().map_err(|e| format!("finding routerd's binary: {e}"))?;
    let mut child = tokio::process::Command::new(exe)
        .arg("render-graph")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("starting the graph layout: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("the layout's stdin")?;
    let text = dot.to_string();
    let feed = tokio::spawn(async move {
        let _ = stdin.write_all(text.as_bytes()).await;
    });
    let out = tokio::time::timeout(RENDER_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| format!("the graph layout took longer than {RENDER_TIMEOUT:?}"))?
        .map_err(|e| format!("the graph layout: {e}"))?;
    let _ = feed.await;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        return Err(format!("the graph layout failed ({}): {}", out.status, why.trim()));
    }
    let text = String::from_utf8(out.stdout).map_err(|_| "the layout wrote non-UTF-8")?;
    let (count, svg) = text.split_once('\n').unwrap_or((&text, ""));
    let nodes = count.trim().parse().map_err(|_| format!("the layout wrote {count:?}"))?;
    Ok(GraphSvg { nodes, svg: (!svg.is_empty()).then(|| svg.to_string()), ..GraphSvg::default() })
}

/// `routerd render-graph`: DOT on stdin; the node count on the first line of stdout, then the
/// SVG (nothing when the graph is too big to draw). Exit 1 when the DOT does not parse.
pub fn render_graph_child() -> anyhow::Result<u8> {
    use std::io::{Read, Write};
    let mut dot = String::new();
    std::io::stdin().read_to_string(&mut dot).context("reading DOT from stdin")?;
    match routerd_webui::render_svg(&dot) {
        Ok(drawn) => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{}", drawn.nodes)?;
            out.write_all(drawn.svg.unwrap_or_default().as_bytes())?;
            Ok(0)
        }
        Err(e) => {
            eprintln!("the graph does not parse: {e}");
            Ok(1)
        }
    }
}

/// What the web listener needs from the daemon.
pub struct WebOptions {
    /// `--listen`.
    pub addr: SocketAddr,
    /// The daemon's snapshots.
    pub snapshot: watch::Receiver<Snapshot>,
    /// The daemon loop.
    pub loop_tx: mpsc::Sender<Msg>,
    /// The daemon's metrics (`/metrics` on this listener too).
    pub metrics: Arc<Metrics>,
    /// `--state-dir`: credentials and the TLS certificate.
    pub state_dir: PathBuf,
    /// RAUC, the staged bundle and the install in flight.
    pub updates: Arc<crate::ota::Updates>,
    /// The charts' recent history.
    pub series: crate::series::SharedSeries,
    /// The gateways' probes (their charts).
    pub gateways: Arc<crate::gateway::GatewayStore>,
}

/// Binds `addr` and serves the UI until the process stops: plain HTTP on a loopback address,
/// HTTPS (see [`crate::tls`]) on any other.
///
/// Errors: the bind fails; the certificate cannot be loaded or made.
pub async fn bind(opts: WebOptions) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let addr = opts.addr;
    let tls = !addr.ip().is_loopback();
    let identity = if tls {
        let identity = crate::tls::load_or_create(&opts.state_dir, addr.ip())
            .context("the web UI's TLS certificate")?;
        if identity.created {
            tracing::info!(
                "made a self-signed certificate for the web UI in {}",
                opts.state_dir.join("tls").display()
            );
        }
        Some(identity)
    } else {
        None
    };
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let backend = Arc::new(WebBackend {
        snapshot: opts.snapshot,
        loop_tx: opts.loop_tx,
        auth: AuthStore::new(&opts.state_dir),
        metrics: opts.metrics,
        updates: opts.updates,
        drawn: Layouts::default(),
        series: opts.series,
        gateways: opts.gateways,
    });
    let app = routerd_webui::router(backend, Options { tls });
    let service = app.into_make_service_with_connect_info::<SocketAddr>();
    Ok(match identity {
        None => {
            tracing::info!("web UI on http://{addr}/");
            tokio::spawn(async move {
                if let Err(e) = axum::serve(listener, service).await {
                    tracing::error!("web UI: {e}");
                }
            })
        }
        Some(identity) => {
            tracing::info!(
                "web UI on https://{addr}/ (certificate SHA-256 fingerprint {})",
                identity.fingerprint
            );
            let listener = crate::tls::TlsListener::new(listener, identity.config)?;
            tokio::spawn(async move {
                // `tap_io` gives axum the peer address for `ConnectInfo` (login rate limit,
                // lockout guard).
                if let Err(e) = axum::serve(listener.tap_io(|_| {}), service).await {
                    tracing::error!("web UI: {e}");
                }
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn a_repairs_trigger_is_said_in_words() {
        use Trigger::{Address, Health, Link, Nftables, Resync, Route};
        assert_eq!(
            trigger_phrase(&[Address, Route]),
            "a change of the host's addresses and routes"
        );
        assert_eq!(trigger_phrase(&[Nftables]), "a change of the host's nftables");
        assert_eq!(
            trigger_phrase(&[Link, Resync]),
            "a change of the host's links and the periodic resync"
        );
        assert_eq!(trigger_phrase(&[Health]), "a health check's verdict");
    }

    #[tokio::test]
    async fn one_layout_runs_for_requests_of_one_graph_and_a_failure_is_kept() {
        let layouts = Layouts::default();
        let runs = AtomicUsize::new(0);
        let draw = |result: Result<GraphSvg, String>| {
            let runs = &runs;
            move || async move {
                runs.fetch_add(1, Ordering::SeqCst);
                // Held across awaits: the other requests queue behind it.
                for _ in 0..10 {
                    tokio::task::yield_now().await;
                }
                result
            }
        };
        let failed = || Err::<GraphSvg, String>("the layout took longer than 30s".into());
        // Five requests at once for one graph whose layout fails: one layout, five answers.
        let answers =
            futures::future::join_all((0..5).map(|_| layouts.of("digraph { a }", draw(failed()))))
                .await;
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert!(answers.iter().all(|a| a.as_ref().is_err_and(|e| e.contains("30s"))));
        // Asked again later: the failure is read, not tried again.
        assert!(layouts.of("digraph { a }", draw(failed())).await.is_err());
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        // Another graph is laid out.
        let drawn = layouts.of("digraph { b }", draw(Ok(GraphSvg::default()))).await;
        assert!(drawn.is_ok());
        assert_eq!(runs.load(Ordering::SeqCst), 2);
    }
}
