//! `ExposeService`: a port forward. `nft.table/ip|ip6/routerd_dnat_<name>` rewrites the
//! destination of traffic arriving on the zone's interfaces (or `viaInterface`) for
//! `externalPort`; the zone firewall adds the matching forward accept.
//!
//! With `hairpin` (NAT loopback, as OpenWrt's reflection): hosts on the interfaces of the
//! other zones reach the service at the router's external address too. The table then also
//! rewrites traffic from those interfaces to the exposed links' addresses (runtime values,
//! ADR 0008: a DHCP address follows its lease), and masquerades what goes back out the
//! interface it came in on, so the internal host's replies return through the router and are
//! translated back instead of going straight to a neighbour that expects the external address.

use std::net::IpAddr;

use ipnet::IpNet;
use routerd_host::ArtifactSpec;
use routerd_host::nftables::ir::{
    NftAction, NftChainType, NftFamily, NftHook, NftL4Proto, NftMatch, NftPolicy, NftTableSpec,
};
use routerd_model::Resource;
use routerd_model::spec::firewall::{ExposeServiceSpec, Protocol};

use super::ctx::nft_table_name;
use super::nft_match::{base_chain, rule, saddr};
use super::{Out, RenderCtx};

/// `dstnat` priority.
const DSTNAT_PRIORITY: i32 = -100;
/// `srcnat` priority.
const SRCNAT_PRIORITY: i32 = 100;

pub(super) fn render(ctx: &RenderCtx<'_>, res: &Resource, s: &ExposeServiceSpec, out: &mut Out) {
    let Ok(address) = s.internal_address.parse::<IpAddr>() else {
        return out.warn(format!("internalAddress {:?} is not an address", s.internal_address));
    };
    if let Some(v) = s.via_interface.as_deref().filter(|v| ctx.interface(v).is_none()) {
        return out.unresolved("viaInterface", v);
    }
    if s.via_interface.is_none() && ctx.zone_ifnames(&s.from_zone).is_none() {
        return out.unresolved("fromZone", &s.from_zone);
    }
    let ifnames = ctx.exposed_ifnames(s);
    let mut sources = Vec::new();
    for src in &s.sources {
        match src.parse::<IpNet>() {
            Ok(n) if n.addr().is_ipv4() == address.is_ipv4() => sources.push(Some(saddr(n))),
            _ => {
                out.warn(format!("source {src:?} is not a prefix of the internal address's family"))
            }
        }
    }
    if sources.is_empty() {
        sources.push(None);
    }
    let proto = match s.protocol {
        Protocol::Tcp => NftL4Proto::Tcp,
        Protocol::Udp => NftL4Proto::Udp,
    };
    let mut rules = Vec::new();
    for ifname in &ifnames {
        for src in &sources {
            let mut m = vec![NftMatch::IifName(ifname.clone())];
            m.extend(src.clone());
            m.push(NftMatch::L4Proto(proto));
            m.push(NftMatch::Dport(s.external_port));
            rules.push(rule(m, vec![NftAction::Dnat { address, port: Some(s.internal_port) }]));
        }
    }
    let mut chains = Vec::new();
    if s.hairpin {
        let reflected = hairpin(ctx, s, &ifnames, address, proto, &mut rules, out);
        if !reflected.is_empty() {
            chains.push(base_chain(
                "postrouting",
                NftChainType::Nat,
                NftHook::Postrouting,
                SRCNAT_PRIORITY,
                NftPolicy::Accept,
                reflected,
            ));
        }
    }
    chains.insert(
        0,
        base_chain(
            "prerouting",
            NftChainType::Nat,
            NftHook::Prerouting,
            DSTNAT_PRIORITY,
            NftPolicy::Accept,
            rules,
        ),
    );
    let family = if address.is_ipv4() { NftFamily::Ip } else { NftFamily::Ip6 };
    let table = NftTableSpec {
        family,
        name: nft_table_name("routerd_dnat_", &res.name),
        owner: out.owner().to_string(),
        chains,
    };
    out.ensure(ArtifactSpec::NftTable(table), Vec::new());
}

/// The NAT loopback of `s`: adds to `dnat` the rewrite of traffic from the other zones'
/// interfaces to the exposed links' addresses of `internal`'s family, and returns the
/// masquerade rules of the `postrouting` chain (traffic to the internal host that leaves by
/// the interface it came in on). Warns when there is nothing to reflect yet.
fn hairpin(
    ctx: &RenderCtx<'_>,
    s: &ExposeServiceSpec,
    exposed: &[String],
    internal: IpAddr,
    proto: NftL4Proto,
    dnat: &mut Vec<routerd_host::nftables::ir::NftRule>,
    out: &mut Out,
) -> Vec<routerd_host::nftables::ir::NftRule> {
    let inside = ctx.hairpin_ifnames(s);
    if inside.is_empty() {
        out.warn("hairpin: no interface of another zone to reflect the service to");
        return Vec::new();
    }
    let external: Vec<IpNet> = exposed
        .iter()
        .flat_map(|i| ctx.runtime.interface_addresses(i))
        .filter(|a| a.addr().is_ipv4() == internal.is_ipv4())
        .map(|a| IpNet::from(a.addr()))
        .collect();
    if external.is_empty() {
        out.warn(format!(
            "hairpin: no address on {} yet; hosts inside reach the service at its internal \
             address only",
            exposed.join(", ")
        ));
        return Vec::new();
    }
    for ifname in &inside {
        for a in &external {
            let m = vec![
                NftMatch::IifName(ifname.clone()),
                daddr(*a),
                NftMatch::L4Proto(proto),
                NftMatch::Dport(s.external_port),
            ];
            dnat.push(rule(
                m,
                vec![NftAction::Dnat { address: internal, port: Some(s.internal_port) }],
            ));
        }
    }
    inside
        .iter()
        .map(|ifname| {
            let m = vec![
                NftMatch::IifName(ifname.clone()),
                NftMatch::OifName(ifname.clone()),
                daddr(IpNet::from(internal)),
                NftMatch::L4Proto(proto),
                NftMatch::Dport(s.internal_port),
            ];
            rule(m, vec![NftAction::Masquerade { ports: None }])
        })
        .collect()
}

fn daddr(net: IpNet) -> NftMatch {
    match net {
        IpNet::V4(n) => NftMatch::Ip4Daddr(n),
        IpNet::V6(n) => NftMatch::Ip6Daddr(n),
    }
}

impl super::Render for routerd_model::spec::all::ExposeServiceSpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, res, self, out);
    }

    /// A `hairpin` service reads the addresses of the links it is exposed on.
    fn reads(&self, ctx: &super::RenderCtx<'_>, reads: &mut crate::runtime::RuntimeReads) {
        if self.hairpin {
            reads.address_links.extend(ctx.exposed_ifnames(self));
        }
    }
}
