#!/usr/bin/env python3
"""The GPU machine's PyTorch benchmarks run here first, on CPU torch, so that a
script broken by an edit fails in `make test`, not in a device call whose
minutes are few (docs/gpu-machine.md).

  bench_scripts_check.py SOURCE_DIR BUILD_DIR

- bench/torch_ops_overhead.py, one round on the CPU: every row it runs there
  gives a figure, the op layer's verdict against torch.profiler is printed, and
  `--table` on its JSON prints the same table again; a BENCH_CONFIGS naming a
  row it does not have stops it before it runs anything, naming that row; the
  training loop's rows keep a figure and a CPU-speed probe per run;
- bench/gpu_common.py's difference_interval on made-up rounds: a row adding
  clearly less is settled less, clearly more settled more, and two rows of
  two speeds drawn differently are not settled, as the medians alone would be;
- bench/torch_loop_spread.py, two runs of the loop on the CPU: each repetition
  has the main thread's time on a CPU, within its loop's wall time, and a
  steal time that is not negative;
- `torch_ops_overhead.py --pool` on made-up runs: the rounds of every file, the
  rows all of them have, the added times of the pooled rounds; files of two
  workloads refused;
- bench/torch_callback_cost.py on the CPU, plain and under `strata trace
  --under-strata`: a figure per mechanism and round, and --only naming a
  mechanism it does not have stops it, naming it.

Exits 77 (ctest SKIP_RETURN_CODE) where no python3 imports torch; 1 on a failed check.
"""
import json
import os
import subprocess
import sys
import tempfile

# Debian's python3 with python3-torch (scripts/install-deps), the GPU machine's venv.
TORCH_PYTHONS = ["/usr/bin/python3", "/opt/torch/.venv/bin/python3"]
SKIP = 77


def torch_python():
    for python in TORCH_PYTHONS:
        if os.path.exists(python) and subprocess.run(
                [python, "-c", "import torch"], capture_output=True).returncode == 0:
            return python
    return None


def run(argv, env, what):
    proc = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **env},
                          timeout=240)
    if proc.returncode != 0:
        sys.exit(f"FAIL: {what} exited {proc.returncode}: {proc.stderr[-800:]}")
    return proc.stdout


def check_ops_overhead(source, build, python, out):
    stdout = run([sys.executable, f"{source}/bench/torch_ops_overhead.py", build, out, "1", "cpu",
                  "small_ops"], {"PYTHON": python}, "torch_ops_overhead.py")
    with open(f"{out}/torch_ops_overhead-small_ops.json") as f:
        figures = json.load(f)["results"]["elapsed_ms"]
    rows = {"bare", "strata (ops)", "strata (no ops)", "torch.profiler"}
    if set(figures) != rows:
        sys.exit(f"FAIL: torch_ops_overhead.py ran the rows {sorted(figures)}, not {sorted(rows)}")
    for name, values in figures.items():
        if len(values) != 1 or values[0] is None or not values[0] > 0:
            sys.exit(f"FAIL: torch_ops_overhead.py row {name!r} has figures {values}")
    if "small_ops: strata (ops)" not in stdout or "<= torch.profiler" not in stdout:
        sys.exit(f"FAIL: torch_ops_overhead.py printed no verdict against torch.profiler:\n{stdout}")
    with open(f"{out}/torch_ops_overhead-small_ops.json") as f:
        probes = json.load(f)["results"]["probe_ms"]
    if set(probes) != rows or any(len(v) != 1 or not (v[0] or 0) > 0 for v in probes.values()):
        sys.exit(f"FAIL: torch_ops_overhead.py kept the CPU-speed probes {probes}")
    fast = stdout.partition("small_ops: fast CPU only")[2]
    if "strata (ops)" not in fast.split("\n")[0]:
        sys.exit(f"FAIL: torch_ops_overhead.py printed no fast-CPU figures:\n{stdout}")
    # The table is the run's last lines; the JSON alone must give it again.
    table = stdout[stdout.index("PyTorch op recording overhead"):]
    again = run([sys.executable, f"{source}/bench/torch_ops_overhead.py", "--table",
                 f"{out}/torch_ops_overhead-small_ops.json"], {}, "torch_ops_overhead.py --table")
    if again.strip() != table.strip():
        sys.exit(f"FAIL: --table printed\n{again}\nnot the run's table\n{table}")


