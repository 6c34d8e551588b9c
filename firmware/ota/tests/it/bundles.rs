//! Inspecting and installing bundles (root: RAUC mounts plain bundles on loop devices).
//!
//! Every refusal also checks that nothing was written: both slot files still hold what the
//! fixture put there.

use std::fs;
use std::path::Path;
use std::time::Duration;

use routerd_ota::{BundleDigest, InstallEvent, Installation, OtaError, SlotState};

use crate::support::{BundleSpec, COMPATIBLE, RaucFixture, sha256sum};

/// How long one install of a 3 MiB image may take (it takes well under a second).
const INSTALL_DEADLINE: Duration = Duration::from_secs(60);

/// Every event of an install, up to and including `Completed` (deadline).
async fn events(fixture: &RaucFixture, mut install: Installation) -> Vec<InstallEvent> {
    let collect = async {
        let mut events = Vec::new();
        while let Some(event) = install.next_event().await {
            events.push(event.expect("install event"));
        }
        events
    };
    match tokio::time::timeout(INSTALL_DEADLINE, collect).await {
        Ok(events) => events,
        Err(_) => panic!("no Completed within {INSTALL_DEADLINE:?}:\n{}", fixture.rauc_log()),
    }
}

/// The `Completed` event that ends `events`.
fn completion(events: &[InstallEvent]) -> (bool, Option<String>) {
    eprintln!("events: {events:#?}");
    match events.last() {
        Some(InstallEvent::Completed { ok, last_error, .. }) => (*ok, last_error.clone()),
        other => panic!("last event is not Completed: {other:?} in {events:?}"),
    }
}

fn assert_slots_untouched(fixture: &RaucFixture) {
    for bootname in ["A", "B"] {
        let bytes = fs::read(fixture.slot_file(bootname)).expect("slot file");
        assert!(
            bytes == RaucFixture::initial_slot_bytes(bootname),
            "slot {bootname} was written to:\n{}",
            fixture.rauc_log()
        );
    }
}

fn good_bundle(fixture: &RaucFixture, name: &str, version: &str) -> std::path::PathBuf {
    let ca = fixture.ca();
    fixture.bundle(&BundleSpec::for_test_system(name, version, &ca))
}

/// The digest a caller would have if it had inspected `bundle`, without asking RAUC.
fn file_digest(bundle: &Path) -> BundleDigest {
    BundleDigest::File(sha256sum(bundle))
}

#[tokio::test]
async fn inspect_reports_compatible_version_and_a_digest_that_tells_bundles_apart() {
    let fixture = crate::support::start().await;
    let rauc = fixture.client().await;
    let first = good_bundle(&fixture, "first.raucb", "1.2.3");
    let second = good_bundle(&fixture, "second.raucb", "1.2.4");

    let info = rauc.inspect(&first).await.expect("inspect");
    assert_eq!(info.compatible, COMPATIBLE);
    assert_eq!(info.version.as_deref(), Some("1.2.3"));
    match &info.digest {
        // RAUC 1.8: no manifest hash over D-Bus; the client hashes the file.
        BundleDigest::File(hex) => assert_eq!(*hex, sha256sum(&first)),
        BundleDigest::Manifest(hex) => assert_eq!(hex.len(), 64, "{hex}"),
    }
    assert_eq!(rauc.inspect(&first).await.expect("inspect again").digest, info.digest);
    // The signer, which RAUC does not report, read from the bundle's CMS signature: the
    // development signing certificate, issued by the development CA.
    let signer = info.signer.as_ref().expect("the signer");
    assert!(signer.subject.contains("CN=routerd development bundle signing"), "{signer:?}");
    assert!(signer.issuer.contains("CN=routerd development CA"), "{signer:?}");
    assert!(signer.not_after.ends_with('Z') && signer.not_after.len() >= 20, "{signer:?}");
    let other = rauc.inspect(&second).await.expect("inspect second");
    assert_eq!(other.version.as_deref(), Some("1.2.4"));
    assert_ne!(other.digest, info.digest);
}

