"""1M kernel launches: the time from the end of the target's main() to printed stats,
strata against Nsight Systems, in one run on the GPU machine; strata's peak memory
and dropped records.

  strata  `strata trace -- launch_bench N` (its default stats: nvtx_sum, cuda_api_sum,
          cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum)
  nsys    `nsys profile --trace=cuda`, then QdstrmImporter (its .qdstrm to .nsys-rep step,
          which needs Debian's libdw there: shared/reference/gpu-machine.md), then
          `nsys stats` with the same five reports (it exports SQLite first)

The target prints CLOCK_MONOTONIC at the end of main (tests/gpu/launch_bench.cu); the
tool's flush at exit, teardown and post-processing all count. strata's peak memory is
the VmHWM of the strata process itself (not the target), read from /proc while it runs.

Goals (the GPU timeline issue): strata <= 1/8 of nsys, peak <= 300 MB, no dropped records.
usage: gpu_trace_scale.py BUILD_DIR OUTDIR DWLIBS_DIR [LAUNCHES] [ROUNDS]
"""
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import time

build, outdir, dwlibs = (os.path.abspath(a) for a in sys.argv[1:4])
launches = int(sys.argv[4]) if len(sys.argv) > 4 else 1_000_000
rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 2
os.makedirs(outdir, exist_ok=True)
strata = f"{build}/bin/strata"
nsys_dir = "/opt/nvidia/nsight-compute/2025.3.1/host"
nsys = f"{nsys_dir}/target-linux-x64/nsys"
importer = f"{nsys_dir}/linux-desktop-glibc_2_11_3-x64/QdstrmImporter"
reports = "nvtx_sum,cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum"
target = [f"{build}/bin/gpu_launch_bench", str(launches)]


def main_end(stdout):
    return int(re.findall(r"^main_end_monotonic_ns (\d+)", stdout, re.M)[-1])


def vm_hwm_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            m = re.search(r"^VmHWM:\s+(\d+) kB", f.read(), re.M)
            return int(m.group(1)) if m else 0
    except OSError:
        return 0


def run_strata(i):
    out = f"{outdir}/scale-{i}.sqlite"
    log = open(f"{outdir}/strata-scale-{i}.log", "w")
    p = subprocess.Popen([strata, "trace", "--force", "-o", out, "--"] + target,
                         stdout=subprocess.PIPE, stderr=log, text=True,
                         env={**os.environ, "LD_LIBRARY_PATH": f"{build}/runtime-libs"})
    peak = 0
    while p.poll() is None:
        peak = max(peak, vm_hwm_kb(p.pid))
        time.sleep(0.02)
    done = time.monotonic_ns()
    stdout = p.stdout.read()
    log.write(stdout)
    log.close()
    db = sqlite3.connect(out)
    kernels = db.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    dropped = db.execute("SELECT COALESCE(SUM(value), 0) FROM strata_counters "
                         "WHERE name LIKE 'agent.dropped.%'").fetchone()[0]
    db.close()
    size = os.path.getsize(out)
    os.remove(out)
    return {"exit_to_stats_s": (done - main_end(stdout)) / 1e9, "peak_mb": peak / 1024,
            "kernels": kernels, "dropped": dropped, "trace_mb": size / 1e6, "rc": p.returncode}


def run_nsys(i):
    base = f"{outdir}/nsys-scale-{i}"
    p = subprocess.run([nsys, "profile", "--trace=cuda", "--sample=none", "--cpuctxsw=none",
                        "--force-overwrite=true", "-o", base] + target,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = main_end(p.stdout)
    if not os.path.exists(base + ".nsys-rep"):
        subprocess.run([importer, "-i", base + ".qdstrm"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env={**os.environ, "LD_LIBRARY_PATH": dwlibs})
    s = subprocess.run([nsys, "stats", "--report", reports, "--force-export=true",
                        base + ".nsys-rep"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    done = time.monotonic_ns()
    ok = s.returncode == 0 and "cuda_gpu_kern_sum" in s.stdout + s.stderr
    for ext in (".qdstrm", ".nsys-rep", ".sqlite"):
        if os.path.exists(base + ext):
            os.remove(base + ext)
    return {"exit_to_stats_s": (done - end) / 1e9, "ok": ok, "rc": s.returncode}


rows = []
for i in range(rounds):
    # Alternate which tool goes first so neither always meets a warm page cache.
    pair = [("strata", run_strata), ("nsys", run_nsys)]
    if i % 2:
        pair.reverse()
    row = {name: fn(i) for name, fn in pair}
    rows.append(row)
    print(f"round {i}: strata {row['strata']}  nsys {row['nsys']}", flush=True)

s = statistics.median(r["strata"]["exit_to_stats_s"] for r in rows)
n = statistics.median(r["nsys"]["exit_to_stats_s"] for r in rows)
peak = max(r["strata"]["peak_mb"] for r in rows)
dropped = max(r["strata"]["dropped"] for r in rows)
kernels = [r["strata"]["kernels"] for r in rows]
print(f"\n{launches} launches, {rounds} rounds: end of main to printed stats")
print(f"strata {s:.2f} s, nsys {n:.2f} s: ratio {s / n:.3f} (goal <= 0.125:"
      f" {'met' if s <= n / 8 else 'NOT met'})")
print(f"strata peak memory {peak:.0f} MB (goal <= 300: {'met' if peak <= 300 else 'NOT met'});"
      f" dropped records {dropped}; kernels in trace {kernels} (launched {launches + 1000})")
