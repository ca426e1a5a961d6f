"""Tracing overhead of `strata trace` against bare runs, `nsys profile --trace=cuda`
and torch.profiler, side by side in one run on the GPU machine (interleaved rounds,
the order rotated per round; medians of per-round differences against that round's
bare run).

Workloads, each timed by the program itself (in-run: tracer start-up and
post-processing are not in it):
  launch  100k empty <<<1,32>>> launches, no sync between (tests/gpu/launch_bench.cu),
          figure: us per launch
  torch   20k `x = x + 1.0` on an 8x8 CUDA tensor, then a sync, figure: us per iteration
Extra strata rows set STRATA_AGENT_RECORD / STRATA_AGENT_CLOCK (docs/agent.md) to show
where the agent's cost goes.

Goals (the project's tracing overhead goal since 2026-12-03): on both workloads
strata's added time is never more than nsys's in the same run, and within 10 %
of CUPTI's floor (bench/cupti_floor.cc). Two floors are shown: "cupti floor"
records every kernel and runtime call (the first definition, 2026-12-03);
"cupti floor, strata's records" records the kinds strata's CUDA layer keeps
(kernel, runtime and driver calls, the same getters left out: `quiet`), which
is what strata's own cost is judged against, with strata's CUDA layer alone
("strata (no ops)": the PyTorch op layer is a recording the floor does not
make, and is judged against torch.profiler in bench/torch_ops_overhead.py).
(The earlier goal, half of nsys's, is below CUPTI's own cost: docs/PERFORMANCE.md.)

usage: gpu_trace_overhead.py BUILD_DIR OUTDIR [ROUNDS] [goals|ablation|floor|kinds] [WORKLOAD]
  WORKLOAD (launch or torch; default both) lets one device call hold one workload.
  ablation: strata alone, one record group at a time (STRATA_AGENT_RECORD), to see
            which CUPTI kinds cost what; no goals checked
  floor:    the smallest CUPTI client (bench/cupti_floor.cc) recording one thing at a
            time, beside strata and nsys: what CUPTI itself costs, which no
            CUPTI-based tracer can go below; no goals checked
  kinds:    the floor of strata's records, then the same client with every other
            CUPTI kind strata enables (memory, markers, metadata, external
            correlation), beside strata's CUDA layer and nsys: whether strata's
            cost above the floor is CUPTI's for those kinds or strata's own
Prints a table last; per-run figures go to OUTDIR/gpu_trace_overhead.json.
"""
import json
import os
import re
import statistics
import subprocess
import sys

from gpu_common import (STRATA_RECORDS, added, chosen_rows, cupti_floor_env,
                        difference_interval, ranking, row_figures, verdict)

build, outdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
mode = sys.argv[4] if len(sys.argv) > 4 else "goals"
only = sys.argv[5] if len(sys.argv) > 5 else None
check_goals = mode in ("goals", "kinds")  # ablation and floor only show where the cost goes
os.makedirs(outdir, exist_ok=True)
strata = f"{build}/bin/strata"
nsys = os.environ.get("NSYS", "/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys")
python = os.environ.get("PYTHON", "/opt/torch/.venv/bin/python3")
env_libs = {"LD_LIBRARY_PATH": f"{build}/runtime-libs"}

TORCH_LOOP = """
import sys, time, torch
x = torch.zeros(8, 8, device="cuda")
for _ in range(1000): x = x + 1.0
torch.cuda.synchronize()
def loop():
    global x
    t = time.perf_counter()
    for _ in range(20000): x = x + 1.0
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / 20000 * 1e6
if sys.argv[1:] == ["profiler"]:
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
        us = loop()
else:
    us = loop()
print("us_per_iter", us)
"""


def strata_trace(name, cmd, extra_env=None, trace=None):
    argv = [strata, "trace", "--stats", "false", "--force", "-o", f"{outdir}/{name}.sqlite"]
    argv += (["--trace", trace] if trace else []) + ["--"]
    return argv + cmd, {**env_libs, **(extra_env or {})}


def nsys_profile(name, cmd):
    return [nsys, "profile", "--trace=cuda", "--sample=none", "--cpuctxsw=none",
            "--force-overwrite=true", "-o", f"{outdir}/{name}"] + cmd, {}


def cupti_floor(what, cmd):
    """The smallest CUPTI client recording `what` (bench/cupti_floor.cc): CUPTI's own cost."""
    return cmd, cupti_floor_env(build, what)


