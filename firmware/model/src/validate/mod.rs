//! Semantic validation of parsed resources: per-kind field checks (each spec type's
//! [`Validate`], right below the type in [`crate::spec`]) and cross-resource rules (unique IDs,
//! ifnames and fwmarks; dangling references).
//!
//! Every error is located through the source map and all are collected; nothing stops at the
//! first problem. Resources that failed to parse are skipped, but their names still count as
//! declared so they do not cause follow-up "not declared" errors. Pure; no I/O.

pub(crate) mod check;
mod names;

pub(crate) use names::check_name;

use std::collections::HashMap;

use serde_json::Value;

use crate::config::{ReconcileSpec, Resource};
use crate::diag::Diagnostics;
use crate::kind::{KindSpec, ResourceKind, ResourceSpec};
use crate::spec::net::{InterfaceSpec, VlanInterfaceSpec};
use crate::spec::routing::StatePolicySpec;
pub(crate) use check::Check;
use check::{Index, Target, dangling_message};

/// Names of every resource written in the file, whether or not it parsed.
#[derive(Default)]
pub(crate) struct Declared {
    names: Vec<(ResourceKind, String)>,
}

impl Declared {
    /// Records `(kind, metadata.name)` of a raw resource value, if its kind is known.
    pub(crate) fn add(&mut self, value: &Value) {
        let declared = || {
            let kind = ResourceKind::parse(value.get("kind")?.as_str()?)?;
            let name = value.get("metadata")?.get("name")?.as_str()?;
            Some((kind, name.to_owned()))
        };
        self.names.extend(declared());
    }

    fn count(&self, kind: ResourceKind) -> usize {
        self.names.iter().filter(|(k, _)| *k == kind).count()
    }
}

/// Validates the successfully parsed `resources` (paired with their index in
/// `spec.resources`) and `spec.reconcile`, recording every problem in `diag`.
pub(crate) fn run(
    resources: &[(usize, Resource)],
    reconcile: Option<&ReconcileSpec>,
    declared: &Declared,
    diag: &mut Diagnostics<'_>,
) {
    let index = build_index(resources, declared);
    unique_ids(resources, diag);
    unique_ifnames(resources, diag);
    unambiguous_interface_names(resources, diag);
    unique_marks(resources, diag);
    unique_state_variables(resources, diag);
    if let Some(reconcile) = reconcile {
        protected_zones(reconcile, &index, diag);
    }
    for (i, resource) in resources {
        let mut check = Check::new(diag, &index, resource, *i);
        resource.spec.validator().validate(&mut check);
    }
    crate::external::run_config_checks(diag, resources);
}

/// A resource kind's own checks: the parts of its spec serde cannot check (address syntax and
/// family, ranges, references, fields another field's value requires). Implemented for every
/// spec type, right below the type in its [`crate::spec`] module, with the [`Check`] helpers;
/// the dispatch ([`ResourceSpec::validator`]) is generated from the kind table, so a kind
/// without one does not compile.
pub(crate) trait Validate {
    /// Records every problem of `self` in `c`, located at the field.
    fn validate(&self, c: &mut Check<'_, '_>);
}

fn build_index<'a>(resources: &'a [(usize, Resource)], declared: &'a Declared) -> Index<'a> {
    let names = declared.names.iter().map(|(k, n)| (*k, n.as_str())).collect();
    let policies: Vec<&StatePolicySpec> =
        resources.iter().filter_map(|(_, r)| r.spec_as::<StatePolicySpec>()).collect();
    let complete = policies.len() == declared.count(StatePolicySpec::KIND);
    let state_variables = complete.then(|| policies.iter().map(|p| p.variable.as_str()).collect());
    Index { names, state_variables }
}

fn name_path(index: usize) -> String {
    format!("spec.resources[{index}].metadata.name")
}

/// Resource IDs (`apiVersion/kind/name`) must be unique.
fn unique_ids(resources: &[(usize, Resource)], diag: &mut Diagnostics<'_>) {
    // The ID's three parts, borrowed: the ID string is built only for a duplicate.
    let mut seen: HashMap<(&str, ResourceKind, &str), &Resource> =
        HashMap::with_capacity(resources.len());
    for (i, resource) in resources {
        let parts = (resource.api_version.as_str(), resource.kind, resource.name.as_str());
        if let Some(first) = seen.get(&parts) {
            let id = resource.id();
            let msg = format!(
                "duplicate resource id {id}, first declared at line {}",
                first.location.line
            );
            diag.at_value(Some(&id), &name_path(*i), msg);
        } else {
            seen.insert(parts, resource);
        }
    }
}

