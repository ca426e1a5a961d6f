#!/usr/bin/env python3
"""20,000 tiny PyTorch ops (`y = x + 1` on a 4-element tensor): the op-dispatch
cost dominates, so a profiler's per-op cost shows in full.

  python3 small_ops.py --device cuda --ops 20000
  device=cuda ops=20000 elapsed_ms=123.456
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
    start = time.perf_counter()
    for _ in range(args.ops):
        y = x + 1
    sync()
    elapsed_ms = (time.perf_counter() - start) * 1000.0
    print(f"device={args.device} ops={args.ops} elapsed_ms={elapsed_ms:.3f} check={float(y[0]):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
