//! `SysctlBackend` against the real kernel: `net.*` keys are the test namespace's own, read
//! back with `cat` run inside the namespace and compared with the test process's own view.

use routerd_host::artifact::SysctlSpec;
use routerd_host::sysctl::SysctlBackend;
use routerd_host::{
    Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, Backend, ErrorClass, HostError,
};

use crate::support::TestNetns;

fn sysctl(key: &str, value: &str) -> Artifact {
    Artifact::new(ArtifactSpec::Sysctl(SysctlSpec { key: key.into(), value: value.into() }))
}

fn key(name: &str) -> ArtifactKey {
    ArtifactKey::new(ArtifactKind::Sysctl, name)
}

fn host_ip_forward() -> String {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_forward")
        .expect("host ip_forward")
        .trim()
        .to_string()
}

#[tokio::test]
async fn ip_forward_written_in_namespace_leaves_host_value_unchanged() {
    let ns = TestNetns::new();
    let backend = SysctlBackend::new(&ns.netns());
    let host_before = host_ip_forward();
    let flipped = if host_before == "1" { "0" } else { "1" };

    let current = backend
        .observe(ArtifactKind::Sysctl, &[key("net.ipv4.ip_forward")])
        .await
        .expect("observe");
    assert_eq!(current.len(), 1);

    backend.modify(&current[0], &sysctl("net.ipv4.ip_forward", flipped)).await.expect("write");

    let read = backend
        .observe(ArtifactKind::Sysctl, &[key("net.ipv4.ip_forward")])
        .await
        .expect("observe");
    assert_eq!(read, [sysctl("net.ipv4.ip_forward", flipped)]);
    assert_eq!(ns.exec(&["cat", "/proc/sys/net/ipv4/ip_forward"]).trim(), flipped);
    assert_eq!(host_ip_forward(), host_before, "writing in {} changed the host's value", ns.name());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interface_sysctl_works_for_names_with_dots() {
    let ns = TestNetns::new();
    ns.add_veth("v.lan0", "v.lan1");
    let backend = SysctlBackend::new(&ns.netns());

    backend.create(&sysctl("net.ipv4.conf.v.lan0.rp_filter", "2")).await.expect("write rp_filter");
    backend.create(&sysctl("net.ipv6.conf.v.lan0.accept_ra", "0")).await.expect("write accept_ra");

    assert_eq!(ns.exec(&["cat", "/proc/sys/net/ipv4/conf/v.lan0/rp_filter"]).trim(), "2");
    assert_eq!(ns.exec(&["cat", "/proc/sys/net/ipv6/conf/v.lan0/accept_ra"]).trim(), "0");
    let wanted = [key("net.ipv4.conf.v.lan0.rp_filter"), key("net.ipv6.conf.v.lan0.accept_ra")];
    let read = backend.observe(ArtifactKind::Sysctl, &wanted).await.expect("observe");
    assert_eq!(
        read,
        [
            sysctl("net.ipv4.conf.v.lan0.rp_filter", "2"),
            sysctl("net.ipv6.conf.v.lan0.accept_ra", "0")
        ]
    );
    // The host has no such interface: the key only exists inside the namespace.
    assert!(!std::path::Path::new("/proc/sys/net/ipv4/conf/v.lan0").exists());
}

#[tokio::test]
async fn observe_omits_missing_keys_and_rejects_malformed_ones() {
    let ns = TestNetns::new();
    let backend = SysctlBackend::new(&ns.netns());

    let wanted = [key("net.ipv4.conf.nope0.rp_filter"), key("net.ipv4.ip_forward")];
    let read = backend.observe(ArtifactKind::Sysctl, &wanted).await.expect("observe");
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].key, key("net.ipv4.ip_forward"));

    for bad in ["net/ipv4/ip_forward", "net.ipv4.conf...ip_forward", ""] {
        let err = backend.observe(ArtifactKind::Sysctl, &[key(bad)]).await.expect_err(bad);
        assert!(matches!(err, HostError::Invalid { .. }), "{bad}: {err:?}");
    }

    let err =
        backend.create(&sysctl("net.ipv4.conf.nope0.rp_filter", "1")).await.expect_err("no file");
    assert!(matches!(err, HostError::Sysctl { .. }), "{err:?}");
    assert_eq!(err.class(), ErrorClass::Rejected);
}

#[tokio::test]
async fn sysctl_delete_is_refused_and_bad_values_are_invalid() {
    let ns = TestNetns::new();
    let backend = SysctlBackend::new(&ns.netns());
    assert_eq!(backend.apply_with(), routerd_host::ApplyWith::Procfs);

    let err = backend.delete(&sysctl("net.ipv4.ip_forward", "1")).await.expect_err("refused");
    assert!(matches!(err, HostError::Invalid { .. }), "{err:?}");

    let err = backend.create(&sysctl("net.ipv4.ip_forward", "banana")).await.expect_err("EINVAL");
    assert_eq!(err.class(), ErrorClass::Invalid, "{err:?}");
}
