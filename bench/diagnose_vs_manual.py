#!/usr/bin/env python3
"""`strata diagnose` against doing the tutorial by hand (issue 19 item 6): the whole
wall time of one `strata diagnose -- CMD` against the sum of the tutorial's own
commands (shared/seed) on the same program, side by side on the GPU machine.

Programs (the tutorial's Case 2, its arguments):
  torch   PYTHON examples/torch_matmul.py --mode slow_loop_sync --device cuda
          --repeats 128 --tile-size 128
  native  BUILD/bin/gpu_matmul --mode slow_loop_sync --device cuda --repeats 128
          --tile-size 128

The manual side, the seed's commands in its order, each timed on its own:
  baseline     CMD (the seed runs the program first)
  cprofile     PYTHON -m cProfile -o OUT/x.prof SCRIPT ARGS
  pstats       print of that profile sorted by cumtime, 15 rows (the seed's
               show_pstats.py --sort cumtime --limit 15)
  torch.prof   the program under torch.profiler with CPU and CUDA activities, its
               key_averages table printed (bench/torch_profile_run.py --cuda; the
               seed's torch_profile_matmul.py)
  nsys         nsys profile --trace=cuda,nvtx --sample=none --cpuctxsw=none
               --force-overwrite=true --output OUT/x CMD; on the GPU machine its
               .qdstrm becomes a report through QdstrmImporter (which needs Debian's
               libdw there: shared/reference/gpu-machine.md), timed as part of it
  nsys-stats   nsys stats --force-export=true --report cuda_api_sum,cuda_gpu_kern_sum
               --format table --output - OUT/x.nsys-rep
  ncu          ncu --target-processes all --set basic --clock-control none
               --kernel-name regex:.*(gemm|mm).* --launch-count 1 --force-overwrite
               --export OUT/x CMD  (--clock-control none: the GPU machine's note)
  ncu-print    ncu --import OUT/x.ncu-rep --page details --print-summary per-kernel
cProfile and torch.profiler apply to the Python program only: for the native one
the manual side is baseline, nsys and ncu (and its sum is smaller for it).
`nsys profile --stats=true` is split into the capture and one `nsys stats` call with
the seed's reports, so that the stats are not counted twice: the manual sum is, if
anything, an underestimate.

The strata side: strata diagnose -o OUT/x.sqlite -- CMD (the text verdict, as a
user reads it). ROUNDS interleaved rounds (strata first in even rounds, the manual
sequence first in odd ones); medians per step and of the per-round sums.
Goal: strata's median below the manual median sum, for both programs.

usage: diagnose_vs_manual.py BUILD_DIR OUTDIR [--rounds N] [--only torch|native]
           [--python PY] [--repo DIR] [--nsys PATH] [--ncu PATH] [--dwlibs DIR]
  --python   default /opt/torch/.venv/bin/python3 where it exists, else python3
  --nsys     default /opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
             where it exists, else nsys on PATH; --ncu default ncu on PATH
  --dwlibs   a folder with libdw.so.1 and libelf.so.1 for QdstrmImporter (default:
             those two copied out of BUILD_DIR/runtime-libs, scripts/bundle-for-gpu)
Prints a table last; every command's output under OUTDIR, all figures in
OUTDIR/diagnose_vs_manual.json. Exit status: 0 goal met for every program run;
1 not met or a command failed; 2 usage error; 77 no GPU, nsys or ncu.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GPU_PYTHON = "/opt/torch/.venv/bin/python3"
NSYS_HOST = "/opt/nvidia/nsight-compute/2025.3.1/host"
ARGS = ["--mode", "slow_loop_sync", "--device", "cuda", "--repeats", "128", "--tile-size", "128"]
TIMEOUT_S = 600


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="diagnose_vs_manual.py",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("outdir")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=["torch", "native"])
    parser.add_argument("--python", default=GPU_PYTHON if os.access(GPU_PYTHON, os.X_OK)
                        else (shutil.which("python3") or sys.executable))
    parser.add_argument("--repo", default=os.path.join(HERE, ".."))
    default_nsys = f"{NSYS_HOST}/target-linux-x64/nsys"
    parser.add_argument("--nsys", default=default_nsys if os.access(default_nsys, os.X_OK)
                        else shutil.which("nsys"))
    parser.add_argument("--ncu", default=shutil.which("ncu"))
    parser.add_argument("--dwlibs")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    args.build, args.outdir = os.path.abspath(args.build), os.path.abspath(args.outdir)
    args.repo = os.path.abspath(args.repo)
    return args


def importer_for(nsys):
    """QdstrmImporter beside nsys's host folder, or None (a desktop nsys has none to run)."""
    host = os.path.dirname(os.path.dirname(os.path.realpath(nsys)))
    path = os.path.join(host, "linux-desktop-glibc_2_11_3-x64", "QdstrmImporter")
    return path if os.access(path, os.X_OK) else None


