//! The DNS benchmark of `docs/benchmarks.md` (issue 36 §5; root; `just bench-dns`):
//! 10,000 A records in one zone of a real named, applied by routerd's engine, side by side in
//! one run with BIND's own `nsupdate` (one record per message, and batched at routerd's message
//! size) on the same server.
//!
//! ```text
//! cargo run --release -p routerd-dns --example bench -- [--records 10000] [--repeat 3]
//! ```
//!
//! Each repeat makes a fresh namespace and root, starts named through the service manager
//! stand-in as routerd's unit would, and measures, as wall time around the engine call:
//! (a) cold apply of the records (the zone already served); (b) a no-op reconcile as the
//! daemon's resync runs it (the desired state built once per config), and one that renders the
//! config again as `routerctl apply` does; (c) a TTL change on every record; (d) a hand edit
//! (`nsupdate`) repaired: from the edit to the end of the reconcile the NOTIFY triggered; then (e) `nsupdate` creating the same records in a
//! fresh zone, one per message and in messages of 1,000. Peak RSS is this process's (the
//! engine, the ledger, the harness), an upper bound of routerd's share.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use futures::StreamExt;
use routerd_engine::{ConfigInput, ResultDocument};

#[path = "../tests/it/common.rs"]
mod common;

use common::{AUTH_PORT, KEY, Lab, SERVER};

/// Server `auth` with `zones` and `records` A records `h<i>` in `bench.example` with `ttl`.
fn config(records: usize, ttl: u32, zones: &[&str]) -> ConfigInput {
    let mut resources = vec![KEY.to_owned(), SERVER.to_owned()];
    for zone in zones {
        resources.push(format!(
            "    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSZone
      metadata: {{name: {}}}
      spec: {{zone: {zone}, server: auth}}
",
            zone.replace('.', "-")
        ));
    }
    for i in 0..records {
        resources.push(format!(
            "    - apiVersion: net.routerd.net/v1alpha1
      kind: ARecord
      metadata: {{name: h{i}}}
      spec: {{zone: bench-example, name: h{i}, ipv4Addresses: [{}], ttl: {ttl}}}
",
            address(i)
        ));
    }
    let resources: Vec<&str> = resources.iter().map(String::as_str).collect();
    ConfigInput::parse(&common::config_text(&resources), "bench.yaml")
        .expect("the generated config is valid")
}

/// The address of host `h<i>`: 10.x.y.z.
fn address(i: usize) -> String {
    format!("10.{}.{}.{}", (i >> 16) & 255, (i >> 8) & 255, i & 255)
}

fn failed(doc: &ResultDocument) -> usize {
    doc.operations.iter().filter(|op| op.error.is_some()).count()
}

fn peak_rss_kib() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// `nsupdate` creating `records` hosts in `zone`, `per_message` to an UPDATE: its wall time.
fn nsupdate_hosts(lab: &Lab, zone: &str, records: usize, per_message: usize) -> Duration {
    let mut script = format!("server 127.0.0.1 {AUTH_PORT}\nzone {zone}\n");
    for i in 0..records {
        script.push_str(&format!("update add h{i}.{zone} 300 A {}\n", address(i)));
        if (i + 1) % per_message == 0 || i + 1 == records {
            script.push_str("send\n");
        }
    }
    let started = Instant::now();
    common::nsupdate(&lab.ns, &lab.update_key_file(), &script);
    started.elapsed()
}

/// The A records of `zone`, by zone transfer.
fn count_a(lab: &Lab, key: &Path, zone: &str) -> usize {
    let records = common::axfr(&lab.ns, AUTH_PORT, key, zone);
    records.iter().filter(|l| l.split_whitespace().nth(3) == Some("A")).count()
}

struct Row {
    cold: Duration,
    noop: Duration,
    noop_render: Duration,
    ttl: Duration,
    repair: Duration,
    ns_single: Duration,
    ns_batched: Duration,
}

