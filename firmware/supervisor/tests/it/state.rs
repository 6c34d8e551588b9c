//! StatePolicy evaluation with real conditions: `routerd serve` on a router namespace whose
//! uplink gains and loses a global IPv6 address, and a DNS server in the upstream namespace
//! that answers for the AFTR's name and then goes away. The NAT tables gated on the variables
//! follow: created while their `when.state` holds, withdrawn when it stops holding.

use std::process::Stdio;
use std::time::Duration;

use routerd_test_kit::daemon::Daemon;
use routerd_test_kit::router::{self, NET, RouterDoc};

use crate::daemon::serve_command;
use crate::support::Netns;

/// A router with uplink `wan` on wan0, then `resources` (list items).
fn router(name: &str, resources: &str) -> String {
    RouterDoc::new(name)
        .resource(NET, "Interface", "wan", "{ifname: wan0, managed: true, adminUp: true}")
        .raw(resources)
        .to_string()
}

/// An `IPv4SourceNAT` named `name` for `source` out of `wan`, gated by `when.state` `gate`.
fn gated_nat(name: &str, source: &str, gate: &str) -> String {
    let spec = format!(
        "
        outboundInterface: wan
        sourceCIDRs: [{source}]
        translation: {{type: interfaceAddress}}
        when: {{state: {gate}}}
        "
    );
    router::item(NET, "IPv4SourceNAT", name, &spec)
}

/// The uplink's variable (`native` with a global IPv6 address, else `legacy`), the AFTR's
/// (set while its name resolves), and a NAT table gated on each value.
fn config() -> String {
    let nats = [
        gated_nat("native", "192.168.10.0/24", "{uplink: {equals: native}}"),
        gated_nat("legacy", "192.168.20.0/24", "{uplink: {equals: legacy}}"),
        gated_nat("tunnel", "192.168.30.0/24", "{aftr: {exists: true}}"),
    ];
    router("state", &format!("{STATE_POLICIES}{}", nats.concat()))
}

/// The uplink's address and the two variables.
const STATE_POLICIES: &str = r#"    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticAddress
      metadata: {name: wan-v4}
      spec: {interface: wan, address: 198.51.100.2/24}
    - apiVersion: net.routerd.net/v1alpha1
      kind: StatePolicy
      metadata: {name: uplink}
      spec:
        variable: uplink
        interface: wan
        values:
          - value: native
            when: {ipv6Address: {global: true}}
          - value: legacy
            when: {}
    - apiVersion: net.routerd.net/v1alpha1
      kind: StatePolicy
      metadata: {name: aftr}
      spec:
        variable: aftr
        values:
          - value: resolvable
            when:
              dnsResolve:
                name: aftr.example.test
                upstreamSource: static
                upstreamServers: [198.51.100.1]
"#;

/// The routerd NAT tables of `ns`, by resource name, sorted.
fn nat_tables(ns: &Netns) -> Vec<String> {
    let out = ns.command("nft").args(["list", "tables"]).output().expect("nft runs");
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("table ip routerd_snat_"))
        .map(str::to_owned)
        .collect();
    names.sort();
    names
}

