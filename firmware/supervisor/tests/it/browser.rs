//! Browser end-to-end: the web UI in headless Chromium (Debian `chromium` + `chromium-driver`,
//! driven over WebDriver with fantoccini) against `routerd serve` on a lab namespace.
//!
//! One operator session proves, in order: the setup token and the login; a config error shown
//! at its line while typing, and its fix; the plan diff; an apply with a confirm window and its
//! confirm; a second apply left unconfirmed whose automatic rollback restores the kernel state
//! (read back with `ip`, independently of routerd) while the countdown runs, after which the page
//! reloads itself without the confirm panel; the adoption of a link made by hand; the artifacts
//! browser and the dependency graph image; and a doctor failure pushed live to an open page
//! (server-sent events, no reload) after a hand-made change routerd cannot repair.
//!
//! A screenshot of every step lands in `$CARGO_TARGET_TMPDIR/browser/NN-step.png`, with the
//! daemon's and chromedriver's logs. Needs root and `scripts/bootstrap.sh`'s packages: without
//! Chromium or chromedriver the test fails, it never skips.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::wd::Capabilities;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use routerd_test_kit::daemon::{Daemon, wait_until};

use crate::support::Netns;

const ROUTERD: &str = env!("CARGO_BIN_EXE_routerd");
const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "chromedriver";
/// How long any one condition may take (CI machines are slow).
const DEADLINE: Duration = Duration::from_secs(30);
const PASSWORD: &str = "correct horse battery";

/// Generation 1, the config file the daemon starts with.
const CONFIG: &str = "apiVersion: routerd.net/v1alpha1
kind: Router
metadata:
  name: browser
spec:
  resources:
    - apiVersion: net.routerd.net/v1alpha1
      kind: Interface
      metadata:
        name: lan
      spec:
        ifname: lan0
        managed: true
        adminUp: true
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticAddress
      metadata:
        name: lan-v4
      spec:
        interface: lan
        address: 10.9.0.1/24
";

/// Typed at the end of the editor for generation 2.
const ROUTE: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticRoute
      metadata:
        name: to-lab
      spec:
        interface: lan
        destination: 100.64.0.0/24
        via: 10.9.0.254
        table: 1000
";

/// Typed at the end of the editor for generation 3 (the one left unconfirmed).
const SECOND_ROUTE: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticRoute
      metadata:
        name: to-lab-2
      spec:
        interface: lan
        destination: 100.64.1.0/24
        via: 10.9.0.254
        table: 1000
";

/// The `routerctl` binary next to `routerd`.
fn routerctl() -> PathBuf {
    let path = Path::new(ROUTERD).parent().expect("target dir").join("routerctl");
    assert!(path.exists(), "build routerctl first (cargo build --workspace): {}", path.display());
    path
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("addr").port()
}

fn listening(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
}

/// Polls `ok` until it holds; panics naming `what` after [`DEADLINE`].
fn wait_for(what: &str, ok: impl FnMut() -> bool) {
    wait_until(what, DEADLINE, ok);
}

/// The directory of this test's screenshots and logs, emptied first.
fn output_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the screenshot directory");
    dir
}

/// `routerd serve` with the web UI on a loopback port, on a namespace with a veth pair
/// `lan0`/`peer0` made by hand before the daemon starts (so `lan0` is an adoption candidate).
/// On drop the daemon is killed, then the namespace deleted (in field order).
struct Router {
    _daemon: Daemon,
    lab: Netns,
    dir: tempfile::TempDir,
    port: u16,
    log: PathBuf,
}

impl Router {
    fn start(out: &Path) -> Self {
        Self::start_with(out, &[])
    }

    /// Started with `extra` arguments to `routerd serve`.
    fn start_with(out: &Path, extra: &[&str]) -> Self {
        let lab = Netns::new("browser");
        lab.ip(&["link", "add", "lan0", "type", "veth", "peer", "name", "peer0"]);
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("router.yaml"), CONFIG).expect("config");
        let port = free_port();
        let log = out.join("routerd.log");
        let mut daemon = Daemon::spawn(
            Command::new(ROUTERD)
                .args(["serve", "--netns", lab.name(), "--resync", "1h", "--debounce", "50ms"])
                .args(["--sample-interval", "1s"])
                .arg("--config")
                .arg(dir.path().join("router.yaml"))
                .arg("--ledger")
                .arg(dir.path().join("l.redb"))
                .arg("--control-socket")
                .arg(dir.path().join("control.sock"))
                .arg("--state-dir")
                .arg(dir.path().join("state"))
                .args(["--listen", &format!("127.0.0.1:{port}")])
                .args(extra)
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).expect("log")),
        );
        let socket = dir.path().join("control.sock");
        daemon.wait_until("the daemon's first reconcile", DEADLINE, || {
            ctl_json(&socket, &["status"]).is_some_and(|s| s["reconciles"].as_u64() >= Some(1))
        });
        daemon.wait_until("the web UI to listen", DEADLINE, || listening(port));
        Self { _daemon: daemon, lab, dir, port, log }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The one-time setup token the daemon printed on its console.
    fn token(&self) -> String {
        let log = std::fs::read_to_string(&self.log).expect("the daemon's log");
        let rest = log.split("one-time setup token: ").nth(1).expect("the token on the console");
        rest.chars().take_while(char::is_ascii_hexdigit).collect()
    }

    /// `routerctl -o json ARGS…`, parsed; `None` when it fails.
    fn ctl_json(&self, args: &[&str]) -> Option<serde_json::Value> {
        ctl_json(&self.dir.path().join("control.sock"), args)
    }

    fn config_file(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("router.yaml")).expect("the config file")
    }

    /// Table 1000 as (destination, gateway), read with `ip` (an empty table makes `ip` fail:
    /// no routes).
    fn routes(&self) -> Vec<(String, String)> {
        let out = Command::new("ip")
            .args(["-n", self.lab.name(), "-j", "route", "show", "table", "1000"])
            .output()
            .expect("ip");
        let list: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let field = |r: &serde_json::Value, k: &str| r[k].as_str().unwrap_or_default().to_string();
        list.iter().map(|r| (field(r, "dst"), field(r, "gateway"))).collect()
    }
}

