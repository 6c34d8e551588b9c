//! The pure half of a reconcile, in two steps. [`Desired::new`]: rendered intents → the
//! de-duplicated intents and the intended graph (depends on the config only, so it is built once
//! per config and reused by a reconcile's verification and by every resync). [`plan`]: desired
//! state, observation, ledger and the time → the current graph, the ordered operations,
//! orphans and adoption candidates. Reads no clock and no host state: the caller reads the
//! clock once and hands it in ([`PlanInput::now`]), so the same inputs give the same plan.
//!
//! Ownership policy is applied here, by what enters the current graph: an observed artifact is
//! put there only if a resource declares it (so it may be modified) or if the cleanup policy
//! proves it ours (so it may be deleted). Anything else on the host is invisible to the
//! reconciler and therefore never touched.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use routerd_graph::{Graph, Plan, Selection};
use routerd_host::{Artifact, ArtifactKey, ArtifactKind, ArtifactSpec, AttributeDiff};
use routerd_ledger::{EntryHead, EntryState, LedgerChange};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::EngineError;
use crate::intent::{Action, ApplyWith, Intent, is_inventory_backed};
use crate::item::{HostItem, Support, graph_deps, graph_key, reads_clock};
use crate::policy::{Cleanup, cleanup, in_routerd_namespace};
use crate::reason::Reason;
use crate::render::Rendered;

/// What the config asks for, independent of the host.
///
/// Shape: `intents[i]` and `items[i]` belong together; `by_key` lists the indices in key order
/// (the order of the intended graph, of the observation map and of the current graph), so
/// planning joins them in one ordered walk instead of a lookup per intent.
pub struct Desired {
    /// Intents after de-duplication and protection, in render order.
    pub intents: Vec<Intent>,
    /// The intended graph item of each intent. A dependency waiting out a `when.state` `for`
    /// duration is measured at time 0 here, a placeholder: [`plan`] builds the items of
    /// [`Desired::clocked`] again for its `now`, and apply reconciles toward those.
    pub items: Vec<HostItem>,
    /// Indices into `intents` of the intents whose dependencies read the time
    /// ([`crate::item::reads_clock`]), in render order.
    pub clocked: Vec<usize>,
    /// Indices into `intents`, in key order.
    pub by_key: Vec<usize>,
    /// Desired state.
    pub intended: Graph<HostItem>,
    /// Intents that cannot be applied, with the condition reason and message.
    pub blocked: BTreeMap<ArtifactKey, (Reason, String)>,
    /// Per-resource warnings of rendering and de-duplication (conflicts, protection).
    pub warnings: BTreeMap<String, Vec<String>>,
    /// Numbered route tables holding intended routes: in use, never orphans.
    tables_in_use: BTreeSet<String>,
    /// The runtime values the intents were rendered with (ADR 0008); empty for a render from
    /// the config alone.
    pub runtime: crate::runtime::RuntimeValues,
    /// What the render reads from an observation ([`Rendered::reads`]).
    pub reads: crate::runtime::RuntimeReads,
}

impl Desired {
    /// De-duplicates `rendered` (see `dedupe`), turns `spec.reconcile.protectedInterfaces`
    /// (kernel names in `protected_ifnames`) into observe-only intents, and builds the intended
    /// graph. `support` says whether this build can apply an intent.
    pub fn new(
        rendered: Rendered,
        protected_ifnames: &BTreeSet<String>,
        support: &dyn Fn(&Intent) -> Support,
    ) -> Self {
        let Rendered { intents, mut warnings, reads } = rendered;
        let (intents, conflicts) = dedupe(intents, protected_ifnames, &mut warnings);
        let items: Vec<HostItem> = intents.iter().map(|i| item(i, 0)).collect();
        let clocked =
            (0..intents.len()).filter(|&i| reads_clock(&intents[i].dependencies)).collect();
        let mut by_key: Vec<usize> = (0..intents.len()).collect();
        by_key.sort_unstable_by(|&a, &b| intents[a].key().cmp(intents[b].key()));
        let intended: Graph<HostItem> = by_key.iter().map(|&i| items[i].clone()).collect();
        // A numbered table holding intended routes (static routes in table N) is in use, not
        // an orphan, even when no policy declares it as a route-table artifact.
        let tables_in_use = intents
            .iter()
            .filter_map(|i| match &i.artifact.spec {
                ArtifactSpec::Route(r) if i.kind() == ArtifactKind::Ipv4Route => {
                    Some(r.table.to_string())
                }
                _ => None,
            })
            .collect();
        let blocked = blocked(&intents, support, conflicts);
        let runtime = Default::default();
        Self {
            intents,
            items,
            clocked,
            by_key,
            intended,
            blocked,
            warnings,
            tables_in_use,
            runtime,
            reads,
        }
    }
}

