"""flush_lab's table: per case, the medians of the key metrics under each
variant (ref first), then for each variant the metrics furthest from ref.
    python3 bench/flush_lab/compare.py CSV_DIR      (CASE.VARIANT.csv files)"""
import glob
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from kernels_vs_ncu import parse_ncu_raw_csv, parse_number  # noqa: E402

KEY = [
    "gpu__time_duration.sum",
    "gpc__cycles_elapsed.max",
    "sm__cycles_active.avg",
    "lts__cycles_active.avg",
    "dram__cycles_active.avg",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed",
    "smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio",
]


def medians(path):
    """metric -> median over the profiled launches, from one ncu raw CSV."""
    try:
        with open(path, errors="replace") as f:
            results = parse_ncu_raw_csv(f.read())
    except OSError:
        return {}
    out = {}
    for metric in results[0]["metrics"] if results else []:
        values = [parse_number(r["metrics"].get(metric, ("", ""))[0]) for r in results]
        values = [float(v) for v in values if v is not None]
        if values:
            out[metric] = statistics.median(values)
    return out


def differing(ref, other, limit=12):
    """Count metrics (not rates) more than 8 % from ref, largest first."""
    rows = []
    for metric, value in other.items():
        if metric not in ref or "pct" in metric or "per_second" in metric or metric.startswith("profiler__"):
            continue
        base = ref[metric]
        if max(abs(base), abs(value)) < 1:
            continue
        rel = (value - base) / max(abs(base), 1e-9)
        if abs(rel) > 0.08:
            rows.append((abs(rel), metric, base, value))
    return sorted(rows, reverse=True)[:limit]


def main(csv_dir):
    names = [os.path.basename(p)[:-4].split(".", 1) for p in glob.glob(csv_dir + "/*.csv")]
    for case in sorted({c for c, _ in names}):
        variants = sorted({v for c, v in names if c == case}, key=lambda v: (v != "ref", v))
        data = {v: medians(f"{csv_dir}/{case}.{v}.csv") for v in variants}
        print(f"== {case}")
        print("  " + "metric".ljust(46) + "".join(v[:12].rjust(13) for v in variants))
        for metric in KEY:
            label = metric.replace(".avg.pct_of_peak_sustained_elapsed", " %")
            label = label.replace("smsp__average_warps_issue_stalled_", "stall ")
            cells = "".join((f"{data[v][metric]:.4g}" if metric in data[v] else "-").rjust(13)
                            for v in variants)
            print("  " + label[:46].ljust(46) + cells)
        for v in variants[1:]:
            for _, metric, base, value in differing(data["ref"], data[v]):
                print(f"    {v}: {metric[:60]:60s} {base:12.6g} {value:12.6g}")


if __name__ == "__main__":
    main(sys.argv[1])
