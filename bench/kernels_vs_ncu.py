"""`strata kernels` against `ncu --set basic --clock-control none` on the GPU machine:
accuracy value by value, and the time each tool adds to a whole run.

Both tools always run with one cache policy, CACHE = env NCU_CACHE_CONTROL (all or none,
default all), given to ncu as `--cache-control CACHE` and to strata as
`strata kernels --cache-control CACHE`: all (both tools' default) flushes caches before
every replay pass (ncu every cache, strata the L2), none leaves them as the replay leaves
them. Another value is a usage error.

accuracy  For each case of the kernel zoo (tests/gpu/kernel_zoo.cu, one case per process
          with --only), the same launch is profiled by
            ncu --set basic --clock-control none --cache-control CACHE --kernel-name F
                --launch-skip S --launch-count 1 --csv --page raw --print-units base
                -- ZOO --only CASE
            strata kernels --cache-control CACHE --kernel-name F --launch-skip S
                --launch-count 1 --format json -o TRACE -- ZOO --only CASE
          and every value strata prints is compared with ncu's raw metric of the same
          name (the "metric" key of strata's JSON), both converted to base units
          (seconds, bytes, Hz, %), within the issue's tolerances:
            exact    launch__*, device__attribute_*, sm__maximum_warps_* (theoretical
                     occupancy), grid and block: equal up to the printed rounding
            5 %      gpu__time_duration.sum, *cycles*, *.per_second
            3 pt     *pct_of_peak*, *throughput*, sm__warps_active.* (achieved
                     occupancy): within 3 points or 10 % relative, the larger
            (other metrics: 5 %)
          Plus: both tools must pick the same kernel (base function name), each must
          profile exactly one launch, strata's status must be 0, the zoo's own check
          must pass under both tools (a profiler whose replay breaks the program fails
          here), and the values of ncu's basic sections must all be in strata's output.
          With ROUNDS > 1, each tool runs ROUNDS times and the medians are compared;
          with ROUNDS >= 3 a median outside the tolerance still passes when it lies
          inside the range of ncu's own runs ("inside ncu's spread": ncu cannot tell
          those values apart either; a near-idle unit's active cycles move 10-15 %
          between ncu's runs of one kernel).
          The tolerances are the kernels issue's, for its six kernels (ISSUE_CASES).
          The other cases check the launch APIs: everything above holds for them except
          that a duration, cycle count or throughput beyond the tolerance is reported
          as "differs" rather than failing (docs/PERFORMANCE.md has their figures).
speed     Whole-command wall time of the seed's case, bare, under
            ncu --set basic --clock-control none --cache-control CACHE
                --kernel-name regex:gemm --launch-count 1
            strata kernels --cache-control CACHE --kernel-name regex:gemm --launch-count 1
          in ROUNDS interleaved rounds, the order rotated per round; the added time is
          the median of per-round differences against that round's bare run.
          Workloads: torch (examples/torch_matmul.py --mode slow_loop_sync, the PyTorch
          case; anchor: ncu's whole run took 6.98 s) and native (gpu_matmul --mode
          slow_loop_sync). Goal (the kernels issue): strata's added time <= 1/3 of ncu's.

usage: kernels_vs_ncu.py BUILD_DIR OUTDIR [ROUNDS] [accuracy|speed|all]
  ROUNDS  default 3; the part default all
  env:    NCU (default ncu on PATH), PYTHON (default /opt/torch/.venv/bin/python3),
          KERNELS_CASES=sgemm_small,reduction,... (accuracy cases to run; default all),
          NCU_CACHE_CONTROL=all|none (both tools' cache policy, above; default all),
          KERNELS_METRICS=NAME,... (raw metrics both tools collect too, --metrics, and
          compared as the sections' are: to find which term of a throughput differs)
Prints a table last; logs, strata's JSON and OUTDIR/kernels_vs_ncu.json (every
comparison, every timed run) under OUTDIR.
Exit status: 0 every accuracy comparison passed ("differs" does not fail) and every run
worked (the speed goal is reported, not enforced); 1 a comparison failed or a run failed;
2 usage error;
77 no CUDA device or no ncu (skipped, as ctest counts it).
"""
import copy
import csv
import ctypes
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

# ---------------------------------------------------------------------------- cases

# name, zoo case (--only), kernel filter, launch skip, what it stands for.
# cuBLAS kernels cannot be renamed: with --only the process runs no other kernel, so
# regex:gemm --launch-skip 1 is the second call's gemm; if cuBLAS's kernel name has
# no "gemm" in it, the case falls back to regex:. (said in the log and the JSON).
CASES = [
    ("sgemm_small", "zoo_sgemm_small", "regex:gemm", 1, "cublasSgemm 64^3"),
    ("sgemm_large", "zoo_sgemm_large", "regex:gemm", 1, "cublasSgemm 4096^3"),
    ("elementwise", "zoo_elementwise", "regex:zoo_elementwise", 1, "memory-bound saxpy, 64M"),
    ("reduction", "zoo_reduction", "regex:zoo_reduction", 1, "smem reduction + atomics"),
    ("smem_limited", "zoo_smem_limited", "regex:zoo_smem_limited", 1, "100 KB dynamic smem"),
    ("register_limited", "zoo_register_limited", "regex:zoo_register_limited", 1,
     ">= 128 registers"),
    ("driver_launch", "zoo_driver_launch", "regex:zoo_driver_launch", 1, "cuLaunchKernel, 2D"),
    ("launch_ex", "zoo_launch_ex", "regex:zoo_launch_ex", 1, "cuLaunchKernelEx, cluster 2"),
    ("cooperative", "zoo_cooperative", "regex:zoo_cooperative", 1, "cooperative, grid sync"),
    ("graph", "zoo_graph", "regex:zoo_graph_b", 2, "CUDA graph node, 3rd replay"),
]
ZOO_REPEAT = 3
# The six kernels of the kernels issue's accuracy goal (part 5): their durations, cycles
# and throughputs must be within the tolerances. The other cases are there for the
# launch APIs (part 1); their counters are compared and reported, and a difference
# beyond the tolerance is "differs", not a failure (docstring).
ISSUE_CASES = {"sgemm_small", "sgemm_large", "elementwise", "reduction", "smem_limited",
               "register_limited"}
