"""Why are runs of one PyTorch loop bimodal on the GPU machine?

bench/gpu_trace_overhead.py's PyTorch loop (20k `x = x + 1.0` on an 8x8 CUDA
tensor) spreads from about 8 to 12 us per iteration between bare runs of the
same command (docs/PERFORMANCE.md, 2026-12-04). This probe runs that loop
bare, N times, alternating normal runs with runs under `setarch -R` (address
space randomization off), and inside each process repeats the loop REPEATS
times. Beside each figure it keeps the CPU the process was on at the start
and at the end of each repetition, and the GPU's SM clock read before the run.

What the figures tell apart:
  - repetitions agree within a process but processes differ: something fixed
    at process start (address layout, the CPU or NUMA node it was placed on);
  - ASLR-off runs are unimodal where normal runs are not: the address layout;
  - the slow runs share CPUs (or an SM clock): placement (or clocks).

usage: torch_loop_spread.py OUTDIR [RUNS] [REPEATS]
Prints a table last; per-run figures go to OUTDIR/torch_loop_spread.json.
"""
import json
import os
import statistics
import subprocess
import sys

outdir = os.path.abspath(sys.argv[1])
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
python = os.environ.get("PYTHON", "/opt/torch/.venv/bin/python3")
os.makedirs(outdir, exist_ok=True)

LOOP = """
import sys, time, torch
def cpu():  # field 39 of /proc/self/stat: the CPU the process last ran on
    return int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[36])
x = torch.zeros(8, 8, device="cuda")
for _ in range(1000): x = x + 1.0
torch.cuda.synchronize()
for rep in range(int(sys.argv[1])):
    start_cpu = cpu()
    t = time.perf_counter()
    for _ in range(20000): x = x + 1.0
    torch.cuda.synchronize()
    us = (time.perf_counter() - t) / 20000 * 1e6
    print("rep", rep, us, start_cpu, cpu())
"""


def sm_clock_mhz():
    p = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits"],
                       capture_output=True, text=True)
    try:
        return int(p.stdout.split()[0])
    except (IndexError, ValueError):
        return None


def row(rec):
    cells = " ".join(f"{r['us']:6.2f} {r['cpu_start']:3d}>{r['cpu_end']:<3d}" for r in rec["reps"])
    return f"{rec['run']:3d} {'on' if rec['aslr'] else 'off':>4s} {rec['sm_clock_mhz'] or 0:6d} {cells}"


# Each row is printed as its run ends: a call cut short keeps what it finished.
print(f"{'run':>3s} {'aslr':>4s} {'sm MHz':>6s} " +
      " ".join(f"{'rep' + str(r) + ' us cpu':>14s}" for r in range(repeats)), flush=True)
records = []
for i in range(runs):
    no_aslr = i % 2 == 1
    argv = ([*(["setarch", "-R"] if no_aslr else []), python, "-c", LOOP, str(repeats)])
    clock = sm_clock_mhz()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    reps = []
    for line in p.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] == "rep":
            reps.append({"us": float(parts[2]), "cpu_start": int(parts[3]), "cpu_end": int(parts[4])})
    if not reps:
        print(f"run {i}: no figures (exit {p.returncode}): {p.stderr[-300:]}", file=sys.stderr)
    records.append({"run": i, "aslr": not no_aslr, "sm_clock_mhz": clock, "reps": reps})
    print(row(records[-1]), flush=True)
    with open(f"{outdir}/torch_loop_spread.json", "w") as f:
        json.dump(records, f, indent=1)


def summary(label, recs):
    firsts = [r["reps"][0]["us"] for r in recs if r["reps"]]
    inner = [max(x["us"] for x in r["reps"]) - min(x["us"] for x in r["reps"])
             for r in recs if len(r["reps"]) > 1]
    if not firsts:
        print(f"{label}: no runs")
        return
    print(f"{label}: {len(firsts)} runs, first repetition min {min(firsts):.2f} median "
          f"{statistics.median(firsts):.2f} max {max(firsts):.2f} us; within-process spread "
          f"(max - min of repetitions) median {statistics.median(inner) if inner else 0:.2f} us")


print()
summary("ASLR on ", [r for r in records if r["aslr"]])
summary("ASLR off", [r for r in records if not r["aslr"]])
