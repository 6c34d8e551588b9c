//! Handler tests: every route through the real router, with a test backend (the daemon's side
//! of the `Backend` trait is tested with the daemon).

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use axum::response::Response;
use routerd_model::dns_view::{DnsRecordRow, DnsServerRow, DnsView, DnsZoneRow, RecordState, Side};
use routerd_webui::{
    ActivityView, ApplyRequest, ApplyView, ArtifactRow, ArtifactStatus, AttributeChange, Backend,
    BundleView, CandidateView, CheckView, ConfigProblem, ConfirmView, EditRefused, FallbackView,
    GateRow, GatewayPoint, GatewaySeries, GenerationView, GraphChoice, GraphShown, GraphSvg,
    InstallPhase, InstallView, LedgerRow, LinkPoint, LinkSeries, OperationView, Options,
    OrphanView, OtaView, Overview, PlanOp, PlanView, ReconcilePoint, RollbackTo, SeriesView,
    SlotRow, StaleView, Valid, router,
};
use tower::ServiceExt;

/// A plan graph as the engine exports it.
const GRAPH: &str = "digraph \"t\" {\n  rankdir=BT;\n  \"linux.link/lan0\" [label=\"link lan0\\ncreate\", color=darkgreen];\n  \"a\" [label=\"address <10.0.0.1>\"];\n  \"a\" -> \"linux.link/lan0\" [tooltip=\"on\"];\n}\n";

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

#[derive(Default)]
struct TestBackend {
    /// The routes check fails (a hand-made change broke a route).
    route_broken: std::sync::atomic::AtomicBool,
    password: Mutex<Option<String>>,
    applied: Mutex<Vec<ApplyRequest>>,
    confirm: Mutex<Option<ConfirmView>>,
    calls: Mutex<Vec<&'static str>>,
    /// The staged bundle's source and bytes.
    staged: Mutex<Option<(String, Vec<u8>)>>,
    /// Digests passed to `ota_install`.
    installs: Mutex<Vec<String>>,
    progress: tokio::sync::watch::Sender<InstallView>,
    rebooted: std::sync::atomic::AtomicBool,
    /// Password and token checks: made so far, running now, most running at once.
    checks: [std::sync::atomic::AtomicUsize; 3],
    /// The config file that did not load at start, if the test says so.
    fallback: Mutex<Option<FallbackView>>,
}

impl TestBackend {
    /// Counts a password or token check while it "hashes" for 20 ms.
    fn slow_check<T>(&self, check: impl FnOnce() -> T) -> T {
        use std::sync::atomic::Ordering::SeqCst;
        self.checks[0].fetch_add(1, SeqCst);
        let now = self.checks[1].fetch_add(1, SeqCst) + 1;
        self.checks[2].fetch_max(now, SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(20));
        let out = check();
        self.checks[1].fetch_sub(1, SeqCst);
        out
    }
}

/// What the test backend's "RAUC" accepts: a bundle starting with this.
const SIGNED: &[u8] = b"SIGNED-BUNDLE";
const DIGEST: &str = "manifest-sha256:0f1e2d3c";

fn bundle_view(source: &str, bytes: usize) -> BundleView {
    BundleView {
        source: source.into(),
        bytes: bytes as u64,
        compatible: "routerd-x86_64".into(),
        version: "2.0.<b>1</b>".into(),
        format: "verity".into(),
        digest: DIGEST.into(),
        signer: "CN=routerd release signing,O=Example".into(),
        signer_issuer: "CN=Example CA, valid until 2036-01-01T00:00:00Z".into(),
        ..BundleView::default()
    }
}

/// Valid when every line is `key: value` or blank; the test's stand-in for the daemon's parser.
fn check(yaml: &str) -> Result<usize, Vec<ConfigProblem>> {
    let problems: Vec<ConfigProblem> = yaml
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.contains(": "))
        .map(|(i, l)| ConfigProblem {
            line: u32::try_from(i + 1).unwrap_or(0),
            column: 1,
            resource: Some("net.routerd.net/v1alpha1/Interface/lan".into()),
            message: format!("not a mapping: {l}"),
        })
        .collect();
    if problems.is_empty() { Ok(yaml.lines().count()) } else { Err(problems) }
}

