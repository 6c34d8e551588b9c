//! Helpers of the DNS controller's end-to-end tests: a lab (a namespace of the test's own, a
//! target root, the service manager stand-in running the real `named` from routerd's unit, a
//! session opened as the daemon opens it), configs assembled from resource snippets, `dig` and
//! `nsupdate` beside the server, and a second `named` the test runs itself (a remote primary).
//!
//! The benchmark (`examples/bench.rs`) includes this file too and uses part of it only.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use routerd_engine::registry::Registry;
use routerd_engine::result::{Operation, OperationResult, OrphanCleanup};
use routerd_engine::{ConfigInput, ResultDocument, Session, SessionOptions};
use routerd_host::testing::FakeSystemd;
use routerd_test_kit::daemon::Daemon;
use routerd_test_kit::netns::Netns;
use tempfile::TempDir;

/// The secret of `routerd-update`, the update key of server `auth`.
pub const SECRET: &str = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA==";
/// How long a condition may take to hold (a named starting, a reconfig taking effect).
pub const DEADLINE: Duration = Duration::from_secs(20);
/// Where server `auth` answers.
pub const AUTH_PORT: u16 = 5300;

/// The key `auth` is updated with.
pub const KEY: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSTSIGKey
      metadata: {name: routerd-update}
      spec: {secret: \"c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA==\"}
";
/// The primary `auth` on 127.0.0.1#5300, control channel 9953, statistics 9980.
pub const SERVER: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSServer
      metadata: {name: auth}
      spec: {updateKey: routerd-update, control: {port: 9953}, statistics: {port: 9980}}
";
/// Zone `lab.example` on `auth` with host `nas` (and its PTR in `2.0.192.in-addr.arpa`).
pub const ZONE_LAB: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSZone
      metadata: {name: lab}
      spec:
        zone: lab.example
        server: auth
        nameServers: [{hostname: ns1, ipv4: 127.0.0.1}]
        records: [{hostname: nas, ipv4: 192.0.2.20}]
        reverseZones: [{name: 2.0.192.in-addr.arpa}]
";
/// `www.lab.example A 192.0.2.10`.
pub const WWW: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: ARecord
      metadata: {name: www}
      spec: {zone: lab, name: www, ipv4Addresses: [192.0.2.10], ttl: 60}
";

/// The registry with the DNS kinds.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    routerd_dns::register(&mut registry).expect("the DNS kinds are free");
    registry
}

/// A router config holding `resources` (snippets as [`KEY`], each ending with a line break).
pub fn config(resources: &[&str]) -> ConfigInput {
    ConfigInput::parse(&config_text(resources), "router.yaml").expect("valid config")
}

/// The text of [`config`].
pub fn config_text(resources: &[&str]) -> String {
    let mut text = String::from(
        "apiVersion: routerd.net/v1alpha1\nkind: Router\nmetadata: {name: dns-ownership}\n\
         spec:\n  resources:\n",
    );
    for r in resources {
        text.push_str(r);
    }
    if resources.is_empty() {
        text = text.replace("  resources:\n", "  resources: []\n");
    }
    text
}

/// An `ARecord` named `name` in zone resource `zone`, owner `owner`, TTL 60.
pub fn a_record(name: &str, zone: &str, owner: &str, addresses: &[&str]) -> String {
    format!(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: ARecord
      metadata: {{name: {name}}}
      spec: {{zone: {zone}, name: {owner}, ipv4Addresses: [{}], ttl: 60}}
",
        addresses.join(", ")
    )
}