#[tokio::test]
async fn install_of_the_inspected_bundle_reports_progress_to_100_and_writes_slot_b() {
    let fixture = crate::support::start().await;
    let rauc = fixture.client().await;
    let bundle = good_bundle(&fixture, "good.raucb", "1.2.3");
    let info = rauc.inspect(&bundle).await.expect("inspect");

    let install = rauc.install(&bundle, &info.digest).await.expect("InstallBundle accepted");
    let events = events(&fixture, install).await;

    let percents: Vec<u8> = events
        .iter()
        .filter_map(|e| match e {
            InstallEvent::Progress { percent, .. } => Some(*percent),
            InstallEvent::Completed { .. } => None,
        })
        .collect();
    assert!(percents.len() >= 3, "too few progress steps: {events:?}");
    assert!(percents.windows(2).all(|w| w[0] <= w[1]), "percentages go back: {percents:?}");
    assert_eq!(percents.first(), Some(&0), "{events:?}");
    assert_eq!(percents.last(), Some(&100), "{events:?}");
    assert!(
        events.iter().any(
            |e| matches!(e, InstallEvent::Progress { message, .. } if message.contains("rootfs.1"))
        ),
        "no step names the target slot: {events:?}"
    );
    assert_eq!(completion(&events), (true, None), "{}", fixture.rauc_log());

    let image = RaucFixture::image_bytes("1.2.3");
    let slot_b = fs::read(fixture.slot_file("B")).expect("slot B");
    assert!(slot_b[..image.len()] == image[..], "slot B does not hold the image");
    let slot_a = fs::read(fixture.slot_file("A")).expect("slot A");
    assert!(slot_a == RaucFixture::initial_slot_bytes("A"), "the booted slot was written");

    let slots = rauc.slots().await.expect("GetSlotStatus");
    let b = slots.iter().find(|s| s.name == "rootfs.1").expect("rootfs.1 listed");
    assert_eq!(b.installed_version.as_deref(), Some("1.2.3"));
    assert_eq!(b.bundle_compatible.as_deref(), Some(COMPATIBLE));
    assert_eq!(b.install_status.as_deref(), Some("ok"));
    assert_eq!(b.size_bytes, Some(image.len() as u64));
    assert!(b.installed_timestamp.is_some(), "{b:?}");
    let a = slots.iter().find(|s| s.name == "rootfs.0").expect("rootfs.0 listed");
    assert_eq!(a.state, Some(SlotState::Booted));
    assert_eq!(a.installed_version, None);
    assert_eq!(rauc.primary().await.expect("GetPrimary"), "rootfs.1");
    assert_eq!(rauc.operation().await.expect("Operation"), "idle");
}

/// The bundle was replaced (validly signed, other version) after it was inspected.
#[tokio::test]
async fn install_of_a_bundle_replaced_after_inspect_is_refused_and_writes_nothing() {
    let fixture = crate::support::start().await;
    let rauc = fixture.client().await;
    let bundle = good_bundle(&fixture, "update.raucb", "1.0.0");
    let inspected = rauc.inspect(&bundle).await.expect("inspect").digest;
    let swapped = good_bundle(&fixture, "swapped.raucb", "6.6.6");
    fs::rename(&swapped, &bundle).expect("swap the bundle");

    let err = rauc.install(&bundle, &inspected).await.err().expect("refused");
    eprintln!("install: {err}");
    match &err {
        OtaError::DigestMismatch { expected, found, .. } => {
            assert_eq!(*expected, inspected);
            assert_ne!(*found, inspected);
        }
        other => panic!("not a digest mismatch: {other:?}"),
    }
    assert_slots_untouched(&fixture);
}

