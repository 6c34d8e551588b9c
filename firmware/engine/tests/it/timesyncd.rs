//! `NTPClient` through systemd-timesyncd (issue "every seed resource kind applied for real",
//! §1): the real timesyncd (`routerd_host::testing::Timesyncd`), started and restarted by the
//! systemd stand-in, reads routerd's drop-in; what it reports on the test's private bus
//! (`SystemNTPServers`, read with busctl) is the proof.

use std::path::PathBuf;
use std::time::Duration;

use routerd_engine::result::{ObservedArtifact, OperationResult};
use routerd_engine::{Phase, ResultDocument};
use routerd_host::testing::{FakeSystemd, Timesyncd};

use crate::support::{LAB, Lab, lab_with_systemd, ops, run, wait_for};

const UNIT: &str = "systemd-timesyncd.service";

fn config(servers: &[&str], managed: bool) -> String {
    format!(
        "{LAB}
    - apiVersion: system.routerd.net/v1alpha1
      kind: NTPClient
      metadata:
        name: ntp
      spec:
        managed: {managed}
        interface: wan
        servers: [{}]
",
        servers.join(", ")
    )
}

/// The servers timesyncd reports, from busctl (`as 2 "a" "b"` → `["a", "b"]`); `None` when
/// timesyncd is not on the bus.
fn system_servers(systemd: &FakeSystemd) -> Option<Vec<String>> {
    let out = std::process::Command::new("busctl")
        .args(["--address", systemd.address(), "get-property", "org.freedesktop.timesync1"])
        .args(["/org/freedesktop/timesync1", "org.freedesktop.timesync1.Manager"])
        .arg("SystemNTPServers")
        .output()
        .expect("busctl");
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Some(text.split('"').skip(1).step_by(2).map(str::to_owned).collect())
}

fn phase(doc: &ResultDocument) -> Phase {
    let res = doc.resources.iter().find(|r| r.id.ends_with("/NTPClient/ntp")).expect("resource");
    res.phase
}

async fn lab_with_timesyncd() -> (Lab, FakeSystemd, Timesyncd) {
    let (lab, systemd) = lab_with_systemd().await;
    let ts = Timesyncd::install(
        &lab.dir().join("timesyncd"),
        &lab.root().join("etc/systemd/system"),
        &lab.root(),
        systemd.address(),
    );
    // The fake manager learns the unit as systemd would, on a daemon-reload.
    run(
        "busctl",
        &[
            "--address",
            systemd.address(),
            "call",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager",
            "Reload",
        ],
    );
    (lab, systemd, ts)
}

