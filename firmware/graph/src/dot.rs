//! Graphviz DOT export of a graph and of a plan (a transition, colored by operation).
//!
//! Output only: nodes are items (clustered by subgraph), edges point from an item to the items it
//! depends on. Dependencies on absent items are drawn as dotted "missing" nodes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::graph::Graph;
use crate::item::{Item, Key};
use crate::plan::Plan;
use crate::state::{ItemStatus, Operation};

/// Color of nodes created by a plan.
pub const CREATE_COLOR: &str = "darkgreen";
/// Color of nodes modified by a plan.
pub const MODIFY_COLOR: &str = "blue";
/// Color of nodes deleted by a plan.
pub const DELETE_COLOR: &str = "red";
/// Color of nodes recreated (deleted, then created) by a plan.
pub const RECREATE_COLOR: &str = "purple";
/// Color of pending nodes.
pub const PENDING_COLOR: &str = "gray";
/// Color of nodes with an operation in progress.
pub const IN_PROGRESS_COLOR: &str = "orange";

/// Collects nodes per subgraph and edges, then prints them.
struct DotWriter {
    clusters: BTreeMap<Option<String>, Vec<String>>,
    edges: Vec<String>,
    drawn: BTreeSet<String>,
}

impl DotWriter {
    fn new() -> Self {
        Self { clusters: BTreeMap::new(), edges: Vec::new(), drawn: BTreeSet::new() }
    }

    fn node(&mut self, subgraph: Option<&str>, id: &str, label: &str, attrs: &str) {
        self.drawn.insert(id.to_string());
        let line = format!("\"{}\" [label=\"{}\"{attrs}];", escape(id), escape(label));
        self.clusters.entry(subgraph.map(str::to_string)).or_default().push(line);
    }

    fn deps_of<I: Item>(&mut self, item: &I) {
        let from = item.key().to_string();
        for dep in item.deps() {
            let to = dep.key.to_string();
            let mut attrs = format!("tooltip=\"{}\"", escape(&dep.description));
            if dep.must_satisfy.is_some() {
                attrs.push_str(", arrowhead=diamond");
            }
            if dep.recreate_when_modified {
                attrs.push_str(", style=bold");
            }
            self.edges.push(format!("\"{}\" -> \"{}\" [{attrs}];", escape(&from), escape(&to)));
        }
    }

    fn finish(mut self, title: &str, targets: BTreeSet<String>) -> String {
        for missing in targets.difference(&self.drawn.clone()) {
            let label = format!("{missing}\n(missing)");
            self.node(None, missing, &label, ", style=dotted");
        }
        let mut out = String::new();
        let _ = writeln!(out, "digraph \"{}\" {{", escape(title));
        let _ = writeln!(out, "  label=\"{}\";", escape(title));
        out.push_str("  rankdir=BT;\n  node [shape=box, style=rounded];\n");
        for (index, (subgraph, nodes)) in self.clusters.iter().enumerate() {
            let indent = match subgraph {
                Some(name) => {
                    let _ = writeln!(out, "  subgraph \"cluster_{index}\" {{");
                    let _ = writeln!(out, "    label=\"{}\";", escape(name));
                    "    "
                }
                None => "  ",
            };
            for node in nodes {
                let _ = writeln!(out, "{indent}{node}");
            }
            if subgraph.is_some() {
                out.push_str("  }\n");
            }
        }
        for edge in &self.edges {
            let _ = writeln!(out, "  {edge}");
        }
        out.push_str("}\n");
        out
    }
}

impl<I: Item> Graph<I> {
    /// Renders the graph as Graphviz DOT.
    ///
    /// Shape: one node per item, clustered by subgraph, labelled with [`Item::label`]; external
    /// items dashed; failed red, pending gray, in-progress orange (current-state graphs). Keys
    /// with a state but no item (pending, failed create) appear as dashed nodes.
    /// Side effects: none.
    pub fn to_dot(&self, title: &str) -> String {
        let mut dot = DotWriter::new();
        let mut targets = BTreeSet::new();
        for item in self.items() {
            let key = item.key();
            let (attrs, note) = self.state_style(&key, item.is_external());
            let label = match note {
                Some(note) => format!("{}\n{note}", item.label()),
                None => item.label(),
            };
            dot.node(self.subgraph_of(&key), &key.to_string(), &label, &attrs);
            dot.deps_of(item);
            targets.extend(item.deps().iter().map(|dep| dep.key.to_string()));
        }
        for (key, state) in self.states().filter(|(key, _)| !self.contains(key)) {
            let (color, note) = match &state.state {
                ItemStatus::Failed => (DELETE_COLOR, "failed"),
                _ => (PENDING_COLOR, "pending"),
            };
            let label = format!("{key}\n{note}");
            dot.node(None, &key.to_string(), &label, &format!(", style=dashed, color={color}"));
        }
        dot.finish(title, targets)
    }