/// A `DNSTSIGKey` named `name` with `secret`.
pub fn tsig_key(name: &str, secret: &str) -> String {
    format!(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSTSIGKey
      metadata: {{name: {name}}}
      spec: {{secret: \"{secret}\"}}
"
    )
}

/// A `DNSExternalServer` named `name` at 127.0.0.1#`port`, signing with `key`.
pub fn external_server(name: &str, port: u16, key: &str) -> String {
    format!(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSExternalServer
      metadata: {{name: {name}}}
      spec: {{address: 127.0.0.1, port: {port}, tsigKey: {key}}}
"
    )
}

/// A `DNSZone` named `name` for `zone` on the remote primary `server`.
pub fn external_zone(name: &str, zone: &str, server: &str) -> String {
    format!(
        "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSZone
      metadata: {{name: {name}}}
      spec: {{zone: {zone}, externalServer: {server}}}
"
    )
}

/// Operations of a Result document as `op kind/name result[: error]`, sorted.
pub fn operations(doc: &ResultDocument) -> Vec<String> {
    let mut ops: Vec<String> = doc
        .operations
        .iter()
        .map(|op| match &op.error {
            Some(error) => {
                format!("{} {}/{} {}: {error}", op.operation, op.kind, op.name, op.result)
            }
            None => format!("{} {}/{} {}", op.operation, op.kind, op.name, op.result),
        })
        .collect();
    ops.sort();
    ops
}

/// The resource `id` (`ARecord/www`, below the DNS kinds' apiVersion) of `doc`.
pub fn resource<'d>(
    doc: &'d ResultDocument,
    id: &str,
) -> &'d routerd_engine::result::ResourceResult {
    let id = format!("net.routerd.net/v1alpha1/{id}");
    doc.resources.iter().find(|r| r.id == id).unwrap_or_else(|| panic!("no resource {id}"))
}

/// Condition `type_` of resource `id` as `status reason: message` (`True RRsetsPublished: …`);
/// `None` when the resource has no such condition.
pub fn condition(doc: &ResultDocument, id: &str, type_: &str) -> Option<String> {
    resource(doc, id)
        .conditions
        .iter()
        .find(|c| c.type_.as_str() == type_)
        .map(|c| format!("{} {}: {}", c.status.as_str(), c.reason, c.message))
}

/// Operations that did not succeed, as [`operations`] writes them.
pub fn failures(doc: &ResultDocument) -> Vec<String> {
    let mut ops: Vec<String> = doc
        .operations
        .iter()
        .filter(|op| op.result != OperationResult::Done)
        .map(|op| {
            format!(
                "{} {}/{} {}: {}",
                op.operation,
                op.kind,
                op.name,
                op.result,
                op.error.as_deref().unwrap_or_default()
            )
        })
        .collect();
    ops.sort();
    ops
}

/// Operations of kind `kind` as `op name`, sorted.
pub fn operations_on(doc: &ResultDocument, kind: &str) -> Vec<String> {
    let mut ops: Vec<String> = doc
        .operations
        .iter()
        .filter(|op| op.kind == kind)
        .map(|op| format!("{} {}", op.operation, op.name))
        .collect();
    ops.sort();
    ops
}

/// Whether the document deletes anything.
pub fn deletes(doc: &ResultDocument) -> Vec<String> {
    doc.operations
        .iter()
        .filter(|op| op.operation == Operation::Delete)
        .map(|op| format!("{}/{}", op.kind, op.name))
        .collect()
}

/// The orphan `kind`/`name` of the document and what reconcile does with it.
pub fn orphan(doc: &ResultDocument, kind: &str, name: &str) -> Option<OrphanCleanup> {
    doc.orphans.iter().find(|o| o.kind == kind && o.name == name).map(|o| o.cleanup)
}

