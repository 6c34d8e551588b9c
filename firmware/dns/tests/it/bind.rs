//! The `bind` backend against a real BIND 9 (`/usr/sbin/named`) in a network namespace of the
//! test's own: files written and checked by BIND's own programs, zones loaded by `rndc
//! reconfig`, answers read back with `dig`. named is started by the test here (on a router its
//! systemd unit starts it) and killed on drop. Needs root, like every namespace test.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use hickory_proto::rr::Name;
use routerd_dns::artifacts::{BIND_CONFIG, BIND_ZONE, BindConfig, BindZone, KeySecret};
use routerd_dns::bind::{BindBackend, KeyClause, Rndc, RndcChannel, RndcError, control_line};
use routerd_host::kinds::external::{ExternalArtifactKind, ExternalArtifactSpec, register};
use routerd_host::{Artifact, ArtifactSpec, Backend, HostError, Target};
use routerd_test_kit::daemon::Daemon;
use routerd_test_kit::netns::Netns;

const DEADLINE: Duration = Duration::from_secs(20);
const DNS_PORT: &str = "5300";
const SECRET_A: &str = "ljxU0t8+3GA8F3N0TTbZ0Aau6Fsp0g/K4V9sMOJQ5vs=";
const SECRET_B: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

/// The namespace, the root and the backend of one test.
struct Lab {
    ns: Netns,
    root: tempfile::TempDir,
    backend: BindBackend,
    rt: tokio::runtime::Runtime,
}

impl Lab {
    fn new() -> Self {
        register(&BIND_CONFIG).expect("bind.config registers");
        register(&BIND_ZONE).expect("bind.zone registers");
        let ns = Netns::new("dnsb");
        let root = tempfile::tempdir().expect("tempdir");
        let target = Target::new(Some(ns.name().to_owned()), Some(root.path().to_path_buf()));
        let netns = routerd_host::Netns::named(ns.name()).expect("the namespace");
        let backend = BindBackend::new(&target, &netns);
        let rt =
            tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        Self { ns, root, backend, rt }
    }

    fn create(&self, a: &Artifact) -> Result<(), HostError> {
        self.rt.block_on(self.backend.create(a))
    }

    fn modify(&self, a: &Artifact) -> Result<(), HostError> {
        self.rt.block_on(self.backend.modify(a, a))
    }

    fn delete(&self, a: &Artifact) -> Result<(), HostError> {
        self.rt.block_on(self.backend.delete(a))
    }

    fn observe(&self, kind: &'static ExternalArtifactKind) -> Vec<Artifact> {
        let kind = kind.artifact_kind().expect("registered");
        self.rt.block_on(self.backend.observe(kind, &[])).expect("observes")
    }

    /// A file below the root, its directory made.
    fn file(&self, abs: &str, text: &str) -> PathBuf {
        let path = self.root.path().join(abs.trim_start_matches('/'));
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, text).expect("writes");
        path
    }

    /// named for `server`, in the namespace, logging to `named.log` in its data directory.
    fn start_named(&self, server: &str) -> Daemon {
        let log = self.backend.layout().data_dir(server).join("named.log");
        let log = std::fs::File::create(&log).expect("log file");
        let conf = self.backend.layout().named_conf(server);
        let mut named = self.ns.command("/usr/sbin/named");
        named.arg("-g").arg("-c").arg(&conf).stdout(Stdio::null()).stderr(log);
        Daemon::spawn(&mut named)
    }

    fn named_log(&self, server: &str) -> String {
        let log = self.backend.layout().data_dir(server).join("named.log");
        std::fs::read_to_string(log).unwrap_or_default()
    }

    /// `dig @127.0.0.1 -p 5300 <name> <type>` in the namespace, with extra `args`: its output.
    fn dig(&self, name: &str, rtype: &str, args: &[&str]) -> String {
        let out = self
            .ns
            .command("dig")
            .args(["@127.0.0.1", "-p", DNS_PORT, "+tries=1", "+time=2", name, rtype])
            .args(args)
            .output()
            .expect("dig runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Whether `name`'s SOA is answered with authority.
    fn serves(&self, name: &str) -> bool {
        let out = self.dig(name, "SOA", &[]);
        out.contains("status: NOERROR") && out.contains("flags: qr aa") && out.contains("ANSWER: 1")
    }
}

fn artifact<T: routerd_host::kinds::external::ExternalArtifactType>(
    kind: &'static ExternalArtifactKind,
    name: &str,
    attrs: &T,
) -> Artifact {
    let spec = ExternalArtifactSpec::new(kind, name, attrs).expect("registered kind");
    Artifact::new(ArtifactSpec::External(spec))
}

fn server_text(lab: &Lab, server: &str, includes: &[&Path]) -> String {
    let layout = lab.backend.layout();
    let data = layout.data_dir(server);
    let data = data.display();
    let mut text = control_line(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 953));
    text.push_str(&format!(
        "\noptions {{\n\tdirectory \"{data}\";\n\tpid-file \"{data}/named.pid\";\n\
         \tsession-keyfile \"{data}/session.key\";\n\tmanaged-keys-directory \"{data}\";\n\
         \tlisten-on port {DNS_PORT} {{ 127.0.0.1; }};\n\tlisten-on-v6 {{ none; }};\n\
         \trecursion no;\n\tdnssec-validation no;\n}};\n\
         include \"{}\";\n\
         controls {{ inet 127.0.0.1 port 953 allow {{ 127.0.0.1; }} \
         keys {{ \"routerd-rndc\"; }}; }};\n",
        layout.rndc_key(server).display()
    ));
    for include in includes {
        text.push_str(&format!("include \"{}\";\n", include.display()));
    }
    text.push_str(&format!("include \"{}\";\n", layout.zones_conf(server).display()));
    text
}