def default_dwlibs(build):
    """libdw and libelf alone in a folder: the whole runtime-libs on QdstrmImporter's
    path would give it Debian's other libraries too."""
    libs = os.path.join(build, "runtime-libs")
    names = ("libdw.so.1", "libelf.so.1")
    if not all(os.path.exists(os.path.join(libs, n)) for n in names):
        return None
    folder = tempfile.mkdtemp(prefix="dwlibs-")
    for n in names:
        shutil.copy(os.path.join(libs, n), folder)
    return folder


class Step:
    """One timed command; its output goes to OUTDIR/LABEL.NAME.round-R.log. `then`,
    if given, runs after it, timed with it: then(log file, exit code) -> exit code."""

    def __init__(self, name, argv, env=None, then=None):
        self.name, self.argv, self.env, self.then = name, argv, env, then


def run_step(step, outdir, label, rnd):
    log = os.path.join(outdir, f"{label}.{step.name}.round-{rnd}.log")
    env = dict(os.environ, **(step.env or {}))
    start = time.perf_counter()
    with open(log, "w") as out:
        out.write(f"$ {' '.join(step.argv)}\n")
        out.flush()
        try:
            code = subprocess.run(step.argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                                  timeout=TIMEOUT_S).returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
        if step.then is not None:
            code = step.then(out, code)
    return time.perf_counter() - start, code


def nsys_steps(args, base, cmd, dwlibs):
    importer = importer_for(args.nsys)

    def import_qdstrm(out, code):
        # Only where nsys left a .qdstrm instead of a report (the GPU machine, where
        # nsys's own import fails for want of libdw and may fail the whole command).
        if os.path.exists(base + ".nsys-rep") or importer is None \
                or not os.path.exists(base + ".qdstrm"):
            return code
        env = dict(os.environ)
        if dwlibs:
            env["LD_LIBRARY_PATH"] = dwlibs
        return subprocess.run([importer, "-i", base + ".qdstrm"], stdout=out,
                              stderr=subprocess.STDOUT, env=env, timeout=TIMEOUT_S).returncode

    for ext in (".nsys-rep", ".qdstrm", ".sqlite"):
        if os.path.exists(base + ext):
            os.remove(base + ext)
    profile = Step("nsys", [args.nsys, "profile", "--trace=cuda,nvtx", "--sample=none",
                            "--cpuctxsw=none", "--force-overwrite=true", "--output", base] + cmd,
                   then=import_qdstrm)
    stats = Step("nsys-stats", [args.nsys, "stats", "--force-export=true", "--report",
                                "cuda_api_sum,cuda_gpu_kern_sum", "--format", "table",
                                "--output", "-", base + ".nsys-rep"])
    return [profile, stats]


def manual_steps(args, label, program, dwlibs):
    """The seed's commands on this program, in its order."""
    base = os.path.join(args.outdir, label)
    cmd = program["cmd"]
    steps = [Step("baseline", cmd)]
    if program["script"]:
        script = program["script"]
        steps += [
            Step("cprofile", [args.python, "-m", "cProfile", "-o", base + ".prof", script] + ARGS),
            Step("pstats", [args.python, "-c",
                            "import pstats, sys; pstats.Stats(sys.argv[1])"
                            ".sort_stats('cumtime').print_stats(15)", base + ".prof"]),
            Step("torch.prof", [args.python, os.path.join(HERE, "torch_profile_run.py"),
                                "--cuda", "--json", base + ".torchprof.json", "--", script]
                 + ARGS),
        ]
    steps += nsys_steps(args, base, cmd, dwlibs)
    steps += [
        Step("ncu", [args.ncu, "--target-processes", "all", "--set", "basic",
                     "--clock-control", "none", "--kernel-name", "regex:.*(gemm|mm).*",
                     "--launch-count", "1", "--force-overwrite", "--export", base] + cmd),
        Step("ncu-print", [args.ncu, "--import", base + ".ncu-rep", "--page", "details",
                           "--print-summary", "per-kernel"]),
    ]
    return steps


