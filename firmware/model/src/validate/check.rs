//! The per-resource check context: field paths relative to the resource's `spec`, located
//! errors, and the reusable checks (references, addresses, name shapes, durations, ranges,
//! `when`). The kinds' `Validate` impls, next to their spec types in [`crate::spec`], use it.

use std::collections::HashSet;

use crate::addr;
use crate::config::Resource;
use crate::diag::Diagnostics;
use crate::duration::parse_duration;
use crate::kind::ResourceKind;
use crate::spec::{AddressFamily, WhenSpec};

use super::names;

/// What a reference field names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// An interface-providing resource: `Interface`, `PPPoEInterface`, `VLANInterface` or
    /// `DSLiteTunnel`.
    Interface,
    /// A resource of one kind.
    Kind(ResourceKind),
}

/// Names that references may point to.
pub(super) struct Index<'a> {
    /// `(kind, metadata.name)` of every resource in the file, parsed or not.
    pub(super) names: HashSet<(ResourceKind, &'a str)>,
    /// `StatePolicy.variable`s; `None` when some `StatePolicy` failed to parse, so the set is
    /// incomplete and `when.state` keys are not checked.
    pub(super) state_variables: Option<HashSet<&'a str>>,
}

impl Index<'_> {
    fn has(&self, target: Target, name: &str) -> bool {
        match target {
            Target::Interface => ResourceKind::ALL
                .iter()
                .filter(|k| k.provides_interface())
                .any(|k| self.names.contains(&(*k, name))),
            Target::Kind(kind) => self.names.contains(&(kind, name)),
        }
    }
}

/// The message for a reference to nothing.
pub(super) fn dangling_message(label: &str, name: &str, target: Target) -> String {
    let what = match target {
        Target::Interface => "Interface, PPPoEInterface, VLANInterface or DSLiteTunnel".to_owned(),
        Target::Kind(kind) => kind.as_str().to_owned(),
    };
    format!("{label} {name:?} is not declared by any {what} resource")
}

/// Checks one resource's spec; every error carries the resource ID and a path below the
/// resource's `spec`.
pub(crate) struct Check<'a, 'm> {
    diag: &'a mut Diagnostics<'m>,
    index: &'a Index<'a>,
    resource: &'a Resource,
    /// The resource's index in `spec.resources`.
    position: usize,
}

impl<'a, 'm> Check<'a, 'm> {
    /// A context for `resource`, item `position` of `spec.resources`. Its ID and paths are
    /// built only for an error: checking 10,000 valid resources formats no string.
    pub(super) fn new(
        diag: &'a mut Diagnostics<'m>,
        index: &'a Index<'a>,
        resource: &'a Resource,
        position: usize,
    ) -> Self {
        Self { diag, index, resource, position }
    }

    fn path(&self, field: &str) -> String {
        let base = format!("spec.resources[{}].spec", self.position);
        if field.is_empty() { base } else { format!("{base}.{field}") }
    }

    /// The resource being checked.
    pub(crate) fn resource(&self) -> &Resource {
        self.resource
    }

    /// `field` must name a resource of `kind`.
    pub(crate) fn reference_kind(&mut self, field: &str, name: &str, kind: ResourceKind) {
        self.reference(field, name, Target::Kind(kind));
    }

    /// Records `message` at the node of `field` (or its nearest ancestor if absent).
    pub(crate) fn error(&mut self, field: &str, message: impl Into<String>) {
        let path = self.path(field);
        self.diag.at_value(Some(&self.resource.id()), &path, message);
    }

    /// Records `message` at the mapping key of `field`.
    pub(super) fn error_at_key(&mut self, field: &str, message: impl Into<String>) {
        let path = self.path(field);
        self.diag.at_key(Some(&self.resource.id()), &path, message);
    }

    /// Records `message` at `field` unless `ok`.
    pub(crate) fn require(&mut self, ok: bool, field: &str, message: &str) {
        if !ok {
            self.error(field, message);
        }
    }

    /// Records the `Err` of a shape check at `field`.
    fn shape(&mut self, field: &str, result: Result<(), String>) {
        if let Err(message) = result {
            self.error(field, message);
        }
    }

    /// `field` must be a kernel interface name ([`names::check_ifname`]).
    pub(crate) fn ifname(&mut self, field: &str, name: &str) {
        self.shape(field, names::check_ifname(name));
    }

    /// `field` must be an RFC 1123 host name ([`names::check_hostname`]).
    pub(crate) fn hostname(&mut self, field: &str, name: &str) {
        self.shape(field, names::check_hostname(name));
    }

    /// `field` must be a DNS domain ([`names::check_domain`]).
    pub(crate) fn domain(&mut self, field: &str, name: &str) {
        self.shape(field, names::check_domain(name));
    }

    /// `field` must be a dotted sysctl key ([`names::check_sysctl_key`]).
    pub(crate) fn sysctl_key(&mut self, field: &str, key: &str) {
        self.shape(field, names::check_sysctl_key(key));
    }

    /// `field` must be at most `max_digits` hex digits ([`names::check_hex`]).
    pub(crate) fn hex(&mut self, field: &str, text: &str, max_digits: usize) {
        self.shape(field, names::check_hex(text, max_digits));
    }

