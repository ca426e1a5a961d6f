"""strata's PyTorch op table against torch.profiler's on the same programs, on the
GPU machine (issue 18, "same answer as torch.profiler"). Each program runs twice,
unmodified: under `strata trace` (op_sum as JSON) and under torch.profiler with
CPU+CUDA activities (bench/torch_profile_run.py: key_averages() as JSON). Two
runs, because both tools subscribe to CUPTI and only one can per process.

Checks:
  matmul  examples/torch_matmul.py slow mode: the tutorial's rows — aten::mm, its
          gemm kernel, the slow_loop_sync_iteration scope, cudaDeviceSynchronize —
          with the same call counts as torch.profiler.
  train   examples/torch_train.py (forward, backward, SGD step): every op row
          (aten ops, autograd nodes, user scopes, optimizer steps) with the same
          call count; Self CUDA within 5 % of torch.profiler's on every op above
          1 % of the CUDA time.
Rows torch.profiler has that are not ops are left out of the op check and listed:
Kineto's own markers ("Activity Buffer Request", "Lazy Function Loading", ...) and
CUDA runtime calls (strata leaves out a few high-rate queries; see docs/torch-ops.md).

usage: torch_ops_vs_profiler.py BUILD_DIR OUTDIR
Prints a table per program last; exit status 1 when a check fails.
"""
import json
import os
import subprocess
import sys

build, outdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
os.makedirs(outdir, exist_ok=True)
here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(here)
strata = f"{build}/bin/strata"
python = os.environ.get("PYTHON", "/opt/torch/.venv/bin/python3")
env = {**os.environ, "LD_LIBRARY_PATH": f"{build}/runtime-libs"}

# Kineto's own activity (CUPTI overhead and lazy-loading markers): not ops.
KINETO_MARKERS = {"Activity Buffer Request", "Instrumentation", "Resource", "INVALID",
                  "Lazy Function Loading", "Runtime Triggered Module Loading",
                  "Context Sync", "Overhead"}

programs = {
    "matmul": [f"{repo}/examples/torch_matmul.py", "--mode", "slow_loop_sync", "--device", "cuda",
               "--repeats", "128", "--tile-size", "128"],
    "train": [f"{repo}/examples/torch_train.py", "--device", "cuda", "--steps", "20"],
}


def run(argv, out_path=None):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                       timeout=300)
    with open(f"{outdir}/log.txt", "a") as log:
        log.write(f"$ {' '.join(argv)}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}\n")
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(argv)}\n{p.stderr[-1500:]}")
    if out_path:
        with open(out_path, "w") as f:
            f.write(p.stdout)
    return p.stdout


def is_runtime_api(name):
    return name.startswith("cuda") or name.startswith("cu") and name[2:3].isupper()


def strata_rows(path):
    """`strata report --format json` (one object keyed by report name) -> op_sum's rows as
    {(name, side): row}; side 'cpu' for ops and calls, 'cuda' for device rows."""
    out = {}
    for r in json.load(open(path))["op_sum"]:
        # torch's columns have no device: a row without CPU time but with
        # CUDA time is a device row (kernel, copy) or a GPU user annotation.
        side = "cuda" if float(r["CPU total"]) == 0 and float(r["Self CUDA"]) > 0 else "cpu"
        out[(r["Name"], side)] = {
            "count": int(r["# of Calls"]), "self_cuda_us": float(r["Self CUDA"]),
            "self_cpu_us": float(r["Self CPU"])}
    return out


def torch_rows(path):
    out = {}
    for r in json.load(open(path))["rows"]:
        side = "cuda" if "CUDA" in r["device_type"] else "cpu"
        out[(r["name"], side)] = {"count": r["count"], "self_cuda_us": r["self_cuda_us"],
                                  "self_cpu_us": r["self_cpu_us"]}
    return out


failures = []
for name, prog in programs.items():
    trace = f"{outdir}/{name}.sqlite"
    run([strata, "trace", "--stats", "false", "--force", "-o", trace, "--", python] + prog)
    # --limit 0: every row (the table keeps 100 by default, as torch's does).
    run([strata, "report", trace, "--report", "op_sum", "--format", "json", "--limit", "0"],
        f"{outdir}/{name}.strata.json")
    run([python, f"{here}/torch_profile_run.py", "--cuda", "--json", f"{outdir}/{name}.torch.json",
         "--"] + prog)
    ours, theirs = strata_rows(f"{outdir}/{name}.strata.json"), torch_rows(f"{outdir}/{name}.torch.json")
    cuda_total = sum(r["self_cuda_us"] for (n, side), r in theirs.items() if side == "cuda"
                     and (n, "cpu") not in theirs)  # device rows that are not user annotations
    print(f"\n{name}: torch.profiler {len(theirs)} rows, strata {len(ours)} rows; "
          f"torch's CUDA total {cuda_total:.1f} us")
    print(f"{'row':58s} {'side':4s} {'calls t/s':>11s} {'self CUDA us t/s':>21s} {'diff':>7s} ok")
    for key in sorted(set(theirs) | set(ours), key=lambda k: -theirs.get(k, ours.get(k))["self_cuda_us"]):
        n, side = key
        if n in KINETO_MARKERS:
            continue
        t, s = theirs.get(key), ours.get(key)
        op_row = side == "cpu" and not is_runtime_api(n)
        if side == "cuda" and (n, "cpu") not in theirs and (n, "cpu") not in ours:
            kind = "device"
        else:
            kind = "op" if op_row else ("api" if side == "cpu" else "annotation")
        ok = True
        why = ""
        if t is None or s is None:
            ok = kind == "api"  # runtime calls strata does not record: listed, not failed
            why = "only torch" if s is None else "only strata"
        else:
            if kind in ("op", "annotation") and t["count"] != s["count"]:
                ok, why = False, "calls"
            big = t["self_cuda_us"] > 0.01 * cuda_total
            if kind == "op" and big:
                diff = abs(s["self_cuda_us"] - t["self_cuda_us"]) / t["self_cuda_us"]
                if diff > 0.05:
                    ok, why = False, f"self CUDA {diff:.1%}"
        tc = t["count"] if t else "-"
        sc = s["count"] if s else "-"
        tcu = f"{t['self_cuda_us']:.1f}" if t else "-"
        scu = f"{s['self_cuda_us']:.1f}" if s else "-"
        d = (f"{(s['self_cuda_us'] - t['self_cuda_us']) / t['self_cuda_us']:+.1%}"
             if t and s and t["self_cuda_us"] > 0 else "")
        print(f"{n[:58]:58s} {side:4s} {str(tc) + '/' + str(sc):>11s} {tcu + '/' + scu:>21s} {d:>7s} "
              f"{'ok' if ok else 'NO'} {why}")
        if not ok:
            failures.append(f"{name}: {n} ({side}): {why}")
    if name == "matmul":
        for must in [("aten::mm", "cpu"), ("slow_loop_sync_iteration", "cpu"),
                     ("cudaDeviceSynchronize", "cpu")]:
            if must not in ours:
                failures.append(f"matmul: strata lacks the tutorial's row {must[0]}")
        gemm = [k for k in ours if k[1] == "cuda" and "gemm" in k[0]]
        if not gemm:
            failures.append("matmul: strata lacks the gemm kernel's row")

print("\n" + ("all checks passed" if not failures else "FAILED:\n  " + "\n  ".join(failures)))
sys.exit(1 if failures else 0)
