//! The ownership invariant as a property, on the real kernel (issue 33 §2): for random host
//! states (artifacts routerd created, and foreign routes, fwmark rules, nft tables and addresses
//! in and outside routerd's names and ranges) and random configs, the deletes `reconcile`
//! performs are exactly the deletes `plan` listed, each of an artifact the ledger recorded, and
//! every foreign artifact is still there afterwards.
//!
//! Kinds covered: the netlink kinds (links, addresses, routes, route tables, fwmark rules), nft
//! tables and sysctls of the lab config. The seed is fixed; `ROUTERD_OWNERSHIP_SEED` and
//! `ROUTERD_OWNERSHIP_CASES` pick others (`just property-ownership` runs more cases).

use std::collections::BTreeSet;

use crate::support::{LAB, Lab, deletes, ops, without};
use routerd_engine::result::OperationResult;

/// Cases in CI: each builds a lab and reconciles twice (about a second).
const CASES: u64 = 8;

/// Resources of the lab config that others do not refer to, so any subset of them may go.
const REMOVABLE: [(&str, &str); 7] = [
    ("Sysctl", "ipv4-forwarding"),
    ("IPv4StaticRoute", "default-v4"),
    ("IPv4PolicyRoute", "guests-via-wan"),
    ("IPv4ReversePathFilter", "wan-rpf"),
    ("IPv4SourceNAT", "lan-masquerade"),
    ("ExposeService", "client-web"),
    ("PathMTUPolicy", "wan-mss"),
];

/// Tables and marks the configs use for the policy route.
const CONFIG_TABLES: [u32; 3] = [100, 101, 150];
const CONFIG_MARKS: [u32; 3] = [0x100, 0x101, 0x1a0];

/// One of `items`.
fn pick<T: Copy>(rng: &mut fastrand::Rng, items: &[T]) -> T {
    items[rng.usize(..items.len())]
}

/// The lab config with the policy route on a random table and mark, less a random subset of
/// [`REMOVABLE`].
fn random_config(rng: &mut fastrand::Rng) -> String {
    let table = pick(rng, &CONFIG_TABLES);
    let mark = pick(rng, &CONFIG_MARKS);
    let mut yaml = LAB
        .replace("        table: 100\n", &format!("        table: {table}\n"))
        .replace("        mark: 0x100\n", &format!("        mark: {mark:#x}\n"));
    for (kind, name) in REMOVABLE {
        if rng.usize(..3) == 0 {
            yaml = without(&yaml, kind, name);
        }
    }
    yaml
}

/// A host object routerd did not make, and how to find it again.
struct Foreign {
    add: Vec<String>,
    /// Command whose output holds `expect` while the object exists.
    show: Vec<&'static str>,
    expect: String,
    nft: bool,
}

