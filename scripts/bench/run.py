#!/usr/bin/env python3
"""The reconcile benchmark of docs/benchmarks.md (run as root; `just bench`).

  run.py ROUTERD [--repeat 3] [--nmstatectl PATH] [--markdown] [--check]
                 [--links 200] [--routes 10000] [--tables 20] [--policies 200]

Generates the workload with gen.py into a temporary directory, then, --repeat times, each in
FRESH network namespaces (`rdb-<pid>-<n>`, 200 veth pairs made by the workload's links.sh,
deleted at the end of the repeat, also on failure):

  (a) `routerd reconcile --once` into the bare namespace with a fresh ledger: wall time and the
      child's peak RSS (ru_maxrss from wait4); exit code 0 and no failed operation required;
  (d) right after (a), in the same namespace: a second `reconcile --once` (must report zero
      operations) and a `routerd plan` (zero planned operations): the no-op numbers;
  (b) a second namespace brought to the same end state with `ip -batch` + `nft -f` + the
      ip_forward sysctl, where the nft input is routerd's own ruleset dumped after (a). The
      end states of (a) and (b) are compared (IPv4 routes, IPv6 routes but the kernel's own,
      rules, addresses, link states, the whole nft ruleset, ip_forward); any difference is
      fatal;
  (c) `nmstatectl apply -k` (kernel mode, default verification) of nmstate.yml in a third
      namespace, then the same apply again (the no-op), and once more cold with --no-verify
      in a fourth. nmstate covers links, addresses and routes only (see gen.py for why there
      are no fwmark rules and why its route tables are renumbered); its end state is checked
      against routerd's on that subset.

Prints one table (median, min, max over the repeats; ratios against the targets of the issue)
and, with --markdown, the same as Markdown for docs/benchmarks.md. Exits 1 on a correctness
failure; target misses only exit non-zero with --check.
"""

import argparse
import collections
import contextlib
import difflib
import itertools
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

# GNU time (Debian package `time`), for the peak RSS of exactly one command.
GNU_TIME = "/usr/bin/time"

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MIB = 1024 * 1024

# Targets of the issue.
COLD_RATIO_MAX = 1.5  # (a) at most 1.5x (b)
NOOP_MAX_S = 0.100  # (d) under 100 ms
NOOP_SPEEDUP_MIN = 10.0  # (d) at least 10x faster than nmstatectl's no-op
RSS_MAX_KIB = 64 * 1024  # (e) under 64 MiB


class BenchError(Exception):
    """A correctness failure: the benchmark's numbers would be meaningless."""


# --------------------------------------------------------------------------------------------
# processes


def timed(argv, stdout=None):
    """Runs argv; returns (seconds, exit code, peak RSS KiB, stderr text).

    Peak RSS comes from GNU time (`/usr/bin/time -f %M`), which forks the command from its own
    small process. Reading ru_maxrss of a child spawned from this script would be wrong: Linux
    keeps a process's maxrss across execve, and a child spawned from Python starts out sharing
    this script's (large, after parsing JSON documents) memory, so every child would report at
    least this script's own peak. Wall time is taken around the whole spawn-to-reap, with GNU
    time's overhead (about a millisecond) included. stdout goes to the file `stdout` (or
    /dev/null)."""
    out = open(stdout or os.devnull, "wb")
    err = tempfile.TemporaryFile()
    rss_file = tempfile.NamedTemporaryFile(prefix="rss-", delete=False)
    rss_file.close()
    try:
        wrapped = [GNU_TIME, "-f", "%M", "-o", rss_file.name, *argv]
        actions = [(os.POSIX_SPAWN_DUP2, out.fileno(), 1), (os.POSIX_SPAWN_DUP2, err.fileno(), 2)]
        t0 = time.perf_counter()
        try:
            pid = os.posix_spawnp(wrapped[0], wrapped, os.environ, file_actions=actions)
        except OSError as e:
            raise BenchError(f"{argv[0]}: {e}")
        _, status, _ = os.wait4(pid, 0)
        seconds = time.perf_counter() - t0
        err.seek(0)
        stderr = err.read().decode(errors="replace")
        with open(rss_file.name) as f:
            lines = [l for l in f.read().split("\n") if l.strip()]
        # GNU time writes "Command exited with non-zero status N" before the format line.
        rss = int(lines[-1]) if lines and lines[-1].strip().isdigit() else 0
        return seconds, os.waitstatus_to_exitcode(status), rss, stderr
    finally:
        out.close()
        err.close()
        os.unlink(rss_file.name)


