// Guidance for one kernel launch from its occupancy result, after Nsight
// Compute's rules for the Launch Statistics and Occupancy sections
// (shared/reference/ncu-metrics.md, "ncu's rules"): each finding carries the
// numbers that triggered it and the bound on the gain, and the report layer
// words it (report/kernel_sections.h).
//
// Pure functions: no I/O, no text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/occupancy.h"

namespace strata::analysis {

// ncu's basic-set sections, in the order ncu prints them, then what
// --metrics asked for beyond them (ncu's "Command line profiler metrics").
enum class KernelSection {
  kSpeedOfLight,
  kWorkload,
  kLaunchStatistics,
  kOccupancy,
  kCommandLineMetrics
};

// Nsight Compute's prefixes: OPT an optimization opportunity, INF
// information, WRN something that does not work as launched.
enum class FindingSeverity { kOpt, kInf, kWrn };

enum class FindingKind {
  // The launch cannot run: a per-block or per-thread limit is exceeded.
  kCannotLaunch,
  // Fewer blocks than SMs: (SMs - grid) / SMs of the SMs get no block.
  kGridSmallerThanSms,
  // At least one block per SM but less than one full wave: 1 - waves of the
  // device's resident-block slots stay empty.
  kGridBelowOneWave,
  // Whole waves and a partial one: under uniform block durations the partial
  // wave takes up to 1 / (whole waves + 1) of the run time.
  kTailEffect,
  // The last warp of each block has masked-off lanes.
  kBlockSizeNotWarpMultiple,
  // More than 48 KB per block: needs cudaFuncAttributeMaxDynamicSharedMemorySize.
  kSharedMemOptIn,
  // Theoretical occupancy below kOccupancyRulePct of the maximum; names the
  // limiting resources. Bound: 100 - occupancy.
  kTheoreticalOccupancyLimited,
  // Achieved occupancy more than kAchievedGapPoints below theoretical.
  // Bound: 1 - achieved / theoretical.
  kAchievedOccupancyGap,
  // GPU Speed Of Light (analysis/sol_rules.h): ncu's SOL bottleneck rule, one
  // verdict per launch from Compute (SM) and Memory Throughput.
  kSolSmallGrid,       // both below kSolLatencyPct and less than one wave
  kSolLatencyBound,    // both below kSolLatencyPct
  kSolComputeHeavy,    // below kSolHighPct, compute ahead by kSolBalancePoints or more
  kSolMemoryHeavy,     // below kSolHighPct, memory ahead by kSolBalancePoints or more
  kSolBalanced,        // below kSolHighPct, within kSolBalancePoints of each other
  kSolHighThroughput,  // either at kSolHighPct or above
};

inline constexpr double kOccupancyRulePct = 80.0;
inline constexpr double kAchievedGapPoints = 10.0;
// The tail rule speaks when the partial wave may take at least this share.
inline constexpr double kTailRuleShare = 0.2;

struct KernelFinding {
  FindingKind kind{};
  KernelSection section{};
  FindingSeverity severity{};
  // The bound on the gain, in % of the kernel's time; "local" as Nsight
  // Compute's Est. Local Speedup (of this kernel's occupancy-bound part).
  std::optional<double> est_speedup_pct;
  bool est_local = false;

  // The numbers behind the finding (those that apply to its kind).
  int64_t grid_size = 0;
  int sm_count = 0;
  double waves = 0;
  int64_t blocks_per_wave = 0;  // active blocks per SM x SMs
  int64_t full_waves = 0;
  int64_t partial_wave_blocks = 0;
  int block_size = 0;
  int warp_size = 0;
  int warps_per_block = 0;
  int64_t smem_requested = 0;    // static + dynamic bytes per block
  int64_t smem_default_max = 0;  // per block without opt-in
  double theoretical_occupancy_pct = 0;
  double achieved_occupancy_pct = 0;
  double theoretical_warps_per_scheduler = 0;
  int max_warps_per_scheduler = 0;
  unsigned limiters = 0;   // OccupancyLimiter bits
  double compute_pct = 0;  // SOL kinds: Compute (SM) Throughput
  double memory_pct = 0;   // SOL kinds: Memory Throughput
  std::string detail;      // kCannotLaunch: OccupancyResult::launch_error
};

// The findings that apply, Launch Statistics ones first, each section's in
// the order of FindingKind.
std::vector<KernelFinding> launch_findings(const DeviceProps& device, const KernelLaunch& launch,
                                           const OccupancyResult& occupancy);

}  // namespace strata::analysis
