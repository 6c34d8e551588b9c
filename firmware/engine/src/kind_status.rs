//! What a controller crate reports of its resources beyond phase (ADR 0013): conditions of
//! its own vocabulary (`Published`, `Loaded`) and status fields (a `DNSZone`'s `servers[]`),
//! computed by [`crate::registry::KindRender::status`] from the facts of one plan or
//! reconcile. Pure: the facts are what the engine already observed; a crate never reaches the
//! host from here.

use std::cell::OnceCell;
use std::sync::Arc;

use routerd_host::{Artifact, ArtifactSpec, ControllerCode};
use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::intent::Intent;
use crate::item::{HostItem, graph_key};
use crate::plan::EnginePlan;
use crate::result::{ConditionStatus, OperationRecord};

/// One artifact of the resource: what it wants, what is there, what was done.
#[derive(Clone, Copy, Debug)]
pub struct ArtifactFacts<'a> {
    /// Artifact kind (`dns.rrset`).
    pub kind: &'a str,
    /// Artifact name.
    pub name: &'a str,
    /// The desired attributes of a controller crate's artifact; `None` for built-in kinds.
    pub desired: Option<&'a Value>,
    /// The attributes observed before this run (a controller crate's artifact); `None` when
    /// absent or a built-in kind. After a reconcile, [`ArtifactFacts::operation`] says what
    /// changed since.
    pub observed: Option<&'a Value>,
    /// Present on the host before this run (any kind).
    pub present: bool,
    /// Recorded as owned in the ledger.
    pub owned: bool,
    /// The operation on it in this run: planned (plan, dry run) or as executed (reconcile),
    /// with its result and error; `None` when nothing was to do.
    pub operation: Option<&'a OperationRecord>,
}

/// One artifact of a kind across the whole host or config ([`StatusFacts::current_of`],
/// [`StatusFacts::desired_of`]).
#[derive(Clone, Copy, Debug)]
pub struct KindItem<'a> {
    /// Artifact name.
    pub name: &'a str,
    /// Attributes of a controller crate's artifact (`Value::Null` for built-in kinds).
    pub attributes: &'a Value,
    /// The resource ID that declares it; empty on the host side for an artifact no resource
    /// declares.
    pub owner: &'a str,
}

/// The facts [`crate::registry::KindRender::status`] reads for one resource.
pub struct StatusFacts<'a> {
    /// The resource's artifacts, in intent order.
    pub artifacts: Vec<ArtifactFacts<'a>>,
    /// Whether the operations ran (a reconcile) rather than being planned.
    pub executed: bool,
    index: &'a KindIndex<'a>,
}

impl<'a> StatusFacts<'a> {
    /// Every artifact of `kind` observed on the host before this run, in name order:
    /// declared, orphaned and foreign alike.
    pub fn current_of(&self, kind: &str) -> &[KindItem<'a>] {
        self.index.current().get(kind).map_or(&[], Vec::as_slice)
    }

    /// Every artifact of `kind` the config declares, in name order.
    pub fn desired_of(&self, kind: &str) -> &[KindItem<'a>] {
        self.index.desired().get(kind).map_or(&[], Vec::as_slice)
    }
}

/// A condition of a controller crate's vocabulary. The engine stamps its time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindCondition {
    /// The condition (`Published`).
    pub type_: ControllerCode,
    /// `True`, `False`, `Unknown`.
    pub status: ConditionStatus,
    /// Stable reason (`TsigBadKey`).
    pub reason: ControllerCode,
    /// Human message, naming the artifact and server concerned.
    pub message: String,
}

/// What a controller crate reports of one resource.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KindStatus {
    /// Conditions, listed after the engine's own.
    pub conditions: Vec<KindCondition>,
    /// The kind's status fields (a JSON object), or `None`.
    pub fields: Option<Value>,
}

/// The artifacts of the plan by kind, built once per report on first use.
pub(crate) struct KindIndex<'a> {
    plan: &'a EnginePlan,
    current: OnceCell<FxHashMap<&'a str, Vec<KindItem<'a>>>>,
    desired: OnceCell<FxHashMap<&'a str, Vec<KindItem<'a>>>>,
}

impl<'a> KindIndex<'a> {
    pub(crate) fn new(plan: &'a EnginePlan) -> Self {
        Self { plan, current: OnceCell::new(), desired: OnceCell::new() }
    }

    fn current(&self) -> &FxHashMap<&'a str, Vec<KindItem<'a>>> {
        self.current.get_or_init(|| {
            let plan = self.plan;
            // The current graph holds what the plan acts on; orphans kept (foreign objects
            // reported, never touched) are only in the orphan list, unread ones routerd does
            // not own in `unobserved`.
            let kept = plan.orphans.iter().filter(|o| !plan.current.contains(&graph_key(&o.key)));
            let items = plan.current.items().map(|i| (&*i.artifact, &*i.owner));
            let items = items.chain(plan.unobserved.iter().map(|a| (&**a, "")));
            by_kind(items.chain(kept.filter_map(|o| {
                Some((&**o.observed.as_ref()?, o.owner.as_deref().unwrap_or_default()))
            })))
        })
    }

    fn desired(&self) -> &FxHashMap<&'a str, Vec<KindItem<'a>>> {
        self.desired.get_or_init(|| {
            by_kind(self.plan.desired.items.iter().map(|i| (&*i.artifact, &*i.owner)))
        })
    }

    /// The facts of a resource whose intents are `here` and whose operations are `ops`.
    pub(crate) fn facts(
        &'a self,
        here: &[&(&'a Intent, &'a HostItem)],
        ops: &[&'a Arc<OperationRecord>],
        executed: bool,
    ) -> StatusFacts<'a> {
        let ops: FxHashMap<(&str, &str), &OperationRecord> =
            ops.iter().map(|o| ((&*o.kind, &*o.name), &***o)).collect();
        let artifacts = here
            .iter()
            .map(|(intent, item)| {
                let current = self.plan.current.get(&item.key);
                let kind = intent.kind().as_str();
                let name = &*item.key.name;
                ArtifactFacts {
                    kind,
                    name,
                    desired: attributes(&item.artifact.spec),
                    observed: current.and_then(|c| attributes(&c.artifact.spec)),
                    present: current.is_some(),
                    owned: self.plan.owned.contains(intent.key()),
                    operation: ops.get(&(kind, name)).copied(),
                }
            })
            .collect();
        StatusFacts { artifacts, executed, index: self }
    }
}

static NULL: Value = Value::Null;

fn attributes(spec: &ArtifactSpec) -> Option<&Value> {
    match spec {
        ArtifactSpec::External(e) => Some(&e.attributes),
        _ => None,
    }
}

fn by_kind<'a>(
    items: impl Iterator<Item = (&'a Artifact, &'a str)>,
) -> FxHashMap<&'a str, Vec<KindItem<'a>>> {
    let mut out: FxHashMap<&str, Vec<KindItem<'_>>> = FxHashMap::default();
    for (artifact, owner) in items {
        out.entry(artifact.key.kind.as_str()).or_default().push(KindItem {
            name: artifact.key.name.as_str(),
            attributes: attributes(&artifact.spec).unwrap_or(&NULL),
            owner,
        });
    }
    for list in out.values_mut() {
        list.sort_by(|a, b| a.name.cmp(b.name));
    }
    out
}
