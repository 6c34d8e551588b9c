#!/usr/bin/env bash
# The main job: a lab router reconciled from examples/lab-router.yaml, proven with traffic.
#
#   scripts/demo.sh [ROUTERD]     (just demo)
#
# KEEP_LAB=1 leaves the namespaces up afterwards (remove them with `just clean-lab`).
# Then, on a terminal (or with SERVE=1; SERVE=0 skips it), the daemon: `routerd serve` on the
# same lab with the web UI on http://127.0.0.1:8080, printing the one-time setup link, until
# Ctrl-C.
set -euo pipefail
routerd=${1:-target/debug/routerd}
cd "$(dirname "$0")/.."
prefix=rd-demo
config=examples/lab-router.yaml
state=$(mktemp -d /tmp/routerd-demo.XXXXXX)
ledger="$state/routerd.redb"
common=(--config "$config" --netns "$prefix-router" --ledger "$ledger")
web_pid=""
daemon_pid=""

cleanup() {
  [[ -n "$web_pid" ]] && kill "$web_pid" 2>/dev/null || true
  if [[ -n "$daemon_pid" ]]; then kill "$daemon_pid" 2>/dev/null || true; wait "$daemon_pid" 2>/dev/null || true; fi
  if [[ "${KEEP_LAB:-0}" != 1 ]]; then scripts/lab.sh down "$prefix"; fi
  rm -rf "$state"
}
trap cleanup EXIT
# Ctrl-C during `routerd serve`: leave through the EXIT trap (daemon stopped, lab removed).
trap 'exit 130' INT TERM

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "lab: namespaces $prefix-router, $prefix-upstream, $prefix-client"
scripts/lab.sh up "$prefix"

step "routerd validate"
"$routerd" validate --config "$config"

step "routerd plan (what reconcile would do to the bare router namespace)"
"$routerd" plan "${common[@]}" -o table

step "routerd reconcile --once"
"$routerd" reconcile --once "${common[@]}" -o table

step "proof 1: the LAN client pings the upstream host through source NAT"
ip netns exec "$prefix-client" ping -c 3 -W 2 198.51.100.1

step "proof 2: the upstream host reaches the client's web server through DNAT (wan:8080 -> 192.168.50.10:80)"
mkdir -p "$state/www" && echo "hello from the LAN client" > "$state/www/index.html"
ip netns exec "$prefix-client" python3 -m http.server 80 --bind 192.168.50.10 --directory "$state/www" \
  >"$state/www.log" 2>&1 &
web_pid=$!
# Wait until the server listens (inside the client's namespace), then test through the router.
wait_http() { # NAMESPACE URL: GET URL from NAMESPACE, retrying for 20 s
  ip netns exec "$1" python3 - "$2" <<'PY'
import sys, time, urllib.request
url, deadline = sys.argv[1], time.time() + 20
while True:
    try:
        body = urllib.request.urlopen(url, timeout=2).read().decode().strip()
        print("GET", url, "->", body)
        break
    except OSError as e:
        if time.time() > deadline:
            raise SystemExit(f"GET {url} failed: {e}")
        time.sleep(0.2)
PY
}
wait_http "$prefix-client" "http://192.168.50.10:80/" >/dev/null || { cat "$state/www.log" >&2; exit 1; }
wait_http "$prefix-upstream" "http://198.51.100.2:8080/"

step "routerd adopt: the links and sysctls existed before routerd; record them as owned"
"$routerd" adopt --candidates "${common[@]}" -o table
"$routerd" adopt --apply "${common[@]}" -o table

step "routerd reconcile --once, again: nothing to do"
"$routerd" reconcile --once "${common[@]}" -o table
ops=$("$routerd" reconcile --once "${common[@]}" -o json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["operations"]))')
echo "operations on the third run: $ops"
[[ "$ops" == 0 ]] || { echo "demo: expected zero operations" >&2; exit 1; }

step "done"
echo "The lab router works: NAT, DNAT, firewall and policy routing were reconciled by routerd."
if [[ "${KEEP_LAB:-0}" == 1 ]]; then
  echo "Lab kept: ip netns exec $prefix-router nft list ruleset; just clean-lab"
fi

serve=${SERVE:-auto}
if [[ "$serve" == auto ]]; then [[ -t 1 ]] && serve=1 || serve=0; fi
if [[ "$serve" == 1 ]]; then
  step "routerd serve: the daemon with the web UI (Ctrl-C stops it and removes the lab)"
  cp "$config" "$state/router.yaml"
  "$routerd" serve --config "$state/router.yaml" --netns "$prefix-router" --ledger "$ledger" \
    --state-dir "$state/state" --control-socket "$state/control.sock" \
    --listen 127.0.0.1:8080 2>"$state/daemon.log" &
  daemon_pid=$!
  for _ in $(seq 100); do
    grep -q "setup token: " "$state/daemon.log" 2>/dev/null && break
    kill -0 "$daemon_pid" 2>/dev/null || { cat "$state/daemon.log" >&2; exit 1; }
    sleep 0.1
  done
  token=$(sed -n 's/.*one-time setup token: \([0-9a-f]*\).*/\1/p' "$state/daemon.log" | head -1)
  echo "Set the admin password: http://127.0.0.1:8080/setup?token=$token"
  echo "Then log in at http://127.0.0.1:8080/ (console: ${routerd%/routerd}/routerctl --socket $state/control.sock status)"
  wait "$daemon_pid" || true
fi
