//! Adopted artifacts over time, on the real kernel: ownership the ledger records is not
//! forgotten while the artifact is away (issue 34 §4).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use routerd_engine::plan::Desired;
use routerd_engine::result::{ConditionType, OperationResult, Reason};
use routerd_engine::{ConfigInput, Phase, ResultDocument, Session};
use routerd_ledger::{Attributes, EntryState, Ledger, LedgerChange, LedgerEntry, Origin};
use routerd_test_kit::netns::Netns;

use crate::support::{LAB, Lab, condition, deletes, ops, resource, wait_for};

/// How long a link move takes to show in the namespace's link list, at most.
const MOVE_DEADLINE: Duration = Duration::from_secs(10);

/// The adoption candidates of `doc` as `kind/name`.
fn candidates(doc: &ResultDocument) -> Vec<String> {
    doc.adoption_candidates.iter().map(|c| format!("{}/{}", c.kind, c.name)).collect()
}

/// The adopted address of the LAN (made by hand before routerd ran, then adopted).
const LAN_ADDRESS: (&str, &str) = ("linux.ipv4.address", "lan0/192.168.50.1/24");

/// The link that leaves and comes back.
const LAN_LINK: (&str, &str) = ("linux.link", "lan0");

/// A table routerd creates.
const FILTER_TABLE: (&str, &str) = ("nft.table", "inet/routerd_filter_home");

/// An engine session kept open across reconciles, with the lab config's desired state built
/// once, as the daemon runs them.
struct Daemonlike {
    session: Session,
    input: ConfigInput,
    desired: Arc<Desired>,
}

impl Daemonlike {
    async fn open(lab: &Lab) -> Self {
        let session = lab.session(false).await;
        let input = ConfigInput::parse(LAB, "router.yaml").expect("config parses");
        let desired = session.desired_for(&input.config);
        Self { session, input, desired }
    }

    async fn reconcile(&mut self) -> ResultDocument {
        let now = SystemTime::now();
        self.session.reconcile_with(&self.input, &self.desired, now).await.expect("reconcile runs")
    }

    async fn adopt(&self) -> ResultDocument {
        self.session.adopt(&self.input, SystemTime::now(), true).await.expect("adopt runs")
    }

    /// Ledger entries as `kind/name`.
    fn ledger_keys(&self) -> Vec<String> {
        let entries = self.session.ledger().entries().expect("ledger reads");
        entries.iter().map(|e| e.key()).collect()
    }

    /// Asserts that the ledger holds `(kind, name)` as owned, with `origin`.
    fn assert_owned(&self, (kind, name): (&str, &str), origin: Origin, when: &str) {
        let entry = self.session.ledger().get(kind, name).expect("ledger reads");
        let entry = entry.unwrap_or_else(|| {
            panic!("{when}: the ledger forgot {kind}/{name}: {:#?}", self.ledger_keys())
        });
        assert_eq!(
            (entry.state, entry.origin),
            (EntryState::Owned, origin),
            "{when}: {kind}/{name}"
        );
    }

    async fn plan(&self) -> ResultDocument {
        self.session.plan(&self.input, SystemTime::now(), false).await.expect("plan runs")
    }
}

