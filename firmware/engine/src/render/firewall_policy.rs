//! `FirewallPolicy`: the zone firewall, `nft.table/inet/routerd_filter_<name>` with an `input`
//! and a `forward` chain.
//!
//! Zones whose name is `wan` or starts with `wan` are untrusted; the others are trusted. The
//! `home-router` preset does what an OpenWrt or VyOS home setup does: input and forward drop by
//! default, trusted zones may reach the router and forward anywhere, untrusted zones only get
//! replies (conntrack), ICMP, DHCPv6 client replies and what `routerAccess` opens. Every
//! `ExposeService` gets the forward accept its DNAT needs (a drop in any base chain is final, so
//! the DNAT table alone cannot let the flow through).

use ipnet::IpNet;
use routerd_host::ArtifactSpec;
use routerd_host::nftables::ir::{
    NftAction, NftChainType, NftFamily, NftHook, NftL4Proto, NftMatch, NftPolicy, NftRule,
    NftTableSpec,
};
use routerd_model::spec::firewall::{
    FirewallPolicySpec, FirewallPreset, Protocol, RouterServiceAccess, Verdict,
};
use routerd_model::{Resource, ResourceSpec};

use super::ctx::nft_table_name;
use super::nft_match::{base_chain, rule, stateful_preamble};
use super::{Out, RenderCtx};

/// The ports of a router service (`ssh`, `dns`, `dhcp`).
type ServicePorts = &'static [(NftL4Proto, u16)];

/// The `home-router` FirewallPolicy that drops DHCPv6 replies (UDP 546) arriving on `ifname`,
/// if one does: the preset accepts them only from interfaces in a zone (all traffic from a
/// trusted zone, the replies from a `wan*` zone), and drops all input from an interface in no
/// zone. DHCPv6 clients use UDP sockets, which the input chain filters (networkd's DHCPv4
/// client reads a packet socket, which it does not).
pub(super) fn drops_dhcpv6_replies<'a>(ctx: &RenderCtx<'a>, ifname: &str) -> Option<&'a str> {
    let policy = ctx.resources().find(|r| match &r.spec {
        ResourceSpec::FirewallPolicy(p) => {
            p.preset == Some(FirewallPreset::HomeRouter)
                && p.input.as_ref().and_then(|i| i.default) != Some(Verdict::Accept)
        }
        _ => false,
    })?;
    let zoned = ctx.zones().iter().any(|(_, ifnames)| ifnames.iter().any(|i| i == ifname));
    (!zoned).then_some(policy.name.as_str())
}

