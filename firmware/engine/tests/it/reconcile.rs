//! Reconcile scenarios against the real kernel (issue "routerd engine on a real kernel", §9).

use routerd_engine::result::{
    ConditionStatus, ConditionType, Operation, OperationResult, Reason, ResourceResult,
};
use routerd_engine::{OrphanCleanup, Phase, ResultDocument};
use routerd_ledger::{EntryState, Ledger, LedgerChange, LedgerEntry, Origin};

use crate::support::{LAB, Lab, condition, deletes, lab_with_routes, ops, resource, without};

#[tokio::test]
async fn apply_from_empty_creates_everything_and_the_second_apply_is_a_no_op() {
    let lab = Lab::new();
    let doc = lab.reconcile(LAB).await;
    assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
    let done = ops(&doc, OperationResult::Done);
    for expected in [
        "create linux.ipv4.address/lan0/192.168.50.1/24",
        "create linux.ipv4.route/254:0.0.0.0/0:0",
        "create linux.ipv4.fwmarkRule/0x100",
        "create nft.table/ip/routerd_snat_lan_masquerade",
        "create nft.table/inet/routerd_filter_home",
        "modify linux.link/lan0",
        "modify linux.sysctl/net.ipv4.ip_forward",
    ] {
        assert!(done.contains(&expected.to_string()), "missing {expected} in {done:#?}");
    }
    // The kernel holds it, as seen by iproute2 and nft, and traffic flows through NAT.
    assert!(lab.ip(&["-j", "addr", "show", "dev", "lan0"]).contains("192.168.50.1"));
    assert!(lab.ip(&["rule", "show"]).contains("fwmark 0x100 lookup 100"));
    assert!(lab.nft(&["list", "tables"]).contains("table ip routerd_snat_lan_masquerade"));
    assert!(lab.client.exec_ok(&["ping", "-c", "1", "-W", "3", "198.51.100.1"]));
    // The ledger records what was created, not the links and sysctls that existed before.
    let ledger = lab.ledger_keys();
    assert!(ledger.contains(&"nft.table/inet/routerd_filter_home".to_string()));
    assert!(!ledger.iter().any(|k| k.starts_with("linux.link/")), "{ledger:#?}");

    let again = lab.reconcile(LAB).await;
    assert!(again.operations.is_empty(), "second apply did {:#?}", again.operations);
    assert_eq!(again.phase, Phase::RequiresAdoption);
}

#[tokio::test]
async fn a_sysctl_key_this_kernel_lacks_is_blocked_not_planned_as_a_create() {
    // Issue 33 §5: plan said `create linux.sysctl/…` for a FreeBSD key; apply then failed.
    let config = LAB.replacen(
        "        key: net.ipv4.ip_forward\n",
        "        key: net.inet.ip.forwarding\n",
        1,
    );
    assert_ne!(config, LAB, "the lab's Sysctl");
    let lab = Lab::new();
    let plan = lab.plan(&config, false).await;
    assert!(
        !plan.operations.iter().any(|o| o.name.as_ref() == "net.inet.ip.forwarding"),
        "{:#?}",
        plan.operations
    );
    let doc = lab.reconcile(&config).await;
    assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
    let sysctl = resource(&doc, "Sysctl/ipv4-forwarding");
    let (status, reason) = condition(sysctl, ConditionType::Blocked).expect("a Blocked condition");
    assert_eq!((status, reason), (ConditionStatus::True, Reason::KeyMissing));
    let message =
        &sysctl.conditions.iter().find(|c| c.type_ == ConditionType::Blocked).expect("c").message;
    assert!(message.contains("/proc/sys/net/inet/ip/forwarding"), "{message}");
    // Everything else applied.
    assert!(lab.ip(&["-j", "addr", "show", "dev", "lan0"]).contains("192.168.50.1"));
}

#[tokio::test]
async fn an_interface_whose_link_is_absent_waits_for_it_instead_of_a_create() {
    // Issue 33 §5: plan said `create linux.link/…` for a link routerd cannot create.
    let config = LAB.replacen("        ifname: lan0\n", "        ifname: lan9\n", 1);
    assert_ne!(config, LAB, "the lab's lan Interface");
    let lab = Lab::new();
    let plan = lab.plan(&config, false).await;
    assert!(
        !plan
            .operations
            .iter()
            .any(|o| o.name.as_ref() == "lan9" && o.operation == Operation::Create),
        "{:#?}",
        plan.operations
    );
    let doc = lab.reconcile(&config).await;
    assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
    let lan = resource(&doc, "Interface/lan");
    assert_eq!(condition(lan, ConditionType::Blocked).map(|c| c.1), Some(Reason::LinkMissing));
    let message =
        &lan.conditions.iter().find(|c| c.type_ == ConditionType::Blocked).expect("c").message;
    assert!(message.contains("waiting for link lan9 to appear"), "{message}");
    let address = resource(&doc, "IPv4StaticAddress/lan-v4");
    assert_eq!(
        condition(address, ConditionType::Blocked).map(|c| c.1),
        Some(Reason::DependencyPending)
    );
    assert!(lab.ip(&["-j", "addr", "show", "dev", "wan0"]).contains("198.51.100.2"), "wan applied");
    // Once the link appears, what waited for it applies.
    lab.ip(&["link", "add", "lan9", "type", "veth", "peer", "name", "lan9p"]);
    let doc = lab.reconcile(&config).await;
    assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
    assert!(lab.ip(&["-j", "addr", "show", "dev", "lan9"]).contains("192.168.50.1"));
}

