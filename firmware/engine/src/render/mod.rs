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

pub(crate) use ctx::{Out, RenderCtx};
pub(crate) use deferred::when_of;
pub use self_address_policy::SelectedAddress;

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
    rendered.reads = ctx.runtime_reads();
    rendered
}

fn render_resource(ctx: &RenderCtx<'_>, res: &Resource, out: &mut Out) {
    use ResourceSpec as S;
    match &res.spec {
        S::LogSink(s) => log_sink::render(res, s, out),
        S::Sysctl(s) => sysctl::render(s, out),
        S::NtpClient(s) => ntp_client::render(ctx, res, s, out),
        S::NixOsHost(s) => nixos_host::render(s, out),
        S::Interface(s) => interface::render(s, out),
        S::PppoeInterface(s) => pppoe_interface::render(ctx, res, s, out),
        S::VlanInterface(s) => vlan_interface::render(ctx, s, out),
        S::Ipv4StaticAddress(s) => ipv4_static_address::render(ctx, s, out),
        S::Ipv4DhcpAddress(s) => dhcp::render_ipv4_client(ctx, res, s, out),
        S::Ipv4DhcpServer(s) => dhcp::render_ipv4_server(ctx, res, s, out),
        S::Ipv4DhcpScope(s) => dhcp::render_ipv4_scope(ctx, res, s, out),
        S::Ipv6DhcpAddress(s) => dhcp::render_ipv6_client(ctx, res, s, out),
        S::Ipv6PrefixDelegation(s) => dhcp::render_prefix_delegation(ctx, res, s, out),
        S::Ipv6DelegatedAddress(s) => ipv6_delegated_address::render(ctx, s, out),
        S::Ipv6DhcpServer(s) => dhcp::render_ipv6_server(ctx, res, s, out),
        S::Ipv6DhcpScope(s) => dhcp::render_ipv6_scope(ctx, res, s, out),
        S::SelfAddressPolicy(s) => self_address_policy::render(ctx, res, s, out),
        S::DnsConditionalForwarder(s) => dns_conditional_forwarder::render(ctx, res, s, out),
        S::DsLiteTunnel(s) => ds_lite_tunnel::render(ctx, res, s, out),
        S::StatePolicy(s) => state_policy::render(ctx, s, out),
        S::HealthCheck(s) => health_check::render(ctx, res, s, out),
        S::Ipv4DefaultRoutePolicy(s) => ipv4_default_route_policy::render(ctx, res, s, out),
        S::Ipv4SourceNat(s) => ipv4_source_nat::render(ctx, res, s, out),
        S::Ipv4PolicyRoute(s) => ipv4_policy_route::render(ctx, res, s, out),
        S::Ipv4PolicyRouteSet(s) => ipv4_policy_route_set::render(ctx, res, s, out),
        S::Ipv4ReversePathFilter(s) => ipv4_reverse_path_filter::render(ctx, s, out),
        S::PathMtuPolicy(s) => path_mtu_policy::render(ctx, res, s, out),
        S::Zone(s) => zone::render(ctx, res, s, out),
        S::FirewallPolicy(s) => firewall_policy::render(ctx, res, s, out),
        S::ExposeService(s) => expose_service::render(ctx, res, s, out),
        S::Hostname(s) => hostname::render(s, out),
        S::Ipv4StaticRoute(s) => static_route::render_ipv4(ctx, s, out),
        S::Ipv6StaticRoute(s) => static_route::render_ipv6(ctx, s, out),
    }
    if let Some(when) = deferred::when_of(&res.spec) {
        deferred::gate_on_state(when, out);
    }
}
