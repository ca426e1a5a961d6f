#!/usr/bin/env python3
"""Checks the planted-bottleneck suite (examples/planted/, manifest.json).

  planted_check.py manifest PLANTED_DIR BIN_DIR HAVE_CUDA
      the manifest is well-formed (examples/planted/manifest.py), every script it
      names exists, and with HAVE_CUDA=ON every native workload's program was built
      (so every CUDA workload compiled) and rejects a bad flag with exit 2
  planted_check.py rejects PLANTED_DIR
      damaged copies of the manifest are each rejected, naming what is wrong
  planted_check.py run NAME PLANTED_DIR BIN_DIR [SCALE]
      runs the workload and its fixed twin at --scale SCALE (default 0.05): both
      print the suite's line with their own name and variant, exit 0, and print the
      same checksum; a healthy workload (no fixed twin) runs once

Exit status: 0 passed, 1 failed, 2 usage error, 77 skipped (ctest's
SKIP_RETURN_CODE): a GPU workload where no CUDA device is present, or a torch one
where no python3 has torch with CUDA.
"""
import os
import re
import shutil
import subprocess
import sys

SKIP = 77
# Interpreters known to carry torch on the project's machines (as torch_matmul_check.py).
TORCH_PYTHONS = ["/usr/bin/python3", "/opt/torch/.venv/bin/python3"]
# The Python workloads add the loop's page faults and kernel time (planted_py.Timer).
LINE = re.compile(r"workload=(\S+) variant=(planted|fixed) elapsed_ms=\d+\.\d{3} "
                  r"checksum=(\S+)(?: loop_minflt=\d+ loop_sys_ms=\d+\.\d)?\n")


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def load_manifest(planted_dir):
    sys.path.insert(0, planted_dir)
    import manifest  # examples/planted/manifest.py
    try:
        return manifest, manifest.load(planted_dir)
    except manifest.ManifestError as error:
        fail(str(error))


def torch_python(needs_cuda):
    """The first python3 with torch (and, if asked, a CUDA device for it), or None."""
    probe = "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)"
    for python in [sys.executable] + TORCH_PYTHONS:
        if not os.access(python, os.X_OK):
            continue
        code = subprocess.run([python, "-c", probe], capture_output=True).returncode
        if code == 0 or (code == 3 and not needs_cuda):
            return python
    return None


def check_manifest(planted_dir, bin_dir, have_cuda):
    manifest, workloads = load_manifest(planted_dir)
    natives = 0
    for w in workloads:
        argv = manifest.command(w, "command", bin_dir, planted_dir, sys.executable)
        program = argv[0] if w["kind"] == "native" else argv[1]
        if w["kind"] != "native" and not os.path.isfile(program):
            fail(f"{w['name']}: {program} does not exist")
        if w["kind"] == "native" and have_cuda:
            natives += 1
            if not os.access(program, os.X_OK):
                fail(f"{w['name']}: {program} was not built")
            proc = subprocess.run([program, "--scale", "0"], capture_output=True, text=True)
            if proc.returncode != 2 or "--scale" not in proc.stderr:
                fail(f"{w['name']}: --scale 0 exited {proc.returncode}, stderr {proc.stderr!r}")
    expected = {w["expected_first_rule"] for w in workloads}
    if None not in expected or len(workloads) < 10:
        fail("the suite needs at least 10 workloads and a healthy one")
    print(f"PASS: {len(workloads)} workloads, {natives} native programs built and checked")
    return 0


