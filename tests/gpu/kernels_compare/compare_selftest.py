"""CPU self-test of bench/kernels_vs_ncu.py's parsing and comparison, on canned inputs.

Every ncu and strata text below is SYNTHETIC, but for the last section, which reads
real captures from tests/data/kernels-zoo-h200: written by hand from the documented
formats (ncu --csv --page raw --print-units base: a header row of "ID", "Process ID",
..., "Kernel Name", ... and metric names, a row of units, one row per profiled launch;
strata kernels --format json: docs/kernels-interface.md), with values shaped like
the anchor figures of the first gemm of the seed's PyTorch case. None of it is output
of a GPU run. It checks that the script parses those shapes, converts units, applies
the tolerances, and turns wrong values, wrong kernels, missing values and broken runs
into failures; and it drives one accuracy case end to end with fake `ncu` and `strata`
executables that print canned text.

  python3 compare_selftest.py PATH/TO/bench/kernels_vs_ncu.py
Exit 0 when every check holds, 1 otherwise (each failed check is printed).
"""
import copy
import importlib.util
import json
import os
import stat
import sys
import tempfile

spec = importlib.util.spec_from_file_location("kernels_vs_ncu", sys.argv[1])
kv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kv)

failures = []


def check(cond, what):
    print(f"{'ok  ' if cond else 'FAIL'} {what}")
    if not cond:
        failures.append(what)


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


# ---------------------------------------------------------------- SYNTHETIC inputs

SYNTHETIC_NCU_COLUMNS = [
    # (metric, unit, value as ncu would print it in base units; thousands separators
    # included on purpose, since the script must cope with them)
    ("dram__cycles_elapsed.avg.per_second", "cycle/nsecond", "3.19"),
    ("gpc__cycles_elapsed.avg.per_second", "cycle/second", "1,980,000,000"),
    ("gpc__cycles_elapsed.max", "cycle", "15,368"),
    ("gpu__time_duration.sum", "nsecond", "7,776"),
    ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "%", "1.90"),
    ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "%", "0.43"),
    ("l1tex__throughput.avg.pct_of_peak_sustained_active", "%", "19.91"),
    ("lts__throughput.avg.pct_of_peak_sustained_elapsed", "%", "1.40"),
    ("sm__cycles_active.avg", "cycle", "1,462.67"),
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "1.64"),
    ("launch__block_size", "", "64"),
    ("launch__grid_size", "", "16"),
    ("launch__registers_per_thread", "register/thread", "80"),
    ("launch__shared_mem_config_size", "byte", "135,168"),
    ("launch__shared_mem_per_block_driver", "byte/block", "1,024"),
    ("launch__shared_mem_per_block_dynamic", "byte/block", "6,528"),
    ("launch__shared_mem_per_block_static", "byte/block", "0"),
    ("launch__thread_count", "thread", "1,024"),
    ("launch__waves_per_multiprocessor", "", "0.01"),
    ("launch__occupancy_limit_blocks", "block", "32"),
    ("launch__occupancy_limit_registers", "block", "12"),
    ("launch__occupancy_limit_shared_mem", "block", "17"),
    ("launch__occupancy_limit_warps", "block", "32"),
    ("launch__occupancy_limit_barriers", "block", "32"),
    ("sm__maximum_warps_avg_per_active_cycle", "warp", "24"),
    ("sm__maximum_warps_per_active_cycle_pct", "%", "37.5"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "%", "3.12"),
    ("sm__warps_active.avg.per_cycle_active", "warp", "2.00"),
    ("device__attribute_multiprocessor_count", "", "132"),
    ("device__attribute_max_warps_per_multiprocessor", "", "64"),
    ("launch__occupancy_per_block_size", "", "(32,100);(64,100)"),
]
SYNTHETIC_KERNEL = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_cublas"


def synthetic_ncu_output(columns=SYNTHETIC_NCU_COLUMNS, kernel=SYNTHETIC_KERNEL, launches=1):
    def row(cells):
        return ",".join('"' + c.replace('"', '""') + '"' for c in cells)
    info = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
            "Block Size", "Grid Size", "Device", "CC"]
    lines = ["==PROF== Connected to process 4242 (/build/bin/gpu_kernel_zoo)",
             "gpu_kernel_zoo: NVIDIA H200, 132 SMs, CC 9.0, repeat 3",
             f'==PROF== Profiling "{kernel}" - 0: 0%....50%....100% - 9 passes',
             "zoo_sgemm_small: ok (3 calls 64^3, 4096 entries checked)",
             "gpu_kernel_zoo: 1 of 1 cases verified",
             "==PROF== Disconnected from process 4242"]
    if launches:
        lines.append(row(info + [c[0] for c in columns]))
        lines.append(row([""] * len(info) + [c[1] for c in columns]))
    for i in range(launches):
        lines.append(row([str(i), "4242", "gpu_kernel_zoo", "127.0.0.1", kernel, "1", "7",
                          "(64, 1, 1)", "(16, 1, 1)", "0", "9.0"] + [c[2] for c in columns]))
    return "\n".join(lines) + "\n"


