"""Per-op cost of strata's PyTorch op recording vs torch.profiler, in one process.

    python3 bench/torch_callback_cost.py --lib build/lib/libstrata_torch.so [--rounds 9] [--device cpu,cuda]

Each round times, for every mechanism in turn (interleaved, so drift hits all
alike), a loop of 20k `y = x + 1` on a 4-element tensor (one aten::add per
iteration): bare; strata (libstrata_torch.so's RecordFunction callbacks,
registered and removed around the loop); strata with --record-shapes and
--with-stack=5; torch.profiler(CPU); on cuda also torch.profiler(CPU+CUDA).
Prints the median over rounds of ns per iteration and its difference to bare
(= the cost per op). CPU: thread CPU time; cuda: wall time with a final
synchronize. docs/torch-ops.md keeps the figures.
"""
import argparse
import ctypes
import os
import statistics
import tempfile
import time

import torch
from torch.profiler import ProfilerActivity, profile

N = 20000


class Bare:
    def __enter__(self):
        pass

    def __exit__(self, *exc):
        pass


class Strata:
    lib = None

    def __init__(self, shapes=False, stack=0):
        self.env = {"STRATA_TORCH_SHAPES": "1" if shapes else "0", "STRATA_TORCH_STACK": str(stack)}

    def __enter__(self):
        os.environ.update(self.env)
        assert Strata.lib.strata_torch_register() == 0, Strata.lib.strata_torch_last_error()

    def __exit__(self, *exc):
        Strata.lib.strata_torch_unregister()


def loop(x, n):
    for _ in range(n):
        y = x + 1  # noqa: F841


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    devices = args.device.split(",")
    torch.set_num_threads(1)
    os.environ["STRATA_TORCH_DIR"] = tempfile.mkdtemp(prefix="strata-torch-bench-")
    Strata.lib = ctypes.CDLL(os.path.abspath(args.lib))
    Strata.lib.strata_torch_last_error.restype = ctypes.c_char_p
    if Strata.lib.strata_torch_calibrate_begin() == 0:
        t = torch.ones(1, requires_grad=True)
        t.mul(2), t.mul(3)
        Strata.lib.strata_torch_calibrate_end()
    mechanisms = {
        "bare": Bare,
        "strata": Strata,
        "strata +shapes +stack5": lambda: Strata(True, 5),
        "torch.profiler(CPU)": lambda: profile(activities=[ProfilerActivity.CPU]),
    }
    if "cuda" in devices:
        mechanisms["torch.profiler(CPU+CUDA)"] = lambda: profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    xs = {d: torch.ones(4, device=d) for d in devices}
    results = {}
    for _ in range(args.rounds):
        for name, make in mechanisms.items():
            for d in devices:
                if d == "cpu" and "CUDA" in name:
                    continue
                x = xs[d]
                with make():
                    loop(x, 2000)  # warm-up inside the mechanism
                    if x.is_cuda:
                        torch.cuda.synchronize()
                    cpu0, wall0 = time.thread_time_ns(), time.perf_counter_ns()
                    loop(x, N)
                    if x.is_cuda:
                        torch.cuda.synchronize()
                    spent = (time.perf_counter_ns() - wall0) if x.is_cuda else (time.thread_time_ns() - cpu0)
                results.setdefault((name, d), []).append(spent / N)
    print("torch %s, %d interleaved rounds, median ns per `x + 1` (one aten::add), cost = minus bare"
          % (torch.__version__, args.rounds))
    for d in devices:
        bare = statistics.median(results[("bare", d)])
        for name in mechanisms:
            if (name, d) not in results:
                continue
            m = statistics.median(results[(name, d)])
            print("%-4s %-26s %7.0f ns  (%+6.0f ns/op)" % (d, name, m, m - bare))


if __name__ == "__main__":
    main()
