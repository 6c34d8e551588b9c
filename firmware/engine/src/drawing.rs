//! Drawings of a plan (the web UI's graph page, `routerd plan -o dot`): every artifact while
//! the plan is small; past that, one node per resource kind, or one resource with its
//! neighbours (issue 33 §3: a 1,000-route plan drawn whole is a picture 600,000 pixels wide).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use routerd_graph::dot::Place;
use routerd_graph::{Graph, Key};
use routerd_host::ArtifactKind;

use crate::item::HostItem;
use crate::plan::EnginePlan;

/// Above this many resources of one kind around a resource, they are drawn as one node.
const NEIGHBOURS_OF_A_KIND_UP_TO: usize = 6;

/// What to draw.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GraphView {
    /// Every artifact when the plan has at most `up_to`, else one node per resource kind.
    Auto {
        /// The most artifacts drawn one by one.
        up_to: usize,
    },
    /// Every artifact.
    Whole,
    /// The artifacts of the resource with this ID (`net.routerd.net/v1alpha1/Interface/lan`),
    /// and the artifacts they depend on or that depend on them, one node per neighbouring
    /// resource (per resource kind where a kind has many).
    Resource(String),
}

/// What a drawing shows, as decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// Every artifact.
    Whole,
    /// One node per resource kind.
    Kinds,
    /// One resource and its neighbours.
    Resource,
}

/// A plan drawn as Graphviz DOT.
#[derive(Clone, Debug)]
pub struct Drawing {
    /// The DOT text.
    pub dot: String,
    /// What it shows.
    pub shown: Shown,
    /// Artifacts in the plan (either graph).
    pub artifacts: usize,
    /// For [`Shown::Resource`]: the resource's own artifacts (0: no such resource in the plan).
    pub own: usize,
}

/// Draws `plan` as `view` asks, titled `title`.
pub fn draw(plan: &EnginePlan, title: &str, view: &GraphView) -> Drawing {
    let (current, intended) = (&plan.current, plan.intended());
    let artifacts = keys(current, intended).len();
    let whole = |shown| Drawing {
        dot: plan.ops.to_dot(current, intended, title),
        shown,
        artifacts,
        own: 0,
    };
    match view {
        GraphView::Whole => whole(Shown::Whole),
        GraphView::Auto { up_to } if artifacts <= *up_to => whole(Shown::Whole),
        GraphView::Auto { .. } => {
            let counts = resources_per_kind(current, intended);
            let dot = plan.ops.to_dot_grouped(current, intended, title, |item| {
                let kind = resource_kind(&item.owner);
                let n = counts.get(kind).map_or(0, BTreeSet::len);
                Place::Group(kind_group(kind, n))
            });
            Drawing { dot, shown: Shown::Kinds, artifacts, own: 0 }
        }
        GraphView::Resource(id) => around(plan, title, id, artifacts),
    }
}

/// [`GraphView::Resource`].
fn around(plan: &EnginePlan, title: &str, id: &str, artifacts: usize) -> Drawing {
    let (current, intended) = (&plan.current, plan.intended());
    let item_of = |key: &Key<ArtifactKind>| intended.get(key).or_else(|| current.get(key));
    let all: Vec<&HostItem> = keys(current, intended).into_iter().filter_map(item_of).collect();
    let own: HashSet<&Key<ArtifactKind>> =
        all.iter().filter(|i| &*i.owner == id).map(|i| &i.key).collect();
    // Neighbours: what the resource's artifacts depend on, and what depends on them.
    let mut near: HashSet<&Key<ArtifactKind>> = HashSet::new();
    for item in &all {
        if own.contains(&item.key) {
            near.extend(item.deps.iter().map(|d| &d.key));
        } else if item.deps.iter().any(|d| own.contains(&d.key)) {
            near.insert(&item.key);
        }
    }
    // Neighbouring resources by kind: a kind with many is folded into one node.
    let mut near_owners: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for item in all.iter().filter(|i| near.contains(&i.key) && !own.contains(&i.key)) {
        near_owners.entry(resource_kind(&item.owner)).or_default().insert(&item.owner);
    }
    let dot = plan.ops.to_dot_grouped(current, intended, title, |item| {
        if own.contains(&item.key) {
            return Place::Own;
        }
        if !near.contains(&item.key) {
            return Place::Hidden;
        }
        let kind = resource_kind(&item.owner);
        match near_owners.get(kind).map_or(0, BTreeSet::len) {
            n if n > NEIGHBOURS_OF_A_KIND_UP_TO => Place::Group(kind_group(kind, n)),
            _ if item.owner.is_empty() => Place::Group("orphans".into()),
            _ => Place::Group(short_id(&item.owner).to_string()),
        }
    });
    Drawing { dot, shown: Shown::Resource, artifacts, own: own.len() }
}

/// Every key of either graph.
fn keys<'a>(
    current: &'a Graph<HostItem>,
    intended: &'a Graph<HostItem>,
) -> BTreeSet<&'a Key<ArtifactKind>> {
    current.keys().chain(intended.keys()).collect()
}

/// The owners of the artifacts of either graph, by resource kind.
fn resources_per_kind<'a>(
    current: &'a Graph<HostItem>,
    intended: &'a Graph<HostItem>,
) -> BTreeMap<&'a str, BTreeSet<&'a str>> {
    let mut out: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for item in current.items().chain(intended.items()) {
        out.entry(resource_kind(&item.owner)).or_default().insert(&item.owner);
    }
    out
}

/// The name of the node of a resource kind: `IPv4StaticRoute (1,000 resources)`.
fn kind_group(kind: &str, resources: usize) -> String {
    match (kind, resources) {
        ("", _) => "orphans (no resource)".to_string(),
        (kind, 1) => format!("{kind} (1 resource)"),
        (kind, n) => format!("{kind} ({n} resources)"),
    }
}

/// The kind of resource ID `apiVersion/Kind/name` (`""` for an orphan's empty owner).
fn resource_kind(owner: &str) -> &str {
    owner.rsplit('/').nth(1).unwrap_or("")
}

/// `Kind/name` of resource ID `group/version/Kind/name`.
fn short_id(owner: &str) -> &str {
    let mut cut = owner.rmatch_indices('/').map(|(i, _)| i);
    match (cut.next(), cut.next()) {
        (Some(_), Some(i)) => &owner[i + 1..],
        _ => owner,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_ids_are_cut_at_their_slashes() {
        let id = "net.routerd.net/v1alpha1/IPv4StaticRoute/r1";
        assert_eq!((resource_kind(id), short_id(id)), ("IPv4StaticRoute", "IPv4StaticRoute/r1"));
        assert_eq!((resource_kind(""), short_id("")), ("", ""));
        assert_eq!(kind_group("Interface", 1), "Interface (1 resource)");
    }
}