def synthetic_strata_json(kernel=SYNTHETIC_KERNEL):
    def m(name, metric, unit, value):
        return {"name": name, "metric": metric, "unit": unit, "value": value}
    sol = [m("DRAM Frequency", "dram__cycles_elapsed.avg.per_second", "Ghz", 3.19),
           m("SM Frequency", "gpc__cycles_elapsed.avg.per_second", "Ghz", 1.98),
           m("Elapsed Cycles", "gpc__cycles_elapsed.max", "cycle", 15368),
           m("Memory Throughput", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
             "%", 1.90),
           m("DRAM Throughput", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "%", 0.43),
           m("Duration", "gpu__time_duration.sum", "us", 7.78),
           m("L1/TEX Cache Throughput", "l1tex__throughput.avg.pct_of_peak_sustained_active", "%",
             19.91),
           m("L2 Cache Throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed", "%", 1.40),
           m("SM Active Cycles", "sm__cycles_active.avg", "cycle", 1462.67),
           m("Compute (SM) Throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%",
             1.64)]
    launch = [m("Block Size", "launch__block_size", "", 64),
              m("Grid Size", "launch__grid_size", "", 16),
              m("Registers Per Thread", "launch__registers_per_thread", "register/thread", 80),
              m("Shared Memory Configuration Size", "launch__shared_mem_config_size", "Kbyte",
                135.17),
              m("Driver Shared Memory Per Block", "launch__shared_mem_per_block_driver",
                "Kbyte/block", 1.02),
              m("Dynamic Shared Memory Per Block", "launch__shared_mem_per_block_dynamic",
                "Kbyte/block", 6.53),
              m("Static Shared Memory Per Block", "launch__shared_mem_per_block_static",
                "byte/block", 0),
              m("# SMs", "device__attribute_multiprocessor_count", "SM", 132),
              m("Threads", "launch__thread_count", "thread", 1024),
              m("Waves Per SM", "launch__waves_per_multiprocessor", "", 0.01),
              m("Stream", "launch__stream_id", "", 13),
              m("Cooperative", "launch__cooperative", "", 0)]
    occ = [m("Block Limit Barriers", "launch__occupancy_limit_barriers", "block", 32),
           m("Block Limit SM", "launch__occupancy_limit_blocks", "block", 32),
           m("Block Limit Registers", "launch__occupancy_limit_registers", "block", 12),
           m("Block Limit Shared Mem", "launch__occupancy_limit_shared_mem", "block", 17),
           m("Block Limit Warps", "launch__occupancy_limit_warps", "block", 32),
           m("Theoretical Active Warps per SM", "sm__maximum_warps_avg_per_active_cycle", "warp",
             24),
           m("Theoretical Occupancy", "sm__maximum_warps_per_active_cycle_pct", "%", 37.5),
           m("Achieved Occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active", "%", 3.12),
           m("Achieved Active Warps Per SM", "sm__warps_active.avg.per_cycle_active", "warp", 2.0)]
    return {"kernels": [{"kernel": kernel, "mangled": kernel, "invocation": 1, "device": 0,
                         "cc": "9.0", "grid": [16, 1, 1], "block": [64, 1, 1], "status": 0,
                         "sections": [
                             {"name": "GPU Speed Of Light Throughput", "metrics": sol,
                              "guidance": []},
                             {"name": "Launch Statistics", "metrics": launch, "guidance": []},
                             {"name": "Occupancy", "metrics": occ, "guidance": []}]}]}


def strata_stdout(obj):
    return ("gpu_kernel_zoo: NVIDIA H200, 132 SMs, CC 9.0, repeat 3\n{ not json, a stray brace\n"
            "zoo_sgemm_small: ok (3 calls 64^3, 4096 entries checked)\n"
            "gpu_kernel_zoo: 1 of 1 cases verified\n" + json.dumps(obj, indent=1) + "\n"
            "strata: 1 kernel profiled\n")


def parsed_strata(obj):
    return kv.extract_strata_json(strata_stdout(obj))["kernels"][0]


def failed(recs):
    return sorted(r["metric"] for r in recs if r["verdict"] == "FAIL")


# ---------------------------------------------------------------- units and numbers

s, d = kv.unit_scale("nsecond")
check(close(s, 1e-9) and d == (0, 1, 0), "nsecond is 1e-9 s")
check(kv.unit_scale("us")[0] == 1e-6 and kv.unit_scale("us")[1] == (0, 1, 0), "us is 1e-6 s")
g = kv.unit_scale("Ghz")
check(g[1] == kv.unit_scale("cycle/nsecond")[1] == kv.unit_scale("cycle/second")[1] == (0, -1, 0),
      "Ghz, cycle/nsecond and cycle/second are all frequencies")
