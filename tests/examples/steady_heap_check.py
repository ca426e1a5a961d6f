#!/usr/bin/env python3
"""Checks examples/planted/planted_py.steady_heap: after it, a loop that allocates and
frees a 3 MiB block (torch_dataload's tensors) reuses the same memory instead of
faulting it in anew each time.

  steady_heap_check.py PLANTED_DIR

Setting only the trim threshold would look right and be wrong: any mallopt call turns
off glibc's moving mmap threshold, so every 3 MiB block would be mmap'd and faulted
in again (about 768 faults a round). Exit status: 0 passed, 1 failed, 2 usage error,
77 skipped (not glibc).
"""
import ctypes
import os
import resource
import subprocess
import sys

BLOCK = 3 << 20
ROUNDS = 64
PAGES = BLOCK // resource.getpagesize()


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def faults_of_loop():
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(ROUNDS):
        block = libc.malloc(BLOCK)
        if not block:
            fail("malloc failed")
        ctypes.memset(block, 1, BLOCK)  # every page touched
        libc.free(block)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def child(planted_dir):
    sys.path.insert(0, planted_dir)
    import planted_py
    pinned = planted_py.steady_heap()
    print(f"{int(pinned)} {faults_of_loop()}")


def run_child(planted_dir, default_heap):
    env = dict(os.environ, PLANTED_DEFAULT_HEAP="1" if default_heap else "0")
    proc = subprocess.run([sys.executable, __file__, "--child", planted_dir], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"the child exited {proc.returncode}: {proc.stderr.strip()}")
    pinned, faults = proc.stdout.split()
    return pinned == "1", int(faults)


def main(argv):
    if len(argv) == 2 and argv[0] == "--child":
        child(argv[1])
        return 0
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[4], file=sys.stderr)
        return 2
    libc_version = os.confstr("CS_GNU_LIBC_VERSION") or ""
    if "glibc" not in libc_version or not hasattr(ctypes.CDLL(None), "mallopt"):
        print("SKIP: not glibc")
        return 77
    pinned, faults = run_child(argv[0], default_heap=False)
    if not pinned:
        fail("steady_heap() returned False under glibc")
    # The first round faults the block in; later rounds reuse it.
    if faults > 2 * PAGES:
        fail(f"{ROUNDS} rounds of a 3 MiB block made {faults} faults after steady_heap "
             f"(one block is {PAGES} pages): the memory is not reused")
    pinned_default, _ = run_child(argv[0], default_heap=True)
    if pinned_default:
        fail("PLANTED_DEFAULT_HEAP=1 did not keep glibc's defaults")
    print(f"PASS: {ROUNDS} rounds of a 3 MiB block made {faults} faults after steady_heap "
          f"(one block: {PAGES} pages); PLANTED_DEFAULT_HEAP=1 leaves the defaults")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
