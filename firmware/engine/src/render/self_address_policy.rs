//! `SelfAddressPolicy`: which of the router's own addresses services announce (the DNS server
//! of an `IPv6DHCPScope` with `dnsSource: self`).
//!
//! The selection is evaluated while rendering, from the config and the runtime values of the
//! last observation (ADR 0008): the address networkd derived from a delegated prefix, and the
//! addresses on the links the candidates name. The candidates are tried in order; the first
//! with an address wins. The policy renders an engine-internal `routerd.addressSelection`
//! artifact (applyWith `routerd`, no host state) carrying the selection, which the report shows
//! as the resource's `Selected` condition; a consumer renders the selected address into its
//! own artifact, so a renumbering reaches it at the next resync.

use std::net::IpAddr;

use ipnet::IpNet;
use routerd_host::ArtifactKind;
use routerd_model::Resource;
use routerd_model::spec::AddressFamily;
use routerd_model::spec::dhcp::{SelfAddressCandidate, SelfAddressPolicySpec, SelfAddressSource};
use serde::{Deserialize, Serialize};

use super::{Out, RenderCtx};

/// What a `SelfAddressPolicy` selects now: the attributes of its `routerd.addressSelection`
/// artifact.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectedAddress {
    /// The policy's `addressFamily`.
    pub address_family: AddressFamily,
    /// The selected address; `None` while no candidate has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<IpAddr>,
    /// The winning candidate: its index in `candidates` (0-based, as the config's paths
    /// `candidates[i]` count) and what it is (`interfaceAddress lan (lan0)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<(usize, String)>,
}

pub(super) fn render(
    ctx: &RenderCtx<'_>,
    res: &Resource,
    s: &SelfAddressPolicySpec,
    out: &mut Out,
) {
    let (selection, passed) = select(ctx, s);
    if selection.address.is_none() {
        out.warn(format!(
            "no candidate has an address yet ({}); services using this policy fall back to \
             their default",
            passed.join("; ")
        ));
    }
    // No dependencies: an engine-internal artifact is never withdrawn, and the selection
    // already says which candidate it came from.
    out.ensure_opaque(ArtifactKind::AddressSelection, res.name.clone(), selection, Vec::new());
}

/// Evaluates `s`: the selection, and why each candidate before the winner (all of them when
/// none wins) has no address, as `candidates[i] …` phrases.
pub(super) fn select(
    ctx: &RenderCtx<'_>,
    s: &SelfAddressPolicySpec,
) -> (SelectedAddress, Vec<String>) {
    let mut passed = Vec::new();
    for (i, c) in s.candidates.iter().enumerate() {
        let (what, found) = candidate_address(ctx, s.address_family, c);
        match found {
            Ok(address) => {
                let candidate = Some((i, what));
                let selection = SelectedAddress {
                    address_family: s.address_family,
                    address: Some(address),
                    candidate,
                };
                return (selection, passed);
            }
            Err(why) => passed.push(format!("candidates[{i}] {what}: {why}")),
        }
    }
    (SelectedAddress { address_family: s.address_family, address: None, candidate: None }, passed)
}

/// One candidate described (`delegatedAddress lan-v6 (lan0)`), and its address or why it has
/// none.
fn candidate_address(
    ctx: &RenderCtx<'_>,
    family: AddressFamily,
    c: &SelfAddressCandidate,
) -> (String, Result<IpAddr, String>) {
    let (what, pool): (String, Vec<IpNet>) = match c.source {
        SelfAddressSource::Static => {
            let text = c.address.as_deref().unwrap_or_default();
            let what = format!("static {text}");
            return match text.parse::<IpAddr>() {
                Ok(ip) if AddressFamily::of(&ip) == family => (what, Ok(ip)),
                Ok(_) => (what, Err(format!("not an {family} address"))),
                Err(_) => (what, Err("not an IP address".to_string())),
            };
        }
        SelfAddressSource::DelegatedAddress => {
            let name = c.delegated_address.as_deref().unwrap_or_default();
            let Some(link) = ctx.delegated_link(name) else {
                return (format!("delegatedAddress {name}"), Err("does not resolve".into()));
            };
            let pool: Vec<IpNet> = ctx
                .runtime
                .delegated
                .get(&link.ifname)
                .map(|nets| nets.iter().map(|n| IpNet::V6(*n)).collect())
                .unwrap_or_default();
            let what = format!("delegatedAddress {name} ({})", link.ifname);
            if pool.is_empty() {
                return (what, Err("networkd has derived no address from the prefix yet".into()));
            }
            (what, pool)
        }
        SelfAddressSource::InterfaceAddress => {
            let name = c.interface.as_deref().unwrap_or_default();
            let Some(link) = ctx.interface(name) else {
                return (format!("interfaceAddress {name}"), Err("does not resolve".into()));
            };
            // What the kernel has, and the static addresses the config puts there (so that
            // the first apply already announces them).
            let mut pool = ctx.runtime.interface_addresses(&link.ifname).to_vec();
            pool.extend_from_slice(ctx.declared_addresses(name));
            pool.sort_unstable();
            pool.dedup();
            (format!("interfaceAddress {name} ({})", link.ifname), pool)
        }
    };
    (what, pick(family, c, &pool))
}