check(close(g[0], kv.unit_scale("cycle/nsecond")[0]) and close(g[0], 1e9), "1 Ghz = 1 cycle/ns")
check(kv.unit_scale("Kbyte/block") == (1000.0, (1, 0, 0)), "Kbyte/block is 1000 bytes")
check(kv.unit_scale("register/thread")[1] == (0, 0, 0), "register/thread is a count")
check(kv.unit_scale("")[1] == kv.unit_scale("block")[1] == kv.unit_scale("SM")[1],
      "empty unit, block and SM are all counts")
check(kv.unit_scale("%")[1] == (0, 0, 1), "% is a percentage")
try:
    kv.unit_scale("furlong/fortnight")
    check(False, "an unknown unit raises UnitError")
except kv.UnitError:
    check(True, "an unknown unit raises UnitError")
check(kv.parse_number("1,462.67") == 1462.67, "thousands separators are dropped")
check(kv.parse_number("(64, 1, 1)") is None and kv.parse_number("n/a") is None,
      "tuples and n/a are not numbers")
check(close(kv.half_ulp(kv.Num("135.17")), 0.005), "half ulp of 135.17 is 0.005")
check(kv.half_ulp(kv.Num("15368")) == 0.5, "half ulp of 15368 is 0.5")
check(close(kv.half_ulp(kv.Num("1.98e+09")), 5e6), "half ulp of 1.98e+09 is 5e6")

# ---------------------------------------------------------------- kernel names

check(kv.base_name("void zoo_x<int, 4>(float *, int)") == "zoo_x", "template and params dropped")
check(kv.base_name("(anonymous namespace)::zoo_y(unsigned int *)") == "zoo_y",
      "anonymous namespace dropped")
check(kv.base_name(SYNTHETIC_KERNEL) == SYNTHETIC_KERNEL, "extern C name kept")
check(kv.base_name("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>("
                   "cutlass_80_simt_sgemm_128x64_8x5_nn_align1::Params)") == "Kernel2",
      "qualified template kernel: its function name")

# ---------------------------------------------------------------- ncu's raw CSV

rows = kv.parse_ncu_raw_csv(synthetic_ncu_output())
check(len(rows) == 1, "one launch in the synthetic raw page")
r0 = rows[0]
check(r0["info"]["Kernel Name"] == SYNTHETIC_KERNEL and r0["info"]["Block Size"] == "(64, 1, 1)",
      "info columns read")
check(r0["metrics"]["gpu__time_duration.sum"] == ("7,776", "nsecond"), "value and unit of a metric")
check(len(r0["metrics"]) == len(SYNTHETIC_NCU_COLUMNS), "every metric column read")
check(kv.parse_ncu_raw_csv(synthetic_ncu_output(launches=0)) == [], "no kernel profiled: no rows")
check(len(kv.parse_ncu_raw_csv(synthetic_ncu_output(launches=2))) == 2, "two launches: two rows")

# ---------------------------------------------------------------- strata's JSON

obj = kv.extract_strata_json(strata_stdout(synthetic_strata_json()))
check(obj is not None and len(obj["kernels"]) == 1, "JSON found among the program's output")
check(kv.extract_strata_json("zoo: ok\nno json here\n") is None, "no JSON: None")
k0 = obj["kernels"][0]
sm = kv.strata_metrics(k0)
check(sm["launch__shared_mem_config_size"][0].text == "135.17", "printed text of a value kept")

# ---------------------------------------------------------------- single comparisons

def verdict(name, ncu_text, ncu_unit, s_text, s_unit):
    return kv.compare_value(name, ncu_text, ncu_unit, kv.Num(s_text), s_unit)["verdict"]


check(verdict("gpu__time_duration.sum", "7,776", "nsecond", "7.78", "us") == "pass",
      "duration 7776 ns vs 7.78 us: pass")
check(verdict("gpu__time_duration.sum", "7,776", "nsecond", "8.12", "us") == "pass",
      "duration +4.4 %: pass")
check(verdict("gpu__time_duration.sum", "7,776", "nsecond", "8.20", "us") == "FAIL",
      "duration +5.5 %: FAIL")
check(verdict("gpc__cycles_elapsed.max", "15,368", "cycle", "14500", "cycle") == "FAIL",
      "cycles -5.6 %: FAIL")
check(verdict("gpc__cycles_elapsed.avg.per_second", "1,980,000,000", "cycle/second", "1.98",
              "Ghz") == "pass", "frequency in cycle/second vs Ghz: pass")
check(verdict("sm__throughput.avg.pct_of_peak_sustained_elapsed", "1.64", "%", "4.5", "%") ==
      "pass", "throughput +2.9 points: pass")
check(verdict("sm__throughput.avg.pct_of_peak_sustained_elapsed", "20.0", "%", "23.5", "%") ==
      "FAIL", "throughput +3.5 points (17 % relative): FAIL")
