//! The firmware image booted under QEMU (TCG): GRUB picks a slot, systemd starts the
//! supervisor, the factory config reaches the guest kernel, the console and the web UI
//! answer, links this host's kernel cannot make (VLAN, ip6tnl) are made in the guest's, the
//! router is named through systemd-hostnamed, a PPPoE session runs against pppoe-server, a
//! delegated prefix from ISC dhcpd numbers a LAN link (and the DNS server a LAN host hears in
//! the router advertisements), the WAN's DHCPv4 lease gives a default route its gateway and a
//! forwarder its resolver, the operator's data survives a slot switch, RAUC installs a
//! signed update that the next boot runs, and the supervisor's health gate confirms healthy
//! boots and falls back from a broken update.
//!
//! One boot serves every check: under software emulation a boot costs about a minute.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use routerd_image_test::{Guest, LAN_ROUTER, as_disk, https_get, image_dir, image_path};
use serde_json::Value;

const BOOT: Duration = Duration::from_secs(300);
const COMMAND: Duration = Duration::from_secs(60);

/// `routerctl -o json ARGS` in the guest, parsed.
fn routerctl_json(guest: &mut Guest, args: &str) -> Value {
    let out = guest.must_run(&format!("routerctl -o json {args}"), COMMAND);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("routerctl {args}: {e}:\n{out}"))
}

/// Waits until the daemon has finished a reconcile of generation `generation` or later;
/// its status document.
fn reconciled(guest: &mut Guest, generation: u64, limit: Duration) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let (rc, out) = guest.run("routerctl -o json status", COMMAND);
        if rc == 0 {
            let status: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
            let observed = status["observedGeneration"].as_u64().unwrap_or(0);
            if observed >= generation && status["reconciles"].as_u64().unwrap_or(0) >= 1 {
                return status;
            }
        }
        assert!(Instant::now() < deadline, "no reconcile of generation {generation}: {out}");
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// The condition `kind` of the resource whose ID ends in `suffix` (`/StatePolicy/pd-state`)
/// in the plan, `Null` when there is none.
fn condition(guest: &mut Guest, suffix: &str, kind: &str) -> Value {
    let doc = routerctl_json(guest, "plan");
    doc["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["id"].as_str().is_some_and(|id| id.ends_with(suffix)))
        .flat_map(|r| r["conditions"].as_array().into_iter().flatten())
        .find(|c| c["type"] == kind)
        .cloned()
        .unwrap_or(Value::Null)
}

/// Each resource's phase, by resource ID (`Kind/name`).
fn phases(guest: &mut Guest) -> Vec<(String, String, String)> {
    let doc = routerctl_json(guest, "resources");
    let list = doc.as_array().cloned().or_else(|| doc["resources"].as_array().cloned());
    list.unwrap_or_default()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap_or_default().to_string(),
                r["phase"].as_str().unwrap_or_default().to_string(),
                r.to_string(),
            )
        })
        .collect()
}

/// `ip -d -j link show NAME` in the guest: the link's JSON object.
fn guest_link(guest: &mut Guest, name: &str) -> Value {
    let out = guest.must_run(&format!("ip -d -j link show dev {name}"), COMMAND);
    let v: Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("ip link {name}: {e}: {out}"));
    v[0].clone()
}

/// Waits until the health gate decided this boot; its record (`routerctl ota status`).
fn gate_decision(guest: &mut Guest, limit: Duration) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let status = routerctl_json(guest, "ota status");
        let record = status["gate"][0].clone();
        if record["phase"].as_str().is_some_and(|p| p != "checking") {
            return status;
        }
        assert!(Instant::now() < deadline, "the health gate did not decide: {status}");
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// The PPP password of the PPPoE check: a space, a quote and a backslash the secrets files
/// must carry.
const PPP_PASSWORD: &str = r#"pa ss"w0rd\x"#;