#[tokio::test]
async fn an_interface_mtu_is_set_and_its_drift_repaired() {
    // Issue 33 §5: `Interface.mtu`, a field routerd added later, loads and applies.
    let config =
        LAB.replacen("        ifname: lan0\n", "        ifname: lan0\n        mtu: 1400\n", 1);
    assert_ne!(config, LAB, "the lab's lan Interface");
    let lab = Lab::new();
    let doc = lab.reconcile(&config).await;
    assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
    let mtu = || lab.ip(&["-j", "link", "show", "lan0"]);
    assert!(mtu().contains("\"mtu\":1400"), "{}", mtu());
    lab.ip(&["link", "set", "lan0", "mtu", "1500"]);
    let plan = lab.plan(&config, false).await;
    assert!(
        ops(&plan, OperationResult::Planned).contains(&"modify linux.link/lan0".to_string()),
        "drift"
    );
    lab.reconcile(&config).await;
    assert!(mtu().contains("\"mtu\":1400"), "repaired: {}", mtu());
}

#[tokio::test]
async fn drift_is_repaired_after_an_address_and_an_nft_rule_are_deleted_by_hand() {
    let lab = Lab::new();
    lab.reconcile(LAB).await;
    lab.ip(&["addr", "del", "192.168.50.1/24", "dev", "lan0"]);
    let listing = lab.nft(&["-a", "list", "chain", "inet", "routerd_filter_home", "forward"]);
    let handle = listing
        .lines()
        .filter(|l| l.contains("accept") && l.contains("# handle"))
        .find_map(|l| l.rsplit("# handle ").next().map(str::trim).map(str::to_string))
        .expect("a rule with a handle");
    let rules_before = listing.matches("# handle").count();
    lab.nft(&["delete", "rule", "inet", "routerd_filter_home", "forward", "handle", &handle]);

    let plan = lab.plan(LAB, false).await;
    let planned = ops(&plan, OperationResult::Planned);
    assert!(
        planned.contains(&"create linux.ipv4.address/lan0/192.168.50.1/24".to_string()),
        "{planned:#?}"
    );
    assert!(
        planned.contains(&"modify nft.table/inet/routerd_filter_home".to_string()),
        "{planned:#?}"
    );
    assert_eq!(plan.phase, Phase::Drifted);

    let doc = lab.reconcile(LAB).await;
    assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
    assert!(lab.ip(&["-j", "addr", "show", "dev", "lan0"]).contains("192.168.50.1"));
    let listing = lab.nft(&["-a", "list", "chain", "inet", "routerd_filter_home", "forward"]);
    assert_eq!(listing.matches("# handle").count(), rules_before);
    assert!(lab.plan(LAB, false).await.operations.is_empty());
}

#[tokio::test]
async fn dry_run_leaves_kernel_inventory_and_ledger_byte_identical() {
    let lab = Lab::new();
    // From empty: no ledger file appears, nothing in the kernel changes.
    let before = lab.kernel_state();
    let doc = lab.plan(LAB, true).await;
    assert_eq!(doc.mode, "dry-run");
    assert!(!ops(&doc, OperationResult::Planned).is_empty());
    assert_eq!(lab.kernel_state(), before);
    assert!(!lab.ledger.exists(), "dry run created the ledger");

    // After a reconcile, with a changed config: same.
    lab.reconcile(LAB).await;
    let changed = LAB.replace("192.168.50.1/24", "192.168.50.254/24");
    let (kernel, ledger) = (lab.kernel_state(), lab.ledger_bytes());
    let doc = lab.plan(&changed, true).await;
    assert!(
        ops(&doc, OperationResult::Planned)
            .contains(&"create linux.ipv4.address/lan0/192.168.50.254/24".to_string())
    );
    assert_eq!(lab.kernel_state(), kernel);
    assert_eq!(lab.ledger_bytes(), ledger);
}

#[tokio::test]
async fn removed_resource_loses_its_owned_table_and_rule_while_foreign_tables_stay() {
    let lab = Lab::new();
    lab.reconcile(LAB).await;
    lab.nft(&["add", "table", "inet", "routerd_foreign"]);
    lab.nft(&["add", "table", "ip", "foreign"]);

    let config = without(LAB, "IPv4PolicyRoute", "guests-via-wan");
    let doc = lab.reconcile(&config).await;
    assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
    let done = ops(&doc, OperationResult::Done);
    for expected in [
        "delete nft.table/ip/routerd_policy_guests_via_wan",
        "delete linux.ipv4.fwmarkRule/0x100",
        "delete linux.ipv4.routeTable/100",
    ] {
        assert!(done.contains(&expected.to_string()), "missing {expected} in {done:#?}");
    }
    let tables = lab.nft(&["list", "tables"]);
    assert!(!tables.contains("routerd_policy_guests_via_wan"), "{tables}");
    assert!(tables.contains("table inet routerd_foreign"), "{tables}");
    assert!(tables.contains("table ip foreign"), "{tables}");
    assert!(!lab.ip(&["rule", "show"]).contains("0x100"));
    assert!(lab.ip(&["route", "show", "table", "100"]).trim().is_empty());
    // routerd_foreign is reported, not deleted; the foreign table is not ours to mention.
    let foreign =
        doc.orphans.iter().find(|o| o.name == "inet/routerd_foreign").expect("orphan report");
    assert_eq!(foreign.cleanup, OrphanCleanup::Keep);
    assert!(foreign.reason.contains("not recorded in the ledger"), "{}", foreign.reason);
    assert!(!doc.orphans.iter().any(|o| o.name == "ip/foreign"));
    let ledger = lab.ledger_keys();
    assert!(
        !ledger.iter().any(|k| k.contains("routerd_policy") || k.ends_with("/0x100")),
        "{ledger:#?}"
    );
}

