#!/usr/bin/env python3
"""20,000 tiny PyTorch ops (`y = x + 1` on a 4-element tensor): the op-dispatch
cost dominates, so a profiler's per-op cost shows in full.

  python3 small_ops.py --device cuda --ops 20000
  device=cuda ops=20000 elapsed_ms=123.456 probe_ms=21.345 check=2.0

probe_ms times a fixed pure-Python loop just before the ops: no profiler
records anything in it, so it measures how fast this process's CPU runs. On
the GPU machine whole processes run the op loop about 1.5x slower or faster
(docs/PERFORMANCE.md); the probe says whether the CPU's speed is that mode.
"""
import argparse
import sys
import time


def main(argv):
    parser = argparse.ArgumentParser(prog="small_ops.py")
    parser.add_argument("--ops", type=int, default=20000)
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    args = parser.parse_args(argv)
    import torch
    x = torch.ones(4, device=args.device)
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    for _ in range(200):  # warm-up
        y = x + 1
    sync()
    probe_start = time.perf_counter()
    total = 0
    for i in range(300_000):
        total += i * i
    probe_ms = (time.perf_counter() - probe_start) * 1000.0
    start = time.perf_counter()
    for _ in range(args.ops):
        y = x + 1
    sync()
    elapsed_ms = (time.perf_counter() - start) * 1000.0
    print(f"device={args.device} ops={args.ops} elapsed_ms={elapsed_ms:.3f} probe_ms={probe_ms:.3f} "
          f"check={float(y[0]):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
