#!/usr/bin/env bash
# Fails when a crate depends on something its layer must not (DESIGN.md "Workspace layout"):
# the reconciler core and the config model know nothing of Linux, D-Bus or nftables.
set -euo pipefail
status=0
for crate in routerd-graph routerd-model routerd-ledger; do
  bad=$(cargo tree -p "$crate" -e normal --prefix none --locked 2>/dev/null \
    | grep -E '^(rtnetlink|netlink-|nftnl|mnl|zbus|routerd-host|routerd-engine) ' || true)
  if [[ -n "$bad" ]]; then
    echo "layering: $crate must not depend on:" >&2
    echo "$bad" >&2
    status=1
  fi
done
# routerctl reaches the host only through the daemon's control socket.
bad=$(cargo tree -p routerd-routerctl -e normal --prefix none --locked 2>/dev/null \
  | grep -E '^(rtnetlink|netlink-|nftnl|mnl|zbus|redb|routerd-host|routerd-engine|routerd-ledger) ' || true)
if [[ -n "$bad" ]]; then
  echo "layering: routerd-routerctl must not depend on:" >&2
  echo "$bad" >&2
  status=1
fi
exit $status
