#!/usr/bin/env bash
# Fails when a crate depends on something its layer must not (DESIGN.md "Workspace layout"):
# the reconciler core and the config model know nothing of Linux, D-Bus or nftables, and the
# operator front ends (routerctl, the web UI) reach the host only through the daemon; the daemon
# (supervisor) reaches it only through the engine (STYLE.md §1: the binaries never call host
# directly); the RAUC client (ota) is a leaf that only speaks D-Bus.
set -euo pipefail
status=0

# forbid CRATE REGEX [DEPTH]: CRATE's normal dependency tree (its direct dependencies only with
# DEPTH 1) must not match REGEX.
forbid() {
  local bad tree
  if ! tree=$(cargo tree -p "$1" -e normal --prefix none --locked ${3:+--depth "$3"} 2>&1); then
    echo "layering: cargo tree -p $1 failed:" >&2
    echo "$tree" >&2
    status=1
    return
  fi
  bad=$(grep -E "$2" <<<"$tree" || true)
  if [[ -n "$bad" ]]; then
    echo "layering: $1 must not depend on${3:+ directly}:" >&2
    echo "$bad" >&2
    status=1
  fi
}

for crate in routerd-graph routerd-model routerd-ledger; do
  forbid "$crate" '^(rtnetlink|netlink-|nftnl|mnl|zbus|routerd-host|routerd-engine) '
done
for crate in routerd-routerctl routerd-webui; do
  forbid "$crate" '^(rtnetlink|netlink-|nftnl|mnl|zbus|redb|routerd-host|routerd-engine|routerd-ledger) '
done
# supervisor: the host only through routerd-engine (which depends on routerd-host, so only the
# direct dependencies are checked): no routerd-host, netlink or nftables crate of its own.
forbid routerd-supervisor '^(rtnetlink|netlink-|nftnl|mnl|routerd-host) ' 1
# ota: zbus, tokio, thiserror and friends; none of routerd's crates, no netlink, nftables, redb.
forbid routerd-ota '^(rtnetlink|netlink-|nftnl|mnl|redb|routerd-(model|graph|ledger|host|engine|webui|supervisor|routerctl)) '
exit $status
