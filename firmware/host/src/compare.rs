//! Desired-versus-observed comparison per artifact family: the attribute list behind Modify
//! decisions, drift reports and adoption refusals. Pure.

use serde::Serialize;
use serde_json::Value;

use crate::artifact::{ArtifactSpec, AttributeDiff, Ip6TunnelSpec};
use crate::nftables::ir::NftTableState;

/// See [`ArtifactSpec::drift`].
pub(crate) fn drift(desired: &ArtifactSpec, observed: &ArtifactSpec) -> Vec<AttributeDiff> {
    let mut out = Vec::new();
    match (desired, observed) {
        (ArtifactSpec::Link(d), ArtifactSpec::Link(o)) => {
            if d.admin_up.is_some() && d.admin_up != o.admin_up {
                push(&mut out, "adminUp", &d.admin_up, &o.admin_up);
            }
            if d.mtu.is_some() && d.mtu != o.mtu {
                push(&mut out, "mtu", &d.mtu, &o.mtu);
            }
            // A link declared without a kind is whatever link has that name.
            if d.kind.is_some() && d.kind != o.kind {
                push(&mut out, "kind", &d.kind, &o.kind);
            }
        }
        (ArtifactSpec::Ip6Tunnel(d), ArtifactSpec::Ip6Tunnel(o)) => tunnel_drift(d, o, &mut out),
        (ArtifactSpec::PppLink(d), ArtifactSpec::PppLink(o)) => {
            if d.admin_up.is_some() && d.admin_up != o.admin_up {
                push(&mut out, "adminUp", &d.admin_up, &o.admin_up);
            }
            if d.mtu.is_some() && d.mtu != o.mtu {
                push(&mut out, "mtu", &d.mtu, &o.mtu);
            }
        }
        (ArtifactSpec::Address(d), ArtifactSpec::Address(o)) => {
            // The key already holds ifname and address; nothing else is compared.
            if d != o {
                push(&mut out, "address", &d.address, &o.address);
            }
        }
        (ArtifactSpec::Route(d), ArtifactSpec::Route(o)) => {
            if d.gateway != o.gateway {
                push(&mut out, "gateway", &d.gateway, &o.gateway);
            }
            if d.oif.is_some() && d.oif != o.oif {
                push(&mut out, "oif", &d.oif, &o.oif);
            }
            if d.protocol != o.protocol {
                push(&mut out, "protocol", &d.protocol, &o.protocol);
            }
        }
        (ArtifactSpec::RouteTable(_), ArtifactSpec::RouteTable(_)) => {}
        (ArtifactSpec::FwmarkRule(d), ArtifactSpec::FwmarkRule(o)) => {
            if d.mask != o.mask {
                push(&mut out, "mask", &d.mask, &o.mask);
            }
            if d.table != o.table {
                push(&mut out, "table", &d.table, &o.table);
            }
            if d.priority != o.priority {
                push(&mut out, "priority", &d.priority, &o.priority);
            }
        }
        (ArtifactSpec::Sysctl(d), ArtifactSpec::Sysctl(o)) => {
            if fold_ws(&d.value) != fold_ws(&o.value) {
                push(&mut out, "value", &d.value, &o.value);
            }
        }
        (ArtifactSpec::NftTable(d), ArtifactSpec::NftTableObserved(o)) => {
            nft_drift(&d.expected_state(), o, &mut out);
        }
        (ArtifactSpec::NftTable(d), ArtifactSpec::NftTable(o)) => {
            nft_drift(&d.expected_state(), &o.expected_state(), &mut out);
        }
        (ArtifactSpec::Unit(d), ArtifactSpec::Unit(o)) => {
            if d.content != o.content {
                push(&mut out, "content", &d.content, &o.content);
            }
            if d.active != o.active {
                push(&mut out, "active", &d.active, &o.active);
            }
        }
        (ArtifactSpec::DnsmasqSection(d), ArtifactSpec::DnsmasqSection(o)) => {
            if d.lines != o.lines {
                push(&mut out, "lines", &d.lines, &o.lines);
            }
        }
        (ArtifactSpec::DhcpClient(d), ArtifactSpec::DhcpClient(o)) => {
            if d.settings != o.settings {
                push(&mut out, "settings", &d.settings, &o.settings);
            }
            if d.effective != o.effective {
                push(&mut out, "effective", &d.effective, &o.effective);
            }
        }
        (ArtifactSpec::Hostname(d), ArtifactSpec::Hostname(o)) => {
            if d.hostname != o.hostname {
                push(&mut out, "hostname", &d.hostname, &o.hostname);
            }
            if d.kernel != o.kernel {
                push(&mut out, "kernel", &d.kernel, &o.kernel);
            }
        }
        // Target and detail are reports, not intent.
        (ArtifactSpec::Health(d), ArtifactSpec::Health(o)) => {
            if d.healthy != o.healthy {
                push(&mut out, "healthy", &d.healthy, &o.healthy);
            }
        }
        // A state variable's value is read by its dependents' predicates, never applied.
        (ArtifactSpec::State(_), ArtifactSpec::State(_)) => {}
        // The AFTR's addresses are read by the tunnel's render, never applied.
        (ArtifactSpec::Aftr(_), ArtifactSpec::Aftr(_)) => {}
        (ArtifactSpec::FileBlock(d), ArtifactSpec::FileBlock(o)) => {
            if d.lines != o.lines {
                push(&mut out, "lines", &d.lines, &o.lines);
            }
            if d.mode != o.mode {
                push(&mut out, "mode", &format!("{:04o}", d.mode), &format!("{:04o}", o.mode));
            }
        }
        (ArtifactSpec::PppSecret(d), ArtifactSpec::PppSecret(o)) => {
            if d.client != o.client {
                push(&mut out, "client", &d.client, &o.client);
            }
            // Digests only: the value is in no document.
            if d.secret != o.secret {
                push(&mut out, "secret", &d.secret, &o.secret);
            }
            if d.mode != o.mode {
                push(&mut out, "mode", &format!("{:04o}", d.mode), &format!("{:04o}", o.mode));
            }
        }
        (ArtifactSpec::Timesyncd(d), ArtifactSpec::Timesyncd(o)) => {
            if d.servers != o.servers {
                push(&mut out, "servers", &d.servers, &o.servers);
            }
            if d.effective != o.effective {
                push(&mut out, "effective", &d.effective, &o.effective);
            }
        }
        // timesyncd may use more servers than the config names (a drop-in of the operator's).
        (ArtifactSpec::TimesyncServers(d), ArtifactSpec::TimesyncServers(o)) => {
            if !d.servers.iter().all(|s| o.servers.contains(s)) {
                push(&mut out, "servers", &d.servers, &o.servers);
            }
        }
        // Delivery counters are a report, not intent.
        (ArtifactSpec::LogSink(d), ArtifactSpec::LogSink(o)) => {
            if d.min_level != o.min_level {
                push(&mut out, "minLevel", &d.min_level, &o.min_level);
            }
            if d.output != o.output {
                push(&mut out, "output", &d.output, &o.output);
            }
        }
        (ArtifactSpec::Opaque(d), ArtifactSpec::Opaque(o)) => {
            if d.attributes != o.attributes {
                push(&mut out, "attributes", &d.attributes, &o.attributes);
            }
        }
        (d, o) => push(&mut out, "type", &type_name(d), &type_name(o)),
    }
    out
}

