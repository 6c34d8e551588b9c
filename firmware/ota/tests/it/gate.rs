//! The health gate against real RAUC (grub backend on a grubenv file): a healthy boot is
//! confirmed, an unhealthy one is marked bad and rebooted, or held when there is nothing to
//! fall back to; the per-boot record survives a restart of the gate.

use std::cell::Cell;
use std::path::Path;
use std::time::Duration;

use routerd_ota::Rauc;
use routerd_ota::gate::{self, GateOptions, GatePhase, GateRecord, Health};

use crate::support::RaucFixture;

fn options(fixture: &RaucFixture, boot_id: &str, window: Duration) -> GateOptions {
    GateOptions {
        window,
        interval: Duration::from_millis(100),
        state_file: fixture.path("state/ota-gate.json"),
        boot_id: boot_id.to_string(),
    }
}

fn has(env: &str, line: &str) -> bool {
    env.lines().any(|l| l == line)
}

fn persisted(path: &Path) -> Vec<GateRecord> {
    gate::records(path).expect("state file readable")
}

/// Runs the gate with a health check that always answers `verdict`; the record, how many
/// checks ran and how many reboots were asked for.
async fn run_gate(rauc: &Rauc, opts: &GateOptions, verdict: Health) -> (GateRecord, u32, u32) {
    let (checks, reboots) = (Cell::new(0), Cell::new(0));
    let health = || {
        checks.set(checks.get() + 1);
        let verdict = verdict.clone();
        async move { verdict }
    };
    let reboot = || {
        reboots.set(reboots.get() + 1);
        async {}
    };
    let record = gate::run(rauc, opts, health, reboot).await.expect("gate");
    (record, checks.get(), reboots.get())
}

#[tokio::test]
async fn a_healthy_boot_is_marked_good_and_its_try_flag_cleared() {
    let fixture = crate::support::start().await;
    // GRUB set this when it booted A.
    fixture.set_grubenv(&["A_TRY=1"]);
    let rauc = fixture.client().await;
    let opts = options(&fixture, "boot-1", Duration::from_secs(30));
    let (record, checks, reboots) = run_gate(&rauc, &opts, Ok(())).await;
    assert_eq!(record.phase, GatePhase::Good);
    assert_eq!((record.slot.as_str(), record.bootname.as_deref()), ("rootfs.0", Some("A")));
    assert!(record.detail.contains("rootfs.0"), "RAUC's Mark answer: {}", record.detail);
    assert_eq!((checks, reboots), (1, 0));
    let env = fixture.grubenv();
    assert!(has(&env, "A_TRY=0") && has(&env, "A_OK=1"), "{env}");
    assert_eq!(persisted(&opts.state_file), [record]);
}

#[tokio::test]
async fn an_unhealthy_boot_is_marked_bad_and_rebooted_when_the_other_slot_is_good() {
    let fixture = crate::support::start().await;
    fixture.set_grubenv(&["A_TRY=1"]);
    let rauc = fixture.client().await;
    let opts = options(&fixture, "boot-1", Duration::from_secs(2));
    let failing = Err("R002 operations succeeded: 3 failed".to_string());
    let (record, checks, reboots) = run_gate(&rauc, &opts, failing).await;
    assert_eq!(record.phase, GatePhase::Bad);
    assert_eq!(record.detail, "R002 operations succeeded: 3 failed");
    assert!(checks >= 2, "checked again within the window: {checks}");
    assert_eq!(reboots, 1);
    let env = fixture.grubenv();
    assert!(has(&env, "A_OK=0") && has(&env, "B_OK=1"), "{env}");
    assert_eq!(persisted(&opts.state_file), std::slice::from_ref(&record));

    // The supervisor restarts in the same boot (the reboot did not happen yet) and the router
    // looks healthy now: the slot stays bad and the reboot is asked for again.
    let (again, _, reboots_again) = run_gate(&rauc, &opts, Ok(())).await;
    assert_eq!(again, record);
    assert_eq!(reboots_again, 1);
    assert!(has(&fixture.grubenv(), "A_OK=0"));
}

#[tokio::test]
async fn an_unhealthy_boot_with_nothing_to_fall_back_to_is_held_unconfirmed() {
    let fixture = crate::support::start().await;
    fixture.set_grubenv(&["A_TRY=1", "B_OK=0"]);
    let rauc = fixture.client().await;
    let opts = options(&fixture, "boot-1", Duration::from_secs(1));
    let (record, _, reboots) = run_gate(&rauc, &opts, Err("R001 failed".to_string())).await;
    assert_eq!(record.phase, GatePhase::Held);
    assert_eq!(reboots, 0);
    let env = fixture.grubenv();
    // Neither confirmed nor marked bad: the boot loader state is as GRUB left it.
    assert!(has(&env, "A_OK=1") && has(&env, "A_TRY=1"), "{env}");
}

#[tokio::test]
async fn a_restarted_gate_resumes_its_window_and_a_new_boot_gets_its_own_record() {
    let fixture = crate::support::start().await;
    let rauc = fixture.client().await;
    let opts = options(&fixture, "boot-1", Duration::from_secs(3600));
    // A first run of this boot opened a 5 s window 10 s ago (in uptime) and never decided
    // (the supervisor was killed); this run's own window of an hour does not apply.
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .expect("uptime")
        .split_whitespace()
        .next()
        .expect("field")
        .parse()
        .expect("number");
    let opened = GateRecord {
        boot_id: "boot-1".into(),
        slot: "rootfs.0".into(),
        bootname: Some("A".into()),
        version: None,
        phase: GatePhase::Checking,
        started: 1,
        started_uptime: (uptime as u64).saturating_sub(10),
        window_seconds: 5,
        decided: None,
        detail: String::new(),
    };
    let older = GateRecord { boot_id: "boot-0".into(), phase: GatePhase::Good, ..opened.clone() };
    std::fs::create_dir_all(opts.state_file.parent().expect("dir")).expect("state dir");
    std::fs::write(&opts.state_file, serde_json::to_vec(&[&older, &opened]).expect("json"))
        .expect("state file");
    assert!(uptime > 10.0, "the machine has been up for more than 10 s");
    let (record, checks, _) = run_gate(&rauc, &opts, Err("still failing".to_string())).await;
    // The window was over already: one check, then the decision, not a fresh window.
    assert_eq!(checks, 1);
    assert_eq!(record.phase, GatePhase::Bad);
    assert_eq!(record.started_uptime, opened.started_uptime);

    let next = options(&fixture, "boot-2", Duration::from_secs(30));
    fixture.set_grubenv(&["A_OK=1", "A_TRY=1"]);
    let (confirmed, _, _) = run_gate(&rauc, &next, Ok(())).await;
    assert_eq!(confirmed.phase, GatePhase::Good);
    let ids: Vec<String> = persisted(&opts.state_file).into_iter().map(|r| r.boot_id).collect();
    assert_eq!(ids, ["boot-0", "boot-1", "boot-2"]);
}
