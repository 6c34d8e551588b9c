#!/usr/bin/env bash
# The main job: a lab router reconciled from examples/lab-router.yaml, proven with traffic.
#
#   scripts/demo.sh [ROUTERD]     (just demo)
#
# KEEP_LAB=1 leaves the namespaces up afterwards (remove them with `just clean-lab`).
set -euo pipefail
routerd=${1:-target/debug/routerd}
cd "$(dirname "$0")/.."
prefix=rd-demo
config=examples/lab-router.yaml
state=$(mktemp -d /tmp/routerd-demo.XXXXXX)
ledger="$state/routerd.redb"
common=(--config "$config" --netns "$prefix-router" --ledger "$ledger")
web_pid=""

cleanup() {
  [[ -n "$web_pid" ]] && kill "$web_pid" 2>/dev/null || true
  if [[ "${KEEP_LAB:-0}" != 1 ]]; then scripts/lab.sh down "$prefix"; fi
  rm -rf "$state"
}
trap cleanup EXIT

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
