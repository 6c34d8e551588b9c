//! `Hostname` through systemd-hostnamed (issue "every seed resource kind applied for real",
//! §1): the real hostnamed (`routerd_host::testing::Hostnamed`, in namespaces of its own) on
//! the test's private bus sets `/etc/hostname` and the kernel's hostname; drift is repaired and
//! the hostname is never deleted.

use routerd_engine::Phase;
use routerd_engine::result::OperationResult;
use routerd_host::testing::Hostnamed;

use crate::support::{LAB, lab_with_systemd, ops, run};

fn config(hostname: &str, managed: bool) -> String {
    format!(
        "{LAB}
    - apiVersion: net.routerd.net/v1alpha1
      kind: Hostname
      metadata:
        name: host
      spec:
        hostname: {hostname}
        managed: {managed}
"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostnamed_sets_the_hostname_repairs_drift_and_never_deletes_it() {
    let (lab, systemd) = lab_with_systemd().await;
    let hostnamed = Hostnamed::start(&lab.dir().join("hostnamed"), systemd.address(), "factory");

    lab.reconcile(LAB).await;
    // Observed only: nothing changes.
    let doc = lab.reconcile(&config("router7.example.net", false)).await;
    assert!(doc.operations.is_empty(), "{:#?}", doc.operations);
    assert_eq!(hostnamed.kernel_hostname(), "factory");

    let doc = lab.reconcile(&config("router7.example.net", true)).await;
    assert_eq!(ops(&doc, OperationResult::Done), vec!["modify linux.hostname/system".to_string()]);
    assert_eq!(hostnamed.etc_hostname().trim(), "router7.example.net");
    assert_eq!(hostnamed.kernel_hostname(), "router7.example.net");
    // The hostname existed before routerd set it: like a sysctl, it is routerd's once adopted
    // (docs/adr/0002-ownership-rules.md).
    let res = doc.resources.iter().find(|r| r.id.ends_with("/Hostname/host")).expect("resource");
    assert_eq!(res.phase, Phase::RequiresAdoption, "{:#?}", res.conditions);
    lab.adopt(&config("router7.example.net", true), true).await;
    let again = lab.reconcile(&config("router7.example.net", true)).await;
    assert!(again.operations.is_empty(), "{:#?}", again.operations);
    let res = again.resources.iter().find(|r| r.id.ends_with("/Hostname/host")).expect("resource");
    assert_eq!(res.phase, Phase::Healthy, "{:#?}", res.conditions);

    // Changed behind routerd's back (as `hostnamectl hostname` would): plan shows the drift,
    // reconcile puts it back.
    run(
        "busctl",
        &[
            "--address",
            systemd.address(),
            "call",
            "org.freedesktop.hostname1",
            "/org/freedesktop/hostname1",
            "org.freedesktop.hostname1",
            "SetStaticHostname",
            "sb",
            "other",
            "false",
        ],
    );
    assert_eq!(hostnamed.kernel_hostname(), "other");
    let plan = lab.plan(&config("router7.example.net", true), false).await;
    assert_eq!(
        ops(&plan, OperationResult::Planned),
        vec!["modify linux.hostname/system".to_string()]
    );
    lab.reconcile(&config("router7.example.net", true)).await;
    assert_eq!(hostnamed.kernel_hostname(), "router7.example.net");

    // Without the resource the hostname stays: global state is never deleted.
    let doc = lab.reconcile(LAB).await;
    assert!(ops(&doc, OperationResult::Done).is_empty(), "{:#?}", doc.operations);
    assert_eq!(hostnamed.kernel_hostname(), "router7.example.net");
    assert!(doc.orphans.iter().any(|o| o.kind == "linux.hostname"), "{:#?}", doc.orphans);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nixos_host_sets_its_hostname_through_hostnamed() {
    let (lab, systemd) = lab_with_systemd().await;
    let hostnamed = Hostnamed::start(&lab.dir().join("hostnamed"), systemd.address(), "factory");
    let nixos = |hostname: &str| {
        format!(
            "{LAB}
    - apiVersion: system.routerd.net/v1alpha1
      kind: NixOSHost
      metadata:
        name: host
      spec:
        {hostname}
        stateVersion: \"24.11\"
"
        )
    };

    lab.reconcile(LAB).await;
    // Without a hostname it only looks: nothing changes, nothing is blocked.
    let doc = lab.reconcile(&nixos("domain: example.net")).await;
    assert!(doc.operations.is_empty(), "{:#?}", doc.operations);
    let res = doc.resources.iter().find(|r| r.id.ends_with("/NixOSHost/host")).expect("resource");
    assert_ne!(res.phase, Phase::Blocked, "{:#?}", res.conditions);
    assert_eq!(hostnamed.kernel_hostname(), "factory");

    let doc = lab.reconcile(&nixos("hostname: nixos-router")).await;
    assert_eq!(ops(&doc, OperationResult::Done), vec!["modify linux.hostname/system".to_string()]);
    assert_eq!(hostnamed.etc_hostname().trim(), "nixos-router");
    assert_eq!(hostnamed.kernel_hostname(), "nixos-router");
    let res = doc.resources.iter().find(|r| r.id.ends_with("/NixOSHost/host")).expect("resource");
    assert!(res.warnings.iter().any(|w| w.contains("ignored")), "{:#?}", res.warnings);
}