/// `routerctl --socket SOCKET -o json ARGS…`, parsed; `None` when it fails.
fn ctl_json(socket: &Path, args: &[&str]) -> Option<serde_json::Value> {
    let out = Command::new(routerctl())
        .arg("--socket")
        .arg(socket)
        .args(["-o", "json"])
        .args(args)
        .output()
        .expect("routerctl runs");
    out.status.success().then(|| serde_json::from_slice(&out.stdout).expect("JSON"))
}

fn route(dst: &str, gateway: &str) -> (String, String) {
    (dst.to_string(), gateway.to_string())
}

/// `chromedriver` on a free port; Chromium gets a profile directory of its own. On drop both
/// are killed (a killed chromedriver leaves Chromium running, so its processes are found by
/// that profile directory), also when the test fails.
struct Driver {
    child: Child,
    port: u16,
    profile: tempfile::TempDir,
}

impl Driver {
    fn start(out: &Path) -> Self {
        assert!(
            Path::new(CHROMIUM).exists(),
            "{CHROMIUM} is missing: run scripts/bootstrap.sh (it installs chromium and \
             chromium-driver)"
        );
        let port = free_port();
        let log = std::fs::File::create(out.join("chromedriver.log")).expect("log");
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{CHROMEDRIVER}: {e}: run scripts/bootstrap.sh (installs chromium-driver)")
            });
        let driver = Self { child, port, profile: tempfile::tempdir().expect("profile dir") };
        wait_for("chromedriver to listen", || listening(port));
        driver
    }

    async fn connect(&self) -> Client {
        let profile = format!("--user-data-dir={}", self.profile.path().display());
        let options = serde_json::json!({
            "binary": CHROMIUM,
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", profile,
                "--window-size=1280,1024",
            ],
        });
        let mut capabilities = Capabilities::new();
        capabilities.insert("goog:chromeOptions".into(), options);
        ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .expect("a Chromium session from chromedriver")
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let profile = self.profile.path().to_string_lossy().into_owned();
        let leftovers = pids_with_argument(&profile);
        if !leftovers.is_empty() {
            let _ = Command::new("kill").arg("-KILL").args(&leftovers).status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The processes whose command line mentions `needle`.
fn pids_with_argument(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().into_string().ok()?;
            pid.parse::<u32>().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            String::from_utf8_lossy(&cmdline).contains(needle).then_some(pid)
        })
        .collect()
}

/// The browser session, its base URL and the screenshot counter.
struct Ui {
    client: Client,
    base: String,
    out: PathBuf,
    step: Cell<u32>,
}

impl Ui {
    async fn goto(&self, path: &str) {
        let url = format!("{}{path}", self.base);
        self.client.goto(&url).await.unwrap_or_else(|e| panic!("open {url}: {e}"));
    }

    /// Saves the page as `NN-name.png`.
    async fn shot(&self, name: &str) {
        self.step.set(self.step.get() + 1);
        let png = self.client.screenshot().await.expect("a screenshot");
        let file = self.out.join(format!("{:02}-{name}.png", self.step.get()));
        std::fs::write(&file, png).expect("write the screenshot");
    }

    async fn find(&self, css: &str) -> Element {
        self.client.find(Locator::Css(css)).await.unwrap_or_else(|e| panic!("find {css}: {e}"))
    }

    async fn click(&self, css: &str) {
        self.find(css).await.click().await.unwrap_or_else(|e| panic!("click {css}: {e}"));
    }

    async fn type_into(&self, css: &str, text: &str) {
        self.find(css).await.send_keys(text).await.unwrap_or_else(|e| panic!("type {css}: {e}"));
    }

    /// The text of every element matching `css`, one per line ("" while the page changes).
    async fn text(&self, css: &str) -> String {
        let Ok(found) = self.client.find_all(Locator::Css(css)).await else { return String::new() };
        let mut text = String::new();
        for element in found {
            text.push_str(&element.text().await.unwrap_or_default());
            text.push('\n');
        }
        text
    }

    async fn script(&self, js: &str, args: Vec<serde_json::Value>) -> serde_json::Value {
        self.client.execute(js, args).await.unwrap_or_else(|e| panic!("script {js}: {e}"))
    }

