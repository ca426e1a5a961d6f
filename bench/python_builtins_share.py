#!/usr/bin/env python3
"""Issue 20, item 1: the Python view's shares against a calibrated reference.

bench/cpu_workloads/python_builtins.py spends its time in four phases: sorted,
sum, str.join (builtins) and a pure-Python loop. The reference share of each
is its phase's time in a bare run (the program times its phases itself, so no
profiler distorts them). strata's share is the row's tottime (the builtin's
row, or python_loop's) over the sum of the four phase functions' cumtime.
cProfile's ordering of the same rows is printed beside it.

Rounds interleave bare, strata and cProfile runs; medians are reported. The
goal: every row within 5 points of its reference share.

usage: python_builtins_share.py STRATA PYTHON [ROUNDS]
"""
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile

from cpu_common import strata_json

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOAD = os.path.join(HERE, "cpu_workloads", "python_builtins.py")

# (phase, strata/cProfile row label, the phase function that holds it)
ROWS = [
    ("sort", "{built-in method builtins.sorted}", "sort_phase"),
    ("sum", "{built-in method builtins.sum}", "sum_phase"),
    ("join", "{method 'join' of 'str' objects}", "join_phase"),
    ("python_loop", "python_loop", "python_loop"),
]


def label_matches(label, want):
    return label == want or label.endswith("(" + want + ")")


def bare_shares(python):
    out = subprocess.run([python, WORKLOAD], env=dict(os.environ, PHASE_TIMES="1"),
                         capture_output=True, text=True, check=True).stdout
    times = json.loads(out.strip().splitlines()[-1])
    total = sum(times.values())
    return {phase: times[phase] / total for phase, _, _ in ROWS}


def strata_shares(strata, python, scratch):
    trace = os.path.join(scratch, "t.sqlite")
    out = subprocess.run([strata, "cpu", "-o", trace, "--force", "--format", "json",
                          "--limit", "0", "--", python, WORKLOAD],
                         capture_output=True, text=True, check=True).stdout
    rows = strata_json(out)["functions"]

    def find(want, key):
        hits = [r[key] for r in rows if label_matches(r["filename:lineno(function)"], want)]
        return sum(hits)

    total = sum(find(phase_fn, "cumtime") for _, _, phase_fn in ROWS)
    return {phase: find(label, "tottime") / total for phase, label, _ in ROWS}


def cprofile_order(python, scratch):
    prof = os.path.join(scratch, "out.prof")
    subprocess.run([python, "-m", "cProfile", "-o", prof, WORKLOAD], check=True,
                   capture_output=True)
    stats = pstats.Stats(prof).stats
    tottime = {}
    for (file, line, name), (cc, nc, tt, ct, callers) in stats.items():
        label = pstats.func_std_string((file, line, name))
        for phase, want, _ in ROWS:
            if label_matches(label, want):
                tottime[phase] = tottime.get(phase, 0) + tt
    return sorted(tottime, key=lambda p: -tottime[p])


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    strata, python = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    bare = {p: [] for p, _, _ in ROWS}
    seen = {p: [] for p, _, _ in ROWS}
    orders = []
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(rounds):
            for phase, share in bare_shares(python).items():
                bare[phase].append(share)
            for phase, share in strata_shares(strata, python, scratch).items():
                seen[phase].append(share)
            orders.append(cprofile_order(python, scratch))
    print(f"python: {python}, rounds: {rounds} (medians)")
    print(f"{'row':40} {'reference':>9} {'strata':>7} {'diff':>6}")
    worst = 0.0
    for phase, label, _ in ROWS:
        ref = 100 * statistics.median(bare[phase])
        got = 100 * statistics.median(seen[phase])
        worst = max(worst, abs(got - ref))
        print(f"{label:40} {ref:8.1f}% {got:6.1f}% {got - ref:+6.1f}")
    strata_order = sorted(ROWS, key=lambda r: -statistics.median(seen[r[0]]))
    print("reference order: " + ", ".join(
        p for p, _, _ in sorted(ROWS, key=lambda r: -statistics.median(bare[r[0]]))))
    print("strata order:    " + ", ".join(p for p, _, _ in strata_order))
    print("cProfile order:  " + ", ".join(orders[-1]))
    print(f"largest difference: {worst:.1f} points (goal: <= 5)")
    return 0 if worst <= 5 else 1


if __name__ == "__main__":
    sys.exit(main())
