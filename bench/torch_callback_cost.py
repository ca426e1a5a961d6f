"""Per-op cost of PyTorch op recording, in one process: strata's op layer
against torch.profiler, and what linking each op to its kernels costs.

    python3 bench/torch_callback_cost.py --lib build/lib/libstrata_torch.so \\
        [--rounds 9] [--device cpu,cuda] [--ops 20000] [--warmup 2000] [--only "bare;strata"]
        [--json OUT.json]
    strata trace -o T.sqlite -- python3 bench/torch_callback_cost.py --under-strata \\
        [--rounds 9] [--device cuda] [--json OUT.json]

Each round times, for every mechanism in turn (interleaved, so drift hits all
alike), a loop of --ops `y = x + 1` on a 4-element tensor (one aten::add per
iteration), after --warmup iterations inside the mechanism. One process: on
the GPU machine the CPU's speed changes by up to 1.5x from second to second
(docs/PERFORMANCE.md), so costs of a few hundred ns per op only show as
differences between blocks close in time: short blocks (--ops 1000, about
15 ms) and many rounds. --only keeps the mechanisms named (`;` between them;
the first is the baseline).

Plain (no strata around it): the baseline is the bare loop; then strata's op
layer (libstrata_torch.so's RecordFunction callbacks, registered and removed
around the loop, no CUDA agent: no link), strata with --record-shapes and
--with-stack=5, and torch.profiler with CPU, CUDA, and CPU+CUDA activities
(the last is what item 4 of issue 18 compares against).

--under-strata (run by `strata trace`, CUDA agent and op layer attached): the
baseline is the loop with nothing recorded (the op layer's callbacks removed
and the agent's CUPTI activity records off, strata_agent_bench_record(0), as
a profiler between sessions); then strata's CUDA layer alone (records on,
callbacks still removed), the op layer beside it without an external
correlation push (strata_torch_attach_cuda(NULL, NULL)), and as it is set up
at start (strata_agent_attach_torch: pushes only under
STRATA_AGENT_CLOCK=cupti). The last two differ by what pushing ids costs.

Prints, per mechanism, the median ns per iteration over rounds and the median
of its per-round difference to the baseline (= its cost per op) with that
difference's range. CPU: thread CPU time; cuda: wall time with a final
synchronize. docs/torch-ops.md keeps the figures.
"""
import argparse
import ctypes
import json
import os
import statistics
import tempfile
import time

import torch
from torch.profiler import ProfilerActivity, profile

# Mechanisms that only make sense on a CUDA tensor.
CUDA_ONLY = {"torch.profiler(CUDA)", "torch.profiler(CPU+CUDA)"}


class Bare:
    def __enter__(self):
        pass

    def __exit__(self, *exc):
        pass


class Strata:
    """The op layer's callbacks, registered around the loop."""
    lib = None

    def __init__(self, shapes=False, stack=0):
        self.env = {"STRATA_TORCH_SHAPES": "1" if shapes else "0", "STRATA_TORCH_STACK": str(stack)}

    def __enter__(self):
        os.environ.update(self.env)
        assert Strata.lib.strata_torch_register() == 0, Strata.lib.strata_torch_last_error()

    def __exit__(self, *exc):
        Strata.lib.strata_torch_unregister()


class RecordsOff:
    """Under strata trace: nothing recorded, neither ops nor CUDA activity."""
    agent = None

    def __enter__(self):
        Strata.lib.strata_torch_unregister()
        RecordsOff.agent.strata_agent_bench_record(0)

    def __exit__(self, *exc):
        RecordsOff.agent.strata_agent_bench_record(1)
        assert Strata.lib.strata_torch_register() == 0, Strata.lib.strata_torch_last_error()


class CudaLayerOnly:
    """Under strata trace: the op layer's callbacks removed for the loop, so
    only the CUDA agent records."""

    def __enter__(self):
        Strata.lib.strata_torch_unregister()

    def __exit__(self, *exc):
        assert Strata.lib.strata_torch_register() == 0, Strata.lib.strata_torch_last_error()


class Unlinked:
    """Under strata trace: the op layer records, but pushes no external
    correlation id (no op is open between blocks, so none is left pushed)."""
    agent = None

    def __enter__(self):
        Strata.lib.strata_torch_attach_cuda(None, None)

    def __exit__(self, *exc):
        Unlinked.agent.strata_agent_attach_torch()