# Cases strata documents as not profiled (docs/kernels.md): it must profile no launch
# and say why on stderr (these words); ncu's values are logged, not compared.
NOT_PROFILED_BY_STRATA = {"graph": "kernels inside graphs are not profiled"}

# Values of ncu's basic sections: each group must be in strata's output when ncu
# has any of its names (alternatives: different ncu versions name a value
# differently). The 24 CUPTI metrics of shared/reference/ncu-metrics.md, then the
# computed Launch Statistics and Occupancy values.
REQUIRED = [[m] for m in (
    "gpu__time_duration.sum", "gpc__cycles_elapsed.max", "gpc__cycles_elapsed.avg.per_second",
    "dram__cycles_elapsed.avg.per_second",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed", "sm__cycles_active.avg",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__cycles_active.avg", "lts__cycles_active.avg", "smsp__cycles_active.avg",
    "dram__cycles_active.avg", "sm__cycles_elapsed.sum", "l1tex__cycles_elapsed.sum",
    "lts__cycles_elapsed.sum", "smsp__cycles_elapsed.sum", "dram__cycles_elapsed.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__warps_active.avg.per_cycle_active",
    "launch__block_size", "launch__grid_size", "launch__registers_per_thread",
    "launch__thread_count", "launch__shared_mem_config_size",
    "launch__shared_mem_per_block_driver", "launch__shared_mem_per_block_dynamic",
    "launch__shared_mem_per_block_static", "launch__waves_per_multiprocessor",
    "launch__occupancy_limit_blocks", "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
    "launch__occupancy_limit_barriers",
    "sm__maximum_warps_avg_per_active_cycle", "sm__maximum_warps_per_active_cycle_pct",
)] + [["launch__sm_count", "device__attribute_multiprocessor_count"]]

# ncu's own range counts as agreement only over at least this many of its runs.
MIN_SPREAD_RUNS = 3

# Decimals of strata's printed non-integer values (ncu's format: integers whole,
# everything else with two decimals); its JSON drops trailing zeros.
STRATA_DECIMALS = 2

# Identifiers, numbered by each tool its own way: never compared.
IDENTIFIERS = {"launch__stream_id", "launch__context_id", "launch__device_id", "launch__api"}

# The rows of the short table printed last, besides every failure.
KEY_METRICS = [
    "gpu__time_duration.sum", "gpc__cycles_elapsed.max",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "launch__registers_per_thread", "sm__maximum_warps_per_active_cycle_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
]

# ---------------------------------------------------------------------------- units

_TIME = {"s": 1.0, "second": 1.0, "sec": 1.0, "ms": 1e-3, "msecond": 1e-3, "us": 1e-6,
         "usecond": 1e-6, "\u00b5s": 1e-6, "ns": 1e-9, "nsecond": 1e-9, "ps": 1e-12,
         "psecond": 1e-12}
