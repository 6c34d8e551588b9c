//! Render: resources → artifact intents, one module per resource kind. Pure: reads the config,
//! never the host.
//!
//! Every kind emits at least one intent (seed 000: "resource-specific code should not silently
//! create host state without declaring an artifact intent for it"; a unit test enforces it).
//! Kinds whose configurator arrives in a later issue still render, with attributes that the
//! plan shows; applying them yields `Blocked` naming the missing `applyWith`.

mod ctx;
mod deferred;
mod dhcp;
mod dns_conditional_forwarder;
mod ds_lite_tunnel;
mod expose_service;
mod firewall_policy;
mod health_check;
mod hostname;
mod interface;
mod ipv4_default_route_policy;
mod ipv4_policy_route;
mod ipv4_policy_route_set;
mod ipv4_reverse_path_filter;
mod ipv4_source_nat;
mod ipv4_static_address;
mod ipv6_delegated_address;
mod log_sink;
mod nft_match;
mod nixos_host;
mod ntp_client;
mod path_mtu_policy;
mod policy_table;
mod pppoe_interface;
mod self_address_policy;
mod state_policy;
mod static_route;
mod sysctl;
mod vlan_interface;
mod zone;

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "link_render_tests.rs"]
mod link_tests;

#[cfg(test)]
#[path = "doc_tests.rs"]
mod doc_tests;

use std::collections::BTreeMap;

use routerd_host::Target;
use routerd_model::{Config, Resource, ResourceSpec};

use crate::intent::Intent;
use crate::runtime::{RuntimeReads, RuntimeValues};

pub use ctx::{Out, RenderCtx};
pub(crate) use deferred::when_of;
pub use self_address_policy::SelectedAddress;

/// Declares the dnsmasq unit every resource that needs the router's resolver shares, for a
/// controller crate's dnsmasq section (a zone forwarded to routerd's BIND); returns its key for
/// the section's dependency.
pub fn ensure_dnsmasq_unit(ctx: &RenderCtx<'_>, out: &mut Out) -> routerd_host::ArtifactKey {
    dhcp::ensure_dnsmasq_unit(ctx, out)
}

/// The intents of a whole config, and per-resource warnings.
#[derive(Clone, Debug, Default)]
pub struct Rendered {
    /// Every intent, in config order, then render order within a resource.
    pub intents: Vec<Intent>,
    /// Warnings keyed by resource ID.
    pub warnings: BTreeMap<String, Vec<String>>,
    /// What rendering reads from an observation besides the delegated addresses: what an
    /// observation binds ([`RuntimeValues::from_observed`]).
    pub reads: RuntimeReads,
}

/// Renders every resource of `config` into intents for a router ([`Target::default`]: its own
/// namespace, files under `/`).
///
/// Side effects: none. A reference the validator should have rejected is reported as a warning
/// on the resource and the affected intent is skipped; nothing panics.
pub fn render(config: &Config) -> Rendered {
    render_for(config, &Target::default())
}

/// Renders every resource of `config` into intents for `target`: the paths and namespace the
/// units it renders refer to. As [`render`] otherwise.
pub fn render_for(config: &Config, target: &Target) -> Rendered {
    render_with(config, target, &RuntimeValues::default())
}

/// Renders `config` for `target` with the runtime values of an observation (ADR 0008): what
/// needs a value that is not there yet is rendered waiting for it. As [`render`] otherwise.
pub fn render_with(config: &Config, target: &Target, runtime: &RuntimeValues) -> Rendered {
    let ctx = RenderCtx::new(config, target, runtime);
    let mut rendered = Rendered::default();
    for res in &config.spec.resources {
        let mut out = Out::new(res);
        render_resource(&ctx, res, &mut out);
        out.finish(&mut rendered);
    }
    rendered.reads = runtime_reads(&ctx);
    rendered.reads.dhcp_leases = ctx.lease_files();
    rendered
}

/// A resource kind's render: its intents (and warnings) into `out`. Implemented in the kind's
/// module for its spec type; the dispatch over every kind is generated from the model's kind
/// table ([`routerd_model::with_resource_kinds`]), so a kind without one does not compile.
pub(crate) trait Render {
    /// Renders `res`, whose spec is `self`.
    fn render(&self, ctx: &RenderCtx<'_>, res: &Resource, out: &mut Out);

    /// Adds to `reads` what this resource's render reads from an observation (ADR 0008:
    /// addresses, health verdicts, leases, state). Default: nothing.
    fn reads(&self, _ctx: &RenderCtx<'_>, _reads: &mut RuntimeReads) {}
}

macro_rules! render_dispatch {
    ($($variant:ident => $spec:ident),*) => {
        /// The [`Render`] of `spec`'s type; `None` for a controller crate's kind, whose render
        /// is in the [`crate::registry`].
        fn render_of(spec: &ResourceSpec) -> Option<&dyn Render> {
            match spec {
                $(ResourceSpec::$variant(s) => Some(
                    std::borrow::Borrow::<routerd_model::spec::all::$spec>::borrow(s) as &dyn Render
                ),)*
                ResourceSpec::External(_) => None,
            }
        }
    };
}
routerd_model::with_resource_kinds!(render_dispatch);

/// What a render of `ctx`'s config reads from an observation: each resource's
/// [`Render::reads`], in config order.
fn runtime_reads(ctx: &RenderCtx<'_>) -> RuntimeReads {
    let mut reads = RuntimeReads::default();
    for res in ctx.resources() {
        if let Some(render) = render_of(&res.spec) {
            render.reads(ctx, &mut reads);
        }
    }
    reads
}

fn render_resource(ctx: &RenderCtx<'_>, res: &Resource, out: &mut Out) {
    match (render_of(&res.spec), &res.spec) {
        (Some(render), _) => render.render(ctx, res, out),
        (None, ResourceSpec::External(spec)) => match crate::registry::render_of(spec.descriptor())
        {
            Some(render) => render.render(ctx, res, out),
            None => out.warn(format!(
                "kind {} has no render in this build; nothing is rendered for it",
                res.kind
            )),
        },
        (None, _) => {}
    }
    if let Some(when) = deferred::when_of(&res.spec) {
        deferred::gate_on_state(when, out);
    }
}
