#!/usr/bin/env python3
"""Does glibc's heap put a torch CPU loop in a slow mode, and does steady_heap stop it?

  heap_modes_cpu.py PYTHON ROUNDS [PREFIX...]
      runs the batch making of examples/planted/torch_dataload.py (its CPU half:
      80 batches of torch CPU ops, 3 MiB tensors) ROUNDS times with glibc's default
      malloc thresholds and ROUNDS times with planted_py.steady_heap's, interleaved,
      each in a new process, under PREFIX if given (a strata command ending in --,
      say); prints each run's loop time, minor faults and kernel time, then a table:
      how many runs of each made more than FAULTY_FAULTS faults.

Why (examples/planted/planted_py.py, steady_heap): with the defaults, some processes
of this loop return the heap's top to the kernel on every batch and fault it in
again; which ones depends on the address layout, so it shows as a bimodal loop time
in bare and traced runs alike. PYTHON must have torch (Debian's python3-torch will
do). Exit status: 0, or 2 on a usage error.
"""
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PLANTED = os.path.join(HERE, "..", "examples", "planted")
# Between the two modes measured on the dev machine: 6,000-16,000 faults a run
# against 120,000-155,000 (80 batches of 3 MiB tensors faulted in anew).
FAULTY_FAULTS = 50_000

# The CPU half of torch_dataload.py: its own load_batch, unpinned (no CUDA here).
PROGRAM = r"""
import sys
sys.path.insert(0, sys.argv[1])
from planted_py import Timer, steady_heap
steady_heap()
import torch
from torch_dataload import make_loader
torch.set_num_threads(1)
load_batch = make_loader(torch, pin=False)
load_batch(10 ** 6)
total = 0.0
with Timer() as timer:
    for i in range(80):
        total += float(load_batch(i)[0, 0])
print(f"heap_modes elapsed_ms={timer.elapsed_ms:.3f} checksum={total!r}{timer.extra}")
"""
LINE = re.compile(r"heap_modes elapsed_ms=(\S+) checksum=\S+ loop_minflt=(\d+) "
                  r"loop_sys_ms=(\S+)")


def run(python, prefix, heap):
    env = dict(os.environ, PLANTED_DEFAULT_HEAP="1" if heap == "default" else "0")
    proc = subprocess.run(prefix + [python, "-c", PROGRAM, PLANTED], env=env,
                          capture_output=True, text=True)
    match = LINE.search(proc.stdout)
    if proc.returncode != 0 or not match:
        sys.exit(f"heap_modes_cpu: the run failed (exit {proc.returncode}): "
                 f"{proc.stderr.strip()[-300:]}")
    return float(match.group(1)), int(match.group(2)), float(match.group(3))


def main(argv):
    if len(argv) < 2 or not argv[1].isdigit() or int(argv[1]) < 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    python, rounds, prefix = argv[0], int(argv[1]), argv[2:]
    results = {"default": [], "steady": []}
    for r in range(rounds):
        order = ["default", "steady"] if r % 2 == 0 else ["steady", "default"]
        for heap in order:
            ms, faults, sys_ms = run(python, prefix, heap)
            results[heap].append((ms, faults, sys_ms))
            print(f"round {r + 1} {heap:7} elapsed_ms={ms:.1f} minflt={faults} sys_ms={sys_ms:.1f}",
                  flush=True)
    print(f"\nheap     runs  runs over {FAULTY_FAULTS:,} faults  faults (min-max)  "
          f"loop ms median (min-max)")
    for heap, rows in results.items():
        faulty = sum(1 for _, f, _ in rows if f > FAULTY_FAULTS)
        ms = [m for m, _, _ in rows]
        faults = [f for _, f, _ in rows]
        print(f"{heap:7}  {len(rows):4}  {faulty:25}  {min(faults):,}-{max(faults):,}"
              f"  {statistics.median(ms):.0f} ({min(ms):.0f}-{max(ms):.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