    /// Polls `ok` every 100 ms until it holds; after [`DEADLINE`], saves a screenshot and
    /// panics with the page's address and text.
    async fn wait(&self, what: &str, mut ok: impl AsyncFnMut() -> bool) {
        let until = Instant::now() + DEADLINE;
        while !ok().await {
            if Instant::now() > until {
                let url = self.client.current_url().await.map(|u| u.to_string());
                let body = self.text("body").await;
                self.shot("timeout").await;
                panic!("timed out after {DEADLINE:?} waiting for {what} on {url:?}:\n{body}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until an element matching `css` contains `needle`.
    async fn wait_text(&self, css: &str, needle: &str) {
        self.wait(&format!("{needle:?} in {css}"), async || self.text(css).await.contains(needle))
            .await;
    }

    /// Selects `old` in the editor (the end of the text when `None`) as the operator would with
    /// the mouse, then types `new` over it, key by key.
    async fn type_in_editor(&self, old: Option<&str>, new: &str) {
        let js = "const t = document.querySelector('textarea[name=yaml]');
            const old = arguments[0];
            const at = old === null ? t.value.length : t.value.indexOf(old);
            if (at < 0) return false;
            t.focus();
            t.setSelectionRange(at, at + (old === null ? 0 : old.length));
            return true;";
        let found = self.script(js, vec![serde_json::json!(old)]).await;
        assert_eq!(found, serde_json::json!(true), "{old:?} in the editor");
        let editor = self.client.active_element().await.expect("the focused editor");
        editor.send_keys(new).await.expect("typing in the editor");
    }

    /// The editor's text as the browser holds it.
    async fn editor_text(&self) -> String {
        let editor = self.find("textarea[name=yaml]").await;
        editor.prop("value").await.expect("the editor's value").unwrap_or_default()
    }

    /// Types a confirm window of `seconds` into the editor's field.
    async fn choose_confirm_window(&self, seconds: u64) {
        let control = self.find("input[name=confirm]").await;
        control.clear().await.expect("clear the window");
        control.send_keys(&seconds.to_string()).await.expect("type the window");
        let chosen = control.prop("value").await.expect("value").unwrap_or_default();
        assert_eq!(chosen, seconds.to_string(), "the confirm window");
    }
}

#[tokio::test]
async fn an_operator_edits_applies_rolls_back_adopts_and_watches_the_doctor_in_chromium() {
    let out = output_dir("browser");
    let driver = Driver::start(&out);
    let router = Router::start(&out);
    let client = driver.connect().await;
    let ui = Ui { client, base: router.url(), out, step: Cell::new(0) };

    log_in(&ui, &router).await;
    edit_plan_apply_and_confirm(&ui, &router).await;
    leave_an_apply_unconfirmed(&ui, &router).await;
    adopt_the_hand_made_link(&ui, &router).await;
    see_artifacts_and_the_graph(&ui).await;
    watch_the_doctor_fail_live(&ui, &router).await;
    see_a_repair_on_the_overview(&ui, &router).await;
    lose_no_edit_to_a_console_apply(&ui, &router).await;
    roll_back_from_the_history(&ui, &router).await;
    see_the_charts(&ui).await;
    every_page_fits_a_desktop_and_a_phone(&ui).await;

    ui.client.close().await.expect("end the browser session");
}

/// Issue 34 §2: the address removed by hand comes back (a netlink notification triggers the
/// reconcile), and the Overview, refreshing itself, names what was repaired, apart from the
/// last apply.
async fn see_a_repair_on_the_overview(ui: &Ui, router: &Router) {
    ui.goto("/").await;
    ui.wait_text("h1", "Overview").await;
    ui.script("window.sameDocument = true;", Vec::new()).await;
    router.lab.ip(&["address", "del", "10.9.0.1/24", "dev", "lan0"]);
    ui.wait_text("#last-repair", "linux.ipv4.address/lan0/10.9.0.1/24").await;
    ui.wait_text("#last-repair", "after a change of the host's addresses").await;
    assert!(router.lab.ip(&["-4", "address", "show", "dev", "lan0"]).contains("10.9.0.1/24"));
    let same = ui.script("return window.sameDocument === true;", Vec::new()).await;
    assert_eq!(same, serde_json::json!(true), "refreshed in place, not reloaded");
    assert!(ui.text("#last-apply").await.contains("Generation"), "the last apply apart");
    ui.shot("overview-repair").await;
}

/// Issue 34 §2: a rollback chosen on the History page asks first, shows what comes back, and
/// opens a confirm window like an apply; the new generation records the web user and why.
async fn roll_back_from_the_history(ui: &Ui, router: &Router) {
    ui.goto("/history").await;
    ui.wait_text("h1", "History").await;
    ui.click("a[href='/history/rollback?generation=2']").await;
    ui.wait_text("h1", "Roll back to generation 2?").await;
    assert!(ui.text("pre.diff").await.contains("to-lab-2"), "what goes away is shown");
    let before = router.config_file();
    ui.type_into("input[name=comment]", "back to one route").await;
    ui.shot("rollback-question").await;
    ui.click("form[action='/history/rollback'] button[type=submit]").await;
    ui.wait_text("#countdown", "is rolled back in").await;
    assert_eq!(router.config_file(), before, "unconfirmed: the file keeps the running text");
    let status = router.ctl_json(&["status"]).expect("status");
    let waiting = status["pendingConfirm"]["generation"].as_u64().expect("a confirm window");
    ui.shot("rollback-awaiting-confirm").await;
    ui.click("form[action='/confirm'] button[type=submit]").await;
    ui.wait("the confirm panel to go", async || ui.text("#confirm").await.is_empty()).await;
    assert!(!router.config_file().contains("to-lab-2"), "confirmed: generation 2's text");
    ui.wait_text("#last-apply", &format!("Generation {waiting} by admin (web)")).await;
    ui.wait_text("#last-apply", "rollback to generation 2: back to one route").await;
    ui.goto("/history").await;
    let rows = ui.text("tbody tr").await;
    let row = rows.lines().find(|l| l.starts_with(&format!("{waiting} (running)")));
    assert!(row.is_some_and(|r| r.contains("web/admin")), "{rows}");
}

/// Issue 34 §6: the interfaces' bit rates sampled every second (`--sample-interval 1s`) drawn
/// as SVG lines on the Interfaces page, with the reconciles' chart.
async fn see_the_charts(ui: &Ui) {
    ui.goto("/interfaces").await;
    ui.wait_text("h1", "Interfaces").await;
    ui.wait("a line on lan0's chart", async || {
        let js = "return [...document.querySelectorAll('figure.chart')].some(f =>
            f.querySelector('figcaption').textContent.startsWith('lan0: bit/s')
            && f.querySelector('svg polyline') !== null);";
        ui.script(js, Vec::new()).await == serde_json::json!(true)
    })
    .await;
    ui.wait_text("figure.chart figcaption", "reconciles: duration and phase").await;
    ui.shot("interfaces").await;
}

/// The pages an operator visits, by name for the screenshots.
const PAGES: [(&str, &str); 14] = [
    ("overview", "/"),
    ("config", "/config"),
    ("history", "/history"),
    ("history-diff", "/history/diff?from=1&to=2"),
    ("rollback", "/history/rollback?generation=1"),
    ("interfaces", "/interfaces"),
    ("adoption", "/adopt"),
    ("artifacts", "/artifacts"),
    ("ledger", "/ledger"),
    ("graph", "/graph"),
    ("dns", "/dns"),
    ("doctor", "/doctor"),
    ("updates", "/ota"),
    ("graph-whole", "/graph?view=whole"),
];

/// Issue 34 §7: at 1280 and at 390 px wide (a phone), no page scrolls sideways; the navigation
/// marks the page (`aria-current`) and, on the phone, collapses behind its button; every form
/// control has a label. A screenshot of each page at each width (`webui/README.md` shows them).
async fn every_page_fits_a_desktop_and_a_phone(ui: &Ui) {
    for (width, height) in [(1280, 900), (390, 844)] {
        ui.client.set_window_size(width, height).await.expect("resize the window");
        for (name, path) in PAGES {
            ui.goto(path).await;
            ui.wait(&format!("{path} to load"), async || !ui.text("h1").await.is_empty()).await;
            // The banner and the live parts come in after the load.
            ui.wait("the banner", async || {
                ui.script("return document.querySelector('#banner[hx-get]') === null;", vec![])
                    .await
                    == serde_json::json!(true)
            })
            .await;
            let fits = "const d = document.documentElement;
                return [d.scrollWidth, d.clientWidth, window.innerWidth];";
            let sizes = ui.script(fits, Vec::new()).await;
            let (scroll, client) = (sizes[0].as_u64(), sizes[1].as_u64());
            assert!(
                scroll <= client,
                "{path} at {width} px scrolls sideways: {sizes} (scrollWidth, clientWidth, innerWidth)"
            );
            if width == 390 {
                assert!(sizes[2].as_u64() <= Some(400), "the window is phone-wide: {sizes}");
            }
            let unlabelled = "return [...document.querySelectorAll('input, select, textarea')]
                .filter(e => !['hidden', 'submit', 'button'].includes(e.type))
                .filter(e => e.labels.length === 0 && !e.getAttribute('aria-label')
                    && !e.getAttribute('aria-labelledby'))
                .map(e => e.outerHTML.slice(0, 120));";
            let missing = ui.script(unlabelled, Vec::new()).await;
            assert_eq!(missing, serde_json::json!([]), "{path}: form controls without a label");
            let current = "const a = document.querySelector('nav a[aria-current=page]');
                return a ? a.getAttribute('href') : null;";
            let marked = ui.script(current, Vec::new()).await;
            assert!(marked.as_str().is_some_and(|href| path.starts_with(href)), "{path}: {marked}");
            let file = format!("{width}-{name}");
            ui.shot(&file).await;
        }
        // Keyboard focus is visible: the first Tab lands on the skip link, outlined.
        ui.goto("/").await;
        ui.wait_text("h1", "Overview").await;
        ui.find("body").await.send_keys("\u{E004}").await.expect("press Tab");
        let focus = "const e = document.activeElement, s = getComputedStyle(e);
            return [e.className, s.outlineStyle, parseFloat(s.outlineWidth) >= 2];";
        let focused = ui.script(focus, vec![]).await;
        assert_eq!(focused, serde_json::json!(["skip", "solid", true]), "focus at {width} px");
        if width == 390 {
            ui.goto("/").await;
            ui.wait_text("h1", "Overview").await;
            let nav_shown = "return getComputedStyle(document.querySelector('nav')).display;";
            assert_eq!(ui.script(nav_shown, vec![]).await, "none", "collapsed on a phone");
            ui.click("label.menu-button").await;
            assert_eq!(ui.script(nav_shown, vec![]).await, "flex", "opened by its button");
            ui.shot("390-menu-open").await;
        }
    }
    ui.client.set_window_size(1280, 1024).await.expect("resize the window back");
}

/// The artifacts browser filtered to routes, and the dependency graph drawn as an image the
/// browser decoded.
async fn see_artifacts_and_the_graph(ui: &Ui) {
    ui.goto("/artifacts?kind=linux.ipv4.route").await;
    ui.wait_text("#count", "1 of").await;
    ui.wait_text("table.artifacts", "100.64.0.0/24").await;
    ui.shot("artifacts").await;
    ui.goto("/graph").await;
    ui.wait_text("h1", "Dependency graph").await;
    // Issue 34 §6: the drawing fits the view, zooms with the wheel and pans by dragging.
    ui.wait("the graph drawn and fitted", async || {
        let js = "const o = document.getElementById('graph-svg');
            const c = document.getElementById('graph-controls');
            if (!o || !c || c.hidden || !o.contentDocument) return false;
            const v = o.contentDocument.querySelector('.svg-pan-zoom_viewport');
            if (!v) return false;
            const b = v.getBoundingClientRect();
            return b.width > 50 && b.width <= o.clientWidth + 1 && b.height <= o.clientHeight + 1;";
        ui.script(js, Vec::new()).await == serde_json::json!(true)
    })
    .await;
    let zoom = "const o = document.getElementById('graph-svg'),
            svg = o.contentDocument.documentElement,
            v = svg.querySelector('.svg-pan-zoom_viewport'),
            s = () => new DOMMatrix(v.getAttribute('transform')).a, b = s();
        svg.dispatchEvent(new WheelEvent('wheel', {deltaY: -300, clientX: o.clientWidth / 2,
            clientY: o.clientHeight / 2, bubbles: true, cancelable: true}));
        return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(
            () => r([b, s()]))));";
    let scales = ui.script(zoom, Vec::new()).await;
    let (before, after) = (scales[0].as_f64(), scales[1].as_f64());
    assert!(after > before, "the wheel zooms in: {scales}");
    let pan = "const o = document.getElementById('graph-svg'),
            svg = o.contentDocument.documentElement,
            v = svg.querySelector('.svg-pan-zoom_viewport'),
            m = () => new DOMMatrix(v.getAttribute('transform')), b = m();
        const at = (type, x, y, buttons) => svg.dispatchEvent(new MouseEvent(type,
            {clientX: x, clientY: y, buttons, button: 0, bubbles: true, cancelable: true}));
        at('mousedown', 100, 100, 1); at('mousemove', 180, 140, 1); at('mouseup', 180, 140, 0);
        return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => {
            const a = m(); r([Math.round(a.e - b.e), Math.round(a.f - b.f)]); })));";
    let moved = ui.script(pan, Vec::new()).await;
    assert_eq!(moved, serde_json::json!([80, 40]), "dragging pans");
    ui.shot("graph").await;
    // One resource and its neighbours, picked in the form.
    ui.type_into("input#resource", "net.routerd.net/v1alpha1/Interface/lan").await;
    ui.click("form.graph-pick button[type=submit]").await;
    ui.wait_text("#count", "Interface/lan: its artifacts (1) and their neighbours").await;
    ui.wait("the resource's graph to be drawn", async || {
        let js = "const o = document.getElementById('graph-svg');
            return !!o && o.data.includes('resource=') && !!o.contentDocument
                && !!o.contentDocument.querySelector('.svg-pan-zoom_viewport');";
        ui.script(js, Vec::new()).await == serde_json::json!(true)
    })
    .await;
    ui.shot("graph-resource").await;
}

