#!/usr/bin/env python3
"""The daemon benchmark of docs/benchmarks.md (run as root; `just bench-daemon`).

  daemon.py TARGET_DIR [--repeat 10] [--markdown]

TARGET_DIR holds the release binaries (`target/release`). In a fresh lab (scripts/lab.sh, prefix
`rdbd-<pid>`, removed at the end, also on failure) it starts `routerd serve` on
examples/lab-router.yaml with an hour-long resync, so only netlink notifications trigger
reconciles, and measures:

  - idle RSS: VmRSS of the daemon 2 s after its first reconcile (and its peak, VmHWM);
  - notification to repair: --repeat times, delete the LAN address by hand and time until it is
    back on the host (polled every 2 ms with `ip -j addr`), wall clock;
  - binary size: the stripped release `routerd` and `routerctl`, and their sum.

Prints a table (median, min, max, target, result) and with --markdown the same as Markdown.
Exit code 1 when the measurement itself fails (no repair within 10 s, daemon gone)."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MIB = 1024 * 1024

IDLE_RSS_MAX_MIB = 30
REPAIR_MAX_S = 1.0
BINARY_MAX_MIB = 20


def ip(ns, *args):
    return subprocess.run(["ip", "-n", ns, *args], check=True, capture_output=True, text=True).stdout


def has_address(ns, dev, address):
    out = ip(ns, "-j", "addr", "show", "dev", dev)
    return any(a.get("local") == address for link in json.loads(out) for a in link.get("addr_info", []))


def proc_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


def wait_for(what, deadline, ok, step=0.002):
    until = time.monotonic() + deadline
    while not ok():
        if time.monotonic() > until:
            raise RuntimeError(f"timed out after {deadline}s waiting for {what}")
        time.sleep(step)


def status(routerctl, socket):
    out = subprocess.run([routerctl, "--socket", socket, "-o", "json", "status"],
                         capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else None


def measure(args):
    prefix = f"rdbd-{os.getpid()}"
    routerd = os.path.join(args.target, "routerd")
    routerctl = os.path.join(args.target, "routerctl")
    lab = os.path.join(REPO, "scripts", "lab.sh")
    config = os.path.join(REPO, "examples", "lab-router.yaml")
    router_ns = f"{prefix}-router"
    work = tempfile.mkdtemp(prefix="rdbd-")
    socket = os.path.join(work, "control.sock")
    subprocess.run([lab, "up", prefix], check=True)
    daemon = None
    try:
        daemon = subprocess.Popen(
            [routerd, "serve", "--config", config, "--netns", router_ns,
             "--ledger", os.path.join(work, "l.redb"), "--control-socket", socket,
             "--resync", "1h", "--debounce", "20ms"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for("the first reconcile", 30,
                 lambda: (status(routerctl, socket) or {}).get("reconciles", 0) >= 1, step=0.05)
        time.sleep(2)
        idle_rss = proc_kib(daemon.pid, "VmRSS")
        repairs = []
        for _ in range(args.repeat):
            if daemon.poll() is not None:
                raise RuntimeError("routerd serve exited")
            ip(router_ns, "addr", "del", "192.168.50.1/24", "dev", "lan0")
            start = time.monotonic()
            wait_for("the LAN address to come back", 10,
                     lambda: has_address(router_ns, "lan0", "192.168.50.1"))
            repairs.append(time.monotonic() - start)
            time.sleep(0.3)  # let the follow-up no-op reconcile finish
        peak_rss = proc_kib(daemon.pid, "VmHWM")
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=30)
        subprocess.run([lab, "down", prefix], check=False)
    sizes = {name: os.path.getsize(os.path.join(args.target, name)) for name in ("routerd", "routerctl")}
    return idle_rss, peak_rss, repairs, sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("target", help="directory of the release binaries (target/release)")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    try:
        idle_rss, peak_rss, repairs, sizes = measure(args)
    except (RuntimeError, subprocess.CalledProcessError) as e:
        print(f"daemon.py: {e}", file=sys.stderr)
        return 1
    total = sizes["routerd"] + sizes["routerctl"]
    ms = lambda s: f"{s * 1000:.0f} ms"
    rows = [
        ("idle RSS (2 s after the first reconcile)", f"{idle_rss / 1024:.1f} MiB", "", "",
         f"< {IDLE_RSS_MAX_MIB} MiB", "PASS" if idle_rss < IDLE_RSS_MAX_MIB * 1024 else "FAIL"),
        ("peak RSS over the run", f"{peak_rss / 1024:.1f} MiB", "", "", "", ""),
        (f"notification to repaired drift ({len(repairs)} repairs)", ms(statistics.median(repairs)),
         ms(min(repairs)), ms(max(repairs)), f"< {REPAIR_MAX_S:.0f} s",
         "PASS" if max(repairs) < REPAIR_MAX_S else "FAIL"),
        ("routerd, stripped release", f"{sizes['routerd'] / MIB:.1f} MiB", "", "", "", ""),
        ("routerctl, stripped release", f"{sizes['routerctl'] / MIB:.1f} MiB", "", "", "", ""),
        ("routerd + routerctl", f"{total / MIB:.1f} MiB", "", "", f"< {BINARY_MAX_MIB} MiB",
         "PASS" if total < BINARY_MAX_MIB * MIB else "FAIL"),
    ]
    header = ("measurement", "median / value", "min", "max", "target", "result")
    width = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, width)))
    if args.markdown:
        print()
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in rows:
            print("| " + " | ".join(str(c) if c else " " for c in r) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