    fn state_style(&self, key: &Key<I::Kind>, external: bool) -> (String, Option<String>) {
        let mut attrs = String::new();
        if external {
            attrs.push_str(", style=\"rounded,dashed\"");
        }
        let note = match self.state(key).map(|state| &state.state) {
            Some(ItemStatus::Failed) => {
                attrs.push_str(&format!(", color={DELETE_COLOR}"));
                Some("failed".to_string())
            }
            Some(ItemStatus::InProgress { op }) => {
                attrs.push_str(&format!(", color={IN_PROGRESS_COLOR}"));
                Some(format!("{op} in progress"))
            }
            Some(ItemStatus::Pending { .. }) => {
                attrs.push_str(&format!(", color={PENDING_COLOR}"));
                Some("pending".to_string())
            }
            Some(ItemStatus::Created) | None => None,
        };
        (attrs, note)
    }
}

impl<I: Item> Plan<I> {
    /// Renders the transition from `current` to `intended` as Graphviz DOT, marking each item
    /// with the operation the plan runs on it.
    ///
    /// Shape: nodes for every key of either graph; created green, modified blue, deleted red,
    /// recreated purple, pending gray and dashed, untouched black. Edges follow the intended
    /// value of an item, or its current value when it is not intended.
    /// Side effects: none.
    pub fn to_dot(&self, current: &Graph<I>, intended: &Graph<I>, title: &str) -> String {
        let summary = self.summary();
        let pending: BTreeSet<&Key<I::Kind>> = self.pending.iter().map(|(key, _)| key).collect();
        let keys: BTreeSet<&Key<I::Kind>> = current.keys().chain(intended.keys()).collect();
        let mut dot = DotWriter::new();
        let mut targets = BTreeSet::new();
        for key in keys {
            let Some(item) = intended.get(key).or_else(|| current.get(key)) else { continue };
            let subgraph = intended.subgraph_of(key).or_else(|| current.subgraph_of(key));
            let (label, attrs) = planned_style(item, summary.get(key), pending.contains(key));
            dot.node(subgraph, &key.to_string(), &label, &attrs);
            dot.deps_of(item);
            targets.extend(item.deps().iter().map(|dep| dep.key.to_string()));
        }
        dot.finish(title, targets)
    }
}

/// The label and extra attributes of `item`'s node in a plan: the operation `op` on it, or
/// pending, or external (dashed).
fn planned_style<I: Item>(item: &I, op: Option<&Operation>, pending: bool) -> (String, String) {
    match op {
        Some(op) => (format!("{}\n{op}", item.label()), format!(", color={}", op_color(*op))),
        None if pending => (
            format!("{}\npending", item.label()),
            format!(", style=\"rounded,dashed\", color={PENDING_COLOR}"),
        ),
        None if item.is_external() => (item.label(), ", style=\"rounded,dashed\"".to_string()),
        None => (item.label(), String::new()),
    }
}

/// Where an item goes in a grouped drawing ([`Plan::to_dot_grouped`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// A node of its own, drawn as [`Plan::to_dot`] draws it.
    Own,
    /// Merged into the one node of the group with this name.
    Group(String),
    /// Not drawn; edges to and from it neither.
    Hidden,
}

/// What a group node counts.
#[derive(Default)]
struct Tally {
    items: usize,
    ops: BTreeMap<Operation, usize>,
    pending: usize,
}

