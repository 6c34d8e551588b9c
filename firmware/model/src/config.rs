//! The parsed `router.yaml` document: [`Config`], its [`Resource`]s, and the lookups the
//! engine uses (by kind and name, interface names to kernel names).
//!
//! A `Config` returned by [`crate::parse_config`] has passed validation: references resolve,
//! addresses parse, IDs are unique. This module does no parsing and no I/O.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::error::Location;
use crate::kind::{KindSpec, ResourceKind, ResourceSpec};

/// A validated `router.yaml` document (`apiVersion: routerd.net/v1alpha1`, `kind: Router`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    /// `apiVersion`: always [`crate::ROUTER_API_VERSION`].
    pub api_version: String,
    /// `kind`: always [`crate::ROUTER_KIND`].
    pub kind: String,
    /// `metadata`.
    pub metadata: Metadata,
    /// `spec`.
    pub spec: RouterSpec,
}

/// `metadata` of the document or of a resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Metadata {
    /// `name` (required, non-empty).
    pub name: String,
}

/// `spec` of the `Router` document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RouterSpec {
    /// `reconcile`: how the engine applies changes; absent means all defaults.
    pub reconcile: ReconcileSpec,
    /// `resources` (required): in file order.
    pub resources: Vec<Resource>,
}

/// `spec.reconcile`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReconcileSpec {
    /// `mode`: absent or `""` means the engine default.
    #[serde(default)]
    pub mode: ReconcileMode,
    /// `protectedInterfaces`: kernel interface names the engine must never change or delete.
    #[serde(default)]
    pub protected_interfaces: Vec<String>,
    /// `protectedZones`: names of `Zone` resources whose interfaces are protected.
    #[serde(default)]
    pub protected_zones: Vec<String>,
}

/// `spec.reconcile.mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReconcileMode {
    /// `""` or absent: the engine default.
    #[default]
    #[serde(rename = "")]
    Unspecified,
    /// `strict`: stop at the first failing step.
    Strict,
    /// `progressive`: apply what can be applied, report the rest.
    Progressive,
}

/// One entry of `spec.resources`.
///
/// Serializes back to the YAML shape (`apiVersion`, `kind`, `metadata.name`, `spec`,
/// `status`), so a serialized config parses again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// `apiVersion`: always `kind.api_version()`.
    pub api_version: String,
    /// `kind`.
    pub kind: ResourceKind,
    /// `metadata.name`: unique per kind.
    pub name: String,
    /// `spec`, typed by kind; `spec.kind() == kind`.
    pub spec: ResourceSpec,
    /// `status`: free-form object kept as written; routerd does not read it.
    pub status: Option<serde_json::Map<String, serde_json::Value>>,
    /// Where the resource starts in the source file.
    pub location: Location,
}

impl Serialize for Resource {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire<'a> {
            api_version: &'a str,
            kind: ResourceKind,
            metadata: Metadata,
            spec: &'a ResourceSpec,
            #[serde(skip_serializing_if = "Option::is_none")]
            status: Option<&'a serde_json::Map<String, serde_json::Value>>,
        }
        Wire {
            api_version: &self.api_version,
            kind: self.kind,
            metadata: Metadata { name: self.name.clone() },
            spec: &self.spec,
            status: self.status.as_ref(),
        }
        .serialize(serializer)
    }
}

impl Resource {
    /// The resource ID, `apiVersion/kind/name`, e.g.
    /// `net.routerd.net/v1alpha1/IPv4StaticAddress/lan-v4`.
    pub fn id(&self) -> String {
        // Built by hand: `format!` cost a no-op reconcile of 10,000 records several ms, as
        // render and the report each ask every resource for its ID.
        let kind = self.kind.as_str();
        let mut id =
            String::with_capacity(self.api_version.len() + kind.len() + self.name.len() + 2);
        for part in [&*self.api_version, "/", kind, "/", &*self.name] {
            id.push_str(part);
        }
        id
    }

    /// The typed spec if this resource is of `T`'s kind.
    pub fn spec_as<T: KindSpec>(&self) -> Option<&T> {
        T::from_spec(&self.spec)
    }

