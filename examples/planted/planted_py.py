"""What every Python planted-bottleneck workload shares (README.md): the command line
and the one output line the suite's checks and bench/diagnose_planted.py read.

  python3 WORKLOAD.py [--fixed] [--scale X]
  workload=NAME variant=planted|fixed elapsed_ms=123.456 checksum=... [loop_minflt=N loop_sys_ms=X]

--fixed removes the planted cause and does the same work (the same checksum);
--scale multiplies the work, to bring another machine back to the suite's 0.3-2 s.
loop_minflt and loop_sys_ms (the process's minor page faults and kernel time over the
timed loop, from getrusage) follow on Linux: a run that spent its time faulting pages in
shows it (steady_heap says why that matters).
No torch here: the CPU-only workloads run under any python3.
"""
import argparse
import ctypes
import os
import sys
import time

try:
    import resource
except ImportError:  # not Linux/Unix: no page-fault figures
    resource = None


def parse_args(name, doc, argv=None):
    parser = argparse.ArgumentParser(prog=f"{name}.py", description=doc.splitlines()[0])
    parser.add_argument("--fixed", action="store_true",
                        help="the same work without the planted bottleneck")
    parser.add_argument("--scale", type=scale_value, default=1.0,
                        help="multiply the work by X (default 1, 0 < X <= 1000)")
    return parser.parse_args(argv)


def scale_value(text):
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value <= 1000.0:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1000], not {text!r}")
    return value


def scaled(base, args):
    """At least one, whatever the scale."""
    return max(1, int(base * args.scale))


def import_torch_cuda(name):
    """torch and its CUDA device, or a one-line error and exit 1: the GPU workloads."""
    try:
        import torch
    except ImportError as error:
        sys.exit(f"{name}: PyTorch is needed: {error}")
    if not torch.cuda.is_available():
        sys.exit(f"{name}: torch.cuda.is_available() is False")
    return torch


# mallopt's parameters (glibc's malloc.h).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
# Above the largest block a workload frees in its loop (torch_dataload's 3 MiB
# tensors), and within the M_MMAP_THRESHOLD limit of every glibc (32 MiB on 64-bit).
STEADY_MMAP_THRESHOLD = 32 << 20
STEADY_TRIM_THRESHOLD = 256 << 20


def steady_heap():
    """Fixes glibc malloc's thresholds for the rest of the process; True if it could.

    A loop that allocates and frees megabyte blocks (CPU tensors) runs at one of two
    speeds with glibc's defaults, chosen per process by its address layout: in the
    slow one, every iteration returns the top of the heap to the kernel (brk) and
    faults it back in. Measured on the dev machine (2026-12-05, torch_dataload's
    batch making alone, 80 batches, bench/heap_modes_cpu.py): 13 of 96 runs, bare
    and under strata's instruments, made 119,000-243,000 minor faults and spent
    0.8-1.7 s in the kernel, 2.2-4.7 s in all, against 1,500-19,000 faults and about
    1 s; which runs did followed what the process had loaded before the loop. With
    these thresholds fixed, none of 96 did. That mode is the allocator's, not the
    planted cause: a workload that allocates so pins it in both variants, so that the
    saving and strata diagnose's bound are of the cause alone (docs/PERFORMANCE.md,
    "A loop's speed chosen by glibc's heap").
    PLANTED_DEFAULT_HEAP=1 leaves glibc's defaults, to see the two modes.
    """
    if os.environ.get("PLANTED_DEFAULT_HEAP") == "1":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library the interpreter runs on
    except (OSError, AttributeError):
        return False
    return (mallopt(M_MMAP_THRESHOLD, STEADY_MMAP_THRESHOLD) == 1 and
            mallopt(M_TRIM_THRESHOLD, STEADY_TRIM_THRESHOLD) == 1)


class Timer:
    def __enter__(self):
        self.usage = resource.getrusage(resource.RUSAGE_SELF) if resource else None
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.elapsed_ms = (time.perf_counter() - self.start) * 1e3
        self.extra = ""
        if self.usage is not None:
            now = resource.getrusage(resource.RUSAGE_SELF)
            faults = now.ru_minflt - self.usage.ru_minflt
            sys_ms = (now.ru_stime - self.usage.ru_stime) * 1e3
            self.extra = f" loop_minflt={faults} loop_sys_ms={sys_ms:.1f}"


def print_result(name, args, timer, checksum):
    variant = "fixed" if args.fixed else "planted"
    print(f"workload={name} variant={variant} elapsed_ms={timer.elapsed_ms:.3f} "
          f"checksum={checksum}{timer.extra}")