/// Every tunnel parameter is compared (`None` local or underlying link is a value: any); MTU and
/// admin state only when desired.
fn tunnel_drift(d: &Ip6TunnelSpec, o: &Ip6TunnelSpec, out: &mut Vec<AttributeDiff>) {
    if d.mode != o.mode {
        push(out, "mode", &d.mode, &o.mode);
    }
    if d.remote != o.remote {
        push(out, "remote", &d.remote, &o.remote);
    }
    if d.local != o.local {
        push(out, "local", &d.local, &o.local);
    }
    if d.underlying != o.underlying {
        push(out, "underlying", &d.underlying, &o.underlying);
    }
    if d.encap_limit != o.encap_limit {
        push(out, "encapLimit", &d.encap_limit, &o.encap_limit);
    }
    if d.mtu.is_some() && d.mtu != o.mtu {
        push(out, "mtu", &d.mtu, &o.mtu);
    }
    if d.admin_up.is_some() && d.admin_up != o.admin_up {
        push(out, "adminUp", &d.admin_up, &o.admin_up);
    }
}

fn nft_drift(d: &NftTableState, o: &NftTableState, out: &mut Vec<AttributeDiff>) {
    if d.comment != o.comment {
        push(out, "comment", &d.comment, &o.comment);
    }
    let names = |s: &NftTableState| s.chains.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    if names(d) != names(o) {
        push(out, "chains", &names(d), &names(o));
        return;
    }
    for (dc, oc) in d.chains.iter().zip(&o.chains) {
        if dc.base != oc.base {
            push(out, &format!("chains.{}.hook", dc.name), &dc.base, &oc.base);
        }
        if dc.rules != oc.rules {
            push(out, &format!("chains.{}.rules", dc.name), &dc.rules, &oc.rules);
        }
    }
}

fn push<D: Serialize + ?Sized, O: Serialize + ?Sized>(
    out: &mut Vec<AttributeDiff>,
    attribute: &str,
    desired: &D,
    observed: &O,
) {
    out.push(AttributeDiff {
        attribute: attribute.to_string(),
        desired: serde_json::to_value(desired).unwrap_or(Value::Null),
        observed: serde_json::to_value(observed).unwrap_or(Value::Null),
    });
}