/// The setup page (prefilled from the console's token link), then the login.
async fn log_in(ui: &Ui, router: &Router) {
    ui.goto(&format!("/setup?token={}", router.token())).await;
    ui.wait_text("h1", "Set the admin password").await;
    ui.type_into("input[name=password]", PASSWORD).await;
    ui.type_into("input[name=again]", PASSWORD).await;
    ui.shot("setup").await;
    ui.click("form[action='/setup'] button[type=submit]").await;

    ui.wait_text("h1", "Log in").await;
    ui.type_into("input[name=password]", PASSWORD).await;
    ui.shot("login").await;
    ui.click("form[action='/login'] button[type=submit]").await;
    ui.wait_text("h1", "Overview").await;
    ui.wait_text("#phase", "RequiresAdoption").await;
    // Issue 34 §4: a first start says what RequiresAdoption means and where to act.
    ui.wait_text("#adoption-needed", "did not create").await;
    let review = ui.find("#adoption-needed a").await.attr("href").await.expect("href");
    assert_eq!(review.as_deref(), Some("/adopt"), "links to the adoption review");
    ui.shot("overview").await;
}

/// A bad address shown at its line as it is typed; the fix; the plan of a new route; apply with
/// the default confirm window; confirm.
async fn edit_plan_apply_and_confirm(ui: &Ui, router: &Router) {
    ui.goto("/config").await;
    ui.wait_text("h1", "Config").await;
    assert_eq!(ui.editor_text().await, CONFIG, "the editor holds the applied text");

    ui.type_in_editor(Some("10.9.0.1/24"), "10.9.0.300/24").await;
    let broken = CONFIG.replace("10.9.0.1/24", "10.9.0.300/24");
    let line = broken.lines().position(|l| l.contains("10.9.0.300/24")).expect("the line") + 1;
    ui.wait_text("#problems", &format!("line {line}, column")).await;
    assert!(ui.text("#problems").await.contains("IPv4StaticAddress/lan-v4"), "names the resource");
    // Issue 34 §5: numbered lines, no soft wrap, Plan first; the problem jumps to its line.
    let editor = "const t = document.getElementById('yaml'), g = document.getElementById('gutter');
        return [t.getAttribute('wrap'), g.hidden,
            g.textContent.trim().split('\\n').length === t.value.split('\\n').length,
            [...document.querySelectorAll('form.editor .row button[type=submit]')].map(b => b.id)];";
    let shape = ui.script(editor, Vec::new()).await;
    assert_eq!(shape, serde_json::json!(["off", false, true, ["plan", "apply"]]), "the editor");
    ui.click("#problems a[data-line]").await;
    let jumped = "const t = document.getElementById('yaml');
        return [document.activeElement === t, t.value.slice(0, t.selectionStart).split('\\n').length,
            t.value.slice(t.selectionStart, t.selectionEnd)];";
    let at = ui.script(jumped, Vec::new()).await;
    assert_eq!(at[0], serde_json::json!(true), "the editor has the focus: {at}");
    assert_eq!(at[1].as_u64(), Some(line as u64), "the caret is on the problem's line: {at}");
    assert!(at[2].as_str().is_some_and(|t| t.contains("10.9.0.300/24")), "{at}");
    ui.shot("error-at-its-line").await;

    ui.type_in_editor(Some("10.9.0.300/24"), "10.9.0.1/24").await;
    ui.type_in_editor(None, ROUTE).await;
    let with_route = format!("{CONFIG}{ROUTE}");
    assert_eq!(ui.editor_text().await, with_route);
    ui.wait_text("#problems", "Valid: 3 resources").await;
    ui.shot("fixed").await;

    ui.click("button[formaction='/config/plan']").await;
    ui.wait_text("h1", "Plan").await;
    let operations = ui.text("table.plan tr.op-create").await;
    assert!(operations.contains("linux.ipv4.route") && operations.contains("100.64.0.0/24"));
    assert!(router.routes().is_empty(), "planning changes nothing");
    // The YAML diff against the running config; Edit goes back with the text and comment kept.
    let added = ui.text("#yaml-diff .add").await;
    assert!(added.contains("+        destination: 100.64.0.0/24"), "{added}");
    ui.type_into("input[name=comment]", "a route").await;
    ui.shot("plan").await;
    ui.click("#edit").await;
    ui.wait_text("h1", "Config").await;
    assert_eq!(ui.editor_text().await, with_route, "the text is kept");
    let comment = ui.find("input[name=comment]").await.prop("value").await.expect("value");
    assert_eq!(comment.as_deref(), Some("a route"), "the comment is kept");
    ui.click("#plan").await;
    ui.wait_text("h1", "Plan").await;
    ui.find("input[name=comment]").await.clear().await.expect("clear the comment");

    ui.type_into("input[name=comment]", "a route to the lab").await;
    ui.click("form[action='/config/apply'] button[type=submit]").await;
    ui.wait_text("#countdown", "Generation 2 is rolled back in").await;
    assert_eq!(router.routes(), [route("100.64.0.0/24", "10.9.0.254")], "applied at once");
    ui.shot("applied-awaiting-confirm").await;

    ui.click("form[action='/confirm'] button[type=submit]").await;
    ui.wait("the confirm panel to go", async || {
        ui.text("h1").await.contains("Overview") && ui.text("#confirm").await.is_empty()
    })
    .await;
    assert_eq!(router.routes(), [route("100.64.0.0/24", "10.9.0.254")]);
    // The browser sends the textarea with CRLF breaks; the file keeps the text's own LF.
    assert_eq!(router.config_file(), with_route, "confirmed: the config file holds it");
    ui.shot("confirmed").await;
}