def strata_step(args, label, program):
    trace = os.path.join(args.outdir, f"{label}.strata.sqlite")
    env = {}
    libs = os.path.join(args.build, "runtime-libs")
    if os.path.isdir(libs):
        env["LD_LIBRARY_PATH"] = libs

    def fresh(argv):
        if os.path.exists(trace):
            os.remove(trace)
        return argv

    # --force: each round rewrites the page diagnose writes beside its trace.
    return Step("strata-diagnose", fresh([os.path.join(args.build, "bin", "strata"), "diagnose",
                                          "--force", "-o", trace, "--"] + program["cmd"]),
                env=env)


def main(argv):
    args = parse_args(argv)
    strata = os.path.join(args.build, "bin", "strata")
    gpu_matmul = os.path.join(args.build, "bin", "gpu_matmul")
    torch_matmul = os.path.join(args.repo, "examples", "torch_matmul.py")
    for path in (strata, gpu_matmul):
        if not os.access(path, os.X_OK):
            print(f"diagnose_vs_manual.py: {path} is not an executable", file=sys.stderr)
            return 2
    if not os.path.isfile(torch_matmul):
        print(f"diagnose_vs_manual.py: {torch_matmul} does not exist", file=sys.stderr)
        return 2
    missing = [n for n, p in (("nsys", args.nsys), ("ncu", args.ncu)) if not p]
    smi = shutil.which("nvidia-smi")
    if missing or not smi or subprocess.run([smi, "-L"], capture_output=True).returncode:
        print(f"skipped: {'no ' + ', '.join(missing) if missing else 'no GPU'}")
        return 77
    os.makedirs(args.outdir, exist_ok=True)
    dwlibs = args.dwlibs or default_dwlibs(args.build)

    programs = {
        "torch": {"script": torch_matmul, "cmd": [args.python, torch_matmul] + ARGS},
        "native": {"script": None, "cmd": [gpu_matmul] + ARGS},
    }
    results, failed = {}, []
    for label, program in programs.items():
        if args.only and label != args.only:
            continue
        rounds = []
        for rnd in range(args.rounds):
            # Built afresh per round: nsys and strata must not find last round's files.
            sides = [("strata", [strata_step(args, label, program)]),
                     ("manual", manual_steps(args, label, program, dwlibs))]
            times = {}
            for side, steps in (sides if rnd % 2 == 0 else sides[::-1]):
                for step in steps:
                    seconds, code = run_step(step, args.outdir, label, rnd)
                    times[step.name] = round(seconds, 3)
                    if code != 0:
                        failed.append(f"{label} round {rnd}: {step.name} exited {code}")
            manual = [s.name for s in sides[1][1]]
            times["manual-sum"] = round(sum(times[n] for n in manual), 3)
            rounds.append(times)
            print(f"{label} round {rnd}: strata {times['strata-diagnose']:.2f} s, manual "
                  f"{times['manual-sum']:.2f} s "
                  f"({', '.join(f'{n} {times[n]:.2f}' for n in manual)})", flush=True)
        medians = {k: round(statistics.median(r[k] for r in rounds), 3) for k in rounds[0]}
        results[label] = {"command": program["cmd"], "rounds": rounds, "medians": medians,
                          "ratio": round(medians["strata-diagnose"] / medians["manual-sum"], 3),
                          "goal_met": medians["strata-diagnose"] < medians["manual-sum"]}

    with open(os.path.join(args.outdir, "diagnose_vs_manual.json"), "w") as f:
        json.dump({"rounds": args.rounds, "python": args.python, "nsys": args.nsys,
                   "ncu": args.ncu, "failed": failed, "programs": results}, f, indent=1)
    print()
    names = []
    for r in results.values():
        names += [n for n in r["medians"] if n not in names]
    width = max(len(n) for n in names)
    print(f"{'median s':<{width}}  " + "  ".join(f"{label:>8}" for label in results))
    for n in names:
        print(f"{n:<{width}}  " + "  ".join(
            f"{r['medians'][n]:8.2f}" if n in r["medians"] else f"{'n/a':>8}"
            for r in results.values()))
    for label, r in results.items():
        print(f"{label}: strata diagnose {r['medians']['strata-diagnose']:.2f} s vs the "
              f"tutorial's commands {r['medians']['manual-sum']:.2f} s: ratio {r['ratio']:.2f}, "
              f"goal (below) {'met' if r['goal_met'] else 'NOT met'}")
    for line in failed:
        print(f"FAILED: {line}")
    return 0 if results and not failed and all(r["goal_met"] for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