def run(argv, **kw):
    """Runs a helper command (not measured); raises BenchError if it fails."""
    p = subprocess.run(argv, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise BenchError(f"{' '.join(argv)}: exit {p.returncode}\n{p.stderr.strip()}")
    return p.stdout


def must(ok, what, seconds, rc, stderr):
    if rc != 0 or not ok:
        raise BenchError(f"{what}: exit {rc} after {seconds:.2f} s\n{stderr.strip()[-2000:]}")


# --------------------------------------------------------------------------------------------
# namespaces

_ns_counter = itertools.count(1)
SETTLE_S = 2.0


class Namespaces:
    """The fresh namespaces of one repeat, each with the workload's veth pairs. All are deleted
    together when the repeat ends, also on failure or Ctrl-C; then the benchmark waits
    SETTLE_S, because the kernel tears a namespace down asynchronously (its routes, its veths)
    and that work should not run during the next measurement."""

    def __init__(self, work):
        self.work = work
        self.names = []

    def fresh(self):
        name = f"rdb-{os.getpid()}-{next(_ns_counter)}"
        run(["ip", "netns", "add", name])
        self.names.append(name)
        run(["sh", os.path.join(self.work, "links.sh"), name])
        return name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for name in self.names:
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        if self.names and exc[0] is None:
            time.sleep(SETTLE_S)
        return False


def ip_json(ns, *args):
    text = run(["ip", "-n", ns, "-j", *args])
    return json.loads(text) if text.strip() else []


def end_state(ns):
    """What the comparison looks at. IPv6 link-local addresses (random per veth) and the IPv6
    routes the kernel makes for them (proto kernel, added asynchronously by addrconf after a
    link comes up) are left out: neither side configures them."""
    routes4 = sorted(
        (r.get("table", "main"), r.get("type", "unicast"), r["dst"], r.get("gateway", ""),
         r.get("dev", ""), str(r.get("protocol", "")), r.get("scope", ""),
         r.get("metric", 0), r.get("prefsrc", ""))
        for r in ip_json(ns, "-4", "route", "show", "table", "all"))
    routes6 = sorted(
        (r.get("table", "main"), r.get("type", "unicast"), r["dst"], r.get("gateway", ""),
         r.get("dev", ""), str(r.get("protocol", "")))
        for r in ip_json(ns, "-6", "route", "show", "table", "all")
        if r.get("protocol") != "kernel")
    rules = [tuple(sorted((k, str(v)) for k, v in r.items()))
             for fam in ("-4", "-6") for r in ip_json(ns, fam, "rule")]
    addrs = sorted((link["ifname"], a["family"], a["local"], a["prefixlen"])
                   for link in ip_json(ns, "addr") for a in link.get("addr_info", [])
                   if not (a["family"] == "inet6" and a.get("scope") == "link"))
    links = sorted((link["ifname"], "UP" in link.get("flags", [])) for link in ip_json(ns, "link"))
    nft = run(["ip", "netns", "exec", ns, "nft", "list", "ruleset"])
    nft_tables = run(["ip", "netns", "exec", ns, "nft", "list", "tables"]).split("\n")
    forward = run(["ip", "netns", "exec", ns, "cat", "/proc/sys/net/ipv4/ip_forward"]).strip()
    return {
        "routes4": routes4, "routes6": routes6, "rules": rules, "addrs": addrs, "links": links,
        "nft": nft, "nft_tables": sorted(t for t in nft_tables if t), "ip_forward": forward,
    }


def per_table(routes4):
    return collections.Counter(r[0] for r in routes4)


def compare_states(a, b, label_a, label_b):
    """Fails loudly with what differs."""
    problems = []
    if a["routes4"] != b["routes4"]:
        ta, tb = per_table(a["routes4"]), per_table(b["routes4"])
        diff = {t: (ta.get(t, 0), tb.get(t, 0)) for t in sorted(set(ta) | set(tb))
                if ta.get(t, 0) != tb.get(t, 0)}
        diff = dict(itertools.islice(diff.items(), 10))
        only_a = sorted(set(a["routes4"]) - set(b["routes4"]))[:5]
        only_b = sorted(set(b["routes4"]) - set(a["routes4"]))[:5]
        problems.append(f"IPv4 routes differ: per-table counts {diff or 'equal'}; "
                        f"only {label_a}: {only_a}; only {label_b}: {only_b}")
    for key in ("routes6", "rules", "addrs", "links"):
        if a[key] != b[key]:
            sa, sb = set(a[key]), set(b[key])
            problems.append(f"{key} differ: only {label_a}: {sorted(sa - sb)[:5]}; "
                            f"only {label_b}: {sorted(sb - sa)[:5]}")
    if a["ip_forward"] != b["ip_forward"]:
        problems.append(f"ip_forward differs: {a['ip_forward']} vs {b['ip_forward']}")
    if a["nft_tables"] != b["nft_tables"]:
        problems.append(f"nft tables differ: {a['nft_tables']} vs {b['nft_tables']}")
    elif a["nft"] != b["nft"]:
        d = difflib.unified_diff(a["nft"].splitlines(), b["nft"].splitlines(), label_a,
                                 label_b, lineterm="", n=1)
        problems.append("nft rulesets differ:\n" + "\n".join(itertools.islice(d, 40)))
    if problems:
        raise BenchError(f"end states of {label_a} and {label_b} differ:\n  - "
                         + "\n  - ".join(problems))


def compare_nmstate(a, c, args):
    """nmstate's end state against routerd's on what nmstate covers: links, addresses and the
    IPv4 routes (modulo table number and protocol; see gen.py)."""
    problems = []
    if a["links"] != c["links"]:
        problems.append("link states differ")
    if a["addrs"] != c["addrs"]:
        problems.append("addresses differ")

    def unicast(routes, proto):
        return collections.Counter((r[2], r[3], r[4]) for r in routes if r[5] == proto)

    ours, theirs = unicast(a["routes4"], "208"), unicast(c["routes4"], "static")
    want = args.routes + args.policies
    if sum(ours.values()) != want or ours != theirs:
        problems.append(f"routes differ: routerd {sum(ours.values())} (proto 208), nmstate "
                        f"{sum(theirs.values())} (proto static), expected {want}")
    if problems:
        raise BenchError("nmstatectl's end state differs from routerd's on links, addresses and "
                         "routes: " + "; ".join(problems))


# --------------------------------------------------------------------------------------------
# one repeat


def routerd_doc(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise BenchError(f"{what}: output is not the JSON Result document: {e}")


def one_repeat(n, args, work, samples, spaces):
    routerd = args.routerd
    config = os.path.join(work, "router.yaml")
    rundir = tempfile.mkdtemp(prefix=f"run{n}-", dir=work)
    ledger = os.path.join(rundir, "ledger.redb")
    common = ["--config", config, "--ledger", ledger, "-o", "json"]
    nft_rules = os.path.join(rundir, "nft.rules")

    # (a) cold reconcile, then (d) the no-op reconcile and plan, all in one namespace.
    ns = spaces.fresh()
    out = os.path.join(rundir, "cold.json")
    s, rc, rss, err = timed([routerd, "reconcile", "--once", "--netns", ns, *common], out)
    doc = routerd_doc(out, "(a) reconcile --once")
    failed = [o for o in doc["operations"] if o.get("result") == "failed"]
    must(not failed and doc["phase"] != "Blocked", f"(a) routerd reconcile --once "
         f"(phase {doc['phase']}, {len(failed)} failed operations: {failed[:3]})",
         s, rc, err)
    samples["a"].append(s)
    samples["rss_a"].append(rss)
    samples["ops_a"].append(len(doc["operations"]))
    del doc

    out = os.path.join(rundir, "noop.json")
    s, rc, rss, err = timed([routerd, "reconcile", "--once", "--netns", ns, *common], out)
    doc = routerd_doc(out, "(d) no-op reconcile --once")
    must(rc == 0 and not doc["operations"],
         f"(d) second routerd reconcile --once reported {len(doc['operations'])} operations "
         f"(expected none): {doc['operations'][:3]}", s, rc, err)
    samples["d_reconcile"].append(s)
    samples["rss_d_reconcile"].append(rss)

    out = os.path.join(rundir, "plan.json")
    s, rc, rss, err = timed([routerd, "plan", "--timings", "--netns", ns, *common], out)
    doc = routerd_doc(out, "(d) plan")
    # The no-op is "inventory + plan": the daemon keeps the parsed config, so this is
    # what each of its resyncs costs. routerd --timings reports the phases to stderr.
    phases = {}
    for line in err.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "timing" and parts[3] == "ms":
            phases[parts[1]] = phases.get(parts[1], 0.0) + float(parts[2]) / 1000
    must("observe" in phases and "plan" in phases, "(d) routerd plan --timings gave no phases",
         s, rc, err)
    samples["d_inproc"].append(phases["observe"] + phases["plan"])
    samples["d_parse"].append(phases.get("parse", 0.0))
    must(rc == 0 and not doc["operations"],
         f"(d) routerd plan after reconcile planned {len(doc['operations'])} operations "
         f"(expected none): {doc['operations'][:3]}", s, rc, err)
    samples["d_plan"].append(s)
    samples["rss_d_plan"].append(rss)
    del doc

    with open(nft_rules, "w") as f:
        f.write(run(["ip", "netns", "exec", ns, "nft", "list", "ruleset"]))
    state_a = end_state(ns)

    # (b) the same end state with iproute2 and nft.
    ns = spaces.fresh()
    steps = [
        ["ip", "-n", ns, "-batch", os.path.join(work, "ip.batch")],
        ["ip", "netns", "exec", ns, "nft", "-f", nft_rules],
        ["ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward=1"],
    ]
    total = 0.0
    for argv in steps:
        s, rc, _, err = timed(argv)
        must(rc == 0, f"(b) {' '.join(argv)}", s, rc, err)
        total += s
    samples["b"].append(total)
    compare_states(state_a, end_state(ns), "routerd (a)", "ip -batch + nft -f (b)")

    if args.nmstatectl:
        nmstate(args, work, state_a, samples, spaces)
    shutil.rmtree(rundir, ignore_errors=True)


def nmstate(args, work, state_a, samples, spaces):
    nmstate_yml = os.path.join(work, "nmstate.yml")
    nm = [args.nmstatectl, "apply", "-k"]
    # (c) nmstatectl cold, then its no-op re-apply.
    ns = spaces.fresh()
    s, rc, rss, err = timed(["ip", "netns", "exec", ns, *nm, nmstate_yml])
    must(rc == 0, "(c) nmstatectl apply -k (cold)", s, rc, err)
    samples["c"].append(s)
    samples["rss_c"].append(rss)
    s, rc, rss, err = timed(["ip", "netns", "exec", ns, *nm, nmstate_yml])
    must(rc == 0, "(d) nmstatectl apply -k (no-op re-apply)", s, rc, err)
    samples["d_nmstate"].append(s)
    samples["rss_d_nmstate"].append(rss)
    compare_nmstate(state_a, end_state(ns), args)
    # (c) cold again, without the verifying re-read.
    ns = spaces.fresh()
    s, rc, _, err = timed(["ip", "netns", "exec", ns, *nm, "--no-verify", nmstate_yml])
    must(rc == 0, "(c) nmstatectl apply -k --no-verify (cold)", s, rc, err)
    samples["c_noverify"].append(s)


# --------------------------------------------------------------------------------------------
# report


def fmt_s(v):
    return f"{v:.2f} s" if v >= 1 else f"{v * 1000:.0f} ms"


def fmt_x(v):
    return f"{v:.2f}x" if v < 10 else f"{v:.1f}x"


def fmt_mib(kib):
    return f"{kib / 1024:.1f} MiB"


def rows(samples, have_nm):
    """(measurement, median, min, max, target, median vs target, result) rows."""
    out = []

    def row(label, values, fmt, target="", limit=None, at_most=True, limit_fmt=None):
        if not values:
            out.append((label, "not run", "", "", target, "", ""))
            return
        med = statistics.median(values)
        vs, result = "", ""
        if limit is not None:
            ok = med <= limit if at_most else med >= limit
            vs = f"{med / limit:.2f}x of target"
            result = "PASS" if ok else "FAIL"
        out.append((label, fmt(med), fmt(min(values)), fmt(max(values)), target, vs, result))

    def ratios(num, den):
        return [x / y for x, y in zip(samples[num], samples[den]) if y > 0]

    row("(a) routerd reconcile --once, cold", samples["a"], fmt_s)
    row("(b) ip -batch + nft -f + sysctl", samples["b"], fmt_s)
    row("(a) / (b)", ratios("a", "b"), fmt_x, f"<= {COLD_RATIO_MAX}x", COLD_RATIO_MAX)
    row("(c) nmstatectl apply -k, cold", samples["c"], fmt_s)
    row("(c) nmstatectl apply -k --no-verify, cold", samples["c_noverify"], fmt_s)
    row("(c) / (b)", ratios("c", "b"), fmt_x)
    row("(d) routerd reconcile --once, no-op", samples["d_reconcile"], fmt_s, "< 100 ms",
        NOOP_MAX_S)
    row("(d) routerd plan, no-op", samples["d_plan"], fmt_s, "< 100 ms", NOOP_MAX_S)
    row("(d) routerd inventory + plan in-process (--timings)", samples["d_inproc"], fmt_s,
        "< 100 ms", NOOP_MAX_S)
    row("    of which not counted: config parse", samples["d_parse"], fmt_s)
    row("(d) nmstatectl apply -k, no-op re-apply", samples["d_nmstate"], fmt_s)
    if have_nm:
        row("(d) nmstatectl no-op / routerd no-op reconcile",
            ratios("d_nmstate", "d_reconcile"), fmt_x, f">= {NOOP_SPEEDUP_MIN:.0f}x",
            NOOP_SPEEDUP_MIN, at_most=False)
        row("(d) nmstatectl no-op / routerd plan", ratios("d_nmstate", "d_plan"), fmt_x,
            f">= {NOOP_SPEEDUP_MIN:.0f}x", NOOP_SPEEDUP_MIN, at_most=False)
        row("(d) nmstatectl no-op / routerd inventory + plan", ratios("d_nmstate", "d_inproc"),
            fmt_x, f">= {NOOP_SPEEDUP_MIN:.0f}x", NOOP_SPEEDUP_MIN, at_most=False)
    else:
        out.append(("(d) nmstatectl no-op / routerd no-op", "not run (no nmstatectl)", "", "",
                    f">= {NOOP_SPEEDUP_MIN:.0f}x", "", ""))
    row("(e) routerd peak RSS, cold reconcile", samples["rss_a"], fmt_mib, "< 64 MiB",
        RSS_MAX_KIB)
    row("(e) routerd peak RSS, no-op reconcile", samples["rss_d_reconcile"], fmt_mib,
        "< 64 MiB", RSS_MAX_KIB)
    row("(e) routerd peak RSS, plan", samples["rss_d_plan"], fmt_mib, "< 64 MiB", RSS_MAX_KIB)
    row("nmstatectl peak RSS, cold / no-op", [max(x, y) for x, y in
        zip(samples["rss_c"], samples["rss_d_nmstate"])], fmt_mib)
    return out


HEADER = ("measurement", "median", "min", "max", "target", "median vs target", "result")


def text_table(table):
    widths = [max(len(str(r[i])) for r in [HEADER, *table]) for i in range(len(HEADER))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()
    return "\n".join([line(HEADER), line(["-" * w for w in widths]), *map(line, table)])


def markdown_table(table):
    out = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in table:
        out.append("| " + " | ".join(str(c) if c != "" else " " for c in r) + " |")
    return "\n".join(out)


def machine(args):
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "unknown"
    with contextlib.suppress(OSError):
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / MIB:.1f} GiB"
    info = {
        "cpu": f"{cpu}, {os.cpu_count()} CPUs (nproc {run(['nproc']).strip()})",
        "memory": mem,
        "kernel": os.uname().release,
        "routerd": run([args.routerd, "--version"]).strip(),
        "iproute2": run(["ip", "-V"]).strip(),
        "nftables": run(["nft", "--version"]).strip(),
    }
    with contextlib.suppress(BenchError, OSError):
        info["commit"] = run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"]).strip()
    if args.nmstatectl:
        info["nmstatectl"] = run([args.nmstatectl, "--version"]).strip()
    return info


# --------------------------------------------------------------------------------------------


def reproduce(args):
    """The command line of this run, with paths relative to the repository."""
    rel = lambda p: os.path.relpath(p, REPO) if p.startswith(REPO + os.sep) else p
    cmd = ["scripts/bench/run.py", rel(args.routerd), "--repeat", str(args.repeat)]
    if args.nmstatectl:
        cmd += ["--nmstatectl", rel(args.nmstatectl)]
    for opt, default in (("links", 200), ("routes", 10000), ("tables", 20), ("policies", 200)):
        if getattr(args, opt) != default:
            cmd += [f"--{opt}", str(getattr(args, opt))]
    return " ".join(cmd + ["--markdown"])


def find_nmstatectl(given):
    if given:
        return given
    cached = os.path.join(REPO, "target", "bench-tools", "bin", "nmstatectl")
    if os.access(cached, os.X_OK):
        return cached
    return shutil.which("nmstatectl")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("routerd", help="the routerd binary (a release build)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--nmstatectl", help="nmstatectl binary (default: target/bench-tools/bin/"
                    "nmstatectl, then PATH; without one, (c) is not run)")
    ap.add_argument("--markdown", action="store_true", help="also print a Markdown report")
    ap.add_argument("--check", action="store_true", help="exit 2 if a target is missed")
    ap.add_argument("--keep", action="store_true", help="keep the workload directory")
    for opt, default in (("--links", 200), ("--routes", 10000), ("--tables", 20),
                         ("--policies", 200)):
        ap.add_argument(opt, type=int, default=default, help=f"workload size (default {default})")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run.py: needs root (network namespaces)")
    args.routerd = os.path.abspath(args.routerd)
    args.nmstatectl = find_nmstatectl(args.nmstatectl)
    if args.nmstatectl:
        args.nmstatectl = os.path.abspath(args.nmstatectl)
    # SIGTERM unwinds like Ctrl-C, so the namespaces are deleted.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    work = tempfile.mkdtemp(prefix="routerd-bench.")
    started = time.time()
    try:
        run([sys.executable, os.path.join(HERE, "gen.py"), work, "--links", str(args.links),
             "--routes", str(args.routes), "--tables", str(args.tables), "--policies",
             str(args.policies)])
        info = machine(args)
        load_before = os.getloadavg()
        samples = collections.defaultdict(list)
        for n in range(1, args.repeat + 1):
            print(f"run {n}/{args.repeat} ...", file=sys.stderr, flush=True)
            with Namespaces(work) as spaces:
                one_repeat(n, args, work, samples, spaces)
        load_after = os.getloadavg()
    except BenchError as e:
        print(f"run.py: FAILED: {e}", file=sys.stderr)
        print(f"(workload and outputs kept in {work})", file=sys.stderr)
        sys.exit(1)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)

    table = rows(samples, bool(args.nmstatectl))
    workload = (f"{args.links} veth pairs; {args.links} Interface, {args.links} "
                f"IPv4StaticAddress, {args.routes} IPv4StaticRoute in {args.tables} tables, "
                f"{args.policies} IPv4PolicyRoute, lab NAT / firewall / DNAT; routerd made "
                f"{statistics.median(samples['ops_a']):.0f} operations cold")
    print(f"\nworkload: {workload}")
    print(f"repeats: {args.repeat} (fresh namespaces each); load average "
          f"{load_before[0]:.2f} before, {load_after[0]:.2f} after; "
          f"{time.time() - started:.0f} s in all\n")
    print(text_table(table))
    missed = [r[0] for r in table if r[6] == "FAIL"]
    if args.markdown:
        print("\n<!-- markdown for docs/benchmarks.md -->\n")
        print("| machine | |\n|---|---|")
        for k, v in info.items():
            print(f"| {k} | {v} |")
        print(f"\nWorkload: {workload}. {args.repeat} repeats; load average "
              f"{load_before[0]:.2f} before, {load_after[0]:.2f} after.\n")
        print(markdown_table(table))
        print(f"\nReproduce: `{reproduce(args)}`.")
    if missed:
        print(f"\ntargets missed: {', '.join(missed)}", file=sys.stderr)
        if args.check:
            sys.exit(2)


if __name__ == "__main__":
    main()
