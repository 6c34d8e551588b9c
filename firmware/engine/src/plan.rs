//! The pure half of a reconcile: (intents, observation, ledger) → intended and current graphs,
//! the ordered operations, orphans and adoption candidates. Reads no clock and no host state.
//!
//! Ownership policy is applied here, by what enters the current graph: an observed artifact is
//! put there only if a resource declares it (so it may be modified) or if the cleanup policy
//! proves it ours (so it may be deleted). Anything else on the host is invisible to the
//! reconciler and therefore never touched.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use routerd_graph::{Graph, Plan, Selection};
use routerd_host::{Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, AttributeDiff};
use routerd_ledger::{EntryState, LedgerEntry};

use crate::error::EngineError;
use crate::intent::{Action, ApplyWith, Intent, is_inventory_backed};
use crate::item::{HostItem, graph_deps, graph_key};
use crate::policy::{Cleanup, cleanup, in_routerd_namespace};
use crate::render::Rendered;

/// Everything the planner reads.
pub struct PlanInput<'a> {
    /// Rendered intents and warnings.
    pub rendered: &'a Rendered,
    /// Host artifacts by key, as observed.
    pub observed: &'a BTreeMap<ArtifactKey, Arc<Artifact>>,
    /// Ledger entries.
    pub ledger: &'a [LedgerEntry],
    /// Kernel names of `spec.reconcile.protectedInterfaces`.
    pub protected_ifnames: &'a BTreeSet<String>,
    /// Whether an intent has a configurator in this build.
    pub supports: &'a dyn Fn(&Intent) -> bool,
    /// Whether a kind can be listed on the host.
    pub observes: &'a dyn Fn(ArtifactKind) -> bool,
    /// The backend's recreate rule.
    pub needs_recreate: &'a dyn Fn(&HostItem, &HostItem) -> bool,
}

/// The planner's result.
pub struct EnginePlan {
    /// Intents after de-duplication and protection, in render order.
    pub intents: Vec<Intent>,
    /// Desired state.
    pub intended: Graph<HostItem>,
    /// Host state the reconciler may act on.
    pub current: Graph<HostItem>,
    /// Operations in execution order.
    pub ops: Plan<HostItem>,
    /// Intents that cannot be applied, with the condition reason and message.
    pub blocked: BTreeMap<ArtifactKey, (&'static str, String)>,
    /// Orphans (reported; those with [`Cleanup::Delete`] are in `current` and get deleted).
    pub orphans: Vec<OrphanVerdict>,
    /// Present desired artifacts not owned in the ledger.
    pub candidates: Vec<Candidate>,
    /// Keys the ledger proves we own.
    pub owned: BTreeSet<ArtifactKey>,
    /// Per-resource warnings added by planning (conflicts, protection).
    pub warnings: BTreeMap<String, Vec<String>>,
}

/// An orphan with the policy's verdict.
#[derive(Clone, Debug)]
pub struct OrphanVerdict {
    /// The artifact key.
    pub key: ArtifactKey,
    /// As observed; `None` when only the ledger knows it.
    pub observed: Option<Arc<Artifact>>,
    /// Owner recorded in the ledger.
    pub owner: Option<String>,
    /// Delete or keep; `None` for ledger entries whose artifact is gone (the entry is dropped).
    pub cleanup: Option<Cleanup>,
}

/// A desired artifact present on the host without a ledger entry.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The intent declaring it.
    pub intent: Intent,
    /// As observed.
    pub observed: Arc<Artifact>,
    /// Differences (empty: adoptable).
    pub diff: Vec<AttributeDiff>,
}