_FREQ = {"hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9, "thz": 1e12}
_BYTES = {"byte": 1.0, "b": 1.0, "kbyte": 1e3, "kb": 1e3, "mbyte": 1e6, "mb": 1e6,
          "gbyte": 1e9, "gb": 1e9, "tbyte": 1e12, "tb": 1e12, "kib": 1024.0,
          "mib": 1024.0 ** 2, "gib": 1024.0 ** 3}
# Counted things: dimensionless, like an empty unit.
_COUNTS = {"", "cycle", "block", "warp", "thread", "register", "sm", "inst", "sector",
           "request", "wavefront", "transaction", "pass", "cta", "cluster", "barrier"}
_PREFIX = {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}


class UnitError(ValueError):
    pass


def _atom(word):
    """One unit word -> (scale to base, (byte exp, second exp, percent exp))."""
    w = word.strip().lower()
    if w in _TIME:
        return _TIME[w], (0, 1, 0)
    if w in _FREQ:
        return _FREQ[w], (0, -1, 0)
    if w in _BYTES:
        return _BYTES[w], (1, 0, 0)
    if w in ("%", "percent", "pct"):
        return 1.0, (0, 0, 1)
    for plural in (w, w[:-1] if w.endswith("s") else None):
        if plural is not None and plural in _COUNTS:
            return 1.0, (0, 0, 0)
    if len(w) > 1 and w[0] in _PREFIX and w[1:] in _COUNTS:  # Kcycle, Minst
        return _PREFIX[w[0]], (0, 0, 0)
    raise UnitError(f"unknown unit {word!r}")


def unit_scale(unit):
    """'Kbyte/block' -> (1000.0, (1, 0, 0)); 'cycle/nsecond' -> (1e9, (0, -1, 0))."""
    parts = (unit or "").split("/")
    scale, dim = _atom(parts[0])
    for den in parts[1:]:
        s, d = _atom(den)
        scale /= s
        dim = tuple(a - b for a, b in zip(dim, d))
    return scale, dim


def dim_name(dim):
    names = []
    for exp, name in zip(dim, ("byte", "s", "%")):
        if exp:
            names.append(name if exp == 1 else f"{name}^{exp}")
    return "*".join(names) or "1"


# ---------------------------------------------------------------------------- numbers

class Num(float):
    """A number with the text it was printed as (for the printed rounding)."""

    def __new__(cls, text):
        t = str(text).strip().replace(",", "")
        value = float.__new__(cls, t)
        value.text = t
        return value


def parse_number(text):
    """ncu or strata text -> Num, or None if it is not a plain number."""
    if isinstance(text, Num):
        return text
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return Num(repr(text))
    t = str(text).strip().replace(",", "")
    if not re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", t):
        return None
    return Num(t)


def half_ulp(num, min_decimals=0):
    """Half a unit in the last printed digit: what printing may have rounded away.
    min_decimals: the digits the value was printed with when its text has lost
    trailing zeros (strata prints non-integers with 2 decimals, as ncu does, and
    its JSON writes 135.20 as 135.2)."""
    text = getattr(num, "text", repr(float(num)))
    mantissa, _, exp = text.lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    if float(num) != math.floor(float(num)) or decimals > 0:
        decimals = max(decimals, min_decimals)
    return 0.5 * 10.0 ** (int(exp or 0) - decimals)


# ---------------------------------------------------------------------------- names

def base_name(demangled):
    """'void ns::f<int>(float *)' -> 'f': the function name without return type,
    template arguments, parameters or qualifiers (ncu's --kernel-name-base function)."""
    s = (demangled or "").strip()
    out, depth = [], 0
    for ch in s:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    top = "".join(out).strip()
    token = top.split()[-1] if top.split() else s
    return token.split("::")[-1]


# ---------------------------------------------------------------------------- parsers

def parse_ncu_raw_csv(text):
    """ncu --csv --page raw [--print-units base] output (with ==PROF== lines and the
    program's own output around it) -> list of results, one per profiled launch:
    {"info": {column: text}, "metrics": {metric: (text, unit)}}. Metric columns are
    those whose name has '__' (launch__block_size, sm__throughput...); the row after
    the header whose ID is empty holds the units."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = list(csv.reader(lines))
    results, header, units = [], None, None
    for row in rows:
        if row and row[0] == "ID":
            header, units = row, None
            continue
        if header is None or len(row) != len(header):
            continue
        if row[0] == "" and units is None:
            units = row
            continue
        info, metrics = {}, {}
        for i, col in enumerate(header):
            if "__" in col:
                metrics[col] = (row[i], units[i] if units else "")
            else:
                info[col] = row[i]
        results.append({"info": info, "metrics": metrics})
    return results


def _json_decoder():
    return json.JSONDecoder(parse_float=Num, parse_int=Num)


def extract_strata_json(text):
    """The {"kernels": [...]} object in strata's stdout (the program's own output may
    come before or after it; `strata report`'s one document keys its other reports
    beside "kernels") -> dict, or None."""
    dec = _json_decoder()
    for m in re.finditer(r"^\{", text, re.M):
        try:
            obj, _ = dec.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(obj, dict) and "kernels" in obj:
            return obj
    return None


def strata_metrics(kernel):
    """One kernel of strata's JSON -> {metric: (value, unit, label, section)}; the
    first occurrence of a metric wins (a value can be in two sections); grid and block
    as 'grid'/'block' tuples."""
    out = {}
    for section in kernel.get("sections", []):
        for m in section.get("metrics", []):
            name = m.get("metric")
            if not name or name in out:
                continue
            out[name] = (m.get("value"), m.get("unit", ""), m.get("name", ""),
                         section.get("name", ""))
    return out


def parse_dims(text):
    """'(256, 1, 1)' or [256, 1, 1] -> (256, 1, 1); None if neither."""
    if isinstance(text, (list, tuple)):
        try:
            return tuple(int(float(x)) for x in text)
        except (TypeError, ValueError):
            return None
    nums = re.findall(r"\d+", str(text or ""))
    return tuple(int(x) for x in nums) if nums else None


# ---------------------------------------------------------------------------- compare

def metric_class(name):
    if name.startswith(("launch__", "device__")) or name.startswith("sm__maximum_warps"):
        return "exact"
    if "pct_of_peak" in name or "throughput" in name or name.startswith("sm__warps_active"):
        return "3pt/10%"
    if name == "gpu__time_duration.sum" or "cycles" in name or name.endswith(".per_second"):
        return "5%"
    return "5%"


def compare_value(name, ncu_text, ncu_unit, s_value, s_unit, max_warps=64, ncu_spread=None):
    """One metric -> dict with verdict 'pass', 'FAIL' or 'skip' and the numbers.
    ncu_spread: (lowest, highest, runs) of ncu's own runs, in ncu_unit, or None."""
    cls = metric_class(name)
    rec = {"metric": name, "class": cls, "ncu": ncu_text, "ncu_unit": ncu_unit,
           "strata": s_value if not isinstance(s_value, Num) else s_value.text,
           "strata_unit": s_unit, "diff": None, "allowed": None, "note": ""}
    if name in IDENTIFIERS:
        return {**rec, "verdict": "skip", "note": "identifier, numbered by each tool"}
    n, s = parse_number(ncu_text), parse_number(s_value)
    if n is None or s is None:
        if n is None and s is None:
            same = str(ncu_text).strip() == str(s_value).strip()
            return {**rec, "verdict": "pass" if same else "FAIL",
                    "note": "" if same else "text differs"}
        if n is None and str(ncu_text).strip().lower() in ("", "n/a"):
            return {**rec, "verdict": "skip", "note": "ncu has no value"}
        return {**rec, "verdict": "FAIL", "note": "number against text"}
    try:
        ns, nd = unit_scale(ncu_unit)
        ss, sd = unit_scale(s_unit)
    except UnitError as e:
        return {**rec, "verdict": "FAIL", "note": str(e)}
    if nd != sd:
        return {**rec, "verdict": "FAIL",
                "note": f"units differ: {ncu_unit!r} ({dim_name(nd)}) vs {s_unit!r} ({dim_name(sd)})"}
    nb, sb = float(n) * ns, float(s) * ss
    rounding = max(half_ulp(n) * ns, half_ulp(s, STRATA_DECIMALS) * ss) * (1 + 1e-9)
    if cls == "exact":
        allowed = rounding
    elif cls == "5%":
        allowed = max(0.05 * abs(nb), rounding)
    else:
        points = 3.0 if nd == (0, 0, 1) else 0.03 * max_warps  # warps: 3 % of the SM's
        allowed = max(points, 0.10 * abs(nb), rounding)
    diff = sb - nb
    rec.update(ncu_base=nb, strata_base=sb, base_unit=dim_name(nd), diff=diff, allowed=allowed)
    if not (math.isfinite(nb) and math.isfinite(sb)):
        return {**rec, "verdict": "FAIL", "note": "not finite"}
    if abs(diff) <= allowed:
        return {**rec, "verdict": "pass"}
    if cls != "exact" and ncu_spread is not None and ncu_spread[2] >= MIN_SPREAD_RUNS:
        low, high = ncu_spread[0] * ns - rounding, ncu_spread[1] * ns + rounding
        if low <= sb <= high:
            return {**rec, "verdict": "pass",
                    "note": f"inside ncu's spread, {ncu_spread[0]:g}-{ncu_spread[1]:g} over "
                            f"{ncu_spread[2]} runs"}
    return {**rec, "verdict": "FAIL"}