#[test]
fn state_variables_follow_the_uplinks_address_and_a_dns_answer() {
    let router = Netns::new("st-r");
    let upstream = Netns::new("st-u");
    router.veth_to("wan0", &upstream, "up0");
    upstream.ip(&["addr", "add", "198.51.100.1/24", "dev", "up0"]);
    upstream.ip(&["link", "set", "up0", "up"]);
    let dns = Daemon::spawn(
        upstream
            .command("dnsmasq")
            .args(["--keep-in-foreground", "--no-resolv"])
            .args(["--no-hosts", "--conf-file=/dev/null", "--listen-address=198.51.100.1"])
            .args(["--bind-interfaces", "--host-record=aftr.example.test,2001:db8:ff::1"])
            .stdout(Stdio::null()),
    );
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("router.yaml"), config()).expect("config");
    let mut daemon = Daemon::spawn(&mut serve_command(router.name(), dir.path()));

    // No global IPv6 address on the uplink: `legacy`; the AFTR's name resolves.
    daemon.wait_until("legacy and tunnel NAT", Duration::from_secs(30), || {
        nat_tables(&router) == ["legacy", "tunnel"]
    });

    // A global address (DAD skipped, so it is usable at once): `native` replaces `legacy`.
    router.ip(&["addr", "add", "2001:db8:1::2/64", "dev", "wan0", "nodad"]);
    daemon.wait_until("native NAT", Duration::from_secs(30), || {
        nat_tables(&router) == ["native", "tunnel"]
    });

    // A unique local address is not an uplink's: back to `legacy` once the global one goes.
    router.ip(&["addr", "add", "fd00:1::2/64", "dev", "wan0", "nodad"]);
    router.ip(&["addr", "del", "2001:db8:1::2/64", "dev", "wan0"]);
    daemon.wait_until("legacy NAT again", Duration::from_secs(30), || {
        nat_tables(&router) == ["legacy", "tunnel"]
    });

    // The DNS server goes away: `aftr` loses its value and the tunnel's NAT is withdrawn
    // within an evaluation interval and a lookup timeout.
    drop(dns);
    daemon.wait_until("tunnel NAT withdrawn", Duration::from_secs(30), || {
        nat_tables(&router) == ["legacy"]
    });
}

/// A delegation on the uplink and a variable reading it: `delegated` while a prefix is there,
/// `lost` once there has been none for 6 s; a NAT table gated on each value.
fn pd_config() -> String {
    let policy = "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6PrefixDelegation
      metadata: {name: isp-pd}
      spec: {interface: wan}
    - apiVersion: net.routerd.net/v1alpha1
      kind: StatePolicy
      metadata: {name: pd}
      spec:
        variable: pd
        values:
          - value: delegated
            when: {ipv6PrefixDelegation: {resource: isp-pd, available: true}}
          - value: lost
            when: {ipv6PrefixDelegation: {resource: isp-pd, unavailableFor: 6s}}
";
    let nats = [
        gated_nat("delegated", "192.168.10.0/24", "{pd: {equals: delegated}}"),
        gated_nat("lost", "192.168.20.0/24", "{pd: {equals: lost}}"),
    ];
    router("state-pd", &format!("{policy}{}", nats.concat()))
}

#[test]
fn a_prefix_delegation_variable_follows_the_delegated_prefix_and_how_long_it_has_been_gone() {
    let router = Netns::new("st-pd");
    router.ip(&["link", "add", "wan0", "type", "veth", "peer", "name", "wan0-peer"]);
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("router.yaml"), pd_config()).expect("config");
    // The daemon runs no DHCPv6 client here (no systemd-networkd): the delegation is what the
    // client would leave in the kernel, its unreachable route (RFC 7084 WPD-5).
    let started = std::time::Instant::now();
    let mut daemon = Daemon::spawn(&mut serve_command(router.name(), dir.path()));

    // No prefix: `lost`, but only once there has been none for 6 s.
    daemon.wait_until("the lost NAT", Duration::from_secs(40), || nat_tables(&router) == ["lost"]);
    assert!(started.elapsed() >= Duration::from_secs(6), "{:?}", started.elapsed());

    // A /56 delegated: `delegated`.
    let route = ["-6", "route", "add", "unreachable", "2001:db8:a0::/56", "dev", "lo"];
    router.ip(&[&route[..], &["proto", "dhcp"]].concat());
    daemon.wait_until("the delegated NAT", Duration::from_secs(30), || {
        nat_tables(&router) == ["delegated"]
    });

    // The delegation lost: no value at once, `lost` again 6 s later.
    let gone = std::time::Instant::now();
    router.ip(&["-6", "route", "del", "unreachable", "2001:db8:a0::/56"]);
    daemon.wait_until("the lost NAT again", Duration::from_secs(40), || {
        nat_tables(&router) == ["lost"]
    });
    assert!(gone.elapsed() >= Duration::from_secs(6), "{:?}", gone.elapsed());
}