/// Plans a reconcile. See the module docs.
///
/// Errors: [`EngineError::Cycle`] when the intents' dependencies loop.
pub fn plan(input: &PlanInput<'_>) -> Result<EnginePlan, EngineError> {
    let mut warnings: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let intents = dedupe(&input.rendered.intents, input.protected_ifnames, &mut warnings);
    let owned: BTreeSet<ArtifactKey> = input
        .ledger
        .iter()
        .filter(|e| e.state == EntryState::Owned)
        .filter_map(|e| ArtifactKind::parse(&e.kind).map(|k| ArtifactKey::new(k, e.name.clone())))
        .collect();
    let intended_keys: BTreeSet<&ArtifactKey> = intents.iter().map(Intent::key).collect();

    let mut intended = Graph::new();
    let mut current = Graph::new();
    for intent in &intents {
        let desired = item(&intent.artifact, intent);
        if intent.apply_with == ApplyWith::Routerd {
            // Engine-internal artifacts have no host state: they exist as soon as declared.
            current.put(desired.clone());
        } else if let Some(obs) = input.observed.get(intent.key()) {
            // Owner and dependencies are the intent's: shared with the intended item.
            current.put(HostItem { artifact: Arc::clone(obs), ..desired.clone() });
        }
        intended.put(desired);
    }

    // A numbered table holding intended routes (static routes in table N) is in use, not an
    // orphan, even when no policy declares it as a route-table artifact.
    let tables_in_use: BTreeSet<String> = intents
        .iter()
        .filter_map(|i| match &i.artifact.spec {
            ArtifactSpec::Route(r) if i.kind() == ArtifactKind::Ipv4Route => {
                Some(r.table.to_string())
            }
            _ => None,
        })
        .collect();
    // Owner of every ledger entry by (kind, name), built once: removing a large part of a
    // config makes thousands of orphans.
    let owners: BTreeMap<(&str, &str), &str> = input
        .ledger
        .iter()
        .map(|e| ((e.kind.as_str(), e.name.as_str()), e.owner.as_str()))
        .collect();
    let mut orphans = Vec::new();
    for (key, obs) in input.observed {
        if intended_keys.contains(key)
            || (key.kind == ArtifactKind::Ipv4RouteTable && tables_in_use.contains(&key.name))
        {
            continue;
        }
        let is_owned = owned.contains(key);
        if !is_owned && !in_routerd_namespace(obs) {
            continue;
        }
        let verdict = cleanup(obs, is_owned);
        if matches!(verdict, Cleanup::Delete { .. }) {
            current.put(HostItem {
                key: graph_key(key),
                artifact: Arc::clone(obs),
                owner: Arc::from(""),
                apply_with: apply_with_for(key.kind),
                deps: Arc::new([]),
                external: false,
            });
        }
        orphans.push(OrphanVerdict {
            key: key.clone(),
            observed: Some(obs.clone()),
            owner: owners.get(&(key.kind.as_str(), key.name.as_str())).map(|o| o.to_string()),
            cleanup: Some(verdict),
        });
    }
    for e in input.ledger {
        let Some(kind) = ArtifactKind::parse(&e.kind) else { continue };
        let key = ArtifactKey::new(kind, e.name.clone());
        if intended_keys.contains(&key)
            || input.observed.contains_key(&key)
            || !(input.observes)(kind)
        {
            continue;
        }
        orphans.push(OrphanVerdict {
            key,
            observed: None,
            owner: Some(e.owner.clone()),
            cleanup: None,
        });
    }

    let blocked = blocked(&intents, input);
    let ops = routerd_graph::plan(&current, &intended, input.needs_recreate, Selection::All)
        .map_err(|e| EngineError::Cycle(e.to_string()))?;
    let candidates = candidates(&intents, input.observed, &owned);
    Ok(EnginePlan {
        intents,
        intended,
        current,
        ops,
        blocked,
        orphans,
        candidates,
        owned,
        warnings,
    })
}

/// First intent per key wins. An identical second declaration is shared silently; a different
/// one is a conflict reported on the later resource. Ensure beats observe. Ensure intents on a
/// protected interface become observe.
fn dedupe(
    rendered: &[Intent],
    protected: &BTreeSet<String>,
    warnings: &mut BTreeMap<String, Vec<String>>,
) -> Vec<Intent> {
    let mut out: Vec<Intent> = Vec::new();
    let mut index: BTreeMap<ArtifactKey, usize> = BTreeMap::new();
    for intent in rendered {
        let mut intent = intent.clone();
        let protected_ifname =
            artifact_ifname(&intent.artifact).filter(|i| protected.contains(*i)).map(str::to_owned);
        if let (Action::Ensure, Some(ifname)) = (intent.action, protected_ifname) {
            let msg = format!("{} is on protected interface {ifname}: observed only", intent.key());
            warnings.entry(intent.owner.clone()).or_default().push(msg);
            intent.action = Action::Observe;
        }
        match index.get(intent.key()) {
            None => {
                index.insert(intent.key().clone(), out.len());
                out.push(intent);
            }
            Some(&i) => {
                let first = &mut out[i];
                if first.action == Action::Observe && intent.action == Action::Ensure {
                    *first = intent;
                } else if intent.action == Action::Ensure
                    && first.artifact.spec != intent.artifact.spec
                {
                    let msg = format!(
                        "{} is also declared by {} with other attributes; that declaration wins",
                        intent.key(),
                        first.owner
                    );
                    warnings.entry(intent.owner.clone()).or_default().push(msg);
                }
            }
        }
    }
    out
}