    /// The typed spec if this resource is of the controller-crate kind whose spec is `T`
    /// ([`crate::external`]).
    pub fn external_spec<T: crate::external::ExternalKindSpec>(&self) -> Option<&T> {
        match &self.spec {
            ResourceSpec::External(s) => s.get::<T>(),
            _ => None,
        }
    }

    /// The kernel interface name this resource names explicitly, if any: `Interface.ifname`,
    /// `PPPoEInterface.ifname`, `VLANInterface.ifname`, `DSLiteTunnel.tunnelName`.
    ///
    /// A `VLANInterface` without `ifname` is named after its parent: use
    /// [`Config::interface_ifname`], which resolves that default.
    pub fn provided_ifname(&self) -> Option<&str> {
        match &self.spec {
            ResourceSpec::Interface(s) => Some(&s.ifname),
            ResourceSpec::PppoeInterface(s) => s.ifname.as_deref(),
            ResourceSpec::VlanInterface(s) => s.ifname.as_deref(),
            ResourceSpec::DsLiteTunnel(s) => s.tunnel_name.as_deref(),
            _ => None,
        }
    }
}

impl Config {
    /// The resource of `kind` named `name`.
    pub fn resource(&self, kind: ResourceKind, name: &str) -> Option<&Resource> {
        self.spec.resources.iter().find(|r| r.kind == kind && r.name == name)
    }

    /// Resources of `kind`, in file order.
    pub fn resources_of(&self, kind: ResourceKind) -> impl Iterator<Item = &Resource> {
        self.spec.resources.iter().filter(move |r| r.kind == kind)
    }

    /// Resources of `T`'s kind with their typed spec, in file order.
    ///
    /// ```no_run
    /// use routerd_model::spec::net::InterfaceSpec;
    /// fn list(config: &routerd_model::Config) {
    ///     for (resource, spec) in config.specs::<InterfaceSpec>() {
    ///         println!("{} -> {}", resource.name, spec.ifname);
    ///     }
    /// }
    /// ```
    pub fn specs<T: KindSpec>(&self) -> impl Iterator<Item = (&Resource, &T)> {
        self.resources_of(T::KIND).filter_map(|r| r.spec_as::<T>().map(|s| (r, s)))
    }

    /// The typed spec of the `T`-kind resource named `name`.
    pub fn spec<T: KindSpec>(&self, name: &str) -> Option<&T> {
        self.resource(T::KIND, name).and_then(Resource::spec_as::<T>)
    }

    /// The interface-providing resource named `name`: an `Interface`, else a
    /// `PPPoEInterface`, else a `VLANInterface`, else a `DSLiteTunnel`. Validation guarantees at
    /// most one exists.
    pub fn interface_resource(&self, name: &str) -> Option<&Resource> {
        [
            ResourceKind::Interface,
            ResourceKind::PppoeInterface,
            ResourceKind::VlanInterface,
            ResourceKind::DsLiteTunnel,
        ]
        .into_iter()
        .find_map(|kind| self.resource(kind, name))
    }

    /// Resolves an interface resource name (as used in `interface:` fields) to the kernel
    /// interface name.
    ///
    /// Returns `Interface.ifname`, `VLANInterface.ifname` (default `<parent ifname>.<vlanID>`,
    /// hence the owned case), or `PPPoEInterface.ifname` / `DSLiteTunnel.tunnelName` when set;
    /// `None` if no such resource exists or it leaves the kernel name to the engine.
    pub fn interface_ifname(&self, name: &str) -> Option<Cow<'_, str>> {
        let resource = self.interface_resource(name)?;
        if let ResourceSpec::VlanInterface(vlan) = &resource.spec
            && vlan.ifname.is_none()
        {
            let parent = self.spec::<crate::spec::net::InterfaceSpec>(&vlan.interface)?;
            return Some(Cow::Owned(vlan.ifname_on(&parent.ifname)));
        }
        resource.provided_ifname().map(Cow::Borrowed)
    }
}