/// Whether a zone name denotes an untrusted (uplink) zone.
pub(super) fn is_untrusted_zone(name: &str) -> bool {
    name.starts_with("wan")
}

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &FirewallPolicySpec, out: &mut Out) {
    let preset = s.preset == Some(FirewallPreset::HomeRouter);
    let default_policy = |chain: Option<Verdict>| match (chain, preset) {
        (Some(Verdict::Accept), _) | (None, false) => NftPolicy::Accept,
        (Some(Verdict::Drop), _) | (None, true) => NftPolicy::Drop,
    };
    let zones = ctx.zones();
    let (trusted, untrusted): (Vec<_>, Vec<_>) =
        zones.iter().partition(|(name, _)| !is_untrusted_zone(name));
    let trusted_ifs: Vec<String> = trusted.iter().flat_map(|(_, i)| i.clone()).collect();
    let untrusted_ifs: Vec<String> = untrusted.iter().flat_map(|(_, i)| i.clone()).collect();

    let mut input = stateful_preamble();
    input.push(rule(vec![NftMatch::IifName("lo".into())], vec![NftAction::Accept]));
    for proto in [NftL4Proto::Icmp, NftL4Proto::Icmpv6] {
        input.push(rule(vec![NftMatch::L4Proto(proto)], vec![NftAction::Accept]));
    }
    if preset {
        input.extend(trusted_ifs.iter().map(|i| accept_from(i, None)));
        input.extend(untrusted_ifs.iter().map(|i| accept_from(i, Some((NftL4Proto::Udp, 546)))));
    }
    if let Some(ra) = &s.router_access {
        let services: [(&Option<RouterServiceAccess>, ServicePorts); 3] = [
            (&ra.ssh, &[(NftL4Proto::Tcp, 22)]),
            (&ra.dns, &[(NftL4Proto::Udp, 53), (NftL4Proto::Tcp, 53)]),
            (&ra.dhcp, &[(NftL4Proto::Udp, 67), (NftL4Proto::Udp, 547)]),
        ];
        for (access, ports) in services {
            let Some(access) = access else { continue };
            let mut ifs = Vec::new();
            for zone in &access.from_zones {
                match ctx.zone_ifnames(zone) {
                    Some(z) => ifs.extend(z),
                    None => out.unresolved("zone", zone),
                }
            }
            if access.wan.as_ref().is_some_and(|w| w.enabled) {
                ifs.extend(untrusted_ifs.iter().cloned());
            }
            for i in &ifs {
                input.extend(ports.iter().map(|p| accept_from(i, Some(*p))));
            }
        }
    }

    let mut forward = stateful_preamble();
    if preset {
        forward.extend(trusted_ifs.iter().map(|i| accept_from(i, None)));
    }
    forward.extend(exposed_services(ctx, out));

    let table = NftTableSpec {
        family: NftFamily::Inet,
        name: nft_table_name("routerd_filter_", &res.name),
        owner: out.owner().to_string(),
        chains: vec![
            base_chain(
                "input",
                NftChainType::Filter,
                NftHook::Input,
                0,
                default_policy(s.input.as_ref().and_then(|c| c.default)),
                input,
            ),
            base_chain(
                "forward",
                NftChainType::Filter,
                NftHook::Forward,
                0,
                default_policy(s.forward.as_ref().and_then(|c| c.default)),
                forward,
            ),
        ],
    };
    out.ensure(ArtifactSpec::NftTable(table), Vec::new());
}

/// `iifname IF [meta l4proto P th dport D] accept`.
fn accept_from(ifname: &str, port: Option<(NftL4Proto, u16)>) -> NftRule {
    let mut m = vec![NftMatch::IifName(ifname.to_string())];
    if let Some((proto, dport)) = port {
        m.push(NftMatch::L4Proto(proto));
        m.push(NftMatch::Dport(dport));
    }
    rule(m, vec![NftAction::Accept])
}

/// Forward accepts for every `ExposeService`: from its zone's interfaces (and, with
/// `hairpin`, the other zones' interfaces) to the internal address and port.
fn exposed_services(ctx: &RenderCtx<'_>, out: &mut Out) -> Vec<NftRule> {
    let mut rules = Vec::new();
    for r in ctx.resources() {
        let ResourceSpec::ExposeService(e) = &r.spec else { continue };
        let Some(ifs) = ctx.zone_ifnames(&e.from_zone) else { continue };
        let Ok(addr) = e.internal_address.parse::<std::net::IpAddr>() else {
            out.warn(format!("ExposeService {}: internalAddress is not an address", r.name));
            continue;
        };
        let daddr = match IpNet::from(addr) {
            IpNet::V4(n) => NftMatch::Ip4Daddr(n),
            IpNet::V6(n) => NftMatch::Ip6Daddr(n),
        };
        let proto = match e.protocol {
            Protocol::Tcp => NftL4Proto::Tcp,
            Protocol::Udp => NftL4Proto::Udp,
        };
        // With hairpin, the hosts of the other zones reach it through the router too.
        let reflected = if e.hairpin { ctx.hairpin_ifnames(e) } else { Vec::new() };
        for i in ifs.into_iter().chain(reflected) {
            rules.push(rule(
                vec![
                    NftMatch::IifName(i),
                    daddr.clone(),
                    NftMatch::L4Proto(proto),
                    NftMatch::Dport(e.internal_port),
                ],
                vec![NftAction::Accept],
            ));
        }
    }
    rules
}

impl super::Render for routerd_model::spec::all::FirewallPolicySpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, res, self, out);
    }
}