launch = [f"{build}/bin/gpu_launch_bench", "100000"]
torch_cmd = [python, "-c", TORCH_LOOP]
workloads = {
    "launch": ("us_per_launch", {
        "bare": (launch, {}),
        "strata": strata_trace("launch", launch),
        "strata kernel,runtime": strata_trace("launch-kr", launch,
                                              {"STRATA_AGENT_RECORD": "kernel,runtime"}),
        "strata without driver": strata_trace(
            "launch-nodrv", launch,
            {"STRATA_AGENT_RECORD": "kernel,runtime,memory,sync,nvtx,meta"}),
        "strata cupti clock": strata_trace("launch-clk", launch, {"STRATA_AGENT_CLOCK": "cupti"}),
        "cupti floor": cupti_floor("kernel,runtime,ts", launch),
        "cupti floor, strata's records": cupti_floor(STRATA_RECORDS, launch),
        "nsys": nsys_profile("nsys-launch", launch),
    }),
    "torch": ("us_per_iter", {
        "bare": (torch_cmd, {}),
        "strata": strata_trace("torch", torch_cmd),
        "strata (no ops)": strata_trace("torch-noops", torch_cmd, trace="cuda,nvtx"),
        "strata kernel,runtime": strata_trace("torch-kr", torch_cmd,
                                              {"STRATA_AGENT_RECORD": "kernel,runtime"}),
        "strata without driver": strata_trace(
            "torch-nodrv", torch_cmd,
            {"STRATA_AGENT_RECORD": "kernel,runtime,memory,sync,nvtx,meta"}),
        "torch.profiler": (torch_cmd + ["profiler"], {}),
        "cupti floor": cupti_floor("kernel,runtime,ts", torch_cmd),
        "cupti floor, strata's records": cupti_floor(STRATA_RECORDS, torch_cmd),
        "nsys": nsys_profile("nsys-torch", torch_cmd),
    }),
}

if mode == "ablation":
    def groups(name, cmd, record):
        return strata_trace(name, cmd, {"STRATA_AGENT_RECORD": record})
    workloads = {
        "launch": ("us_per_launch", {
            "bare": (launch, {}),
            "kernel": groups("l-k", launch, "kernel"),
            "runtime": groups("l-r", launch, "runtime"),
            "kernel,runtime": groups("l-kr", launch, "kernel,runtime"),
        }),
        "torch": ("us_per_iter", {
            "bare": (torch_cmd, {}),
            "kernel,runtime": groups("t-kr", torch_cmd, "kernel,runtime"),
            "+driver": groups("t-d", torch_cmd, "kernel,runtime,driver"),
            "+memory": groups("t-m", torch_cmd, "kernel,runtime,memory"),
            "+sync": groups("t-s", torch_cmd, "kernel,runtime,sync"),
            "+nvtx": groups("t-n", torch_cmd, "kernel,runtime,nvtx"),
            "+meta": groups("t-x", torch_cmd, "kernel,runtime,meta"),
            "all (default)": strata_trace("t-all", torch_cmd),
        }),
    }

if mode == "floor":
    floor = cupti_floor
    workloads = {
        "launch": ("us_per_launch", {
            "bare": (launch, {}),
            "cupti subscribe only": floor("", launch),
            "cupti kernel": floor("kernel", launch),
            "cupti kernel+ts": floor("kernel,ts", launch),
            "cupti kernel perthread": floor("kernel,perthread", launch),
            "cupti runtime": floor("runtime", launch),
            "cupti runtime cb empty": floor("rtcb", launch),
            "cupti runtime cb record": floor("rtcbrec", launch),
            "cupti kernel+runtime": floor("kernel,runtime,ts", launch),
            "cupti kernel+runtime cb": floor("kernel,rtcbrec,ts", launch),
            "strata kernel,runtime": strata_trace("l-kr", launch,
                                                  {"STRATA_AGENT_RECORD": "kernel,runtime"}),
            "nsys": nsys_profile("nsys-launch", launch),
        }),
        "torch": ("us_per_iter", {
            "bare": (torch_cmd, {}),
            "cupti kernel+runtime": floor("kernel,runtime,ts", torch_cmd),
            "cupti kernel+runtime cb": floor("kernel,rtcbrec,ts", torch_cmd),
            "cupti k+r+driver": floor("kernel,runtime,driver,ts", torch_cmd),
            "cupti k+r+sync": floor("kernel,runtime,sync,ts", torch_cmd),
            "strata (default)": strata_trace("t-all", torch_cmd),
            "nsys": nsys_profile("nsys-torch", torch_cmd),
        }),
    }


if mode == "kinds":
    workloads = {
        "launch": ("us_per_launch", {
            "bare": (launch, {}),
            "cupti floor, strata's records": cupti_floor(STRATA_RECORDS, launch),
            "cupti floor, strata's kinds": cupti_floor(STRATA_RECORDS + ",memory,marker,meta,extcorr",
                                                      launch),
            "strata": strata_trace("launch", launch),
            "nsys": nsys_profile("nsys-launch", launch),
        }),
        "torch": ("us_per_iter", {
            "bare": (torch_cmd, {}),
            "cupti floor, strata's records": cupti_floor(STRATA_RECORDS, torch_cmd),
            "cupti floor, strata's kinds": cupti_floor(STRATA_RECORDS + ",memory,marker,meta,extcorr",
                                                      torch_cmd),
            "strata (no ops)": strata_trace("torch-noops", torch_cmd, trace="cuda,nvtx"),
            "strata": strata_trace("torch", torch_cmd),
            "nsys": nsys_profile("nsys-torch", torch_cmd),
        }),
    }