/// Everything the planner reads besides the desired state.
pub struct PlanInput<'a> {
    /// Host artifacts by key, as observed.
    pub observed: &'a BTreeMap<ArtifactKey, Arc<Artifact>>,
    /// Ledger entries.
    pub ledger: &'a [EntryHead],
    /// Whether a kind can be listed on the host.
    pub observes: &'a dyn Fn(ArtifactKind) -> bool,
    /// The time to plan for, in milliseconds since the Unix epoch
    /// ([`crate::state::now_ms`], read once by the caller): what a `when.state` `for`
    /// duration is measured against, in this plan and in the apply that runs it.
    pub now: u64,
}

/// The planner's result.
pub struct EnginePlan {
    /// The desired state planned against (shared with the session that built it).
    pub desired: Arc<Desired>,
    /// Host state the reconciler may act on.
    pub current: Graph<HostItem>,
    /// Operations in execution order.
    pub ops: Plan<HostItem>,
    /// Orphans (reported; those with [`Cleanup::Delete`] are in `current` and get deleted).
    pub orphans: Vec<OrphanVerdict>,
    /// Present desired artifacts not owned in the ledger.
    pub candidates: Vec<Candidate>,
    /// Keys the ledger proves we own.
    pub owned: FxHashSet<ArtifactKey>,
    /// Desired artifacts absent from the host that no configurator can create there, with the
    /// condition reason and message (`uncreatable`): reported `Blocked` and never planned as
    /// a create, so plan never says `create` for what reconcile cannot create. Also the
    /// unrecorded objects of a kind that keeps them (`ArtifactKind::keeps_unowned`) that
    /// differ from the config: never modified (`ForeignObject`).
    pub unavailable: BTreeMap<ArtifactKey, (Reason, String)>,
    /// Observed artifacts of unknown state (their zone could not be read) the ledger does not
    /// hold: planned as absent, left out of `current` and the orphans; kept here for the
    /// status a controller crate reports ([`crate::kind_status`]).
    pub unobserved: Vec<Arc<Artifact>>,
    /// The time planned for ([`PlanInput::now`]); the Result document measures `for`
    /// durations at it too.
    pub now: u64,
    /// The intended graph when this plan changed the desired one (a link it awaits is external
    /// here; a dependency with a `for` duration is measured at `now`); `None`: the desired
    /// state's own. Read it through [`EnginePlan::intended`].
    adjusted: Option<Graph<HostItem>>,
}