/// A PPPoE session in the guest (generations 3 to 5, on top of `base`, the applied config):
/// Debian's `pppoe-server` in a namespace `isp` stands in for the ISP's access concentrator,
/// cabled to the router by a veth pair, with its own CHAP secrets (`ip netns exec` binds
/// /etc/netns/isp/ppp over /etc/ppp). routerd writes the peer file and the secrets and runs
/// pppd in its unit; the session comes up with the address the concentrator hands out; a
/// changed option restarts it; removing the resource cleans the unit and the secrets up. The
/// password shows nowhere routerd reports or logs.
fn pppoe_session(guest: &mut Guest, base: &str) {
    let escaped = PPP_PASSWORD.replace('\\', "\\\\").replace('"', "\\\"");
    guest.must_run(
        "ip netns add isp && ip link add wan-ppp type veth peer name isp0 netns isp && \
         ip -n isp link set isp0 up && ip link set wan-ppp up && mkdir -p /etc/netns/isp/ppp",
        COMMAND,
    );
    guest.write_file(
        "/etc/netns/isp/ppp/chap-secrets",
        &format!("\"edge@isp.test\" * \"{escaped}\" *"),
    );
    guest.write_file(
        "/etc/netns/isp/ppp/pppoe-server-options",
        "require-chap\nlcp-echo-interval 5\nlcp-echo-failure 3",
    );
    guest.must_run(
        "chmod 600 /etc/netns/isp/ppp/chap-secrets && \
         ip netns exec isp pppoe-server -I isp0 -L 10.64.0.1 -R 10.64.0.2 -N 2",
        COMMAND,
    );
    let yaml_password = PPP_PASSWORD.replace('\'', "''");
    let pppoe = |mtu: u32| {
        format!(
            "    - apiVersion: net.routerd.net/v1alpha1
      kind: Interface
      metadata:
        name: isp-port
      spec:
        ifname: wan-ppp
        managed: false
    - apiVersion: net.routerd.net/v1alpha1
      kind: PPPoEInterface
      metadata:
        name: isp
      spec:
        interface: isp-port
        ifname: ppp-isp
        username: edge@isp.test
        password: '{yaml_password}'
        managed: true
        mtu: {mtu}
        lcpInterval: 5
        lcpFailure: 3
"
        )
    };
    guest.write_file("/tmp/pppoe.yaml", &format!("{base}\n{}", pppoe(1480)));
    guest.must_run("routerctl apply --no-confirm -f /tmp/pppoe.yaml", COMMAND);
    reconciled(guest, 3, COMMAND);
    // The session: the concentrator's addresses on the PPP link, and the far end answers.
    let session = |guest: &mut Guest, mtu: u64| {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let (_, out) = guest.run("ip -j addr show dev ppp-isp", COMMAND);
            let link: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
            // The concentrator's pool is 10.64.0.2-3 (`-N 2`); a new session may get the
            // second address while the first is still being released.
            let up = link[0]["addr_info"].as_array().into_iter().flatten().any(|a| {
                (a["local"] == "10.64.0.2" || a["local"] == "10.64.0.3")
                    && a["address"] == "10.64.0.1"
                    && a["prefixlen"] == 32
            });
            if up && link[0]["mtu"] == mtu {
                break;
            }
            assert!(Instant::now() < deadline, "no PPPoE session with MTU {mtu}: {out}");
            std::thread::sleep(Duration::from_secs(1));
        }
        let ping =
            guest.must_run("ping -c 1 -W 5 -I ppp-isp 10.64.0.1 >/dev/null && echo ok", COMMAND);
        assert_eq!(ping, "ok\n");
    };
    session(guest, 1480);
    let unit = guest.must_run(
        "systemctl is-enabled routerd-pppoe-isp.service; systemctl is-active \
         routerd-pppoe-isp.service; stat -c %a /etc/ppp/chap-secrets /etc/ppp/pap-secrets",
        COMMAND,
    );
    assert_eq!(unit, "enabled\nactive\n600\n600\n", "{unit}");
    // Every resource is Healthy once the link is there (the PPP link is an external item).
    let deadline = Instant::now() + COMMAND;
    loop {
        let not_healthy: Vec<_> =
            phases(guest).into_iter().filter(|(_, phase, _)| phase != "Healthy").collect();
        if not_healthy.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "with PPPoE, not Healthy: {not_healthy:#?}");
        std::thread::sleep(Duration::from_secs(1));
    }
    // The password is in the secrets files and nowhere routerd reports or logs.
    let leaks = guest.must_run(
        "{ routerctl -o json resources; routerctl -o json status; routerctl -o json plan; \
         routerctl -o json ledger; \
         journalctl -b --no-pager; } | grep -cF 'w0rd' || true",
        COMMAND,
    );
    assert_eq!(leaks, "0\n", "the PPP password was shown");
    let secrets =
        guest.must_run("grep -cF 'w0rd' /etc/ppp/chap-secrets /etc/ppp/pap-secrets", COMMAND);
    assert_eq!(secrets, "/etc/ppp/chap-secrets:1\n/etc/ppp/pap-secrets:1\n", "{secrets}");

    // A changed option rewrites the peer file and restarts the unit: the session comes back
    // with the new MTU.
    guest.write_file("/tmp/pppoe.yaml", &format!("{base}\n{}", pppoe(1400)));
    guest.must_run("routerctl apply --no-confirm -f /tmp/pppoe.yaml", COMMAND);
    reconciled(guest, 4, COMMAND);
    session(guest, 1400);

    // The resource removed: routerd stops and removes its unit (ledger-owned routerd-*.service)
    // and its blocks in the secrets files; the session ends and its link goes.
    guest.write_file("/tmp/pppoe.yaml", base);
    guest.must_run("routerctl apply --no-confirm -f /tmp/pppoe.yaml", COMMAND);
    reconciled(guest, 5, COMMAND);
    let deadline = Instant::now() + COMMAND;
    loop {
        let (_, out) = guest.run(
            "ls /etc/systemd/system/routerd-pppoe-isp.service; ip link show dev ppp-isp; \
             grep -c 'routerd block isp' /etc/ppp/chap-secrets /etc/ppp/pap-secrets",
            COMMAND,
        );
        if out.contains("No such file")
            && out.contains("does not exist")
            && out.contains("chap-secrets:0")
            && out.contains("pap-secrets:0")
        {
            break;
        }
        assert!(Instant::now() < deadline, "PPPoE not cleaned up: {out}");
        std::thread::sleep(Duration::from_secs(1));
    }
    guest.must_run("pkill pppoe-server; ip netns del isp; true", COMMAND);
}