#[tokio::test]
async fn a_removed_policy_route_leaves_foreign_routes_in_its_table_and_hand_made_rules_alone() {
    // Issue 33 §2: a route with routerd's protocol that routerd did not install, and rules in
    // routerd's fwmark range made by hand, were deleted although plan did not list them.
    let lab = Lab::new();
    lab.reconcile(LAB).await;
    lab.ip(&["route", "add", "10.77.0.0/16", "dev", "lan0", "table", "100", "proto", "208"]);
    lab.ip(&["rule", "add", "fwmark", "0x1a0", "lookup", "100", "priority", "20000"]);
    lab.ip(&["rule", "add", "fwmark", "0x150/0xff0", "lookup", "main", "priority", "20001"]);

    let config = without(LAB, "IPv4PolicyRoute", "guests-via-wan");
    let plan = lab.plan(&config, false).await;
    let doc = lab.reconcile(&config).await;
    assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
    assert_eq!(
        deletes(&doc, OperationResult::Done),
        deletes(&plan, OperationResult::Planned),
        "reconcile deleted what plan listed"
    );
    assert!(
        deletes(&doc, OperationResult::Done)
            .contains(&"delete linux.ipv4.fwmarkRule/0x100".to_string())
    );

    // The foreign route and the table it keeps in use stay, reported as kept.
    let table = lab.ip(&["route", "show", "table", "100"]);
    assert!(table.contains("10.77.0.0/16"), "{table}");
    assert!(!table.contains("default"), "routerd's own route in the table is gone: {table}");
    let kept = |kind: &str, name: &str| {
        doc.orphans.iter().find(|o| o.kind == kind && o.name == name).map(|o| o.cleanup)
    };
    assert_eq!(
        kept("linux.ipv4.routeTable", "100"),
        Some(OrphanCleanup::Keep),
        "{:#?}",
        doc.orphans
    );
    assert_eq!(kept("linux.ipv4.route", "100:10.77.0.0/16:0"), Some(OrphanCleanup::Keep));
    // The hand-made rules stay; the one inside the range is reported with its remedy, the
    // masked one (it matches 0x1150 too) is not routerd's to mention.
    let rules = lab.ip(&["rule", "show"]);
    assert!(rules.contains("fwmark 0x1a0 lookup 100"), "{rules}");
    assert!(rules.contains("fwmark 0x150/0xff0 lookup main"), "{rules}");
    assert!(!rules.contains("fwmark 0x100 "), "{rules}");
    let in_range = doc.orphans.iter().find(|o| o.name == "0x1a0").expect("0x1a0 reported");
    assert_eq!(in_range.cleanup, OrphanCleanup::Keep);
    assert!(in_range.remediation.contains("ip rule del"), "{}", in_range.remediation);
    assert!(!doc.orphans.iter().any(|o| o.name.starts_with("0x150")), "{:#?}", doc.orphans);

    // And the next run plans no delete at all.
    let again = lab.plan(&config, false).await;
    assert!(deletes(&again, OperationResult::Planned).is_empty(), "{:#?}", again.operations);
}

/// The lab config with a second policy route on the lab's mark, table and priority (for other
/// sources), at `priority`.
fn lab_with_second_policy_route(priority: u32) -> String {
    format!(
        "{LAB}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4PolicyRoute
      metadata:
        name: printers-via-wan
      spec:
        outboundInterface: wan
        sourceCIDRs: [192.168.50.64/28]
        table: 100
        priority: {priority}
        mark: 0x100
"
    )
}

#[tokio::test]
async fn two_resources_share_an_artifact_they_declare_alike_and_block_on_one_they_do_not() {
    // Issue 33 §5: routerd accepts two resources declaring one artifact.
    let lab = Lab::new();
    let (first, second) = ("guests-via-wan", "printers-via-wan");
    let rule = || lab.ledger_entry("linux.ipv4.fwmarkRule", "0x100").expect("rule recorded");
    let shared = lab_with_second_policy_route(10000);
    let doc = lab.reconcile(&shared).await;
    assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
    for (me, other) in [(first, second), (second, first)] {
        let r = resource(&doc, me);
        assert_eq!(r.phase, Phase::Healthy, "{me}: {:#?}", r.conditions);
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("linux.ipv4.fwmarkRule/0x100") && w.contains(other)),
            "{me}: {:?}",
            r.warnings
        );
    }
    let recorded = rule();
    assert!(recorded.owner.ends_with(first), "{recorded:?}");
    assert_eq!(recorded.co_owners, [format!("net.routerd.net/v1alpha1/IPv4PolicyRoute/{second}")]);

    // The first declarer goes: the artifact stays, the second owns it alone.
    let doc = lab.reconcile(&without(&shared, "IPv4PolicyRoute", first)).await;
    assert!(
        deletes(&doc, OperationResult::Done).iter().all(|d| !d.contains("/0x100")),
        "{:#?}",
        doc.operations
    );
    assert!(lab.ip(&["rule", "show"]).contains("fwmark 0x100 lookup 100"));
    let recorded = rule();
    assert!(recorded.owner.ends_with(second) && recorded.co_owners.is_empty(), "{recorded:?}");

    // Declared otherwise by each: both are blocked on it, the host keeps it as it is, and
    // everything else applies.
    let doc = lab.reconcile(&lab_with_second_policy_route(10001)).await;
    assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
    assert!(
        ops(&doc, OperationResult::Done).iter().all(|o| !o.contains("/0x100")),
        "{:#?}",
        doc.operations
    );
    for (me, other) in [(first, second), (second, first)] {
        let r = resource(&doc, me);
        assert_eq!(r.phase, Phase::Blocked, "{me}");
        let c = r.conditions.iter().find(|c| c.reason == Reason::Conflict).expect("a Conflict");
        for part in [other, "linux.ipv4.fwmarkRule/0x100", "priority (10000 / 10001)"] {
            assert!(c.message.contains(part), "{me}: {part} not in {}", c.message);
        }
    }
    let others = doc.resources.iter().filter(|r| !r.id.ends_with(first) && !r.id.ends_with(second));
    for r in others {
        assert_ne!(r.phase, Phase::Blocked, "{}: {:#?}", r.id, r.conditions);
    }
    let rules = lab.ip(&["rule", "show"]);
    assert!(rules.contains("10000:\tfrom all fwmark 0x100 lookup 100"), "{rules}");
    assert!(!rules.contains("10001:"), "{rules}");

    // Neither declares it: it goes, with its record.
    let doc = lab.reconcile(&without(LAB, "IPv4PolicyRoute", first)).await;
    assert!(
        deletes(&doc, OperationResult::Done)
            .contains(&"delete linux.ipv4.fwmarkRule/0x100".to_string())
    );
    assert!(!lab.ip(&["rule", "show"]).contains("0x100"));
    assert!(lab.ledger_entry("linux.ipv4.fwmarkRule", "0x100").is_none());
}

