//! StatePolicy variables as external items: a resource gated by `when.state` waits while the
//! variable is not evaluated, is created while its condition holds (a `for` duration
//! included) and withdrawn when it stops holding. The variable's values are written into the
//! session's store as the supervisor's scheduler does (the scheduler itself, evaluating real
//! conditions, is tested in the supervisor's `state` test).

use std::collections::BTreeSet;
use std::time::SystemTime;

use routerd_engine::result::{ConditionStatus, ConditionType, OperationResult, Reason};
use routerd_engine::state::{Evaluation, now_ms};
use routerd_engine::{ConfigInput, Phase, ResultDocument, Session};
use routerd_test_kit::router::{NET, RouterDoc};

use crate::support::{Lab, condition, ops, resource};

/// Uplink `wan` and its variable `uplink` (`native` with a global IPv6 address, else
/// `legacy`), with a NAT table gated on each value (`legacy` only after 30 s).
fn config() -> String {
    let uplink = "
        variable: uplink
        interface: wan
        values:
          - value: native
            when: {ipv6Address: {global: true}}
          - value: legacy
            when: {}
    ";
    let nat = |source: &str, gate: &str| {
        format!(
            "
            outboundInterface: wan
            sourceCIDRs: [{source}]
            translation: {{type: interfaceAddress}}
            when: {{state: {{uplink: {gate}}}}}
            "
        )
    };
    RouterDoc::new("state-lab")
        .resource(NET, "Interface", "wan", "{ifname: wan0, managed: true, adminUp: true}")
        .resource(NET, "StatePolicy", "uplink", uplink)
        .resource(NET, "IPv4SourceNAT", "native-nat", &nat("192.168.10.0/24", "{equals: native}"))
        .resource(
            NET,
            "IPv4SourceNAT",
            "legacy-nat",
            &nat("192.168.20.0/24", "{equals: legacy, for: 30s}"),
        )
        .to_string()
}

async fn reconcile(session: &mut Session) -> ResultDocument {
    let input = ConfigInput::parse(&config(), "router.yaml").expect("config parses");
    session.reconcile(&input, SystemTime::now()).await.expect("reconcile runs")
}

fn set(session: &Session, value: &str, at_ms: u64) {
    let outcome = Evaluation { value: Some(value.into()), detail: "set by the test".into() };
    session.state().set("uplink", outcome, at_ms);
}

/// The NAT tables in the router namespace, sorted.
fn nat_tables(lab: &Lab) -> Vec<String> {
    let mut tables: Vec<String> = lab
        .nft(&["list", "tables"])
        .lines()
        .filter(|l| l.contains("routerd_snat_"))
        .map(str::to_owned)
        .collect();
    tables.sort();
    tables
}

#[tokio::test(flavor = "multi_thread")]
async fn resources_gated_on_a_state_variable_follow_its_value_and_its_age() {
    let lab = Lab::new();
    let mut session = lab.session(false).await;

    // Nothing has evaluated the variable: both NATs wait, and say what for.
    let doc = reconcile(&mut session).await;
    assert_eq!(ops(&doc, OperationResult::Failed), Vec::<String>::new(), "{:#?}", doc.operations);
    assert_eq!(nat_tables(&lab), Vec::<String>::new());
    let policy = resource(&doc, "StatePolicy/uplink");
    assert_eq!(policy.phase, Phase::Healthy, "{:#?}", policy.conditions);
    assert_eq!(
        condition(policy, ConditionType::Value),
        Some((ConditionStatus::Unknown, Reason::NotEvaluated))
    );
    let native = resource(&doc, "IPv4SourceNAT/native-nat");
    assert_eq!(native.phase, Phase::Blocked, "{:#?}", native.conditions);
    assert_eq!(
        condition(native, ConditionType::Blocked),
        Some((ConditionStatus::True, Reason::DependencyPending))
    );

    // Declared but not evaluated: `unknown` satisfies neither gate.
    session.state().declare(&BTreeSet::from(["uplink".to_string()]));
    let doc = reconcile(&mut session).await;
    assert_eq!(nat_tables(&lab), Vec::<String>::new());
    let native = resource(&doc, "IPv4SourceNAT/native-nat");
    assert_eq!(
        native.phase,
        Phase::Healthy,
        "a false gate is not a block: {:#?}",
        native.conditions
    );
    assert_eq!(
        condition(native, ConditionType::Active),
        Some((ConditionStatus::False, Reason::StateConditionUnmet))
    );

    // `native`: its NAT is created; the other waits.
    set(&session, "native", now_ms());
    let doc = reconcile(&mut session).await;
    assert_eq!(ops(&doc, OperationResult::Done), ["create nft.table/ip/routerd_snat_native_nat"]);
    assert_eq!(nat_tables(&lab), ["table ip routerd_snat_native_nat"]);
    let policy = resource(&doc, "StatePolicy/uplink");
    assert_eq!(condition(policy, ConditionType::Value), Some((ConditionStatus::True, Reason::Set)));
    let legacy = resource(&doc, "IPv4SourceNAT/legacy-nat");
    assert_eq!(
        condition(legacy, ConditionType::Active),
        Some((ConditionStatus::False, Reason::StateConditionUnmet))
    );
    let again = reconcile(&mut session).await;
    assert_eq!(
        ops(&again, OperationResult::Done),
        Vec::<String>::new(),
        "a second reconcile is a no-op"
    );

    // `legacy` for 10 s: the native NAT goes, the legacy one still waits out its 30 s.
    set(&session, "legacy", now_ms() - 10_000);
    let doc = reconcile(&mut session).await;
    assert_eq!(ops(&doc, OperationResult::Done), ["delete nft.table/ip/routerd_snat_native_nat"]);
    assert_eq!(nat_tables(&lab), Vec::<String>::new());
    let legacy = resource(&doc, "IPv4SourceNAT/legacy-nat");
    assert_eq!(
        condition(legacy, ConditionType::Active),
        Some((ConditionStatus::False, Reason::StateConditionUnmet))
    );

    // The same value again does not restart the clock; once it has held 30 s the gate opens.
    set(&session, "legacy", now_ms());
    let doc = reconcile(&mut session).await;
    assert_eq!(ops(&doc, OperationResult::Done), Vec::<String>::new(), "held 10 s of 30 s");
    let outcome = Evaluation { value: Some("native".into()), detail: String::new() };
    session.state().set("uplink", outcome, now_ms() - 60_000);
    set(&session, "legacy", now_ms() - 31_000);
    let doc = reconcile(&mut session).await;
    assert_eq!(ops(&doc, OperationResult::Done), ["create nft.table/ip/routerd_snat_legacy_nat"]);
    assert_eq!(nat_tables(&lab), ["table ip routerd_snat_legacy_nat"]);
    let legacy = resource(&doc, "IPv4SourceNAT/legacy-nat");
    assert_eq!(legacy.phase, Phase::Healthy, "{:#?}", legacy.conditions);
    assert_eq!(condition(legacy, ConditionType::Active), None);
}
