#include "analysis/sol_rules.h"

#include <cmath>

namespace strata::analysis {

KernelFinding sol_finding(double compute_pct, double memory_pct, std::optional<double> waves,
                          int64_t grid_size, int sm_count) {
  KernelFinding f;
  f.section = KernelSection::kSpeedOfLight;
  f.compute_pct = compute_pct;
  f.memory_pct = memory_pct;
  f.grid_size = grid_size;
  f.sm_count = sm_count;
  if (waves) f.waves = *waves;
  const double gap = compute_pct - memory_pct;
  if (compute_pct >= kSolHighPct || memory_pct >= kSolHighPct) {
    f.kind = FindingKind::kSolHighThroughput;
    f.severity = FindingSeverity::kInf;
  } else if (compute_pct < kSolLatencyPct && memory_pct < kSolLatencyPct) {
    bool small = waves && *waves < 1.0;
    f.kind = small ? FindingKind::kSolSmallGrid : FindingKind::kSolLatencyBound;
    f.severity = FindingSeverity::kOpt;
  } else if (std::fabs(gap) >= kSolBalancePoints) {
    f.kind = gap > 0 ? FindingKind::kSolComputeHeavy : FindingKind::kSolMemoryHeavy;
    f.severity = FindingSeverity::kInf;
  } else {
    f.kind = FindingKind::kSolBalanced;
    f.severity = FindingSeverity::kInf;
  }
  return f;
}

}  // namespace strata::analysis
