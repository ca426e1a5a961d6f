"""What every Python planted-bottleneck workload shares (README.md): the command line
and the one output line the suite's checks and bench/diagnose_planted.py read.

  python3 WORKLOAD.py [--fixed] [--scale X]
  workload=NAME variant=planted|fixed elapsed_ms=123.456 checksum=...

--fixed removes the planted cause and does the same work (the same checksum);
--scale multiplies the work, to bring another machine back to the suite's 0.3-2 s.
No torch here: the CPU-only workloads run under any python3.
"""
import argparse
import sys
import time


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


class Timer:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.elapsed_ms = (time.perf_counter() - self.start) * 1e3


def print_result(name, args, elapsed_ms, checksum):
    variant = "fixed" if args.fixed else "planted"
    print(f"workload={name} variant={variant} elapsed_ms={elapsed_ms:.3f} checksum={checksum}")