def compare_launch(ncu_result, kernel):
    """All comparisons for one launch: ncu's raw result against strata's kernel."""
    recs = []
    info, nm = ncu_result["info"], ncu_result["metrics"]
    sm = strata_metrics(kernel)
    n_name, s_name = base_name(info.get("Kernel Name", "")), base_name(kernel.get("kernel", ""))
    recs.append({"metric": "kernel", "class": "exact", "ncu": n_name, "strata": s_name,
                 "verdict": "pass" if n_name == s_name else "FAIL",
                 "note": "" if n_name == s_name else "the tools picked different kernels"})
    for col, key in (("Grid Size", "grid"), ("Block Size", "block")):
        if col in info and key in kernel:
            a, b = parse_dims(info[col]), parse_dims(kernel[key])
            shown = "(" + ", ".join(str(x) for x in b) + ")" if b else str(kernel[key])
            recs.append({"metric": key, "class": "exact", "ncu": info[col], "strata": shown,
                         "verdict": "pass" if a == b and a is not None else "FAIL", "note": ""})
    status = kernel.get("status", 0)
    if float(status) != 0:
        recs.append({"metric": "status", "class": "exact", "ncu": "", "strata": status,
                     "verdict": "FAIL",
                     "note": f"strata could not collect this launch: {kernel.get('reason', '')}"})
    max_warps = 64
    mw = parse_number(nm.get("device__attribute_max_warps_per_multiprocessor", ("", ""))[0])
    if mw:
        max_warps = float(mw)
    for name, (value, unit, label, section) in sm.items():
        if name not in nm:
            recs.append({"metric": name, "class": metric_class(name), "ncu": None,
                         "strata": getattr(value, "text", value), "strata_unit": unit,
                         "label": label, "section": section, "verdict": "skip",
                         "note": "not in ncu's raw page"})
            continue
        rec = compare_value(name, nm[name][0], nm[name][1], value, unit, max_warps,
                            ncu_result.get("spread", {}).get(name))
        rec.update(label=label, section=section)
        recs.append(rec)
    for group in REQUIRED:
        if any(g in nm for g in group) and not any(g in sm for g in group):
            recs.append({"metric": group[0], "class": metric_class(group[0]),
                         "ncu": nm[next(g for g in group if g in nm)][0], "strata": None,
                         "verdict": "FAIL", "note": "in ncu's basic sections, not in strata's"})
    return recs


def merge_runs(values):
    """Several runs' texts of one value -> the median as a Num (keeping the coarsest
    printed rounding), or the first text if not numeric."""
    nums = [parse_number(v) for v in values]
    if not nums or any(n is None for n in nums):
        return values[0] if values else None
    med = statistics.median(float(n) for n in nums)
    coarse = max(nums, key=half_ulp)
    decimals = len(coarse.text.split(".")[1]) if "." in coarse.text and "e" not in coarse.text.lower() else 0
    return Num(f"{med:.{decimals}f}") if "e" not in coarse.text.lower() else Num(repr(med))


