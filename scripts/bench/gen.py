#!/usr/bin/env python3
"""Generates the reconcile benchmark workload (docs/benchmarks.md).

  gen.py OUTDIR [--links 200] [--routes 10000] [--tables 20] [--policies 200]

Writes into OUTDIR:
  router.yaml    routerd config: N Interface, N IPv4StaticAddress, R IPv4StaticRoute across T
                 tables, P IPv4PolicyRoute (fwmark rules), and the lab's NAT / firewall / DNAT
  links.sh       creates the N veth pairs in a namespace (argument: namespace name)
  ip.batch       `ip -batch` input producing the same kernel state as routerd (links up,
                 addresses, routes with protocol 208, fwmark rules, policy default routes)
  nft.rules      `nft -f` input approximating routerd's nftables tables, written by hand; run.py
                 does not use it: it loads the ruleset dumped from routerd's namespace instead,
                 so that both sides end in exactly the same state
  nmstate.yml    nmstate desired state for what nmstate's kernel mode supports: links up,
                 addresses and routes (also the policy tables' default routes). No route rules:
                 kernel mode (nispor apply) never applies `route-rules` -- it skips them and
                 then fails verification ("Desired route rule ... not found after apply").
                 nmstate's kernel mode (nispor) refuses route tables above 255 ("nispor apply
                 does not support route table ID bigger than 255 yet"), so in this file the
                 static-route tables 1000.. become 1.. and the policy tables 2000.. follow
                 them (1 + tables + k): the same number of routes and tables. nmstate
                 cannot set routerd's route protocol (208): its routes are `proto static`.

Every address is inside the namespace the benchmark creates; nothing leaves the machine.
"""

import argparse
import ipaddress
import os

PROTO = 208


def link(i):
    return f"vb{i}a"


def peer(i):
    return f"vb{i}b"