fn dropin(lab: &Lab) -> PathBuf {
    lab.root().join("etc/systemd/timesyncd.conf.d/90-routerd.conf")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timesyncd_uses_the_servers_is_restarted_on_change_and_loses_a_removed_block() {
    let (lab, systemd, ts) = lab_with_timesyncd().await;
    lab.reconcile(LAB).await;

    let servers = ["192.0.2.123", "ntp.example.net"];
    let doc = lab.reconcile(&config(&servers, true)).await;
    assert_eq!(
        ops(&doc, OperationResult::Done),
        vec!["create timesyncd.config/ntp".to_string()],
        "{}",
        ts.log()
    );
    assert_eq!(systemd.active_state(UNIT), "active");
    assert_eq!(system_servers(&systemd), Some(servers.map(String::from).to_vec()), "{}", ts.log());
    let text = std::fs::read_to_string(dropin(&lab)).expect("the drop-in");
    assert!(text.contains("\nNTP=\n") && text.contains("NTP=192.0.2.123 ntp.example.net\n"));
    let again = lab.reconcile(&config(&servers, true)).await;
    assert!(again.operations.is_empty(), "{:#?}", again.operations);
    assert_eq!(phase(&again), Phase::Healthy);
    assert!(lab.ledger_keys().contains(&"timesyncd.config/ntp".to_string()));

    // A change restarts timesyncd, which then uses only the new server.
    let doc = lab.reconcile(&config(&["192.0.2.124"], true)).await;
    assert_eq!(ops(&doc, OperationResult::Done), vec!["modify timesyncd.config/ntp".to_string()]);
    assert_eq!(systemd.starts(UNIT), 2);
    assert_eq!(system_servers(&systemd), Some(vec!["192.0.2.124".to_string()]));

    // A stopped timesyncd is drift; reconcile starts it again.
    systemd.crash(UNIT);
    let plan = lab.plan(&config(&["192.0.2.124"], true), false).await;
    assert_eq!(
        ops(&plan, OperationResult::Planned),
        vec!["modify timesyncd.config/ntp".to_string()]
    );
    lab.reconcile(&config(&["192.0.2.124"], true)).await;
    assert_eq!(system_servers(&systemd), Some(vec!["192.0.2.124".to_string()]));

    // managed: false hands timesyncd back: routerd's block (ledger-owned) goes, timesyncd is
    // restarted on its own configuration, and the observed servers show that it does not use
    // the one the config names.
    let doc = lab.reconcile(&config(&["192.0.2.124"], false)).await;
    assert_eq!(ops(&doc, OperationResult::Done), vec!["delete timesyncd.config/ntp".to_string()]);
    assert!(!dropin(&lab).exists(), "the last block takes the file with it");
    assert_eq!(system_servers(&systemd), Some(Vec::new()));
    assert!(!lab.ledger_keys().iter().any(|k| k.starts_with("timesyncd.")));
    let doc = lab.reconcile(&config(&["192.0.2.124"], false)).await;
    assert!(doc.operations.is_empty(), "observed only: {:#?}", doc.operations);
    let seen = observed(&doc);
    assert!(seen.present, "{seen:#?}");
    assert_eq!(seen.drift.iter().map(|d| d.attribute.as_str()).collect::<Vec<_>>(), ["servers"]);

    // Stopped, timesyncd is not there to observe.
    systemd.crash(UNIT);
    let doc = lab.reconcile(&config(&["192.0.2.124"], false)).await;
    assert!(doc.operations.is_empty() && !observed(&doc).present);
}

/// The NTPClient's observed `timesyncd.servers/system`.
fn observed(doc: &ResultDocument) -> ObservedArtifact {
    let res = doc.resources.iter().find(|r| r.id.ends_with("/NTPClient/ntp")).expect("resource");
    res.observed.iter().find(|o| o.kind == "timesyncd.servers").cloned().expect("observed")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_drop_in_that_resets_the_servers_fails_the_change_and_leaves_no_file() {
    let (lab, systemd, ts) = lab_with_timesyncd().await;
    // An operator's drop-in sorted after routerd's, resetting NTP= again.
    let dir = lab.root().join("etc/systemd/timesyncd.conf.d");
    std::fs::create_dir_all(&dir).expect("drop-in dir");
    std::fs::write(dir.join("95-operator.conf"), "[Time]\nNTP=\nNTP=192.0.2.99\n").expect("w");

    let doc = lab.reconcile(&config(&["192.0.2.123"], true)).await;
    let failed =
        doc.operations.iter().find(|o| o.result == OperationResult::Failed).expect("a failed op");
    assert_eq!(&*failed.name, "ntp");
    let error = failed.error.clone().unwrap_or_default();
    assert!(error.contains("resets NTP="), "{error}\n{}", ts.log());
    assert!(!dropin(&lab).exists(), "a change timesyncd does not take is undone");
    // The undo restarts timesyncd without waiting for it to be on the bus again.
    let back =
        wait_for("timesyncd back on the bus", Duration::from_secs(10), || system_servers(&systemd));
    assert_eq!(back, vec!["192.0.2.99".to_string()]);
    assert_eq!(phase(&doc), Phase::Blocked);
}
