// The diagnosis's thresholds, named: the struct the rules read, and the one
// table (name -> field, with what it means) that `--threshold NAME=VALUE`,
// the help and the documentation use. docs/diagnose.md gives the reason for
// each default.
//
// Pure: no I/O.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/result.h"

namespace strata::analysis {

struct DiagnosisThresholds {
  // A finding must account for at least this share of the time diagnosed
  // (the GPU work window for GPU rules, the run less start-up for CPU rules).
  double min_share = 0.10;
  // Synchronizing calls per kernel launch from which gpu.launch_sync says
  // "a sync after (almost) every launch" and charges the launch gaps too.
  double syncs_per_launch = 0.5;
  // A kernel name takes part in the kernel rules when its kernels take at
  // least this share of all kernel time.
  double kernel_share = 0.10;
  // Kernels whose median duration is below this (ns) are "short": launch
  // overhead can dominate them (gpu.launch_bound, the op-layer hint).
  double short_kernel_ns = 10'000;
  // cpu.hotspot marks the CPU layer as explaining the run (stop descending)
  // when the hotspot holds at least this share of the time diagnosed, or the
  // run has no GPU work.
  double stop_share = 0.5;
  // A pause between two samples of a thread longer than this many sampling
  // periods is time off the CPU (cpu.off_cpu).
  double off_cpu_gap_periods = 3.0;
  // A pause at least this long (ns) is a wait whatever else: the scheduler
  // rarely keeps a runnable thread off the CPU this long.
  double off_cpu_min_pause_ns = 50'000'000;
  // Shorter pauses are a wait only when they repeat regularly where the
  // thread resumes (at least 3, lengths' coefficient of variation at most
  // this): a sleep or poll interval is regular, preemption on a busy machine
  // is not, and samples cannot tell them apart otherwise.
  double off_cpu_regular_cv = 0.5;
  // cpu.kernel_time: the kernel's (sys) time must be at least this share of
  // the bare runs' CPU time...
  double kernel_time_share = 0.25;
  // ...and their page faults must fault in at least this many times the
  // peak RSS: memory given back and faulted in again, not memory touched once.
  double refault_ratio = 2.0;
  // GPU Speed Of Light (ncu's SOLBottleneck rule): a unit at or above this %
  // of its peak is at the roofline.
  double sol_high_pct = 80.0;
  // Memory throughput at or above this % of peak is at the memory roofline:
  // DRAM does not stream at its nominal peak (on the H200 a float4 streaming
  // kernel at full occupancy reached 79 % of it, with one load in flight per
  // thread and with two). At most sol_high_pct.
  double memory_roofline_pct = 75.0;
  // Both units below this % of peak: latency-bound.
  double sol_latency_pct = 60.0;
  // Theoretical occupancy below this % names its limiter (kernel.occupancy).
  double occupancy_pct = 80.0;
};

// One row of the table: how the verb's --threshold and the docs name it.
struct ThresholdInfo {
  const char* name;  // "min_share": the field's own name
  double DiagnosisThresholds::*field;
  const char* doc;  // one line: what the number means
  double lowest;    // inclusive range a value must fall in
  double highest;
};

std::span<const ThresholdInfo> threshold_table();

// Sets the named threshold; the error names the threshold or the value at
// fault (an unknown name lists the known ones).
Status set_threshold(DiagnosisThresholds& thresholds, std::string_view name, double value);

// "NAME=VALUE" as --threshold takes it.
Status parse_threshold(DiagnosisThresholds& thresholds, std::string_view assignment);

}  // namespace strata::analysis