fn fold_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn type_name(s: &ArtifactSpec) -> &'static str {
    match s {
        ArtifactSpec::Link(_) => "link",
        ArtifactSpec::Address(_) => "address",
        ArtifactSpec::Route(_) => "route",
        ArtifactSpec::RouteTable(_) => "routeTable",
        ArtifactSpec::FwmarkRule(_) => "fwmarkRule",
        ArtifactSpec::Sysctl(_) => "sysctl",
        ArtifactSpec::Ip6Tunnel(_) => "ip6Tunnel",
        ArtifactSpec::PppLink(_) => "pppLink",
        ArtifactSpec::NftTable(_) | ArtifactSpec::NftTableObserved(_) => "nftTable",
        ArtifactSpec::Unit(_) => "unit",
        ArtifactSpec::DnsmasqSection(_) => "dnsmasqSection",
        ArtifactSpec::DhcpClient(_) => "dhcpClient",
        ArtifactSpec::Hostname(_) => "hostname",
        ArtifactSpec::Health(_) => "health",
        ArtifactSpec::State(_) => "state",
        ArtifactSpec::Aftr(_) => "aftr",
        ArtifactSpec::FileBlock(_) => "fileBlock",
        ArtifactSpec::PppSecret(_) => "pppSecret",
        ArtifactSpec::Timesyncd(_) => "timesyncd",
        ArtifactSpec::TimesyncServers(_) => "timesyncServers",
        ArtifactSpec::LogSink(_) => "logSink",
        ArtifactSpec::Opaque(_) => "opaque",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::{
        EncapLimit, Ip6TunnelMode, Ip6TunnelSpec, LinkKind, LinkSpec, SysctlSpec, VlanProtocol,
    };

    #[test]
    fn link_drift_ignores_fields_left_unset() {
        let d = ArtifactSpec::Link(LinkSpec {
            ifname: "lan".into(),
            admin_up: Some(true),
            mtu: None,
            kind: None,
        });
        let o = ArtifactSpec::Link(LinkSpec {
            ifname: "lan".into(),
            admin_up: Some(true),
            mtu: Some(9000),
            kind: Some(LinkKind::Other { name: "veth".into() }),
        });
        assert!(drift(&d, &o).is_empty());
        let down = ArtifactSpec::Link(LinkSpec {
            ifname: "lan".into(),
            admin_up: Some(false),
            mtu: Some(1500),
            kind: None,
        });
        let diffs = drift(&d, &down);
        assert_eq!(diffs.len(), 1);
        assert_eq!(diffs[0].attribute, "adminUp");
    }

    fn vlan(parent: &str, id: u16) -> Option<LinkKind> {
        Some(LinkKind::Vlan { parent: parent.into(), id, protocol: VlanProtocol::Ieee8021Q })
    }

    #[test]
    fn link_drift_compares_a_declared_kind_with_the_observed_one() {
        let link = |kind| {
            ArtifactSpec::Link(LinkSpec {
                ifname: "eth1.20".into(),
                admin_up: Some(true),
                mtu: None,
                kind,
            })
        };
        assert!(drift(&link(vlan("eth1", 20)), &link(vlan("eth1", 20))).is_empty());
        for other in [vlan("eth1", 30), vlan("eth2", 20), None] {
            let diffs = drift(&link(vlan("eth1", 20)), &link(other));
            assert_eq!(diffs.len(), 1, "{diffs:?}");
            assert_eq!(diffs[0].attribute, "kind");
        }
    }

    #[test]
    fn tunnel_drift_treats_absent_local_and_underlying_as_values() {
        let desired = Ip6TunnelSpec {
            ifname: "dslite0".into(),
            mode: Ip6TunnelMode::Ipip6,
            remote: "2001:db8::1".parse().expect("literal"),
            local: None,
            underlying: None,
            encap_limit: EncapLimit::None,
            mtu: None,
            admin_up: Some(true),
        };
        let same = Ip6TunnelSpec { mtu: Some(1460), ..desired.clone() };
        assert!(
            drift(&ArtifactSpec::Ip6Tunnel(desired.clone()), &ArtifactSpec::Ip6Tunnel(same))
                .is_empty()
        );
        let bound = Ip6TunnelSpec {
            local: Some("2001:db8::2".parse().expect("literal")),
            underlying: Some("eth0".into()),
            encap_limit: EncapLimit::DEFAULT,
            ..desired.clone()
        };
        let diffs = drift(&ArtifactSpec::Ip6Tunnel(desired), &ArtifactSpec::Ip6Tunnel(bound));
        let names: Vec<&str> = diffs.iter().map(|d| d.attribute.as_str()).collect();
        assert_eq!(names, ["local", "underlying", "encapLimit"]);
        assert_eq!(diffs[2].desired, serde_json::json!("none"));
        assert_eq!(diffs[2].observed, serde_json::json!(4));
    }

    #[test]
    fn sysctl_drift_folds_whitespace() {
        let d = ArtifactSpec::Sysctl(SysctlSpec { key: "k".into(), value: "4096 87380".into() });
        let o = ArtifactSpec::Sysctl(SysctlSpec { key: "k".into(), value: "4096\t87380\n".into() });
        assert!(drift(&d, &o).is_empty());
    }
}