impl EnginePlan {
    /// The intended graph this plan was made against: apply must reconcile toward the same.
    pub fn intended(&self) -> &Graph<HostItem> {
        self.adjusted.as_ref().unwrap_or(&self.desired.intended)
    }
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

/// Plans a reconcile of `desired` against the observed host and the ledger. See the module
/// docs.
///
/// Errors: [`EngineError::Cycle`] when the intents' dependencies loop.
pub fn plan(desired: &Arc<Desired>, input: &PlanInput<'_>) -> Result<EnginePlan, EngineError> {
    let owned: FxHashSet<ArtifactKey> = input
        .ledger
        .iter()
        .filter(|e| e.state == EntryState::Owned)
        .filter_map(|e| ArtifactKind::parse(&e.kind).map(|k| ArtifactKey::new(k, e.name.clone())))
        .collect();
    // Owner of every ledger entry by (kind, name), built once: removing a large part of a
    // config makes thousands of orphans.
    let owners: BTreeMap<(&str, &str), &str> = input
        .ledger
        .iter()
        .map(|e| ((e.kind.as_str(), e.name.as_str()), e.owner.as_str()))
        .collect();

    // The items whose dependencies read the time, built for this plan's `now`: in the
    // current graph and in the intended one, so the graph measures their `for` durations at
    // `now` here and in the apply that follows. The others are the desired state's own.
    let clocked: BTreeMap<usize, HostItem> = desired
        .clocked
        .iter()
        .map(|&i| {
            let deps = graph_deps(&desired.intents[i].dependencies, input.now);
            (i, HostItem { deps, ..desired.items[i].clone() })
        })
        .collect();

    // One ordered walk over the intents (key order) and the observation (key order): the
    // current graph in key order, the orphans and the adoption candidates.
    let mut current_items: Vec<HostItem> = Vec::with_capacity(input.observed.len());
    let mut orphans = Vec::new();
    let mut candidates = Vec::new();
    let mut unavailable = BTreeMap::new();
    let mut awaited = Vec::new();
    let mut unobserved = Vec::new();
    let mut wanted = desired
        .by_key
        .iter()
        .map(|&i| (i, &desired.intents[i], clocked.get(&i).unwrap_or(&desired.items[i])));
    let mut next_wanted = wanted.next();
    let mut observed = input.observed.iter().peekable();
    loop {
        let take_wanted = match (next_wanted, observed.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((_, intent, _)), Some((key, _))) => intent.key() <= *key,
        };
        if take_wanted {
            let Some((position, intent, desired_item)) = next_wanted else { break };
            next_wanted = wanted.next();
            let obs = observed.next_if(|(key, _)| *key == intent.key()).map(|(_, a)| a);
            // Unread and not routerd's: planned as absent, so the create that publishes it
            // records it (the ledger keeps an owned one, unknown, rather than forget it).
            let obs = match obs {
                Some(o) if o.spec.is_unobserved() && !owned.contains(intent.key()) => {
                    unobserved.push(Arc::clone(o));
                    None
                }
                obs => obs,
            };
            if intent.apply_with == ApplyWith::Routerd {
                // Engine-internal artifacts have no host state: they exist as soon as declared.
                current_items.push(desired_item.clone());
            } else if obs.is_none()
                && let Some(missing) = uncreatable(intent)
            {
                match missing.until {
                    // Nothing waits for a sysctl: planned as present, no operation.
                    Until::Never => current_items.push(desired_item.clone()),
                    // What runs on the link waits for it, as for an observed link.
                    Until::Appears => awaited.push(desired_item.key.clone()),
                }
                unavailable.insert(intent.key().clone(), (missing.reason, missing.message));
            } else if let Some(obs) = obs {
                // Owner and dependencies are the intent's: shared with the intended item.
                current_items.push(HostItem { artifact: Arc::clone(obs), ..desired_item.clone() });
                let unowned = !owned.contains(intent.key());
                if unowned
                    && intent.kind().keeps_unowned(&intent.key().name)
                    && !intent.artifact.spec.drift(&obs.spec).is_empty()
                {
                    // Someone else's object with other data: observed only, never modified,
                    // until the config matches it and it is adopted.
                    awaited.push(desired_item.key.clone());
                    let message = format!(
                        "{} is there with other data and the ledger does not record it: routerd \
                         leaves it until the config matches it and it is adopted",
                        intent.key()
                    );
                    unavailable.insert(intent.key().clone(), (Reason::ForeignObject, message));
                }
                if intent.action == Action::Ensure && is_inventory_backed(intent.kind()) && unowned
                {
                    candidates.push((
                        position,
                        Candidate {
                            intent: intent.clone(),
                            observed: Arc::clone(obs),
                            diff: intent.artifact.spec.drift(&obs.spec),
                        },
                    ));
                }
            }
            continue;
        }
        let Some((key, obs)) = observed.next() else { break };
        if key.kind == ArtifactKind::Ipv4RouteTable && desired.tables_in_use.contains(&key.name) {
            continue;
        }
        let is_owned = owned.contains(key);
        if !is_owned && obs.spec.is_unobserved() {
            unobserved.push(Arc::clone(obs));
            continue;
        }
        if !is_owned && !in_routerd_namespace(obs) {
            continue;
        }
        let foreign_inside = key.kind == ArtifactKind::Ipv4RouteTable
            && holds_unowned_routes(input.observed, &owned, &key.name);
        let verdict = cleanup(obs, is_owned, foreign_inside);
        if matches!(verdict, Cleanup::Delete { .. }) {
            current_items.push(HostItem {
                key: graph_key(key),
                artifact: Arc::clone(obs),
                owner: Arc::from(""),
                apply_with: key.kind.apply_with(),
                deps: orphan_deps(key),
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
    // Candidates in render order, as the report lists them.
    candidates.sort_unstable_by_key(|(position, _)| *position);
    let candidates = candidates.into_iter().map(|(_, c)| c).collect();
    for e in input.ledger {
        let Some(kind) = ArtifactKind::parse(&e.kind) else { continue };
        let key = ArtifactKey::new(kind, e.name.clone());
        // Most entries name something on the host: that lookup first, without a graph key.
        if input.observed.contains_key(&key)
            || !(input.observes)(kind)
            || desired.intended.contains(&graph_key(&key))
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

    let current: Graph<HostItem> = current_items.into_iter().collect();
    // A link routerd cannot create is awaited like an observed one: external in this plan, so
    // it is never created and what depends on it waits. The copy is made only then, or when
    // an item is built for `now`.
    let adjusted = (!awaited.is_empty() || !clocked.is_empty()).then(|| {
        let mut graph = desired.intended.clone();
        for item in clocked.into_values() {
            graph.put(item);
        }
        for key in &awaited {
            if let Some(item) = graph.get(key).cloned() {
                graph.put(HostItem { external: true, ..item });
            }
        }
        graph
    });
    let intended = adjusted.as_ref().unwrap_or(&desired.intended);
    let ops = routerd_graph::plan(&current, intended, &needs_recreate, Selection::All)
        .map_err(|e| EngineError::Cycle(e.to_string()))?;
    Ok(EnginePlan {
        desired: Arc::clone(desired),
        current,
        ops,
        orphans,
        candidates,
        owned,
        unavailable,
        unobserved,
        now: input.now,
        adjusted,
    })
}

/// Ledger changes recording who declares each recorded artifact now: one
/// [`LedgerChange::SetOwners`] per entry whose owner or co-owners differ from its ensure
/// intent's (a resource sharing it was added or removed, or renamed). Entries nothing ensures
/// are left to orphan handling.
pub fn owner_changes(desired: &Desired, entries: &[EntryHead]) -> Vec<LedgerChange> {
    let mut changes = Vec::new();
    for e in entries {
        let Some(kind) = ArtifactKind::parse(&e.kind) else { continue };
        let found = desired.by_key.binary_search_by(|&i| {
            let key = desired.intents[i].key();
            (key.kind, key.name.as_str()).cmp(&(kind, e.name.as_str()))
        });
        let Ok(at) = found else { continue };
        let intent = &desired.intents[desired.by_key[at]];
        let same = intent.action == Action::Ensure
            && *intent.owner == *e.owner
            && intent.co_owners.len() == e.co_owners.len()
            && intent.co_owners.iter().zip(&e.co_owners).all(|(a, b)| **a == **b);
        if same || intent.action != Action::Ensure {
            continue;
        }
        changes.push(LedgerChange::SetOwners {
            kind: e.kind.clone(),
            name: e.name.clone(),
            owner: intent.owner.to_string(),
            co_owners: intent.co_owners.iter().map(|o| o.to_string()).collect(),
        });
    }
    changes
}

/// A desired artifact absent from the host that no configurator can create there.
struct Uncreatable {
    reason: Reason,
    message: String,
    until: Until,
}

/// How long an [`Uncreatable`] artifact stays so.
enum Until {
    /// Until the host changes outside routerd (a kernel or module); nothing waits for it.
    Never,
    /// Until it appears (a link plugged in or made by another tool, or moved back into the
    /// namespace); its dependents wait, and its ledger entry, if it has one, stays (ADR 0002).
    Appears,
}

/// Why the absent artifact `intent` ensures cannot be created on this host, if it cannot:
/// - a sysctl key without a `/proc/sys` file, when it depends on nothing still to come (a
///   per-link key of a link created in the same run appears with the link); the sysctl
///   inventory reads exactly the keys asked for, so absent means no file;
/// - a link of no kind (an `Interface`'s existing link): routerd creates only the links whose
///   kind it declares (VLANs, tunnels).
fn uncreatable(intent: &Intent) -> Option<Uncreatable> {
    if intent.action != Action::Ensure {
        return None;
    }
    match &intent.artifact.spec {
        ArtifactSpec::Sysctl(s) if intent.dependencies.is_empty() => Some(Uncreatable {
            reason: Reason::KeyMissing,
            message: format!(
                "no /proc/sys/{} on this kernel: the key is not applied (a key of another \
                 system, or of a module not loaded)",
                s.key.replace('.', "/")
            ),
            until: Until::Never,
        }),
        ArtifactSpec::Link(l) if l.kind.is_none() => Some(Uncreatable {
            reason: Reason::LinkMissing,
            message: format!(
                "waiting for link {} to appear: routerd manages an existing link, it does not \
                 create one",
                l.ifname
            ),
            until: Until::Appears,
        }),
        _ => None,
    }
}

/// Whether the host's IPv4 table `table` holds a route (of any protocol) that the ledger does
/// not record. Route names start with `<table>:`, so they are one range of the observation.
fn holds_unowned_routes(
    observed: &BTreeMap<ArtifactKey, Arc<Artifact>>,
    owned: &FxHashSet<ArtifactKey>,
    table: &str,
) -> bool {
    let prefix = format!("{table}:");
    observed
        .range(ArtifactKey::new(ArtifactKind::Ipv4Route, prefix.clone())..)
        .take_while(|(k, _)| k.kind == ArtifactKind::Ipv4Route && k.name.starts_with(&prefix))
        .any(|(k, _)| !owned.contains(k))
}

/// One intent per key (issue 33 §5: two resources may declare the same artifact):
/// - ensure beats observe; of several observe declarations the first is kept;
/// - ensure declarations with equal attributes share the artifact: the first declarer is the
///   intent's `owner`, the others its `co_owners`, and each gets a warning naming the others
///   (unless the artifact is [`Intent::common`]);
/// - ensure declarations that differ are a conflict: neither is applied. The intent is kept
///   as observe-only (so what is on the host is neither changed nor taken for an orphan), with
///   every declarer as owner, and its key is returned with a `Conflict` message naming the
///   declarers and the differing attributes.
///
/// Ensure intents on a protected interface become observe first.
fn dedupe(
    rendered: Vec<Intent>,
    protected: &BTreeSet<String>,
    warnings: &mut BTreeMap<String, Vec<String>>,
) -> (Vec<Intent>, BTreeMap<ArtifactKey, (Reason, String)>) {
    let mut out: Vec<Intent> = Vec::with_capacity(rendered.len());
    let mut index: FxHashMap<ArtifactKey, usize> =
        FxHashMap::with_capacity_and_hasher(rendered.len(), Default::default());
    // Further ensure declarations of a kept intent's key, by its index in `out`: rare, so
    // kept aside and settled once every declaration is known.
    let mut also: BTreeMap<usize, Vec<Intent>> = BTreeMap::new();
    for mut intent in rendered {
        let protected_ifname =
            artifact_ifname(&intent.artifact).filter(|i| protected.contains(*i)).map(str::to_owned);
        if let (Action::Ensure, Some(ifname)) = (intent.action, protected_ifname) {
            let msg = format!("{} is on protected interface {ifname}: observed only", intent.key());
            warnings.entry(intent.owner.to_string()).or_default().push(msg);
            intent.action = Action::Observe;
        }
        match index.get(intent.key()) {
            None => {
                index.insert(intent.key().clone(), out.len());
                out.push(intent);
            }
            Some(_) if intent.action != Action::Ensure => {} // observing adds nothing
            Some(&i) if out[i].action != Action::Ensure => out[i] = intent,
            Some(&i) => also.entry(i).or_default().push(intent),
        }
    }
    let mut conflicts = BTreeMap::new();
    for (i, others) in also {
        let first = &mut out[i];
        let mut declarers: Vec<(Arc<str>, Arc<Artifact>)> =
            vec![(Arc::clone(&first.owner), Arc::clone(&first.artifact))];
        for other in others {
            if !declarers.iter().any(|(owner, a)| *owner == other.owner && *a == other.artifact) {
                declarers.push((other.owner, other.artifact));
            }
        }
        let mut co_owners: Vec<Arc<str>> = Vec::new();
        for (owner, _) in &declarers[1..] {
            if *owner != first.owner && !co_owners.contains(owner) {
                co_owners.push(Arc::clone(owner));
            }
        }
        let differing =
            declarers[1..].iter().find(|(_, a)| a.spec != first.artifact.spec).map(|(owner, a)| {
                (Arc::clone(owner), differing_attributes(&first.artifact.spec, &a.spec))
            });
        let key = first.key().clone();
        match differing {
            None if first.common => {} // shared by design
            None => {
                let all: Vec<&str> =
                    std::iter::once(&*first.owner).chain(co_owners.iter().map(|o| &**o)).collect();
                for owner in &all {
                    let others: Vec<&str> = all.iter().copied().filter(|o| o != owner).collect();
                    if others.is_empty() {
                        continue; // one resource declaring it twice
                    }
                    let msg = format!(
                        "{key} is also declared, with the same attributes, by {}: shared, and \
                         deleted only when no resource declares it",
                        others.join(", ")
                    );
                    warnings.entry(owner.to_string()).or_default().push(msg);
                }
            }
            Some((other, attributes)) => {
                let msg = format!(
                    "{key} is declared by {} and by {other} with different {attributes}: neither \
                     is applied until they agree",
                    first.owner
                );
                for owner in std::iter::once(&first.owner).chain(&co_owners) {
                    warnings.entry(owner.to_string()).or_default().push(msg.clone());
                }
                first.action = Action::Observe;
                conflicts.insert(key, (Reason::Conflict, msg));
            }
        }
        first.co_owners = co_owners;
    }
    (out, conflicts)
}

/// The attributes in which two declarations of one artifact differ, for a `Conflict` message:
/// `priority (1000 / 2000)`, comma-separated.
fn differing_attributes(a: &ArtifactSpec, b: &ArtifactSpec) -> String {
    let mut names: Vec<String> = Vec::new();
    for d in a.drift(b).into_iter().chain(b.drift(a)) {
        if !names.iter().any(|n| n.starts_with(&format!("{} (", d.attribute))) {
            names.push(format!("{} ({} / {})", d.attribute, d.desired, d.observed));
        }
    }
    if names.is_empty() { "attributes".to_string() } else { names.join(", ") }
}

/// Intents this build cannot apply (besides the `conflicts` of [`dedupe`]), and the intents
/// that depend on them (transitively).
fn blocked(
    intents: &[Intent],
    support: &dyn Fn(&Intent) -> Support,
    conflicts: BTreeMap<ArtifactKey, (Reason, String)>,
) -> BTreeMap<ArtifactKey, (Reason, String)> {
    let mut blocked = conflicts;
    let applies = |i: &Intent| i.action != Action::Ensure || i.apply_with == ApplyWith::Routerd;
    for i in intents.iter().filter(|i| !applies(i)) {
        let (kind, with) = (i.kind(), i.apply_with);
        let why = match support(i) {
            Support::Applied => continue,
            Support::NoConfigurator => (
                Reason::ConfiguratorMissing,
                format!(
                    "no configurator for {kind} (applyWith {with}) in this build; it arrives in a \
                     later release"
                ),
            ),
            Support::Unresolved => (
                Reason::AttributesUnresolved,
                format!(
                    "{kind} (applyWith {with}) needs values the config alone does not give \
                     (see the resource's warnings); it is not applied until they can be resolved"
                ),
            ),
        };
        blocked.insert(i.key().clone(), why);
    }
    loop {
        let before = blocked.len();
        for i in intents {
            if blocked.contains_key(i.key()) {
                continue;
            }
            if let Some(d) = i.dependencies.iter().find(|d| blocked.contains_key(&d.key)) {
                let msg = format!("waits for {}, which cannot be applied yet", d.key);
                blocked.insert(i.key().clone(), (Reason::DependencyBlocked, msg));
            }
        }
        if blocked.len() == before {
            return blocked;
        }
    }
}

/// The intended item of `intent` (observe-only intents are external), its `for` durations
/// measured at `now` ([`graph_deps`]).
fn item(intent: &Intent, now: u64) -> HostItem {
    HostItem {
        key: graph_key(intent.key()),
        artifact: Arc::clone(&intent.artifact),
        owner: Arc::clone(&intent.owner),
        apply_with: intent.apply_with,
        deps: graph_deps(&intent.dependencies, now),
        external: intent.action != Action::Ensure,
    }
}

/// What an orphan needs until it is deleted: a dnsmasq section is removed through the dnsmasq
/// unit, so the unit (an orphan too, when nothing declares DHCP or DNS any more) goes after its
/// sections. An orphan of a kind that goes with another artifact (an RRset with its local
/// zone, [`ArtifactKind::goes_with`]) depends on it with the graph's `cascade`: deleted with
/// it, no operation of its own.
fn orphan_deps(key: &ArtifactKey) -> Arc<[routerd_graph::Dependency<HostItem>]> {
    if let Some(parent) = key.kind.goes_with(&key.name) {
        let description = format!("goes with {parent}");
        return Arc::new(
            [routerd_graph::Dependency::on(graph_key(&parent), description).cascade()],
        );
    }
    match key.kind {
        ArtifactKind::DnsmasqConfig => graph_deps(
            &[crate::intent::IntentDep {
                key: ArtifactKey::new(ArtifactKind::SystemdService, routerd_host::dnsmasq::UNIT),
                description: "dnsmasq serves the section".into(),
                recreate_when_modified: false,
                healthy: false,
                state: None,
                carries: None,
            }],
            0, // no `when.state`: the time is not read
        ),
        _ => Arc::new([]),
    }
}

/// The kind's recreate rule ([`routerd_host::ArtifactType::needs_recreate`]), as the graph asks
/// it: from the current item to the intended one.
fn needs_recreate(current: &HostItem, intended: &HostItem) -> bool {
    intended.artifact.spec.needs_recreate(&current.artifact.spec)
}

/// The link an artifact lives on, for `protectedInterfaces`.
fn artifact_ifname(a: &Artifact) -> Option<&str> {
    match &a.spec {
        ArtifactSpec::Link(l) => Some(&l.ifname),
        ArtifactSpec::Ip6Tunnel(t) => Some(&t.ifname),
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

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