impl Backend for TestBackend {
    fn overview(&self) -> Overview {
        Overview {
            phase: "Drifted".into(),
            generation: 7,
            last_reconcile: "2026-11-21T03:00:00Z by address, 4 ms".into(),
            drifted: 1,
            last_apply: Some(ActivityView {
                generation: 7,
                by: "admin (web)".into(),
                comment: "more <i>routes</i>".into(),
                at: "2026-11-21T02:59:00Z".into(),
                at_unix: 1,
                operations: vec![OperationView {
                    operation: "create".into(),
                    artifact: "linux.ipv4.address/lan0/<b>x</b>".into(),
                    result: "failed".into(),
                }],
                total: 3,
            }),
            last_repair: Some(ActivityView {
                by: "nftables".into(),
                operations: vec![OperationView {
                    operation: "create".into(),
                    artifact: "nft.table/inet/routerd_filter_home".into(),
                    result: "done".into(),
                }],
                total: 1,
                ..ActivityView::default()
            }),
            pending_confirm: self.confirm.lock().expect("lock").clone(),
            config_fallback: self.fallback.lock().expect("lock").clone(),
            ..Overview::default()
        }
    }
    fn series(&self) -> SeriesView {
        let now = 10_000_000;
        SeriesView {
            now_unix_ms: now,
            interval_seconds: 10,
            interfaces: vec![LinkSeries {
                ifname: "lan0".into(),
                points: (0..30)
                    .map(|i| LinkPoint {
                        at_unix_ms: now - (30 - i) * 10_000,
                        rx_bps: 2e6,
                        tx_bps: 1e5 * i as f64,
                        rx_errors: u64::from(i == 3),
                        tx_errors: 0,
                    })
                    .collect(),
            }],
            gateways: vec![GatewaySeries {
                gateway: "192.0.2.1".into(),
                interface: "wan0".into(),
                points: vec![
                    GatewayPoint { at_unix_ms: now - 20_000, rtt_ms: Some(1.5), loss_percent: 0.0 },
                    GatewayPoint { at_unix_ms: now - 10_000, rtt_ms: None, loss_percent: 50.0 },
                ],
            }],
            reconciles: vec![ReconcilePoint {
                at_unix_ms: now - 60_000,
                duration_ms: 12,
                phase: "Drifted".into(),
            }],
        }
    }
    fn metrics(&self) -> String {
        "# TYPE routerd_orphans gauge\nrouterd_orphans 2\n# EOF\n".into()
    }
    fn artifacts(&self) -> Vec<ArtifactRow> {
        let row = |kind: &str, name: &str, status, detail: &str| ArtifactRow {
            kind: kind.into(),
            name: name.into(),
            owner: "net.routerd.net/v1alpha1/Interface/lan".into(),
            status,
            apply_with: "rtnetlink".into(),
            detail: detail.into(),
        };
        vec![
            row("linux.link", "lan0", ArtifactStatus::InSync, ""),
            row("linux.link", "wan0", ArtifactStatus::Unowned, "differs: mtu"),
            row("linux.ipv4.address", "lan0/<i>10.0.0.1</i>/24", ArtifactStatus::Missing, ""),
            row("nft.table", "inet/old", ArtifactStatus::Orphan, "delete: in the ledger"),
        ]
    }
    async fn graph_dot(&self) -> Result<String, String> {
        Ok(GRAPH.into())
    }
    async fn graph_svg(&self, choice: GraphChoice) -> Result<GraphSvg, String> {
        let drawn = routerd_webui::render_svg(GRAPH)?;
        Ok(match choice {
            GraphChoice::Resource(id) if id.ends_with("/lan") => {
                GraphSvg { shown: GraphShown::Resource, own: 1, artifacts: 2, ..drawn }
            }
            GraphChoice::Resource(_) => GraphSvg { shown: GraphShown::Resource, ..drawn },
            GraphChoice::Auto => GraphSvg { shown: GraphShown::Kinds, artifacts: 900, ..drawn },
            GraphChoice::Whole => GraphSvg { artifacts: 2, ..drawn },
        })
    }
    fn resource_ids(&self) -> Vec<String> {
        vec!["net.routerd.net/v1alpha1/Interface/lan".into()]
    }
    fn password_set(&self) -> bool {
        self.password.lock().expect("lock").is_some()
    }
    fn verify_password(&self, password: &str) -> bool {
        self.slow_check(|| self.password.lock().expect("lock").as_deref() == Some(password))
    }
    fn credentials_stamp(&self) -> String {
        self.password.lock().expect("lock").clone().unwrap_or_default()
    }
    fn verify_setup_token(&self, token: &str) -> bool {
        self.slow_check(|| !self.password_set() && token == TOKEN)
    }
    fn set_password(&self, password: &str) -> Result<(), String> {
        if password.len() < 8 {
            return Err("the password must have at least 8 characters".into());
        }
        *self.password.lock().expect("lock") = Some(password.into());
        Ok(())
    }
    fn config_text(&self) -> (u64, String) {
        (1, "name: lan\nifname: lan0\n".into())
    }
    /// A stand-in for the daemon's unified diff: every running line missing from `yaml` removed,
    /// every line of `yaml` not running added, in one hunk.
    fn config_diff(&self, yaml: &str) -> (u64, String) {
        let (generation, running) = self.config_text();
        if running == yaml {
            return (generation, String::new());
        }
        let mut diff = format!("--- generation {generation} (running)\n+++ edited\n@@ -1 +1 @@\n");
        for line in running.lines().filter(|l| !yaml.lines().any(|y| y == *l)) {
            diff.push_str(&format!("-{line}\n"));
        }
        for line in yaml.lines() {
            let sign = if running.lines().any(|r| r == line) { ' ' } else { '+' };
            diff.push_str(&format!("{sign}{line}\n"));
        }
        (generation, diff)
    }
    fn validate(&self, yaml: &str) -> Result<Valid, Vec<ConfigProblem>> {
        let resources = check(yaml)?;
        let warnings = yaml
            .lines()
            .filter_map(|l| l.strip_prefix("# warn: "))
            .map(|w| ("net.routerd.net/v1alpha1/Interface/lan".to_string(), w.to_string()))
            .collect();
        Ok(Valid { resources, warnings })
    }
    async fn apply(&self, request: ApplyRequest) -> Result<ApplyView, EditRefused> {
        check(&request.yaml).map_err(EditRefused::Invalid)?;
        // Generation 1 is applied: an edit of another is stale.
        if let Some(base) = request.base.filter(|b| *b != 1) {
            return Err(EditRefused::Stale(StaleView {
                base,
                current: 1,
                applied_by: "root/cli at 2026-11-26T16:30:04Z: from the console".into(),
                changes: "@@ -1 +1 @@\n-name: wan\n+name: lan\n".into(),
                merged: format!("{}# re-applied\n", request.yaml),
                conflicts: false,
            }));
        }
        if request.confirm_seconds > 0 {
            *self.confirm.lock().expect("lock") = Some(ConfirmView {
                generation: 2,
                previous: 1,
                deadline: "2099-01-01T00:00:00Z".into(),
                deadline_unix: 4_070_908_800,
            });
        }
        self.applied.lock().expect("lock").push(request);
        Ok(ApplyView { generation: 2, phase: "Healthy".into(), warnings: Vec::new() })
    }
    async fn confirm(&self, _: std::net::IpAddr) -> Result<(), String> {
        self.calls.lock().expect("lock").push("confirm");
        self.confirm.lock().expect("lock").take().map(|_| ()).ok_or_else(|| "nothing waits".into())
    }
    async fn plan(&self, yaml: String) -> Result<PlanView, EditRefused> {
        check(&yaml).map_err(EditRefused::Invalid)?;
        Ok(PlanView {
            phase: "Healthy".into(),
            operations: vec![PlanOp {
                operation: "modify".into(),
                artifact: "linux.link/lan0".into(),
                owner: "net.routerd.net/v1alpha1/Interface/lan".into(),
                reason: "attributes differ".into(),
                diff: vec![AttributeChange {
                    attribute: "adminUp".into(),
                    before: "false".into(),
                    after: "<script>true</script>".into(),
                }],
            }],
            orphans: vec![OrphanView {
                artifact: "linux.ipv4.address/lan0/10.0.0.1/24".into(),
                cleanup: "keep".into(),
                reason: "addresses are never deleted".into(),
                remediation: "remove it by hand".into(),
            }],
            candidates: vec![CandidateView {
                artifact: "linux.link/wan0".into(),
                adoptable: false,
                differs: vec![AttributeChange {
                    attribute: "mtu".into(),
                    before: "1500".into(),
                    after: "1492".into(),
                }],
            }],
        })
    }
    async fn generations(&self) -> Result<Vec<GenerationView>, String> {
        Ok((1..=3)
            .map(|g| GenerationView {
                generation: g,
                applied_at: format!("2026-11-21T03:0{g}:00Z"),
                result: "applied".into(),
                by: "web/admin".into(),
                comment: format!("change <{g}>"),
            })
            .collect())
    }
    async fn diff(&self, from: u64, to: u64) -> Result<String, String> {
        if to > 3 {
            return Err(format!("no generation {to}"));
        }
        Ok(format!("--- generation {from}\n+++ generation {to}\n@@ -1 +1 @@\n-a: 1\n+a: 2\n"))
    }
    async fn candidates(&self) -> Result<Vec<CandidateView>, String> {
        Ok(vec![
            CandidateView { artifact: "linux.link/lan0".into(), adoptable: true, differs: vec![] },
            CandidateView {
                artifact: "linux.link/wan0".into(),
                adoptable: false,
                differs: vec![AttributeChange {
                    attribute: "mtu".into(),
                    before: "1500".into(),
                    after: "1492".into(),
                }],
            },
        ])
    }
    async fn adopt(&self, artifacts: Vec<String>) -> Result<Vec<String>, String> {
        self.calls.lock().expect("lock").push("adopt");
        Ok(artifacts.into_iter().filter(|a| a == "linux.link/lan0").collect())
    }
    async fn ledger(&self) -> Result<Vec<LedgerRow>, String> {
        let row = |kind: &str, name: &str, state: &str| LedgerRow {
            kind: kind.into(),
            name: name.into(),
            owner: format!("net.routerd.net/v1alpha1/Owner/{name}"),
            origin: "created".into(),
            state: state.into(),
            generation: 1,
        };
        Ok(vec![
            row("linux.ipv4.route", "1000:100.64.0.0/24:0", "owned"),
            row("linux.ipv4.route", "1000:100.64.1.0/24:0", "pending"),
            row("nft.table", "inet/routerd_filter", "owned"),
        ])
    }
    async fn doctor(&self) -> Result<Vec<CheckView>, String> {
        let broken = self.route_broken.load(std::sync::atomic::Ordering::SeqCst);
        Ok(vec![CheckView {
            area: "routes".into(),
            code: "T001".into(),
            name: "routes in place".into(),
            status: if broken { "fail" } else { "pass" }.into(),
            detail: if broken { "linux.ipv4.route/1000:0.0.0.0/0:0 missing" } else { "1 declared" }
                .into(),
            remedy: if broken { "routerctl reconcile repairs them" } else { "" }.into(),
            action: broken.then(|| ("Show the plan".into(), "/graph".into())),
        }])
    }
    async fn dns(&self) -> Result<DnsView<CheckView>, String> {
        let record = |zone: &str, name: &str, rtype: &str, data: &[&str], state| {
            let remote = zone == "corp.example.";
            DnsRecordRow {
                side: if remote { Side::Remote } else { Side::Local },
                server: if remote { "corp" } else { "auth" }.into(),
                zone: zone.into(),
                owner: if name == "@" { zone.into() } else { format!("{name}.{zone}") },
                rtype: rtype.into(),
                ttl: (state != RecordState::Missing).then_some(300),
                rdata: data.iter().map(|d| d.to_string()).collect(),
                resource: if state == RecordState::Foreign {
                    String::new()
                } else {
                    format!("net.routerd.net/v1alpha1/ARecord/{name}")
                },
                foreign: state == RecordState::Foreign,
                owned: state != RecordState::Foreign,
                state,
                detail: match state {
                    RecordState::Drift => "the server has rdata 192.0.2.99".into(),
                    RecordState::Unobserved => "TsigBadSig: the server refused the key".into(),
                    RecordState::Foreign => "not in router.yaml, left alone".into(),
                    _ => String::new(),
                },
            }
        };
        Ok(DnsView {
            servers: vec![
                DnsServerRow {
                    name: "auth".into(),
                    side: Side::Local,
                    zones: 1,
                    state: "unit running, named.conf in place, zones readable".into(),
                    ok: true,
                },
                DnsServerRow {
                    name: "corp".into(),
                    side: Side::Remote,
                    zones: 1,
                    state: "unreadable: corp.example. (TsigBadSig: the server refused the key)"
                        .into(),
                    ok: false,
                },
            ],
            zones: vec![
                DnsZoneRow {
                    server: "auth".into(),
                    side: Side::Local,
                    zone: "lab.example.".into(),
                    declared: 2,
                    owned: 2,
                    foreign: 1,
                    drifted: 1,
                    state: "1 drifted".into(),
                    ok: false,
                    ..DnsZoneRow::default()
                },
                DnsZoneRow {
                    server: "corp".into(),
                    side: Side::Remote,
                    zone: "corp.example.".into(),
                    declared: 1,
                    owned: 1,
                    foreign: 0,
                    unreadable: Some("TsigBadSig: the server refused the key".into()),
                    state: "unreadable: TsigBadSig: the server refused the key".into(),
                    ok: false,
                    ..DnsZoneRow::default()
                },
            ],
            records: vec![
                record(
                    "lab.example.",
                    "printer",
                    "TXT",
                    &["\"<script>x</script>\""],
                    RecordState::Foreign,
                ),
                record("lab.example.", "router", "A", &["192.0.2.1"], RecordState::InSync),
                record(
                    "lab.example.",
                    "www",
                    "A",
                    &["192.0.2.10", "192.0.2.11"],
                    RecordState::Drift,
                ),
                record("corp.example.", "@", "TXT", &["\"v=spf1 -all\""], RecordState::Unobserved),
            ],
            checks: vec![CheckView {
                area: "dns".into(),
                code: "N006".into(),
                name: "foreign RRsets".into(),
                status: "warn".into(),
                detail: "1 RRset(s) made outside router.yaml, left alone".into(),
                remedy: "declare them in router.yaml (then adopt)".into(),
                action: None,
            }],
            observed: true,
        })
    }
    async fn rollback_to(&self, request: RollbackTo) -> Result<(), String> {
        // Generation 1 with a 60 s window and the typed comment is what the test asks for.
        let asked = request.generation == 1
            && request.confirm_seconds == 60
            && request.comment == "the route broke";
        self.calls.lock().expect("lock").push(if asked { "rollback-1" } else { "rollback-n" });
        Ok(())
    }
    async fn ota(&self) -> Result<OtaView, String> {
        let slot = |name: &str, bootname: &str, state: &str, version: &str| SlotRow {
            name: name.into(),
            bootname: bootname.into(),
            state: state.into(),
            boot_status: "good".into(),
            version: version.into(),
            booted: state == "booted",
            primary: name == "rootfs.1",
            ..SlotRow::default()
        };
        let staged = self.staged.lock().expect("lock").clone();
        Ok(OtaView {
            compatible: "routerd-x86_64".into(),
            boot_slot: "A".into(),
            operation: "idle".into(),
            slots: vec![
                slot("rootfs.0", "A", "booted", "1.0"),
                slot("rootfs.1", "B", "inactive", "0.9"),
            ],
            health_gate: true,
            gate: vec![GateRow {
                slot: "rootfs.0".into(),
                version: "1.0".into(),
                phase: "good".into(),
                detail: "every check passed".into(),
                ..GateRow::default()
            }],
            staged: staged.map(|(source, bytes)| bundle_view(&source, bytes.len())),
            ..OtaView::default()
        })
    }
    async fn ota_upload(
        &self,
        file_name: String,
        mut chunks: tokio::sync::mpsc::Receiver<Result<axum::body::Bytes, String>>,
    ) -> Result<BundleView, String> {
        let mut bytes = Vec::new();
        while let Some(chunk) = chunks.recv().await {
            bytes.extend_from_slice(&chunk?);
        }
        if !bytes.starts_with(SIGNED) {
            return Err("RAUC refused the bundle: signature verification failed".into());
        }
        let view = bundle_view(&file_name, bytes.len());
        *self.staged.lock().expect("lock") = Some((file_name, bytes));
        Ok(view)
    }
    async fn ota_fetch(&self, url: String) -> Result<BundleView, String> {
        Err(format!("Download failed: {url} answered 404 Not Found"))
    }
    async fn ota_discard(&self) {
        self.staged.lock().expect("lock").take();
    }
    async fn ota_install(&self, digest: String) -> Result<(), String> {
        if digest != DIGEST {
            return Err("The staged bundle changed since it was shown; check it again.".into());
        }
        self.installs.lock().expect("lock").push(digest);
        self.progress.send_replace(InstallView {
            phase: InstallPhase::Running,
            bundle: "version 2.0".into(),
            message: "Installing".into(),
            ..InstallView::default()
        });
        Ok(())
    }
    fn ota_progress(&self) -> tokio::sync::watch::Receiver<InstallView> {
        self.progress.subscribe()
    }
    async fn ota_boot_next(&self, slot: String) -> Result<String, String> {
        Ok(format!("activated slot {slot}"))
    }
    async fn reboot(&self) -> Result<(), String> {
        self.rebooted.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
    async fn rollback(&self, _: std::net::IpAddr) -> Result<(), String> {
        self.calls.lock().expect("lock").push("rollback");
        self.confirm.lock().expect("lock").take().map(|_| ()).ok_or_else(|| "nothing waits".into())
    }
}

struct Ui {
    app: axum::Router,
    backend: Arc<TestBackend>,
}

impl Ui {
    fn new() -> Self {
        let backend = Arc::new(TestBackend::default());
        Self { app: router(Arc::clone(&backend), Options::default()), backend }
    }