/// Kernel names provided by `Interface.ifname`, `PPPoEInterface.ifname`,
/// `VLANInterface.ifname` (or its default `<parent ifname>.<vlanID>`) and
/// `DSLiteTunnel.tunnelName` must be unique; a default VLAN name must also be a valid ifname.
fn unique_ifnames(resources: &[(usize, Resource)], diag: &mut Diagnostics<'_>) {
    let parents: HashMap<&str, &str> = resources
        .iter()
        .filter_map(|(_, r)| r.spec_as::<InterfaceSpec>().map(|s| (r.name.as_str(), &*s.ifname)))
        .collect();
    let mut seen: HashMap<String, String> = HashMap::new();
    for (i, resource) in resources {
        let field =
            if resource.kind == ResourceKind::DsLiteTunnel { "tunnelName" } else { "ifname" };
        let path = || format!("spec.resources[{i}].spec.{field}");
        let ifname = match (resource.provided_ifname(), resource.spec_as::<VlanInterfaceSpec>()) {
            (Some(ifname), _) => ifname.to_owned(),
            (None, Some(vlan)) => {
                // An unknown parent is reported by the reference check.
                let Some(parent) = parents.get(vlan.interface.as_str()) else { continue };
                let ifname = vlan.ifname_on(parent);
                if let Err(e) = names::check_ifname(&ifname) {
                    let msg = format!("default ifname (interface ifname.vlanID): {e}; set ifname");
                    diag.at_value(Some(&resource.id()), &path(), msg);
                    continue;
                }
                ifname
            }
            (None, None) => continue,
        };
        match seen.get(&ifname) {
            Some(first) => {
                let msg = format!("{field} {ifname:?} is already used by {first}");
                diag.at_value(Some(&resource.id()), &path(), msg);
            }
            None => {
                seen.insert(ifname, resource.id());
            }
        }
    }
}

/// References name interfaces by `metadata.name` across four kinds, so a name may be used
/// by only one of them.
fn unambiguous_interface_names(resources: &[(usize, Resource)], diag: &mut Diagnostics<'_>) {
    let mut seen: HashMap<&str, &Resource> = HashMap::new();
    for (i, resource) in resources.iter().filter(|(_, r)| r.kind.provides_interface()) {
        match seen.get(resource.name.as_str()) {
            Some(first) if first.kind != resource.kind => {
                let msg = format!(
                    "name {:?} is also used by {}; interface references would be ambiguous",
                    resource.name,
                    first.id()
                );
                diag.at_value(Some(&resource.id()), &name_path(*i), msg);
            }
            Some(_) => {}
            None => {
                seen.insert(&resource.name, resource);
            }
        }
    }
}

/// Within one resource, the fwmarks of policy routes, route-set targets and default-route
/// candidates must be unique (two targets of one set on one mark is a typing error). Across
/// resources a mark may repeat, as routerd allows: the two declare the same fwmark rule, which
/// the engine shares when they agree and blocks with a `Conflict` when they do not (issue 33 §5).
fn unique_marks(resources: &[(usize, Resource)], diag: &mut Diagnostics<'_>) {
    for (i, resource) in resources {
        let mut seen: HashMap<u32, String> = HashMap::new();
        for (field, mark) in marks_of(&resource.spec) {
            if mark == 0 {
                continue; // reported by the per-kind range check
            }
            match seen.get(&mark) {
                Some(first_field) => {
                    let msg = format!("mark {mark} is already used by {first_field}");
                    let id = resource.id();
                    diag.at_value(Some(&id), &format!("spec.resources[{i}].spec.{field}"), msg);
                }
                None => {
                    seen.insert(mark, field);
                }
            }
        }
    }
}

/// `(field path below spec, mark)` of every fwmark a resource claims.
fn marks_of(spec: &ResourceSpec) -> Vec<(String, u32)> {
    match spec {
        ResourceSpec::Ipv4PolicyRoute(s) => vec![("mark".to_owned(), s.mark)],
        ResourceSpec::Ipv4PolicyRouteSet(s) => s
            .targets
            .iter()
            .enumerate()
            .map(|(j, t)| (format!("targets[{j}].mark"), t.mark))
            .collect(),
        ResourceSpec::Ipv4DefaultRoutePolicy(s) => s
            .candidates
            .iter()
            .enumerate()
            .filter_map(|(j, c)| c.mark.map(|m| (format!("candidates[{j}].mark"), m)))
            .collect(),
        _ => Vec::new(),
    }
}

/// `StatePolicy.variable` names must be unique.
fn unique_state_variables(resources: &[(usize, Resource)], diag: &mut Diagnostics<'_>) {
    let mut seen: HashMap<&str, String> = HashMap::new();
    for (i, resource) in resources {
        let Some(policy) = resource.spec_as::<StatePolicySpec>() else { continue };
        match seen.get(policy.variable.as_str()) {
            Some(first) => {
                let msg = format!("variable {:?} is already defined by {first}", policy.variable);
                let path = format!("spec.resources[{i}].spec.variable");
                diag.at_value(Some(&resource.id()), &path, msg);
            }
            None => {
                seen.insert(&policy.variable, resource.id());
            }
        }
    }
}

/// `spec.reconcile.protectedZones` must name `Zone` resources.
fn protected_zones(reconcile: &ReconcileSpec, index: &Index<'_>, diag: &mut Diagnostics<'_>) {
    let target = Target::Kind(ResourceKind::Zone);
    for (i, zone) in reconcile.protected_zones.iter().enumerate() {
        if !index.names.contains(&(ResourceKind::Zone, zone.as_str())) {
            let path = format!("spec.reconcile.protectedZones[{i}]");
            diag.at_value(None, &path, dangling_message("protectedZones", zone, target));
        }
    }
}