def merge_ncu(results):
    """ncu's runs -> one result of medians, plus "spread": metric -> (lowest, highest,
    runs) of the numeric values."""
    first = results[0]
    metrics, spread = {}, {}
    for name, (text, unit) in first["metrics"].items():
        texts = [r["metrics"][name][0] for r in results if name in r["metrics"]]
        merged = merge_runs(texts)
        metrics[name] = (getattr(merged, "text", merged), unit)
        nums = [parse_number(t) for t in texts]
        if nums and all(n is not None for n in nums):
            spread[name] = (min(float(n) for n in nums), max(float(n) for n in nums), len(nums))
    return {"info": first["info"], "metrics": metrics, "spread": spread}


def report_only(recs):
    """A case outside ISSUE_CASES: its counter values beyond the tolerance are 'differs'
    (reported, not failed); exact values and run problems still fail."""
    for rec in recs:
        if rec["verdict"] == "FAIL" and rec.get("class") in ("5%", "3pt/10%") and \
                rec.get("diff") is not None:
            rec["verdict"] = "differs"
    return recs


def merge_strata(kernels):
    if len(kernels) == 1:
        return kernels[0]
    first = copy.deepcopy(kernels[0])
    for section in first.get("sections", []):
        for m in section.get("metrics", []):
            texts = [v[0] for v in (strata_metrics(k).get(m.get("metric")) for k in kernels) if v]
            if texts:
                m["value"] = merge_runs(texts)
    return first


# ---------------------------------------------------------------------------- running

def run_logged(argv, log, env=None, cwd=None, timeout=300):
    """Runs argv; stdout and stderr (with the command) go to `log`. -> (rc, stdout, stderr)."""
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           errors="replace", env={**os.environ, **(env or {})}, cwd=cwd,
                           timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc = "timeout"
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    except OSError as e:
        rc, out, err = "not started", "", str(e)
    with open(log, "w") as f:
        f.write(f"$ {' '.join(argv)}\n# exit {rc}\n--- stdout\n{out}\n--- stderr\n{err}\n")
    return rc, out, err


def zoo_verified(out):
    """The zoo's own verdict in a run's output: True, or the reason it is not."""
    if re.search(r"^zoo_\w+: FAILED", out, re.M):
        return "; ".join(re.findall(r"^(zoo_\w+: FAILED.*)$", out, re.M))[:300]
    m = re.search(r"^gpu_kernel_zoo: (\d+) of (\d+) cases verified", out, re.M)
    if not m:
        return "the zoo printed no verdict (killed or not run?)"
    return True if m.group(1) == m.group(2) else m.group(0)


