//! The lab of `examples/lab-router.yaml` as a test fixture: a router namespace with `wan0` and
//! `lan0`, an upstream and a client namespace, unique names per test process, removed on drop
//! (also when the test panics). Set-up and independent read-back use `ip` and `nft`; the code
//! under test never does.

use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::SystemTime;
use std::time::{Duration, Instant};

use routerd_engine::result::{
    ConditionStatus, ConditionType, OperationResult, Reason, ResourceResult,
};
use routerd_engine::{ConfigInput, ResultDocument, Session, SessionOptions};
use routerd_host::testing::FakeSystemd;

/// The lab config, as shipped.
pub const LAB: &str = include_str!("../../../../examples/lab-router.yaml");

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Three namespaces cabled like the lab, plus a private ledger path.
pub struct Lab {
    /// Router namespace name.
    pub router: String,
    /// Upstream namespace name.
    pub upstream: String,
    /// LAN client namespace name.
    pub client: String,
    /// Ledger file (inside `dir`).
    pub ledger: PathBuf,
    /// Bus of the service manager sessions talk to (a [`FakeSystemd`]'s), when a test has one.
    ///
    /// [`FakeSystemd`]: routerd_host::testing::FakeSystemd
    pub system_bus: Option<String>,
    dir: tempfile::TempDir,
}

impl Lab {
    /// Builds the lab. Panics with "needs root" when not root.
    pub fn new() -> Self {
        assert!(nix_is_root(), "needs root: these tests create network namespaces");
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let id = format!("{}{n}", std::process::id());
        let dir = tempfile::tempdir().expect("tempdir");
        let lab = Self {
            router: format!("rde-{id}-r"),
            upstream: format!("rde-{id}-u"),
            client: format!("rde-{id}-c"),
            ledger: dir.path().join("routerd.redb"),
            system_bus: None,
            dir,
        };
        for ns in [&lab.router, &lab.upstream, &lab.client] {
            run("ip", &["netns", "add", ns]);
            run("ip", &["-n", ns, "link", "set", "lo", "up"]);
        }
        lab.cable(&format!("w{id}"), "wan0", &lab.upstream.clone(), "up0");
        lab.cable(&format!("l{id}"), "lan0", &lab.client.clone(), "eth0");
        run("ip", &["-n", &lab.upstream, "addr", "add", "198.51.100.1/24", "dev", "up0"]);
        run("ip", &["-n", &lab.upstream, "link", "set", "up0", "up"]);
        run("ip", &["-n", &lab.client, "addr", "add", "192.168.50.10/24", "dev", "eth0"]);
        run("ip", &["-n", &lab.client, "link", "set", "eth0", "up"]);
        run("ip", &["-n", &lab.client, "route", "add", "default", "via", "192.168.50.1"]);
        lab
    }

    fn cable(&self, tmp: &str, router_end: &str, peer_ns: &str, peer_end: &str) {
        let (a, b) = (format!("{tmp}a"), format!("{tmp}b"));
        run("ip", &["link", "add", &a, "type", "veth", "peer", "name", &b]);
        run("ip", &["link", "set", &a, "netns", &self.router]);
        run("ip", &["link", "set", &b, "netns", peer_ns]);
        run("ip", &["-n", &self.router, "link", "set", &a, "name", router_end]);
        run("ip", &["-n", peer_ns, "link", "set", &b, "name", peer_end]);
    }

    /// `ip -n ROUTER ARGS...`, stdout.
    pub fn ip(&self, args: &[&str]) -> String {
        let mut full = vec!["-n", self.router.as_str()];
        full.extend_from_slice(args);
        run("ip", &full)
    }

    /// `nft ARGS...` inside the router namespace, stdout.
    pub fn nft(&self, args: &[&str]) -> String {
        let mut full = vec!["netns", "exec", self.router.as_str(), "nft"];
        full.extend_from_slice(args);
        run("ip", &full)
    }

    /// A command inside namespace `ns`; returns whether it exited 0.
    pub fn exec_ok(&self, ns: &str, cmd: &[&str]) -> bool {
        let mut full = vec!["netns", "exec", ns];
        full.extend_from_slice(cmd);
        Command::new("ip").args(&full).output().map(|o| o.status.success()).unwrap_or(false)
    }

    /// Everything the engine could touch in the router namespace, as text: links, addresses,
    /// routes of every table, rules, the nft ruleset and the sysctls of the lab config.
    pub fn kernel_state(&self) -> String {
        let mut s = String::new();
        for args in [
            &["-j", "link", "show"][..],
            &["-j", "addr", "show"],
            &["-j", "route", "show", "table", "all"],
            &["-j", "rule", "show"],
        ] {
            s.push_str(&self.ip(args));
        }
        s.push_str(&self.nft(&["list", "ruleset"]));
        for key in ["net/ipv4/ip_forward", "net/ipv4/conf/wan0/rp_filter"] {
            let out =
                run("ip", &["netns", "exec", &self.router, "cat", &format!("/proc/sys/{key}")]);
            s.push_str(&format!("{key}={out}"));
        }
        s
    }

    /// Opens an engine session on the router namespace.
    pub async fn session(&self, read_only: bool) -> Session {
        Session::open(SessionOptions {
            netns: Some(self.router.clone()),
            ledger_path: self.ledger.clone(),
            read_only,
            root: Some(self.root()),
            system_bus: self.system_bus.clone(),
            exit_after_command: false,
        })
        .await
        .expect("session opens")
    }