/// Up to eight foreign objects: routes with routerd's protocol or another in the config's
/// tables and in `main`, rules inside the fwmark range (exact and masked) and outside it, nft
/// tables named `routerd_*` and not, an address on a link routerd manages.
fn random_foreign(rng: &mut fastrand::Rng, case: u64) -> Vec<Foreign> {
    let mut out = Vec::new();
    for i in 0..=rng.usize(..8) {
        let foreign = match rng.usize(..4) {
            0 => {
                let table = match rng.usize(..4) {
                    0 => "main".to_string(),
                    _ => pick(rng, &CONFIG_TABLES).to_string(),
                };
                let proto = pick(rng, &["208", "static", "boot"]);
                let dst = format!("10.{}.{i}.0/24", 100 + case % 100);
                let add = ["route", "add", &dst, "dev", "lan0", "table", &table, "proto", proto];
                Foreign {
                    add: add.map(String::from).to_vec(),
                    show: vec!["route", "show", "table", "all"],
                    expect: dst,
                    nft: false,
                }
            }
            1 => {
                // Marks the configs never use, so no foreign rule is a desired one.
                let mark = match rng.usize(..4) {
                    0 => "0x150/0xff0".to_string(),
                    1 => "0x1c0/0xffffff00".to_string(),
                    2 => "0x200".to_string(),
                    _ => format!("{:#x}", 0x110 + rng.usize(..0x80)),
                };
                let table = pick(rng, &["100", "main", "200"]).to_string();
                let priority = (20_000 + i).to_string();
                let add = ["rule", "add", "fwmark", &mark, "lookup", &table, "priority", &priority];
                Foreign {
                    add: add.map(String::from).to_vec(),
                    show: vec!["rule", "show"],
                    expect: format!("{priority}:\tfrom all fwmark {mark} lookup {table}"),
                    nft: false,
                }
            }
            2 => {
                let name = format!("{}{i}", pick(rng, &["routerd_foreign", "foreign"]));
                Foreign {
                    add: ["add", "table", "inet", &name].map(String::from).to_vec(),
                    show: vec!["list", "tables"],
                    expect: format!("table inet {name}\n"),
                    nft: true,
                }
            }
            _ => {
                let address = format!("10.250.{i}.1/24");
                Foreign {
                    add: ["addr", "add", &address, "dev", "lan0"].map(String::from).to_vec(),
                    show: vec!["addr", "show", "dev", "lan0"],
                    expect: address,
                    nft: false,
                }
            }
        };
        out.push(foreign);
    }
    out
}

fn run_on(lab: &Lab, f: &Foreign, args: &[&str]) -> String {
    if f.nft { lab.nft(args) } else { lab.ip(args) }
}

#[tokio::test]
async fn reconcile_deletes_exactly_what_plan_listed_and_only_what_the_ledger_records() {
    let seed = std::env::var("ROUTERD_OWNERSHIP_SEED").ok().and_then(|s| s.parse().ok());
    let cases = std::env::var("ROUTERD_OWNERSHIP_CASES").ok().and_then(|s| s.parse().ok());
    let mut rng = fastrand::Rng::with_seed(seed.unwrap_or(0x0a11_0c8e_2026));
    let mut deleted = 0;
    for case in 0..cases.unwrap_or(CASES) {
        let lab = Lab::new();
        let first = random_config(&mut rng);
        let applied = lab.reconcile(&first).await;
        assert!(
            ops(&applied, OperationResult::Failed).is_empty(),
            "case {case}: {:#?}",
            applied.operations
        );
        let foreign = random_foreign(&mut rng, case);
        for f in &foreign {
            let add: Vec<&str> = f.add.iter().map(String::as_str).collect();
            run_on(&lab, f, &add);
        }
        let next = random_config(&mut rng);
        let ledger: BTreeSet<String> = lab.ledger_keys().into_iter().collect();

        let plan = lab.plan(&next, false).await;
        let doc = lab.reconcile(&next).await;
        let context = || {
            format!(
                "case {case}\nforeign: {:?}\nconfig:\n{next}",
                foreign.iter().map(|f| &f.add).collect::<Vec<_>>()
            )
        };
        assert!(
            ops(&doc, OperationResult::Failed).is_empty(),
            "{}\n{:#?}",
            context(),
            doc.operations
        );
        let (planned, done) =
            (deletes(&plan, OperationResult::Planned), deletes(&doc, OperationResult::Done));
        assert_eq!(done, planned, "{}", context());
        for d in &done {
            let key = d.trim_start_matches("delete ");
            assert!(
                ledger.contains(key),
                "{}\ndeleted {key}, not in the ledger {ledger:#?}",
                context()
            );
        }
        for f in &foreign {
            let shown = run_on(&lab, f, &f.show);
            assert!(shown.contains(&f.expect), "{}\n{:?} gone:\n{shown}", context(), f.add);
        }
        deleted += done.len();
    }
    // The configs really differ: some runs delete something.
    assert!(deleted > 0, "no case deleted anything");
}
