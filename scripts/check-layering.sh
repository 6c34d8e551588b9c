#!/usr/bin/env bash
# Fails when a crate depends on something its layer must not (DESIGN.md "Workspace layout"):
# the reconciler core and the config model know nothing of Linux, D-Bus or nftables, and the
# operator front ends (routerctl, the web UI) reach the host only through the daemon; the RAUC
# client (ota) is a leaf that only speaks D-Bus.
set -euo pipefail
status=0

# forbid CRATE REGEX: CRATE's normal dependency tree must not match REGEX.
forbid() {
  local bad
  bad=$(cargo tree -p "$1" -e normal --prefix none --locked 2>/dev/null | grep -E "$2" || true)
  if [[ -n "$bad" ]]; then
    echo "layering: $1 must not depend on:" >&2
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
# ota: zbus, tokio, thiserror and friends; none of routerd's crates, no netlink, nftables, redb.
forbid routerd-ota '^(rtnetlink|netlink-|nftnl|mnl|redb|routerd-(model|graph|ledger|host|engine|webui|supervisor|routerctl)) '
exit $status