/// DHCPv6 prefix delegation (generations 6 and 7): an ISP's DHCPv6 server (ISC dhcpd, `-6`,
/// delegating /56s) in a namespace of the guest behind a veth uplink, and a second veth as
/// the LAN. The uplink is in a `wan*` zone, whose firewall preset lets DHCPv6 replies in.
/// routerd writes the `.network` files of both links; systemd-networkd takes a
/// delegation on the uplink and puts the LAN address the config asks for (subnet `2a`,
/// suffix `::1`) in the delegated prefix, with the lease's lifetimes; routerd reports it as
/// the binding's observed address, and a DS-Lite tunnel takes it as its local end. Removing
/// the resources takes the address and the tunnel away again.
fn prefix_delegation(guest: &mut Guest, base: &str) {
    guest.must_run(
        "ip netns add isp6 && ip link add wan-pd type veth peer name isp6-0 netns isp6 && \
         ip -n isp6 link set lo up && ip -n isp6 addr add 2001:db8:ffff::1/64 dev isp6-0 && \
         ip -n isp6 link set isp6-0 up && ip link set wan-pd up && \
         ip netns add lan6 && ip link add lan-pd type veth peer name lan-pd-end netns lan6 && \
         ip -n lan6 link set lan-pd-end up && ip link set lan-pd up",
        COMMAND,
    );
    guest.write_file(
        "/tmp/dhcpd6.conf",
        "default-lease-time 600;\nmax-lease-time 7200;\n\
         option dhcp6.name-servers 2001:db8:ffff::1;\nsubnet6 2001:db8:ffff::/64 {\n  \
         prefix6 2001:db8:a000:: 2001:db8:a0ff:: /56;\n}\n",
    );
    // dhcpd binds once the ISP side's address has left tentative state (DAD).
    guest.must_run(
        "for i in $(seq 100); do ip -n isp6 -6 addr show dev isp6-0 tentative | grep -q inet6 \
         || break; sleep 0.1; done; touch /tmp/dhcpd6.leases && ip netns exec isp6 dhcpd -6 -q \
         -cf /tmp/dhcpd6.conf -lf /tmp/dhcpd6.leases -pf /tmp/dhcpd6.pid isp6-0",
        COMMAND,
    );
    // The ISP's resolver names the AFTR (RFC 6333's DS-Lite tunnel end, here the ISP's own
    // address); the router reaches it through an address of the ISP's /64 on the uplink.
    guest.must_run(
        "ip -6 addr add 2001:db8:ffff::2/64 dev wan-pd nodad && ip netns exec isp6 dnsmasq \
         --no-resolv --no-hosts --conf-file=/dev/null --user=root --bind-interfaces \
         --listen-address=2001:db8:ffff::1 --pid-file=/tmp/aftr-dns.pid \
         --host-record=aftr.example.test,2001:db8:ffff::1",
        COMMAND,
    );
    let pd = "    - apiVersion: net.routerd.net/v1alpha1
      kind: Interface
      metadata:
        name: pd-uplink
      spec:
        ifname: wan-pd
        managed: false
    - apiVersion: firewall.routerd.net/v1alpha1
      kind: Zone
      metadata:
        name: wan-isp6
      spec:
        interfaces: [pd-uplink]
    - apiVersion: net.routerd.net/v1alpha1
      kind: Interface
      metadata:
        name: pd-lan
      spec:
        ifname: lan-pd
        managed: false
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6PrefixDelegation
      metadata:
        name: isp-pd
      spec:
        interface: pd-uplink
        prefixLength: 56
        required: true
        convergenceTimeout: 3m
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6DelegatedAddress
      metadata:
        name: lan-pd-v6
      spec:
        prefixDelegation: isp-pd
        interface: pd-lan
        subnetID: \"2a\"
        addressSuffix: \"::1\"
    - apiVersion: net.routerd.net/v1alpha1
      kind: DSLiteTunnel
      metadata:
        name: ds-pd
      spec:
        interface: pd-uplink
        aftrFQDN: aftr.example.test
        aftrDNSServers: [\"2001:db8:ffff::1\"]
        localAddressSource: delegatedAddress
        localDelegatedAddress: lan-pd-v6
    - apiVersion: net.routerd.net/v1alpha1
      kind: HealthCheck
      metadata:
        name: aftr
      spec:
        interface: ds-pd
        targetSource: dsliteRemote
        interval: 2s
    - apiVersion: net.routerd.net/v1alpha1
      kind: SelfAddressPolicy
      metadata:
        name: lan-pd-dns
      spec:
        addressFamily: ipv6
        candidates:
          - source: delegatedAddress
            delegatedAddress: lan-pd-v6
            addressSuffix: \"::53\"
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6DHCPServer
      metadata:
        name: pd-ra
      spec:
        managed: true
        listenInterfaces: [pd-lan]
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6DHCPScope
      metadata:
        name: pd-lan-ra
      spec:
        server: pd-ra
        delegatedAddress: lan-pd-v6
        dnsSource: self
        selfAddressPolicy: lan-pd-dns
    - apiVersion: net.routerd.net/v1alpha1
      kind: StatePolicy
      metadata:
        name: pd-state
      spec:
        variable: isp.pd
        values:
          - value: delegated
            when: {ipv6PrefixDelegation: {resource: isp-pd}}
    - apiVersion: net.routerd.net/v1alpha1
      kind: StatePolicy
      metadata:
        name: isp-dns
      spec:
        variable: isp.dns
        values:
          - value: answers
            when:
              dnsResolve:
                name: aftr.example.test
                upstreamSource: dhcp6
                upstreamInterface: pd-uplink
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DHCPAddress
      metadata:
        name: wan-dhcp
      spec:
        interface: wan
        required: true
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4DefaultRoutePolicy
      metadata:
        name: uplink
      spec:
        candidates:
          - name: qemu
            interface: wan
            gatewaySource: dhcp4
            priority: 50
    - apiVersion: net.routerd.net/v1alpha1
      kind: DNSConditionalForwarder
      metadata:
        name: isp
      spec:
        domain: isp.example
        upstreamSource: dhcp4
        upstreamInterface: wan
";
    guest.write_file("/tmp/pd.yaml", &format!("{base}\n{pd}"));
    guest.must_run("routerctl apply --no-confirm -f /tmp/pd.yaml", COMMAND);
    reconciled(guest, 6, COMMAND);
    // The LAN address in subnet 2a of the /56 dhcpd delegated, with the lease's lifetimes.
    let deadline = Instant::now() + Duration::from_secs(120);
    let address = loop {
        let (_, out) = guest.run("ip -j -6 addr show dev lan-pd scope global", COMMAND);
        let link: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        let found = link[0]["addr_info"].as_array().into_iter().flatten().find_map(|a| {
            let local = a["local"].as_str()?;
            let in_pool = local.starts_with("2001:db8:a0") && local.ends_with(":2a::1");
            (in_pool && a["prefixlen"] == 64 && a["valid_life_time"].as_u64() <= Some(7200))
                .then(|| local.to_string())
        });
        if let Some(found) = found {
            break found;
        }
        let (_, wan) = guest.run("networkctl status wan-pd lan-pd --no-pager", COMMAND);
        assert!(Instant::now() < deadline, "no delegated address on lan-pd: {out}\n{wan}");
        std::thread::sleep(Duration::from_secs(1));
    };
    // routerd reports it as the binding's observed result, and every resource is Healthy.
    let deadline = Instant::now() + COMMAND;
    loop {
        let doc = routerctl_json(guest, "plan").to_string();
        let not_healthy: Vec<_> =
            phases(guest).into_iter().filter(|(_, phase, _)| phase != "Healthy").collect();
        if not_healthy.is_empty() && doc.contains(&format!("\"{address}/64\"")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "with PD, {address} not reported or not Healthy: {not_healthy:#?}\n{doc}"
        );
        std::thread::sleep(Duration::from_secs(1));
    }

    // The DS-Lite tunnel's local end is that address, and its remote end the AFTR resolved
    // from aftrFQDN through the ISP's resolver: runtime values, so the tunnel waited for both
    // (ADR 0008).
    let deadline = Instant::now() + COMMAND;
    loop {
        let (_, out) = guest.run("ip -j -d link show dev ds-pd", COMMAND);
        let link: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        let data = &link[0]["linkinfo"]["info_data"];
        if data["local"] == address.as_str() && data["remote"] == "2001:db8:ffff::1" {
            break;
        }
        assert!(Instant::now() < deadline, "no DS-Lite tunnel from {address}: {out}");
        std::thread::sleep(Duration::from_secs(1));
    }

    // The HealthCheck of the tunnel's far end pings the AFTR the tunnel uses, over the
    // tunnel's underlying link.
    let deadline = Instant::now() + COMMAND;
    loop {
        let healthy = condition(guest, "/HealthCheck/aftr", "Healthy");
        if healthy["status"] == "True" {
            let message = healthy["message"].as_str().unwrap_or_default();
            assert!(message.contains("2001:db8:ffff::1"), "{healthy}");
            break;
        }
        assert!(Instant::now() < deadline, "the AFTR check is not healthy: {healthy}");
        std::thread::sleep(Duration::from_secs(1));
    }

    // A host on the LAN hears the delegated prefix in the router's advertisements, and as its
    // DNS server the address SelfAddressPolicy selects: ::53 in the delegated subnet.
    let subnet = address.strip_suffix("::1").unwrap_or(&address);
    let dns = format!("{subnet}::53");
    let deadline = Instant::now() + COMMAND;
    loop {
        let (_, ra) = guest.run("ip netns exec lan6 rdisc6 -1 -r 2 -w 1500 lan-pd-end", COMMAND);
        let rdnss = ra.lines().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            (name.trim() == "Recursive DNS server").then(|| value.trim().to_string())
        });
        if rdnss.as_deref() == Some(dns.as_str()) && ra.contains(":2a::/64") {
            break;
        }
        let (_, conf) = guest.run("cat /var/lib/routerd/dnsmasq/dnsmasq.conf", COMMAND);
        assert!(Instant::now() < deadline, "no RA naming {dns}: {ra}\n{conf}");
        std::thread::sleep(Duration::from_secs(1));
    }
    let selected = condition(guest, "/SelfAddressPolicy/lan-pd-dns", "Selected");
    assert_eq!(selected["reason"], "CandidateSelected", "{selected}");
    assert!(selected["message"].as_str().is_some_and(|m| m.starts_with(&dns)), "{selected}");

    // The StatePolicy reads the delegation from the unreachable route networkd installs for
    // the /56 (RFC 7084 WPD-5).
    let pool = format!("{}::/56", subnet.trim_end_matches(":2a"));
    let deadline = Instant::now() + COMMAND;
    loop {
        let value = condition(guest, "/StatePolicy/pd-state", "Value");
        let message = value["message"].as_str().unwrap_or_default();
        if value["status"] == "True" && message.contains("isp.pd = delegated") {
            assert!(message.contains(&format!("isp-pd has {pool}")), "{value}");
            break;
        }
        assert!(Instant::now() < deadline, "isp.pd not delegated: {value}");
        std::thread::sleep(Duration::from_secs(1));
    }
    // The delegation reports its prefix as its binding's observed result.
    let doc = routerctl_json(guest, "plan");
    let delegation = doc["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["id"].as_str().is_some_and(|id| id.ends_with("/IPv6PrefixDelegation/isp-pd")))
        .cloned()
        .unwrap_or(Value::Null);
    assert!(delegation.to_string().contains(&format!("\"{pool}\"")), "{delegation}");
    // And resolves a name through the DNS server of the uplink's DHCPv6 reply (dhcpd's
    // name-servers option, the ISP's dnsmasq), which networkd reports.
    let deadline = Instant::now() + COMMAND;
    loop {
        let value = condition(guest, "/StatePolicy/isp-dns", "Value");
        let message = value["message"].as_str().unwrap_or_default();
        if value["status"] == "True" && message.contains("isp.dns = answers") {
            assert!(message.contains("resolves to 2001:db8:ffff::1"), "{value}");
            break;
        }
        assert!(Instant::now() < deadline, "isp.dns not answered: {value}");
        std::thread::sleep(Duration::from_secs(1));
    }

    // The default-route candidate with `gatewaySource: dhcp4` goes through the router of the
    // WAN's DHCPv4 lease (QEMU's 10.0.2.2), which routerd read from networkd: a route of
    // routerd's protocol (208) beside networkd's own. The forwarder sends its domain to the
    // lease's DNS server (QEMU's 10.0.2.3).
    let deadline = Instant::now() + COMMAND;
    loop {
        let (_, out) = guest.run(
            "ip -4 route show default dev eth0; grep isp.example /var/lib/routerd/dnsmasq/dnsmasq.conf",
            COMMAND,
        );
        if out.lines().any(|l| l.starts_with("default via 10.0.2.2 proto 208 metric 50"))
            && out.lines().any(|l| l.starts_with("default via 10.0.2.2 proto dhcp"))
            && out.lines().any(|l| l == "server=/isp.example/10.0.2.3")
        {
            break;
        }
        let (_, lease) = guest.run("networkctl status eth0 --no-pager", COMMAND);
        assert!(
            Instant::now() < deadline,
            "no default route via the lease's router: {out}\n{lease}"
        );
        std::thread::sleep(Duration::from_secs(1));
    }
    // Both required bindings are bound (their `Bound` conditions, from networkd), so the
    // doctor's B001 passes and names their lease and prefix.
    let lease = condition(guest, "/IPv4DHCPAddress/wan-dhcp", "Bound");
    assert_eq!(lease["status"], "True", "{lease}");
    assert!(lease["message"].as_str().unwrap_or_default().contains("leased 10.0.2."), "{lease}");
    let delegated = condition(guest, "/IPv6PrefixDelegation/isp-pd", "Bound");
    assert_eq!(delegated["status"], "True", "{delegated}");
    assert!(delegated["message"].as_str().unwrap_or_default().contains(&pool), "{delegated}");
    let doctor = guest.must_run("routerctl doctor leases", COMMAND);
    assert!(doctor.contains("pass  B001"), "{doctor}");

    // The resources removed: routerd deletes both bindings (their files go), networkd releases
    // the delegation and removes the LAN address.
    guest.write_file("/tmp/pd.yaml", base);
    guest.must_run("routerctl apply --no-confirm -f /tmp/pd.yaml", COMMAND);
    reconciled(guest, 7, COMMAND);
    let deadline = Instant::now() + COMMAND;
    loop {
        let (_, out) = guest.run(
            "ls /etc/systemd/network/10-routerd-wan-pd.network \
             /etc/systemd/network/10-routerd-lan-pd.network 2>&1; \
             ip -6 -o addr show dev lan-pd scope global; ip link show dev ds-pd; \
             ip -4 route show default dev eth0; cat /var/lib/routerd/dnsmasq/dnsmasq.conf",
            COMMAND,
        );
        if out.matches("No such file").count() == 2
            && !out.contains(&address)
            && out.contains("does not exist")
            && !out.contains("proto 208 metric 50")
            && !out.contains("isp.example")
        {
            break;
        }
        assert!(Instant::now() < deadline, "prefix delegation not cleaned up: {out}");
        std::thread::sleep(Duration::from_secs(1));
    }
    guest.must_run(
        "kill $(cat /tmp/dhcpd6.pid) $(cat /tmp/aftr-dns.pid); ip netns del isp6; \
         ip netns del lan6; ip link del lan-pd; true",
        COMMAND,
    );
}