/// A second apply (the first route through another gateway, a second route) with a 10 s window,
/// not confirmed: the countdown runs out, and the previous kernel state comes back.
async fn leave_an_apply_unconfirmed(ui: &Ui, router: &Router) {
    ui.goto("/config").await;
    ui.wait_text("h1", "Config").await;
    ui.type_in_editor(Some("via: 10.9.0.254"), "via: 10.9.0.253").await;
    ui.type_in_editor(None, SECOND_ROUTE).await;
    ui.wait_text("#problems", "Valid: 4 resources").await;
    let before = router.lab.state();
    ui.choose_confirm_window(10).await;
    ui.type_into("input[name=comment]", "left unconfirmed").await;
    ui.shot("second-apply").await;
    ui.click("form[action='/config/apply'] > .row > button[type=submit]:not([formaction])").await;

    ui.wait_text("#countdown", "Generation 3 is rolled back in").await;
    let applied = [route("100.64.0.0/24", "10.9.0.253"), route("100.64.1.0/24", "10.9.0.254")];
    assert_eq!(router.routes(), applied, "applied at once");
    ui.shot("countdown").await;

    ui.wait("the kernel state from before the apply", async || router.lab.state() == before).await;
    assert_eq!(router.routes(), [route("100.64.0.0/24", "10.9.0.254")], "rolled back");
    // The countdown sees the rollback and has the page reload itself: no confirm panel.
    ui.wait("the overview to reload without the confirm panel", async || {
        ui.text("h1").await.contains("Overview") && ui.text("#confirm").await.is_empty()
    })
    .await;
    // Announced on every page until dismissed (issue 34 §2).
    ui.wait_text("#timed-out", "Generation 3 was not confirmed and was rolled back at").await;
    ui.shot("overview-after-rollback").await;

    ui.goto("/history").await;
    ui.wait_text("table", "not confirmed in time").await;
    ui.wait_text("#timed-out", "Generation 3 was not confirmed").await;
    ui.click("#timed-out button[type=submit]").await;
    ui.wait_text("h1", "Overview").await;
    ui.goto("/history").await;
    ui.wait_text("table", "not confirmed in time").await;
    ui.wait("the banner to load without the notice", async || {
        ui.script("return document.querySelector('#banner[hx-get]') === null;", Vec::new()).await
            == serde_json::json!(true)
    })
    .await;
    assert!(ui.text("#timed-out").await.is_empty(), "dismissed");
    // The generation the rollback applied is the one running.
    let rows = ui.text("tbody tr").await;
    assert!(rows.lines().any(|l| l.starts_with("4 (running)")), "{rows}");
    let history = ui.text("tbody tr").await;
    let third = history.lines().find(|l| l.split_whitespace().next() == Some("3"));
    assert!(third.is_some_and(|l| l.contains("rolledBack")), "generation 3: {history}");
    ui.shot("history").await;
}

