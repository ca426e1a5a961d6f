#!/usr/bin/env python3
"""Runs a Python program under torch.profiler, the peer strata's op table is
compared with, and writes key_averages() as JSON (and its table to stderr).

  python3 torch_profile_run.py --json OUT.json [--cuda] [--shapes] -- prog.py ARGS...

The program runs as __main__ (runpy), unmodified, inside one profile() window
that covers all of it, as `strata trace` covers all of it. --cuda adds
ProfilerActivity.CUDA (Kineto's CUPTI tracing: kernels, copies, runtime calls).
--none runs the program the same way without a profiler (the bare baseline
with the same runpy start-up).
"""
import argparse
import json
import runpy
import sys


def rows_of(averages):
    rows = []
    for e in averages:
        # torch 2.x names the device columns self_device_time_total; 1.13 self_cuda_time_total.
        self_cuda = getattr(e, "self_device_time_total", None)
        if self_cuda is None:
            self_cuda = getattr(e, "self_cuda_time_total", 0)
        cuda_total = getattr(e, "device_time_total", None)
        if cuda_total is None:
            cuda_total = getattr(e, "cuda_time_total", 0)
        rows.append({"name": e.key, "count": e.count,
                     "self_cpu_us": e.self_cpu_time_total, "cpu_total_us": e.cpu_time_total,
                     "self_cuda_us": self_cuda, "cuda_total_us": cuda_total,
                     "device_type": str(getattr(e, "device_type", ""))})
    return rows


def main():
    parser = argparse.ArgumentParser(prog="torch_profile_run.py")
    parser.add_argument("--json", help="where to write the rows")
    parser.add_argument("--cuda", action="store_true")
    parser.add_argument("--shapes", action="store_true")
    parser.add_argument("--none", action="store_true", help="no profiler: the baseline")
    parser.add_argument("program", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    sys.argv = program
    if args.none:
        runpy.run_path(program[0], run_name="__main__")
        return 0
    import torch
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if args.cuda else [])
    with profile(activities=activities, record_shapes=args.shapes) as prof:
        try:
            runpy.run_path(program[0], run_name="__main__")
        except SystemExit as stop:
            if stop.code not in (0, None):
                raise
    averages = prof.key_averages()
    sort = "self_cuda_time_total" if args.cuda else "self_cpu_time_total"
    print(averages.table(sort_by=sort, row_limit=25), file=sys.stderr)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"torch": torch.__version__, "rows": rows_of(averages)}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