def check_rejects(planted_dir):
    """The manifest reader names what is wrong in damaged copies of the manifest."""
    import copy
    import json
    import tempfile
    manifest, _ = load_manifest(planted_dir)
    with open(os.path.join(planted_dir, "manifest.json")) as f:
        good = json.load(f)
    first = good["workloads"][0]
    damages = {
        "no 'command'": lambda d: d["workloads"][0].pop("command"),
        "unknown rule": lambda d: d["workloads"][0].update(expected_first_rule="gpu.nonsense"),
        "used twice": lambda d: d["workloads"].append(copy.deepcopy(first)),
        "exactly when": lambda d: d["workloads"][0].update(fixed_command=None),
        "wrong type": lambda d: d["workloads"][0].update(needs_gpu="yes"),
        "must start with": lambda d: d["workloads"][0].update(command=["/bin/true"],
                                                                fixed_command=["/bin/true"]),
        "command plus flags": lambda d: d["workloads"][0].update(
            fixed_command=["{python}", "{planted}/offcpu_sleep.py", "--fixed"]),
        "version 1": lambda d: d.update(version=2),
        "unknown field": lambda d: d["workloads"][0].update(extra=1),
    }
    with tempfile.TemporaryDirectory() as tmp:
        for words, damage in damages.items():
            document = copy.deepcopy(good)
            damage(document)
            with open(os.path.join(tmp, "manifest.json"), "w") as f:
                json.dump(document, f)
            try:
                manifest.load(tmp)
            except manifest.ManifestError as error:
                if words not in str(error):
                    fail(f"damage '{words}': the error says {error}")
                continue
            fail(f"damage '{words}' was accepted")
        with open(os.path.join(tmp, "manifest.json"), "w") as f:
            f.write('{"version": 1, "workloads": [')
        try:
            manifest.load(tmp)
            fail("a truncated manifest was accepted")
        except manifest.ManifestError:
            pass
    print(f"PASS: {len(damages) + 1} damaged manifests rejected with the reason")
    return 0


def run_variant(argv, name, variant):
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        fail(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()}")
    match = LINE.fullmatch(proc.stdout)
    if not match:
        fail(f"{' '.join(argv)} printed {proc.stdout!r}")
    if match.group(1) not in (name, f"planted_{name}") or match.group(2) != variant:
        fail(f"{' '.join(argv)} says workload={match.group(1)} variant={match.group(2)}")
    return match.group(3)


def check_run(name, planted_dir, bin_dir, scale):
    manifest, workloads = load_manifest(planted_dir)
    found = [w for w in workloads if w["name"] == name]
    if not found:
        fail(f"no workload '{name}' in the manifest")
    w = found[0]
    python = sys.executable
    if w["needs_gpu"] and not (shutil.which("nvidia-smi") or os.path.exists("/dev/nvidia0")):
        print("SKIP: no NVIDIA device here (no nvidia-smi, no /dev/nvidia0)")
        return SKIP
    if w["needs_torch"]:
        python = torch_python(w["needs_gpu"])
        if python is None:
            print("SKIP: no python3 here has torch" + (" with CUDA" if w["needs_gpu"] else ""))
            return SKIP
    planted = manifest.command(w, "command", bin_dir, planted_dir, python)
    if w["kind"] == "native" and w["needs_gpu"]:
        proc = subprocess.run(planted + ["--scale", "0.001"], capture_output=True, text=True)
        if proc.returncode == 1 and "cudaGetDeviceCount" in proc.stderr:
            print(f"SKIP: no CUDA device: {proc.stderr.strip()}")
            return SKIP
    scale_args = ["--scale", scale]
    first = run_variant(planted + scale_args, name, "planted")
    fixed = manifest.command(w, "fixed_command", bin_dir, planted_dir, python)
    if fixed is None:
        print(f"PASS: {name} (healthy) checksum {first}")
        return 0
    second = run_variant(fixed + scale_args, name, "fixed")
    if first != second:
        fail(f"{name}: planted checksum {first}, fixed {second}: not the same work")
    print(f"PASS: {name}: planted and fixed both give checksum {first}")
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] == "manifest":
        return check_manifest(argv[2], argv[3], argv[4].upper() in ("ON", "1", "TRUE", "YES"))
    if len(argv) == 3 and argv[1] == "rejects":
        return check_rejects(argv[2])
    if len(argv) in (5, 6) and argv[1] == "run":
        return check_run(argv[2], argv[3], argv[4], argv[5] if len(argv) == 6 else "0.05")
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
