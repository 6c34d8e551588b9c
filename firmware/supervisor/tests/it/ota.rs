//! `routerd serve --health-gate` against a real `rauc service` on a private bus (grub backend on
//! a grubenv file, slot A booted): a healthy router confirms its slot, one whose doctor fails is
//! marked bad, and `routerctl ota` shows and marks slots.

use std::time::Duration;

use routerd_ota::testing::{BundleSpec, RaucFixture};
use routerd_test_kit::daemon::wait_until;

use crate::daemon::{CONFIG, Served, with_route};

const GATE_DEADLINE: Duration = Duration::from_secs(30);

async fn rauc() -> RaucFixture {
    let fixture = RaucFixture::start_in(std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))).await;
    // GRUB set this when it booted A; only a mark good clears it.
    fixture.set_grubenv(&["A_TRY=1"]);
    fixture
}

fn has(env: &str, line: &str) -> bool {
    env.lines().any(|l| l == line)
}

fn ota_status(s: &Served) -> serde_json::Value {
    let out = s.ctl(&["-o", "json", "ota", "status"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("ota status JSON")
}

fn gate_phase(s: &Served) -> Option<String> {
    ota_status(s)["gate"][0]["phase"].as_str().map(str::to_string)
}

#[tokio::test]
async fn a_healthy_router_confirms_its_slot_and_routerctl_shows_and_marks_slots() {
    let fixture = rauc().await;
    let mut s = Served::start_with(
        "ota-good",
        CONFIG,
        &["--health-gate", "--health-window", "60s", "--rauc-bus", fixture.address()],
    );
    wait_until("the health gate's decision", GATE_DEADLINE, || {
        gate_phase(&s).is_some_and(|p| p != "checking")
    });
    let status = ota_status(&s);
    assert_eq!(status["gate"][0]["phase"], "good", "{status}");
    assert_eq!(status["gate"][0]["slot"], "rootfs.0");
    assert_eq!(status["healthGate"], true);
    assert_eq!(status["bootSlot"], "A");
    assert_eq!(status["compatible"], routerd_ota::testing::COMPATIBLE);
    let env = fixture.grubenv();
    assert!(has(&env, "A_TRY=0") && has(&env, "A_OK=1"), "{env}");

    let table = s.ctl(&["ota", "status"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(table.status.success(), "{text}");
    assert!(text.lines().any(|l| l.starts_with("rootfs.0") && l.contains("booted")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("rootfs.0") && l.contains("good")), "{text}");

    // The operator switches to the other slot for the next boot.
    let active = s.ctl(&["ota", "mark-active", "other"]);
    assert!(active.status.success(), "{}", String::from_utf8_lossy(&active.stderr));
    assert!(String::from_utf8_lossy(&active.stdout).contains("rootfs.1"));
    assert!(has(&fixture.grubenv(), "ORDER=B A"), "{}", fixture.grubenv());
    assert_eq!(ota_status(&s)["primary"], "rootfs.1");

    // RAUC's own refusal reaches the operator, and nothing changes.
    let before = fixture.grubenv();
    let unknown = s.ctl(&["ota", "mark-bad", "rootfs.9"]);
    assert_eq!(unknown.status.code(), Some(1));
    let message = String::from_utf8_lossy(&unknown.stderr);
    assert!(message.contains("rootfs.9"), "{message}");
    assert_eq!(fixture.grubenv(), before);
    s.stop();
}

#[tokio::test]
async fn a_router_whose_doctor_fails_marks_its_slot_bad_after_the_window() {
    let fixture = rauc().await;
    // A route via a gateway nothing reaches: the kernel refuses it, R002 fails.
    let broken = with_route().replace("via: 10.9.0.254", "via: 192.0.2.1");
    let mut s = Served::start_with(
        "ota-bad",
        &broken,
        &["--health-gate", "--health-window", "3s", "--rauc-bus", fixture.address(), "--no-reboot"],
    );
    wait_until("the health gate's decision", GATE_DEADLINE, || {
        gate_phase(&s).is_some_and(|p| p != "checking")
    });
    let status = ota_status(&s);
    let record = &status["gate"][0];
    assert_eq!(record["phase"], "bad", "{status}");
    let detail = record["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("R002") && detail.contains("100.64.0.0/24"), "{detail}");
    let env = fixture.grubenv();
    assert!(has(&env, "A_OK=0") && has(&env, "B_OK=1"), "{env}");
    assert!(s.logged("reboot skipped"), "the reboot was asked for");
    s.stop();
}

#[tokio::test]
async fn routerctl_inspects_and_installs_a_bundle_with_progress_and_refuses_a_foreign_one() {
    routerd_ota::testing::require_root();
    let fixture = rauc().await;
    let mut s = Served::start_with("ota-install", CONFIG, &["--rauc-bus", fixture.address()]);
    let ca = fixture.ca();
    let good = fixture.bundle(&BundleSpec::for_test_system("good.raucb", "2.0.0", &ca));
    let good = good.to_str().expect("utf-8 path");

    let inspected = s.ctl(&["ota", "inspect", good]);
    let text = String::from_utf8_lossy(&inspected.stdout);
    assert!(inspected.status.success(), "{}", String::from_utf8_lossy(&inspected.stderr));
    assert!(
        text.contains("version     2.0.0")
            && text.contains("digest      file-sha256:")
            && text.contains("signed by   CN=routerd development bundle signing"),
        "{text}"
    );

    // Not a terminal: one progress line per step, then the verdict.
    let installed = s.ctl(&["ota", "install", good]);
    let text = String::from_utf8_lossy(&installed.stdout);
    assert!(installed.status.success(), "{text}{}", String::from_utf8_lossy(&installed.stderr));
    let bars: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
    assert!(bars.len() >= 3, "progress shown step by step: {text}");
    assert!(bars.last().is_some_and(|l| l.contains("100%")), "{text}");
    assert!(text.contains("installed; reboot"), "{text}");
    let slot_b = std::fs::read(fixture.slot_file("B")).expect("slot B");
    assert!(slot_b.starts_with(&RaucFixture::image_bytes("2.0.0")), "slot B holds the image");
    let status = ota_status(&s);
    assert_eq!(status["slots"][1]["version"], "2.0.0", "{status}");
    assert_eq!(status["primary"], "rootfs.1", "{status}");

    // Signed by a CA the system does not trust: RAUC's reason, and slot B keeps its bytes.
    let other = fixture.other_ca();
    let foreign = fixture.bundle(&BundleSpec::for_test_system("foreign.raucb", "6.6.6", &other));
    let refused = s.ctl(&["ota", "install", foreign.to_str().expect("utf-8 path")]);
    assert_eq!(refused.status.code(), Some(1));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("rauc"), "RAUC's words reach the operator: {message}");
    assert_eq!(std::fs::read(fixture.slot_file("B")).expect("slot B"), slot_b);
    // A digest that is not the bundle's: refused before RAUC installs anything.
    let wrong = format!("file-sha256:{}", "0".repeat(64));
    let mismatch = s.ctl(&["ota", "install", good, "--digest", &wrong]);
    assert_eq!(mismatch.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&mismatch.stderr).contains("changed since it was inspected"));
    s.stop();
}