/// Issue 34 §4: `lan0` adopted, moved into another namespace and back, was a candidate again.
#[tokio::test]
async fn an_adopted_link_moved_out_of_the_namespace_and_back_stays_owned() {
    let lab = Lab::new();
    // A namespace of the test's own beside the lab's.
    let other = Netns::new("rde-x");
    // The LAN existed before routerd ran (its address made by hand); the first reconcile brings
    // the host to the config and `adopt --apply` records the link and the address.
    lab.ip(&["addr", "add", "192.168.50.1/24", "dev", "lan0"]);
    // One session throughout, as the daemon keeps one.
    let mut daemon = Daemonlike::open(&lab).await;
    let first = daemon.reconcile().await;
    assert!(ops(&first, OperationResult::Failed).is_empty(), "{:#?}", first.operations);
    let adopted = daemon.adopt().await;
    let adopted: Vec<String> =
        adopted.adopted_artifacts.iter().map(|a| format!("{}/{}", a.kind, a.name)).collect();
    for (kind, name) in [LAN_LINK, LAN_ADDRESS] {
        assert!(adopted.contains(&format!("{kind}/{name}")), "{adopted:#?}");
    }
    daemon.assert_owned(LAN_LINK, Origin::Adopted, "after adopt");
    daemon.assert_owned(LAN_ADDRESS, Origin::Adopted, "after adopt");
    daemon.assert_owned(FILTER_TABLE, Origin::Created, "after the first reconcile");
    let settled = daemon.reconcile().await;
    assert!(settled.operations.is_empty(), "{:#?}", settled.operations);
    assert_eq!(settled.phase, Phase::Healthy, "{:#?}", candidates(&settled));
    let ledger_before = daemon.ledger_keys();

    // The link leaves: moved into another namespace. Meanwhile a table routerd created is
    // deleted by hand, as before: a missing created artifact is created again.
    lab.ip(&["link", "set", "lan0", "netns", other.name()]);
    wait_for("lan0 leaves the router namespace", MOVE_DEADLINE, || {
        (!lab.router.has_link("lan0") && other.has_link("lan0")).then_some(())
    });
    lab.nft(&["delete", "table", "inet", "routerd_filter_home"]);
    let plan = daemon.plan().await;
    assert!(deletes(&plan, OperationResult::Planned).is_empty(), "{:#?}", plan.operations);
    let away = daemon.reconcile().await;
    assert!(ops(&away, OperationResult::Failed).is_empty(), "{:#?}", away.operations);
    assert!(
        deletes(&away, OperationResult::Done).is_empty(),
        "nothing is deleted: {:#?}",
        away.operations
    );
    assert!(
        ops(&away, OperationResult::Done)
            .contains(&"create nft.table/inet/routerd_filter_home".to_string()),
        "{:#?}",
        away.operations
    );
    assert!(candidates(&away).is_empty(), "{:#?}", candidates(&away));
    // Reported, not acted on: the link is awaited, what lives on it waits with it.
    let lan = resource(&away, "Interface/lan");
    assert_eq!(condition(lan, ConditionType::Blocked).map(|c| c.1), Some(Reason::LinkMissing));
    let address = resource(&away, "IPv4StaticAddress/lan-v4");
    assert_eq!(
        condition(address, ConditionType::Blocked).map(|c| c.1),
        Some(Reason::DependencyPending)
    );
    assert!(!lab.router.has_link("lan0"), "routerd made a link it cannot own");
    assert_eq!(daemon.ledger_keys(), ledger_before, "no ledger entry dropped while lan0 is away");
    daemon.assert_owned(LAN_LINK, Origin::Adopted, "while lan0 is away");
    daemon.assert_owned(LAN_ADDRESS, Origin::Adopted, "while lan0 is away");
    daemon.assert_owned(FILTER_TABLE, Origin::Created, "after its re-create");

    // It comes back, down and without its address (the kernel drops both on a move).
    other.ip(&["link", "set", "lan0", "netns", lab.router.name()]);
    wait_for("lan0 returns to the router namespace", MOVE_DEADLINE, || {
        lab.router.has_link("lan0").then_some(())
    });
    let back = daemon.reconcile().await;
    assert!(ops(&back, OperationResult::Failed).is_empty(), "{:#?}", back.operations);
    assert!(deletes(&back, OperationResult::Done).is_empty(), "{:#?}", back.operations);
    assert!(candidates(&back).is_empty(), "owned again, no new adoption: {:#?}", candidates(&back));
    // Repaired under the ownership it had: the link brought up, the address put back.
    let done = ops(&back, OperationResult::Done);
    assert!(done.contains(&"modify linux.link/lan0".to_string()), "{done:#?}");
    assert!(
        done.contains(&"create linux.ipv4.address/lan0/192.168.50.1/24".to_string()),
        "{done:#?}"
    );
    assert!(lab.ip(&["-j", "addr", "show", "dev", "lan0"]).contains("192.168.50.1"));
    assert_eq!(daemon.ledger_keys(), ledger_before);
    daemon.assert_owned(LAN_LINK, Origin::Adopted, "after lan0 returned");
    daemon.assert_owned(LAN_ADDRESS, Origin::Adopted, "after lan0 returned");
    for id in ["Interface/lan", "IPv4StaticAddress/lan-v4"] {
        assert_eq!(resource(&back, id).phase, Phase::Healthy, "{id}");
    }
    // In sync: nothing left to do, nothing to adopt.
    let again = daemon.reconcile().await;
    assert!(again.operations.is_empty(), "{:#?}", again.operations);
    assert_eq!(again.phase, Phase::Healthy, "{:#?}", candidates(&again));
}

