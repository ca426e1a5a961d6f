#!/usr/bin/env python3
"""A stand-in for `strata diagnose --format json -o F -- CMD`, to test
bench/diagnose_planted.py's scoring without strata's diagnosis: it runs CMD and
prints a findings document as diagnose does, after the program's own output.

The finding names the rule that examples/planted/manifest.json expects for the
workload CMD runs (found by the script or program name), with gain_ns = what the
fix saved (CMD's elapsed_ms minus that of one run of CMD --fixed) x
FAKE_GAIN_FACTOR (default 1). FAKE_WRONG=1 names another
rule instead. A start-up finding with a huge gain comes first, as the scorer must
leave it out.
"""
import json
import os
import re
import subprocess
import sys

args = sys.argv[1:]
if args[:1] != ["diagnose"] or "--" not in args:
    sys.exit("fake strata: only 'diagnose ... -- CMD'")
cmd = args[args.index("--") + 1:]
proc = subprocess.run(cmd, capture_output=True, text=True)
sys.stdout.write(proc.stdout)
elapsed = re.search(r"elapsed_ms=(\d+\.\d+)", proc.stdout)
planted = os.environ["FAKE_PLANTED_DIR"]
with open(os.path.join(planted, "manifest.json")) as f:
    workloads = json.load(f)["workloads"]
program = " ".join(os.path.basename(a) for a in cmd)
rule = next(w["expected_first_rule"] for w in workloads
            if os.path.basename(w["command"][-1]).replace("{bin}/", "") in program)
if os.environ.get("FAKE_WRONG") == "1":
    rule = "kernel.occupancy"
# A perfect diagnosis: what the fix saves in this run, from one run of the fixed twin
# (the same command with --fixed), so that a loaded machine moves both sides alike.
fixed = subprocess.run(cmd + ["--fixed"], capture_output=True, text=True)
fixed_elapsed = re.search(r"elapsed_ms=(\d+\.\d+)", fixed.stdout)
saving_ms = float(elapsed.group(1)) - float(fixed_elapsed.group(1))
gain = max(saving_ms, 0.001) * 1e6 * float(os.environ.get("FAKE_GAIN_FACTOR", "1"))
findings = [{"rule": "startup", "gain_ns": 10 ** 12}]
if rule is not None:
    findings.append({"rule": rule, "gain_ns": int(gain)})
print(json.dumps({"verdict": "fake", "findings": findings}, indent=1))
sys.exit(proc.returncode)
