//! HealthCheck verdicts as external items: the default-route candidate preferred while its
//! check is healthy is withdrawn when the check fails and comes back when it recovers; its
//! standby route stays throughout. The verdicts are written into the session's store as the
//! supervisor's scheduler does (the scheduler itself, with real probes, is tested in the
//! supervisor's `health` test).

use std::collections::BTreeSet;
use std::time::SystemTime;

use routerd_engine::result::{ConditionStatus, ConditionType, OperationResult, Reason};
use routerd_engine::state::{Evaluation, now_ms};
use routerd_engine::{ConfigInput, Phase, ResultDocument, Session};
use routerd_host::artifact::HealthStatusSpec;

use crate::support::{Lab, condition, ops, resource};

/// Two uplinks with health-checked failover, as shipped.
const CONFIG: &str = include_str!("../../../../examples/two-uplinks.yaml");

fn verdict(session: &Session, name: &str, healthy: bool) {
    session.health().set(HealthStatusSpec {
        name: name.into(),
        healthy,
        target: None,
        detail: Some(if healthy { "reply in 0.1 ms" } else { "no reply within 2s" }.into()),
    });
}

async fn reconcile(session: &mut Session) -> ResultDocument {
    let input = ConfigInput::parse(CONFIG, "router.yaml").expect("config parses");
    session.reconcile(&input, SystemTime::now()).await.expect("reconcile runs")
}

/// The default routes of `main` as `metric via gateway`, best first.
fn defaults(lab: &Lab) -> Vec<String> {
    let json = lab.ip(&["-j", "-4", "route", "show", "default"]);
    let routes: Vec<serde_json::Value> = serde_json::from_str(&json).expect("route JSON");
    let mut out: Vec<(u64, String)> = routes
        .iter()
        .map(|r| {
            let metric = r["metric"].as_u64().unwrap_or(0);
            (metric, format!("{metric} via {}", r["gateway"].as_str().unwrap_or("-")))
        })
        .collect();
    out.sort();
    out.into_iter().map(|(_, s)| s).collect()
}

/// A second uplink, `wan1` in the router (down), cabled to `up1` in the upstream namespace
/// (up).
fn second_uplink(lab: &Lab) {
    lab.router.veth_to("wan1", &lab.upstream, "up1");
    lab.upstream.ip(&["link", "set", "up1", "up"]);
}