#[tokio::test]
async fn matching_pre_existing_artifacts_are_adoption_candidates_and_adopt_records_them() {
    let lab = Lab::new();
    // Made by hand before routerd ever ran: the LAN address, the link up, and the NAT table
    // exactly as routerd renders it (nft syntax from the renderer, comments included).
    lab.ip(&["addr", "add", "192.168.50.1/24", "dev", "lan0"]);
    lab.ip(&["link", "set", "lan0", "up"]);
    let config = routerd_model::parse_config(LAB, "lab.yaml").expect("parses");
    let nat = routerd_engine::render::render(&config)
        .intents
        .into_iter()
        .find_map(|i| match &i.artifact.spec {
            routerd_host::ArtifactSpec::NftTable(t) if t.name.starts_with("routerd_snat_") => {
                Some(t.clone())
            }
            _ => None,
        })
        .expect("nat table rendered");
    let file = lab.dir().join("nat.nft");
    std::fs::write(&file, format!("{nat}\n")).expect("write");
    lab.nft(&["-f", &file.to_string_lossy()]);

    let doc = lab.adopt(LAB, false).await;
    let adoptable: Vec<String> = doc
        .adoption_candidates
        .iter()
        .filter(|c| c.adoptable)
        .map(|c| format!("{}/{}", c.kind, c.name))
        .collect();
    for expected in [
        "linux.ipv4.address/lan0/192.168.50.1/24",
        "linux.link/lan0",
        "nft.table/ip/routerd_snat_lan_masquerade",
    ] {
        assert!(adoptable.contains(&expected.to_string()), "missing {expected} in {adoptable:#?}");
    }
    assert!(!lab.ledger.exists(), "adopt --candidates wrote the ledger");

    let applied = lab.adopt(LAB, true).await;
    assert!(applied.adopted_artifacts.iter().any(|a| a.name == "ip/routerd_snat_lan_masquerade"));
    {
        let ledger = Ledger::open_read_only(&lab.ledger).expect("ledger");
        let entry = ledger
            .get("nft.table", "ip/routerd_snat_lan_masquerade")
            .expect("read")
            .expect("entry");
        assert_eq!(entry.origin, Origin::Adopted);
    }
    // Reconcile leaves the adopted table alone (nothing to do for it).
    let doc = lab.reconcile(LAB).await;
    assert!(!doc.operations.iter().any(|o| &*o.name == "ip/routerd_snat_lan_masquerade"));
}

#[tokio::test]
async fn drifted_candidate_is_refused_with_the_differing_attribute() {
    let lab = Lab::new();
    lab.ip(&["addr", "add", "192.168.50.1/24", "dev", "lan0"]);
    // net.ipv4.ip_forward is 0 in a new namespace; the config wants 1.
    let applied = lab.adopt(LAB, true).await;
    let fwd = applied
        .adoption_candidates
        .iter()
        .find(|c| c.name == "net.ipv4.ip_forward")
        .expect("ip_forward is a candidate");
    assert!(!fwd.adoptable);
    assert_eq!(fwd.diff[0].attribute, "value");
    assert_eq!(fwd.diff[0].desired, serde_json::json!("1"));
    assert_eq!(fwd.diff[0].observed, serde_json::json!("0"));
    let ledger = lab.ledger_keys();
    assert!(!ledger.contains(&"linux.sysctl/net.ipv4.ip_forward".to_string()));
    assert!(ledger.contains(&"linux.ipv4.address/lan0/192.168.50.1/24".to_string()), "{ledger:#?}");
}

#[tokio::test]
async fn netlink_failure_fails_the_item_and_its_dependents_only_and_the_ledger_holds_what_was_created()
 {
    let lab = Lab::new();
    // 203.0.113.1 is on no connected subnet: the kernel refuses routes via it (ENETUNREACH).
    let config = LAB.replace("via: 198.51.100.1", "via: 203.0.113.1");
    let doc = lab.reconcile(&config).await;
    let failed = ops(&doc, OperationResult::Failed);
    assert_eq!(
        failed.iter().map(String::as_str).collect::<std::collections::BTreeSet<_>>(),
        ["create linux.ipv4.route/100:0.0.0.0/0:0", "create linux.ipv4.route/254:0.0.0.0/0:0"]
            .into(),
        "{:#?}",
        doc.operations
    );
    let error = doc
        .operations
        .iter()
        .find(|o| o.result == OperationResult::Failed)
        .and_then(|o| o.error.clone());
    assert!(error.is_some_and(|e| e.contains("KernelRejected") && e.contains("unreachable")));
    let skipped = ops(&doc, OperationResult::Skipped);
    assert!(skipped.contains(&"create linux.ipv4.fwmarkRule/0x100".to_string()), "{skipped:#?}");
    assert!(skipped.contains(&"create nft.table/ip/routerd_policy_guests_via_wan".to_string()));
    // Independent items went through.
    assert!(lab.nft(&["list", "tables"]).contains("routerd_snat_lan_masquerade"));
    assert!(!lab.ip(&["rule", "show"]).contains("0x100"));
    let policy = doc
        .resources
        .iter()
        .find(|r| r.id.ends_with("IPv4PolicyRoute/guests-via-wan"))
        .expect("resource");
    assert_eq!(policy.phase, Phase::Blocked);
    let nat = doc
        .resources
        .iter()
        .find(|r| r.id.ends_with("IPv4SourceNAT/lan-masquerade"))
        .expect("resource");
    assert_eq!(nat.phase, Phase::Healthy);
    // The ledger holds exactly the inventory-backed creates that succeeded.
    let mut created: Vec<String> = doc
        .operations
        .iter()
        .filter(|o| o.result == OperationResult::Done && o.operation == Operation::Create)
        .map(|o| format!("{}/{}", o.kind, o.name))
        .collect();
    created.sort();
    let mut ledger = lab.ledger_keys();
    ledger.sort();
    assert_eq!(ledger, created);
}