/// Issue 34 §1: the browser edits (a second route) while the console applies another change
/// (the first route through another gateway). The browser's apply is refused with what changed;
/// re-opened, the editor holds both, and the applied config keeps both.
async fn lose_no_edit_to_a_console_apply(ui: &Ui, router: &Router) {
    ui.goto("/config").await;
    ui.wait_text("h1", "Config").await;
    ui.type_in_editor(None, SECOND_ROUTE).await;
    ui.wait_text("#problems", "Valid: 4 resources").await;

    let console = router.config_file().replace("via: 10.9.0.254", "via: 10.9.0.253");
    let file = router.dir.path().join("console.yaml");
    std::fs::write(&file, &console).expect("write");
    let applied = router.ctl_json(&[
        "apply",
        "-f",
        &file.to_string_lossy(),
        "--no-confirm",
        "--comment",
        "from the console",
    ]);
    assert!(applied.is_some(), "the console's apply");

    ui.choose_confirm_window(0).await;
    ui.click("form[action='/config/apply'] > .row > button[type=submit]:not([formaction])").await;
    ui.wait_text("h1", "The config changed while you edited it").await;
    ui.wait_text("#stale", "from the console").await;
    assert!(ui.text("#changes").await.contains("+        via: 10.9.0.253"), "what changed");
    assert_eq!(router.config_file(), console, "nothing applied");
    ui.shot("stale-apply").await;

    ui.click("#reopen").await;
    ui.wait_text("h1", "Config").await;
    let merged = ui.editor_text().await;
    assert!(merged.contains("via: 10.9.0.253") && merged.contains("to-lab-2"), "{merged}");
    ui.choose_confirm_window(0).await;
    ui.click("form[action='/config/apply'] > .row > button[type=submit]:not([formaction])").await;
    ui.wait_text("h1", "Overview").await;
    // (The doctor's step took the LAN's routes away: the applied text tells.)
    let applied = router.config_file();
    assert!(applied.contains("via: 10.9.0.253") && applied.contains("to-lab-2"), "{applied}");
    ui.shot("edit-reapplied").await;
}

