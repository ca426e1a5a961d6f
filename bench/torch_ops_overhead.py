"""What recording PyTorch ops adds to a program, side by side on the GPU machine
(issue 18): strata trace (ops on, the default) against torch.profiler
(CPU+CUDA activities) and nsys --trace=cuda,nvtx --pytorch=autograd-nvtx, in
interleaved rounds (the order rotated per round), medians of per-round
differences against that round's bare run.

Workloads, each timed by the program itself (tool start-up and post-processing
are not in the figure; the whole command's wall time is kept in the JSON):
  small_ops  bench/torch_workloads/small_ops.py: 20k `x + 1` on a 4-element tensor
  train      examples/torch_train.py: 20 steps of an MLP (forward, backward, SGD step)
Also shown: strata without the op layer (--trace cuda,nvtx), to separate the
ops' cost from CUDA tracing's, and on CUDA the two rows that layer is judged
against, recording what it records: nsys --trace=cuda and CUPTI's floor for
strata's records (bench/cupti_floor.cc, as in gpu_trace_overhead.py).

Both workloads print probe_ms (train with --probe), a tracer-free pure-Python
loop timed in the same process: runs of one command fall in two speeds per
process on the GPU machine (docs/PERFORMANCE.md), and where the probe follows
a row's figures (the rank correlation printed per row) the CPU's speed is what
varies. Each row's added time is then given again from only the runs whose
probe was fast, with how many runs that left: a tool whose threads slow the
CPU leaves fewer.
The issue's measure stays the medians of all runs.

Goals: the op layer (issue 18): strata's added time <= torch.profiler's and
<= nsys --pytorch=autograd-nvtx's, on both workloads. The CUDA layer (the
project's tracing goal), like for like: strata (no ops) <= nsys --trace=cuda
and <= 1.10 x the floor's added time.
BENCH_CONFIGS="bare;strata (ops);..." runs only the rows named, BENCH_PIN="2-5"
every command under `taskset -c 2-5` (gpu_common.chosen_rows): a call of at
most 10 minutes holds about 8 rounds of all seven rows on small_ops, 7 of the
op layer's five on train.

usage: torch_ops_overhead.py BUILD_DIR OUTDIR [ROUNDS] [DEVICE] [WORKLOAD]
WORKLOAD (small_ops or train; default both) lets one device call of at most 10
minutes hold one workload: on the H200 a round of five tools takes about a
minute (nsys alone about half of it). Prints a table last; per-run figures go
to OUTDIR/torch_ops_overhead-WORKLOAD.json, rewritten after every round so that
a call cut short keeps the rounds it finished: `torch_ops_overhead.py --table
JSON...` prints such files' table and verdicts again, of the rounds they hold.
`--pool JSON...` pools the rounds of several runs of one workload (each round
keeps its own bare run; the rows every file has): where one call's rounds
cannot rank two rows, the rounds of several calls on the same kind of machine
may.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time

from gpu_common import (added, chosen_rows, cupti_floor_env, difference_interval, fast_band,
                        rank_correlation, ranking, row_figures, verdict)


def judge(data, ours, peer, factor=1.0):
    """Whether row `ours` added at most `factor` x what row `peer` added, as a
    line; None where either row is missing or has no figure."""
    if ours not in data or peer not in data:
        return None
    a, b = added(data, ours), added(data, peer)
    if None in (a, b):
        return None
    below = sum(x <= y for x, y in zip(data[ours], data[peer]) if None not in (x, y))
    scale = f"{factor:.2f} x " if factor != 1.0 else ""
    sure = ranking(difference_interval(data[ours], data[peer], data["bare"], factor), "ms")
    return (f"{ours} {a:.3f} ms <= {scale}{peer} {b:.3f} ms: "
            f"{verdict(a <= factor * b)} (at or below {peer} in {below} of "
            f"{len(data[ours])} rounds; {sure})")


# (ours, peer, factor): row `ours` should add at most factor x what `peer` adds.
GOALS = (("strata (ops)", "torch.profiler", 1.0), ("strata (ops)", "nsys autograd-nvtx", 1.0),
         ("strata (no ops)", "nsys --trace=cuda", 1.0), ("strata (no ops)", "cupti floor", 1.10))


def judge_all(data):
    return [line for ours, peer, factor in GOALS if (line := judge(data, ours, peer, factor))]


def report(results, device):
    """Prints the table and the verdicts of results {workload: {"elapsed_ms":
    {row: [ms per round]}, "probe_ms": (the same, where the program prints a
    probe), "command_wall_s": ...}}."""
    rounds = max(len(res["elapsed_ms"]["bare"]) for res in results.values())
    print(f"\nPyTorch op recording overhead, {device}, {rounds} interleaved rounds; "
          f"added = median of per-round (tool - bare) of the program's own elapsed_ms")
    print(f"{'workload':10s} {'tool':20s} {'median ms':>10s} {'added ms':>9s} {'x bare':>7s} {'cmd wall s':>10s}")
    verdicts = []
    for wname, res in results.items():
        data = res["elapsed_ms"]
        bare = statistics.median(x for x in data["bare"] if x is not None)
        for name in data:
            if (figures := row_figures(data, name)) is None:
                print(f"{wname:10s} {name:20s} {'failed':>10s}")
                continue
            med, a = figures
            wall = statistics.median(res["command_wall_s"][name])
            print(f"{wname:10s} {name:20s} {med:10.3f} {a:9.3f} {med / bare:7.2f} {wall:10.2f}")
        for line in judge_all(data):
            verdicts.append(f"{wname}: {line}")
        verdicts += probe_lines(wname, data, res.get("probe_ms"))
    print("\n".join(verdicts))


def probe_lines(wname, data, probes):
    """What the runs' CPU-speed probe says (small_ops.py's probe_ms): how far
    each row's figure follows it, and each row's added time from the runs in
    the fast band (gpu_common.fast_band). Nothing where the runs have no probe."""
    band = fast_band(data, probes) if probes else None
    if band is None:
        return []
    follows, fast = [], []
    base = statistics.median(band["bare"]) if band["bare"] else None
    for name in data:
        row_probes = probes.get(name, [])
        vals = [p for p in row_probes if p]
        rho = rank_correlation(row_probes, data[name])
        if vals:
            follows.append(f"{name} {min(vals):.1f}-{max(vals):.1f} ms"
                           + (f", rho {rho:+.2f}" if rho is not None else ""))
        if name != "bare":
            figure = (f"{statistics.median(band[name]) - base:+.1f} ms"
                      if band[name] and base is not None else "-")
            fast.append(f"{name} {figure} ({len(band[name])} of {len(data[name])})")
    return [f"{wname}: CPU-speed probe per row (its range; rank correlation with the row's "
            f"elapsed_ms): " + "; ".join(follows),
            f"{wname}: fast CPU only (probe <= 1.25 x the fastest; median - bare's median, "
            f"{len(band['bare'])} bare runs; runs in the band): " + "; ".join(fast)]


def pool(paths):
    """The rounds of the runs in `paths` (saved JSON files of one workload) as one
    run: the rows every file has, each file's rounds cut to those all its kept
    rows finished."""
    runs = [json.load(open(path))["results"] for path in paths]
    rows = [r for r in runs[0]["elapsed_ms"] if all(r in run["elapsed_ms"] for run in runs)]
    pooled = {key: {r: [] for r in rows} for key in ("elapsed_ms", "probe_ms", "command_wall_s")}
    for run in runs:
        n = min(len(run["elapsed_ms"][r]) for r in rows)
        for key, per_row in pooled.items():
            for r in rows:
                per_row[r] += (run.get(key, {}).get(r) or [None] * n)[:n]
    return pooled


def workload_of(path):
    return re.sub(r"^torch_ops_overhead-(small_ops|train).*$", r"\1", os.path.basename(path))


if sys.argv[1:2] == ["--pool"]:  # several saved runs of one workload, pooled
    names = {workload_of(path) for path in sys.argv[2:]}
    if len(names) != 1:
        sys.exit(f"--pool: the files are of {len(names)} workloads, not one: {sorted(names)}")
    report({names.pop(): pool(sys.argv[2:])}, "cuda")
    sys.exit(0)

if sys.argv[1:2] == ["--table"]:  # saved runs tabled again; nothing is run
    saved = {workload_of(path): json.load(open(path)) for path in sys.argv[2:]}
    report({wname: run["results"] for wname, run in saved.items()},
           next(iter(saved.values()))["device"])
    sys.exit(0)

build, outdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
device = sys.argv[4] if len(sys.argv) > 4 else "cuda"
only = sys.argv[5] if len(sys.argv) > 5 else None
os.makedirs(outdir, exist_ok=True)
here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(here)
strata = f"{build}/bin/strata"
nsys = os.environ.get("NSYS", "/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys")
python = os.environ.get("PYTHON", "/opt/torch/.venv/bin/python3")
env_libs = {"LD_LIBRARY_PATH": f"{build}/runtime-libs"}

programs = {
    "small_ops": [f"{here}/torch_workloads/small_ops.py", "--device", device, "--ops", "20000"],
    "train": [f"{repo}/examples/torch_train.py", "--device", device, "--steps", "20", "--probe"],
}


def configs(wname, prog):
    cmd = [python] + prog
    out = {
        "bare": (cmd, {}),
        "strata (ops)": ([strata, "trace", "--stats", "false", "--force", "-o",
                          f"{outdir}/{wname}.sqlite", "--"] + cmd, env_libs),
        "strata (no ops)": ([strata, "trace", "--trace", "cuda,nvtx", "--stats", "false", "--force",
                             "-o", f"{outdir}/{wname}-noops.sqlite", "--"] + cmd, env_libs),
        "torch.profiler": ([python, f"{here}/torch_profile_run.py"] +
                           (["--cuda"] if device == "cuda" else []) + ["--"] + prog, {}),
    }
    if device == "cuda" and os.path.exists(nsys):
        nsys_cmd = [nsys, "profile", "--sample=none", "--cpuctxsw=none", "--force-overwrite=true"]
        out["nsys autograd-nvtx"] = (nsys_cmd + ["--trace=cuda,nvtx", "--pytorch=autograd-nvtx",
                                                 "-o", f"{outdir}/nsys-{wname}"] + cmd, {})
        out["nsys --trace=cuda"] = (nsys_cmd + ["--trace=cuda", "-o",
                                                f"{outdir}/nsys-cuda-{wname}"] + cmd, {})
    if device == "cuda":
        # The smallest CUPTI client recording the kinds strata's CUDA layer keeps,
        # its left-out getters left out too (`quiet`): gpu_trace_overhead.py's floor.
        out["cupti floor"] = (cmd, cupti_floor_env(build))
    return chosen_rows(out)  # BENCH_CONFIGS, BENCH_PIN


def run(argv, extra_env):
    t0 = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env={**os.environ, **extra_env}, timeout=300)
    wall = time.perf_counter() - t0
    m = re.findall(r"elapsed_ms=([\d.]+)", p.stdout)
    probe = re.findall(r"probe_ms=([\d.]+)", p.stdout)
    if not m:
        print(f"no elapsed_ms from: {' '.join(argv)[:200]} (exit {p.returncode})\n{p.stderr[-600:]}",
              file=sys.stderr)
        return None, None, wall
    return float(m[-1]), float(probe[-1]) if probe else None, wall


if only:
    programs = {only: programs[only]}
results = {}


def save():
    for wname, res in results.items():
        with open(f"{outdir}/torch_ops_overhead-{wname}.json", "w") as f:
            json.dump({"rounds": rounds, "device": device, "results": res}, f, indent=1)


for wname, prog in programs.items():
    cfg = configs(wname, prog)
    names = list(cfg)
    for name in names:  # warm-up: page cache, the driver's first-context costs
        run(*cfg[name])
    data = {name: [] for name in names}
    probes = {name: [] for name in names}
    walls = {name: [] for name in names}
    results[wname] = {"elapsed_ms": data, "probe_ms": probes, "command_wall_s": walls}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            ms, probe, wall = run(*cfg[name])
            data[name].append(ms)
            probes[name].append(probe)
            walls[name].append(wall)
        save()
        print(f"{wname}: round {r + 1} of {rounds} done", file=sys.stderr, flush=True)


report(results, device)