#[tokio::test]
async fn pending_ledger_entries_left_by_a_crash_are_resolved_against_the_host() {
    let lab = Lab::new();
    lab.reconcile(LAB).await;
    // Simulate a crash between prepare and commit: the NAT table's entry is still pending, and
    // a create that never ran left a pending entry for a table that does not exist.
    {
        let ledger = Ledger::open(&lab.ledger).expect("ledger");
        let mut nat = ledger
            .get("nft.table", "ip/routerd_snat_lan_masquerade")
            .expect("read")
            .expect("entry");
        nat.state = EntryState::Pending;
        let ghost = LedgerEntry { name: "inet/routerd_ghost".into(), ..nat.clone() };
        ledger.apply(&[LedgerChange::Put(nat), LedgerChange::Put(ghost)]).expect("write");
    }
    let doc = lab.reconcile(LAB).await;
    assert!(doc.operations.is_empty(), "{:#?}", doc.operations);
    let ledger = Ledger::open_read_only(&lab.ledger).expect("ledger");
    let nat =
        ledger.get("nft.table", "ip/routerd_snat_lan_masquerade").expect("read").expect("entry");
    assert_eq!(nat.state, EntryState::Owned);
    assert!(ledger.get("nft.table", "inet/routerd_ghost").expect("read").is_none());
}

/// Every kind of the schema, one or more resources each.
const ALL_KINDS: &str = include_str!("../../../model/tests/fixtures/all-kinds.yaml");

#[tokio::test]
async fn no_kind_is_blocked_for_want_of_a_configurator() {
    // Issue 6 §2: every kind has a configurator in this build. A plan on a real session (its
    // real registry of backends) says so; what waits on run-time values may still be blocked
    // for that reason, never for a missing `applyWith`.
    let lab = Lab::new();
    let doc = lab.plan(ALL_KINDS, true).await;
    let missing: Vec<String> = doc
        .resources
        .iter()
        .flat_map(|r| r.conditions.iter().map(move |c| (r, c)))
        .filter(|(_, c)| c.reason == Reason::ConfiguratorMissing)
        .map(|(r, c)| format!("{}: {}", r.id, c.message))
        .collect();
    assert!(missing.is_empty(), "{missing:#?}");
    assert!(doc.resources.len() >= 28, "{} resources", doc.resources.len());
}

/// SelfAddressPolicy `lan-dns` in `doc`, and its `Selected` condition.
fn selection(doc: &ResultDocument) -> (&ResourceResult, &routerd_engine::result::Condition) {
    let res = resource(doc, "SelfAddressPolicy/lan-dns");
    let selected =
        res.conditions.iter().find(|c| c.type_ == ConditionType::Selected).expect("Selected");
    (res, selected)
}

#[tokio::test]
async fn a_self_address_policy_selects_from_the_links_addresses_and_falls_back_in_order() {
    let lab = Lab::new();
    let policy = |first: &str| {
        format!(
            "{LAB}\n    - apiVersion: net.routerd.net/v1alpha1\n      kind: SelfAddressPolicy\n      metadata:\n        name: lan-dns\n      spec:\n        addressFamily: ipv4\n        candidates:\n          - source: interfaceAddress\n            interface: lan\n            matchSuffix: {first}\n          - source: static\n            address: 192.0.2.53\n"
        )
    };
    // The lab puts 192.168.50.1/24 on lan0: the first candidate has it from the first apply.
    let doc = lab.reconcile(&policy("0.0.0.1")).await;
    let (res, selected) = selection(&doc);
    assert_eq!(res.phase, Phase::Healthy, "{:#?}", res.conditions);
    assert_eq!(
        (selected.status, selected.reason),
        (ConditionStatus::True, Reason::CandidateSelected)
    );
    assert!(
        selected
            .message
            .starts_with("192.168.50.1 from candidates[0], interfaceAddress lan (lan0)"),
        "{}",
        selected.message
    );
    // An address added by hand on the link is read from the kernel at the next run.
    lab.ip(&["addr", "add", "192.168.60.9/24", "dev", "lan0"]);
    let doc = lab.plan(&policy("0.0.0.9"), false).await;
    let (_, selected) = selection(&doc);
    assert!(
        selected.message.starts_with("192.168.60.9 from candidates[0]"),
        "{}",
        selected.message
    );
    // No address on the link ends in .7: the next candidate wins, and the warning says why.
    let doc = lab.plan(&policy("0.0.0.7"), false).await;
    let (res, selected) = selection(&doc);
    assert!(
        selected.message.starts_with("192.0.2.53 from candidates[1], static"),
        "{}",
        selected.message
    );
    assert_eq!(res.phase, Phase::Healthy);
}

