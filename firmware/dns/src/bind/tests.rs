//! The backend's file handling on a temporary root, with `/bin/true` and `/bin/false` standing
//! in for BIND's check programs (the real ones and a real named: `tests/it/bind.rs`). Servers
//! point their control channel at a closed port, so no reconfig is sent.

use std::os::unix::fs::PermissionsExt;

use routerd_host::kinds::external::register;

use super::*;

const SECRET: &str = "ljxU0t8+3GA8F3N0TTbZ0Aau6Fsp0g/K4V9sMOJQ5vs=";
const OTHER: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const CLAUSE: &str = "zone \"lab.example\" { type primary; file \"lab.example.zone\"; };\n";
const SEED: &str =
    "$TTL 300\n@ SOA ns1 hostmaster 1 3600 600 1209600 300\n@ NS ns1\nns1 A 192.0.2.1\n";

fn registered() {
    register(&BIND_CONFIG).expect("bind.config registers");
    register(&BIND_ZONE).expect("bind.zone registers");
}

fn backend(root: &Path) -> BindBackend {
    registered();
    let mut b = BindBackend::new(&Target::new(None, Some(root.to_path_buf())), &Netns::current());
    b.checker = Checker { checkconf: "/bin/true".into(), checkzone: "/bin/true".into() };
    b
}

fn artifact<T: routerd_host::kinds::external::ExternalArtifactType>(
    kind: &'static routerd_host::kinds::external::ExternalArtifactKind,
    name: &str,
    attrs: &T,
) -> Artifact {
    external(kind, name.to_owned(), attrs).expect("registered kind")
}

fn key(name: &str, secret: KeySecret) -> Artifact {
    let attrs = BindConfig::Key { algorithm: Default::default(), secret };
    artifact(&BIND_CONFIG, &format!("key/{name}"), &attrs)
}

/// A port on 127.0.0.1 nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binds");
    listener.local_addr().expect("address").port()
}

fn server(name: &str, body: &str) -> Artifact {
    let text = format!("# routerd-control 127.0.0.1 {}\n{body}", closed_port());
    artifact(&BIND_CONFIG, &format!("{name}/options"), &BindConfig::Server { text })
}

fn zone(server: &str, apex: &str, clause: &str, seed: &str) -> Artifact {
    let attrs = BindZone { clause: clause.to_owned(), seed: seed.to_owned(), ..Default::default() };
    artifact(&BIND_ZONE, &format!("{server}/{apex}"), &attrs)
}

async fn observed(
    b: &BindBackend,
    kind: &'static routerd_host::kinds::external::ExternalArtifactKind,
) -> Vec<Artifact> {
    let kind = kind.artifact_kind().expect("registered");
    b.observe(kind, &[]).await.expect("observes")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).expect("exists").permissions().mode() & 0o777
}

fn assert_no_drift(desired: &Artifact, observed: &[Artifact]) {
    let seen = observed.iter().find(|a| a.key == desired.key).expect("listed");
    assert_eq!(desired.spec.drift(&seen.spec), Vec::new(), "{:?}", desired.key);
}

/// Writes key `name` with `secret` the way `Backend::create` does, from typed attributes: an
/// inline secret's value does not survive the JSON attributes of `ExternalArtifactSpec`
/// (`Secret` serialises as its digest).
async fn write_key(b: &BindBackend, name: &str, secret: KeySecret) -> Result<Artifact, HostError> {
    let a = key(name, secret.clone());
    let attrs = BindConfig::Key { algorithm: Default::default(), secret };
    b.write_key(&a.key, name, &attrs).await.map(|()| a)
}

#[tokio::test]
async fn an_inline_key_is_written_as_tsig_keygen_does_mode_0600_and_observed_without_drift() {
    let root = tempfile::tempdir().expect("tempdir");
    let b = backend(root.path());
    let k1 = write_key(&b, "k1", KeySecret::Inline(Secret::new(SECRET))).await.expect("writes");
    let path = b.layout().key_file("k1");
    assert_eq!(
        read(&path),
        format!(
            "# routerd: secret inline\nkey \"k1\" {{\n\talgorithm hmac-sha256;\n\
             \tsecret \"{SECRET}\";\n}};\n"
        )
    );
    assert_eq!(mode(&path), 0o600);
    let listed = observed(&b, &BIND_CONFIG).await;
    assert_eq!(listed.len(), 1);
    let attrs: BindConfig = match &listed[0].spec {
        ArtifactSpec::External(s) => s.attributes().expect("typed"),
        other => panic!("{other:?}"),
    };
    let inline = KeySecret::Inline(Secret::new(SECRET));
    assert_eq!(attrs, BindConfig::Key { algorithm: Default::default(), secret: inline });
    assert_no_drift(&k1, &listed);
    // Another secret is drift, and writing it replaces the file's.
    let k1b = write_key(&b, "k1", KeySecret::Inline(Secret::new(OTHER))).await.expect("writes");
    assert_ne!(k1b.spec.drift(&listed[0].spec), Vec::new());
    assert!(read(&path).contains(OTHER));
    let bad = write_key(&b, "k2", KeySecret::Inline(Secret::new("not base64!"))).await;
    assert!(matches!(bad, Err(HostError::Invalid { .. })), "{bad:?}");
    b.delete(&k1b).await.expect("removes");
    assert!(!path.exists() && !b.layout().key_file("k2").exists());
    assert_eq!(observed(&b, &BIND_CONFIG).await, Vec::new());
}

