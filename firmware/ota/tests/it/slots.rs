//! Slot status, the primary slot and `Mark`, through RAUC's grub backend on a grubenv file.

use routerd_ota::{BootStatus, Call, MarkState, OtaError, SlotRef, SlotState};

#[tokio::test]
async fn slot_status_lists_both_slots_with_the_booted_one_first_in_grub_order() {
    let fixture = crate::support::start().await;
    let rauc = fixture.client().await;
    let slots = rauc.slots().await.expect("GetSlotStatus");
    let names: Vec<&str> = slots.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["rootfs.0", "rootfs.1"]);
    let (a, b) = (&slots[0], &slots[1]);
    assert_eq!(a.state, Some(SlotState::Booted));
    assert_eq!(b.state, Some(SlotState::Inactive));
    assert_eq!((a.bootname.as_deref(), b.bootname.as_deref()), (Some("A"), Some("B")));
    assert_eq!(a.class.as_deref(), Some("rootfs"));
    assert_eq!(a.slot_type.as_deref(), Some("raw"));
    let device_b = fixture.slot_file("B");
    assert_eq!(b.device.as_deref(), device_b.to_str());
    assert_eq!(
        (&a.boot_status, &b.boot_status),
        (&Some(BootStatus::Good), &Some(BootStatus::Good))
    );
    // Nothing was installed yet: RAUC sends no bundle keys, and they stay None.
    assert_eq!(b.installed_version, None);
    assert_eq!(b.installed_timestamp, None);
    assert_eq!(rauc.primary().await.expect("GetPrimary"), "rootfs.0");
}

#[tokio::test]
async fn mark_good_booted_and_bad_other_answer_with_slot_names_and_reach_the_boot_loader() {
    let fixture = crate::support::start().await;
    let rauc = fixture.client().await;

    let good = rauc.mark(MarkState::Good, &SlotRef::Booted).await.expect("Mark good booted");
    assert_eq!(good.slot, "rootfs.0");
    assert!(good.message.contains("rootfs.0"), "{}", good.message);

    let bad = rauc.mark(MarkState::Bad, &SlotRef::Other).await.expect("Mark bad other");
    assert_eq!(bad.slot, "rootfs.1");
    assert!(bad.message.contains("rootfs.1"), "{}", bad.message);

    let env = fixture.grubenv();
    assert!(env.lines().any(|l| l == "B_OK=0"), "{env}");
    assert!(env.lines().any(|l| l == "A_OK=1"), "{env}");
    let slots = rauc.slots().await.expect("GetSlotStatus");
    let status: Vec<_> = slots.iter().map(|s| (s.name.as_str(), s.boot_status.clone())).collect();
    assert_eq!(status, [("rootfs.0", Some(BootStatus::Good)), ("rootfs.1", Some(BootStatus::Bad))]);
}

#[tokio::test]
async fn mark_active_by_name_makes_that_slot_primary() {
    let fixture = crate::support::start().await;
    let rauc = fixture.client().await;
    let marked = rauc
        .mark(MarkState::Active, &SlotRef::Named("rootfs.1".into()))
        .await
        .expect("Mark active rootfs.1");
    assert_eq!(marked.slot, "rootfs.1");
    assert_eq!(rauc.primary().await.expect("GetPrimary"), "rootfs.1");
    let env = fixture.grubenv();
    assert!(env.lines().any(|l| l == "ORDER=B A"), "{env}");
}

/// RAUC's reason comes back word for word, classified as a refusal.
#[tokio::test]
async fn marking_a_slot_that_does_not_exist_is_refused_with_raucs_message() {
    let fixture = crate::support::start().await;
    let rauc = fixture.client().await;
    let err = rauc
        .mark(MarkState::Bad, &SlotRef::Named("rootfs.9".into()))
        .await
        .expect_err("no slot rootfs.9");
    match &err {
        OtaError::Refused { call: Call::Mark, message, .. } => {
            assert!(message.contains("rootfs.9"), "{message}");
        }
        other => panic!("not a refusal of Mark: {other:?}"),
    }
    assert!(err.is_refused());
    let env = fixture.grubenv();
    assert!(env.lines().any(|l| l == "ORDER=A B"), "grubenv changed: {env}");
}
