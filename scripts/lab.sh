#!/usr/bin/env bash
# Builds or removes the three-namespace lab of examples/lab-router.yaml.
#
#   scripts/lab.sh up   [PREFIX]   create PREFIX-router, PREFIX-upstream, PREFIX-client
#   scripts/lab.sh down [PREFIX]   remove them (ignores what is already gone)
#
# Lab set-up only: it makes namespaces and veth cables and configures the two *test hosts*
# (upstream, client). Nothing inside the router namespace is configured here beyond moving the
# bare links in: that is routerd's job.
set -euo pipefail
cmd=${1:?usage: lab.sh up|down [PREFIX]}
p=${2:-rd-demo}
r="$p-router" u="$p-upstream" c="$p-client"

down() {
  for ns in "$r" "$u" "$c"; do ip netns del "$ns" 2>/dev/null || true; done
}

up() {
  down
  ip netns add "$r"; ip netns add "$u"; ip netns add "$c"
  ip -n "$r" link set lo up; ip -n "$u" link set lo up; ip -n "$c" link set lo up
  # WAN cable: router wan0 <-> upstream up0
  ip link add "$p-w" type veth peer name "$p-u"
  ip link set "$p-w" netns "$r"; ip link set "$p-u" netns "$u"
  ip -n "$r" link set "$p-w" name wan0
  ip -n "$u" link set "$p-u" name up0
  # LAN cable: router lan0 <-> client eth0
  ip link add "$p-l" type veth peer name "$p-c"
  ip link set "$p-l" netns "$r"; ip link set "$p-c" netns "$c"
  ip -n "$r" link set "$p-l" name lan0
  ip -n "$c" link set "$p-c" name eth0
  # Test hosts. The upstream has no route to 192.168.50.0/24: only NAT gets the client out.
  ip -n "$u" addr add 198.51.100.1/24 dev up0; ip -n "$u" link set up0 up
  ip -n "$c" addr add 192.168.50.10/24 dev eth0; ip -n "$c" link set eth0 up
  ip -n "$c" route add default via 192.168.50.1
}

case "$cmd" in
  up) up ;;
  down) down ;;
  *) echo "usage: lab.sh up|down [PREFIX]" >&2; exit 64 ;;
esac