def loop(x, n):
    for _ in range(n):
        y = x + 1  # noqa: F841


def plain_mechanisms(lib_path, devices):
    os.environ["STRATA_TORCH_DIR"] = tempfile.mkdtemp(prefix="strata-torch-bench-")
    Strata.lib = ctypes.CDLL(os.path.abspath(lib_path))
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
        mechanisms["torch.profiler(CUDA)"] = lambda: profile(activities=[ProfilerActivity.CUDA])
        mechanisms["torch.profiler(CPU+CUDA)"] = lambda: profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    return mechanisms


def under_strata_mechanisms():
    for name in ("STRATA_TORCH_LIB", "CUDA_INJECTION64_PATH"):
        if not os.environ.get(name):
            raise SystemExit(f"--under-strata: {name} is not set: run this under `strata trace`")
    # The libraries the process already loaded (the same handles).
    Strata.lib = ctypes.CDLL(os.environ["STRATA_TORCH_LIB"])
    Strata.lib.strata_torch_last_error.restype = ctypes.c_char_p
    Unlinked.agent = RecordsOff.agent = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"])
    return {
        "strata records off": RecordsOff,
        "strata CUDA layer only": CudaLayerOnly,
        "strata ops, unlinked": Unlinked,
        "strata ops, as set up": Bare,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", help="libstrata_torch.so (plain mode)")
    parser.add_argument("--under-strata", action="store_true")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--ops", type=int, default=20000)
    parser.add_argument("--warmup", type=int, default=2000)
    parser.add_argument("--only", help="mechanisms to run, `;` between them")
    parser.add_argument("--json")
    args = parser.parse_args()
    devices = args.device.split(",")
    torch.set_num_threads(1)
    if args.under_strata:
        mechanisms = under_strata_mechanisms()
    elif args.lib:
        mechanisms = plain_mechanisms(args.lib, devices)
    else:
        parser.error("give --lib (plain) or --under-strata")
    if args.only:
        unknown = [n for n in args.only.split(";") if n not in mechanisms]
        if unknown:
            parser.error(f"--only: no mechanism {unknown[0]!r} (there are: {'; '.join(mechanisms)})")
        mechanisms = {n: mechanisms[n] for n in args.only.split(";")}
    baseline = next(iter(mechanisms))
    xs = {d: torch.ones(4, device=d) for d in devices}
    results = {}
    for _ in range(args.rounds):
        for name, make in mechanisms.items():
            for d in devices:
                if d == "cpu" and name in CUDA_ONLY:
                    continue
                x = xs[d]
                with make():
                    loop(x, args.warmup)  # inside the mechanism
                    if x.is_cuda:
                        torch.cuda.synchronize()
                    cpu0, wall0 = time.thread_time_ns(), time.perf_counter_ns()
                    loop(x, args.ops)
                    if x.is_cuda:
                        torch.cuda.synchronize()
                    spent = (time.perf_counter_ns() - wall0) if x.is_cuda else (time.thread_time_ns() - cpu0)
                results.setdefault(f"{d} {name}", []).append(spent / args.ops)
    print("torch %s, %d interleaved rounds in one process, blocks of %d `x + 1` (one aten::add), "
          "ns per op; cost = median of per-round differences to %s (their 5th to 95th percentile)"
          % (torch.__version__, args.rounds, args.ops, baseline))
    for d in devices:
        base = results[f"{d} {baseline}"]
        for name in mechanisms:
            figures = results.get(f"{d} {name}")
            if figures is None:
                continue
            diffs = sorted(m - b for m, b in zip(figures, base))
            low, high = diffs[len(diffs) * 5 // 100], diffs[max(0, len(diffs) * 95 // 100 - 1)]
            print("%-4s %-26s %7.0f ns  %+6.0f ns/op  (%+.0f to %+.0f)"
                  % (d, name, statistics.median(figures), statistics.median(diffs), low, high))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "rounds": args.rounds, "ops": args.ops, "baseline": baseline,
                       "ns_per_op": results}, f, indent=1)


if __name__ == "__main__":
    main()