    /// `reconcile --once` with `yaml`.
    pub async fn reconcile(&self, yaml: &str) -> ResultDocument {
        let input = ConfigInput::parse(yaml, "router.yaml").expect("config parses");
        self.session(false)
            .await
            .reconcile(&input, SystemTime::now())
            .await
            .expect("reconcile runs")
    }

    /// `plan` (or `--dry-run`) with `yaml`.
    pub async fn plan(&self, yaml: &str, dry_run: bool) -> ResultDocument {
        let input = ConfigInput::parse(yaml, "router.yaml").expect("config parses");
        self.session(true).await.plan(&input, SystemTime::now(), dry_run).await.expect("plan runs")
    }

    /// `adopt --candidates` / `--apply` with `yaml`.
    pub async fn adopt(&self, yaml: &str, apply: bool) -> ResultDocument {
        let input = ConfigInput::parse(yaml, "router.yaml").expect("config parses");
        self.session(!apply)
            .await
            .adopt(&input, SystemTime::now(), apply)
            .await
            .expect("adopt runs")
    }

    /// Ledger entries as `kind/name` strings (read-only).
    pub fn ledger_keys(&self) -> Vec<String> {
        routerd_ledger::Ledger::open_read_only(&self.ledger)
            .expect("ledger opens")
            .entries()
            .expect("ledger reads")
            .iter()
            .map(|e| e.key())
            .collect()
    }

    /// The ledger entry of `kind/name`, if any (read-only).
    pub fn ledger_entry(&self, kind: &str, name: &str) -> Option<routerd_ledger::LedgerEntry> {
        routerd_ledger::Ledger::open_read_only(&self.ledger)
            .expect("ledger opens")
            .get(kind, name)
            .expect("ledger reads")
    }

    /// The ledger file's bytes (empty when absent).
    pub fn ledger_bytes(&self) -> Vec<u8> {
        std::fs::read(&self.ledger).unwrap_or_default()
    }

    /// The filesystem root of the session's file-based configurators (units, dnsmasq).
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    /// The temp dir (for extra files).
    pub fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in [&self.router, &self.upstream, &self.client] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// Runs a set-up command; panics with its stderr when it fails.
pub fn run(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd).args(args).output().unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn nix_is_root() -> bool {
    // SAFETY-free check: /proc/self/status Uid line.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// The resource whose ID ends in `/<id>` (`HealthCheck/wan-gw`); panics when there is none.
pub fn resource<'a>(doc: &'a ResultDocument, id: &str) -> &'a ResourceResult {
    doc.resources
        .iter()
        .find(|r| r.id.ends_with(&format!("/{id}")))
        .unwrap_or_else(|| panic!("no resource {id}"))
}

/// The `(status, reason)` of the resource's condition of type `type_`, if it has one.
pub fn condition(r: &ResourceResult, type_: ConditionType) -> Option<(ConditionStatus, Reason)> {
    r.conditions.iter().find(|c| c.type_ == type_).map(|c| (c.status, c.reason))
}

/// Keys of operations with `result`, as `op kind/name`.
pub fn ops(doc: &ResultDocument, result: OperationResult) -> Vec<String> {
    doc.operations
        .iter()
        .filter(|o| o.result == result)
        .map(|o| format!("{} {}/{}", o.operation, o.kind, o.name))
        .collect()
}

/// The lab config without the resource block of `kind` named `name`.
pub fn without(yaml: &str, kind: &str, name: &str) -> String {
    let mut parts = yaml.split("\n    - apiVersion:");
    let head = parts.next().unwrap_or_default().to_string();
    let kept: Vec<&str> = parts
        .filter(|p| {
            !(p.contains(&format!("kind: {kind}\n")) && p.contains(&format!("name: {name}\n")))
        })
        .collect();
    let out = kept.iter().fold(head, |acc, p| format!("{acc}\n    - apiVersion:{p}"));
    assert_ne!(out, yaml, "no {kind}/{name} block in the config");
    out
}

/// The lab config with `n` static routes `bulk<i>` on the LAN (`10.100.0.0/24` onwards, via
/// 192.168.50.2), in `table` or the main one.
pub fn lab_with_routes(n: usize, table: Option<u32>) -> String {
    let mut yaml = LAB.trim_end().to_string();
    let table = table.map_or(String::new(), |t| format!("\n        table: {t}"));
    for i in 0..n {
        yaml.push_str(&format!(
            "
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticRoute
      metadata:
        name: bulk{i}
      spec:
        interface: lan
        destination: 10.{}.{}.0/24
        via: 192.168.50.2{table}",
            100 + i / 256,
            i % 256,
        ));
    }
    yaml.push('\n');
    yaml
}

/// The deletes of a Result document, in order.
pub fn deletes(doc: &ResultDocument, result: OperationResult) -> Vec<String> {
    ops(doc, result).into_iter().filter(|o| o.starts_with("delete ")).collect()
}

/// Waits (deadline) until `f` gives `Some`.
pub fn wait_for<T>(what: &str, deadline: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < deadline, "{what}: not within {deadline:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A process killed on drop (the client's udhcpc, the upstream resolver).
pub struct Daemon(pub Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The lab, with the systemd stand-in serving the sessions' unit directory on a private bus.
/// Declared in this order, the stand-in (and every service it started) goes first on drop,
/// before the namespaces.
pub async fn lab_with_systemd() -> (Lab, FakeSystemd) {
    let mut lab = Lab::new();
    let bus_dir = lab.dir().join("bus");
    std::fs::create_dir_all(&bus_dir).expect("bus dir");
    let systemd = FakeSystemd::start(&bus_dir, &lab.root().join("etc/systemd/system")).await;
    lab.system_bus = Some(systemd.address().to_string());
    (lab, systemd)
}
