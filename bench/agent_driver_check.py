#!/usr/bin/env python3
"""What the agent's DRIVER records cost and give on a PyTorch program (H200).

1. The driver and runtime calls per op of a 20k-op loop, every getter included
   (STRATA_AGENT_ALL_APIS=1): which calls the DRIVER kind has to intercept.
2. A torch.compile'd function (Triton launches its kernels with cuLaunchKernel,
   a driver call): for each record-group setting, how many kernels the trace
   has and how many of them are linked to a PyTorch op through CUPTI's external
   correlation (strata_external_correlation), and whether a Triton kernel is.

usage: agent_driver_check.py BUILD_DIR OUTDIR [PYTHON]
"""
import os
import sqlite3
import subprocess
import sys

build, outdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
python = sys.argv[3] if len(sys.argv) > 3 else "/opt/torch/.venv/bin/python3"
here = os.path.dirname(os.path.abspath(__file__))
strata = f"{build}/bin/strata"
os.makedirs(outdir, exist_ok=True)
base_env = {**os.environ, "LD_LIBRARY_PATH": f"{build}/runtime-libs"}


def trace(name, cmd, env):
    out = f"{outdir}/{name}.sqlite"
    p = subprocess.run([strata, "trace", "--stats", "false", "--force", "-o", out, "--"] + cmd,
                       capture_output=True, text=True, env={**base_env, **env}, timeout=600)
    with open(f"{outdir}/{name}.log", "w") as f:
        f.write(p.stdout + p.stderr)
    return out, p


def api_calls(db):
    con = sqlite3.connect(db)
    return con.execute(
        "SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
        "ON s.id = r.nameId GROUP BY 1 ORDER BY 2 DESC LIMIT 12").fetchall()


def kernel_links(db):
    con = sqlite3.connect(db)
    total = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    linked = con.execute(
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE k.correlationId IN "
        "(SELECT correlationId FROM strata_external_correlation)").fetchone()[0]
    triton = con.execute(
        "SELECT count(*), sum(k.correlationId IN (SELECT correlationId FROM "
        "strata_external_correlation)) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
        "ON s.id = k.shortName WHERE s.value LIKE 'triton%'").fetchone()
    return total, linked, triton


loop = [python, f"{here}/torch_workloads/small_ops.py", "--device", "cuda", "--ops", "20000"]
db, p = trace("allapis", loop, {"STRATA_AGENT_ALL_APIS": "1"})
print("1. API calls of 20.2k ops, every getter recorded (name, calls):")
for name, n in api_calls(db):
    print(f"   {n:8d}  {name}")

settings = {
    "default": {},
    "with driver": {"STRATA_AGENT_RECORD": "kernel,runtime,driver,memory,nvtx,meta"},
    "without driver": {"STRATA_AGENT_RECORD": "kernel,runtime,memory,nvtx,meta"},
}
compiled = [python, f"{here}/torch_workloads/compiled_ops.py", "--steps", "50"]
print("\n2. torch.compile'd function, 50 steps: kernels linked to ops")
print(f"   {'setting':16s} {'kernels':>8s} {'linked':>7s} {'triton':>7s} {'triton linked':>14s}")
for name, env in settings.items():
    db, p = trace("compiled-" + name.replace(" ", "_"), compiled, env)
    if p.returncode != 0:
        print(f"   {name:16s} failed (exit {p.returncode}): {p.stderr[-300:]}")
        continue
    total, linked, (tri, tri_linked) = kernel_links(db)
    print(f"   {name:16s} {total:8d} {linked:7d} {tri:7d} {tri_linked or 0:14d}")
