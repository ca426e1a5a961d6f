#!/usr/bin/env bash
# strata cpu --threads: per-thread sample shares against each thread's own
# CPU time. bench/cpu_workloads/thread_split.cpp runs 4 workers ("split1".."split4")
# doing 1:2:3:4 units of the same loop and prints each worker's
# CLOCK_THREAD_CPUTIME_ID; the known split is cpu_ns / sum(cpu_ns) over the
# workers. strata's share is the thread's samples over all workers' samples
# (the main thread, which only joins, is left out of both; its share is shown).
# -F 2000 for ~2500 samples per run (sampling error ~1 point at p = 0.4).
# Goal: every worker within ±3 points, in every run.
# Usage: bench/cpu_thread_split.sh BUILD_DIR [RUNS] [RATE]
set -euo pipefail
build=${1:?usage: bench/cpu_thread_split.sh BUILD_DIR [RUNS] [RATE]}
runs=${2:-2}
rate=${3:-2000}
here=$(cd "$(dirname "$0")" && pwd)
[[ -x "$build/bin/cpu_thread_split" ]] || { echo "build cpu_thread_split first" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((i = 0; i < runs; i++)); do
  "$build/bin/strata" cpu --threads -F "$rate" --format json --limit 0 -o "$out/t.$i.sqlite" --force \
    -- "$build/bin/cpu_thread_split" --unit 50000000 >"$out/t.$i.json" 2>"$out/t.$i.err"
done
python3 - "$out" "$runs" "$here" "$rate" <<'PY'
import re, sys
out, runs, here, rate = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
sys.path.insert(0, here)
import cpu_common as C
ok = True
print(f"strata cpu --threads -F {rate} (dwarf) on cpu_thread_split (1:2:3:4 units)")
print(f"{'run':>3s} {'thread':>7s} {'tid':>8s} {'cpu ms':>8s} {'known %':>8s} {'samples':>8s} {'strata %':>9s} {'diff':>6s}")
for i in range(runs):
    text = open(f"{out}/t.{i}.json").read()
    workers = [dict(re.findall(r"(\w+)=(\S+)", l)) for l in text.splitlines() if l.startswith("worker=")]
    doc = C.strata_json(text)
    threads = {int(t["TID"]): t for t in doc["threads"]}
    cpu_total = sum(int(w["cpu_ns"]) for w in workers)
    smp_total = sum(threads[int(w["tid"])]["Samples"] for w in workers if int(w["tid"]) in threads)
    for w in workers:
        tid = int(w["tid"])
        t = threads.get(tid)
        known = 100 * int(w["cpu_ns"]) / cpu_total
        if t is None:
            print(f"{i:3d} {w['name']:>7s} {tid:8d} thread missing from strata's table")
            ok = False
            continue
        got = 100 * t["Samples"] / smp_total
        good = abs(got - known) <= 3 and t["Thread"] == w["name"]
        ok &= good
        print(f"{i:3d} {w['name']:>7s} {tid:8d} {int(w['cpu_ns'])/1e6:8.1f} {known:8.2f} {int(t['Samples']):8d}"
              f" {got:9.2f} {got-known:+6.2f}  {'ok' if good else 'FAIL'}"
              + ("" if t["Thread"] == w["name"] else f" (named {t['Thread']!r})"))
    others = sum(t["Samples"] for tid, t in threads.items() if tid not in {int(w["tid"]) for w in workers})
    h = doc["header"]
    print(f"    run {i}: {h['samples']} samples, {h['lost_samples']} lost, other threads {int(others)} samples")
print("goal (each worker within ±3 points of its CLOCK_THREAD_CPUTIME_ID share):", "met" if ok else "NOT met")
sys.exit(0 if ok else 1)
PY
