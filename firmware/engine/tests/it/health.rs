//! HealthCheck verdicts as external items: the default-route candidate preferred while its
//! check is healthy is withdrawn when the check fails and comes back when it recovers; its
//! standby route stays throughout. The verdicts are written into the session's store as the
//! supervisor's scheduler does (the scheduler itself, with real probes, is tested in the
//! supervisor's `health` test).

use std::time::SystemTime;

use routerd_engine::{ConfigInput, Phase, ResultDocument, Session};
use routerd_host::artifact::HealthStatusSpec;

use crate::support::{Lab, condition, ops, resource, run};

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

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_check_withdraws_its_preferred_route_and_recovery_restores_it() {
    let lab = Lab::new();
    // A second uplink into the upstream namespace.
    run("ip", &["link", "add", "hcwa", "type", "veth", "peer", "name", "hcwb"]);
    run("ip", &["link", "set", "hcwa", "netns", &lab.router]);
    run("ip", &["link", "set", "hcwb", "netns", &lab.upstream]);
    lab.ip(&["link", "set", "hcwa", "name", "wan1"]);
    run("ip", &["-n", &lab.upstream, "link", "set", "hcwb", "up"]);
    let mut session = lab.session(false).await;

    // No verdict yet (nothing has probed): only the standby routes, in priority order, and
    // the checks say why.
    let doc = reconcile(&mut session).await;
    assert_eq!(ops(&doc, "failed"), Vec::<String>::new(), "{:#?}", doc.operations);
    assert_eq!(defaults(&lab), ["1000010 via 198.51.100.1", "1000020 via 203.0.113.1"]);
    let check = resource(&doc, "HealthCheck/wan-gw");
    assert_eq!(check.phase, Phase::Healthy, "{:#?}", check.conditions);
    assert_eq!(condition(check, "Healthy"), Some(("Unknown".into(), "NoVerdict".into())));
    let policy = resource(&doc, "IPv4DefaultRoutePolicy/uplinks");
    assert_eq!(policy.phase, Phase::Healthy, "standby is not a block: {:#?}", policy.conditions);
    assert_eq!(condition(policy, "Standby"), Some(("True".into(), "HealthCheckFailing".into())));

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
    assert_eq!(condition(policy, "Standby"), None, "{:#?}", policy.conditions);
    let check = resource(&doc, "HealthCheck/wan-gw");
    assert_eq!(condition(check, "Healthy"), Some(("True".into(), "ProbesSucceed".into())));
    assert!(lab.ip(&["route", "get", "192.0.2.9"]).contains("via 198.51.100.1"));
    let again = reconcile(&mut session).await;
    assert_eq!(ops(&again, "done"), Vec::<String>::new(), "a second reconcile is a no-op");

    // The primary fails: its preferred route goes, traffic takes the backup.
    verdict(&session, "wan-gw", false);
    let doc = reconcile(&mut session).await;
    assert_eq!(ops(&doc, "done"), ["delete linux.ipv4.route/254:0.0.0.0/0:10"]);
    assert!(lab.ip(&["route", "get", "192.0.2.9"]).contains("via 203.0.113.1"));
    let check = resource(&doc, "HealthCheck/wan-gw");
    assert_eq!(condition(check, "Healthy"), Some(("False".into(), "ProbesFail".into())));
    let policy = resource(&doc, "IPv4DefaultRoutePolicy/uplinks");
    assert_eq!(policy.phase, Phase::Healthy, "{:#?}", policy.conditions);
    assert_eq!(condition(policy, "Standby"), Some(("True".into(), "HealthCheckFailing".into())));

    // Every candidate failing: the standby routes keep the static order.
    verdict(&session, "backup-gw", false);
    reconcile(&mut session).await;
    assert_eq!(defaults(&lab), ["1000010 via 198.51.100.1", "1000020 via 203.0.113.1"]);

    // Recovery: the primary is preferred again.
    verdict(&session, "wan-gw", true);
    let doc = reconcile(&mut session).await;
    assert_eq!(ops(&doc, "done"), ["create linux.ipv4.route/254:0.0.0.0/0:10"]);
    assert!(lab.ip(&["route", "get", "192.0.2.9"]).contains("via 198.51.100.1"));
}