#[tokio::test]
async fn a_secret_read_back_from_a_document_is_refused() {
    let root = tempfile::tempdir().expect("tempdir");
    let b = backend(root.path());
    // A digest without its value (another process's ledger or Result document).
    let shown: Secret = serde_json::from_str("\"hmac-sha256:0011223344556677\"").expect("digest");
    let err = b.create(&key("k1", KeySecret::Inline(shown))).await.expect_err("no value");
    assert!(matches!(err, HostError::Invalid { .. }), "{err}");
    assert!(err.to_string().contains("read back from a document"), "{err}");
    assert!(!b.layout().key_file("k1").exists());
}

#[tokio::test]
async fn a_file_secret_is_observed_as_its_file_until_the_file_changes() {
    let root = tempfile::tempdir().expect("tempdir");
    let b = backend(root.path());
    let secret_file = root.path().join("etc/routerd/update.b64");
    std::fs::create_dir_all(secret_file.parent().expect("parent")).expect("mkdir");
    std::fs::write(&secret_file, format!("{SECRET}\n")).expect("writes");
    let k = key("update", KeySecret::File("/etc/routerd/update.b64".into()));
    b.create(&k).await.expect("writes");
    let text = read(&b.layout().key_file("update"));
    assert!(text.starts_with("# routerd: secret from /etc/routerd/update.b64\n"), "{text}");
    assert!(text.contains(SECRET));
    assert_no_drift(&k, &observed(&b, &BIND_CONFIG).await);

    // The operator changes the file: the key file no longer holds it, shown as inline.
    std::fs::write(&secret_file, OTHER).expect("writes");
    let listed = observed(&b, &BIND_CONFIG).await;
    let attrs: BindConfig = match &listed[0].spec {
        ArtifactSpec::External(s) => s.attributes().expect("typed"),
        other => panic!("{other:?}"),
    };
    let expected = BindConfig::Key {
        algorithm: Default::default(),
        secret: KeySecret::Inline(Secret::new(SECRET)),
    };
    assert_eq!(attrs, expected);
    assert_ne!(k.spec.drift(&listed[0].spec), Vec::new());
    b.modify(&listed[0], &k).await.expect("reads the file again");
    assert!(read(&b.layout().key_file("update")).contains(OTHER));

    let relative = b.create(&key("rel", KeySecret::File("update.b64".into()))).await;
    assert!(matches!(relative, Err(HostError::Invalid { .. })), "{relative:?}");
    let missing = b.create(&key("gone", KeySecret::File("/nowhere.b64".into()))).await;
    assert!(matches!(missing, Err(HostError::File { .. })), "{missing:?}");
}

#[tokio::test]
async fn a_generated_secret_is_made_once_and_kept() {
    let root = tempfile::tempdir().expect("tempdir");
    let b = backend(root.path());
    let k = key("gen", KeySecret::Generated);
    b.create(&k).await.expect("generates");
    let path = b.layout().key_file("gen");
    let first = read(&path);
    assert!(first.starts_with("# routerd: secret generated\n"), "{first}");
    b.modify(&k, &k).await.expect("rewrites");
    assert_eq!(read(&path), first, "the secret is kept");
    let listed = observed(&b, &BIND_CONFIG).await;
    assert_no_drift(&k, &listed);
    // An operator's hand-written key file without the routerd line keeps its secret too.
    let clause = KeyClause::new("gen", Default::default(), SECRET).expect("valid");
    std::fs::write(&path, clause.render()).expect("writes");
    b.modify(&k, &k).await.expect("rewrites");
    assert!(read(&path).contains(SECRET));
}