/// The lab plus VLAN 20 on `lan` (`lan0.20`), a link routerd creates.
fn lab_with_vlan() -> String {
    format!(
        "{LAB}
    - apiVersion: net.routerd.net/v1alpha1
      kind: VLANInterface
      metadata:
        name: guest
      spec:
        interface: lan
        vlanID: 20
"
    )
}

/// A failed create of an owned artifact that is missing leaves its entry: before, prepare had
/// rewritten it as a pending create, which the failure then dropped.
#[tokio::test]
async fn an_owned_link_whose_create_again_fails_keeps_its_ledger_entry() {
    let lab = Lab::new();
    let config = lab_with_vlan();
    let vlan_ok = lab
        .router
        .ip_ok(&["link", "add", "link", "lan0", "name", "lan0.20", "type", "vlan", "id", "20"]);
    if vlan_ok {
        // Adopted, then renamed by hand for a while: routerd's create of lan0.20 fails, VLAN
        // 20 being in use on lan0 under the other name.
        lab.reconcile(&config).await;
        lab.adopt(&config, true).await;
        lab.ip(&["link", "set", "lan0.20", "down"]);
        lab.ip(&["link", "set", "lan0.20", "name", "g20"]);
    } else {
        // A kernel without 8021q: the ledger records the VLAN as adopted (as a kernel with it
        // would), and its create fails with the kernel's "Unknown device type".
        lab.reconcile(&config).await;
        let entry = LedgerEntry {
            kind: "linux.link".into(),
            name: "lan0.20".into(),
            owner: "net.routerd.net/v1alpha1/VLANInterface/guest".into(),
            co_owners: Vec::new(),
            origin: Origin::Adopted,
            state: EntryState::Owned,
            generation: 1,
            recorded_at: 0,
            attributes: Attributes::of(&"lan0.20"),
        };
        Ledger::open(&lab.ledger).expect("ledger").apply(&[LedgerChange::Put(entry)]).expect("put");
    }
    let doc = lab.reconcile(&config).await;
    assert_eq!(
        ops(&doc, OperationResult::Failed),
        ["create linux.link/lan0.20"],
        "{:#?}",
        doc.operations
    );
    let entry = lab.ledger_entry("linux.link", "lan0.20").expect("the ledger keeps lan0.20");
    assert_eq!((entry.state, entry.origin), (EntryState::Owned, Origin::Adopted));
    if vlan_ok {
        lab.ip(&["link", "set", "g20", "down"]);
        lab.ip(&["link", "set", "g20", "name", "lan0.20"]);
        let doc = lab.reconcile(&config).await;
        assert!(ops(&doc, OperationResult::Failed).is_empty(), "{:#?}", doc.operations);
        assert!(candidates(&doc).is_empty(), "{:#?}", candidates(&doc));
    }
}