/// The `ordinal`-th address of `family` in `pool` whose identifier is `matchSuffix`, with
/// `addressSuffix` as its identifier when set.
fn pick(family: AddressFamily, c: &SelfAddressCandidate, pool: &[IpNet]) -> Result<IpAddr, String> {
    let parse = |field: &str, text: &Option<String>| -> Result<Option<IpAddr>, String> {
        match text {
            None => Ok(None),
            Some(t) => match t.parse::<IpAddr>() {
                Ok(ip) if AddressFamily::of(&ip) == family => Ok(Some(ip)),
                _ => Err(format!("{field} {t:?} is not an {family} address")),
            },
        }
    };
    let match_suffix = parse("matchSuffix", &c.match_suffix)?;
    let address_suffix = parse("addressSuffix", &c.address_suffix)?;
    let ordinal = c.ordinal.unwrap_or(1).max(1) as usize;
    let matching: Vec<&IpNet> = pool
        .iter()
        .filter(|net| AddressFamily::of(&net.addr()) == family)
        .filter(|net| match_suffix.is_none_or(|suffix| ends_in(net.addr(), suffix)))
        .collect();
    let Some(net) = matching.get(ordinal - 1) else {
        let ending = match_suffix.map(|s| format!(" ending in {s}")).unwrap_or_default();
        return Err(match matching.len() {
            0 => format!("no {family} address{ending}"),
            n => format!("{n} {family} address(es){ending}, and ordinal {ordinal} asks for more"),
        });
    };
    Ok(match address_suffix {
        Some(suffix) => with_identifier(**net, suffix),
        None => net.addr(),
    })
}

/// Whether `ip` ends in `suffix`: equal in every group (16-bit for IPv6, 8-bit for IPv4) up to
/// and including the highest non-zero group of `suffix`: `::53` matches `2001:db8::53` but not
/// `2001:db8::153`, and `::1:53` compares the last two groups.
fn ends_in(ip: IpAddr, suffix: IpAddr) -> bool {
    let (ip, suffix, group) = match (ip, suffix) {
        (IpAddr::V6(a), IpAddr::V6(s)) => (u128::from(a), u128::from(s), 16),
        (IpAddr::V4(a), IpAddr::V4(s)) => (u128::from(u32::from(a)), u128::from(u32::from(s)), 8),
        _ => return false,
    };
    let bits = 128 - suffix.leading_zeros();
    let width = bits.div_ceil(group) * group;
    let mask = if width >= 128 { u128::MAX } else { (1u128 << width) - 1 };
    ip & mask == suffix
}

/// `net`'s prefix with the host bits of `suffix` (`2001:db8:0:2a::1/64` and `::53` give
/// `2001:db8:0:2a::53`).
fn with_identifier(net: IpNet, suffix: IpAddr) -> IpAddr {
    match (net, suffix) {
        (IpNet::V6(n), IpAddr::V6(s)) => {
            let mask = u128::from(n.netmask());
            IpAddr::V6(((u128::from(n.network()) & mask) | (u128::from(s) & !mask)).into())
        }
        (IpNet::V4(n), IpAddr::V4(s)) => {
            let mask = u32::from(n.netmask());
            IpAddr::V4(((u32::from(n.network()) & mask) | (u32::from(s) & !mask)).into())
        }
        _ => net.addr(),
    }
}

impl super::Render for routerd_model::spec::all::SelfAddressPolicySpec {
    fn render(
        &self,
        ctx: &super::RenderCtx<'_>,
        res: &routerd_model::Resource,
        out: &mut super::Out,
    ) {
        render(ctx, res, self, out);
    }

