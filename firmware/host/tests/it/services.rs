//! `SystemdBackend` and `DnsmasqBackend` on a private bus with the systemd stand-in
//! (`routerd_host::testing::FakeSystemd`) and the real dnsmasq: what the configurators ask the
//! manager for, and a configuration dnsmasq rejects, or does not start with, changing nothing.

use std::sync::Arc;

use routerd_host::artifact::{DnsmasqSectionSpec, UnitSpec};
use routerd_host::bus::SystemBus;
use routerd_host::dnsmasq::{DnsmasqBackend, UNIT};
use routerd_host::systemd::{Job, Systemd, SystemdBackend};
use routerd_host::testing::FakeSystemd;
use routerd_host::{Artifact, ArtifactKind, ArtifactSpec, Backend, HostError, Target};

/// A unit whose service is a `sleep` that a script forks into the background, writing its
/// PID to `PIDFile=` (`Type=forking`). The stand-in splits `ExecStart=` on whitespace, so the
/// shell gets a script file, not a command line.
fn unit(name: &str, dir: &std::path::Path, marker: &str) -> Artifact {
    let pid = dir.join(format!("{name}.pid"));
    let script = dir.join("start.sh");
    std::fs::write(&script, format!("sleep 600 &\necho $! > {}\n", pid.display())).expect("script");
    let content = format!(
        "# {marker}\n[Service]\nType=forking\nPIDFile={}\nExecStart=/bin/sh {}\n",
        pid.display(),
        script.display()
    );
    Artifact::new(ArtifactSpec::Unit(UnitSpec { unit: name.into(), content, active: true }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unit_is_written_enabled_started_restarted_on_change_and_removed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = Target::new(None, Some(dir.path().join("root")));
    let fake = FakeSystemd::start(dir.path(), &target.unit_dir()).await;
    let systemd =
        Arc::new(Systemd::new(Arc::new(SystemBus::new(Some(fake.address().to_string())))));
    let backend = SystemdBackend::new(&target, systemd);
    let name = "routerd-test.service";
    let v1 = unit(name, dir.path(), "v1");

    backend.create(&v1).await.expect("create");
    assert_eq!(fake.active_state(name), "active");
    assert!(fake.is_enabled(name));
    let observed = backend.observe(ArtifactKind::SystemdService, &[]).await.expect("observe");
    assert_eq!(observed, vec![v1.clone()]);
    let first_pid = fake.main_pid(name).expect("a main PID");

    // A changed file is rewritten, reloaded and the service restarted.
    let v2 = unit(name, dir.path(), "v2");
    backend.modify(&v1, &v2).await.expect("modify");
    assert_ne!(fake.main_pid(name), Some(first_pid));
    let calls = fake.calls();
    let tail: Vec<&str> = calls.iter().rev().take(4).rev().map(String::as_str).collect();
    assert_eq!(
        tail,
        [
            "Reload",
            &format!("EnableUnitFiles {name}"),
            &format!("ResetFailedUnit {name}"),
            &format!("RestartUnit {name}")
        ]
    );

    // Orphan cleanup: disable --now, remove the file, reload.
    backend.delete(&v2).await.expect("delete");
    assert_eq!(fake.active_state(name), "inactive");
    assert!(!fake.is_enabled(name));
    assert!(!target.unit_dir().join(name).exists());
    assert_eq!(fake.calls().last().map(String::as_str), Some("Reload"));
    assert!(backend.observe(ArtifactKind::SystemdService, &[]).await.expect("observe").is_empty());

    // Only routerd-*.service names are accepted.
    let foreign = unit("sshd.service", dir.path(), "v1");
    assert!(matches!(backend.create(&foreign).await, Err(HostError::Invalid { .. })));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_section_dnsmasq_rejects_or_fails_to_start_with_leaves_the_file_and_the_service_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = Target::new(None, Some(dir.path().join("root")));
    let fake = FakeSystemd::start(dir.path(), &target.unit_dir()).await;
    let systemd =
        Arc::new(Systemd::new(Arc::new(SystemBus::new(Some(fake.address().to_string())))));
    let backend = DnsmasqBackend::new(&target, Arc::clone(&systemd));
    let section = |name: &str, lines: &[&str]| {
        Artifact::new(ArtifactSpec::DnsmasqSection(DnsmasqSectionSpec {
            section: name.into(),
            lines: lines.iter().map(|l| l.to_string()).collect(),
        }))
    };
    // The unit stands for dnsmasq: its start succeeds or fails as `exec` does.
    let unit_is = |exec: &str| {
        std::fs::create_dir_all(target.unit_dir()).expect("unit dir");
        let text = format!("[Service]\nType=forking\nExecStart={exec}\n");
        std::fs::write(target.unit_dir().join(UNIT), text).expect("unit file");
    };
    let key = routerd_host::ArtifactKey::new(ArtifactKind::SystemdService, UNIT);
    unit_is("/bin/true");
    systemd.reload(&key).await.expect("reload");

    // Seven sections in a row, each restarting dnsmasq: more starts than systemd's default
    // rate limit allows in 10 s, which routerd's own restarts reset.
    let good =
        section("dhcpv4-range/pool", &["dhcp-range=set:pool,192.168.7.100,192.168.7.150,600"]);
    backend.create(&good).await.expect("create");
    for i in 1..7 {
        let line = format!("dhcp-range=set:p{i},192.168.{i}.100,192.168.{i}.150,600");
        let more = section(&format!("dhcpv4-range/p{i}"), &[line.as_str()]);
        backend.create(&more).await.unwrap_or_else(|e| panic!("section {i}: {e}"));
    }
    assert_eq!(fake.starts(UNIT), 7);
    let written = std::fs::read_to_string(target.dnsmasq_conf()).expect("file written");
    assert!(written.contains("dhcp-range=set:pool,192.168.7.100"), "{written}");

    // A range from IPv4 to IPv6: dnsmasq's own check refuses it, before any write or restart.
    let calls = fake.calls().len();
    let bad = section("dhcpv4-range/pool", &["dhcp-range=set:pool,192.168.7.100,fd00::1,600"]);
    let err = backend.modify(&good, &bad).await.expect_err("dnsmasq refuses");
    assert!(matches!(err, HostError::Invalid { .. }), "{err:?}");
    assert!(err.to_string().contains("bad dhcp-range"), "{err}");
    assert_eq!(std::fs::read_to_string(target.dnsmasq_conf()).expect("file"), written);
    assert_eq!(fake.calls().len(), calls, "{:#?}", fake.calls());

    // dnsmasq accepts the section but does not start with it: the file goes back to what it
    // was, so nothing of the failed change stays (no section routerd never recorded).
    unit_is("/bin/false");
    systemd.reload(&key).await.expect("reload");
    let late =
        section("dhcpv4-range/late", &["dhcp-range=set:late,192.168.9.100,192.168.9.150,600"]);
    let err = backend.create(&late).await.expect_err("dnsmasq does not start");
    assert!(err.to_string().contains("job failed"), "{err}");
    assert_eq!(std::fs::read_to_string(target.dnsmasq_conf()).expect("file"), written);
    let listed = backend.observe(ArtifactKind::DnsmasqConfig, &[]).await.expect("observe");
    assert_eq!(listed.len(), 7, "{listed:#?}");
    assert!(listed.contains(&good) && !listed.contains(&late), "{listed:#?}");

    // The unit is gone (a config without dnsmasq): systemd knows no such unit, and a restart
    // says so by name. A section's removal still goes: no dnsmasq runs to read the file.
    std::fs::remove_file(target.unit_dir().join(UNIT)).expect("unit file removed");
    systemd.reload(&key).await.expect("reload");
    let err = systemd.run(&key, UNIT, Job::Restart).await.expect_err("no such unit");
    assert!(err.to_string().contains("org.freedesktop.systemd1.NoSuchUnit"), "{err}");
    backend.delete(&good).await.expect("a removal with no unit to restart");
    assert!(fake.calls().contains(&format!("TryRestartUnit {UNIT}")), "{:#?}", fake.calls());
    let listed = backend.observe(ArtifactKind::DnsmasqConfig, &[]).await.expect("observe");
    assert_eq!(listed.len(), 6, "{listed:#?}");
    assert!(!listed.contains(&good), "{listed:#?}");
}
