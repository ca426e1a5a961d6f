#!/usr/bin/env python3
"""Issue 20, item 8: do `strata cpu --instrument`'s shares agree with
sampling's? Runs one binary built with -finstrument-functions
(cpu_hotspot_instrumented --mode slow) under `strata cpu --instrument` and
under `strata cpu` (perf sampling, where the hooks are inert), interleaved,
ROUNDS times, and compares each function's share of the profiled time
(cumtime / total, as pstats' sort by cumulative reads) between the two.
Sampling of the same binary is the reference: the hooks' call sites cost the
same in both, only the recording differs.

usage: instrument_shares.py BUILD_DIR [ROUNDS] [LINES]
Goal: every listed function within 5 points of sampling's share (medians).
"""
import json
import statistics
import subprocess
import sys

build = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
lines = sys.argv[3] if len(sys.argv) > 3 else "24000"
strata = f"{build}/bin/strata"
target = [f"{build}/bin/cpu_hotspot_instrumented", "--mode", "slow", "--lines", lines]
FUNCTIONS = ["normalize_line_slow", "make_lines(", "count_words_slow(std", "for_each_word",
             "Rng::next"]


def shares(instrument):
    argv = [strata, "cpu", "-o", "/tmp/strata-instrument-shares.sqlite", "--force",
            "--format", "json", "--sort", "cumtime", "--limit", "0"]
    if instrument:
        argv.append("--instrument")
    p = subprocess.run(argv + ["--"] + target, capture_output=True, text=True, check=True)
    doc = json.loads(p.stdout[p.stdout.index("{"):])
    total = doc["header"]["profiled_s"]
    out = {}
    for f in doc["functions"]:
        label = f.get("filename:lineno(function)", "")
        for name in FUNCTIONS:
            if name in label and name not in out:
                out[name] = 100.0 * f["cumtime"] / total
    return out, doc["header"].get("instrument_overhead_ns_per_call", 0)


rows = {name: {"instrumented": [], "sampled": []} for name in FUNCTIONS}
costs = []
for r in range(rounds):
    for instrument in ((True, False) if r % 2 == 0 else (False, True)):
        got, cost = shares(instrument)
        if instrument:
            costs.append(cost)
        for name in FUNCTIONS:
            rows[name]["instrumented" if instrument else "sampled"].append(got.get(name, 0.0))

print(f"cpu_hotspot_instrumented --mode slow --lines {lines}, {rounds} interleaved rounds; "
      f"share = cumtime / profiled time, medians; calibration "
      f"{statistics.median(costs):.1f} ns per call")
print(f"{'function':24s} {'instrumented %':>15s} {'sampled %':>10s} {'diff':>6s}")
worst = 0.0
for name in FUNCTIONS:
    i = statistics.median(rows[name]["instrumented"])
    s = statistics.median(rows[name]["sampled"])
    worst = max(worst, abs(i - s))
    print(f"{name:24s} {i:15.1f} {s:10.1f} {i - s:+6.1f}")
print(f"largest difference {worst:.1f} points: {'within' if worst <= 5 else 'NOT within'} 5")