/// Polls `check` until it holds, for at most [`DEADLINE`].
pub async fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + DEADLINE;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `dig` at 127.0.0.1#`port` in `ns`: the whole output (`+noall +comments +answer`); empty
/// when no reply came (dig exits 9).
pub fn dig_raw(ns: &Netns, port: u16, name: &str, rtype: &str) -> String {
    let port = port.to_string();
    let out = ns
        .command("dig")
        .args(["@127.0.0.1", "-p", &port, "+tcp", "+tries=1", "+time=2", "+noall"])
        .args(["+comments", "+answer", name, rtype])
        .output()
        .expect("dig runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `dig`'s answer lines (`name ttl type data`, class dropped, whitespace collapsed), sorted.
pub fn dig(ns: &Netns, port: u16, name: &str, rtype: &str) -> Vec<String> {
    let out = dig_raw(ns, port, name, rtype);
    let mut lines: Vec<String> = out
        .lines()
        .filter(|l| !l.starts_with(';'))
        .map(|l| l.split_whitespace().filter(|w| *w != "IN").collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect();
    lines.sort();
    lines
}

/// The response status `dig` reports (`NOERROR`, `REFUSED`), empty when none came.
pub fn dig_status(ns: &Netns, port: u16, name: &str, rtype: &str) -> String {
    let out = dig_raw(ns, port, name, rtype);
    out.split("status: ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .unwrap_or_default()
        .to_owned()
}

/// The SOA serial of `zone` at 127.0.0.1#`port`.
pub fn serial(ns: &Netns, port: u16, zone: &str) -> u32 {
    let lines = dig(ns, port, zone, "SOA");
    let line = lines.first().unwrap_or_else(|| panic!("no SOA for {zone}"));
    line.split_whitespace()
        .nth(5)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no serial in {line:?}"))
}

/// Runs `nsupdate -v -k key` (over TCP, as routerd sends) in `ns` with `script`; panics when
/// it fails.
pub fn nsupdate(ns: &Netns, key: &Path, script: &str) {
    let mut cmd = ns.command("nsupdate");
    cmd.args(["-v", "-k", key.to_str().expect("utf-8")]);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("nsupdate");
    child.stdin.take().expect("stdin").write_all(script.as_bytes()).expect("script");
    let out = child.wait_with_output().expect("nsupdate");
    assert!(
        out.status.success(),
        "nsupdate failed: {script}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The records of `zone` at 127.0.0.1#`port` by zone transfer signed with `key`, as `dig`
/// prints them (`owner ttl class type data`).
pub fn axfr(ns: &Netns, port: u16, key: &Path, zone: &str) -> Vec<String> {
    let port = port.to_string();
    let key = key.to_str().expect("utf-8");
    let out =
        ns.exec(&["dig", "-k", key, "@127.0.0.1", "-p", &port, "+noall", "+answer", zone, "AXFR"]);
    out.lines().map(str::to_owned).collect()
}

/// One test's router: namespace, target root, FakeSystemd and the session.
pub struct Lab {
    // Dropped in this order: the session, the units FakeSystemd started (named), the files,
    // then the namespace.
    pub session: Option<Session>,
    pub fake: FakeSystemd,
    pub registry: Registry,
    pub dir: TempDir,
    pub root: PathBuf,
    pub ns: Netns,
}

impl Lab {
    /// A new namespace (`prefix`), root and FakeSystemd, and a session opened on them.
    pub async fn new(prefix: &str) -> Self {
        let ns = Netns::new(prefix);
        let registry = registry();
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        let target = routerd_host::Target::new(Some(ns.name().to_owned()), Some(root.clone()));
        let fake = FakeSystemd::start(dir.path(), &target.unit_dir()).await;
        let mut lab = Self { session: None, fake, registry, dir, root, ns };
        lab.session = Some(lab.open(false).await);
        lab
    }

    /// A session on this lab's namespace, root and ledger; `read_only` as the CLI opens one
    /// for `plan` and `reconcile --dry-run`.
    pub async fn open(&self, read_only: bool) -> Session {
        let opts = SessionOptions {
            netns: Some(self.ns.name().to_owned()),
            ledger_path: self.ledger_path(),
            read_only,
            root: Some(self.root.clone()),
            system_bus: Some(self.fake.address().to_owned()),
            exit_after_command: false,
        };
        Session::open_with(opts, &self.registry).await.expect("session")
    }

    /// The open session.
    pub fn session(&mut self) -> &mut Session {
        self.session.as_mut().expect("a session is open")
    }

    /// The ledger file.
    pub fn ledger_path(&self) -> PathBuf {
        self.root.join("ledger.redb")
    }

    /// A path below the target root (`/etc/routerd/dns/...`).
    pub fn path(&self, abs: &str) -> PathBuf {
        self.root.join(abs.trim_start_matches('/'))
    }

    /// Reconciles `input`; panics on an engine error.
    pub async fn reconcile(&mut self, input: &ConfigInput) -> ResultDocument {
        let now = std::time::SystemTime::now();
        self.session().reconcile(input, now).await.expect("reconcile")
    }

    /// Reconciles `input` and asserts every operation succeeded.
    pub async fn reconcile_ok(&mut self, input: &ConfigInput) -> ResultDocument {
        let doc = self.reconcile(input).await;
        let failed = failures(&doc);
        assert!(failed.is_empty(), "{failed:#?}");
        doc
    }

    /// Plans `input` (`dry_run` as `reconcile --dry-run` does).
    pub async fn plan(&mut self, input: &ConfigInput, dry_run: bool) -> ResultDocument {
        let now = std::time::SystemTime::now();
        self.session().plan(input, now, dry_run).await.expect("plan")
    }

    /// `dig` at server `auth`.
    pub fn dig(&self, name: &str, rtype: &str) -> Vec<String> {
        dig(&self.ns, AUTH_PORT, name, rtype)
    }

    /// The key file of `routerd-update`, for `nsupdate -k`.
    pub fn update_key_file(&self) -> PathBuf {
        self.path("/etc/routerd/dns/keys/routerd-update.key")
    }

    /// `nsupdate` against server `auth` with `routerd-update`.
    pub fn nsupdate(&self, script: &str) {
        let script = format!("server 127.0.0.1 {AUTH_PORT}\n{script}send\n");
        nsupdate(&self.ns, &self.update_key_file(), &script);
    }

    /// The PIDs of the units FakeSystemd runs (named of servers `auth` and `sec`).
    pub fn named_pids(&self) -> Vec<i32> {
        ["routerd-named-auth.service", "routerd-named-sec.service"]
            .iter()
            .filter_map(|unit| self.fake.main_pid(unit))
            .collect()
    }

    /// Drops the lab and checks that no named it started still runs.
    pub fn finish(mut self) {
        let pids = self.named_pids();
        self.session = None;
        drop(self);
        for pid in pids {
            routerd_test_kit::daemon::wait_until(&format!("named {pid} to exit"), DEADLINE, || {
                !is_running(pid)
            });
        }
    }
}

/// Whether process `pid` runs (exists and is not a zombie).
pub fn is_running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z" | "X"))
        }
        Err(_) => false,
    }
}

/// A `named` the test runs itself in a namespace (not through routerd): a remote primary.
/// Killed and reaped on drop.
pub struct RemoteNamed {
    // Dropped first: named before its directory.
    named: Daemon,
    dir: TempDir,
    pub port: u16,
}

/// A key a [`RemoteNamed`] knows: name and base64 secret.
pub struct RemoteKey<'a> {
    pub name: &'a str,
    pub secret: &'a str,
}

/// A zone a [`RemoteNamed`] serves: apex (`ext.example`), the keys its update-policy grants
/// (`zonesub ANY`) and that may transfer it, and its records below the SOA and apex NS.
pub struct RemoteZone<'a> {
    pub apex: &'a str,
    pub granted: &'a [&'a str],
    pub transfer: &'a [&'a str],
    pub records: &'a str,
}