    /// `field` must be hex bytes ([`names::check_hex_bytes`]).
    pub(crate) fn hex_bytes(&mut self, field: &str, text: &str) {
        self.shape(field, names::check_hex_bytes(text));
    }

    /// `field` must name an existing `target`.
    pub(crate) fn reference(&mut self, field: &str, name: &str, target: Target) {
        if !self.index.has(target, name) {
            self.error(field, dangling_message(label(field), name, target));
        }
    }

    /// Optional `field`, if set, must name an existing `target`.
    pub(crate) fn opt_reference(&mut self, field: &str, name: Option<&String>, target: Target) {
        if let Some(name) = name {
            self.reference(field, name, target);
        }
    }

    /// Every item of list `field` must name an existing `target`.
    pub(crate) fn references(&mut self, field: &str, names: &[String], target: Target) {
        for (i, name) in names.iter().enumerate() {
            self.reference(&format!("{field}[{i}]"), name, target);
        }
    }

    /// `field` must be an IP address (of `family`, if given).
    pub(crate) fn ip(&mut self, field: &str, text: &str, family: Option<AddressFamily>) {
        if let Err(e) = addr::parse_ip(text, family) {
            self.error(field, e.to_string());
        }
    }

    /// Optional `field`, if set, must be an IP address.
    pub(crate) fn opt_ip(
        &mut self,
        field: &str,
        text: Option<&String>,
        family: Option<AddressFamily>,
    ) {
        if let Some(text) = text {
            self.ip(field, text, family);
        }
    }

    /// Every item of list `field` must be an IP address.
    pub(crate) fn ips(&mut self, field: &str, list: &[String], family: Option<AddressFamily>) {
        for (i, text) in list.iter().enumerate() {
            self.ip(&format!("{field}[{i}]"), text, family);
        }
    }

    /// Every item of list `field` must be a CIDR prefix with host bits zero.
    pub(crate) fn prefixes(&mut self, field: &str, list: &[String], family: Option<AddressFamily>) {
        for (i, text) in list.iter().enumerate() {
            if let Err(e) = addr::parse_prefix(text, family) {
                self.error(&format!("{field}[{i}]"), e.to_string());
            }
        }
    }

    /// Optional `field`, if set, must be a Go duration.
    pub(crate) fn duration(&mut self, field: &str, text: Option<&String>) {
        if let Some(Err(e)) = text.map(|t| parse_duration(t)) {
            self.error(field, e.to_string());
        }
    }

    /// Optional `field`, if set, must be at least `min`.
    pub(crate) fn min(&mut self, field: &str, value: Option<u64>, min: u64) {
        if let Some(v) = value.filter(|v| *v < min) {
            self.error(field, format!("{} must be at least {min}, got {v}", label(field)));
        }
    }

    /// Optional `field`, if set, must be within `lo..=hi`.
    pub(crate) fn range(&mut self, field: &str, value: Option<u64>, lo: u64, hi: u64) {
        if let Some(v) = value.filter(|v| *v < lo || *v > hi) {
            let name = label(field);
            self.error(field, format!("{name} must be between {lo} and {hi}, got {v}"));
        }
    }

    /// List `field` must not be empty.
    pub(crate) fn non_empty<T>(&mut self, field: &str, list: &[T]) {
        if list.is_empty() {
            self.error(field, format!("{} must not be empty", label(field)));
        }
    }

    /// The `when` gate at `field`: state variables must exist; `for` must be a duration.
    pub(crate) fn when(&mut self, field: &str, when: Option<&WhenSpec>) {
        let Some(when) = when else { return };
        for (variable, condition) in &when.state {
            let path = format!("{field}.state.{variable}");
            let declared =
                self.index.state_variables.as_ref().map(|v| v.contains(variable.as_str()));
            if declared == Some(false) {
                let msg = format!("state variable {variable:?} is not declared by any StatePolicy");
                self.error_at_key(&path, msg);
            }
            self.duration(&format!("{path}.for"), condition.r#for.as_ref());
        }
    }
}

/// The YAML key a field path ends in, without index: `toInterfaces[2]` → `toInterfaces`.
pub(super) fn label(field: &str) -> &str {
    let last = field.rsplit('.').next().unwrap_or(field);
    last.split('[').next().unwrap_or(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_is_the_last_key_without_index() {
        assert_eq!(label("candidates[1].healthCheck"), "healthCheck");
        assert_eq!(label("toInterfaces[2]"), "toInterfaces");
        assert_eq!(label("interface"), "interface");
    }

    #[test]
    fn dangling_interface_message_lists_the_provider_kinds() {
        assert_eq!(
            dangling_message("interface", "lan", Target::Interface),
            "interface \"lan\" is not declared by any Interface, PPPoEInterface, VLANInterface or \
             DSLiteTunnel resource"
        );
        assert_eq!(
            dangling_message("healthCheck", "hc", Target::Kind(ResourceKind::HealthCheck)),
            "healthCheck \"hc\" is not declared by any HealthCheck resource"
        );
    }
}
