#!/usr/bin/env python3
"""examples/cpu_hotspot.py (the tutorial's Case 1 in Python): both modes count
the same words for the same --lines and --seed, the seed changes the text, and
a bad flag is an error (exit 2), not a run.

usage: cpu_hotspot_py_check.py EXAMPLE_PY
"""
import re
import subprocess
import sys

example = sys.argv[1]


def top10(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        sys.exit(f"{argv} exited {p.returncode}: {p.stderr[-400:]}")
    m = re.search(r"top10=(\[.*\])", p.stdout)
    if not m:
        sys.exit(f"{argv} printed no top10: {p.stdout[-400:]}")
    return m.group(1)


failures = []
tops = {}
for seed in ("20260404", "7"):
    slow, fast = (top10([sys.executable, example, "--mode", mode, "--lines", "300", "--seed", seed])
                  for mode in ("slow", "fast"))
    if slow != fast:
        failures.append(f"seed {seed}: slow counted {slow}\n  fast counted {fast}")
    if slow.count("(") != 10:
        failures.append(f"seed {seed}: top10 has not 10 entries: {slow}")
    tops[seed] = slow
if tops["20260404"] == tops["7"]:
    failures.append(f"two seeds gave the same counts: {tops['7']}")
bad = subprocess.run([sys.executable, example, "--mode", "medium"], capture_output=True, text=True)
if bad.returncode != 2 or "medium" not in bad.stderr:
    failures.append(f"--mode medium: exit {bad.returncode}, stderr {bad.stderr!r}")
if failures:
    sys.exit("\n".join(failures))
print("cpu_hotspot.py: slow and fast count the same words on both seeds")