/// Where libfaketime may be (Debian's `faketime` package puts it in the multiarch directory).
const LIBFAKETIME_DIRS: [&str; 5] = [
    "/usr/lib/x86_64-linux-gnu/faketime",
    "/usr/lib/aarch64-linux-gnu/faketime",
    "/usr/lib64/faketime",
    "/usr/lib/faketime",
    "/usr/local/lib/faketime",
];

/// `libfaketime.so.1`; panics, saying to install `faketime`, when it is not there.
pub fn libfaketime() -> PathBuf {
    let found = LIBFAKETIME_DIRS
        .iter()
        .map(|dir| Path::new(dir).join("libfaketime.so.1"))
        .find(|path| path.is_file());
    found.unwrap_or_else(|| {
        panic!(
            "libfaketime.so.1 is in none of {LIBFAKETIME_DIRS:?}: install the `faketime` package \
             (scripts/bootstrap.sh does)"
        )
    })
}

impl RemoteNamed {
    /// Starts named on 127.0.0.1#`port` in `ns` with `keys` and `zones`; waits until each zone
    /// answers its SOA.
    pub fn start(ns: &Netns, port: u16, keys: &[RemoteKey<'_>], zones: &[RemoteZone<'_>]) -> Self {
        Self::spawn(ns, port, keys, zones, None)
    }

