"""Helpers shared by the GPU machine's tracing benchmarks (gpu_trace_overhead.py,
torch_ops_overhead.py, torch_loop_spread.py)."""
import os
import sys

# The kinds strata's CUDA layer records, its left-out getters left out too
# (`quiet`, src/agent/cuda/noisy_apis.h): the floor strata is judged against.
STRATA_RECORDS = "kernel,runtime,driver,ts,quiet"


def cupti_floor_env(build, what=STRATA_RECORDS):
    """The environment that runs a CUDA program under the smallest CUPTI client
    recording `what` (bench/cupti_floor.cc): CUPTI's own cost."""
    return {"CUDA_INJECTION64_PATH": f"{build}/lib/libcupti_floor.so", "CUPTI_FLOOR": what}


def chosen_rows(rows, known=None):
    """`rows` (name: (argv, env)) as the environment asks:
    BENCH_CONFIGS="bare;strata;nsys": only these rows (a shorter call; `;`
    separates them, as row names hold commas); a name that is not among `known`
    (the names any of the run's workloads has; default: `rows`) stops the run.
    BENCH_PIN="2-5": every command under `taskset -c 2-5`, bare runs too: where
    runs of one command spread as the scheduler moves them (or with the CPU they
    land on), the same cores for every run narrow the spread the rounds have to beat."""
    if os.environ.get("BENCH_CONFIGS"):
        keep = os.environ["BENCH_CONFIGS"].split(";")
        known = list(known or rows)
        unknown = [name for name in keep if name not in known]
        if unknown:  # a misspelt row would cost a device call its comparison
            sys.exit(f"BENCH_CONFIGS names rows this run does not have: {'; '.join(unknown)} "
                     f"(it has: {'; '.join(known)})")
        rows = {name: row for name, row in rows.items() if name in keep}
    if os.environ.get("BENCH_PIN"):
        pin = ["taskset", "-c", os.environ["BENCH_PIN"]]
        rows = {name: (pin + argv, env) for name, (argv, env) in rows.items()}
    return rows