#[tokio::test]
async fn key_files_that_do_not_parse_or_are_not_routerd_names_are_not_listed() {
    let root = tempfile::tempdir().expect("tempdir");
    let b = backend(root.path());
    let dir = b.layout().key_dir().to_path_buf();
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("broken.key"), "key \"broken\" { algorithm").expect("writes");
    let other = KeyClause::new("other", Default::default(), SECRET).expect("valid");
    std::fs::write(dir.join("renamed.key"), other.render()).expect("writes");
    std::fs::write(dir.join(".k.key.routerd-tmp"), other.render()).expect("writes");
    std::fs::write(dir.join("README"), "hand notes").expect("writes");
    assert_eq!(observed(&b, &BIND_CONFIG).await, Vec::new());
}

#[tokio::test]
async fn a_server_gets_its_directories_and_rndc_key_and_a_rejected_named_conf_changes_nothing() {
    let root = tempfile::tempdir().expect("tempdir");
    let mut b = backend(root.path());
    let auth = server("auth", "options { };\n");
    b.create(&auth).await.expect("writes; named not running is fine");
    let layout = b.layout().clone();
    assert!(layout.data_dir("auth").is_dir());
    assert_eq!(zones::parse(&read(&layout.zones_conf("auth"))), BTreeMap::new());
    let rndc_key = KeyClause::parse(&read(&layout.rndc_key("auth"))).expect("an rndc key");
    assert_eq!(rndc_key.name(), RNDC_KEY_NAME);
    assert_eq!(mode(&layout.rndc_key("auth")), 0o600);
    let listed = observed(&b, &BIND_CONFIG).await;
    assert_eq!(listed.iter().map(|a| a.key.name.as_str()).collect::<Vec<_>>(), ["auth/options"]);
    assert_no_drift(&auth, &listed);
    let channel = b.rndc("auth").expect("a channel");
    assert_eq!(
        Some(channel.address()),
        control_address(&read(&layout.named_conf("auth"))).map(Into::into)
    );

    // The rndc key is made once; a rewrite keeps it.
    b.modify(&auth, &server("auth", "options { };\n")).await.expect("rewrites");
    assert_eq!(KeyClause::parse(&read(&layout.rndc_key("auth"))), Some(rndc_key));

    b.checker.checkconf = "/bin/false".into();
    let before = read(&layout.named_conf("auth"));
    let err = b.modify(&auth, &server("auth", "options { bogus; };\n")).await.expect_err("refused");
    assert!(matches!(err, HostError::Invalid { .. }), "{err}");
    assert!(err.to_string().contains("server auth: named-checkconf rejects"), "{err}");
    assert_eq!(read(&layout.named_conf("auth")), before);
    assert!(!layout.server_dir("auth").join(".named.conf.candidate").exists());

    let no_line = artifact(
        &BIND_CONFIG,
        "auth/options",
        &BindConfig::Server { text: "options { };\n".into() },
    );
    let err = b.modify(&auth, &no_line).await.expect_err("no control line");
    assert!(err.to_string().contains("# routerd-control"), "{err}");

    b.delete(&auth).await.expect("removes named.conf");
    assert!(!layout.named_conf("auth").exists());
    assert!(layout.zones_conf("auth").exists() && layout.rndc_key("auth").exists());
    assert!(layout.data_dir("auth").is_dir());
}

#[tokio::test]
async fn zones_are_sections_and_their_files_are_seeded_once_and_never_deleted() {
    let root = tempfile::tempdir().expect("tempdir");
    let b = backend(root.path());
    let lab = zone("auth", "lab.example.", CLAUSE, SEED);
    let missing = b.create(&lab).await.expect_err("no server yet");
    assert!(matches!(missing, HostError::Missing { .. }), "{missing}");
    b.create(&server("auth", "options { };\n")).await.expect("server");
    b.create(&lab).await.expect("zone");
    let layout = b.layout().clone();
    let name = Name::from_ascii("lab.example.").expect("name");
    let file = layout.zone_file("auth", &name);
    assert_eq!(read(&file), SEED);
    let text = read(&layout.zones_conf("auth"));
    assert!(
        text.contains(&format!("# routerd zone lab.example.\n{CLAUSE}# routerd end\n")),
        "{text}"
    );
    let listed = observed(&b, &BIND_ZONE).await;
    assert_eq!(
        listed.iter().map(|a| a.key.name.as_str()).collect::<Vec<_>>(),
        ["auth/lab.example."]
    );
    assert_no_drift(&lab, &listed);

    // Another seed never overwrites the file; a changed clause is a modify.
    let clause2 = CLAUSE.replace("type primary;", "type primary; notify yes;");
    let lab2 = zone("auth", "lab.example.", &clause2, "$TTL 1\n");
    b.modify(&lab, &lab2).await.expect("modifies");
    assert_eq!(read(&file), SEED);
    assert_no_drift(&lab2, &observed(&b, &BIND_ZONE).await);

    std::fs::write(file.with_extension("zone.jnl"), "journal").expect("writes");
    b.delete(&lab2).await.expect("removes the section");
    assert_eq!(observed(&b, &BIND_ZONE).await, Vec::new());
    assert_eq!(read(&file), SEED);
    assert!(file.with_extension("zone.jnl").exists());
    // Re-added, it resumes from the file.
    b.create(&zone("auth", "lab.example.", CLAUSE, "")).await.expect("re-adds without a seed");
}

