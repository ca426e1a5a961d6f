"""Why are runs of one PyTorch loop bimodal on the GPU machine?

bench/gpu_trace_overhead.py's PyTorch loop (20k `x = x + 1.0` on an 8x8 CUDA
tensor) runs in one of two speeds per process: bare about 8 or 11 us per
iteration, under a CUPTI client about 11 or 17 (docs/PERFORMANCE.md,
2026-12-04 and 2026-12-05), and which one a process gets decides the tools'
medians. Ruled out by the first version of this probe (2026-12-04): address
layout (ASLR off spread as much), the CPU a process starts on, the SM clock.
Ruled out by this version on an H100 host (2026-12-05): the run queue, CPU
migration, other threads (slow runs: main thread on its CPU the whole loop,
waiting 0 ms, on the same CPUs as fast runs). Left: the host taking the CPU
from the guest, which the guest sees only as steal time, now read too.

This version asks where the main thread's time goes in each mode. It runs the
loop N times, alternating bare runs with runs under the smallest CUPTI client
recording strata's records (bench/cupti_floor.cc; with BUILD), and repeats the
loop REPEATS times inside each process. For each repetition it keeps, from
/proc/self/task/*/schedstat and stat: the main thread's time on a CPU and
waiting for one (run queue), the CPU it started and ended on, and the other
threads' time on a CPU (the busiest named), and from /proc/stat the steal time
of the CPU it started on (time the hypervisor ran something else; 0 where the
host does not report it). So:
  - slow runs whose main thread is on a CPU the whole loop: the same work costs
    more (a slower core or its sibling busy, caches, a slower code path);
  - slow runs whose main thread waits in the run queue: contention for its CPU;
  - slow runs whose main thread is neither: it blocks (a lock, the driver);
  - another thread busy only in slow runs: that thread is the cause;
  - steal only in slow runs: the host, not the program or the tool.

usage: torch_loop_spread.py OUTDIR [RUNS] [REPEATS] [BUILD]
SPREAD_DEVICE=cpu runs the loop on the CPU (to try the probe where no GPU is).
Prints a table last; per-run figures go to OUTDIR/torch_loop_spread.json.
"""
import json
import os
import statistics
import subprocess
import sys

from gpu_common import cupti_floor_env

outdir = os.path.abspath(sys.argv[1])
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
build = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None
python = os.environ.get("PYTHON", "/opt/torch/.venv/bin/python3")
os.makedirs(outdir, exist_ok=True)

LOOP = """
import json, os, sys, time, torch
device = os.environ.get("SPREAD_DEVICE", "cuda")
sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
main = os.getpid()
def threads():  # tid: (name, ns on a CPU, ns waiting for one, CPU last run on)
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            on, wait, _ = open(f"/proc/self/task/{tid}/schedstat").read().split()
            stat = open(f"/proc/self/task/{tid}/stat").read()
        except (OSError, ValueError):
            continue  # a thread that ended between the listing and the read
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        cpu = int(stat.rsplit(")", 1)[1].split()[36])  # field 39: processor
        out[int(tid)] = (name, int(on), int(wait), cpu)
    return out
def steal_ms(cpu):  # /proc/stat: cpuN user nice system idle iowait irq softirq steal, in USER_HZ
    for line in open("/proc/stat"):
        if line.startswith(f"cpu{cpu} "):
            return int(line.split()[8]) * 1000 / os.sysconf("SC_CLK_TCK")
    return 0.0
x = torch.zeros(8, 8, device=device)
for _ in range(1000): x = x + 1.0
sync()
for rep in range(int(sys.argv[1])):
    before = threads()
    cpu = before[main][3]
    steal = steal_ms(cpu)
    t = time.perf_counter()
    for _ in range(20000): x = x + 1.0
    sync()
    wall = time.perf_counter() - t
    after = threads()
    steal = steal_ms(cpu) - steal
    others = {tid: (a[0], (a[1] - before.get(tid, (0, 0))[1]) / 1e6)
              for tid, a in after.items() if tid != main}
    busiest = max(others.values(), key=lambda o: o[1], default=("-", 0.0))
    print("rep", json.dumps({
        "us": wall / 20000 * 1e6, "wall_ms": wall * 1e3,
        "main_on_ms": (after[main][1] - before[main][1]) / 1e6,
        "main_wait_ms": (after[main][2] - before[main][2]) / 1e6,
        "cpu_start": cpu, "cpu_end": after[main][3], "steal_ms": steal,
        "others_on_ms": sum(o[1] for o in others.values()), "threads": len(after),
        "busiest": busiest[0], "busiest_on_ms": busiest[1]}))
"""