#[tokio::test]
async fn a_persistent_sysctl_is_a_block_of_routerds_sysctl_d_file_and_goes_with_its_resource() {
    let lab = Lab::new();
    let sysctl = |name: &str, key: &str, value: &str| {
        format!(
            "\n    - apiVersion: system.routerd.net/v1alpha1\n      kind: Sysctl\n      metadata:\n        name: {name}\n      spec:\n        key: {key}\n        value: \"{value}\"\n        runtime: false\n        persistent: true\n"
        )
    };
    let both = format!(
        "{LAB}{}{}",
        sysctl("rp", "net.ipv4.conf.all.rp_filter", "2"),
        sysctl("ports", "net.ipv4.ip_local_port_range", "1024 65000")
    );
    let doc = lab.reconcile(&both).await;
    let file = "/etc/sysctl.d/90-routerd.conf";
    assert_eq!(
        ops(&doc, OperationResult::Done)
            .into_iter()
            .filter(|o| o.contains(file))
            .collect::<Vec<_>>(),
        vec![
            format!("create file/{file}#net.ipv4.conf.all.rp_filter"),
            format!("create file/{file}#net.ipv4.ip_local_port_range"),
        ]
    );
    assert!(doc.warnings.is_empty() && doc.resources.iter().all(|r| r.warnings.is_empty()));
    let path = lab.root().join(file.trim_start_matches('/'));
    let text = std::fs::read_to_string(&path).expect("the sysctl.d file");
    assert!(text.contains("net.ipv4.conf.all.rp_filter = 2\n"), "{text}");
    assert!(text.contains("net.ipv4.ip_local_port_range = 1024 65000\n"), "{text}");
    // The file loads as sysctl.d(5) says: `sysctl -p` in the router's namespace (both keys are
    // per namespace, so the machine's values are not touched) sets what it lists.
    let path_arg = path.to_string_lossy().into_owned();
    lab.router.exec(&["sysctl", "-q", "-p", &path_arg]);
    let read = |key: &str| lab.router.exec(&["sysctl", "-n", key]);
    assert_eq!(read("net.ipv4.conf.all.rp_filter").trim(), "2");
    assert_eq!(
        read("net.ipv4.ip_local_port_range").split_whitespace().collect::<Vec<_>>(),
        ["1024", "65000"]
    );
    let again = lab.reconcile(&both).await;
    assert!(again.operations.is_empty(), "{:#?}", again.operations);

    // A line of the operator's stays; the removed resource's block goes (ledger-owned).
    std::fs::write(&path, format!("{text}kernel.panic = 5\n")).expect("hand edit");
    let one = format!("{LAB}{}", sysctl("rp", "net.ipv4.conf.all.rp_filter", "2"));
    let doc = lab.reconcile(&one).await;
    assert_eq!(
        ops(&doc, OperationResult::Done),
        vec![format!("delete file/{file}#net.ipv4.ip_local_port_range")]
    );
    let text = std::fs::read_to_string(&path).expect("the file stays");
    assert!(text.contains("rp_filter = 2") && text.contains("kernel.panic = 5"), "{text}");
    assert!(!text.contains("ip_local_port_range"), "{text}");
}

#[tokio::test]
async fn strict_mode_stops_at_the_first_failure() {
    let lab = Lab::new();
    let config = LAB
        .replace("via: 198.51.100.1", "via: 203.0.113.1")
        .replace("mode: progressive", "mode: strict");
    assert!(config.contains("mode: strict"));
    let doc = lab.reconcile(&config).await;
    assert_eq!(ops(&doc, OperationResult::Failed).len(), 1, "{:#?}", doc.operations);
    let skipped = ops(&doc, OperationResult::Skipped);
    assert!(
        skipped.contains(&"create nft.table/ip/routerd_snat_lan_masquerade".to_string()),
        "{skipped:#?}"
    );
    // Those the run ended before name the failure (the graph's `OnFailure::AbortRun`); the
    // failed operation's dependents were blocked by it, as in progressive mode.
    let failed = doc
        .operations
        .iter()
        .find(|o| o.result == OperationResult::Failed)
        .map(|o| format!("{} {}/{} failed first", o.operation, o.kind, o.name))
        .expect("one failed");
    let skipped_ops: Vec<_> =
        doc.operations.iter().filter(|o| o.result == OperationResult::Skipped).collect();
    let named = skipped_ops.iter().filter(|o| o.error.as_deref() == Some(failed.as_str())).count();
    assert!(named > 0, "{skipped_ops:#?}");
    let others: Vec<_> =
        skipped_ops.iter().filter(|o| o.error.as_deref().is_some_and(|e| e != failed)).collect();
    assert!(others.is_empty(), "{others:#?}");
    assert!(!lab.nft(&["list", "tables"]).contains("routerd_snat"));
    // Nothing that did not run is in the ledger.
    assert!(!lab.ledger_keys().iter().any(|k| k.contains("routerd_snat")));
}

#[tokio::test]
async fn a_table_holding_declared_static_routes_is_not_an_orphan() {
    let lab = Lab::new();
    let config = format!(
        "{LAB}\n    - apiVersion: net.routerd.net/v1alpha1\n      kind: IPv4StaticRoute\n      metadata:\n        name: in-table-300\n      spec:\n        interface: wan\n        destination: 203.0.113.0/24\n        via: 198.51.100.1\n        table: 300\n"
    );
    let doc = lab.reconcile(&config).await;
    assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
    assert!(lab.ip(&["route", "show", "table", "300"]).contains("203.0.113.0/24"));
    assert!(!doc.orphans.iter().any(|o| o.name == "300"), "{:#?}", doc.orphans);
    // Without the route the table is empty again, and the route itself was cleaned up.
    let doc = lab.reconcile(LAB).await;
    assert!(
        ops(&doc, OperationResult::Done)
            .contains(&"delete linux.ipv4.route/300:203.0.113.0/24:0".to_string())
    );
    assert!(lab.ip(&["route", "show", "table", "300"]).trim().is_empty());
}

#[tokio::test]
async fn protected_interfaces_and_zones_are_observed_never_changed() {
    let lab = Lab::new();
    for (how, reconcile) in [
        ("interface", "  reconcile:\n    mode: progressive\n    protectedInterfaces: [lan]\n"),
        ("zone", "  reconcile:\n    mode: progressive\n    protectedZones: [lan]\n"),
    ] {
        let config = LAB.replace("  reconcile:\n    mode: progressive\n", reconcile);
        assert_ne!(config, LAB);
        let doc = lab.reconcile(&config).await;
        assert!(ops(&doc, OperationResult::Failed).is_empty(), "{how}: {:#?}", doc.operations);
        let touched: Vec<String> =
            ops(&doc, OperationResult::Done).into_iter().filter(|o| o.contains("lan0")).collect();
        assert!(touched.is_empty(), "{how}: protected lan0 was changed: {touched:#?}");
        assert!(!lab.ip(&["-j", "addr", "show", "dev", "lan0"]).contains("192.168.50.1"), "{how}");
        let lan = doc
            .resources
            .iter()
            .find(|r| r.id.ends_with("IPv4StaticAddress/lan-v4"))
            .expect("resource");
        assert!(
            lan.warnings.iter().any(|w| w.contains("protected interface lan0")),
            "{how}: {:?}",
            lan.warnings
        );
        // The WAN side was applied normally.
        assert!(lab.ip(&["-j", "addr", "show", "dev", "wan0"]).contains("198.51.100.2"), "{how}");
    }
}

