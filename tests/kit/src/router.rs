//! `router.yaml` text for tests: the `Router` document header (`apiVersion`, `kind`,
//! `metadata.name`, an optional `spec.reconcile`) and its `spec.resources` list, built from
//! resources or from raw list items. Text only, so the kit needs none of our crates; the test
//! parses it with the crate under test.
//!
//! ```
//! use routerd_test_kit::router::{NET, RouterDoc};
//!
//! let yaml = RouterDoc::new("t")
//!     .resource(NET, "Interface", "lan", "ifname: lan0\nmanaged: true")
//!     .resource(NET, "IPv4StaticAddress", "lan-v4", "{interface: lan, address: 10.9.0.1/24}")
//!     .to_string();
//! assert_eq!(
//!     yaml,
//!     "apiVersion: routerd.net/v1alpha1
//! kind: Router
//! metadata:
//!   name: t
//! spec:
//!   resources:
//!     - apiVersion: net.routerd.net/v1alpha1
//!       kind: Interface
//!       metadata:
//!         name: lan
//!       spec:
//!         ifname: lan0
//!         managed: true
//!     - apiVersion: net.routerd.net/v1alpha1
//!       kind: IPv4StaticAddress
//!       metadata:
//!         name: lan-v4
//!       spec: {interface: lan, address: 10.9.0.1/24}
//! "
//! );
//! ```

use std::fmt;

/// The `apiVersion` of the `Router` document itself.
pub const ROUTER_API_VERSION: &str = "routerd.net/v1alpha1";
/// The API group of the network resources (`Interface`, `IPv4StaticRoute`, …).
pub const NET: &str = "net.routerd.net/v1alpha1";
/// The API group of the system resources (`Sysctl`, `Hostname`, `LogSink`, …).
pub const SYSTEM: &str = "system.routerd.net/v1alpha1";
/// The API group of the firewall resources (`Zone`, `FirewallPolicy`, …).
pub const FIREWALL: &str = "firewall.routerd.net/v1alpha1";

/// A `Router` document under construction; [`fmt::Display`] (`to_string()`) gives its text.
///
/// The header takes lines 1 to 6 without `spec.reconcile` (the first resource starts on line
/// 7), as in the hand-written documents it replaces. Without any resource or raw block the list
/// is written `resources: []`.
#[derive(Clone, Debug)]
pub struct RouterDoc {
    name: String,
    reconcile: Option<String>,
    /// The text under `spec.resources:`, `None` until a resource or raw block is added.
    resources: Option<String>,
}

impl RouterDoc {
    /// A document with `metadata.name` `name`, no `spec.reconcile` and no resources.
    pub fn new(name: &str) -> Self {
        Self { name: name.to_string(), reconcile: None, resources: None }
    }

    /// Sets `spec.reconcile` to `settings`, a YAML mapping: a flow mapping on one line
    /// (`{mode: strict}`), kept on the key's line, or block lines (`protectedZones: [mgmt]`),
    /// written under the key. Block text may carry a common indentation, which is removed.
    pub fn reconcile(mut self, settings: &str) -> Self {
        self.reconcile = Some(settings.to_string());
        self
    }

    /// Appends resource `kind` named `name` of API group `api_version` (e.g. [`NET`]) with
    /// `spec`, a YAML mapping written as for [`RouterDoc::reconcile`] (empty: `spec: {}`). The
    /// item is seven lines long for a two-line block `spec`; see [`item`].
    pub fn resource(self, api_version: &str, kind: &str, name: &str, spec: &str) -> Self {
        self.raw(&item(api_version, kind, name, spec))
    }

    /// Appends `items` verbatim under `spec.resources`: list items indented by four spaces
    /// (`    - apiVersion: …`), as [`item`] and the crates' own fixtures write them. A newline
    /// is put between blocks where the previous one lacks it; the last block is kept as given,
    /// so a test of the parser controls the document's end. An empty block still makes the
    /// document carry `resources:` (with no list under it).
    pub fn raw(mut self, items: &str) -> Self {
        let resources = self.resources.get_or_insert_with(String::new);
        if !resources.is_empty() && !resources.ends_with('\n') {
            resources.push('\n');
        }
        resources.push_str(items);
        self
    }
}

impl fmt::Display for RouterDoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "apiVersion: {ROUTER_API_VERSION}\nkind: Router\nmetadata:\n  name: {}\nspec:\n",
            self.name
        )?;
        if let Some(settings) = &self.reconcile {
            f.write_str(&mapping(2, "reconcile", settings))?;
        }
        match &self.resources {
            Some(items) => write!(f, "  resources:\n{items}"),
            None => f.write_str("  resources: []\n"),
        }
    }
}