check(verdict("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "50.0", "%", "54.5", "%")
      == "pass", "throughput +4.5 points but 9 % relative: pass")
check(verdict("sm__warps_active.avg.per_cycle_active", "2.00", "warp", "3.8", "warp") == "pass",
      "achieved warps +1.8 (3 % of 64 warps is 1.92): pass")
check(verdict("sm__warps_active.avg.per_cycle_active", "2.00", "warp", "4.0", "warp") == "FAIL",
      "achieved warps +2.0: FAIL")
check(verdict("launch__registers_per_thread", "80", "register/thread", "81", "register/thread")
      == "FAIL", "registers 80 vs 81: FAIL (exact)")
check(verdict("launch__shared_mem_config_size", "135,168", "byte", "135.17", "Kbyte") == "pass",
      "135168 byte vs 135.17 Kbyte: pass (printed rounding)")
check(verdict("launch__shared_mem_config_size", "135,168", "byte", "135.2", "Kbyte") == "FAIL",
      "135168 byte vs 135.2 Kbyte: FAIL (strata printed 135.20; JSON dropped the zero)")
check(verdict("launch__shared_mem_config_size", "135,000", "byte", "135", "Kbyte") == "pass",
      "135000 byte vs 135 Kbyte (an integral print): pass")
check(close(kv.half_ulp(kv.Num("7.8"), 2), 0.005) and kv.half_ulp(kv.Num("80"), 2) == 0.5,
      "strata's texts: two decimals unless integral")
check(verdict("launch__shared_mem_config_size", "135,168", "byte", "135.18", "Kbyte") == "FAIL",
      "135168 byte vs 135.18 Kbyte: FAIL")
check(verdict("gpc__cycles_elapsed.max", "15,368", "cycle", "15368.0", "cycle") == "pass",
      "an integral value as JSON writes a double (15368.0): pass")
check(verdict("launch__waves_per_multiprocessor", "0.01", "", "0.0121", "") == "pass",
      "waves 0.01 (ncu's rounding) vs 0.0121: pass")
check(verdict("sm__maximum_warps_per_active_cycle_pct", "37.5", "%", "25", "%") == "FAIL",
      "theoretical occupancy 37.5 vs 25: FAIL")
check(verdict("launch__block_size", "64", "", "64", "block") == "pass",
      "count units are interchangeable")
check(verdict("gpu__time_duration.sum", "7,776", "nsecond", "7.78", "%") == "FAIL",
      "time against percent: FAIL")
check(verdict("gpu__time_duration.sum", "7,776", "nsecond", "7.78", "parsec") == "FAIL",
      "unknown unit: FAIL")
check(verdict("launch__stream_id", "7", "", "13", "") == "skip", "identifiers are not compared")
check(kv.compare_value("launch__func_cache_config", "CachePreferNone", "", "CachePreferNone",
                       "")["verdict"] == "pass", "equal texts: pass")
check(kv.compare_value("launch__func_cache_config", "CachePreferNone", "", "CachePreferL1",
                       "")["verdict"] == "FAIL", "different texts: FAIL")

# ---------------------------------------------------------------- one launch, every value

ncu_row = kv.parse_ncu_raw_csv(synthetic_ncu_output())[0]
recs = kv.compare_launch(ncu_row, parsed_strata(synthetic_strata_json()))
check(failed(recs) == [], f"synthetic launch: every value agrees (failed: {failed(recs)})")
compared = [r for r in recs if r["verdict"] == "pass"]
check(len(compared) >= 30, f"synthetic launch: {len(compared)} values compared")
skipped = sorted(r["metric"] for r in recs if r["verdict"] == "skip")
check(skipped == ["launch__cooperative", "launch__stream_id"],
      f"strata-only values and identifiers skipped ({skipped})")

bad = synthetic_strata_json()
bad["kernels"][0]["kernel"] = "zoo_elementwise_saxpy"
check("kernel" in failed(kv.compare_launch(ncu_row, parsed_strata(bad))),
      "different kernel picked: FAIL")

bad = synthetic_strata_json()
bad["kernels"][0]["grid"] = [32, 1, 1]
check("grid" in failed(kv.compare_launch(ncu_row, parsed_strata(bad))), "different grid: FAIL")

bad = synthetic_strata_json()
bad["kernels"][0]["status"] = 35
check("status" in failed(kv.compare_launch(ncu_row, parsed_strata(bad))),
      "strata status != 0: FAIL")

bad = synthetic_strata_json()
occ = bad["kernels"][0]["sections"][2]["metrics"]
occ[:] = [m for m in occ if m["metric"] != "sm__maximum_warps_per_active_cycle_pct"]
check(failed(kv.compare_launch(ncu_row, parsed_strata(bad))) ==
      ["sm__maximum_warps_per_active_cycle_pct"], "theoretical occupancy missing in strata: FAIL")

bad = synthetic_strata_json()
for m in bad["kernels"][0]["sections"][1]["metrics"]:
    if m["metric"] == "device__attribute_multiprocessor_count":
        m["metric"] = "launch__sm_count"
check(failed(kv.compare_launch(ncu_row, parsed_strata(bad))) == [],
      "# SMs under either name satisfies the required group")

bad = synthetic_strata_json()
bad["kernels"][0]["sections"][0]["metrics"][5]["value"] = 9.9  # Duration
check(failed(kv.compare_launch(ncu_row, parsed_strata(bad))) == ["gpu__time_duration.sum"],
      "duration 27 % off: exactly that value fails")

# Medians over runs.
runs = [kv.parse_ncu_raw_csv(synthetic_ncu_output())[0] for _ in range(3)]
runs[1] = copy.deepcopy(runs[1])
runs[1]["metrics"]["gpu__time_duration.sum"] = ("9,000", "nsecond")
runs[2] = copy.deepcopy(runs[2])
runs[2]["metrics"]["gpu__time_duration.sum"] = ("7,700", "nsecond")
merged = kv.merge_ncu(runs)
check(float(kv.parse_number(merged["metrics"]["gpu__time_duration.sum"][0])) == 7776.0,
      "ncu's runs: the median value")
kernels = [parsed_strata(synthetic_strata_json()) for _ in range(3)]
kernels[0]["sections"][0]["metrics"][5]["value"] = kv.Num("20.00")
kernels[2]["sections"][0]["metrics"][5]["value"] = kv.Num("7.70")
mk = kv.merge_strata(kernels)
check(float(kv.strata_metrics(mk)["gpu__time_duration.sum"][0]) == 7.78,
      "strata's runs: the median value")

# ncu's own spread: with 3+ runs, a median outside the tolerance still passes when it
# lies inside the range of ncu's runs; with fewer runs, or outside that range, or for an
# exact value, it fails.
spread = (2750.0, 3140.0, 3)
rec = kv.compare_value("lts__cycles_active.avg", "2835", "cycle", kv.Num("3010"), "cycle",
                       ncu_spread=spread)
check(rec["verdict"] == "pass" and "inside ncu's spread" in rec["note"],
      "6 % off but inside ncu's 3-run range: pass, said so")
check(kv.compare_value("lts__cycles_active.avg", "2835", "cycle", kv.Num("3010"), "cycle",
                       ncu_spread=(2750.0, 3140.0, 2))["verdict"] == "FAIL",
      "inside ncu's range of only 2 runs: FAIL")
check(kv.compare_value("lts__cycles_active.avg", "2835", "cycle", kv.Num("3200"), "cycle",
                       ncu_spread=spread)["verdict"] == "FAIL",
      "outside ncu's range: FAIL")
check(kv.compare_value("launch__registers_per_thread", "16", "register/thread", kv.Num("17"),
                       "register/thread", ncu_spread=(16.0, 18.0, 3))["verdict"] == "FAIL",
      "an exact value is never rescued by ncu's spread")
check(kv.compare_value("gpu__time_duration.sum", "2,688", "nsecond", kv.Num("2.85"), "us",
                       ncu_spread=(2656.0, 2720.0, 3))["verdict"] == "FAIL",
      "units converted before the range test: 2.85 us is outside 2656-2720 ns")
three = [kv.parse_ncu_raw_csv(synthetic_ncu_output())[0] for _ in range(3)]
for i, text in enumerate(("1,400.00", "1,462.67", "1,700.50")):
    three[i] = copy.deepcopy(three[i])
    three[i]["metrics"]["sm__cycles_active.avg"] = (text, "cycle")
m3 = kv.merge_ncu(three)
check(m3["spread"]["sm__cycles_active.avg"] == (1400.0, 1700.5, 3),
      "merge_ncu: the lowest, highest and count of ncu's runs")
check(m3["spread"]["launch__block_size"] == (64.0, 64.0, 3) and
      "launch__occupancy_per_block_size" not in m3["spread"],
      "merge_ncu: a spread for numbers only")

# The launch-API cases (not in ISSUE_CASES): counter values beyond the tolerance are
# reported as 'differs'; exact values and run problems still fail.
recs = [{"metric": "gpu__time_duration.sum", "class": "5%", "diff": 160.0, "verdict": "FAIL"},
        {"metric": "launch__grid_size", "class": "exact", "diff": 1.0, "verdict": "FAIL"},
        {"metric": "run", "class": "-", "verdict": "FAIL", "note": "zoo check failed"},
        {"metric": "sm__throughput.avg.pct_of_peak_sustained_elapsed", "class": "3pt/10%",
         "diff": 0.1, "verdict": "pass"}]
got = [r["verdict"] for r in kv.report_only(copy.deepcopy(recs))]
check(got == ["differs", "FAIL", "FAIL", "pass"],
      f"report_only: a counter differs, an exact value and a run problem fail ({got})")
check(kv.ISSUE_CASES == {"sgemm_small", "sgemm_large", "elementwise", "reduction",
                         "smem_limited", "register_limited"} and
      kv.ISSUE_CASES <= {c[0] for c in kv.CASES},
      "the issue's six kernels are zoo cases")

# Speed: medians of per-round differences.
data = {"bare": [1.0, 1.2, 1.1], "ncu": [7.0, 7.4, 7.1], "strata": [1.5, None, 1.6]}
check(close(kv.added(data, "ncu"), 6.0), "ncu added: median of per-round differences")
check(close(kv.added(data, "strata"), 0.5), "strata added: failed rounds left out")

# ---------------------------------------------------------------- end to end, fake tools

FAKE_NCU = r'''#!/usr/bin/env python3
import os, sys
args = sys.argv[1:]
filt = args[args.index("--kernel-name") + 1]
for need in ("--set", "basic", "--clock-control", "none", "--launch-count", "--csv", "raw",
             "--print-units", "base", "--launch-skip"):
    if need not in args:
        sys.exit(f"fake ncu: {need} missing from {args}")
if filt == "regex:gemm" and os.environ.get("FAKE_NCU_NO_GEMM"):
    print("==PROF== Connected to process 1\ngpu_kernel_zoo: 1 of 1 cases verified\n"
          "==WARNING== No kernels were profiled.")
    sys.exit(0)
sys.stdout.write(open(os.environ["FAKE_NCU_OUT"]).read())
'''
FAKE_STRATA = r'''#!/usr/bin/env python3
import os, sys
args = sys.argv[1:]
if args[:2] == ["kernels", "--help"]:
    print("usage: strata kernels ..."); sys.exit(0)
if args[0] != "kernels" or "--format" not in args or "--" not in args:
    sys.exit(f"fake strata: unexpected {args}")
with open(os.environ["FAKE_STRATA_LOG"], "a") as f:
    f.write(" ".join(args) + "\n")
sys.stdout.write(open(os.environ["FAKE_STRATA_OUT"]).read())
'''


def fake_case(tmp, ncu_text, strata_text, env=None, case=None):
    paths = {}
    for name, text in (("ncu", FAKE_NCU), ("strata", FAKE_STRATA)):
        p = os.path.join(tmp, name)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, os.stat(p).st_mode | stat.S_IEXEC)
        paths[name] = p
    for name, text in (("ncu.out", ncu_text), ("strata.out", strata_text)):
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    log = os.path.join(tmp, "strata-args.log")
    if os.path.exists(log):
        os.remove(log)
    saved = dict(os.environ)
    os.environ.pop("NCU_CACHE_CONTROL", None)  # the default unless env gives one
    os.environ.update({"FAKE_NCU_OUT": os.path.join(tmp, "ncu.out"),
                       "FAKE_STRATA_OUT": os.path.join(tmp, "strata.out"),
                       "FAKE_STRATA_LOG": log, **(env or {})})
    try:
        bench = kv.Bench(tmp, os.path.join(tmp, "out"), 1)
        bench.ncu, bench.strata, bench.zoo = paths["ncu"], paths["strata"], "/fake/gpu_kernel_zoo"
        res = bench.accuracy_case(case or kv.CASES[0])
    finally:
        os.environ.clear()
        os.environ.update(saved)
    args = open(log).read() if os.path.exists(log) else ""
    return res, args