    /// The links a candidate takes its address from (`source: interfaceAddress`).
    fn reads(&self, ctx: &super::RenderCtx<'_>, reads: &mut crate::runtime::RuntimeReads) {
        let links = self
            .candidates
            .iter()
            .filter(|c| c.source == routerd_model::spec::dhcp::SelfAddressSource::InterfaceAddress)
            .filter_map(|c| ctx.interface(c.interface.as_deref()?));
        reads.address_links.extend(links.map(|link| link.ifname));
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use routerd_host::Target;

    use super::*;
    use crate::fixtures::{LAN0, WAN_PD_LAN_V6, WAN0, router};
    use crate::runtime::RuntimeValues;

    /// Policy `lan-dns` (with `LAN0`): the delegated address with `::53`, the second address
    /// on lan0 ending in `::53`, then `fd00::1`.
    const POLICY: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: SelfAddressPolicy
      metadata: {name: lan-dns}
      spec:
        addressFamily: ipv6
        candidates:
          - {source: delegatedAddress, delegatedAddress: lan-v6, addressSuffix: \"::53\"}
          - {source: interfaceAddress, interface: lan, matchSuffix: \"::53\", ordinal: 2}
          - {source: static, address: \"fd00::1\"}
";

    fn selection(runtime: &RuntimeValues) -> (SelectedAddress, Vec<String>) {
        let config = router(&format!("{WAN0}{LAN0}{WAN_PD_LAN_V6}{POLICY}"));
        let target = Target::default();
        let ctx = RenderCtx::new(&config, &target, runtime);
        let Some(routerd_model::ResourceSpec::SelfAddressPolicy(s)) =
            config.spec.resources.last().map(|r| &r.spec)
        else {
            panic!("the policy is the last resource");
        };
        select(&ctx, s)
    }

    fn on_lan(addresses: &[&str]) -> BTreeMap<String, Vec<IpNet>> {
        let nets = addresses.iter().map(|a| a.parse().expect("address")).collect();
        BTreeMap::from([("lan0".to_string(), nets)])
    }

    #[test]
    fn candidates_are_tried_in_order_and_the_first_with_an_address_wins() {
        // Nothing observed: only the static candidate has an address.
        let (s, passed) = selection(&RuntimeValues::default());
        assert_eq!(s.address, "fd00::1".parse().ok());
        assert_eq!(s.candidate.as_ref().map(|c| c.0), Some(2));
        assert_eq!(passed.len(), 2, "{passed:?}");
        assert!(passed[0].contains("delegatedAddress lan-v6 (lan0)"), "{passed:?}");
        assert!(passed[1].contains("no IPv6 address ending in ::53"), "{passed:?}");

        // Two addresses ending in ::53 on the link (and one that only contains 53, and a
        // link-local one the runtime values never carry): the second, in address order.
        let runtime = RuntimeValues {
            interface_addresses: on_lan(&[
                "fd00:53::53/64",
                "2001:db8:5::53/64",
                "2001:db8:5::153/64",
                "fd00:53::1/64",
            ]),
            ..Default::default()
        };
        let (s, _) = selection(&runtime);
        assert_eq!(s.address, "fd00:53::53".parse().ok(), "{s:?}");
        assert_eq!(s.candidate.map(|c| c.1), Some("interfaceAddress lan (lan0)".to_string()));

        // The delegated address, once networkd derived it, with the candidate's identifier.
        let runtime = RuntimeValues {
            delegated: BTreeMap::from([(
                "lan0".to_string(),
                vec!["2001:db8:a0:2a::1/64".parse().expect("net")],
            )]),
            ..runtime
        };
        let (s, passed) = selection(&runtime);
        assert_eq!(s.address, "2001:db8:a0:2a::53".parse().ok(), "{s:?}");
        assert!(passed.is_empty(), "{passed:?}");
    }

    #[test]
    fn a_suffix_matches_whole_groups_from_the_end() {
        let ip = |t: &str| t.parse::<IpAddr>().expect("ip");
        assert!(ends_in(ip("2001:db8::53"), ip("::53")));
        assert!(!ends_in(ip("2001:db8::153"), ip("::53")));
        assert!(!ends_in(ip("2001:db8::1:54"), ip("::1:53")));
        assert!(ends_in(ip("2001:db8::1:53"), ip("::1:53")));
        assert!(ends_in(ip("192.168.1.1"), ip("0.0.0.1")));
        assert!(!ends_in(ip("192.168.1.11"), ip("0.0.0.1")));
        assert!(ends_in(ip("192.168.1.11"), ip("0.0.0.0")), "an empty suffix matches all");
        assert!(!ends_in(ip("192.168.1.1"), ip("::1")), "families differ");
        assert_eq!(
            with_identifier("192.168.7.9/24".parse().expect("net"), ip("0.0.0.1")),
            ip("192.168.7.1")
        );
    }

    /// `POLICY` and an IPv6 scope on lan0 announcing what `lan-dns` selects.
    const SCOPE: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6DHCPServer
      metadata: {name: v6}
      spec: {managed: true, listenInterfaces: [lan]}
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6DHCPScope
      metadata: {name: lan-ra}
      spec: {server: v6, delegatedAddress: lan-v6, selfAddressPolicy: lan-dns}
";

    /// The lines of the scope's dnsmasq section, the selection's attributes and the
    /// warnings, rendered with `runtime`.
    fn rendered_scope(runtime: &RuntimeValues) -> (Vec<String>, serde_json::Value, Vec<String>) {
        let config = router(&format!("{WAN0}{LAN0}{WAN_PD_LAN_V6}{POLICY}{SCOPE}"));
        let rendered = crate::render::render_with(&config, &Target::default(), runtime);
        let mut lines = Vec::new();
        let mut selection = serde_json::Value::Null;
        for i in &rendered.intents {
            match &i.artifact.spec {
                routerd_host::ArtifactSpec::DnsmasqSection(d)
                    if d.section == "dhcpv6-range/lan-ra" =>
                {
                    lines = d.lines.clone();
                    let on = i.dependencies.iter().map(|d| d.key.to_string()).collect::<Vec<_>>();
                    assert!(on.contains(&"routerd.addressSelection/lan-dns".to_string()), "{on:?}");
                }
                routerd_host::ArtifactSpec::Opaque(o)
                    if o.kind == ArtifactKind::AddressSelection =>
                {
                    assert_eq!(i.apply_with, crate::intent::ApplyWith::Routerd);
                    selection = o.attributes.clone();
                }
                _ => {}
            }
        }
        let warnings = rendered.warnings.values().flatten().cloned().collect();
        assert_eq!(
            rendered.reads.address_links,
            std::collections::BTreeSet::from(["lan0".to_string()])
        );
        (lines, selection, warnings)
    }

    #[test]
    fn a_scope_announces_the_selected_address_and_follows_it() {
        let dns = |lines: &[String]| -> Vec<String> {
            lines.iter().filter(|l| l.contains("dns-server")).cloned().collect()
        };
        let (lines, selection, warnings) = rendered_scope(&RuntimeValues::default());
        assert_eq!(dns(&lines), ["dhcp-option=tag:lan-ra,option6:dns-server,[fd00::1]"]);
        assert_eq!(selection["address"], "fd00::1");
        assert_eq!(selection["candidate"][0], 2);
        assert!(warnings.is_empty(), "{warnings:?}");

        let prefix =
            |p: &str| BTreeMap::from([("lan0".to_string(), vec![p.parse().expect("net")])]);
        let runtime =
            RuntimeValues { delegated: prefix("2001:db8:a0:2a::1/64"), ..Default::default() };
        let (lines, selection, _) = rendered_scope(&runtime);
        assert_eq!(dns(&lines), ["dhcp-option=tag:lan-ra,option6:dns-server,[2001:db8:a0:2a::53]"]);
        assert_eq!(selection["candidate"][1], "delegatedAddress lan-v6 (lan0)");

        // Renumbered: the announced address follows.
        let runtime =
            RuntimeValues { delegated: prefix("2001:db8:b0:2a::1/64"), ..Default::default() };
        let (lines, _, _) = rendered_scope(&runtime);
        assert_eq!(dns(&lines), ["dhcp-option=tag:lan-ra,option6:dns-server,[2001:db8:b0:2a::53]"]);
    }

    #[test]
    fn a_policy_without_an_available_candidate_leaves_dnsmasq_its_default_and_says_why() {
        let config = router(&format!(
            "{WAN0}{LAN0}{WAN_PD_LAN_V6}{}{SCOPE}",
            POLICY.replace("          - {source: static, address: \"fd00::1\"}\n", "")
        ));
        let rendered =
            crate::render::render_with(&config, &Target::default(), &RuntimeValues::default());
        let lines: Vec<&String> = rendered
            .intents
            .iter()
            .filter_map(|i| match &i.artifact.spec {
                routerd_host::ArtifactSpec::DnsmasqSection(d)
                    if d.section == "dhcpv6-range/lan-ra" =>
                {
                    Some(&d.lines)
                }
                _ => None,
            })
            .flatten()
            .collect();
        assert!(!lines.is_empty() && !lines.iter().any(|l| l.contains("dns-server")), "{lines:?}");
        let warnings = |kind: &str| -> Vec<String> {
            rendered
                .warnings
                .iter()
                .filter(|(id, _)| id.contains(kind))
                .flat_map(|(_, w)| w.clone())
                .collect()
        };
        let policy = warnings("SelfAddressPolicy");
        assert!(
            policy.len() == 1
                && policy[0].contains("candidates[0] delegatedAddress lan-v6 (lan0)")
                && policy[0].contains(
                    "candidates[1] interfaceAddress lan (lan0): no IPv6 address ending in ::53"
                ),
            "{policy:?}"
        );
        let scope = warnings("IPv6DHCPScope");
        assert!(scope.iter().any(|w| w.contains("selects no address yet")), "{scope:?}");
    }
}