fn seed(zone: &str) -> String {
    format!(
        "$TTL 300\n@ IN SOA ns1.{zone}. hostmaster.{zone}. 1 3600 600 1209600 300\n\
         @ IN NS ns1.{zone}.\nns1 IN A 192.0.2.1\n"
    )
}

fn zone_clause(lab: &Lab, zone: &str) -> String {
    let file = lab
        .backend
        .layout()
        .zone_file("auth", &Name::from_ascii(format!("{zone}.")).expect("name"));
    format!(
        "zone \"{zone}\" {{\n\ttype primary;\n\tfile \"{}\";\n\
         \tupdate-policy {{ grant k1 zonesub ANY; }};\n\tallow-transfer {{ key k1; }};\n\
         \tnotify yes;\n}};\n",
        file.display()
    )
}

fn names(listed: &[Artifact]) -> Vec<&str> {
    let mut names: Vec<&str> = listed.iter().map(|a| a.key.name.as_str()).collect();
    names.sort_unstable();
    names
}

fn assert_no_drift(desired: &[&Artifact], listed: &[Artifact]) {
    for d in desired {
        let seen = listed.iter().find(|a| a.key == d.key).expect("listed");
        assert_eq!(d.spec.drift(&seen.spec), Vec::new(), "{:?}", d.key);
    }
}