with tempfile.TemporaryDirectory() as tmp:
    res, args = fake_case(tmp, synthetic_ncu_output(), strata_stdout(synthetic_strata_json()))
    check(failed(res["comparisons"]) == [], f"end to end: a matching case passes "
          f"({failed(res['comparisons'])}; {[r.get('note') for r in res['comparisons'] if r['verdict'] == 'FAIL']})")
    check("--kernel-name regex:gemm --launch-skip 1 --launch-count 1" in args and
          "--only zoo_sgemm_small" in args, "end to end: strata gets the case's filter and skip")
    check(os.path.exists(os.path.join(tmp, "out", "accuracy", "sgemm_small-ncu-0.log")),
          "end to end: ncu's log written")
    check("kernels --cache-control all " in args,
          "end to end: strata gets --cache-control all by default, as ncu")

    # One cache policy for both tools: NCU_CACHE_CONTROL goes to ncu and to strata.
    res, args = fake_case(tmp, synthetic_ncu_output(), strata_stdout(synthetic_strata_json()),
                          env={"NCU_CACHE_CONTROL": "none"})
    check("kernels --cache-control none " in args and failed(res["comparisons"]) == [],
          "end to end: NCU_CACHE_CONTROL=none: strata gets --cache-control none")
    saved_cache = os.environ.get("NCU_CACHE_CONTROL")
    for cache in ("all", "none"):
        os.environ["NCU_CACHE_CONTROL"] = cache
        b = kv.Bench(tmp, os.path.join(tmp, "out"), 1)
        n_argv = b.ncu_argv("regex:gemm", 1, ["zoo"])
        s_argv = b.strata_argv("regex:gemm", 1, ["zoo"], "t.sqlite")
        check(n_argv[n_argv.index("--cache-control") + 1] == cache and
              s_argv[s_argv.index("--cache-control") + 1] == cache,
              f"NCU_CACHE_CONTROL={cache}: ncu and strata both get --cache-control {cache}")
    if saved_cache is None:
        os.environ.pop("NCU_CACHE_CONTROL", None)
    else:
        os.environ["NCU_CACHE_CONTROL"] = saved_cache

    # KERNELS_METRICS: the same --metrics for both tools, before strata's "--".
    saved_metrics = os.environ.pop("KERNELS_METRICS", None)
    b = kv.Bench(tmp, os.path.join(tmp, "out"), 1)
    check("--metrics" not in b.ncu_argv("regex:gemm", 1, ["zoo"]) and
          "--metrics" not in b.strata_argv("regex:gemm", 1, ["zoo"], "t.sqlite"),
          "no KERNELS_METRICS: neither tool gets --metrics")
    os.environ["KERNELS_METRICS"] = "sm__inst_executed_pipe_adu.avg,lts__t_sectors.sum"
    n_argv = b.ncu_argv("regex:gemm", 1, ["zoo"])
    s_argv = b.strata_argv("regex:gemm", 1, ["zoo"], "t.sqlite")
    check(n_argv[n_argv.index("--metrics") + 1] == os.environ["KERNELS_METRICS"] and
          s_argv[s_argv.index("--metrics") + 1] == os.environ["KERNELS_METRICS"] and
          s_argv.index("--metrics") < s_argv.index("--") and n_argv[-1] == "zoo",
          "KERNELS_METRICS: ncu and strata both get --metrics, before the command")
    if saved_metrics is None:
        os.environ.pop("KERNELS_METRICS", None)
    else:
        os.environ["KERNELS_METRICS"] = saved_metrics

    res, args = fake_case(tmp, synthetic_ncu_output(), strata_stdout(synthetic_strata_json()),
                          env={"FAKE_NCU_NO_GEMM": "1"})
    check(res["filter"] == "regex:." and "--kernel-name regex:." in args and res["notes"] and
          failed(res["comparisons"]) == [], "end to end: no gemm-named kernel: both use regex:.")

    broken = strata_stdout(synthetic_strata_json()).replace(
        "zoo_sgemm_small: ok (3 calls 64^3, 4096 entries checked)\ngpu_kernel_zoo: 1 of 1",
        "zoo_sgemm_small: FAILED: 4096 mismatches\ngpu_kernel_zoo: 0 of 1")
    res, _ = fake_case(tmp, synthetic_ncu_output(), broken)
    notes = [r["note"] for r in res["comparisons"] if r["verdict"] == "FAIL"]
    check(any("under strata the zoo's check failed" in n for n in notes),
          "end to end: the program's own check failing under strata: FAIL")

    zoo_case = ("elementwise", "zoo_elementwise", "regex:zoo_elementwise", 1, "")
    res, _ = fake_case(tmp, synthetic_ncu_output(), strata_stdout(synthetic_strata_json()),
                       case=zoo_case)
    inv = [r for r in res["comparisons"] if r["metric"] == "invocation"]
    check(len(inv) == 1 and inv[0]["verdict"] == "pass",
          "end to end: a zoo filter: strata's invocation equals --launch-skip")
    res, _ = fake_case(tmp, synthetic_ncu_output(), strata_stdout(synthetic_strata_json()),
                       case=("reduction", "zoo_reduction", "regex:zoo_reduction", 2, ""))
    check("invocation" in failed(res["comparisons"]),
          "end to end: strata's invocation 1 where --launch-skip 2: FAIL")

    # The same 27 % duration error: a failure in one of the issue's six kernels, a
    # reported difference in a launch-API case.
    slow = synthetic_strata_json()
    slow["kernels"][0]["sections"][0]["metrics"][5]["value"] = 9.9  # Duration
    res, _ = fake_case(tmp, synthetic_ncu_output(), strata_stdout(slow),
                       case=("elementwise", "zoo_elementwise", "regex:zoo_elementwise", 1, ""))
    check(failed(res["comparisons"]) == ["gpu__time_duration.sum"],
          "end to end: an issue case 27 % slow: FAIL")
    res, _ = fake_case(tmp, synthetic_ncu_output(), strata_stdout(slow),
                       case=("driver_launch", "zoo_driver_launch", "regex:zoo_driver_launch",
                             1, ""))
    differs = [r["metric"] for r in res["comparisons"] if r["verdict"] == "differs"]
    check(failed(res["comparisons"]) == [] and differs == ["gpu__time_duration.sum"],
          "end to end: a launch-API case 27 % slow: differs, no failure")

    res, _ = fake_case(tmp, synthetic_ncu_output(launches=0),
                       strata_stdout(synthetic_strata_json()),
                       case=("elementwise", "zoo_elementwise", "regex:zoo_elementwise", 1, ""))
    notes = [r["note"] for r in res["comparisons"] if r["verdict"] == "FAIL"]
    check(any("ncu profiled 0 launches" in n for n in notes), "end to end: ncu profiled none: FAIL")

    res, _ = fake_case(tmp, synthetic_ncu_output(), "gpu_kernel_zoo: 1 of 1 cases verified\n")
    notes = [r["note"] for r in res["comparisons"] if r["verdict"] == "FAIL"]
    check(any("no JSON from strata" in n for n in notes), "end to end: no JSON from strata: FAIL")

    two = synthetic_strata_json()
    two["kernels"].append(copy.deepcopy(two["kernels"][0]))
    res, _ = fake_case(tmp, synthetic_ncu_output(), strata_stdout(two))
    notes = [r["note"] for r in res["comparisons"] if r["verdict"] == "FAIL"]
    check(any("strata profiled 2 launches" in n for n in notes),
          "end to end: strata profiled two launches: FAIL")