/// `lan0`, made by hand before routerd started, is declared but not owned: select it, approve,
/// and it is in the ledger as adopted.
async fn adopt_the_hand_made_link(ui: &Ui, router: &Router) {
    ui.goto("/adopt").await;
    ui.wait_text("h1", "Adoption").await;
    let checkbox = "input[type=checkbox][value='linux.link/lan0']";
    ui.click(checkbox).await;
    let checked = ui.find(checkbox).await.is_selected().await.expect("checkbox state");
    assert!(checked, "the candidate is selected");
    ui.shot("adoption-candidate").await;
    ui.click("form[action='/adopt'] button[type=submit]").await;
    ui.wait_text("p.notice", "Now owned: linux.link/lan0").await;
    ui.shot("adopted").await;

    let ledger = router.ctl_json(&["ledger"]).expect("routerctl ledger");
    let entries = ledger.as_array().expect("a list");
    let link = entries.iter().find(|e| e["name"] == "lan0").expect("lan0 in the ledger");
    assert_eq!(link["origin"], "adopted", "{link}");
    assert_eq!(link["state"], "owned", "{link}");
    ui.goto("/ledger?kind=linux.link").await;
    ui.wait_text("tbody", "adopted").await;
    assert!(ui.text("tbody").await.contains("lan0"));
    ui.shot("ledger").await;
}

/// With the doctor page open, the gateway is made unreachable by hand (the connected route
/// removed) and the route through it deleted: routerd's repair is refused by the kernel, and the
/// failed check arrives on the same page without a reload.
async fn watch_the_doctor_fail_live(ui: &Ui, router: &Router) {
    ui.goto("/doctor").await;
    ui.wait_text("tr.check-pass", "R002").await;
    ui.script("window.sameDocument = true;", Vec::new()).await;
    ui.shot("doctor-healthy").await;

    router.lab.ip(&["route", "del", "10.9.0.0/24", "dev", "lan0"]);
    router.lab.ip(&["route", "del", "100.64.0.0/24", "table", "1000"]);
    ui.wait_text("tr.check-fail", "R002").await;
    let failed = ui.text("tr.check-fail").await;
    assert!(failed.contains("100.64.0.0/24"), "the failing route is named: {failed}");
    let same = ui.script("return window.sameDocument === true;", Vec::new()).await;
    assert_eq!(same, serde_json::json!(true), "pushed to the open page, not reloaded");
    assert!(router.routes().is_empty(), "routerd could not repair it");
    ui.shot("doctor-failure-live").await;
}