#[test]
fn zones_are_served_changed_and_dropped_through_the_backend_with_a_real_named() {
    let lab = Lab::new();

    // A zone an operator declared in an include of their own: served, never listed.
    let hand_zone = lab.file("/etc/bind-hand/hand.example.zone", &seed("hand.example"));
    let hand_conf = lab.file(
        "/etc/bind-hand/hand.conf",
        &format!("zone \"hand.example\" {{ type primary; file \"{}\"; }};\n", hand_zone.display()),
    );

    // The update key, from a secret file; the server includes it.
    lab.file("/etc/routerd/k1.b64", &format!("{SECRET_A}\n"));
    let k1_attrs = BindConfig::Key {
        algorithm: Default::default(),
        secret: KeySecret::File("/etc/routerd/k1.b64".into()),
    };
    let k1 = artifact(&BIND_CONFIG, "key/k1", &k1_attrs);
    lab.create(&k1).expect("key k1");
    let key_file = lab.backend.layout().key_file("k1");
    let text = server_text(&lab, "auth", &[&key_file, &hand_conf]);
    let auth = artifact(&BIND_CONFIG, "auth/options", &BindConfig::Server { text });
    lab.create(&auth).expect("server auth, named not running yet");

    let mut named = lab.start_named("auth");
    let rndc = lab.backend.rndc("auth").expect("the control channel");
    named.wait_until("rndc status", DEADLINE, || rndc.status().is_ok());
    let status = rndc.status().expect("status");
    assert!(status.contains("server is up and running"), "{status}");
    assert!(lab.serves("hand.example"), "{}", lab.named_log("auth"));

    let lab_zone = artifact(
        &BIND_ZONE,
        "auth/lab.example.",
        &BindZone {
            clause: zone_clause(&lab, "lab.example"),
            seed: seed("lab.example"),
            ..Default::default()
        },
    );
    lab.create(&lab_zone).expect("zone lab.example.");
    named.wait_until("lab.example's SOA", DEADLINE, || lab.serves("lab.example"));
    let zone_name = Name::from_ascii("lab.example.").expect("name");
    let zonestatus = rndc.zonestatus(&zone_name).expect("zonestatus");
    assert!(zonestatus.contains("serial: 1"), "{zonestatus}");

    // Observe lists exactly what the backend made, without drift; not the operator's zone.
    let configs = lab.observe(&BIND_CONFIG);
    assert_eq!(names(&configs), ["auth/options", "key/k1"]);
    assert_no_drift(&[&k1, &auth], &configs);
    let zones = lab.observe(&BIND_ZONE);
    assert_eq!(names(&zones), ["auth/lab.example."]);
    assert_no_drift(&[&lab_zone], &zones);

    // The key signs transfers; a new secret reaches named at once.
    let axfr =
        |secret: &str| lab.dig("lab.example", "AXFR", &["-y", &format!("hmac-sha256:k1:{secret}")]);
    assert!(axfr(SECRET_A).contains("ns1.lab.example."), "{}", axfr(SECRET_A));
    lab.file("/etc/routerd/k1.b64", SECRET_B);
    lab.modify(&k1).expect("key k1 from the changed file");
    named.wait_until("the new secret", DEADLINE, || axfr(SECRET_B).contains("ns1.lab.example."));
    assert!(!axfr(SECRET_A).contains("IN\tSOA"), "the old secret is refused");

    // A clause BIND refuses changes nothing.
    let zones_conf = lab.backend.layout().zones_conf("auth");
    let before = std::fs::read_to_string(&zones_conf).expect("zones.conf");
    let bad = artifact(
        &BIND_ZONE,
        "auth/bad.example.",
        &BindZone {
            clause: zone_clause(&lab, "bad.example").replace("type primary;", "type primary"),
            seed: seed("bad.example"),
            ..Default::default()
        },
    );
    let err = lab.create(&bad).expect_err("rejected");
    assert!(matches!(err, HostError::Invalid { .. }), "{err}");
    assert!(err.to_string().contains("server auth: named-checkconf rejects the change"), "{err}");
    assert_eq!(std::fs::read_to_string(&zones_conf).expect("zones.conf"), before);
    let bad_file =
        lab.backend.layout().zone_file("auth", &Name::from_ascii("bad.example.").expect("name"));
    assert!(!bad_file.exists());
    assert!(lab.serves("lab.example"));

    // Dropping the zone: REFUSED from then on, its file kept.
    lab.delete(&lab_zone).expect("zone dropped");
    named.wait_until("lab.example REFUSED", DEADLINE, || {
        lab.dig("lab.example", "SOA", &[]).contains("status: REFUSED")
    });
    let lab_file = lab.backend.layout().zone_file("auth", &zone_name);
    assert!(lab_file.exists(), "zone files are never deleted");
    assert_eq!(lab.observe(&BIND_ZONE), Vec::new());
    assert!(lab.serves("hand.example"), "the operator's zone is untouched");
    assert!(named.try_exit().is_none(), "{}", lab.named_log("auth"));
}

#[test]
fn a_wrong_rndc_key_reads_as_rejected_and_a_server_not_running_is_not_reloaded() {
    let lab = Lab::new();
    let text = server_text(&lab, "auth", &[]);
    let auth = artifact(&BIND_CONFIG, "auth/options", &BindConfig::Server { text });
    lab.create(&auth).expect("server auth, named not running yet");
    let rndc = lab.backend.rndc("auth").expect("the control channel");
    let refused = rndc.status().expect_err("nothing listens");
    assert!(matches!(refused, RndcError::Unreachable { .. }), "{refused}");

    let mut named = lab.start_named("auth");
    named.wait_until("rndc status", DEADLINE, || rndc.status().is_ok());
    let netns = routerd_host::Netns::named(lab.ns.name()).expect("the namespace");
    let address: SocketAddr = rndc.address();
    let wrong = KeyClause::new("routerd-rndc", Default::default(), SECRET_B).expect("a key");
    let err = RndcChannel::new(netns, address, wrong).status().expect_err("wrong key");
    assert!(matches!(err, RndcError::KeyRejected { .. }), "{err}");
    assert!(err.to_string().contains("control channel closed: rndc key rejected?"), "{err}");

    // The right key still works, and a rewrite reloads the running named.
    lab.modify(&auth).expect("rewrite and reconfig");
    let status = rndc.status().expect("status");
    assert!(status.contains("reload") || status.contains("up and running"), "{status}");
    assert!(named.try_exit().is_none(), "{}", lab.named_log("auth"));
}
