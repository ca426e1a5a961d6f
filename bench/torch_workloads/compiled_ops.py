#!/usr/bin/env python3
"""A torch.compile'd function whose kernels Triton launches through the driver
API (cuLaunchKernel), not the runtime: checks that strata links kernels
launched that way to their op (bench/agent_driver_check.py).

  python3 compiled_ops.py --steps 50
  steps=50 elapsed_ms=12.345
"""
import argparse
import sys
import time


def main(argv):
    parser = argparse.ArgumentParser(prog="compiled_ops.py")
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args(argv)
    import torch

    @torch.compile
    def fused(x, y):
        return torch.relu(x * y + 1.0).sum(dim=1)

    x = torch.randn(256, 512, device="cuda")
    y = torch.randn(256, 512, device="cuda")
    fused(x, y)  # compile outside the timed part
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.steps):
        with torch.profiler.record_function("compiled_step"):
            out = fused(x, y)
    torch.cuda.synchronize()
    elapsed_ms = (time.perf_counter() - start) * 1000.0
    print(f"steps={args.steps} elapsed_ms={elapsed_ms:.3f} check={float(out[0]):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