def check_train_probe(source, build, python, out):
    """The training loop's rows print the CPU-speed probe too (torch_train.py --probe)."""
    run([sys.executable, f"{source}/bench/torch_ops_overhead.py", build, out, "1", "cpu", "train"],
        {"PYTHON": python, "BENCH_CONFIGS": "bare;strata (ops)"}, "torch_ops_overhead.py train")
    with open(f"{out}/torch_ops_overhead-train.json") as f:
        results = json.load(f)["results"]
    for key in ("elapsed_ms", "probe_ms"):
        values = results[key]
        if set(values) != {"bare", "strata (ops)"} or any(
                len(v) != 1 or not (v[0] or 0) > 0 for v in values.values()):
            sys.exit(f"FAIL: torch_ops_overhead.py train kept {key} {values}")


def check_unknown_row(source, build, python, out):
    proc = subprocess.run([sys.executable, f"{source}/bench/torch_ops_overhead.py", build, out, "1",
                           "cpu", "small_ops"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHON": python, "BENCH_CONFIGS": "bare;strata (opps)"})
    if proc.returncode == 0 or "strata (opps)" not in proc.stderr or os.path.exists(
            f"{out}/torch_ops_overhead-small_ops.json"):
        sys.exit(f"FAIL: a misspelt BENCH_CONFIGS row gave exit {proc.returncode}: {proc.stderr[-400:]}")


def check_interval(source):
    sys.path.insert(0, f"{source}/bench")
    from gpu_common import difference_interval, fast_band, rank_correlation, ranking
    bare = [100, 104, 98, 150, 101, 149, 99, 103]
    less = [b + 10 + i % 3 for i, b in enumerate(bare)]
    more = [b + 30 + i % 2 for i, b in enumerate(bare)]
    # Two speeds 1.5x apart per process: every bare run fast, the peer's runs
    # fast in most rounds, ours slow in most: per-round differences of +/-50.
    ours = [150, 225, 150, 225, 150, 225, 225, 150]
    peer = [150, 150, 225, 150, 150, 225, 150, 150]
    cases = ((less, more, "settled: less"), (more, less, "settled: more"),
             (ours, peer, "not settled"))
    for a, b, expected in cases:
        said = ranking(difference_interval(a, b, bare), "ms")
        if not said.endswith(expected):
            sys.exit(f"FAIL: difference_interval({a}, {b}) read as {said!r}, not {expected!r}")
    # The same two speeds, each run's probe saying which it drew: the fast
    # band keeps exactly the fast runs.
    speed = {"bare": [1.0] * 8, "ours": [1.5, 1.5, 1.0, 1.5, 1.0, 1.5, 1.5, 1.0],
             "peer": [1.0, 1.0, 1.5, 1.0, 1.5, 1.0, 1.0, 1.0]}
    data = {"bare": [100.0] * 8, "ours": [110.0 * f for f in speed["ours"]],
            "peer": [130.0 * f for f in speed["peer"]]}
    probes = {name: [20.0 * f for f in fs] for name, fs in speed.items()}
    band = fast_band(data, probes)
    if (band is None or band["ours"] != [110.0] * 3 or band["peer"] != [130.0] * 6
            or len(band["bare"]) != 8):
        sys.exit(f"FAIL: fast_band gave {band}")
    for xs, ys, rho in (([1, 2, 3, 4], [10, 20, 30, 40], 1.0), ([1, 2, 3, 4], [4, 3, 2, 1], -1.0),
                        ([1, 2, 2, 3], [1, 2, 2, 3], 1.0)):
        if abs(rank_correlation(xs, ys) - rho) > 1e-9:
            sys.exit(f"FAIL: rank_correlation({xs}, {ys}) = {rank_correlation(xs, ys)}, not {rho}")


def check_loop_spread(source, python, out):
    run([sys.executable, f"{source}/bench/torch_loop_spread.py", out, "2", "1"],
        {"PYTHON": python, "SPREAD_DEVICE": "cpu"}, "torch_loop_spread.py")
    with open(f"{out}/torch_loop_spread.json") as f:
        records = json.load(f)
    if len(records) != 2 or any(len(r["reps"]) != 1 for r in records):
        sys.exit(f"FAIL: torch_loop_spread.py kept {records}")
    for r in records:
        rep = r["reps"][0]
        # The threads' schedstat is read just outside the timed loop, so the
        # main thread's figure can pass the wall time a little; a unit slip
        # (ns or s for ms) would miss by 1000x.
        if (not 0 < rep["main_on_ms"] <= rep["wall_ms"] * 1.25 or rep["us"] <= 0
                or rep["steal_ms"] < 0):
            sys.exit(f"FAIL: torch_loop_spread.py repetition {rep}")


def check_pool(source, out):
    os.makedirs(out)

    def saved(name, rows):
        path = f"{out}/torch_ops_overhead-{name}.json"
        with open(path, "w") as f:
            json.dump({"rounds": 3, "device": "cuda", "results": {
                "elapsed_ms": rows, "command_wall_s": {r: [1.0] * len(v) for r, v in rows.items()}}}, f)
        return path

    first = saved("small_ops-a", {"bare": [100, 102], "strata (ops)": [150, 151],
                                  "torch.profiler": [160, 170], "nsys autograd-nvtx": [180, 181]})
    # A call cut short: its last round has no torch.profiler run, so it goes.
    second = saved("small_ops-b", {"bare": [200, 201, 202], "strata (ops)": [240, 239, 238],
                                   "torch.profiler": [260, 258]})
    stdout = run([sys.executable, f"{source}/bench/torch_ops_overhead.py", "--pool", first, second],
                 {}, "torch_ops_overhead.py --pool")
    # strata - bare per round: 50, 49, 40, 38 -> median 44.5; torch.profiler: 60, 68, 60, 57 -> 60.
    if ("4 interleaved rounds" not in stdout or "strata (ops) 44.500 ms <= torch.profiler 60.000 ms"
            not in stdout or "nsys" in stdout):
        sys.exit(f"FAIL: --pool printed\n{stdout}")
    train = saved("train-c", {"bare": [1], "strata (ops)": [2], "torch.profiler": [3]})
    proc = subprocess.run([sys.executable, f"{source}/bench/torch_ops_overhead.py", "--pool", first,
                           train], capture_output=True, text=True, timeout=60)
    if proc.returncode == 0 or "2 workloads" not in proc.stderr:
        sys.exit(f"FAIL: --pool of two workloads gave exit {proc.returncode}: {proc.stderr[-400:]}")


def check_callback_cost(source, build, python, out):
    os.makedirs(out)
    script = f"{source}/bench/torch_callback_cost.py"
    short = ["--rounds", "2", "--ops", "200", "--warmup", "20", "--device", "cpu"]
    runs = {
        "plain": ([python, script, "--lib", f"{build}/lib/libstrata_torch.so", "--only",
                   "bare;strata;torch.profiler(CPU)"], ["bare", "strata", "torch.profiler(CPU)"]),
        "strata": ([f"{build}/bin/strata", "trace", "--stats", "false", "--force", "-o",
                    f"{out}/trace.sqlite", "--", python, script, "--under-strata"],
                   ["strata records off", "strata CUDA layer only", "strata ops, unlinked",
                    "strata ops, as set up"]),
    }
    for name, (argv, mechanisms) in runs.items():
        run(argv + short + ["--json", f"{out}/{name}.json"], {}, f"torch_callback_cost.py ({name})")
        with open(f"{out}/{name}.json") as f:
            figures = json.load(f)["ns_per_op"]
        expected = {f"cpu {m}" for m in mechanisms}
        if set(figures) != expected or any(len(v) != 2 or min(v) <= 0 for v in figures.values()):
            sys.exit(f"FAIL: torch_callback_cost.py ({name}) kept {figures}, not 2 rounds of {expected}")
    proc = subprocess.run([python, script, "--lib", f"{build}/lib/libstrata_torch.so", "--only",
                           "bare;strata (typo)"] + short, capture_output=True, text=True, timeout=120)
    if proc.returncode == 0 or "strata (typo)" not in proc.stderr:
        sys.exit(f"FAIL: --only with an unknown mechanism gave exit {proc.returncode}: {proc.stderr[-400:]}")


def main(source, build):
    check_interval(source)
    with tempfile.TemporaryDirectory() as out:
        check_pool(source, f"{out}/pool")
    python = torch_python()
    if python is None:
        print("SKIP: no python3 here imports torch")
        return SKIP
    with tempfile.TemporaryDirectory() as out:
        check_ops_overhead(source, build, python, f"{out}/ops")
        check_train_probe(source, build, python, f"{out}/train")
        check_unknown_row(source, build, python, f"{out}/unknown")
        check_loop_spread(source, python, f"{out}/spread")
        check_callback_cost(source, build, python, f"{out}/callback")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
