// ncu's guidance for the GPU Speed Of Light Throughput section (its
// SOLBottleneck rule, shared/reference/ncu-metrics.md "ncu's rules"): one
// verdict from Compute (SM) Throughput and Memory Throughput, with the wave
// count of Launch Statistics to tell a grid too small to fill the GPU from a
// latency-bound kernel.
//
// Pure functions: no I/O, no text (report/kernel_sections.h words them).
#pragma once

#include <optional>

#include "analysis/launch_rules.h"

namespace strata::analysis {

inline constexpr double kSolLatencyPct = 60.0;
inline constexpr double kSolHighPct = 80.0;
inline constexpr double kSolBalancePoints = 10.0;

// `waves` is Waves Per SM when the occupancy model could compute it.
KernelFinding sol_finding(double compute_pct, double memory_pct, std::optional<double> waves,
                          int64_t grid_size, int sm_count);

}  // namespace strata::analysis