/// Asserts that GRUB booted `slot` (`'A'` or `'B'`: its root partition and `rauc.slot=` on
/// the kernel command line); returns the slot state in grubenv (`grub-editenv … list`).
fn booted(guest: &mut Guest, slot: char) -> String {
    let cmdline = guest.must_run("cat /proc/cmdline", COMMAND);
    let label = format!("root=PARTLABEL=rootfs-{}", slot.to_ascii_lowercase());
    assert!(
        cmdline.contains(&label) && cmdline.contains(&format!("rauc.slot={slot}")),
        "{cmdline}"
    );
    guest.must_run("grub-editenv /boot/efi/EFI/BOOT/grubenv list", COMMAND)
}

#[test]
fn the_image_boots_applies_its_configs_survives_slot_switches_and_updates_with_a_health_gate() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("image-{}", std::process::id()));
    // The signed update bundle of `just test-image`, handed to the guest as /dev/vdb.
    // And the broken one (its supervisor fails its doctor) as /dev/vdc.
    let (update, update_len) = as_disk(&image_dir().join("update.raucb"), &dir);
    let (broken, broken_len) = as_disk(&image_dir().join("broken.raucb"), &dir);
    let disks = [update.clone(), broken.clone()];
    let mut guest = Guest::boot_with_disks(&image_path(), &dir, &disks);
    guest.login(BOOT);

    // GRUB booted slot A (the first in ORDER); grubenv is on the boot partition (mounted for
    // RAUC); RAUC's config names both slots and trusts a keyring.
    let grubenv = booted(&mut guest, 'A');
    assert!(grubenv.contains("B_TRY=0"), "{grubenv}");
    let rauc = guest.must_run(
        "grep -c '^device=/dev/disk/by-partlabel/rootfs-' /etc/rauc/system.conf; head -1 /etc/rauc/keyring.pem",
        COMMAND,
    );
    assert_eq!(rauc, "2\n-----BEGIN CERTIFICATE-----\n", "{rauc}");
    // The data partition is mounted and holds the config and the state.
    let mounts = guest.must_run(
        "findmnt -n -o SOURCE,TARGET /data; readlink -f /etc/routerd/router.yaml /var/lib/routerd",
        COMMAND,
    );
    assert!(
        mounts.contains("/data")
            && mounts.contains("/data/routerd/etc/router.yaml")
            && mounts.contains("/data/routerd/state"),
        "{mounts}"
    );

    // The supervisor: typed on the console as an operator would.
    let status = reconciled(&mut guest, 1, BOOT);
    let table = guest.must_run("routerctl status", COMMAND);
    assert!(table.contains("state") && table.contains("phase"), "{table}");
    let unit = guest
        .must_run("systemctl show -p ActiveState,SubState,WatchdogUSec routerd.service", COMMAND);
    assert!(unit.contains("ActiveState=active") && unit.contains("WatchdogUSec=30s"), "{unit}");
    let manager =
        guest.must_run("systemctl show -p RuntimeWatchdogUSec; ls /dev/watchdog0", COMMAND);
    assert!(
        manager.contains("RuntimeWatchdogUSec=30s") && manager.contains("/dev/watchdog0"),
        "{manager}"
    );

    // Every resource of the factory config becomes Healthy (the first-boot unit adopts the
    // NICs and the sysctl once the first reconcile has set them).
    let deadline = Instant::now() + COMMAND;
    loop {
        let not_healthy: Vec<_> =
            phases(&mut guest).into_iter().filter(|(_, phase, _)| phase != "Healthy").collect();
        if not_healthy.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "not Healthy: {not_healthy:#?}\nstatus: {status}");
        std::thread::sleep(Duration::from_secs(1));
    }
    // The WAN's address by DHCP: systemd-networkd configures eth0 from routerd's .network file
    // and takes a lease from QEMU's user-mode network (its DHCP server hands out 10.0.2.15,
    // with 10.0.2.2 as the gateway).
    let file = guest.must_run("networkctl status eth0 | grep 'Network File'", COMMAND);
    assert!(file.contains("/etc/systemd/network/10-routerd-eth0.network"), "{file}");
    let deadline = Instant::now() + COMMAND;
    loop {
        let wan = guest.must_run("ip -4 -o addr show dev eth0; ip -4 route show default", COMMAND);
        if wan.contains("inet 10.0.2.15/24")
            && wan.contains(" dynamic ")
            && wan
                .lines()
                .any(|l| l.starts_with("default via 10.0.2.2") && l.contains("proto dhcp"))
        {
            break;
        }
        assert!(Instant::now() < deadline, "no DHCP lease on the WAN: {wan}");
        std::thread::sleep(Duration::from_secs(1));
    }
    // The doctor finds nothing failing on the image (it warns about the unprotected management
    // interface), and sees systemd's watchdog pings.
    let doctor = guest.must_run("routerctl doctor", COMMAND);
    assert!(doctor.contains(" 0 fail") && doctor.contains("pass  U002"), "{doctor}");
    // The health gate saw the doctor pass and confirmed slot A to RAUC: GRUB's try flag,
    // set when it booted A, is cleared again.
    let ota = gate_decision(&mut guest, BOOT);
    assert_eq!(ota["gate"][0]["phase"], "good", "{ota}");
    assert_eq!(ota["gate"][0]["slot"], "rootfs.0", "{ota}");
    let grubenv = guest.must_run("grub-editenv /boot/efi/EFI/BOOT/grubenv list", COMMAND);
    assert!(grubenv.contains("A_OK=1") && grubenv.contains("A_TRY=0"), "{grubenv}");
    let first_boot = guest.must_run(
        "systemctl is-active routerd-first-boot.service; ls /var/lib/routerd/factory-adopted",
        COMMAND,
    );
    assert!(first_boot.starts_with("active"), "{first_boot}");

    // The factory config in the guest kernel: LAN address, forwarding, routerd's nft tables.
    let addr = guest.must_run("ip -j -4 addr show dev eth1", COMMAND);
    assert!(
        addr.contains("\"local\":\"192.168.1.1\"") && addr.contains("\"prefixlen\":24"),
        "{addr}"
    );
    assert_eq!(guest.must_run("cat /proc/sys/net/ipv4/ip_forward", COMMAND).trim(), "1");
    let tables = guest.must_run("nft list tables", COMMAND);
    assert!(
        tables.contains("table ip routerd_snat_lan_masquerade")
            && tables.contains("table inet routerd_filter_default"),
        "{tables}"
    );

    // The LAN is cabled: the router answers its LAN address.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ping = guest.lan.command("ping").args(["-c", "1", "-W", "2", "192.168.1.1"]).output();
        let ping = ping.expect("ip netns exec ping");
        if ping.status.success() {
            break;
        }
        assert!(Instant::now() < deadline, "192.168.1.1 does not answer on the LAN: {ping:?}");
    }

    // DHCP on the LAN: routerd wrote routerd-dnsmasq.service, systemd enabled and started it,
    // and a client on the LAN gets an address of the factory pool with the router as gateway
    // and resolver (busybox udhcpc, one lease, then exit).
    let unit = guest.must_run(
        "systemctl is-enabled routerd-dnsmasq.service; systemctl is-active routerd-dnsmasq.service",
        COMMAND,
    );
    assert_eq!(unit, "enabled\nactive\n", "{unit}");
    let events = dir.join("udhcpc.events");
    let script = dir.join("udhcpc.sh");
    let record = format!("echo \"$1 ip=$ip router=$router dns=$dns\" >> {}", events.display());
    std::fs::write(&script, format!("#!/bin/sh\n{record}\n")).expect("udhcpc script");
    let script = script.display().to_string();
    let chmod = std::process::Command::new("chmod").args(["0755", &script]).status();
    assert!(chmod.is_ok_and(|s| s.success()), "chmod {script}");
    let tap = guest.lan_ifname().to_string();
    let dhcp = guest
        .lan
        .command("busybox")
        .args(["udhcpc", "-i", &tap, "-n", "-q", "-f", "-t", "10", "-T", "3", "-s", &script])
        .output()
        .expect("ip netns exec busybox");
    let leases = std::fs::read_to_string(&events).unwrap_or_default();
    let bound = leases.lines().find(|l| l.starts_with("bound")).unwrap_or_default();
    assert!(dhcp.status.success() && !bound.is_empty(), "{dhcp:?}\n{leases}");
    let host: u32 = bound
        .split_whitespace()
        .find_map(|f| f.strip_prefix("ip=192.168.1."))
        .and_then(|h| h.parse().ok())
        .unwrap_or(0);
    assert!((100..=250).contains(&host), "{bound}");
    assert!(bound.contains("router=192.168.1.1 ") && bound.ends_with("dns=192.168.1.1"), "{bound}");

    // The web UI over HTTPS with the certificate the guest made on its first boot, through a
    // port on this host carried over the LAN.
    let cert = guest.must_run("cat /var/lib/routerd/tls/cert.pem", COMMAND);
    let port = guest.forward_from_lan(SocketAddr::from((LAN_ROUTER, 443)));
    let page =
        https_get(port, &cert, "/setup", Duration::from_secs(30)).expect("web UI from the LAN");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("Set the admin password"), "{page}");
    // The factory firewall closes the WAN side: QEMU's forward to the WAN address gets no
    // TLS answer (the SYN is dropped; QEMU gives up and closes).
    let wan = https_get(guest.wan_https, &cert, "/setup", Duration::from_secs(10));
    assert!(wan.is_err(), "the web UI answered on the WAN side: {wan:?}");

    // A VLAN on the LAN port and a DS-Lite (ip6tnl, ipip6) tunnel on the WAN port, from a
    // config applied on the console: made by routerd in the guest's kernel. The same config
    // names the router, which routerd sets through systemd-hostnamed.
    let hostname = "    - apiVersion: net.routerd.net/v1alpha1
      kind: Hostname
      metadata:
        name: hostname
      spec:
        hostname: edge-lab.home.arpa
        managed: true