def lan_prefix(i):
    return ipaddress.ip_network(f"10.{i // 250}.{i % 250}.0/24")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--links", type=int, default=200)
    ap.add_argument("--routes", type=int, default=10000)
    ap.add_argument("--tables", type=int, default=20)
    ap.add_argument("--policies", type=int, default=200)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    if a.policies > 256:
        raise SystemExit("policies use fwmarks 0x100-0x1ff: at most 256")
    if a.tables + a.policies > 252:
        raise SystemExit("nmstate.yml maps every table into 1-252: tables + policies <= 252")

    def nm_table(table):  # see nmstate.yml above
        return table - 999 if table < 2000 else table - 2000 + 1 + a.tables

    res = []  # YAML resource blocks
    batch = []  # ip -batch lines
    nm_ifaces, nm_routes = [], []

    res.append(block("system.routerd.net/v1alpha1", "Sysctl", "forwarding",
                     ["key: net.ipv4.ip_forward", 'value: "1"']))
    for i in range(a.links):
        net = lan_prefix(i)
        addr = f"{net.network_address + 1}/{net.prefixlen}"
        res.append(block("net.routerd.net/v1alpha1", "Interface", f"if{i}",
                         [f"ifname: {link(i)}", "managed: true", "adminUp: true"]))
        res.append(block("net.routerd.net/v1alpha1", "IPv4StaticAddress", f"addr{i}",
                         [f"interface: if{i}", f"address: {addr}"]))
        batch.append(f"link set {link(i)} up")
        batch.append(f"address add {addr} dev {link(i)}")
        nm_ifaces.append({"name": link(i), "addr": str(net.network_address + 1), "plen": 24})

    base = int(ipaddress.ip_address("100.64.0.0"))
    for j in range(a.routes):
        i = j % a.links
        dst = ipaddress.ip_network((base + j * 256, 24))
        via = lan_prefix(i).network_address + 2
        table = 1000 + j % a.tables
        res.append(block("net.routerd.net/v1alpha1", "IPv4StaticRoute", f"r{j}",
                         [f"interface: if{i}", f"destination: {dst}", f"via: {via}",
                          f"table: {table}"]))
        batch.append(f"route add {dst} via {via} dev {link(i)} table {table} proto {PROTO}")
        nm_routes.append((str(dst), str(via), link(i), nm_table(table)))

    nft = []
    for k in range(a.policies):
        i = k % a.links
        mark = 0x100 + k
        table = 2000 + k
        prio = 10000 + k
        src = lan_prefix(i)
        res.append(block("net.routerd.net/v1alpha1", "IPv4PolicyRoute", f"pol{k}",
                         [f"outboundInterface: if{i}", f"sourceCIDRs: [{src}]",
                          f"table: {table}", f"priority: {prio}", f"mark: {mark}"]))
        batch.append(f"route add default dev {link(i)} table {table} proto {PROTO}")
        batch.append(f"rule add fwmark {mark:#x}/0xffffffff lookup {table} priority {prio}")
        # nmstate reports a device route as next-hop 0.0.0.0; say so, or the re-apply sees
        # two default routes in the table ("Multiple routes to 0.0.0.0/0 ...").
        nm_routes.append(("0.0.0.0/0", "0.0.0.0", link(i), nm_table(table)))
        nft.append(
            f"table ip routerd_policy_pol{k} {{\n"
            f"\tchain prerouting {{\n"
            f"\t\ttype filter hook prerouting priority -150; policy accept;\n"
            f"\t\tip saddr {src} meta mark set {mark:#x}\n"
            f"\t}}\n}}\n")

    # The lab's NAT, firewall and DNAT on the first link as WAN and the second as LAN.
    wan, lan = "if0", "if1"
    res.append(block("net.routerd.net/v1alpha1", "IPv4SourceNAT", "masq",
                     [f"outboundInterface: {wan}", "sourceCIDRs: [10.0.0.0/8]",
                      "translation:", "  type: interfaceAddress"]))
    res.append(block("firewall.routerd.net/v1alpha1", "Zone", "wan", [f"interfaces: [{wan}]"]))
    res.append(block("firewall.routerd.net/v1alpha1", "Zone", "lan", [f"interfaces: [{lan}]"]))
    res.append(block("firewall.routerd.net/v1alpha1", "FirewallPolicy", "home",
                     ["preset: home-router", "input:", "  default: drop", "forward:",
                      "  default: drop"]))
    res.append(block("firewall.routerd.net/v1alpha1", "ExposeService", "web",
                     ["fromZone: wan", "protocol: tcp", "externalPort: 8080",
                      "internalAddress: 10.0.1.10", "internalPort: 80"]))
    nft.append(
        "table ip routerd_snat_masq {\n\tchain postrouting {\n"
        "\t\ttype nat hook postrouting priority 100; policy accept;\n"
        f"\t\toifname \"{link(0)}\" ip saddr 10.0.0.0/8 masquerade\n\t}}\n}}\n")
    nft.append(
        "table inet routerd_filter_home {\n"
        "\tchain input {\n\t\ttype filter hook input priority 0; policy drop;\n"
        "\t\tct state { established, related } accept\n\t\tct state invalid drop\n"
        "\t\tiifname \"lo\" accept\n"
        f"\t\tiifname \"{link(1)}\" accept\n\t}}\n"
        "\tchain forward {\n\t\ttype filter hook forward priority 0; policy drop;\n"
        "\t\tct state { established, related } accept\n\t\tct state invalid drop\n"
        f"\t\tiifname \"{link(1)}\" oifname \"{link(0)}\" accept\n"
        f"\t\tiifname \"{link(0)}\" ip daddr 10.0.1.10 meta l4proto tcp th dport 80 accept\n"
        "\t}\n}\n")
    nft.append(
        "table ip routerd_dnat_web {\n\tchain prerouting {\n"
        "\t\ttype nat hook prerouting priority -100; policy accept;\n"
        f"\t\tiifname \"{link(0)}\" meta l4proto tcp th dport 8080 dnat ip to 10.0.1.10:80\n"
        "\t}\n}\n")

    write(a.outdir, "router.yaml",
          "apiVersion: routerd.net/v1alpha1\nkind: Router\nmetadata:\n  name: bench\n"
          "spec:\n  resources:\n" + "".join(res))
    write(a.outdir, "ip.batch", "\n".join(x for x in batch if x) + "\n")
    write(a.outdir, "nft.rules", "".join(nft))
    write(a.outdir, "links.sh",
          "#!/bin/sh\nset -e\nns=$1\n" + "".join(
              f"ip -n $ns link add {link(i)} type veth peer name {peer(i)}\n"
              f"ip -n $ns link set {peer(i)} up\n" for i in range(a.links)))
    write(a.outdir, "nmstate.yml", nmstate(nm_ifaces, nm_routes))
    write(a.outdir, "sysctl.conf", "net.ipv4.ip_forward = 1\n")


def block(api, kind, name, spec_lines):
    spec = "".join(f"        {l}\n" for l in spec_lines)
    return (f"    - apiVersion: {api}\n      kind: {kind}\n      metadata:\n"
            f"        name: {name}\n      spec:\n{spec}")


def nmstate(ifaces, routes):
    out = ["interfaces:"]
    for f in ifaces:
        out += [f"- name: {f['name']}", "  type: veth", "  state: up", "  ipv4:",
                "    enabled: true", "    address:", f"    - ip: {f['addr']}",
                f"      prefix-length: {f['plen']}"]
    out += ["routes:", "  config:"]
    for dst, via, dev, table in routes:
        out += [f"  - destination: {dst}", f"    next-hop-address: {via}",
                f"    next-hop-interface: {dev}", f"    table-id: {table}"]
    return "\n".join(out) + "\n"


def write(d, name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
