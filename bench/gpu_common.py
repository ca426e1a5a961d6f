"""Helpers shared by the GPU machine's tracing benchmarks (gpu_trace_overhead.py,
torch_ops_overhead.py, torch_loop_spread.py)."""
import os
import random
import statistics
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


def added(data, name, base="bare"):
    """What row `name` adds to row `base`: the median over rounds of their
    difference in that round (rows {name: [figure per round]}); None if no
    round has both."""
    diffs = [c - b for c, b in zip(data[name], data[base]) if c is not None and b is not None]
    return statistics.median(diffs) if diffs else None


def row_figures(data, name):
    """Row `name`'s median and what it adds to bare, or None where it never ran."""
    vals = [x for x in data[name] if x is not None]
    if not vals:
        return None
    return statistics.median(vals), added(data, name)


def difference_interval(ours, peer, bare, factor=1.0, draws=2000):
    """How sure a ranking is: the 5th and 95th percentiles of
    median(ours - bare) - factor x median(peer - bare) over the rounds resampled
    with replacement (a round's three figures kept together; a fixed seed, so a
    saved run gives the same interval again). Both ends below 0: ours adds less,
    settled at that level; both above: it adds more; one on each side: these
    rounds do not rank the two. (Runs of one command fall in two speeds per
    process on the GPU machine, docs/PERFORMANCE.md: a handful of rounds ranks
    rows by how many of their runs drew the fast one, and this says when.)
    None where fewer than 3 rounds have all three figures."""
    rounds = [i for i, row in enumerate(zip(ours, peer, bare)) if None not in row]
    if len(rounds) < 3:
        return None
    rng = random.Random(1)
    stats = []
    for _ in range(draws):
        pick = [rng.choice(rounds) for _ in rounds]
        stats.append(statistics.median(ours[i] - bare[i] for i in pick) -
                     factor * statistics.median(peer[i] - bare[i] for i in pick))
    stats.sort()
    return stats[draws * 5 // 100], stats[draws * 95 // 100 - 1]


def rank_correlation(xs, ys):
    """Spearman's rank correlation of two equal-length lists (None pairs left
    out; ties get their mean rank); None with fewer than 4 pairs."""
    pairs = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None]
    if len(pairs) < 4:
        return None

    def ranks(values):
        order = sorted(range(len(values)), key=values.__getitem__)
        out = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for k in range(i, j + 1):
                out[order[k]] = (i + j) / 2
            i = j + 1
        return out

    rx, ry = ranks([x for x, _ in pairs]), ranks([y for _, y in pairs])
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx, syy = sum((a - mx) ** 2 for a in rx), sum((b - my) ** 2 for b in ry)
    return sxy / (sxx * syy) ** 0.5 if sxx > 0 and syy > 0 else None


def fast_band(data, probes, width=1.25):
    """Each row's figures from the runs whose CPU was in its fast state: the
    runs whose probe (a fixed tracer-free CPU loop timed in the same process,
    small_ops.py's probe_ms) took at most `width` x the fastest probe of all
    runs. {row: [figures]}; None where no run has a probe. A tool whose own
    threads slow the CPU puts more of its runs outside the band: the count of
    runs left in it is part of the answer."""
    every = [p for row in probes.values() for p in row if p]
    if not every:
        return None
    limit = width * min(every)
    return {name: [x for x, p in zip(data[name], probes.get(name, []))
                   if x is not None and p and p <= limit] for name in data}


def verdict(met):
    """A goal's verdict word, the same in every overhead script."""
    return "met" if met else "NOT met"


def ranking(interval, unit):
    """A difference_interval in words."""
    if interval is None:
        return "too few rounds to say how sure"
    low, high = interval
    word = ("settled: less" if high < 0 else "settled: more" if low > 0 else "not settled")
    return f"90 % interval of the difference {low:+.3f} to {high:+.3f} {unit}: {word}"