/// The lab plus a VLAN on `lan` with an address, and a DS-Lite tunnel on `wan` with a default
/// route (metric 100, beside the lab's own).
fn lab_with_created_links() -> String {
    format!(
        "{LAB}
    - apiVersion: net.routerd.net/v1alpha1
      kind: VLANInterface
      metadata:
        name: guest
      spec:
        interface: lan
        vlanID: 20

    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticAddress
      metadata:
        name: guest-v4
      spec:
        interface: guest
        address: 192.168.60.1/24

    - apiVersion: net.routerd.net/v1alpha1
      kind: DSLiteTunnel
      metadata:
        name: dslite0
      spec:
        interface: wan
        remoteAddress: 2001:db8::1
        localAddressSource: static
        localAddress: 2001:db8::2
        defaultRoute: true
        routeMetric: 100
"
    )
}

/// Whether iproute2 can make a link of `args` in the router namespace (removed again): the
/// test's own, independent answer to "does this kernel have 8021q / ip6_tunnel".
fn kernel_creates(lab: &Lab, args: &[&str]) -> bool {
    let mut full = vec!["link", "add"];
    full.extend_from_slice(args);
    let ok = lab.router.ip_ok(&full);
    if ok {
        lab.ip(&["link", "del", "probe0"]);
    }
    ok
}

#[tokio::test]
async fn links_the_kernel_cannot_make_fail_alone_with_a_typed_reason_and_the_rest_applies() {
    let lab = Lab::new();
    let vlan_ok =
        kernel_creates(&lab, &["link", "lan0", "name", "probe0", "type", "vlan", "id", "9"]);
    let ip6tnl_ok = kernel_creates(
        &lab,
        &["probe0", "type", "ip6tnl", "mode", "ipip6", "remote", "2001:db8::99", "local", "::"],
    );
    let config = lab_with_created_links();
    let doc = lab.reconcile(&config).await;
    let links = lab.ip(&["-j", "link", "show"]);
    // Independent of the kernel: the lab's own config applied, NAT works.
    assert!(lab.client.exec_ok(&["ping", "-c", "1", "-W", "3", "198.51.100.1"]));
    let phase = |suffix: &str| {
        doc.resources.iter().find(|r| r.id.ends_with(suffix)).expect("resource").phase
    };
    assert_eq!(phase("IPv4SourceNAT/lan-masquerade"), Phase::Healthy);

    if vlan_ok && ip6tnl_ok {
        assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
        let shown = lab.ip(&["-j", "-d", "link", "show", "dev", "lan0.20"]);
        assert!(shown.contains("\"info_kind\":\"vlan\"") && shown.contains("\"id\":20"), "{shown}");
        assert!(links.contains("\"dslite0\""), "{links}");
        assert!(lab.ip(&["route", "show", "default"]).contains("dev dslite0"));
        let again = lab.reconcile(&config).await;
        assert!(again.operations.is_empty(), "second apply did {:#?}", again.operations);
        assert!(lab.ledger_keys().contains(&"linux.link/lan0.20".to_string()));
        return;
    }
    assert!(!vlan_ok && !ip6tnl_ok, "expected a kernel with both or neither (CI kernels)");

    // The two creates fail with the kernel's answer; only what lives on them is skipped.
    let failed: std::collections::BTreeSet<String> =
        ops(&doc, OperationResult::Failed).into_iter().collect();
    assert_eq!(
        failed,
        ["create linux.ipip6.tunnel/dslite0", "create linux.link/lan0.20"].map(String::from).into(),
        "{:#?}",
        doc.operations
    );
    for o in doc.operations.iter().filter(|o| o.result == OperationResult::Failed) {
        let error = o.error.as_deref().unwrap_or_default();
        assert!(error.starts_with("KernelRejected: "), "{error}");
        assert!(error.contains("Unknown device type"), "{error}");
    }
    let skipped = ops(&doc, OperationResult::Skipped);
    for dependent in [
        "create linux.ipv4.address/lan0.20/192.168.60.1/24",
        "create linux.ipv4.route/254:0.0.0.0/0:100",
    ] {
        assert!(skipped.contains(&dependent.to_string()), "{dependent} not skipped: {skipped:#?}");
    }
    let vlan = doc.resources.iter().find(|r| r.id.ends_with("VLANInterface/guest")).expect("vlan");
    assert_eq!(vlan.phase, Phase::Blocked);
    let cond =
        vlan.conditions.iter().find(|c| c.type_ == ConditionType::Blocked).expect("condition");
    assert_eq!(cond.reason, Reason::OperationFailed);
    assert!(cond.message.contains("Unknown device type"), "{}", cond.message);
    let address = doc.resources.iter().find(|r| r.id.ends_with("/guest-v4")).expect("address");
    assert_eq!(address.phase, Phase::Blocked);
    assert!(
        address.conditions.iter().any(|c| c.reason == Reason::OperationSkipped),
        "{address:#?}"
    );
    assert_eq!(phase("DSLiteTunnel/dslite0"), Phase::Blocked);
    assert!(!links.contains("lan0.20") && !links.contains("dslite0"), "{links}");
    // Nothing else changed: the lab's config alone finds the host exactly as it leaves it, and
    // the ledger holds exactly what was created.
    let plain = lab.plan(LAB, false).await;
    assert!(plain.operations.is_empty(), "{:#?}", plain.operations);
    assert!(!plain.orphans.iter().any(|o| o.name.contains("lan0.20") || o.name == "dslite0"));
    let mut created: Vec<String> = doc
        .operations
        .iter()
        .filter(|o| o.result == OperationResult::Done && o.operation == Operation::Create)
        .map(|o| format!("{}/{}", o.kind, o.name))
        .collect();
    created.sort();
    let mut ledger = lab.ledger_keys();
    ledger.sort();
    assert_eq!(ledger, created);
}