# ------------------------------------------------ REAL captures (tests/data/kernels-zoo-h200)
# Whole stdout of ncu and of strata kernels on the H200 (its COMMAND file says how they
# were made). They check the parsers on the real formats, not on what the synthetic
# inputs above assume of them, and pin the verdicts of that run.
real = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data",
                    "kernels-zoo-h200")


def real_case(case):
    with open(os.path.join(real, f"{case}-ncu-stdout.txt")) as f:
        ncu_rows = kv.parse_ncu_raw_csv(f.read())
    with open(os.path.join(real, f"{case}-strata-stdout.txt")) as f:
        obj = kv.extract_strata_json(f.read())
    return ncu_rows, obj


def verdict_of(recs, metric):
    return next((r["verdict"] for r in recs if r["metric"] == metric), None)


for case, kernel, ncu_ns in (("elementwise", "zoo_elementwise_saxpy", 216672),
                             ("sgemm_small", None, 5952),
                             ("register_limited", "zoo_register_limited_mix", 54240)):
    ncu_rows, obj = real_case(case)
    check(len(ncu_rows) == 1, f"real {case}: ncu's raw CSV holds one launch")
    check(obj is not None and len(obj["kernels"]) == 1, f"real {case}: strata's JSON, one launch")
    if len(ncu_rows) != 1 or obj is None or len(obj["kernels"]) != 1:
        continue
    metrics = ncu_rows[0]["metrics"]
    text, unit = metrics.get("gpu__time_duration.sum", ("", ""))
    # ncu 2025.3's base unit for time is "ns" (the synthetic inputs above say "nsecond").
    check(unit == "ns" and float(kv.parse_number(text)) == ncu_ns,
          f"real {case}: ncu's duration {text} {unit} read as {ncu_ns} ns")
    check(len(metrics) > 40, f"real {case}: ncu's basic set has {len(metrics)} raw metrics")
    recs = kv.compare_launch(ncu_rows[0], obj["kernels"][0])
    check(verdict_of(recs, "kernel") == "pass", f"real {case}: both tools name the same kernel")
    if kernel:
        check(kv.base_name(obj["kernels"][0]["kernel"]) == kernel,
              f"real {case}: strata's kernel is {kernel}")
    # That build lacked registers per thread for runtime launches (docs/PERFORMANCE.md).
    check(verdict_of(recs, "launch__registers_per_thread") == "FAIL",
          f"real {case}: that build's missing registers are caught")