impl<I: Item> Plan<I> {
    /// [`Plan::to_dot`] with items merged or left out by `place`, so that a plan of thousands
    /// of items can be drawn in a readable form: one node per resource kind, or one resource
    /// with its neighbours.
    ///
    /// Shape: [`Place::Own`] items as in [`Plan::to_dot`]; one box per [`Place::Group`] name,
    /// labelled with the name, its item count and the operations on them, coloured by the
    /// operation when all its changed items share one (bold when it holds changes of several);
    /// one edge per pair of drawn nodes that any of their items' dependencies join (none
    /// within a group); a dotted "missing" node for a dependency on a key neither graph holds.
    /// Side effects: none.
    pub fn to_dot_grouped(
        &self,
        current: &Graph<I>,
        intended: &Graph<I>,
        title: &str,
        place: impl Fn(&I) -> Place,
    ) -> String {
        let summary = self.summary();
        let pending: BTreeSet<&Key<I::Kind>> = self.pending.iter().map(|(key, _)| key).collect();
        let keys: BTreeSet<&Key<I::Kind>> = current.keys().chain(intended.keys()).collect();
        let mut dot = DotWriter::new();
        let mut node_of: BTreeMap<&Key<I::Kind>, Option<String>> = BTreeMap::new();
        let mut groups: BTreeMap<String, Tally> = BTreeMap::new();
        let mut drawn_items: Vec<(&I, String)> = Vec::new();
        for key in keys {
            let Some(item) = intended.get(key).or_else(|| current.get(key)) else { continue };
            let node = match place(item) {
                Place::Hidden => None,
                Place::Own => {
                    let subgraph = intended.subgraph_of(key).or_else(|| current.subgraph_of(key));
                    let (label, attrs) =
                        planned_style(item, summary.get(key), pending.contains(key));
                    let id = key.to_string();
                    dot.node(subgraph, &id, &label, &attrs);
                    Some(id)
                }
                Place::Group(name) => {
                    let tally = groups.entry(name.clone()).or_default();
                    tally.items += 1;
                    match summary.get(key) {
                        Some(op) => *tally.ops.entry(*op).or_default() += 1,
                        None if pending.contains(key) => tally.pending += 1,
                        None => {}
                    }
                    Some(format!("group/{name}"))
                }
            };
            if let Some(id) = &node {
                drawn_items.push((item, id.clone()));
            }
            node_of.insert(key, node);
        }
        for (name, tally) in &groups {
            let plural = if tally.items == 1 { "" } else { "s" };
            let mut label = format!("{name}\n{} item{plural}", tally.items);
            let mut changes: Vec<String> =
                tally.ops.iter().map(|(op, n)| format!("{n} {op}")).collect();
            if tally.pending > 0 {
                changes.push(format!("{} pending", tally.pending));
            }
            if !changes.is_empty() {
                label.push('\n');
                label.push_str(&changes.join(", "));
            }
            let attrs = match (tally.ops.keys().next(), tally.ops.len()) {
                (Some(op), 1) => format!(", color={}", op_color(*op)),
                (_, 0) if tally.pending > 0 => format!(", color={PENDING_COLOR}"),
                (_, 0) => String::new(),
                _ => ", style=\"rounded,bold\"".to_string(),
            };
            dot.node(None, &format!("group/{name}"), &label, &attrs);
        }
        let mut edges: BTreeSet<(&str, String)> = BTreeSet::new();
        let mut targets = BTreeSet::new();
        for (item, from) in &drawn_items {
            for dep in item.deps() {
                match node_of.get(&dep.key) {
                    Some(Some(to)) if to != from => {
                        edges.insert((from.as_str(), to.clone()));
                    }
                    Some(_) => {}
                    None => {
                        let to = dep.key.to_string();
                        targets.insert(to.clone());
                        edges.insert((from.as_str(), to));
                    }
                }
            }
        }
        for (from, to) in edges {
            dot.edges.push(format!("\"{}\" -> \"{}\";", escape(from), escape(&to)));
        }
        dot.finish(title, targets)
    }
}

/// The DOT color marking `op`.
pub fn op_color(op: Operation) -> &'static str {
    match op {
        Operation::Create => CREATE_COLOR,
        Operation::Modify => MODIFY_COLOR,
        Operation::Delete => DELETE_COLOR,
        Operation::Recreate => RECREATE_COLOR,
    }
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}
