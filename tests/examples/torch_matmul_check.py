#!/usr/bin/env python3
"""Checks examples/torch_matmul.py: both modes print the seed's line and agree on
the checksum (1e-4 relative); on CUDA they also agree with the CPU result.

  torch_matmul_check.py PATH/torch_matmul.py cpu|cuda

Exits 77 (ctest SKIP_RETURN_CODE) where torch is missing, or for cuda where torch
sees no CUDA device; 1 on a failed check.

The python3 that runs this check may lack torch where another has it (a pyenv
python3 first on PATH, Debian's python3-torch in /usr/bin/python3): the check
then runs itself again with the first of those interpreters that imports torch.
"""

import os
import re
import subprocess
import sys

# Interpreters known to carry torch on the project's machines: Debian's
# (scripts/install-deps installs python3-torch) and the GPU machine's venv.
TORCH_PYTHONS = ["/usr/bin/python3", "/opt/torch/.venv/bin/python3"]

SKIP = 77
LINE = re.compile(
    r"mode=(\S+) device=(\S+) repeats=(\d+) tile_size=(\d+) "
    r"elapsed_ms=\d+\.\d{3} checksum=(-?\d+\.\d{6})\n"
)


def run(script, *args):
    proc = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def checksum(script, mode, device, repeats, tile):
    code, out, err = run(script, "--mode", mode, "--device", device,
                         "--repeats", str(repeats), "--tile-size", str(tile))
    if code != 0:
        sys.exit(f"FAIL: {mode} on {device} exited {code}: {err}")
    match = LINE.fullmatch(out)
    if not match:
        sys.exit(f"FAIL: {mode} on {device} printed {out!r}")
    if match.group(1, 2, 3, 4) != (mode, device, str(repeats), str(tile)):
        sys.exit(f"FAIL: {mode} on {device} echoed {match.group(1, 2, 3, 4)}")
    return float(match.group(5))


def agree(a, b, what):
    if abs(a - b) > 1e-4 * max(abs(a), abs(b)):
        sys.exit(f"FAIL: {what}: checksums {a} and {b} differ by more than 1e-4 relative")


def main(script, device):
    # Flags are parsed before torch is imported, so this part runs without torch.
    code, out, err = run(script, "--mode", "fast")
    if code != 2 or "usage:" not in err:
        sys.exit(f"FAIL: an invalid --mode exited {code} with stderr {err!r}")

    try:
        import torch
    except ImportError as error:
        for python in TORCH_PYTHONS:
            if os.path.realpath(python) == os.path.realpath(sys.executable):
                continue
            if os.access(python, os.X_OK) and subprocess.run(
                    [python, "-c", "import torch"], capture_output=True).returncode == 0:
                print(f"{sys.executable} has no torch: running the check with {python}")
                sys.stdout.flush()
                os.execv(python, [python, __file__, script, device])
        print(f"SKIP: torch is not importable: {error}")
        return SKIP
    if device == "cuda" and not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA device")
        return SKIP

    # Small on the CPU to keep the test quick; the seed's size on the GPU.
    repeats, tile = (16, 32) if device == "cpu" else (128, 128)
    slow = checksum(script, "slow_loop_sync", device, repeats, tile)
    batched = checksum(script, "batched", device, repeats, tile)
    agree(slow, batched, f"slow_loop_sync vs batched on {device}")
    if device == "cuda":
        agree(batched, checksum(script, "batched", "cpu", repeats, tile), "cuda vs cpu")

    print(f"PASS: torch_matmul.py on {device}: checksum {batched:.6f}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in ("cpu", "cuda"):
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