async fn repeat(records: usize) -> Row {
    let mut lab = Lab::new("dnsbench").await;
    let zones = ["bench.example", "single.example", "batched.example"];
    let now = SystemTime::now();
    // The server and its zones, before the clock starts.
    let base = lab.reconcile(&config(0, 300, &zones)).await;
    assert_eq!(failed(&base), 0, "the server and its zones come up");

    let input = config(records, 300, &zones);
    let started = Instant::now();
    let doc = lab.session().reconcile(&input, now).await.expect("reconcile");
    let cold = started.elapsed();
    assert_eq!(failed(&doc), 0);
    let key = lab.update_key_file();
    assert_eq!(count_a(&lab, &key, "bench.example"), records);

    // The first reconcile after routerd's own UPDATEs transfers the zone again (its serial
    // moved); the no-op is the one after, as a resync finds it.
    let doc = lab.session().reconcile(&input, now).await.expect("reconcile");
    assert!(doc.operations.is_empty(), "the no-op changes nothing");
    let loops =
        std::env::var("DNS_BENCH_NOOP_LOOPS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    // The daemon builds the desired state once per config and reconciles against it on every
    // resync and NOTIFY (`Session::reconcile_with`): that is the no-op an operator's router
    // runs. `routerctl apply` of an unchanged file renders it again first.
    let desired = lab.session().desired_for(&input.config);
    let timed_before = lab.session().timings().len();
    let started = Instant::now();
    for _ in 0..loops {
        let doc = lab.session().reconcile_with(&input, &desired, now).await.expect("reconcile");
        assert!(doc.operations.is_empty(), "the no-op changes nothing");
    }
    let noop = started.elapsed() / loops;
    if std::env::var_os("DNS_BENCH_PHASES").is_some() {
        eprintln!("no-op phases: {}", phases(&lab.session().timings()[timed_before..], loops));
    }
    let started = Instant::now();
    for _ in 0..loops {
        let doc = lab.session().reconcile(&input, now).await.expect("reconcile");
        assert!(doc.operations.is_empty(), "the no-op changes nothing");
    }
    let noop_render = started.elapsed() / loops;

    let changed = config(records, 600, &zones);
    let started = Instant::now();
    let doc = lab.session().reconcile(&changed, now).await.expect("reconcile");
    let ttl = started.elapsed();
    assert_eq!(failed(&doc), 0);
    assert_eq!(doc.operations.len(), records, "one modify per RRset");

    // Built when the TTL change was applied, as the daemon keeps it.
    let desired = lab.session().desired_for(&changed.config);
    let router_ns = routerd_host::Netns::named(lab.ns.name()).expect("namespace");
    let mut notices = routerd_dns::notify::listen(&router_ns).expect("listens");
    let started = Instant::now();
    lab.nsupdate("zone bench.example\nupdate delete h7.bench.example A\nupdate add h7.bench.example 600 A 192.0.2.7\n");
    tokio::time::timeout(Duration::from_secs(10), notices.next())
        .await
        .expect("a NOTIFY")
        .expect("listening");
    let doc = lab.session().reconcile_with(&changed, &desired, now).await.expect("reconcile");
    let repair = started.elapsed();
    assert_eq!(doc.operations.len(), 1, "the edited RRset is put back");

    let ns_single = nsupdate_hosts(&lab, "single.example", records, 1);
    let ns_batched = nsupdate_hosts(&lab, "batched.example", records, 1000);
    assert_eq!(count_a(&lab, &key, "single.example"), records);
    assert_eq!(count_a(&lab, &key, "batched.example"), records);
    lab.finish();
    Row { cold, noop, noop_render, ttl, repair, ns_single, ns_batched }
}

/// The engine's phase timings (`Session::timings`) as a mean over `loops` reconciles.
fn phases(timings: &[(&'static str, Duration)], loops: u32) -> String {
    let mut sums: Vec<(&str, Duration)> = Vec::new();
    for (phase, took) in timings {
        match sums.iter_mut().find(|(p, _)| p == phase) {
            Some((_, sum)) => *sum += *took,
            None => sums.push((phase, *took)),
        }
    }
    let shown: Vec<String> = sums
        .iter()
        .map(|(p, sum)| format!("{p} {:.1} ms", (*sum / loops).as_secs_f64() * 1e3))
        .collect();
    shown.join(", ")
}

fn median(mut v: Vec<Duration>) -> (Duration, Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str, default: usize| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let records = arg("--records", 10_000);
    let repeats = arg("--repeat", 3).max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let rows: Vec<Row> = (0..repeats).map(|_| runtime.block_on(repeat(records))).collect();
    let show = |name: &str, target: &str, pick: fn(&Row) -> Duration| {
        let (med, min, max) = median(rows.iter().map(pick).collect());
        println!(
            "| {name} | {} ms | {} – {} ms | {target} |",
            med.as_millis(),
            min.as_millis(),
            max.as_millis()
        );
    };
    println!("{records} A records, {repeats} repeat(s); median, min – max\n");
    println!("| case | median | range | target |\n|---|---|---|---|");
    show("routerd: cold apply", "≤ 2,000 ms", |r| r.cold);
    show("routerd: no-op reconcile (resync of the applied config)", "< 100 ms", |r| r.noop);
    show("routerd: no-op with render (`routerctl apply`, unchanged file)", "", |r| r.noop_render);
    show("routerd: TTL change on every record", "≤ 1,000 ms", |r| r.ttl);
    show("routerd: hand edit repaired (edit → NOTIFY → reconcile done)", "≤ 1,000 ms", |r| {
        r.repair
    });
    show("nsupdate: one record per message", "", |r| r.ns_single);
    show("nsupdate: 1,000 records per message", "", |r| r.ns_batched);
    println!(
        "| peak RSS of the whole run (engine, ledger, harness) | {} MiB | | |",
        peak_rss_kib() / 1024
    );
}