/// The mark the policy's nft table sets (`0x00000101`), if any.
fn mark_set(lab: &Lab) -> Option<String> {
    let table = lab.nft(&["list", "table", "ip", "routerd_default_route_uplinks"]);
    table
        .lines()
        .find_map(|l| l.split("meta mark set ").nth(1)?.split_whitespace().next())
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_check_withdraws_its_preferred_route_and_recovery_restores_it() {
    let lab = Lab::new();
    second_uplink(&lab);
    let mut session = lab.session(false).await;

    // No verdict yet (nothing has probed): only the standby routes, in priority order, and
    // the checks say why.
    let doc = reconcile(&mut session).await;
    assert_eq!(ops(&doc, OperationResult::Failed), Vec::<String>::new(), "{:#?}", doc.operations);
    assert_eq!(defaults(&lab), ["1000010 via 198.51.100.1", "1000020 via 203.0.113.1"]);
    let check = resource(&doc, "HealthCheck/wan-gw");
    assert_eq!(check.phase, Phase::Healthy, "{:#?}", check.conditions);
    assert_eq!(
        condition(check, ConditionType::Healthy),
        Some((ConditionStatus::Unknown, Reason::NoVerdict))
    );
    let policy = resource(&doc, "IPv4DefaultRoutePolicy/uplinks");
    assert_eq!(policy.phase, Phase::Healthy, "standby is not a block: {:#?}", policy.conditions);
    assert_eq!(
        condition(policy, ConditionType::Standby),
        Some((ConditionStatus::True, Reason::HealthCheckFailing))
    );

    // Both healthy: both preferred routes, the primary first.
    verdict(&session, "wan-gw", true);
    verdict(&session, "backup-gw", true);
    let doc = reconcile(&mut session).await;
    assert_eq!(
        defaults(&lab),
        [
            "10 via 198.51.100.1",
            "20 via 203.0.113.1",
            "1000010 via 198.51.100.1",
            "1000020 via 203.0.113.1"
        ]
    );
    let policy = resource(&doc, "IPv4DefaultRoutePolicy/uplinks");
    assert_eq!(policy.phase, Phase::Healthy, "{:#?}", policy.conditions);
    assert_eq!(condition(policy, ConditionType::Standby), None, "{:#?}", policy.conditions);
    let check = resource(&doc, "HealthCheck/wan-gw");
    assert_eq!(
        condition(check, ConditionType::Healthy),
        Some((ConditionStatus::True, Reason::ProbesSucceed))
    );
    assert!(lab.ip(&["route", "get", "192.0.2.9"]).contains("via 198.51.100.1"));
    let again = reconcile(&mut session).await;
    assert_eq!(
        ops(&again, OperationResult::Done),
        Vec::<String>::new(),
        "a second reconcile is a no-op"
    );

    // The primary fails: its preferred route goes, traffic takes the backup.
    verdict(&session, "wan-gw", false);
    let doc = reconcile(&mut session).await;
    assert_eq!(ops(&doc, OperationResult::Done), ["delete linux.ipv4.route/254:0.0.0.0/0:10"]);
    assert!(lab.ip(&["route", "get", "192.0.2.9"]).contains("via 203.0.113.1"));
    let check = resource(&doc, "HealthCheck/wan-gw");
    assert_eq!(
        condition(check, ConditionType::Healthy),
        Some((ConditionStatus::False, Reason::ProbesFail))
    );
    let policy = resource(&doc, "IPv4DefaultRoutePolicy/uplinks");
    assert_eq!(policy.phase, Phase::Healthy, "{:#?}", policy.conditions);
    assert_eq!(
        condition(policy, ConditionType::Standby),
        Some((ConditionStatus::True, Reason::HealthCheckFailing))
    );

    // Every candidate failing: the standby routes keep the static order.
    verdict(&session, "backup-gw", false);
    reconcile(&mut session).await;
    assert_eq!(defaults(&lab), ["1000010 via 198.51.100.1", "1000020 via 203.0.113.1"]);

    // Recovery: the primary is preferred again.
    verdict(&session, "wan-gw", true);
    let doc = reconcile(&mut session).await;
    assert_eq!(ops(&doc, OperationResult::Done), ["create linux.ipv4.route/254:0.0.0.0/0:10"]);
    assert!(lab.ip(&["route", "get", "192.0.2.9"]).contains("via 198.51.100.1"));
}

/// `CONFIG` with each candidate in its own table with a mark, and the LAN's traffic marked.
fn table_config() -> String {
    let config = CONFIG
        .replace(
            "            healthCheck: wan-gw\n",
            "            healthCheck: wan-gw\n            table: 101\n            mark: 257\n",
        )
        .replace(
            "            healthCheck: backup-gw\n",
            "            healthCheck: backup-gw\n            table: 102\n            mark: 258\n",
        )
        .replace(
            "      spec:\n        candidates:\n",
            "      spec:\n        sourceCIDRs: [192.168.50.0/24]\n        candidates:\n",
        );
    assert_eq!(config.matches("mark: 25").count(), 2, "the example's candidates moved: {config}");
    assert!(config.contains("sourceCIDRs"), "{config}");
    config
}

#[tokio::test(flavor = "multi_thread")]
async fn marked_traffic_fails_over_to_the_next_candidates_table_and_back() {
    let lab = Lab::new();
    second_uplink(&lab);
    let mut session = lab.session(false).await;
    let input = ConfigInput::parse(&table_config(), "router.yaml").expect("config parses");
    let via = |lab: &Lab, mark: &str| lab.ip(&["route", "get", "192.0.2.9", "mark", mark]);

    // Both healthy: the LAN's traffic carries the primary's mark, into table 101.
    verdict(&session, "wan-gw", true);
    verdict(&session, "backup-gw", true);
    let doc = session.reconcile(&input, SystemTime::now()).await.expect("reconcile runs");
    assert_eq!(ops(&doc, OperationResult::Failed), Vec::<String>::new(), "{:#?}", doc.operations);
    assert_eq!(mark_set(&lab).as_deref(), Some("0x00000101"));
    assert!(via(&lab, "0x101").contains("via 198.51.100.1"), "{}", via(&lab, "0x101"));

    // The primary fails: its table's route and rule go, and the mark moves to the backup's.
    verdict(&session, "wan-gw", false);
    let doc = session.reconcile(&input, SystemTime::now()).await.expect("reconcile runs");
    let done = ops(&doc, OperationResult::Done);
    assert!(
        done.contains(&"modify nft.table/ip/routerd_default_route_uplinks".to_string()),
        "{done:#?}"
    );
    assert_eq!(mark_set(&lab).as_deref(), Some("0x00000102"));
    assert!(via(&lab, "0x102").contains("via 203.0.113.1"), "{}", via(&lab, "0x102"));
    assert!(!lab.ip(&["rule", "show"]).contains("0x101"), "{}", lab.ip(&["rule", "show"]));

    // Recovery: back to the primary.
    verdict(&session, "wan-gw", true);
    session.reconcile(&input, SystemTime::now()).await.expect("reconcile runs");
    assert_eq!(mark_set(&lab).as_deref(), Some("0x00000101"));
    assert!(lab.ip(&["rule", "show"]).contains("0x101"), "{}", lab.ip(&["rule", "show"]));
}

/// Every candidate of `table_config` healthy, the primary also gated on `uplink.mode` being
/// `fiber`: while it is not, its table's route and rule go and the mark moves to the backup's,
/// as for a failing check; when it is again, everything comes back.
#[tokio::test(flavor = "multi_thread")]
async fn a_candidate_gated_off_by_its_when_hands_the_marked_traffic_to_the_next_one() {
    let lab = Lab::new();
    second_uplink(&lab);
    let mut session = lab.session(false).await;
    let config = table_config().replace(
        "            healthCheck: wan-gw\n",
        "            healthCheck: wan-gw\n            when: {state: {uplink.mode: {equals: fiber}}}\n",
    ) + "    - apiVersion: net.routerd.net/v1alpha1
      kind: StatePolicy
      metadata: {name: mode}
      spec:
        variable: uplink.mode
        interface: wan
        values:
          - {value: fiber, when: {ipv6Address: {global: true}}}
";
    let input = ConfigInput::parse(&config, "router.yaml").expect("config parses");
    session.state().declare(&BTreeSet::from(["uplink.mode".to_string()]));
    let store = session.state();
    let mode = |value: Option<&str>| {
        let outcome = Evaluation { value: value.map(Into::into), detail: "set by the test".into() };
        store.set("uplink.mode", outcome, now_ms());
    };
    verdict(&session, "wan-gw", true);
    verdict(&session, "backup-gw", true);

    // The condition holds: the primary's table and mark.
    mode(Some("fiber"));
    let doc = session.reconcile(&input, SystemTime::now()).await.expect("reconcile runs");
    assert_eq!(ops(&doc, OperationResult::Failed), Vec::<String>::new(), "{:#?}", doc.operations);
    assert_eq!(mark_set(&lab).as_deref(), Some("0x00000101"));
    assert!(lab.ip(&["rule", "show"]).contains("0x101"), "{}", lab.ip(&["rule", "show"]));

    // It stops holding: the primary's rule goes and the marked traffic takes the backup.
    mode(None);
    let doc = session.reconcile(&input, SystemTime::now()).await.expect("reconcile runs");
    assert_eq!(ops(&doc, OperationResult::Failed), Vec::<String>::new(), "{:#?}", doc.operations);
    assert_eq!(mark_set(&lab).as_deref(), Some("0x00000102"));
    let rules = lab.ip(&["rule", "show"]);
    assert!(!rules.contains("0x101") && rules.contains("0x102"), "{rules}");
    let via = lab.ip(&["route", "get", "192.0.2.9", "mark", "0x102"]);
    assert!(via.contains("via 203.0.113.1"), "{via}");

    // It holds again: back to the primary.
    mode(Some("fiber"));
    session.reconcile(&input, SystemTime::now()).await.expect("reconcile runs");
    assert_eq!(mark_set(&lab).as_deref(), Some("0x00000101"));
    assert!(lab.ip(&["rule", "show"]).contains("0x101"), "{}", lab.ip(&["rule", "show"]));
}

/// `table_config` with a better candidate that is a route set over both uplinks, checked by
/// the primary's check: while it is healthy the LAN's traffic is hashed over the set's marks,
/// whose rules the set's resource installs; when it fails (and with it the primary), the mark
/// is the backup's.
#[tokio::test(flavor = "multi_thread")]
async fn a_route_set_candidate_hashes_the_marked_traffic_over_its_targets() {
    let lab = Lab::new();
    second_uplink(&lab);
    let mut session = lab.session(false).await;
    let config = table_config().replace(
        "        candidates:\n",
        "        candidates:\n          - {name: balanced, routeSet: both, priority: 5, healthCheck: wan-gw}\n",
    ) + "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4PolicyRouteSet
      metadata: {name: both}
      spec:
        targets:
          - {outboundInterface: wan, table: 111, priority: 10111, mark: 0x111}
          - {outboundInterface: backup, table: 112, priority: 10112, mark: 0x112}
";
    let input = ConfigInput::parse(&config, "router.yaml").expect("config parses");
    verdict(&session, "wan-gw", true);
    verdict(&session, "backup-gw", true);
    let doc = session.reconcile(&input, SystemTime::now()).await.expect("reconcile runs");
    assert_eq!(ops(&doc, OperationResult::Failed), Vec::<String>::new(), "{:#?}", doc.operations);
    let table = lab.nft(&["list", "table", "ip", "routerd_default_route_uplinks"]);
    assert!(table.contains("meta mark set jhash ip saddr mod 2"), "{table}");
    assert!(table.contains("meta mark set 0x00000111") && table.contains("0x00000112"), "{table}");
    let rules = lab.ip(&["rule", "show"]);
    assert!(rules.contains("fwmark 0x111 lookup 111"), "{rules}");

    // The check fails: the set and the primary are out; the backup's mark.
    verdict(&session, "wan-gw", false);
    session.reconcile(&input, SystemTime::now()).await.expect("reconcile runs");
    assert_eq!(mark_set(&lab).as_deref(), Some("0x00000102"));
}