ncu_rows, obj = real_case("elementwise")
recs = kv.compare_launch(ncu_rows[0], obj["kernels"][0])
check(verdict_of(recs, "gpu__time_duration.sum") == "pass",
      "real elementwise: 216.67 us against 220.13 us is within 5 %")
check(verdict_of(recs, "sm__warps_active.avg.pct_of_peak_sustained_active") == "pass",
      "real elementwise: achieved occupancy within 3 points")
ncu_rows, obj = real_case("sgemm_small")
recs = kv.compare_launch(ncu_rows[0], obj["kernels"][0])
check(verdict_of(recs, "gpu__time_duration.sum") == "FAIL",
      "real sgemm_small: 5.95 us (ncu, caches flushed) against 4.77 us is outside 5 %")

# The verdict of a whole case (the benchmark's exit status).
passed_rec = {"metric": "gpu__time_duration.sum", "verdict": "pass"}
check(not kv.case_failed({"case": "elementwise", "comparisons": [passed_rec]}),
      "a case whose comparisons pass passes")
check(kv.case_failed({"case": "elementwise",
                      "comparisons": [passed_rec, {"metric": "run", "verdict": "FAIL"}]}),
      "a case with a FAIL fails")
check(kv.case_failed({"case": "elementwise", "comparisons": []}),
      "a case strata should profile that compared nothing fails")
check(not kv.case_failed({"case": "graph", "comparisons": []}),
      "the graph case, not profiled by strata as documented, compares nothing and passes")
check(kv.case_failed({"case": "graph", "comparisons": [{"metric": "run", "verdict": "FAIL"}]}),
      "the graph case fails when strata profiled it or did not say why not")
check(not kv.case_failed({"case": "launch_ex",
                          "comparisons": [{"metric": "sm__cycles_active.avg",
                                           "verdict": "differs"}]}),
      "'differs' in a launch-API case does not fail it")

print(f"\ncompare_selftest: {len(failures)} failed" if failures else "\ncompare_selftest: all passed")
sys.exit(1 if failures else 0)
