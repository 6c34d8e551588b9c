//! The example controller crate, registered as a binary registers one, then parsed, planned,
//! applied, repaired and removed by the engine: a crate adds kinds without a line in the
//! engine, the model or host (issue 35 §3, ADR 0010).

use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use routerd_engine::registry::{BackendContext, Registry};
use routerd_engine::{ConfigInput, ResultDocument, Session, SystemBus};
use routerd_host::{Netns, Target};
use routerd_kind_example::{MOTD_DIR, register};
use routerd_ledger::{EntryState, Ledger};

const HEADER: &str = "apiVersion: routerd.net/v1alpha1\nkind: Router\nmetadata:\n  name: example\nspec:\n  resources:\n";

fn registry() -> Registry {
    let mut registry = Registry::new();
    register(&mut registry).expect("the example's kinds are free");
    registry
}

fn motd(name: &str, text: &str) -> String {
    format!(
        "    - apiVersion: example.routerd.net/v1alpha1\n      kind: Motd\n      metadata:\n        name: {name}\n      spec:\n        text: {text:?}\n"
    )
}

fn config(resources: &str) -> ConfigInput {
    let text = match resources {
        "" => format!("{}: []\n", HEADER.trim_end().trim_end_matches(':')),
        _ => format!("{HEADER}{resources}"),
    };
    ConfigInput::parse(&text, "router.yaml").expect("valid config")
}

/// A session over the registry's backends only, on a target rooted in `root`.
fn session(registry: &Registry, root: &Path) -> Session {
    let target = Target::new(None, Some(root.to_path_buf()));
    let bus = Arc::new(SystemBus::new(None));
    let netns = Netns::current();
    let cx = BackendContext { target: &target, netns: &netns, bus: &bus };
    let backends = registry.backends(&cx).expect("backends");
    let ledger = Ledger::open(&root.join("ledger.redb")).expect("ledger");
    Session::with_backends(backends, ledger, target)
}

/// `operation kind/name result` for each operation of `doc`.
fn operations(doc: &ResultDocument) -> Vec<String> {
    doc.operations
        .iter()
        .map(|op| format!("{} {}/{} {}", op.operation, op.kind, op.name, op.result))
        .collect()
}

/// The `Shown` condition of the first resource as `status reason: message`.
fn shown(doc: &ResultDocument) -> String {
    let c = doc.resources[0].conditions.iter().find(|c| c.type_.as_str() == "Shown");
    let c = c.expect("the kind's condition");
    format!("{} {}: {}", c.status.as_str(), c.reason, c.message)
}

fn banner(root: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(root.join(MOTD_DIR.trim_start_matches('/')).join(name)).ok()
}

#[test]
fn an_unregistered_kind_is_unknown_and_a_registered_one_parses() {
    let text = format!("{HEADER}{}", motd("welcome", "Hello"));
    let err = ConfigInput::parse(&text, "router.yaml").expect_err("Motd is not registered yet");
    assert!(err.to_string().contains("unknown kind \"Motd\""), "{err}");

    let _registry = registry();
    let input = ConfigInput::parse(&text, "router.yaml").expect("Motd is registered");
    let resource = &input.config.spec.resources[0];
    assert_eq!(resource.id(), "example.routerd.net/v1alpha1/Motd/welcome");
    let spec = resource.external_spec::<routerd_kind_example::MotdSpec>().expect("typed");
    assert_eq!(spec.text, "Hello");
}

#[test]
fn a_registered_kinds_errors_name_file_line_and_column() {
    let _registry = registry();
    let long = "x".repeat(routerd_kind_example::MAX_TEXT + 1);
    let resources = format!(
        "{}{}    - apiVersion: example.routerd.net/v1alpha1\n      kind: Motd\n      metadata:\n        name: typo\n      spec:\n        txet: hi\n    - apiVersion: example.routerd.net/v1alpha1\n      kind: Motd\n      metadata:\n        name: lan\n      spec:\n        text: hi\n        interface: lan\n    - apiVersion: net.routerd.net/v1alpha1\n      kind: Motd\n      metadata:\n        name: wrong-group\n      spec:\n        text: hi\n",
        motd("ok", "fine"),
        motd("long", &long),
    );
    let err = ConfigInput::parse(&format!("{HEADER}{resources}"), "router.yaml")
        .expect_err("four broken resources");
    let errors: Vec<String> = err.0.iter().map(|e| e.to_string()).collect();
    let at = |needle: &str| {
        errors
            .iter()
            .find(|e| e.contains(needle))
            .unwrap_or_else(|| panic!("{needle}: {errors:#?}"))
    };
    // Unknown field, from the typed spec through serde, at its key.
    assert!(at("unknown field `txet`").starts_with("router.yaml:24:9"), "{errors:#?}");
    // The kind's own check, at the field.
    assert!(at("at most 4096").starts_with("router.yaml:18:15"), "{errors:#?}");
    // A reference to a built-in kind that is not declared.
    assert!(at("\"lan\" is not declared by any Interface").starts_with("router.yaml:31:20"));
    // The kind's apiVersion.
    assert!(at("does not match kind Motd").starts_with("router.yaml:32:19"), "{errors:#?}");
    assert_eq!(errors.len(), 4, "{errors:#?}");
}