def run(argv, extra_env, key):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env={**os.environ, **extra_env}, timeout=300)
    for line in p.stderr.splitlines():  # the floor probe's record counts
        if line.startswith("cupti_floor:"):
            print(f"{extra_env.get('CUPTI_FLOOR', '')!r:28s} {line}", file=sys.stderr)
    m = re.findall(rf"^{key} ([\d.]+)", p.stdout, re.M)
    if not m:
        print(f"no {key} from: {' '.join(argv)[:200]} (exit {p.returncode})\n{p.stderr[-600:]}",
              file=sys.stderr)
        return None
    return float(m[-1])


if only:
    workloads = {only: workloads[only]}
# BENCH_CONFIGS and BENCH_PIN: gpu_common.chosen_rows.
every_row = {name: None for _, cfg in workloads.values() for name in cfg}
workloads = {w: (key, chosen_rows(cfg, every_row)) for w, (key, cfg) in workloads.items()}
results = {}
for wname, (key, configs) in workloads.items():
    names = list(configs)
    for name in names:  # warm-up: caches, JIT, the driver's first-context costs
        run(*configs[name], key)
    data = {name: [] for name in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            data[name].append(run(*configs[name], key))
        # Rewritten after every round: a call cut short keeps what it finished.
        with open(f"{outdir}/gpu_trace_overhead.json", "w") as f:
            json.dump({**results, wname: data}, f, indent=1)
        print(f"{wname}: round {r + 1} of {rounds} done", file=sys.stderr, flush=True)
    results[wname] = data


print(f"\ntracing overhead, {rounds} interleaved rounds, medians of per-round differences vs bare")
print(f"{'workload':8s} {'tool':24s} {'median':>9s} {'added':>8s} {'ratio':>7s}")
verdicts = []
for wname, data in results.items():
    unit = workloads[wname][0]
    bare = statistics.median(x for x in data["bare"] if x is not None)
    for name in data:
        if (figures := row_figures(data, name)) is None:
            print(f"{wname:8s} {name:24s} {'failed':>9s}")
            continue
        med, add = figures
        print(f"{wname:8s} {name:24s} {med:9.3f} {add:+8.3f} {med / bare:7.2f}  {unit}")
    if not check_goals:
        continue
    s = added(data, "strata")
    # Like for like: strata's CUDA layer against CUPTI recording the same kinds.
    own_name = "strata (no ops)" if "strata (no ops)" in data else "strata"
    floor_name = ("cupti floor, strata's records" if "cupti floor, strata's records" in data
                  else "cupti floor")
    s_own = added(data, own_name) if own_name in data else None
    floor_added = added(data, floor_name) if floor_name in data else None
    if s is None:
        verdicts.append(f"{wname}: strata failed")
        continue
    if "nsys" in data and added(data, "nsys") is not None:
        n = added(data, "nsys")
        pairs = [(a, b) for a, b in zip(data["strata"], data["nsys"]) if None not in (a, b)]
        below = sum(a <= b for a, b in pairs)
        sure = ranking(difference_interval(data["strata"], data["nsys"], data["bare"]), unit)
        verdicts.append(f"{wname}: strata {s:+.3f} <= nsys {n:+.3f} {unit}: "
                        f"{verdict(s <= n)} (at or below nsys in {below} of "
                        f"{len(pairs)} rounds; {sure})")
    if floor_added is not None and s_own is not None:
        bound = 1.10 * floor_added
        sure = ranking(difference_interval(data[own_name], data[floor_name], data["bare"], 1.10),
                       unit)
        verdicts.append(f"{wname}: {own_name} {s_own:+.3f} <= 1.10 x {floor_name} "
                        f"{floor_added:+.3f} = {bound:+.3f} {unit}: "
                        f"{verdict(s_own <= bound)} ({sure})")
        own = added(data, own_name, floor_name)
        verdicts.append(f"{wname}: {own_name}'s own cost above CUPTI's, median of per-round "
                        f"differences: {own:+.3f} {unit}")
        if "cupti floor, strata's kinds" in data:
            kinds = added(data, "cupti floor, strata's kinds", floor_name)
            rest = added(data, own_name, "cupti floor, strata's kinds")
            verdicts.append(f"{wname}: of that, CUPTI's other kinds {kinds:+.3f} {unit}, strata's "
                            f"own machinery {rest:+.3f} {unit} (medians of per-round differences)")
print("\n".join(verdicts))