/// A manifest hash goes to RAUC as `require-manifest-hash`. RAUC 1.8 to 1.13 refuse the key
/// ("Unsupported key"); the client then compares the hash itself, and refuses. RAUC >= 1.14
/// refuses the mismatch itself.
#[tokio::test]
async fn install_with_a_manifest_hash_that_does_not_match_is_refused_and_writes_nothing() {
    let fixture = crate::support::start().await;
    let rauc = fixture.client().await;
    let bundle = good_bundle(&fixture, "update.raucb", "1.0.0");
    let wrong = BundleDigest::Manifest("0".repeat(64));

    match rauc.install(&bundle, &wrong).await {
        Err(OtaError::DigestMismatch { expected, found, .. }) => {
            eprintln!("install: expected {expected}, found {found}");
            assert_eq!(expected, wrong);
        }
        Ok(install) => {
            let events = events(&fixture, install).await;
            let (ok, last_error) = completion(&events);
            assert!(!ok, "installed despite the wrong hash");
            assert!(last_error.is_some_and(|e| e.contains("hash")), "{events:?}");
        }
        Err(other) => panic!("unexpected error: {other:?}"),
    }
    assert_slots_untouched(&fixture);
}

#[tokio::test]
async fn a_bundle_for_another_compatible_is_refused_with_raucs_reason_and_writes_nothing() {
    let fixture = crate::support::start().await;
    let rauc = fixture.client().await;
    let ca = fixture.ca();
    let spec =
        BundleSpec { name: "other.raucb", compatible: "routerd-other", version: "1", ca: &ca };
    let bundle = fixture.bundle(&spec);
    let info = rauc.inspect(&bundle).await.expect("inspect shows what the bundle is for");
    assert_eq!(info.compatible, "routerd-other");

    let install = rauc.install(&bundle, &info.digest).await.expect("InstallBundle accepted");
    let events = events(&fixture, install).await;
    let (ok, last_error) = completion(&events);
    assert!(!ok, "a bundle for another compatible was installed");
    let reason = last_error.expect("RAUC's reason");
    assert!(reason.contains("routerd-other") && reason.contains(COMPATIBLE), "{reason}");
    assert_eq!(rauc.last_error().await.expect("LastError"), reason);
    assert_slots_untouched(&fixture);
}

#[tokio::test]
async fn a_bundle_signed_by_another_ca_is_refused_and_writes_nothing() {
    let fixture = crate::support::start().await;
    let rauc = fixture.client().await;
    let other_ca = fixture.other_ca();
    let spec =
        BundleSpec { name: "foreign.raucb", compatible: COMPATIBLE, version: "1", ca: &other_ca };
    let bundle = fixture.bundle(&spec);

    let err = rauc.inspect(&bundle).await.expect_err("inspect of a foreign bundle");
    eprintln!("inspect: {err}");
    assert!(err.is_refused(), "{err:?}");

    let install = rauc.install(&bundle, &file_digest(&bundle)).await.expect("InstallBundle");
    let events = events(&fixture, install).await;
    let (ok, last_error) = completion(&events);
    assert!(!ok, "a bundle of an untrusted CA was installed");
    let reason = last_error.expect("RAUC's reason");
    assert!(reason.to_lowercase().contains("signature"), "{reason}");
    assert_slots_untouched(&fixture);
}

#[tokio::test]
async fn a_truncated_bundle_is_refused_and_writes_nothing() {
    let fixture = crate::support::start().await;
    let rauc = fixture.client().await;
    let bundle = good_bundle(&fixture, "cut.raucb", "1");
    let bytes = fs::read(&bundle).expect("bundle");
    fs::write(&bundle, &bytes[..bytes.len() - 512]).expect("truncate");

    let err = rauc.inspect(&bundle).await.expect_err("inspect of a truncated bundle");
    eprintln!("inspect: {err}");
    assert!(err.is_refused(), "{err:?}");

    let install = rauc.install(&bundle, &file_digest(&bundle)).await.expect("InstallBundle");
    let events = events(&fixture, install).await;
    let (ok, last_error) = completion(&events);
    assert!(!ok, "a truncated bundle was installed");
    // RAUC 1.8: "Invalid bundle format: Signature size (…) exceeds bundle size".
    assert!(last_error.is_some_and(|e| e.to_lowercase().contains("bundle")), "{events:?}");
    assert_slots_untouched(&fixture);
}
