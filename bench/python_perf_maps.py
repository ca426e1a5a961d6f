#!/usr/bin/env python3
"""Issue 20, items 3 and 7: a CPython 3.12+ program profiled from its memory
(strata's default where it can read the interpreter) against the same with
perf maps turned on (PYTHONPERFSUPPORT=1, strata's default before; still what
the in-process sampler uses).

The program is pure Python whose stacks are DEPTH calls deep (a recursion
with a hot loop at the bottom), run bare and under `strata cpu` in both
modes, interleaved, ROUNDS times. Per mode, medians over the rounds of:
  wall      the whole process's wall time over the bare run's (start-up included)
  cut       share of samples whose native stack outgrew the 16 KiB copy
  lost      share of the cpu-clock periods whose sample the ring had no room for
  read      strata's time reading one sample's Python stack (cpu.python_read_ns)
  changed   share of the stacks read that changed before strata read them
  lines     whether the hot line (the loop's body) is a --lines row

usage: python_perf_maps.py STRATA PYTHON OUT [ROUNDS] [DEPTH]
"""
import os
import sqlite3
import statistics
import subprocess
import sys
import time

PROGRAM = """import sys
sys.setrecursionlimit(10000)
def rec(d):
    if d == 0:
        s = 0
        for i in range(20000):
            s += i * i % 7
        return s
    return rec(d - 1) + 1
t = 0
for _ in range({rounds}):
    t += rec({depth})
"""
HOT_LINE = 7  # `s += i * i % 7`


def counters(trace):
    db = sqlite3.connect(trace)
    out = dict(db.execute("SELECT name, value FROM strata_counters"))
    db.close()
    return out


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    strata, python, out = sys.argv[1], sys.argv[2], sys.argv[3]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    depth = int(sys.argv[5]) if len(sys.argv) > 5 else 150
    os.makedirs(out, exist_ok=True)
    program = os.path.join(out, "deep.py")
    with open(program, "w") as f:
        f.write(PROGRAM.format(rounds=300, depth=depth))
    modes = {"memory": None, "perf-maps": "1"}
    results = {m: {"wall": [], "cut": [], "lost": [], "read": [], "changed": [], "lines": []}
               for m in modes}
    for _ in range(rounds):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPERFSUPPORT"}
        start = time.perf_counter()
        subprocess.run([python, program], check=True, env=env)
        bare = time.perf_counter() - start
        for mode, value in modes.items():
            run_env = dict(env)
            if value is not None:
                run_env["PYTHONPERFSUPPORT"] = value
            trace = os.path.join(out, mode + ".sqlite")
            start = time.perf_counter()
            p = subprocess.run([strata, "cpu", "-o", trace, "--force", "--limit", "0", "--",
                                python, program], capture_output=True, text=True, env=run_env)
            wall = time.perf_counter() - start
            if p.returncode != 0:
                sys.exit(f"strata cpu failed ({mode}): {p.stderr.strip()[-400:]}")
            c = counters(trace)
            recorded = c["cpu.periods_asked"] - c["cpu.periods_skipped"] - c["cpu.periods_throttled"]
            samples = max(1, recorded - c["cpu.lost_samples"])
            read = c.get("cpu.python_stacks_merged", 0) + c.get("cpu.python_stacks_mismatched", 0)
            r = results[mode]
            r["wall"].append(wall / bare)
            r["cut"].append(100.0 * c["cpu.unwind_truncated"] / samples)
            r["lost"].append(100.0 * c["cpu.lost_samples"] / max(1, recorded))
            r["read"].append(c.get("cpu.python_read_ns", 0) / 1e3 / max(1, read))
            r["changed"].append(100.0 * c.get("cpu.python_stacks_mismatched", 0) / max(1, read))
            lines = subprocess.run([strata, "report", trace, "--lines", "--filter", "rec",
                                    "--format", "csv", "--limit", "0"],
                                   capture_output=True, text=True)
            r["lines"].append(f"deep.py:{HOT_LINE}(rec)" in lines.stdout)
    version = subprocess.run([python, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{version}, stacks {depth} Python calls deep, {rounds} interleaved rounds (medians)")
    print(f"{'mode':<10} {'wall/bare':>9} {'cut %':>6} {'lost %':>7} {'read µs':>8} "
          f"{'changed %':>9}  hot line")
    for mode, r in results.items():
        print(f"{mode:<10} {statistics.median(r['wall']):>9.2f} {statistics.median(r['cut']):>6.1f} "
              f"{statistics.median(r['lost']):>7.1f} {statistics.median(r['read']):>8.0f} "
              f"{statistics.median(r['changed']):>9.1f}  "
              f"{'yes' if all(r['lines']) else 'no'}")


if __name__ == "__main__":
    main()