def have_gpu():
    """(True, '') where the driver sees a CUDA device, else (False, why)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return False, f"no CUDA driver ({e})"
    rc = cuda.cuInit(0)
    if rc != 0:
        return False, f"cuInit failed ({rc})"
    count = ctypes.c_int(0)
    rc = cuda.cuDeviceGetCount(ctypes.byref(count))
    if rc != 0 or count.value == 0:
        return False, f"no CUDA device (cuDeviceGetCount: {rc}, {count.value})"
    return True, ""


class Bench:
    def __init__(self, build, outdir, rounds):
        self.build, self.outdir, self.rounds = build, outdir, rounds
        self.strata = f"{build}/bin/strata"
        self.zoo = f"{build}/bin/gpu_kernel_zoo"
        self.ncu = os.environ.get("NCU", "ncu")
        self.python = os.environ.get("PYTHON", "/opt/torch/.venv/bin/python3")
        self.env = {"LD_LIBRARY_PATH": ":".join(
            p for p in (f"{build}/runtime-libs", os.environ.get("LD_LIBRARY_PATH", "")) if p)}
        self.work = os.path.join(outdir, "scratch")  # strata's and ncu's cwd: stray files land here
        os.makedirs(self.work, exist_ok=True)

    # ------------------------------------------------------------ accuracy
    @staticmethod
    def cache_control():
        # One cache policy for both tools (NCU_CACHE_CONTROL, default all): all flushes
        # caches before every replay pass (ncu's default and strata's); none leaves them as
        # the replay leaves them.
        return os.environ.get("NCU_CACHE_CONTROL", "all")

    @staticmethod
    def extra_metrics():
        # KERNELS_METRICS: the same --metrics for both tools (none by default).
        metrics = os.environ.get("KERNELS_METRICS", "")
        return ["--metrics", metrics] if metrics else []

    def ncu_argv(self, filt, skip, cmd):
        return [self.ncu, "--set", "basic", "--clock-control", "none", "--cache-control",
                self.cache_control(), "--kernel-name", filt, "--launch-skip", str(skip),
                "--launch-count", "1", "--csv", "--page", "raw",
                "--print-units", "base"] + self.extra_metrics() + cmd

    def strata_argv(self, filt, skip, cmd, trace):
        return [self.strata, "kernels", "--cache-control", self.cache_control(), "--kernel-name",
                filt, "--launch-skip", str(skip), "--launch-count", "1", "--format", "json",
                "-o", trace] + self.extra_metrics() + ["--"] + cmd

    def strata_json(self, out, trace, log):
        """strata's JSON from its stdout; else from -o (a JSON file, or a trace that
        `strata report --format json` reads)."""
        obj = extract_strata_json(out)
        if obj is not None or not os.path.exists(trace):
            return obj
        with open(trace, "rb") as f:
            head = f.read(16)
        if head.startswith(b"{"):
            with open(trace) as f:
                return extract_strata_json(f.read())
        rc, rout, _ = run_logged([self.strata, "report", trace, "--format", "json"],
                                 log + ".report.log", env=self.env, cwd=self.work)
        return extract_strata_json(rout)

    def accuracy_case(self, case):
        name, only, filt, skip, what = case
        cmd = [self.zoo, "--only", only, "--repeat", str(ZOO_REPEAT)]
        d = os.path.join(self.outdir, "accuracy")
        os.makedirs(d, exist_ok=True)
        problems, notes = [], []
        ncu_results, strata_kernels = [], []
        for r in range(self.rounds):
            log = f"{d}/{name}-ncu-{r}.log"
            rc, out, err = run_logged(self.ncu_argv(filt, skip, cmd), log, cwd=self.work)
            rows = parse_ncu_raw_csv(out)
            if not rows and r == 0 and filt == "regex:gemm":
                notes.append("ncu matched no regex:gemm kernel; both tools use regex:. "
                             "(the process runs only cuBLAS's kernels)")
                filt = "regex:."
                rc, out, err = run_logged(self.ncu_argv(filt, skip, cmd), log, cwd=self.work)
                rows = parse_ncu_raw_csv(out)
            ok = zoo_verified(out)
            if ok is not True:
                problems.append(f"under ncu the zoo's check failed: {ok} ({log})")
            if len(rows) != 1:
                tail = " | ".join((out + err).strip().splitlines()[-3:])[:300]
                problems.append(f"ncu profiled {len(rows)} launches, not 1 (exit {rc}): {tail}")
            else:
                ncu_results.append(rows[0])
            log = f"{d}/{name}-strata-{r}.log"
            trace = f"{self.work}/{name}-{r}.sqlite"
            for stale in (trace, trace + "-journal"):
                if os.path.exists(stale):
                    os.remove(stale)
            rc, out, err = run_logged(self.strata_argv(filt, skip, cmd, trace), log,
                                      env=self.env, cwd=self.work)
            ok = zoo_verified(out)
            if ok is not True:
                problems.append(f"under strata the zoo's check failed: {ok} ({log})")
            obj = self.strata_json(out, trace, log)
            kernels = obj.get("kernels", []) if obj else []
            if name in NOT_PROFILED_BY_STRATA:
                said = NOT_PROFILED_BY_STRATA[name] in err
                if kernels or not said:
                    problems.append(f"strata should profile no launch and say "
                                    f"'{NOT_PROFILED_BY_STRATA[name]}': profiled "
                                    f"{len(kernels)}, {'said' if said else 'did not say'} it")
                else:
                    notes.append("not profiled by strata, as documented; ncu's values logged")
            elif obj is None:
                tail = " | ".join(err.strip().splitlines()[-3:])[:300]
                problems.append(f"no JSON from strata kernels (exit {rc}): {tail}")
            elif len(kernels) != 1:
                tail = " | ".join(err.strip().splitlines()[-4:])[:400]
                problems.append(f"strata profiled {len(kernels)} launches, not 1 (exit {rc}): "
                                f"{tail}")
            else:
                strata_kernels.append(kernels[0])
                with open(f"{d}/{name}-strata-{r}.json", "w") as f:
                    json.dump(obj, f, indent=1, default=lambda o: float(o))
        recs = []
        if ncu_results and strata_kernels:
            recs = compare_launch(merge_ncu(ncu_results), merge_strata(strata_kernels))
            if name not in ISSUE_CASES:
                recs = report_only(recs)
            # A filter naming one zoo kernel: the launch strata profiled must be the one
            # after the skipped ones (ncu's raw page says nothing of invocations).
            if filt.startswith("regex:zoo_"):
                inv = [k.get("invocation") for k in strata_kernels]
                good = all(i is not None and float(i) == skip for i in inv)
                recs.append({"metric": "invocation", "class": "exact", "ncu": skip,
                             "strata": ",".join(str(getattr(i, "text", i)) for i in inv),
                             "verdict": "pass" if good else "FAIL",
                             "note": "" if good else "strata profiled another launch than "
                                                     "--launch-skip asks"})
        for p in problems:
            recs.append({"metric": "run", "class": "-", "ncu": None, "strata": None,
                         "verdict": "FAIL", "note": p})
        kernel = base_name(ncu_results[0]["info"].get("Kernel Name", "")) if ncu_results else "?"
        for rec in recs:
            rec.update(case=name, kernel=kernel)
        return {"case": name, "what": what, "zoo": only, "filter": filt, "skip": skip,
                "kernel": kernel, "notes": notes, "comparisons": recs}

    # ------------------------------------------------------------ speed
    def speed(self):
        d = os.path.join(self.outdir, "speed")
        os.makedirs(d, exist_ok=True)
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        workloads = {
            "torch": [self.python, f"{here}/examples/torch_matmul.py", "--mode",
                      "slow_loop_sync", "--device", "cuda", "--repeats", "128",
                      "--tile-size", "128"],
            "native": [f"{self.build}/bin/gpu_matmul", "--mode", "slow_loop_sync",
                       "--device", "cuda", "--repeats", "128", "--tile-size", "128"],
        }
        results = {}
        for wname, cmd in workloads.items():
            trace = f"{self.work}/speed-{wname}.sqlite"
            configs = {
                "bare": (cmd, {}),
                "ncu": ([self.ncu, "--set", "basic", "--clock-control", "none",
                         "--cache-control", self.cache_control(), "--kernel-name",
                         "regex:gemm", "--launch-count", "1"] + cmd, {}),
                "strata": ([self.strata, "kernels", "--cache-control", self.cache_control(),
                            "--kernel-name", "regex:gemm", "--launch-count", "1", "-o", trace,
                            "--"] + cmd, self.env),
            }
            names = list(configs)

            def timed(cname):
                if os.path.exists(trace):
                    os.remove(trace)
                argv, env = configs[cname]
                t = time.perf_counter()
                rc, out, err = run_logged(argv, f"{d}/{wname}-{cname}.log", env=env,
                                          cwd=self.work)
                wall = time.perf_counter() - t
                why = None
                if rc != 0:
                    why = f"exit {rc}"
                elif "elapsed_ms=" not in out:
                    why = "the program printed no elapsed_ms"
                elif cname != "bare" and "Speed Of Light" not in out + err:
                    why = "no kernel profiled (no Speed Of Light section in the output)"
                if why:
                    print(f"{wname} {cname}: {why}: {' '.join(argv)[:200]}\n"
                          f"{(err or out)[-400:]}", file=sys.stderr)
                    return None
                return wall

            for cname in names:  # warm-up: page cache, the driver's and cuBLAS's first loads
                timed(cname)
            data = {cname: [] for cname in names}
            for r in range(self.rounds):
                order = names[r % len(names):] + names[:r % len(names)]
                for cname in order:
                    data[cname].append(timed(cname))
            results[wname] = data
        return results


def case_failed(res):
    """A case fails on any FAIL, or when nothing was compared in a case strata should
    profile (a run that produced nothing); a case strata documents as not profiled
    (NOT_PROFILED_BY_STRATA) compares nothing when it holds, and a FAIL when it does not."""
    c = res["comparisons"]
    if any(r["verdict"] == "FAIL" for r in c):
        return True
    return not c and res["case"] not in NOT_PROFILED_BY_STRATA


def added(data, name):
    """Median over rounds of (config - bare) in that round; None if nothing ran."""
    diffs = [c - b for c, b in zip(data[name], data["bare"]) if c is not None and b is not None]
    return statistics.median(diffs) if diffs else None


def fmt_value(v, unit):
    if v is None:
        return "-"
    n = parse_number(v)
    text = getattr(n, "text", str(v)) if n is not None else str(v)
    return f"{text} {unit}".strip() if unit else text


def accuracy_table(results, full=False):
    lines = [f"{'case':16s} {'metric':58s} {'ncu':>18s} {'strata':>18s} {'diff':>10s}  verdict"]
    for res in results:
        for rec in res["comparisons"]:
            if not full and rec["verdict"] not in ("FAIL", "differs") and \
                    rec["metric"] not in KEY_METRICS:
                continue
            diff, nb = rec.get("diff"), rec.get("ncu_base")
            if diff is None:
                dtext = "-"
            elif rec.get("base_unit") == "%":
                dtext = f"{diff:+.2f}pt"
            elif nb:
                dtext = f"{100.0 * diff / nb:+.1f}%"
            else:
                dtext = f"{diff:+.3g}"
            verdict = rec["verdict"] + (f" ({rec['note']})" if rec.get("note") else "")
            lines.append(f"{res['case']:16s} {rec['metric'][:58]:58s} "
                         f"{fmt_value(rec.get('ncu'), rec.get('ncu_unit', ''))[:18]:>18s} "
                         f"{fmt_value(rec.get('strata'), rec.get('strata_unit', ''))[:18]:>18s} "
                         f"{dtext:>10s}  {verdict}")
    return "\n".join(lines)


def main(argv):
    if len(argv) < 2 or argv[0] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        return 2
    build, outdir = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    try:
        rounds = int(argv[2]) if len(argv) > 2 else 3
    except ValueError:
        rounds = 0
    part = argv[3] if len(argv) > 3 else "all"
    if rounds < 1 or part not in ("accuracy", "speed", "all"):
        print("kernels_vs_ncu.py: ROUNDS must be >= 1 and the part accuracy, speed or all",
              file=sys.stderr)
        return 2
    ok, why = have_gpu()
    if not ok:
        print(f"kernels_vs_ncu.py: {why}: skipped")
        return 77
    bench = Bench(build, outdir, rounds)
    if bench.cache_control() not in ("all", "none"):
        print(f"kernels_vs_ncu.py: NCU_CACHE_CONTROL={bench.cache_control()!r}: use all or none",
              file=sys.stderr)
        return 2
    if shutil.which(bench.ncu) is None:
        print(f"kernels_vs_ncu.py: no ncu ({bench.ncu!r} not found; set NCU): skipped")
        return 77
    for exe in (bench.strata, bench.zoo):
        if not os.access(exe, os.X_OK):
            print(f"kernels_vs_ncu.py: {exe} is missing: build it first", file=sys.stderr)
            return 1
    p = subprocess.run([bench.strata, "kernels", "--help"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, env={**os.environ, **bench.env})
    if p.returncode != 0:
        print(f"kernels_vs_ncu.py: `strata kernels --help` failed (exit {p.returncode}): "
              f"{p.stdout.strip()[-300:]}", file=sys.stderr)
        return 1
    if "--cache-control" not in p.stdout:
        print(f"kernels_vs_ncu.py: {bench.strata} has no --cache-control: rebuild it",
              file=sys.stderr)
        return 1
    os.makedirs(outdir, exist_ok=True)
    report = {"rounds": rounds, "part": part, "ncu": bench.ncu,
              "cache_control": bench.cache_control()}
    acc_failed, run_failed = False, False
    acc = []
    if part in ("accuracy", "all"):
        wanted = [c for c in os.environ.get("KERNELS_CASES", "").split(",") if c]
        unknown = set(wanted) - {c[0] for c in CASES}
        if unknown:
            print(f"kernels_vs_ncu.py: KERNELS_CASES has unknown cases {sorted(unknown)}",
                  file=sys.stderr)
            return 2
        for case in CASES:
            if wanted and case[0] not in wanted:
                continue
            res = bench.accuracy_case(case)
            acc.append(res)
            n_fail = sum(r["verdict"] == "FAIL" for r in res["comparisons"])
            n_differ = sum(r["verdict"] == "differs" for r in res["comparisons"])
            print(f"{case[0]}: {res['kernel']}: {n_fail} failed, {n_differ} differ, of "
                  f"{sum(r['verdict'] != 'skip' for r in res['comparisons'])} compared"
                  + (f"; {'; '.join(res['notes'])}" if res["notes"] else ""), file=sys.stderr)
        report["accuracy"] = acc
        with open(f"{outdir}/accuracy.txt", "w") as f:
            f.write(accuracy_table(acc, full=True) + "\n")
    speed = None
    if part in ("speed", "all"):
        speed = bench.speed()
        report["speed"] = speed
    with open(f"{outdir}/kernels_vs_ncu.json", "w") as f:
        json.dump(report, f, indent=1, default=lambda o: float(o) if isinstance(o, float) else str(o))

    if acc:
        cache = bench.cache_control()
        # The title's start is what scripts/gpu-kernels-session looks for.
        print(f"\naccuracy: strata kernels vs ncu --set basic --clock-control none, both "
              f"--cache-control {cache}, {rounds} "
              f"run(s) per tool (medians); key metrics, every failure and difference "
              f"(all: {outdir}/accuracy.txt)")
        print(f"{'case':16s} {'kernel':44s} {'compared':>8s} {'passed':>6s} {'failed':>6s} "
              f"{'differ':>6s} {'skipped':>7s}")
        for res in acc:
            c = res["comparisons"]
            n = {v: sum(r["verdict"] == v for r in c) for v in ("pass", "FAIL", "differs", "skip")}
            issue = res["case"] in ISSUE_CASES
            print(f"{res['case']:16s} {res['kernel'][:44]:44s} "
                  f"{n['pass'] + n['FAIL'] + n['differs']:8d} {n['pass']:6d} {n['FAIL']:6d} "
                  f"{n['differs'] if not issue else '-':>6} {n['skip']:7d}")
            acc_failed = acc_failed or case_failed(res)
        print()
        print(accuracy_table(acc))
    if speed is not None:
        print(f"\nadded wall time of the whole command, {rounds} interleaved rounds, medians of "
              f"per-round differences vs bare")
        print(f"{'workload':8s} {'tool':8s} {'median s':>9s} {'added s':>9s}")
        verdicts = []
        for wname, data in speed.items():
            for name in data:
                vals = [x for x in data[name] if x is not None]
                if len(vals) < len(data[name]):
                    run_failed = True
                if not vals:
                    print(f"{wname:8s} {name:8s} {'failed':>9s}")
                    continue
                add = added(data, name) if name != "bare" else 0.0
                add_text = f"{add:+9.3f}" if add is not None else f"{'-':>9s}"
                print(f"{wname:8s} {name:8s} {statistics.median(vals):9.3f} {add_text}")
            s, n = added(data, "strata"), added(data, "ncu")
            if s is None or n is None or n <= 0:
                verdicts.append(f"{wname}: no ratio (a tool's runs failed or ncu added nothing)")
                continue
            verdicts.append(f"{wname}: strata +{s:.3f} s vs ncu +{n:.3f} s: ratio {s / n:.3f}, "
                            f"goal <= 0.333: {'met' if s <= n / 3 else 'NOT met'}")
        if "torch" in speed and any(x is not None for x in speed["torch"]["ncu"]):
            verdicts.append("torch: ncu's whole run "
                            f"{statistics.median(x for x in speed['torch']['ncu'] if x is not None):.2f} s"
                            " (anchor, 2026-12-01: 6.98 s)")
        print("\n".join(verdicts))
    if acc:
        n_cmp = sum(r["verdict"] != "skip" for res in acc for r in res["comparisons"])
        n_fail = sum(r["verdict"] == "FAIL" for res in acc for r in res["comparisons"])
        n_differ = sum(r["verdict"] == "differs" for res in acc for r in res["comparisons"])
        n_spread = sum(r["verdict"] == "pass" and "ncu's spread" in r.get("note", "")
                       for res in acc for r in res["comparisons"])
        print(f"\naccuracy: {len(acc)} cases, {n_cmp} comparisons, {n_fail} failed, "
              f"{n_spread} passed inside ncu's spread, {n_differ} differ in the launch-API "
              f"cases: {'FAILED' if acc_failed else 'all passed'}")
    if run_failed:
        print("speed: some timed runs failed (see stderr and the logs)")
    return 1 if acc_failed or run_failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