#[tokio::test]
async fn a_rejected_zone_leaves_zones_conf_and_writes_no_zone_file() {
    let root = tempfile::tempdir().expect("tempdir");
    let mut b = backend(root.path());
    b.create(&server("auth", "options { };\n")).await.expect("server");
    b.create(&zone("auth", "a.example.", &CLAUSE.replace("lab", "a"), SEED)).await.expect("zone");
    let layout = b.layout().clone();
    let before = read(&layout.zones_conf("auth"));
    let name = Name::from_ascii("lab.example.").expect("name");

    b.checker.checkconf = "/bin/false".into();
    let err = b.create(&zone("auth", "lab.example.", CLAUSE, SEED)).await.expect_err("refused");
    assert!(err.to_string().contains("server auth: named-checkconf rejects"), "{err}");
    assert_eq!(read(&layout.zones_conf("auth")), before);
    assert!(!layout.zone_file("auth", &name).exists());

    b.checker = Checker { checkconf: "/bin/true".into(), checkzone: "/bin/false".into() };
    let err =
        b.create(&zone("auth", "lab.example.", CLAUSE, "garbage")).await.expect_err("bad seed");
    assert!(err.to_string().contains("named-checkzone rejects"), "{err}");
    assert_eq!(read(&layout.zones_conf("auth")), before);
    let left: Vec<_> = std::fs::read_dir(layout.data_dir("auth"))
        .expect("dir")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("a.example.zone")]);

    let no_seed = b.create(&zone("auth", "lab.example.", CLAUSE, "")).await.expect_err("no seed");
    assert!(no_seed.to_string().contains("has no seed"), "{no_seed}");
    let unterminated = b.create(&zone("auth", "lab.example.", CLAUSE.trim_end(), SEED)).await;
    assert!(matches!(unterminated, Err(HostError::Invalid { .. })), "{unterminated:?}");
}

#[tokio::test]
async fn a_key_a_server_still_includes_is_not_deleted() {
    let root = tempfile::tempdir().expect("tempdir");
    let b = backend(root.path());
    let k1 = key("k1", KeySecret::Generated);
    b.create(&k1).await.expect("key");
    let include = format!("include \"{}\";\n", b.layout().key_file("k1").display());
    let auth = server("auth", &include);
    b.create(&auth).await.expect("server");
    let err = b.delete(&k1).await.expect_err("still included");
    assert!(err.to_string().contains("server auth's named.conf still includes"), "{err}");
    assert!(b.layout().key_file("k1").exists());
    b.modify(&auth, &server("auth", "options { };\n")).await.expect("drops the include");
    b.delete(&k1).await.expect("removes");
}

#[test]
fn artifact_names_are_checked_before_any_path_is_built() {
    assert_eq!(config_object("key/k1"), Ok(Object::Key("k1".into())));
    assert_eq!(config_object("auth/options"), Ok(Object::Server("auth".into())));
    for bad in ["key/../x", "key/", "../options", "a/b/options", "auth/zones", "key/options/x"] {
        assert!(config_object(bad).is_err(), "{bad}");
    }
    assert!(matches!(zone_object("auth/lab.example."), Ok(Object::Zone { .. })));
    for bad in
        ["auth/Lab.example.", "auth/lab.example", "auth/.", "lab.example.", "../x/lab.example."]
    {
        assert!(zone_object(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_backend_lists_both_kinds_once_registered() {
    registered();
    let kinds = bind_kinds();
    assert_eq!(kinds.len(), 2);
    assert!(kinds.contains(&BIND_CONFIG.artifact_kind().expect("registered")));
    assert!(kinds.contains(&BIND_ZONE.artifact_kind().expect("registered")));
    let root = tempfile::tempdir().expect("tempdir");
    assert_eq!(backend(root.path()).apply_with(), BIND_CONFIG.family());
}
