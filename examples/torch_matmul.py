#!/usr/bin/env python3
"""The seed's Case 2 in PyTorch (gpu_matmul_case.py): `repeats` tile x tile matrix
products, done badly and then well.

  slow_loop_sync  one torch.mm per tile, torch.cuda.synchronize() after each, each
                  inside a torch.profiler.record_function scope and (on CUDA) an
                  NVTX range, both named 'slow_loop_sync_iteration'
  batched         one torch.bmm over all tiles ('batched_bmm', the seed's name,
                  is accepted too)

  python3 torch_matmul.py --mode slow_loop_sync --device cuda --repeats 128 --tile-size 128
  mode=slow_loop_sync device=cuda repeats=128 tile_size=128 elapsed_ms=38.528 checksum=...

elapsed_ms covers the mode's compute only, from inputs on the device (and one
untimed warm-up product) to results complete. The checksum is the sum of every
output element.
"""

import argparse
import contextlib
import sys
import time


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}")
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="torch_matmul.py", description=__doc__.splitlines()[0])
    parser.add_argument("--mode", required=True, choices=["slow_loop_sync", "batched", "batched_bmm"])
    parser.add_argument("--repeats", type=positive_int, default=128)
    parser.add_argument("--tile-size", type=positive_int, default=128)
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--seed", type=int, default=0, help="input generator seed (default 0)")
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    # Imported after parsing, so that --help and usage errors work without torch.
    try:
        import torch
    except ImportError as error:
        print(f"torch_matmul.py: PyTorch is needed: {error}", file=sys.stderr)
        return 1

    on_cuda = args.device == "cuda"
    if on_cuda and not torch.cuda.is_available():
        print("torch_matmul.py: torch.cuda.is_available() is False", file=sys.stderr)
        return 1
    device = torch.device(args.device)

    def synchronize():
        if on_cuda:
            torch.cuda.synchronize()

    def iteration_range():
        # The same name twice, for the tutorial's two tools: an NVTX range
        # (what nsys and strata's NVTX layer show) and a record_function scope
        # (what torch.profiler and strata's PyTorch op table show).
        scopes = contextlib.ExitStack()
        if on_cuda:
            scopes.enter_context(torch.cuda.nvtx.range("slow_loop_sync_iteration"))
        scopes.enter_context(torch.profiler.record_function("slow_loop_sync_iteration"))
        return scopes

    # Drawn on the host from a seeded generator, so that both devices multiply the
    # same numbers; uniform in [0, 1), so that the checksum cannot cancel to near
    # zero and a relative comparison of checksums stays meaningful.
    generator = torch.Generator().manual_seed(args.seed)
    shape = (args.repeats, args.tile_size, args.tile_size)
    a = torch.rand(shape, generator=generator).to(device)
    b = torch.rand(shape, generator=generator).to(device)
    # One untimed product of the mode's own kind: the first one loads kernels and
    # creates the cuBLAS handle (about 100 ms on an H200), which would hide the
    # difference between the modes.
    if args.mode == "slow_loop_sync":
        torch.mm(a[0], b[0])
    else:
        torch.bmm(a, b)
    synchronize()

    start = time.perf_counter()
    if args.mode == "slow_loop_sync":
        outputs = []
        for i in range(args.repeats):
            with iteration_range():
                outputs.append(torch.mm(a[i], b[i]))
                synchronize()
        elapsed_ms = (time.perf_counter() - start) * 1000.0
        result = torch.stack(outputs)
    else:
        result = torch.bmm(a, b)
        synchronize()
        elapsed_ms = (time.perf_counter() - start) * 1000.0

    checksum = result.sum(dtype=torch.float64).item()
    print(
        f"mode={args.mode} device={args.device} repeats={args.repeats} "
        f"tile_size={args.tile_size} elapsed_ms={elapsed_ms:.3f} checksum={checksum:.6f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