FLOOR = cupti_floor_env(build) if build else None


def sm_clock_mhz():
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits"],
                           capture_output=True, text=True)
        return int(p.stdout.split()[0])
    except (OSError, IndexError, ValueError):
        return None


def row(rec):
    cells = "  ".join(f"{r['us']:6.2f} {r['main_on_ms'] / r['wall_ms']:4.0%} {r['main_wait_ms']:5.1f} "
                      f"{r['cpu_start']:2d}>{r['cpu_end']:<2d} {r['steal_ms']:5.0f} "
                      f"{r['others_on_ms']:6.1f} "
                      f"{r['busiest'][:15]}" for r in rec["reps"])
    return f"{rec['run']:3d} {rec['config']:5s} {rec['sm_clock_mhz'] or 0:6d}  {cells}"


# Each row is printed as its run ends: a call cut short keeps what it finished.
print("per repetition: us/iter, main thread on a CPU (share of the loop's wall), ms it waited "
      "for a CPU, CPU at start>end, that CPU's steal ms, other threads' ms on a CPU, the busiest "
      "other thread")
print(f"{'run':>3s} {'under':5s} {'sm MHz':>6s}", flush=True)
records = []
for i in range(runs):
    config = "floor" if FLOOR and i % 2 == 1 else "bare"
    env = {**os.environ, **(FLOOR if config == "floor" else {})}
    clock = sm_clock_mhz()
    p = subprocess.run([python, "-c", LOOP, str(repeats)], capture_output=True, text=True,
                       timeout=120, env=env)
    reps = [json.loads(line[4:]) for line in p.stdout.splitlines() if line.startswith("rep ")]
    if not reps:
        print(f"run {i}: no figures (exit {p.returncode}): {p.stderr[-300:]}", file=sys.stderr)
    records.append({"run": i, "config": config, "sm_clock_mhz": clock, "reps": reps})
    print(row(records[-1]), flush=True)
    with open(f"{outdir}/torch_loop_spread.json", "w") as f:
        json.dump(records, f, indent=1)


def summary(config):
    """The runs' first repetitions, split at the middle of their range: what the
    slower half does differently from the faster."""
    firsts = [r["reps"][0] for r in records if r["config"] == config and r["reps"]]
    if not firsts:
        return
    mid = (min(x["us"] for x in firsts) + max(x["us"] for x in firsts)) / 2
    print(f"{config}: {len(firsts)} runs, first repetition {min(x['us'] for x in firsts):.2f} to "
          f"{max(x['us'] for x in firsts):.2f} us")
    for label, half in (("faster", [x for x in firsts if x["us"] < mid]),
                        ("slower", [x for x in firsts if x["us"] >= mid])):
        if not half:
            continue

        def med(key):
            return statistics.median(x[key] for x in half)
        print(f"  {label}: {len(half):2d} runs, {med('us'):6.2f} us; main thread on a CPU "
              f"{statistics.median(x['main_on_ms'] / x['wall_ms'] for x in half):.0%} of the loop, "
              f"waited {med('main_wait_ms'):.1f} ms; steal {med('steal_ms'):.0f} ms; other threads "
              f"{med('others_on_ms'):.1f} ms on a CPU; CPUs {sorted({x['cpu_start'] for x in half})}")


print()
summary("bare")
summary("floor")