";
    let config = format!("{}\n{hostname}", include_str!("../../../examples/vlan-dslite.yaml"));
    guest.write_file("/tmp/vlan-dslite.yaml", &config);
    let before = guest.must_run("hostname", COMMAND);
    assert_ne!(before.trim(), "edge-lab.home.arpa", "the image's own hostname");
    guest.must_run("routerctl apply --no-confirm -f /tmp/vlan-dslite.yaml", COMMAND);
    let status = reconciled(&mut guest, 2, COMMAND);
    // The hostname existed before routerd set it: like a sysctl, it is routerd's once the
    // operator adopts it.
    for (id, phase, doc) in phases(&mut guest) {
        let expected =
            if id.ends_with("/Hostname/hostname") { "RequiresAdoption" } else { "Healthy" };
        assert_eq!(phase, expected, "{id}: {doc}\nstatus: {status}");
    }
    let adopted = guest.must_run("routerctl adopt --apply", COMMAND);
    assert!(adopted.contains("linux.hostname/system"), "{adopted}");
    for (id, phase, doc) in phases(&mut guest) {
        assert_eq!(phase, "Healthy", "after adoption: {id}: {doc}");
    }
    // hostnamed wrote the static hostname and set the kernel's.
    let named = guest.must_run(
        "cat /etc/hostname; hostname; busctl get-property org.freedesktop.hostname1 \
         /org/freedesktop/hostname1 org.freedesktop.hostname1 StaticHostname",
        COMMAND,
    );
    assert_eq!(
        named, "edge-lab.home.arpa\nedge-lab.home.arpa\ns \"edge-lab.home.arpa\"\n",
        "{named}"
    );
    let vlan = guest_link(&mut guest, "eth1.20");
    assert_eq!(vlan["linkinfo"]["info_kind"], "vlan", "{vlan}");
    assert_eq!(vlan["linkinfo"]["info_data"]["id"], 20, "{vlan}");
    assert_eq!(vlan["link"], "eth1", "{vlan}");
    let addr = guest.must_run("ip -j -4 addr show dev eth1.20", COMMAND);
    assert!(addr.contains("\"local\":\"192.168.20.1\""), "{addr}");
    let tunnel = guest_link(&mut guest, "dslite0");
    assert_eq!(tunnel["linkinfo"]["info_kind"], "ip6tnl", "{tunnel}");
    assert_eq!(tunnel["linkinfo"]["info_data"]["proto"], "ipip6", "{tunnel}");
    assert_eq!(tunnel["linkinfo"]["info_data"]["remote"], "2001:db8::1", "{tunnel}");
    assert_eq!(tunnel["linkinfo"]["info_data"]["local"], "2001:db8::2", "{tunnel}");

    pppoe_session(&mut guest, &config);
    prefix_delegation(&mut guest, &config);

    // The operator switches slots (`routerctl ota mark-active other`) and reboots: the
    // config, ledger and generations are on the data partition and come along, and the
    // supervisor re-creates the links there.
    let applied = guest.must_run("sha256sum /etc/routerd/router.yaml", COMMAND);
    let marked = guest.must_run("routerctl ota mark-active other", COMMAND);
    assert!(marked.contains("rootfs.1"), "{marked}");
    guest.reboot(BOOT);
    booted(&mut guest, 'B');
    assert_eq!(guest.must_run("sha256sum /etc/routerd/router.yaml", COMMAND), applied);
    let status = reconciled(&mut guest, 7, BOOT);
    assert_eq!(status["generation"], 7, "{status}");
    // Every generation (factory, the console's applies) is in the ledger's history.
    let history = routerctl_json(&mut guest, "history");
    let generations: Vec<u64> =
        history.as_array().into_iter().flatten().filter_map(|g| g["generation"].as_u64()).collect();
    assert!((1..=7).all(|g| generations.contains(&g)), "{history}");
    let vlan = guest_link(&mut guest, "eth1.20");
    assert_eq!(vlan["linkinfo"]["info_data"]["id"], 20, "after the reboot: {vlan}");
    let tunnel = guest_link(&mut guest, "dslite0");
    assert_eq!(tunnel["linkinfo"]["info_kind"], "ip6tnl", "after the reboot: {tunnel}");
    // Slot B's root file system had the image's hostname: routerd set it there too.
    let deadline = Instant::now() + COMMAND;
    loop {
        let named = guest.must_run("cat /etc/hostname; hostname", COMMAND);
        if named == "edge-lab.home.arpa\nedge-lab.home.arpa\n" {
            break;
        }
        assert!(Instant::now() < deadline, "after the reboot: {named}");
        std::thread::sleep(Duration::from_secs(1));
    }
    // The first-boot adoption ran once: its marker is on the data partition.
    let unit = guest.must_run(
        "systemctl show -p ActiveState,ConditionResult routerd-first-boot.service",
        COMMAND,
    );
    assert!(unit.contains("ConditionResult=no"), "{unit}");
    let ota = gate_decision(&mut guest, BOOT);
    assert_eq!(ota["gate"][0]["phase"], "good", "{ota}");
    assert_eq!(ota["gate"][0]["slot"], "rootfs.1", "{ota}");

    // The image's version, then an update: RAUC on the guest installs the signed bundle (a
    // new root file system with another /etc/routerd-release) into the slot not booted (A),
    // makes it the one to try first, and the next boot runs it, with the same data.
    let release = guest.must_run("cat /etc/routerd-release", COMMAND);
    assert_eq!(release, "VERSION=test-image\n");
    let install = guest.must_run(
        &format!(
            "head -c {update_len} /dev/vdb >/data/update.raucb && rauc install /data/update.raucb; rc=$?; rm -f /data/update.raucb; [ $rc -eq 0 ]"
        ),
        Duration::from_secs(900),
    );
    assert!(install.contains("succeeded"), "{install}");
    let grubenv = guest.must_run("grub-editenv /boot/efi/EFI/BOOT/grubenv list", COMMAND);
    assert!(
        grubenv.contains("ORDER=A B") && grubenv.contains("A_OK=1") && grubenv.contains("A_TRY=0"),
        "{grubenv}"
    );
    guest.reboot(BOOT);
    booted(&mut guest, 'A');
    assert_eq!(guest.must_run("cat /etc/routerd-release", COMMAND), "VERSION=test-update\n");
    assert_eq!(guest.must_run("sha256sum /etc/routerd/router.yaml", COMMAND), applied);
    let status = reconciled(&mut guest, 7, BOOT);
    assert_eq!(status["generation"], 7, "after the update: {status}");
    let ota = gate_decision(&mut guest, BOOT);
    let record = &ota["gate"][0];
    assert_eq!((&record["phase"], &record["slot"]), (&"good".into(), &"rootfs.0".into()), "{ota}");
    assert_eq!(record["version"], "test-update", "{ota}");

    // A broken update: installed into B like the good one, but its supervisor's doctor
    // fails (tests/image/broken). Its health gate marks B bad after its 20 s window and
    // reboots; GRUB skips B and the router comes back on A, which confirms itself again.
    let install = guest.must_run(
        &format!(
            "head -c {broken_len} /dev/vdc >/data/broken.raucb && rauc install /data/broken.raucb; rc=$?; rm -f /data/broken.raucb; [ $rc -eq 0 ]"
        ),
        Duration::from_secs(900),
    );
    assert!(install.contains("succeeded"), "{install}");
    guest.type_line("reboot");
    guest.await_reset(BOOT);
    // The broken slot boots (not logged into) and its gate resets the machine.
    guest.await_reset(Duration::from_secs(600));
    // Only what the next boot prints: the broken boot's console login is not this one.
    let mark = guest.console_mark();
    guest.login_from(mark, BOOT);
    let grubenv = booted(&mut guest, 'A');
    assert!(grubenv.contains("B_OK=0"), "{grubenv}");
    assert_eq!(guest.must_run("cat /etc/routerd-release", COMMAND), "VERSION=test-update\n");
    let ota = gate_decision(&mut guest, BOOT);
    let (now, before) = (&ota["gate"][0], &ota["gate"][1]);
    assert_eq!((&now["phase"], &now["slot"]), (&"good".into(), &"rootfs.0".into()), "{ota}");
    assert_eq!((&before["phase"], &before["slot"]), (&"bad".into(), &"rootfs.1".into()), "{ota}");
    assert_eq!(before["version"], "test-broken", "{ota}");
    let why = before["detail"].as_str().unwrap_or_default();
    assert!(why.contains("R002") && why.contains("198.51.100.0/24"), "{ota}");
    drop(guest);
    let _ = std::fs::remove_file(update);
    let _ = std::fs::remove_file(broken);
}