/// An HTTP GET of `url` from the LAN client (Python's urllib): the body, or `None` when it
/// fails within 2 s.
fn get_from_client(lab: &Lab, url: &str) -> Option<String> {
    let script = "import sys, urllib.request\n\
                  print(urllib.request.urlopen(sys.argv[1], timeout=2).read().decode())";
    let out = lab.client.command("python3").args(["-c", script, url]).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[tokio::test]
async fn a_hairpin_service_is_reached_from_the_lan_at_the_routers_wan_address() {
    let lab = Lab::new();
    // The internal host is the LAN client itself: a web server on 192.168.50.10:80.
    let www = lab.dir().join("www");
    std::fs::create_dir_all(&www).expect("www");
    std::fs::write(www.join("index.html"), "hello through the loopback\n").expect("page");
    let _server = crate::support::Daemon::spawn(
        lab.client
            .command("busybox")
            .args(["httpd", "-f", "-p", "192.168.50.10:80", "-h"])
            .arg(&www),
    );
    crate::support::wait_for("the web server", std::time::Duration::from_secs(10), || {
        get_from_client(&lab, "http://192.168.50.10/")
    });

    // Without hairpin, the LAN cannot use the WAN address: nothing on the router answers it.
    lab.reconcile(LAB).await;
    assert_eq!(get_from_client(&lab, "http://198.51.100.2:8080/"), None);

    // With it: the WAN address (known once on the link: a runtime value) is reflected.
    let yaml = LAB
        .replace("        internalPort: 80\n", "        internalPort: 80\n        hairpin: true\n");
    assert!(yaml.contains("hairpin: true"), "the example's ExposeService moved");
    let doc = lab.reconcile(&yaml).await;
    assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
    let table = lab.nft(&["list", "table", "ip", "routerd_dnat_client_web"]);
    assert!(
        table.contains("iifname \"lan0\" ip daddr 198.51.100.2 tcp dport 8080 dnat"),
        "{table}"
    );
    assert!(table.contains("iifname \"lan0\" oifname \"lan0\" ip daddr 192.168.50.10"), "{table}");
    assert!(table.contains("masquerade"), "{table}");
    assert_eq!(
        get_from_client(&lab, "http://198.51.100.2:8080/").as_deref(),
        Some("hello through the loopback")
    );
    let again = lab.reconcile(&yaml).await;
    assert_eq!(
        ops(&again, OperationResult::Done),
        Vec::<String>::new(),
        "a second reconcile is a no-op"
    );
}

#[tokio::test]
async fn allow_local_source_nat_routes_what_the_router_sends_by_the_policy_too() {
    let lab = Lab::new();
    // 203.0.113.1 is on the LAN client; the router's main table sends it to the WAN, where
    // nobody has it. Only the policy's table routes it to the LAN.
    lab.client.ip(&["addr", "add", "203.0.113.1/32", "dev", "lo"]);
    let with = |local: bool| {
        format!(
            "{LAB}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4PolicyRoute
      metadata:
        name: lab-services
      spec:
        outboundInterface: lan
        destinationCIDRs: [203.0.113.0/24]
        table: 101
        priority: 10100
        mark: 0x101
        allowLocalSourceNAT: {local}
"
        )
    };
    let ping = |lab: &Lab| lab.router.exec_ok(&["ping", "-c", "1", "-W", "1", "203.0.113.1"]);
    let doc = lab.reconcile(&with(false)).await;
    assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
    assert!(!ping(&lab), "without allowLocalSourceNAT the router's own ping goes to the WAN");

    let doc = lab.reconcile(&with(true)).await;
    assert_eq!(
        ops(&doc, OperationResult::Done),
        ["modify nft.table/ip/routerd_policy_lab_services"]
    );
    let table = lab.nft(&["list", "table", "ip", "routerd_policy_lab_services"]);
    assert!(table.contains("type route hook output"), "{table}");
    assert!(ping(&lab), "the router's own ping is marked and routed by table 101\n{table}");
}

/// A config large enough that render, prepare and the report take chunks on helper threads
/// (1,500 routes) reconciles exactly: every route is created and recorded in the ledger under
/// its own key, every resource reports its own route, and the second apply is a no-op.
#[tokio::test]
async fn a_large_config_is_reconciled_recorded_and_reported_route_by_route() {
    let lab = Lab::new();
    let yaml = lab_with_routes(1500, Some(1000));
    let route = |i: usize| format!("1000:10.{}.{}.0/24:0", 100 + i / 256, i % 256);
    let doc = lab.reconcile(&yaml).await;
    assert!(
        ops(&doc, OperationResult::Failed).is_empty(),
        "{:#?}",
        ops(&doc, OperationResult::Failed)
    );
    let done = ops(&doc, OperationResult::Done);
    let ledger = lab.ledger_keys();
    // The statuses of the routes, in config order.
    let bulk: Vec<&ResourceResult> =
        doc.resources.iter().filter(|r| r.id.contains("/IPv4StaticRoute/bulk")).collect();
    assert_eq!(bulk.len(), 1500);
    for (i, status) in bulk.iter().enumerate() {
        let key = format!("linux.ipv4.route/{}", route(i));
        assert!(done.contains(&format!("create {key}")), "{key} was not created");
        assert!(ledger.contains(&key), "{key} is not in the ledger");
        assert!(status.id.ends_with(&format!("/bulk{i}")), "{} is out of order at {i}", status.id);
        let names: Vec<&str> = status.artifacts.iter().map(|a| &*a.name).collect();
        assert_eq!(names, [route(i).as_str()], "bulk{i} reports another route");
        assert_eq!(status.phase, Phase::Healthy, "bulk{i}");
    }
    let table = lab.ip(&["-4", "route", "show", "table", "1000"]);
    assert_eq!(table.lines().filter(|l| l.contains("via 192.168.50.2")).count(), 1500);

    let again = lab.reconcile(&yaml).await;
    assert!(again.operations.is_empty(), "second apply did {} operations", again.operations.len());
}
