"""Sampling overhead of `strata cpu` (dwarf) against bare runs and
`perf record -F HZ --call-graph dwarf` at the same rate, interleaved (bare, strata,
perf in each round, the order rotated per round), medians of per-round ratios.

Two numbers per workload and tool:
  in-run  the target's own elapsed_ms (its timer around the work): what sampling
          costs the program while it runs;
  wall    fork to exit of the whole command: for strata this includes unwinding,
          symbolizing and writing the trace after the target exits; perf record
          only copies the raw samples to perf.data (no unwinding or symbols, that
          is perf report's job), so its wall is not the same work.
Goal: in-run strata/bare <= 1.03 and strata's in-run ratio no worse than perf's. The "strata 8k" row copies
8 KiB of stack per sample, perf's default for --call-graph dwarf (strata's
default is 16 KiB).
usage: cpu_overhead.py BUILD_DIR OUTDIR [ROUNDS]
  STRATA_BENCH_HZ=N  the sampling rate of both tools (default 4000: strata's and perf's default)
  PERF=path  the perf binary (default: perf on PATH)
  the workloads' own sizes scale with STRATA_BENCH_SCALE (default 1)
  STRATA_BENCH_WORKLOADS=cpu_hotspot,cpu_threads4  run only the ones named
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

build, outdir = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
os.makedirs(outdir, exist_ok=True)
strata = f"{build}/bin/strata"
perf = os.environ.get("PERF") or shutil.which("perf")
scale = float(os.environ.get("STRATA_BENCH_SCALE", "1"))
hz = os.environ.get("STRATA_BENCH_HZ", "4000")
lines = str(int(24000 * scale))
iters = str(int(60_000_000 * scale))
workloads = {
    f"cpu_hotspot slow {lines}": [f"{build}/bin/cpu_hotspot", "--mode", "slow", "--lines", lines],
    "cpu_threads4": [f"{build}/bin/cpu_threads4", "--iters", iters],
}
only = os.environ.get("STRATA_BENCH_WORKLOADS")
if only:
    workloads = {k: v for k, v in workloads.items() if k.split()[0] in only.split(",")}


def tools(name, cmd):
    t = {"bare": cmd,
         "strata": [strata, "cpu", "-F", hz, "-o", f"{outdir}/{name}.sqlite", "--force", "--"] + cmd,
         "strata 8k": [strata, "cpu", "-F", hz, "--stack-size", "8192", "-o",
                       f"{outdir}/{name}-8k.sqlite", "--force", "--"] + cmd}
    if perf:
        t["perf"] = [perf, "record", "-q", "-F", hz, "--call-graph", "dwarf",
                     "-o", f"{outdir}/{name}.perf.data", "--"] + cmd
    return t


def run(argv):
    t0 = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(argv)}\n{p.stderr}")
    m = re.findall(r"elapsed_ms=([\d.]+)", p.stdout)
    return wall * 1000.0, float(m[-1])


ok = True
results = []
for wname, cmd in workloads.items():
    key = wname.split()[0]
    ts = tools(key, cmd)
    for name, argv in ts.items():  # warm-up: page cache, symbol caches
        run(argv)
    data = {name: [] for name in ts}
    names = list(ts)
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            data[name].append(run(ts[name]))
    bare = data["bare"]
    row = {"workload": wname, "bare_in": statistics.median(x[1] for x in bare),
           "bare_wall": statistics.median(x[0] for x in bare)}
    for name in names[1:]:
        row[name + "_in"] = statistics.median(d[1] / b[1] for d, b in zip(data[name], bare))
        row[name + "_wall"] = statistics.median(d[0] / b[0] for d, b in zip(data[name], bare))
        row[name + "_in_ms"] = statistics.median(x[1] for x in data[name])
    good = row["strata_in"] <= 1.03 and ("perf_in" not in row or row["strata_in"] <= row["perf_in"])
    row["ok"] = good
    ok &= good
    results.append(row)

print(f"strata cpu ({hz} Hz, dwarf) overhead, {rounds} interleaved rounds, medians of per-round ratios")
print(f"{'workload':24s} {'bare ms (in-run/wall)':>22s} {'strata/bare in-run':>19s} {'wall':>6s}"
      f" {'strata 8k':>10s} {'perf/bare in-run':>17s} {'wall':>6s}  goal")
for r in results:
    pin = f"{r['perf_in']:17.3f} {r['perf_wall']:6.2f}" if "perf_in" in r else f"{'-':>17s} {'-':>6s}"
    print(f"{r['workload']:24s} {r['bare_in']:10.1f} / {r['bare_wall']:9.1f} {r['strata_in']:19.3f}"
          f" {r['strata_wall']:6.2f} {r['strata 8k_in']:10.3f} {pin}  {'met' if r['ok'] else 'NOT met'}")
print("in-run = target's own elapsed_ms; wall = whole command (strata: + unwind/symbolize/write;"
      " perf record: + raw copy only, no symbolizing)")
print("goal (in-run strata/bare <= 1.03 and <= perf's):", "met" if ok else "NOT met")
sys.exit(0 if ok else 1)