    /// As [`RemoteNamed::start`], with named's clock `offset_secs` ahead of the real one (behind
    /// when negative): libfaketime (`FAKETIME=+N`) offsets what named reads as the time, and so
    /// the time it checks TSIG signatures against. Panics when libfaketime is not installed.
    pub fn start_skewed(
        ns: &Netns,
        port: u16,
        keys: &[RemoteKey<'_>],
        zones: &[RemoteZone<'_>],
        offset_secs: i64,
    ) -> Self {
        Self::spawn(ns, port, keys, zones, Some(offset_secs))
    }

    fn spawn(
        ns: &Netns,
        port: u16,
        keys: &[RemoteKey<'_>],
        zones: &[RemoteZone<'_>],
        offset_secs: Option<i64>,
    ) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().display();
        let mut conf = format!(
            "options {{
    directory \"{path}\";
    pid-file \"{path}/named.pid\";
    session-keyfile \"{path}/session.key\";
    managed-keys-directory \"{path}\";
    listen-on port {port} {{ 127.0.0.1; }};
    listen-on-v6 {{ none; }};
    recursion no;
    dnssec-validation no;
    notify no;
}};
controls {{ }};
"
        );
        for k in keys {
            conf.push_str(&format!(
                "key \"{}\" {{ algorithm hmac-sha256; secret \"{}\"; }};\n",
                k.name, k.secret
            ));
        }
        for z in zones {
            let grants: String =
                z.granted.iter().map(|k| format!(" grant \"{k}\" zonesub ANY;")).collect();
            let transfer: String = z.transfer.iter().map(|k| format!(" key \"{k}\";")).collect();
            let transfer = if transfer.is_empty() { " none;".to_owned() } else { transfer };
            conf.push_str(&format!(
                "zone \"{apex}\" {{ type primary; file \"{apex}.zone\"; \
                 update-policy {{{grants} }}; allow-transfer {{{transfer} }}; }};\n",
                apex = z.apex
            ));
            let text = format!(
                "$ORIGIN {apex}.\n$TTL 3600\n\
                 @ SOA ns1.{apex}. hostmaster.{apex}. 7 3600 600 86400 60\n\
                 @ NS ns1.{apex}.\nns1 A 127.0.0.1\n{records}",
                apex = z.apex,
                records = z.records
            );
            std::fs::write(dir.path().join(format!("{}.zone", z.apex)), text).expect("zone file");
        }
        let conf_path = dir.path().join("named.conf");
        std::fs::write(&conf_path, conf).expect("named.conf");
        let log = std::fs::File::create(dir.path().join("named.log")).expect("named.log");
        let mut command = ns.command("/usr/sbin/named");
        if let Some(offset) = offset_secs {
            // named is linked with jemalloc, which clashes with libfaketime (libfaketime issue
            // #130: each calls into the other while initialising, and named hangs); glibc
            // preloaded after libfaketime takes `malloc` over from jemalloc, so libfaketime
            // initialises on glibc's. (`ip netns exec`, preloaded too, passes both on.)
            command
                .env("LD_PRELOAD", format!("{}:libc.so.6", libfaketime().display()))
                .env("FAKETIME", format!("{offset:+}"));
        }
        let mut named = Daemon::spawn(
            command.arg("-g").arg("-c").arg(&conf_path).stdout(Stdio::null()).stderr(log),
        );
        for z in zones {
            named.wait_until(&format!("named to serve {}", z.apex), DEADLINE, || {
                !dig(ns, port, z.apex, "SOA").is_empty()
            });
        }
        Self { named, dir, port }
    }

    /// named's log, for a failing assertion.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("named.log")).unwrap_or_default()
    }

    /// The process ID.
    pub fn pid(&self) -> i32 {
        i32::try_from(self.named.id()).expect("a PID")
    }
}