/// Intents without a configurator, and the intents that depend on them (transitively).
fn blocked(
    intents: &[Intent],
    input: &PlanInput<'_>,
) -> BTreeMap<ArtifactKey, (&'static str, String)> {
    let mut blocked = BTreeMap::new();
    let unsupported = |i: &&Intent| {
        i.action == Action::Ensure && i.apply_with != ApplyWith::Routerd && !(input.supports)(i)
    };
    for i in intents.iter().filter(unsupported) {
        let msg = format!(
            "no configurator for {} (applyWith {}) in this build; it arrives in a later release",
            i.kind(),
            i.apply_with
        );
        blocked.insert(i.key().clone(), ("ConfiguratorMissing", msg));
    }
    loop {
        let before = blocked.len();
        for i in intents {
            if blocked.contains_key(i.key()) {
                continue;
            }
            if let Some(d) = i.dependencies.iter().find(|d| blocked.contains_key(&d.key)) {
                let msg = format!("waits for {}, which cannot be applied yet", d.key);
                blocked.insert(i.key().clone(), ("DependencyBlocked", msg));
            }
        }
        if blocked.len() == before {
            return blocked;
        }
    }
}

fn candidates(
    intents: &[Intent],
    observed: &BTreeMap<ArtifactKey, Arc<Artifact>>,
    owned: &BTreeSet<ArtifactKey>,
) -> Vec<Candidate> {
    intents
        .iter()
        .filter(|i| i.action == Action::Ensure && is_inventory_backed(i.kind()))
        .filter(|i| !owned.contains(i.key()))
        .filter_map(|i| {
            let obs = observed.get(i.key())?;
            Some(Candidate {
                intent: i.clone(),
                observed: obs.clone(),
                diff: i.artifact.spec.drift(&obs.spec),
            })
        })
        .collect()
}

/// The intended item of `intent` (observe-only intents are external).
fn item(artifact: &Arc<Artifact>, intent: &Intent) -> HostItem {
    HostItem {
        key: graph_key(&artifact.key),
        artifact: Arc::clone(artifact),
        owner: Arc::from(intent.owner.as_str()),
        apply_with: intent.apply_with,
        deps: graph_deps(&intent.dependencies),
        external: intent.action != Action::Ensure,
    }
}

/// The configurator family that serves a kind, for orphans no intent names.
pub(crate) fn apply_with_for(kind: ArtifactKind) -> ApplyWith {
    use ArtifactKind as K;
    match kind {
        K::NftTable => ApplyWith::Nftnl,
        K::Sysctl => ApplyWith::Procfs,
        K::SystemdService => ApplyWith::Systemd,
        K::File => ApplyWith::Files,
        _ => ApplyWith::Rtnetlink,
    }
}

/// The link an artifact lives on, for `protectedInterfaces`.
fn artifact_ifname(a: &Artifact) -> Option<&str> {
    match &a.spec {
        ArtifactSpec::Link(l) => Some(&l.ifname),
        ArtifactSpec::Address(x) => Some(&x.ifname),
        ArtifactSpec::Route(r) => r.oif.as_deref(),
        ArtifactSpec::Sysctl(s) => {
            let rest = s
                .key
                .strip_prefix("net.ipv4.conf.")
                .or_else(|| s.key.strip_prefix("net.ipv6.conf."))?;
            rest.rsplit_once('.').map(|(ifname, _)| ifname)
        }
        _ => None,
    }
}

/// The graph key of an intent (re-exported for report building).
pub(crate) fn key_of(intent: &Intent) -> routerd_graph::Key<ArtifactKind> {
    graph_key(intent.key())
}