/// Serves `files` (path → bytes) over plain HTTP on loopback; `/latest` redirects (302) to
/// the first file. Returns the base URL.
fn serve_files(files: Vec<(&'static str, Vec<u8>)>) -> String {
    use routerd_ota::testing::http_response;
    routerd_ota::testing::serve_http(move |path| {
        if path == "/latest" {
            let to = format!("Location: {}\r\n", files[0].0);
            return http_response("302 Found", &to, b"");
        }
        match files.iter().find(|(p, _)| *p == path) {
            Some((_, body)) => http_response("200 OK", "", body),
            None => http_response("404 Not Found", "", b""),
        }
    })
}

/// The updates page against a real RAUC on a private bus: a bundle downloaded from a URL
/// (through a redirect) is inspected and shown, then discarded; a bundle signed by a foreign
/// CA is uploaded and refused in RAUC's words; the good bundle is uploaded, inspected and
/// installed, the page follows the install by itself (server-sent events) to the result and
/// the updated slots table; slot B holds the image; Reboot is asked for (the daemon runs with
/// `--no-reboot`); slot A is made the next boot again.
#[tokio::test]
async fn an_operator_installs_an_update_from_the_updates_page_in_chromium() {
    use routerd_ota::testing::{BundleSpec, RaucFixture};
    routerd_ota::testing::require_root();
    let out = output_dir("browser-ota");
    let fixture = RaucFixture::start_in(Path::new(env!("CARGO_TARGET_TMPDIR"))).await;
    fixture.set_grubenv(&["A_TRY=1"]);
    let ca = fixture.ca();
    let spec = BundleSpec::for_test_system;
    let good = fixture.bundle(&spec("good.raucb", "2.0.0", &ca));
    let other = fixture.other_ca();
    let foreign = fixture.bundle(&spec("foreign.raucb", "6.6.6", &other));
    let elsewhere = fixture.bundle(&BundleSpec {
        name: "elsewhere.raucb",
        compatible: "routerd-other-board",
        version: "3.0.0",
        ca: &ca,
    });
    let good_bytes = std::fs::read(&good).expect("the bundle");
    let server = serve_files(vec![("/files/good.raucb", good_bytes)]);

    let driver = Driver::start(&out);
    let extra = ["--rauc-bus", fixture.address(), "--health-gate", "--health-window", "60s"];
    // The bundle server is on loopback, which "install from a URL" refuses unless told.
    let local = ["--no-reboot", "--ota-fetch-local"];
    let router = Router::start_with(&out, &[&extra[..], &local].concat());
    let client = driver.connect().await;
    let ui = Ui { client, base: router.url(), out, step: Cell::new(0) };
    log_in(&ui, &router).await;

    ui.goto("/ota").await;
    ui.wait_text("h1", "Updates").await;
    ui.wait_text("#slot-A", "(running now)").await;
    // The health gate confirms the booted slot; its record is on the page after a reload.
    ui.wait("the health gate's verdict", async || {
        ui.goto("/ota").await;
        ui.text("table.gate").await.contains("good")
    })
    .await;
    ui.shot("updates").await;

    // From a URL that redirects to the bundle: downloaded, inspected, shown; then discarded.
    let url = format!("{server}/latest");
    ui.type_into("input[name=url]", &url).await;
    ui.click("#fetch-button").await;
    ui.wait_text("#bundle-version", "2.0.0").await;
    assert!(ui.text("#bundle-source").await.contains(&url));
    assert!(ui.text("#bundle-digest").await.contains("sha256:"));
    let signer = ui.text("#bundle-signer").await;
    assert!(signer.contains("CN=routerd development bundle signing"), "{signer}");
    ui.shot("downloaded").await;
    ui.click("form[action='/ota/discard'] button").await;
    ui.wait_text("form[action='/ota/upload']", "Bundle file").await;

    // Signed by a CA this router does not trust: refused, in RAUC's words.
    let input = ui.find("input[name=bundle]").await;
    input.send_keys(&foreign.display().to_string()).await.expect("choose the file");
    ui.click("#upload-button").await;
    ui.wait_text("#error", "RAUC refused the bundle").await;
    ui.shot("foreign-refused").await;
    let staged = router.dir.path().join("state/ota/staged.raucb");
    assert!(!staged.exists(), "a refused bundle is not kept");

    // Signed for another board: inspected and flagged; RAUC refuses the install with its
    // reason, and slot B keeps its bytes.
    let before = std::fs::read(fixture.slot_file("B")).expect("slot B");
    let input = ui.find("input[name=bundle]").await;
    input.send_keys(&elsewhere.display().to_string()).await.expect("choose the file");
    ui.click("#upload-button").await;
    ui.wait_text("#bundle-compatible", "RAUC will refuse it").await;
    ui.click("#install-button").await;
    ui.wait_text("#install-result", "failed").await;
    let result = ui.text("#install-result").await;
    assert!(result.contains("ompatible"), "RAUC's reason: {result}");
    ui.shot("wrong-board-refused").await;
    assert!(std::fs::read(fixture.slot_file("B")).expect("slot B") == before, "nothing written");
    ui.click("form[action='/ota/discard'] button").await;
    ui.wait_text("form[action='/ota/upload']", "Bundle file").await;

    // The good one: uploaded, inspected, installed.
    let input = ui.find("input[name=bundle]").await;
    input.send_keys(&good.display().to_string()).await.expect("choose the file");
    ui.click("#upload-button").await;
    ui.wait_text("#bundle-version", "2.0.0").await;
    assert_eq!(ui.text("#bundle-source").await.trim(), "good.raucb");
    ui.shot("uploaded").await;
    ui.click("#install-button").await;
    // No navigation from here: the event stream updates the panel and reloads the page.
    ui.wait_text("#install-result", "Installed version 2.0.0").await;
    ui.wait_text("#slot-B", "2.0.0").await;
    ui.wait_text("#slot-B", "boots next").await;
    let value = ui.find("#install-progress").await.attr("value").await.expect("value");
    assert_eq!(value.as_deref(), Some("100"));
    ui.shot("installed").await;
    let slot_b = std::fs::read(fixture.slot_file("B")).expect("slot B");
    assert!(slot_b.starts_with(&RaucFixture::image_bytes("2.0.0")), "slot B holds the image");
    assert!(!staged.exists(), "the installed bundle no longer takes room");

    ui.click("#install-reboot").await;
    ui.wait_text("#notice", "The router is rebooting").await;
    let log = std::fs::read_to_string(&router.log).expect("the daemon's log");
    assert!(log.contains("reboot skipped (--no-reboot)"), "{log}");

    // Changed mind: slot A boots next again.
    ui.click("#slot-A form[action='/ota/boot-next'] button").await;
    ui.wait_text("#notice", "rootfs.0").await;
    ui.wait_text("#slot-A", "boots next").await;
    ui.shot("boot-next").await;
    ui.client.close().await.expect("end the browser session");
}
