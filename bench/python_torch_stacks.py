#!/usr/bin/env python3
"""Issue 20, item 7: how a PyTorch program's CPU profile reads, and what deep
stacks cost.

Runs examples/torch_matmul.py (the tutorial's Case 2) bare and under
`strata cpu --stack-size S` for each S, interleaved, ROUNDS times, and prints
per stack size: the median wall-time ratio to bare (the whole process, start-up
included, since that is what the user waits for), the share of samples whose
native stack was cut at the copy (strata says how many on stderr), the share
whose Python stack is cut too (not read whole from the interpreter's memory),
and the samples.
The last round's reports (the Python view by tottime and by cumtime, and the
--native view) are kept under OUT for reading.

usage: python_torch_stacks.py STRATA PYTHON OUT [ROUNDS] [DEVICE]
"""
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "..", "examples", "torch_matmul.py")
SIZES = [16384, 32768, 65528]  # 65528: the most perf_event_open copies


def timed(cmd, **kw):
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return time.perf_counter() - start, proc


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    strata, python, out = sys.argv[1], sys.argv[2], sys.argv[3]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    device = sys.argv[5] if len(sys.argv) > 5 else "cuda"
    os.makedirs(out, exist_ok=True)
    target = [python, PROGRAM, "--mode", "slow_loop_sync", "--device", device, "--repeats", "128"]
    bare, walls = [], {s: [] for s in SIZES}
    cut, samples = {s: [] for s in SIZES}, {s: [] for s in SIZES}
    whole = {s: [] for s in SIZES}  # cut stacks whose Python frames, read from memory, are whole
    for r in range(rounds):
        wall, proc = timed(target)
        if proc.returncode != 0:
            sys.exit(f"bare run failed: {proc.stderr.strip()[-400:]}")
        bare.append(wall)
        for size in SIZES:
            trace = os.path.join(out, f"t-{size}.sqlite")
            wall, proc = timed([strata, "cpu", "--stack-size", str(size), "-o", trace, "--force",
                                "--limit", "0", "--"] + target)
            if proc.returncode != 0:
                sys.exit(f"strata run failed: {proc.stderr.strip()[-400:]}")
            walls[size].append(wall)
            m = re.search(r"(\d+) stacks were deeper", proc.stderr)
            cut[size].append(int(m.group(1)) if m else 0)
            m = re.search(r"the Python frames of (\d+) of them", proc.stderr)
            whole[size].append(int(m.group(1)) if m else 0)
            m = re.search(r"(\d+) samples in", proc.stdout)
            samples[size].append(int(m.group(1)) if m else 0)
    reports = {"python-tottime.txt": ["--sort", "tottime"], "python-cumtime.txt": ["--sort", "cumtime"],
               "native-tottime.txt": ["--native", "--sort", "tottime"]}
    for name, flags in reports.items():
        with open(os.path.join(out, name), "w") as f:
            subprocess.run([strata, "report", os.path.join(out, "t-16384.sqlite"), "--wide",
                            "--limit", "40"] + flags, stdout=f, stderr=subprocess.STDOUT)
    shown = [os.path.relpath(PROGRAM, os.path.join(HERE, ".."))] + target[2:]  # no checkout path
    print(f"{' '.join(shown)}, {rounds} rounds; bare wall median "
          f"{statistics.median(bare):.3f} s")
    print(f"{'stack size':>10} {'wall/bare':>9} {'cut stacks':>10} {'Python cut':>10} "
          f"{'samples':>8}")
    for size in SIZES:
        share = 100 * sum(cut[size]) / max(1, sum(samples[size]))
        python_cut = 100 * (sum(cut[size]) - sum(whole[size])) / max(1, sum(samples[size]))
        ratios = [w / b for w, b in zip(walls[size], bare)]
        print(f"{size:>10} {statistics.median(ratios):9.3f} {share:9.2f}% {python_cut:9.2f}% "
              f"{int(statistics.median(samples[size])):>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