/// One `spec.resources` list item: resource `kind` named `name` of API group `api_version`
/// with `spec` (a YAML mapping, written as for [`RouterDoc::reconcile`]), indented by four
/// spaces and ending in a newline:
///
/// ```text
///     - apiVersion: net.routerd.net/v1alpha1
///       kind: Interface
///       metadata:
///         name: lan
///       spec:
///         ifname: lan0
/// ```
pub fn item(api_version: &str, kind: &str, name: &str, spec: &str) -> String {
    format!(
        "    - apiVersion: {api_version}\n      kind: {kind}\n      metadata:\n        name: \
         {name}\n{}",
        mapping(6, "spec", spec)
    )
}

/// `text` with every non-empty line indented by `by` spaces; empty lines stay empty. Every
/// line ends in a newline. For a document's YAML example written from column 0 (`- apiVersion:
/// …`), `indent(example, 4)` gives the items [`RouterDoc::raw`] takes.
pub fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.lines()
        .map(
            |line| if line.trim().is_empty() { "\n".to_string() } else { format!("{pad}{line}\n") },
        )
        .collect()
}

/// `key: value` at indentation `at`: an empty value as `{}`, a one-line flow collection on the
/// key's line, block lines (their common indentation removed) under the key, two deeper.
fn mapping(at: usize, key: &str, value: &str) -> String {
    let pad = " ".repeat(at);
    let value = dedent(value);
    let one_line = !value.contains('\n');
    if value.is_empty() {
        format!("{pad}{key}: {{}}\n")
    } else if one_line && (value.starts_with('{') || value.starts_with('[')) {
        format!("{pad}{key}: {value}\n")
    } else {
        format!("{pad}{key}:\n{}", indent(&value, at + 2))
    }
}

/// `text` without its leading and trailing blank lines and without the indentation all its
/// other lines share; lines joined by newlines, no newline at the end.
fn dedent(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let blank = |l: &&str| l.trim().is_empty();
    let Some(first) = lines.iter().position(|l| !blank(l)) else { return String::new() };
    let last = lines.iter().rposition(|l| !blank(l)).unwrap_or(first);
    let lines = &lines[first..=last];
    let common = lines
        .iter()
        .filter(|l| !blank(l))
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .min()
        .unwrap_or(0);
    let cut: Vec<&str> = lines.iter().map(|l| l.get(common..).unwrap_or("")).collect();
    cut.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_router_has_an_empty_resource_list() {
        let yaml = RouterDoc::new("unconfigured").to_string();
        assert_eq!(
            yaml,
            "apiVersion: routerd.net/v1alpha1\nkind: Router\nmetadata:\n  name: unconfigured\n\
             spec:\n  resources: []\n"
        );
    }

    #[test]
    fn raw_items_follow_the_six_line_header_verbatim() {
        let yaml = RouterDoc::new("test").raw("    - x: 1").raw("    - y: 2").to_string();
        assert_eq!(
            yaml,
            "apiVersion: routerd.net/v1alpha1\nkind: Router\nmetadata:\n  name: test\nspec:\n  \
             resources:\n    - x: 1\n    - y: 2"
        );
        assert!(RouterDoc::new("test").raw("").to_string().ends_with("spec:\n  resources:\n"));
    }

    #[test]
    fn reconcile_settings_go_inline_or_under_the_key() {
        let flow = RouterDoc::new("x").reconcile("{mode: strict}").to_string();
        assert!(flow.contains("spec:\n  reconcile: {mode: strict}\n  resources: []\n"), "{flow}");
        let block = RouterDoc::new("x").reconcile("\n    protectedZones: [mgmt]\n").to_string();
        assert!(block.ends_with("  reconcile:\n    protectedZones: [mgmt]\n  resources: []\n"));
    }

    #[test]
    fn a_spec_loses_its_common_indentation_and_keeps_its_structure() {
        let spec = "
            interface: wan
            translation:
              type: interfaceAddress
        ";
        assert_eq!(
            item(NET, "IPv4SourceNAT", "nat", spec),
            "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4SourceNAT
      metadata:
        name: nat
      spec:
        interface: wan
        translation:
          type: interfaceAddress
"
        );
        assert!(item(SYSTEM, "Hostname", "h", "").ends_with("      spec: {}\n"));
    }

    #[test]
    fn indent_leaves_empty_lines_empty() {
        assert_eq!(indent("- a: 1\n\n  b: 2", 4), "    - a: 1\n\n      b: 2\n");
    }
}