#[tokio::test]
async fn a_registered_kind_is_planned_applied_repaired_and_deleted_only_when_owned() {
    let registry = registry();
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    // A banner someone wrote by hand: never owned, so never changed or deleted.
    let motd_dir = root.join(MOTD_DIR.trim_start_matches('/'));
    std::fs::create_dir_all(&motd_dir).expect("dir");
    std::fs::write(motd_dir.join("hand"), "made by hand\n").expect("hand-made banner");

    let mut session = session(&registry, root);
    let now = SystemTime::now();
    let input = config(&motd("welcome", "Hello"));
    let plan = session.plan(&input, now, false).await.expect("plan");
    assert_eq!(operations(&plan), ["create example.motd/welcome planned"]);
    let artifact = &plan.resources[0].artifacts[0];
    assert_eq!(artifact.apply_with.as_str(), "example-motd");
    assert_eq!(banner(root, "welcome"), None, "a plan changes nothing");

    // The kind's own condition and status field, after the engine's.
    assert_eq!(shown(&plan), "False BannerPending: /etc/routerd/motd.d/welcome");
    assert_eq!(plan.resources[0].status, Some(serde_json::json!({"lines": 1})));

    // The Result document reads back: the kind and family strings are registered, the
    // condition's words are read as the controller's.
    let json = serde_json::to_string(&plan).expect("serialises");
    let back: ResultDocument = serde_json::from_str(&json).expect("reads back");
    assert_eq!(operations(&back), operations(&plan));
    assert_eq!(back.resources, plan.resources);

    let applied = session.reconcile(&input, now).await.expect("reconcile");
    assert_eq!(operations(&applied), ["create example.motd/welcome done"]);
    assert_eq!(banner(root, "welcome").as_deref(), Some("Hello\n"));
    assert_eq!(shown(&applied), "True BannerInPlace: /etc/routerd/motd.d/welcome");
    let entry = session.ledger().get("example.motd", "welcome").expect("ledger").expect("row");
    assert_eq!(entry.state, EntryState::Owned);
    assert_eq!(entry.owner, "example.routerd.net/v1alpha1/Motd/welcome");

    // Nothing to do once the host matches.
    let again = session.plan(&input, now, false).await.expect("plan");
    assert!(operations(&again).is_empty(), "{:?}", operations(&again));

    // A hand edit is drift: planned as a modify naming the attribute, and repaired.
    std::fs::write(motd_dir.join("welcome"), "edited\n").expect("hand edit");
    let drifted = session.plan(&input, now, false).await.expect("plan");
    assert_eq!(operations(&drifted), ["modify example.motd/welcome planned"]);
    let repaired = session.reconcile(&input, now).await.expect("reconcile");
    assert_eq!(operations(&repaired), ["modify example.motd/welcome done"]);
    assert_eq!(banner(root, "welcome").as_deref(), Some("Hello\n"));

    // Removed from the config: the owned banner is deleted, the hand-made one stays.
    let empty = config("");
    let removed = session.reconcile(&empty, now).await.expect("reconcile");
    assert_eq!(operations(&removed), ["delete example.motd/welcome done"]);
    assert_eq!(banner(root, "welcome"), None);
    assert_eq!(banner(root, "hand").as_deref(), Some("made by hand\n"));
}

#[test]
fn the_registrys_doctor_checks_run_on_the_config() {
    let registry = registry();
    let input = config(&format!("{}{}", motd("a", "1"), motd("b", "2")));
    let mut checks = Vec::new();
    registry.run_doctor(&input.config, None, &mut checks);
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0].code, "E001");
    assert_eq!(checks[0].detail, "2 banner(s) declared");
}

#[test]
fn a_kind_name_taken_by_a_built_in_kind_is_refused() {
    use routerd_model::external::{ExternalKind, ExternalKindSpec, RegisterError};
    #[derive(serde::Deserialize)]
    struct Fake {}
    impl ExternalKindSpec for Fake {}
    static SYSCTL: ExternalKind =
        ExternalKind::of::<Fake>("example.routerd.net/v1alpha1", "Sysctl");
    assert_eq!(routerd_model::external::register(&SYSCTL), Err(RegisterError::BuiltIn("Sysctl")));
}