    fn with_password() -> Self {
        let ui = Self::new();
        ui.backend.set_password("correct horse").expect("set");
        ui
    }

    async fn send(&self, request: Request<Body>) -> Response {
        self.app.clone().oneshot(request).await.expect("infallible")
    }

    async fn get(&self, path: &str, cookie: Option<&str>) -> Response {
        let mut request = Request::get(path);
        if let Some(c) = cookie {
            request = request.header(header::COOKIE, c);
        }
        self.send(request.body(Body::empty()).expect("request")).await
    }

    async fn post(&self, path: &str, form: &str, cookie: Option<&str>) -> Response {
        let mut request =
            Request::post(path).header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        if let Some(c) = cookie {
            request = request.header(header::COOKIE, c);
        }
        self.send(request.body(Body::from(form.to_string())).expect("request")).await
    }

    /// A `multipart/form-data` POST of the text `fields`, then `file` as `bundle`
    /// (`update.raucb`), in that order.
    async fn upload(&self, fields: &[(&str, &str)], file: Option<&[u8]>, cookie: &str) -> Response {
        const BOUNDARY: &str = "routerd-test-boundary";
        let mut body = Vec::new();
        for (name, value) in fields {
            body.extend_from_slice(
                format!(
                    "--{BOUNDARY}\r\ncontent-disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
                )
                .as_bytes(),
            );
        }
        if let Some(file) = file {
            body.extend_from_slice(
                format!(
                    "--{BOUNDARY}\r\ncontent-disposition: form-data; name=\"bundle\"; \
                     filename=\"update.raucb\"\r\ncontent-type: application/octet-stream\r\n\r\n"
                )
                .as_bytes(),
            );
            body.extend_from_slice(file);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
        let request = Request::post("/ota/upload")
            .header(header::CONTENT_TYPE, format!("multipart/form-data; boundary={BOUNDARY}"))
            .header(header::COOKIE, cookie)
            .body(Body::from(body))
            .expect("request");
        self.send(request).await
    }

    /// Logs in; the `name=value` of the session cookie.
    async fn login(&self) -> String {
        let response = self.post("/login", "password=correct+horse", None).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        let set = response.headers()[header::SET_COOKIE].to_str().expect("ascii").to_string();
        set.split(';').next().expect("name=value").to_string()
    }
}

async fn body(response: Response) -> String {
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20).await.expect("body");
    String::from_utf8_lossy(&bytes).into_owned()
}

fn location(response: &Response) -> &str {
    response.headers()[header::LOCATION].to_str().expect("ascii")
}

#[tokio::test]
async fn pages_need_a_session_and_login_without_a_password_points_to_setup() {
    let ui = Ui::new();
    let overview = ui.get("/", None).await;
    assert_eq!(overview.status(), StatusCode::SEE_OTHER);
    assert_eq!(location(&overview), "/login");
    let login = body(ui.get("/login", None).await).await;
    assert!(
        login.contains("No admin password is set yet") && login.contains("href=\"/setup\""),
        "{login}"
    );
    assert!(!login.contains("name=\"password\""), "no password form without a password");
}

#[tokio::test]
async fn setup_needs_the_token_and_matching_passwords_then_sets_the_password() {
    let ui = Ui::new();
    let wrong =
        ui.post("/setup", "token=nope&password=correct+horse&again=correct+horse", None).await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(body(wrong).await.contains("not the setup token"));
    assert!(!ui.backend.password_set(), "nothing changed");
    let differ = ui
        .post("/setup", &format!("token={TOKEN}&password=correct+horse&again=other+horse"), None)
        .await;
    assert_eq!(differ.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let short = ui.post("/setup", &format!("token={TOKEN}&password=short&again=short"), None).await;
    assert_eq!(short.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body(short).await.contains("at least 8 characters"));
    let ok = ui
        .post("/setup", &format!("token={TOKEN}&password=correct+horse&again=correct+horse"), None)
        .await;
    assert_eq!(ok.status(), StatusCode::SEE_OTHER);
    assert!(ui.backend.verify_password("correct horse"));
    // Once set, the setup page is closed.
    let again = ui.get("/setup", None).await;
    assert_eq!(location(&again), "/login");
}

#[tokio::test]
async fn login_sets_a_strict_session_cookie_and_the_overview_escapes_what_it_shows() {
    let ui = Ui::with_password();
    let wrong = ui.post("/login", "password=wrong", None).await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(wrong.headers().get(header::SET_COOKIE).is_none());
    let response = ui.post("/login", "password=correct+horse", None).await;
    let set = response.headers()[header::SET_COOKIE].to_str().expect("ascii");
    assert!(set.contains("HttpOnly") && set.contains("SameSite=Strict"), "{set}");
    assert!(!set.contains("Secure"), "plain HTTP on loopback: no Secure flag");
    let cookie = set.split(';').next().expect("cookie").to_string();
    let page = ui.get("/", Some(&cookie)).await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = body(page).await;
    assert!(html.contains("phase-Drifted") && html.contains(">7<"), "{html}");
    assert!(html.contains("lan0/&#60;b&#62;x") && !html.contains("<b>x</b>"), "escaped: {html}");
    assert!(html.contains("name=\"csrf\""), "the logout form carries the CSRF token");
}

#[tokio::test]
async fn the_overview_tells_the_state_at_a_glance_and_refreshes_itself() {
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let html = body(ui.get("/", Some(&cookie)).await).await;
    // The last apply (who, when, why, what) apart from the last repair, with artifact names.
    let apply = html.split("id=\"last-apply\"").nth(1).expect("the last apply");
    assert!(apply.contains("Generation 7 by admin (web)"), "{apply}");
    assert!(apply.contains("more &#60;i&#62;routes"), "the comment, escaped: {apply}");
    assert!(apply.contains("and 2 more"), "{apply}");
    let repair = html.split("id=\"last-repair\"").nth(1).expect("the last repair");
    assert!(repair.contains("after nftables"), "{repair}");
    assert!(repair.contains("nft.table/inet/routerd_filter_home"), "{repair}");
    // The doctor's counts link to the doctor; the counters link to their pages.
    assert!(html.contains("href=\"/doctor\" id=\"doctor-summary\""), "{html}");
    assert!(html.contains("href=\"/artifacts?status=drifted\""), "{html}");
    assert!(html.contains("href=\"/adopt\""), "{html}");
    // Relative times, the exact one kept in `datetime`.
    assert!(html.contains("datetime=\"2026-11-21T02:59:00Z\""), "{html}");
    assert!(html.contains("days ago"), "{html}");
    // The live part and the charts reload themselves. The page is the daemon's snapshot alone
    // (it answers while the loop plans); the live part's first load brings the doctor's counts.
    assert!(html.contains("hx-get=\"/overview/live\" hx-trigger=\"load, every 5s\""), "{html}");
    assert!(html.contains("hx-get=\"/overview/charts\" hx-trigger=\"every 10s\""), "{html}");
    let live = body(ui.get("/overview/live", Some(&cookie)).await).await;
    assert!(live.starts_with("<div id=\"overview-live\""), "{live}");
    assert!(live.contains("hx-trigger=\"every 5s\""), "counted: no load again: {live}");
    assert!(live.contains(">1 pass<") && live.contains(">0 fail<"), "{live}");
    assert!(live.contains("href=\"/doctor\" id=\"doctor-summary\""), "{live}");
    // The charts: SVG drawn on the server, inline, with no style attribute the CSP refuses.
    assert!(html.contains("reconciles: duration and phase"), "{html}");
    assert!(html.contains("gateway 192.0.2.1 via wan0: round-trip time"), "{html}");
    assert!(html.contains("lan0: bit/s") && html.contains("<polyline"), "{html}");
    assert!(!html.contains(" style="), "{html}");
    // The navigation marks the page.
    assert!(html.contains("<a href=\"/\" aria-current=\"page\">Overview</a>"), "{html}");
}

#[tokio::test]
async fn the_interfaces_page_charts_bits_errors_gateways_and_reconciles() {
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let html = body(ui.get("/interfaces", Some(&cookie)).await).await;
    for title in [
        "lan0: bit/s",
        "lan0: errors per 10 s",
        "gateway 192.0.2.1 via wan0: round-trip time",
        "gateway 192.0.2.1 via wan0: loss",
        "reconciles: duration and phase",
    ] {
        assert!(html.contains(title), "{title}: {html}");
    }
    assert!(html.contains("last probe unanswered, 50% loss"), "{html}");
    assert!(html.contains("<a href=\"/interfaces\" aria-current=\"page\">"), "{html}");
    let panel = body(ui.get("/interfaces/charts", Some(&cookie)).await).await;
    assert!(panel.starts_with("<div id=\"charts\""), "{panel}");
    assert_eq!(location(&ui.get("/interfaces", None).await), "/login");
}

#[tokio::test]
async fn logout_needs_the_sessions_csrf_token() {
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let html = body(ui.get("/", Some(&cookie)).await).await;
    let csrf = html
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("token");
    let missing = ui.post("/logout", "", Some(&cookie)).await;
    assert!(missing.status().is_client_error(), "{}", missing.status());
    let wrong = ui.post("/logout", "csrf=00000000000000000000000000000000", Some(&cookie)).await;
    assert_eq!(wrong.status(), StatusCode::FORBIDDEN);
    assert_eq!(ui.get("/", Some(&cookie)).await.status(), StatusCode::OK, "still signed in");
    let out = ui.post("/logout", &format!("csrf={csrf}"), Some(&cookie)).await;
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    assert_eq!(location(&ui.get("/", Some(&cookie)).await), "/login", "the session is gone");
}

#[tokio::test]
async fn logins_are_rate_limited_per_client() {
    let ui = Ui::with_password();
    for _ in 0..5 {
        assert_eq!(
            ui.post("/login", "password=wrong", None).await.status(),
            StatusCode::UNAUTHORIZED
        );
    }
    let limited = ui.post("/login", "password=correct+horse", None).await;
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS, "even the right password waits");
    assert!(body(limited).await.contains("Too many failed logins"));
}

#[tokio::test]
async fn parallel_wrong_logins_are_refused_before_hashing_and_hash_one_at_a_time() {
    // Thirty parallel wrong logins from one address all got 401, each hashing on its own
    // thread (issue 33 §4).
    use std::sync::atomic::Ordering::SeqCst;
    let ui = Ui::with_password();
    let logins = (0..30).map(|_| ui.post("/login", "password=wrong", None));
    let statuses: Vec<StatusCode> =
        futures::future::join_all(logins).await.iter().map(Response::status).collect();
    let refused = statuses.iter().filter(|s| **s == StatusCode::TOO_MANY_REQUESTS).count();
    let wrong = statuses.iter().filter(|s| **s == StatusCode::UNAUTHORIZED).count();
    // Five may be reserved; the queue holds three besides the one hashing (two more if the
    // worker has not taken the first yet), so the fourth and fifth may be refused as busy.
    assert_eq!(wrong + refused, 30, "{statuses:?}");
    assert!((3..=5).contains(&wrong), "{statuses:?}");
    assert_eq!(ui.backend.checks[0].load(SeqCst), wrong, "only reserved attempts are checked");
    assert_eq!(ui.backend.checks[2].load(SeqCst), 1, "one check at a time");
}

#[tokio::test]
async fn a_password_change_ends_every_session() {
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    assert_eq!(ui.get("/", Some(&cookie)).await.status(), StatusCode::OK);
    // As `routerctl passwd` does, through the daemon.
    ui.backend.set_password("another horse").expect("set");
    assert_eq!(location(&ui.get("/", Some(&cookie)).await), "/login", "the session is over");
}

#[tokio::test]
async fn every_page_loads_the_banner_which_shows_a_config_file_that_did_not_load() {
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    for page in ["/", "/config", "/history", "/doctor", "/ota"] {
        let html = body(ui.get(page, Some(&cookie)).await).await;
        assert!(html.contains(r#"hx-get="/banner" hx-trigger="load""#), "{page}");
    }
    assert_eq!(body(ui.get("/banner", Some(&cookie)).await).await, r#"<div id="banner"></div>"#);
    *ui.backend.fallback.lock().expect("lock") = Some(FallbackView {
        running: Some(7),
        errors: vec!["router.yaml:4:3: <b>broken</b>".into()],
    });
    let banner = body(ui.get("/banner", Some(&cookie)).await).await;
    assert!(banner.contains("runs generation 7, the last applied"), "{banner}");
    assert!(banner.contains("router.yaml:4:3: &#60;b&#62;broken&#60;/b&#62;"), "escaped: {banner}");
    *ui.backend.fallback.lock().expect("lock") = Some(FallbackView::default());
    let banner = body(ui.get("/banner", Some(&cookie)).await).await;
    assert!(banner.contains("Nothing is applied"), "{banner}");
    assert_eq!(location(&ui.get("/banner", None).await), "/login", "signed in only");
}

#[tokio::test]
async fn two_setups_sent_at_once_with_the_token_set_the_password_once() {
    let ui = Ui::new();
    let forms = ["first-password", "second-password"]
        .map(|p| format!("token={TOKEN}&password={p}&again={p}"));
    let setups = forms.iter().map(|form| ui.post("/setup", form, None));
    let statuses: Vec<StatusCode> =
        futures::future::join_all(setups).await.iter().map(Response::status).collect();
    let set = statuses.iter().filter(|s| **s == StatusCode::SEE_OTHER).count();
    assert_eq!(set, 1, "{statuses:?}");
    assert!(statuses.contains(&StatusCode::UNAUTHORIZED), "{statuses:?}");
}

#[tokio::test]
async fn every_response_has_strict_headers_and_assets_are_hashed_and_immutable() {
    let ui = Ui::new();
    let page = ui.get("/login", None).await;
    let csp = page.headers()["content-security-policy"].to_str().expect("ascii").to_string();
    assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
    assert_eq!(page.headers()[header::CACHE_CONTROL], "no-store", "pages are never cached");
    let html = body(page).await;
    assert!(!html.contains("style=") && !html.contains("<script>"), "no inline style or script");
    for prefix in ["/assets/routerd.", "/assets/htmx.min.", "/assets/routerd-icon."] {
        let url = html
            .split(&format!("\"{prefix}"))
            .nth(1)
            .and_then(|r| r.split('"').next())
            .expect(prefix);
        let asset = ui.get(&format!("{prefix}{url}"), None).await;
        assert_eq!(asset.status(), StatusCode::OK, "{prefix}{url}");
        assert!(
            asset.headers()[header::CACHE_CONTROL].to_str().expect("ascii").contains("immutable")
        );
    }
    assert_eq!(
        ui.get("/assets/routerd.000000000000.css", None).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(ui.get("/assets/htmx.LICENSE", None).await.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_state_changing_request_from_another_site_is_refused_before_its_handler() {
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let logout = |headers: &[(&str, &str)]| {
        let mut request = Request::post("/logout")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::HOST, "router.lan")
            .header(header::COOKIE, &cookie);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(Body::from("csrf=x")).expect("request")
    };
    for headers in [
        &[("sec-fetch-site", "cross-site")][..],
        &[("sec-fetch-site", "same-site")],
        &[("origin", "http://evil.example")],
        &[("sec-fetch-site", "cross-site"), ("origin", "null")],
    ] {
        let response = ui.send(logout(headers)).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{headers:?}");
        assert!(body(response).await.contains("another"), "{headers:?}");
    }
    // The same origin reaches the handler, which then checks the CSRF token; so does a form
    // whose Origin is `null` (sent under `Referrer-Policy: no-referrer`).
    for same in [
        &[("sec-fetch-site", "same-origin"), ("origin", "null")][..],
        &[("origin", "http://router.lan")],
        &[("origin", "null")],
    ] {
        let response = ui.send(logout(same)).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN);
        assert_eq!(body(response).await, "missing or wrong CSRF token", "{same:?}");
    }
}

/// The hashed URL of the first script whose name starts with `stem` (`routerd.`) in a page.
fn asset_in(html: &str, stem: &str) -> String {
    let at = html.find(&format!("<script src=\"/assets/{stem}")).expect("the script") + 13;
    html[at..].split('"').next().expect("the URL").to_string()
}

/// The CSRF token in a page.
fn csrf_of(html: &str) -> String {
    html.split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("a token")
        .to_string()
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            b' ' => "+".to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn the_editor_validates_as_you_type_and_shows_problems_at_their_line() {
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let editor = body(ui.get("/config", Some(&cookie)).await).await;
    assert!(
        editor.contains("ifname: lan0") && editor.contains("hx-post=\"/config/validate\""),
        "{editor}"
    );
    let csrf = csrf_of(&editor);
    let bad = format!("csrf={csrf}&yaml={}", urlencode("name: lan\nbroken line\n"));
    let fragment = body(ui.post("/config/validate", &bad, Some(&cookie)).await).await;
    assert!(
        fragment.contains("line 2, column 1") && fragment.contains("not a mapping: broken line"),
        "{fragment}"
    );
    let good = format!("csrf={csrf}&yaml={}", urlencode("name: lan\n"));
    assert!(
        body(ui.post("/config/validate", &good, Some(&cookie)).await)
            .await
            .contains("Valid: 1 resources")
    );
    // Warnings of a valid config are shown with the resource they concern.
    let warned = format!("csrf={csrf}&yaml={}", urlencode("name: lan\n# warn: shared <x>\n"));
    let fragment = body(ui.post("/config/validate", &warned, Some(&cookie)).await).await;
    assert!(
        fragment.contains("Valid: 2 resources")
            && fragment
                .contains("warning: net.routerd.net/v1alpha1/Interface/lan: shared &#60;x&#62;"),
        "{fragment}"
    );
    let forged = ui
        .post("/config/validate", &format!("csrf=x&yaml={}", urlencode("a: b")), Some(&cookie))
        .await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    assert_eq!(location(&ui.post("/config/validate", &good, None).await), "/login");
}

#[tokio::test]
async fn an_edit_of_an_older_generation_is_refused_with_what_changed_and_can_be_reopened() {
    // Issue 34 §1: the form names the generation it was edited from.
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let editor = body(ui.get("/config", Some(&cookie)).await).await;
    assert!(editor.contains("<input type=\"hidden\" name=\"base\" value=\"1\">"), "{editor}");
    let csrf = csrf_of(&editor);
    let stale =
        format!("csrf={csrf}&base=0&confirm=0&comment=mine&yaml={}", urlencode("name: lan\n"));
    let refused = ui.post("/config/apply", &stale, Some(&cookie)).await;
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    assert!(ui.backend.applied.lock().expect("lock").is_empty(), "nothing applied");
    let page = body(refused).await;
    assert!(page.contains("You edited generation 0, but generation 1 has been applied since"));
    assert!(page.contains("root/cli at 2026-11-26T16:30:04Z: from the console"), "{page}");
    assert!(page.contains("<span class=\"del\">-name: wan</span>"), "the diff: {page}");
    assert!(page.contains("name=\"yaml\" value=\"name: lan\n# re-applied\n\""), "{page}");
    assert!(page.contains("name=\"base\" value=\"1\""), "{page}");
    assert!(page.contains("href=\"/config\" class=\"button secondary\" id=\"discard\""));
    // Re-opened: the editor holds the edit re-applied, based on generation 1.
    let form = format!("csrf={csrf}&base=1&yaml={}", urlencode("name: lan\n# re-applied\n"));
    let editor = body(ui.post("/config/edit", &form, Some(&cookie)).await).await;
    assert!(editor.contains("# re-applied") && editor.contains("name=\"base\" value=\"1\""));
    let marked = format!("{form}&conflicts=true");
    let editor = body(ui.post("/config/edit", &marked, Some(&cookie)).await).await;
    assert!(editor.contains("between &#60;&#60;&#60;&#60;&#60;&#60;&#60; and"), "{editor}");
    let forged = ui.post("/config/edit", "csrf=x&yaml=a", Some(&cookie)).await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    // The base and the comment go through the plan page to its Apply (issue 34 §2: the
    // comment was lost there).
    let plan = format!("csrf={csrf}&base=1&comment=why+not&yaml={}", urlencode("name: lan\n"));
    let page = body(ui.post("/config/plan", &plan, Some(&cookie)).await).await;
    assert!(page.contains("name=\"base\" value=\"1\""), "{page}");
    assert!(page.contains("name=\"comment\" value=\"why not\""), "{page}");
    let fresh = format!("csrf={csrf}&base=1&confirm=0&yaml={}", urlencode("name: lan\n"));
    assert_eq!(
        ui.post("/config/apply", &fresh, Some(&cookie)).await.status(),
        StatusCode::SEE_OTHER
    );
    assert_eq!(ui.backend.applied.lock().expect("lock")[0].base, Some(1));
}

#[tokio::test]
async fn apply_needs_csrf_refuses_invalid_text_and_opens_a_confirm_window() {
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let csrf = csrf_of(&body(ui.get("/config", Some(&cookie)).await).await);
    let forged = ui.post("/config/apply", "csrf=nope&yaml=a%3A+b&confirm=90", Some(&cookie)).await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    let invalid = ui
        .post(
            "/config/apply",
            &format!("csrf={csrf}&yaml={}&confirm=90", urlencode("oops\n")),
            Some(&cookie),
        )
        .await;
    assert_eq!(invalid.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let page = body(invalid).await;
    assert!(page.contains("nothing was changed") && page.contains("line 1, column 1"), "{page}");
    assert!(page.contains("oops"), "the operator's text is kept in the editor");
    assert!(ui.backend.applied.lock().expect("lock").is_empty());

    let short = format!("csrf={csrf}&yaml={}&confirm=5", urlencode("name: lan\n"));
    let short = ui.post("/config/apply", &short, Some(&cookie)).await;
    assert_eq!(short.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body(short).await.contains("0 (none) or 10 to 86400 seconds"));
    assert!(ui.backend.applied.lock().expect("lock").is_empty());

    // A browser sends the textarea with CRLF breaks; the daemon gets the file's LF.
    let form = format!(
        "csrf={csrf}&yaml={}&confirm=90&comment=move+lan",
        urlencode("name: lan\r\nifname: lan0\r\n")
    );
    let applied = ui.post("/config/apply", &form, Some(&cookie)).await;
    assert_eq!(applied.status(), StatusCode::SEE_OTHER);
    let recorded = ui.backend.applied.lock().expect("lock").clone();
    assert_eq!(recorded.len(), 1);
    assert_eq!((recorded[0].confirm_seconds, recorded[0].comment.as_str()), (90, "move lan"));
    assert_eq!(recorded[0].yaml, "name: lan\nifname: lan0\n");

    // Every page's banner shows the countdown with Confirm and Roll back (issue 34 §2: it was
    // on the Overview only).
    let page = body(ui.get("/ledger", Some(&cookie)).await).await;
    assert!(page.contains("hx-get=\"/banner\""), "{page}");
    let banner = body(ui.get("/banner", Some(&cookie)).await).await;
    assert!(
        banner.contains("hx-get=\"/confirm/countdown\"")
            && banner.contains("action=\"/confirm\"")
            && banner.contains("action=\"/rollback\"")
            && banner.contains(&format!("name=\"csrf\" value=\"{csrf}\"")),
        "{banner}"
    );
    let countdown = body(ui.get("/confirm/countdown", Some(&cookie)).await).await;
    assert!(
        countdown.contains("Generation 2 is rolled back in") && countdown.contains("every 1s"),
        "{countdown}"
    );
    assert_eq!(
        ui.post("/confirm", "csrf=wrong", Some(&cookie)).await.status(),
        StatusCode::FORBIDDEN
    );
    let confirmed = ui.post("/confirm", &format!("csrf={csrf}"), Some(&cookie)).await;
    assert_eq!(confirmed.status(), StatusCode::SEE_OTHER);
    // Settled: the countdown tells htmx to reload the page (its figures are stale).
    let settled = ui.get("/confirm/countdown", Some(&cookie)).await;
    assert_eq!(settled.headers()["hx-refresh"], "true");
    assert!(body(settled).await.contains("Nothing waits"));
    let late = ui.post("/rollback", &format!("csrf={csrf}"), Some(&cookie)).await;
    assert_eq!(late.status(), StatusCode::CONFLICT);
    let late = body(late).await;
    assert!(late.contains("Nothing was done: nothing waits") && late.contains("id=\"phase\""));
    assert_eq!(*ui.backend.calls.lock().expect("lock"), ["confirm", "rollback"]);
}

#[tokio::test]
async fn the_plan_diff_shows_operations_with_their_attributes_orphans_and_candidates() {
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let csrf = csrf_of(&body(ui.get("/config", Some(&cookie)).await).await);
    let form = format!("csrf={csrf}&yaml={}", urlencode("name: lan\n"));
    let page = ui.post("/config/plan", &form, Some(&cookie)).await;
    assert_eq!(page.status(), StatusCode::OK);
    let timing = page.headers()["server-timing"].to_str().expect("ascii").to_string();
    assert!(timing.starts_with("plan;dur=") && timing.contains(", render;dur="), "{timing}");
    let html = body(page).await;
    assert!(html.contains("linux.link&#47;lan0") || html.contains("linux.link/lan0"), "{html}");
    assert!(html.contains("<code>adminUp</code>") && html.contains("<del>false</del>"), "{html}");
    assert!(html.contains("&#60;script&#62;true") && !html.contains("<script>true"), "escaped");
    assert!(
        html.contains("remove it by hand")
            && html.contains("<code>mtu</code>: 1500 on the host, 1492 desired")
    );
    assert!(
        html.contains("name=\"yaml\" value=\"name: lan"),
        "the Apply form carries the same text"
    );
    assert!(ui.backend.applied.lock().expect("lock").is_empty(), "planning applies nothing");
    let invalid = ui.post("/config/plan", &format!("csrf={csrf}&yaml=oops"), Some(&cookie)).await;
    assert_eq!(invalid.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body(invalid).await.contains("nothing was planned"));
    let forged = ui.post("/config/plan", "csrf=x&yaml=a%3A+b", Some(&cookie)).await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn the_editor_numbers_its_lines_does_not_wrap_and_links_each_problem_to_its_line() {
    // Issue 34 §5.
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let editor = body(ui.get("/config", Some(&cookie)).await).await;
    assert!(editor.contains("<textarea id=\"yaml\" name=\"yaml\" rows=\"30\" wrap=\"off\""));
    // The gutter: one number a line of the text (its final break opens a third, empty line),
    // hidden until the script keeps it in step; the script is loaded.
    assert!(
        editor.contains(
            "<pre class=\"gutter\" id=\"gutter\" aria-hidden=\"true\" hidden>1\n2\n3\n</pre>"
        ),
        "{editor}"
    );
    let js = asset_in(&editor, "routerd.");
    assert!(editor.contains(&format!("<script src=\"{js}\" defer></script>")), "{editor}");
    let script = body(ui.get(&js, None).await).await;
    assert!(script.contains("function jumpTo(line, column)") && script.contains("a[data-line]"));
    // Plan is the primary action and comes first; Apply is secondary. Enter in a field submits
    // the first button: Plan.
    let plan = editor
        .find("<button type=\"submit\" formaction=\"/config/plan\" id=\"plan\">Plan</button>");
    let apply =
        editor.find("<button type=\"submit\" class=\"secondary\" id=\"apply\">Apply</button>");
    assert!(matches!((plan, apply), (Some(p), Some(a)) if p < a), "{editor}");

    // Problems are links to their line, in the swapped fragment and in a refused page.
    let csrf = csrf_of(&editor);
    let bad = format!("csrf={csrf}&yaml={}", urlencode("name: lan\nbroken line\n"));
    let fragment = body(ui.post("/config/validate", &bad, Some(&cookie)).await).await;
    let link =
        "<a href=\"#yaml\" class=\"jump\" data-line=\"2\" data-column=\"1\">line 2, column 1</a>: ";
    assert!(fragment.starts_with("<div id=\"problems\" role=\"alert\">"), "{fragment}");
    assert!(fragment.contains(link), "{fragment}");
    let refused = format!("csrf={csrf}&confirm=90&yaml={}", urlencode("name: lan\nbroken line\n"));
    let page = body(ui.post("/config/apply", &refused, Some(&cookie)).await).await;
    assert!(page.contains(link), "{page}");
    assert!(page.contains("hidden>1\n2\n3\n</pre>"), "the gutter numbers the posted text");
    // A text starting with a blank line keeps it (the parser drops one break after <textarea>).
    let blank = format!("csrf={csrf}&base=1&yaml={}", urlencode("\nname: lan\n"));
    let page = body(ui.post("/config/edit", &blank, Some(&cookie)).await).await;
    assert!(page.contains("hx-include=\"[name=csrf]\">\n\nname: lan\n</textarea>"), "{page}");
}

#[tokio::test]
async fn the_plan_page_shows_the_yaml_diff_against_the_running_config_and_goes_back_to_edit() {
    // Issue 34 §5.
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let csrf = csrf_of(&body(ui.get("/config", Some(&cookie)).await).await);
    let edited = "name: lan\nifname: lan1\n";
    let form = format!("csrf={csrf}&base=1&comment=rename+%3Cx%3E&yaml={}", urlencode(edited));
    let page = body(ui.post("/config/plan", &form, Some(&cookie)).await).await;
    assert!(page.contains("<h2>Changes to the running config (generation 1)</h2>"), "{page}");
    for line in [
        "<span class=\"file\">--- generation 1 (running)</span>",
        "<span class=\"file\">+++ edited</span>",
        "<span class=\"hunk\">@@ -1 +1 @@</span>",
        "<span class=\"del\">-ifname: lan0</span>",
        "<span class=\"add\">+ifname: lan1</span>",
        "<span class=\"ctx\"> name: lan</span>",
    ] {
        assert!(page.contains(line), "{line}: {page}");
    }
    let diff = page.find("id=\"yaml-diff\"").expect("the diff");
    assert!(diff < page.find("<h2>Operations").expect("the operations"), "the diff comes first");
    assert!(!page.contains("id=\"plan-stale\""), "edited from the running generation");
    // One form: Apply (primary, first) and Edit, which takes the text, base and comment back.
    let apply = page.find("<button type=\"submit\" id=\"apply\">Apply</button>").expect("Apply");
    let edit = page
        .find("<button type=\"submit\" formaction=\"/config/edit\" formnovalidate class=\"secondary\" id=\"edit\">Edit</button>")
        .expect("Edit");
    assert!(apply < edit, "{page}");
    let form_html =
        &page[page.find("<form method=\"post\" action=\"/config/apply\"").expect("form")..edit];
    assert!(
        form_html
            .contains("<input type=\"hidden\" name=\"yaml\" value=\"name: lan\nifname: lan1\n\">")
    );
    assert!(form_html.contains("<input type=\"hidden\" name=\"base\" value=\"1\">"));
    assert!(form_html.contains("name=\"comment\" value=\"rename &#60;x&#62;\""), "{form_html}");
    // What the browser sends for Edit: the whole form (confirm too) to /config/edit.
    let back =
        format!("csrf={csrf}&yaml={}&base=1&comment=rename+%3Cx%3E&confirm=90", urlencode(edited));
    let editor = ui.post("/config/edit", &back, Some(&cookie)).await;
    assert_eq!(editor.status(), StatusCode::OK);
    let editor = body(editor).await;
    assert!(editor.contains("\nname: lan\nifname: lan1\n</textarea>"), "{editor}");
    assert!(editor.contains("<input type=\"hidden\" name=\"base\" value=\"1\">"), "{editor}");
    assert!(editor.contains("name=\"comment\" value=\"rename &#60;x&#62;\""), "{editor}");
    assert!(ui.backend.applied.lock().expect("lock").is_empty(), "nothing applied");

    // The running text unchanged: no diff. Edited from an older generation: said before Apply.
    let same = format!("csrf={csrf}&base=0&yaml={}", urlencode("name: lan\nifname: lan0\n"));
    let page = body(ui.post("/config/plan", &same, Some(&cookie)).await).await;
    assert!(
        page.contains("None: the text is the running config&#39;s.")
            || page.contains("None: the text is the running config's."),
        "{page}"
    );
    assert!(!page.contains("id=\"yaml-diff\""));
    assert!(
        page.contains("id=\"plan-stale\">You edited generation 0, but generation 1 is running")
    );
}

#[tokio::test]
async fn history_lists_generations_newest_first_diffs_and_rolls_back() {
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let html = body(ui.get("/history", Some(&cookie)).await).await;
    let (three, one) = (html.find("<td>3</td>").expect("3"), html.find("<td>1</td>").expect("1"));
    assert!(three < one, "newest first");
    assert!(html.contains("change &#60;2&#62;"), "comments escaped: {html}");
    assert!(html.contains("/history/diff?from=2&amp;to=3"), "{html}");
    // Any two generations compare: the form preselects the two newest.
    assert!(html.contains("<form method=\"get\" action=\"/history/diff\""), "{html}");
    assert!(html.contains("<option value=\"2\" selected>2</option>"), "{html}");
    assert!(html.contains("<option value=\"3\" selected>3</option>"), "{html}");
    let diff = body(ui.get("/history/diff?from=2&to=3", Some(&cookie)).await).await;
    assert!(
        diff.contains("<span class=\"del\">-a: 1</span>")
            && diff.contains("<span class=\"add\">+a: 2</span>"),
        "{diff}"
    );
    assert_eq!(
        ui.get("/history/diff?from=2&to=9", Some(&cookie)).await.status(),
        StatusCode::NOT_FOUND
    );
    // A rollback asks first (a link, not a form that acts), showing what comes back and a confirm
    // window like an apply's; the running generation offers none.
    assert!(html.contains("href=\"/history/rollback?generation=1\""), "{html}");
    assert!(!html.contains("href=\"/history/rollback?generation=7\""), "{html}");
    let ask = body(ui.get("/history/rollback?generation=1", Some(&cookie)).await).await;
    assert!(ask.contains("Roll back to generation 1?"), "{ask}");
    assert!(ask.contains("<pre class=\"diff\">"), "{ask}");
    assert!(ask.contains("name=\"confirm\" value=\"90\""), "{ask}");
    let csrf = csrf_of(&html);
    assert_eq!(
        ui.post("/history/rollback", "csrf=x&generation=1", Some(&cookie)).await.status(),
        StatusCode::FORBIDDEN
    );
    let form = format!("csrf={csrf}&generation=1&confirm=60&comment=the+route+broke");
    let back = ui.post("/history/rollback", &form, Some(&cookie)).await;
    assert_eq!(back.status(), StatusCode::SEE_OTHER);
    assert_eq!(*ui.backend.calls.lock().expect("lock"), ["rollback-1"]);
    assert_eq!(location(&ui.get("/history", None).await), "/login");
}

#[tokio::test]
async fn adoption_lists_candidates_disables_drifted_ones_and_owns_the_selected() {
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let html = body(ui.get("/adopt", Some(&cookie)).await).await;
    assert!(
        html.contains("name=\"a0\" value=\"linux.link&#47;lan0\"")
            || html.contains("name=\"a0\" value=\"linux.link/lan0\""),
        "{html}"
    );
    let wan = html
        .split("name=\"a1\"")
        .nth(1)
        .and_then(|r| r.split('>').next())
        .expect("the wan0 checkbox");
    assert!(wan.contains("disabled"), "a drifted candidate cannot be selected: {wan}");
    assert!(html.contains("<code>mtu</code> is 1500 on the host, 1492 in the config"), "{html}");
    let csrf = csrf_of(&html);
    assert_eq!(
        ui.post("/adopt", "csrf=x&a0=linux.link%2Flan0", Some(&cookie)).await.status(),
        StatusCode::FORBIDDEN
    );
    let none = body(ui.post("/adopt", &format!("csrf={csrf}"), Some(&cookie)).await).await;
    assert!(none.contains("Select at least one candidate"), "{none}");
    let owned =
        body(ui.post("/adopt", &format!("csrf={csrf}&a0=linux.link%2Flan0"), Some(&cookie)).await)
            .await;
    assert!(owned.contains("Now owned: linux.link"), "{owned}");
    assert_eq!(*ui.backend.calls.lock().expect("lock"), ["adopt"]);
}

#[tokio::test]
async fn the_ledger_browser_filters_by_kind_state_and_text() {
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let all = body(ui.get("/ledger", Some(&cookie)).await).await;
    assert!(all.contains("3 of 3 entries") && all.contains("<option value=\"nft.table\""), "{all}");
    let routes = body(ui.get("/ledger?kind=linux.ipv4.route", Some(&cookie)).await).await;
    assert!(
        routes.contains("2 of 3 entries") && !routes.contains("<td>nft.table</td>"),
        "{routes}"
    );
    let pending = body(ui.get("/ledger?state=pending", Some(&cookie)).await).await;
    assert!(pending.contains("1 of 3 entries") && pending.contains("100.64.1.0"), "{pending}");
    let text = body(ui.get("/ledger?text=routerd_filter", Some(&cookie)).await).await;
    assert!(text.contains("1 of 3 entries") && text.contains("<td>nft.table</td>"), "{text}");
    assert_eq!(location(&ui.get("/ledger", None).await), "/login");
}

#[tokio::test]
async fn the_doctor_page_streams_a_failure_as_it_appears() {
    use http_body_util::BodyExt;
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let page = body(ui.get("/doctor", Some(&cookie)).await).await;
    assert!(
        page.contains("data-events=\"/doctor/events\"") && page.contains("check-pass"),
        "{page}"
    );
    assert!(page.contains("/assets/routerd."), "the live-panel script is linked");

    let events = ui.get("/doctor/events", Some(&cookie)).await;
    assert_eq!(events.headers()[header::CONTENT_TYPE], "text/event-stream");
    let mut stream = events.into_body();
    let mut next_event = async || -> String {
        let deadline = std::time::Duration::from_secs(10);
        loop {
            let frame =
                tokio::time::timeout(deadline, stream.frame()).await.expect("an event in time");
            let data = frame.expect("stream open").expect("frame").into_data().unwrap_or_default();
            let text = String::from_utf8_lossy(&data).into_owned();
            if text.contains("event: checks") {
                return text;
            }
        }
    };
    let first = next_event().await;
    assert!(first.contains("check-pass"), "{first}");
    ui.backend.route_broken.store(true, std::sync::atomic::Ordering::SeqCst);
    let second = next_event().await;
    assert!(second.contains("check-fail") && second.contains("missing"), "{second}");
    assert_eq!(location(&ui.get("/doctor/events", None).await), "/login");
}

#[tokio::test]
async fn a_failing_check_offers_its_remedy_as_a_link_to_the_page_that_does_it() {
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    ui.backend.route_broken.store(true, std::sync::atomic::Ordering::SeqCst);
    let page = body(ui.get("/doctor", Some(&cookie)).await).await;
    assert!(page.contains("check-fail"), "{page}");
    assert!(
        page.contains(r#"<a class="button check-action" href="/graph">Show the plan</a>"#),
        "the remedy is an action on the page: {page}"
    );
    assert!(!page.contains("routerctl reconcile"), "no console command on the page: {page}");
}

#[tokio::test]
async fn the_dns_page_shows_servers_zones_records_and_checks_and_filters_by_zone() {
    let ui = Ui::with_password();
    assert_eq!(location(&ui.get("/dns", None).await), "/login");
    let cookie = ui.login().await;
    let page = body(ui.get("/dns", Some(&cookie)).await).await;
    assert!(
        page.contains(r#"<a href="/dns" aria-current="page">DNS</a>"#),
        "linked from the navigation and marked: {page}"
    );
    assert!(
        page.contains(
            "<td>auth</td><td>local</td><td>1</td><td class=\"state-ok\">unit running, \
             named.conf in place, zones readable</td>"
        ),
        "{page}"
    );
    assert!(
        page.contains("<td class=\"state-bad\">unreadable: corp.example. (TsigBadSig"),
        "{page}"
    );
    assert!(
        page.contains(r##"<a href="/dns?zone=lab.example.#records">lab.example.</a></td><td>local</td><td>-</td><td>2 of 2</td><td>1</td><td class="state-bad">1 drifted</td>"##),
        "{page}"
    );
    assert!(page.contains("4 of 4 RRsets (1 foreign)."), "{page}");
    // The foreign RRset is highlighted, its data escaped, its resource `foreign`.
    assert!(page.contains(r#"<tr class="st-foreign foreign"><td>foreign<br>"#), "{page}");
    assert!(
        page.contains("&#60;script&#62;x&#60;/script&#62;") && !page.contains("<script>x"),
        "{page}"
    );
    assert!(page.contains("<td><strong>foreign</strong></td>"), "{page}");
    assert!(
        page.contains("<td class=\"name\">192.0.2.10<br>192.0.2.11</td><td>ARecord/www</td>"),
        "{page}"
    );
    assert!(page.contains(r#"<tr class="st-drift"><td>drift<br><span class="sub">the server has rdata 192.0.2.99</span>"#), "{page}");
    assert!(page.contains("check-warn") && page.contains("N006"), "the dns checks: {page}");

    // The zone filter takes the apex without its final dot, in any case.
    let corp = body(ui.get("/dns?zone=Corp.Example", Some(&cookie)).await).await;
    assert!(corp.contains("1 of 4 RRsets"), "{corp}");
    assert!(corp.contains(r#"<option value="corp.example." selected>"#), "{corp}");
    assert!(corp.contains("v=spf1") && !corp.contains("192.0.2.10<br>"), "{corp}");
    let foreign = body(ui.get("/dns?foreign=on", Some(&cookie)).await).await;
    assert!(foreign.contains("1 of 4 RRsets") && foreign.contains(" checked>"), "{foreign}");
    assert!(!foreign.contains("ARecord/www"), "{foreign}");
}

#[tokio::test]
async fn the_setup_link_prefills_the_token() {
    let ui = Ui::new();
    let html = body(ui.get(&format!("/setup?token={TOKEN}"), None).await).await;
    assert!(html.contains(&format!("name=\"token\" value=\"{TOKEN}\"")), "{html}");
}

#[tokio::test]
async fn metrics_are_served_without_a_session() {
    let ui = Ui::new();
    let response = ui.get("/metrics", None).await;
    assert_eq!(response.status(), StatusCode::OK);
    let kind = response.headers()[header::CONTENT_TYPE].to_str().expect("ascii");
    assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
    assert!(body(response).await.contains("routerd_orphans 2"));
}

#[tokio::test]
async fn the_artifacts_browser_filters_by_status_kind_and_text_and_escapes() {
    let ui = Ui::with_password();
    assert_eq!(location(&ui.get("/artifacts", None).await), "/login");
    let cookie = ui.login().await;
    let all = body(ui.get("/artifacts", Some(&cookie)).await).await;
    assert!(all.contains("4 of 4 artifacts"), "{all}");
    assert!(all.contains("&#60;i&#62;10.0.0.1") && !all.contains("<i>10"), "escaped: {all}");
    let orphans = body(ui.get("/artifacts?status=orphan", Some(&cookie)).await).await;
    assert!(orphans.contains("1 of 4") && orphans.contains("inet/old"), "{orphans}");
    assert!(!orphans.contains("<td>wan0</td>"), "{orphans}");
    let links = body(ui.get("/artifacts?kind=linux.link&text=wan", Some(&cookie)).await).await;
    assert!(links.contains("1 of 4") && links.contains("differs: mtu"), "{links}");
}

#[tokio::test]
async fn the_graph_page_draws_the_plan_as_svg_and_offers_the_dot() {
    let ui = Ui::with_password();
    for path in ["/graph", "/graph.svg", "/graph.dot"] {
        assert_eq!(location(&ui.get(path, None).await), "/login", "{path}");
    }
    let cookie = ui.login().await;
    // A large plan: one node per kind, and a picker of the resources.
    let page = body(ui.get("/graph", Some(&cookie)).await).await;
    assert!(page.contains("900 artifacts, more than 150: one node per resource kind"), "{page}");
    assert!(page.contains("type=\"image/svg+xml\" data=\"/graph.svg\""), "{page}");
    assert!(page.contains("<option value=\"net.routerd.net/v1alpha1/Interface/lan\">"), "{page}");
    // Around one resource: the image asks for the same drawing.
    let around = "/graph?resource=net.routerd.net%2Fv1alpha1%2FInterface%2Flan";
    let page = body(ui.get(around, Some(&cookie)).await).await;
    assert!(
        page.contains("Interface/lan: its artifacts (1) and their neighbours, 2 nodes"),
        "{page}"
    );
    assert!(
        page.contains("data=\"/graph.svg?resource=net.routerd.net%2Fv1alpha1%2FInterface%2Flan\""),
        "{page}"
    );
    let page = body(ui.get("/graph?resource=nope", Some(&cookie)).await).await;
    assert!(page.contains("No artifact of nope in the plan."), "{page}");
    let page = body(ui.get("/graph?view=whole", Some(&cookie)).await).await;
    assert!(page.contains("2 nodes") && page.contains("/graph.svg?view=whole"), "{page}");
    let svg = ui.get("/graph.svg", Some(&cookie)).await;
    assert_eq!(svg.headers()[header::CONTENT_TYPE], "image/svg+xml");
    let csp = svg.headers()["content-security-policy"].to_str().expect("ascii").to_string();
    assert!(csp.starts_with("default-src 'none'"), "its own policy: {csp}");
    assert!(!csp.contains("script"), "{csp}");
    let svg = body(svg).await;
    assert!(svg.contains("<svg") && svg.contains("link lan0"), "{svg}");
    assert!(svg.contains("&lt;10.0.0.1&gt;") && !svg.contains("<10.0.0.1>"), "{svg}");
    let dot = ui.get("/graph.dot", Some(&cookie)).await;
    let disposition = dot.headers()[header::CONTENT_DISPOSITION].to_str().expect("ascii");
    assert!(disposition.starts_with("attachment"), "{disposition}");
    assert_eq!(body(dot).await, GRAPH);
}

#[tokio::test]
async fn the_graph_page_pans_and_zooms_the_drawing_with_the_embedded_svg_pan_zoom() {
    // Issue 34 §6: fit on load, zoom (wheel, + and −), pan (drag), Fit.
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let page = ui.get("/graph?view=whole", Some(&cookie)).await;
    // The page's policy lets it embed its own SVG (object-src falls back to default-src).
    let csp = page.headers()["content-security-policy"].to_str().expect("ascii").to_string();
    assert!(csp.contains("default-src 'self'") && !csp.contains("object-src"), "{csp}");
    let page = body(page).await;
    assert!(
        page.contains(
            "<object id=\"graph-svg\" type=\"image/svg+xml\" data=\"/graph.svg?view=whole\""
        ),
        "{page}"
    );
    for control in ["id=\"zoom-in\"", "id=\"zoom-out\"", "id=\"zoom-fit\">Fit</button>"] {
        assert!(page.contains(control), "{control}: {page}");
    }
    assert!(page.contains("id=\"graph-controls\" hidden>"), "shown by the script only");
    let panzoom = asset_in(&page, "svg-pan-zoom.");
    assert!(panzoom.starts_with("/assets/svg-pan-zoom.min.") && panzoom.ends_with(".js"));
    let js = asset_in(&page, "routerd.");
    let (library, ours) = (
        page.find(&format!("<script src=\"{panzoom}\" defer></script>")).expect("the library"),
        page.find(&format!("<script src=\"{js}\" defer></script>")).expect("our script"),
    );
    assert!(library < ours, "the library runs first");
    let asset = ui.get(&panzoom, None).await;
    assert_eq!(asset.status(), StatusCode::OK);
    assert_eq!(asset.headers()[header::CONTENT_TYPE], "text/javascript; charset=utf-8");
    assert!(asset.headers()[header::CACHE_CONTROL].to_str().expect("ascii").contains("immutable"));
    let library = body(asset).await;
    assert!(library.starts_with("// svg-pan-zoom v3.6.2"), "{:.80}", library);
    assert!(body(ui.get(&js, None).await).await.contains("window.svgPanZoom(object"));
    // The drawing may be embedded by our pages only.
    let svg = ui.get("/graph.svg?view=whole", Some(&cookie)).await;
    let csp = svg.headers()["content-security-policy"].to_str().expect("ascii").to_string();
    assert!(csp.contains("frame-ancestors 'self'"), "{csp}");
}

/// The next server-sent event named `name` on `stream`, within 10 s.
async fn next_event(stream: &mut Body, name: &str) -> String {
    use http_body_util::BodyExt;
    let deadline = std::time::Duration::from_secs(10);
    loop {
        let frame = tokio::time::timeout(deadline, stream.frame()).await.expect("an event in time");
        let data = frame.expect("stream open").expect("frame").into_data().unwrap_or_default();
        let text = String::from_utf8_lossy(&data).into_owned();
        if text.contains(&format!("event: {name}")) {
            return text;
        }
    }
}

#[tokio::test]
async fn the_updates_page_shows_the_slots_and_stages_only_an_upload_carrying_the_csrf_token() {
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let page = body(ui.get("/ota", Some(&cookie)).await).await;
    assert!(page.contains("rootfs.0") && page.contains("(running now)"), "{page}");
    assert!(page.contains("inactive, boots next"), "{page}");
    assert!(page.contains("class=\"gate-good\"") && page.contains("every check passed"));
    assert!(
        page.contains("enctype=\"multipart/form-data\"") && page.contains("action=\"/ota/fetch\"")
    );
    assert!(page.contains("data-events=\"/ota/events?rendered=settled\""), "{page}");
    let csrf = csrf_of(&page);
    // Larger than one multipart chunk, so the upload is streamed in pieces.
    let mut bundle = SIGNED.to_vec();
    bundle.extend((0..300_000u32).map(|i| (i % 251) as u8));

    let refused = ui.upload(&[("csrf", "not-the-token")], Some(&bundle), &cookie).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let file_first = ui.upload(&[], Some(&bundle), &cookie).await;
    assert_eq!(file_first.status(), StatusCode::FORBIDDEN, "the token must come before the file");
    assert!(ui.backend.staged.lock().expect("lock").is_none(), "nothing stored without the token");
    assert_eq!(location(&ui.upload(&[("csrf", &csrf)], Some(&bundle), "").await), "/login");

    let tampered = ui.upload(&[("csrf", &csrf)], Some(b"unsigned"), &cookie).await;
    assert_eq!(tampered.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = body(tampered).await;
    assert!(html.contains("RAUC refused the bundle: signature verification failed"), "{html}");

    let stored = ui.upload(&[("csrf", &csrf)], Some(&bundle), &cookie).await;
    assert_eq!(stored.status(), StatusCode::SEE_OTHER);
    assert_eq!(location(&stored), "/ota");
    let staged = ui.backend.staged.lock().expect("lock").clone().expect("staged");
    assert_eq!(staged.0, "update.raucb");
    assert!(staged.1 == bundle, "the bundle arrives byte for byte");

    let page = body(ui.get("/ota", Some(&cookie)).await).await;
    assert!(
        page.contains("2.0.&#60;b&#62;1&#60;/b&#62;") || page.contains("2.0.&lt;b&gt;1&lt;/b&gt;"),
        "{page}"
    );
    assert!(page.contains(DIGEST) && page.contains("id=\"install-button\""), "{page}");
    assert!(page.contains("CN=routerd release signing,O=Example"), "the signer is shown");
    assert!(!page.contains("action=\"/ota/upload\""), "one bundle at a time");

    let form = format!("csrf={csrf}&url=http%3A%2F%2Fh%2Fx");
    let html = body(ui.post("/ota/fetch", &form, Some(&cookie)).await).await;
    assert!(html.contains("Download failed: http://h/x answered 404 Not Found"), "{html}");

    let discarded = ui.post("/ota/discard", &format!("csrf={csrf}"), Some(&cookie)).await;
    assert_eq!(discarded.status(), StatusCode::SEE_OTHER);
    assert!(ui.backend.staged.lock().expect("lock").is_none());
}

#[tokio::test]
async fn an_install_needs_the_digest_shown_streams_its_progress_and_offers_the_reboot() {
    let ui = Ui::with_password();
    let cookie = ui.login().await;
    let csrf = csrf_of(&body(ui.get("/ota", Some(&cookie)).await).await);

    let forged = ui.post("/ota/install", &format!("csrf=x&digest={DIGEST}"), Some(&cookie)).await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    let form = format!("csrf={csrf}&digest=manifest-sha256%3Aff");
    let stale = ui.post("/ota/install", &form, Some(&cookie)).await;
    assert_eq!(stale.status(), StatusCode::CONFLICT);
    assert!(body(stale).await.contains("changed since it was shown"));
    assert!(ui.backend.installs.lock().expect("lock").is_empty());

    let events = ui.get("/ota/events", Some(&cookie)).await;
    assert_eq!(events.headers()[header::CONTENT_TYPE], "text/event-stream");
    let mut stream = events.into_body();
    let idle = next_event(&mut stream, "progress").await;
    assert!(idle.contains("No update installed"), "{idle}");

    let digest = urlencode(DIGEST);
    let form = format!("csrf={csrf}&digest={digest}");
    let started = ui.post("/ota/install", &form, Some(&cookie)).await;
    assert_eq!(started.status(), StatusCode::SEE_OTHER);
    assert_eq!(*ui.backend.installs.lock().expect("lock"), vec![DIGEST.to_string()]);
    let running = next_event(&mut stream, "progress").await;
    assert!(
        running.contains("value=\"0\"") && running.contains("Installing version 2.0"),
        "{running}"
    );
    let page = body(ui.get("/ota", Some(&cookie)).await).await;
    assert!(page.contains("id=\"upload-button\" disabled"), "no second bundle during an install");
    assert!(page.contains("/ota/events?rendered=running"), "{page}");

    ui.backend.progress.send_modify(|v| {
        v.percent = 40;
        v.message = "Copying image to rootfs.1".into();
    });
    let moving = next_event(&mut stream, "progress").await;
    assert!(
        moving.contains("value=\"40\"") && moving.contains("Copying image to rootfs.1"),
        "{moving}"
    );
    ui.backend.progress.send_modify(|v| {
        v.phase = InstallPhase::Succeeded;
        v.percent = 100;
    });
    // The slots changed as well: the page reloads, then shows the result and the reboot.
    let reload = next_event(&mut stream, "reload").await;
    assert!(reload.contains("succeeded"), "{reload}");
    let page = body(ui.get("/ota", Some(&cookie)).await).await;
    assert!(
        page.contains("Installed version 2.0") && page.contains("id=\"install-reboot\""),
        "{page}"
    );
    // A page rendered during the install whose stream opens after it ended: reload at once.
    let late = ui.get("/ota/events?rendered=running", Some(&cookie)).await;
    let reload = next_event(&mut late.into_body(), "reload").await;
    assert!(reload.contains("succeeded"), "{reload}");
    let settled = ui.get("/ota/events?rendered=settled", Some(&cookie)).await;
    let shown = next_event(&mut settled.into_body(), "progress").await;
    assert!(shown.contains("Installed version 2.0"), "{shown}");

    let forged = ui.post("/ota/reboot", "csrf=x", Some(&cookie)).await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    assert!(!ui.backend.rebooted.load(std::sync::atomic::Ordering::SeqCst));
    let rebooting =
        body(ui.post("/ota/reboot", &format!("csrf={csrf}"), Some(&cookie)).await).await;
    assert!(rebooting.contains("The router is rebooting"), "{rebooting}");
    assert!(ui.backend.rebooted.load(std::sync::atomic::Ordering::SeqCst));

    let form = format!("csrf={csrf}&slot=rootfs.0");
    let next = body(ui.post("/ota/boot-next", &form, Some(&cookie)).await).await;
    assert!(next.contains("activated slot rootfs.0"), "{next}");
    assert_eq!(location(&ui.get("/ota/events", None).await), "/login");
}
