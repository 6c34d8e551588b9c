//! The lab of `examples/lab-router.yaml` as a test fixture: a router namespace with `wan0` and
//! `lan0`, an upstream and a client namespace, unique names per test process, removed on drop
//! (also when the test panics): the kit's [`Netns`]. Set-up and independent read-back use `ip`
//! and `nft`; the code under test never does.

use std::path::PathBuf;
use std::time::SystemTime;

use routerd_engine::result::{
    ConditionStatus, ConditionType, OperationResult, Reason, ResourceResult,
};
use routerd_engine::{ConfigInput, ResultDocument, Session, SessionOptions};
use routerd_host::testing::FakeSystemd;
pub use routerd_test_kit::command::run;
pub use routerd_test_kit::daemon::{Daemon, wait_for};
use routerd_test_kit::netns::Netns;
use routerd_test_kit::router;

/// The lab config, as shipped.
pub const LAB: &str = include_str!("../../../../examples/lab-router.yaml");

/// Three namespaces cabled like the lab, plus a private ledger path.
pub struct Lab {
    /// Router namespace (`rde-r-…`): `wan0` to the upstream's `up0`, `lan0` to the client's
    /// `eth0`, both down and without addresses.
    pub router: Netns,
    /// Upstream namespace (`rde-u-…`): `up0`, 198.51.100.1/24, up.
    pub upstream: Netns,
    /// LAN client namespace (`rde-c-…`): `eth0`, 192.168.50.10/24, up, default route via
    /// 192.168.50.1.
    pub client: Netns,
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
        let dir = tempfile::tempdir().expect("tempdir");
        let lab = Self {
            router: Netns::new("rde-r"),
            upstream: Netns::new("rde-u"),
            client: Netns::new("rde-c"),
            ledger: dir.path().join("routerd.redb"),
            system_bus: None,
            dir,
        };
        lab.router.veth_to("wan0", &lab.upstream, "up0");
        lab.router.veth_to("lan0", &lab.client, "eth0");
        lab.upstream.ip(&["addr", "add", "198.51.100.1/24", "dev", "up0"]);
        lab.upstream.ip(&["link", "set", "up0", "up"]);
        lab.client.ip(&["addr", "add", "192.168.50.10/24", "dev", "eth0"]);
        lab.client.ip(&["link", "set", "eth0", "up"]);
        lab.client.ip(&["route", "add", "default", "via", "192.168.50.1"]);
        lab
    }

    /// `ip -n ROUTER ARGS...`, stdout.
    pub fn ip(&self, args: &[&str]) -> String {
        self.router.ip(args)
    }

    /// `nft ARGS...` inside the router namespace, stdout.
    pub fn nft(&self, args: &[&str]) -> String {
        self.router.nft(args)
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
            let out = self.router.exec(&["cat", &format!("/proc/sys/{key}")]);
            s.push_str(&format!("{key}={out}"));
        }
        s
    }

    /// Opens an engine session on the router namespace.
    pub async fn session(&self, read_only: bool) -> Session {
        Session::open(SessionOptions {
            netns: Some(self.router.name().to_string()),
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
    let table = table.map_or(String::new(), |t| format!("\ntable: {t}"));
    let mut yaml = format!("{}\n", LAB.trim_end());
    for i in 0..n {
        let destination = format!("10.{}.{}.0/24", 100 + i / 256, i % 256);
        let spec = format!("interface: lan\ndestination: {destination}\nvia: 192.168.50.2{table}");
        yaml.push_str(&router::item(router::NET, "IPv4StaticRoute", &format!("bulk{i}"), &spec));
    }
    yaml
}

/// The deletes of a Result document, in order.
pub fn deletes(doc: &ResultDocument, result: OperationResult) -> Vec<String> {
    ops(doc, result).into_iter().filter(|o| o.starts_with("delete ")).collect()
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
