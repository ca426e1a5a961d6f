#include "analysis/launch_rules.h"

namespace strata::analysis {

std::vector<KernelFinding> launch_findings(const DeviceProps& d, const KernelLaunch& k,
                                           const OccupancyResult& r) {
  std::vector<KernelFinding> out;
  auto base = [&](FindingKind kind, KernelSection section, FindingSeverity severity) {
    KernelFinding f;
    f.kind = kind;
    f.section = section;
    f.severity = severity;
    f.sm_count = d.sm_count;
    f.block_size = k.block_size;
    f.warp_size = d.warp_size;
    f.warps_per_block = r.warps_per_block;
    f.theoretical_occupancy_pct = r.occupancy_pct;
    f.limiters = r.limiters;
    if (k.grid_size) f.grid_size = *k.grid_size;
    if (r.waves) f.waves = *r.waves;
    return f;
  };

  // Launch Statistics.
  if (k.grid_size && r.active_blocks > 0) {
    const int64_t grid = *k.grid_size;
    const int64_t per_wave = int64_t{r.active_blocks} * d.sm_count;
    if (grid < d.sm_count) {
      auto f = base(FindingKind::kGridSmallerThanSms, KernelSection::kLaunchStatistics,
                    FindingSeverity::kOpt);
      f.blocks_per_wave = per_wave;
      f.est_speedup_pct = 100.0 * static_cast<double>(d.sm_count - grid) / d.sm_count;
      out.push_back(f);
    } else if (grid < per_wave) {
      auto f = base(FindingKind::kGridBelowOneWave, KernelSection::kLaunchStatistics,
                    FindingSeverity::kOpt);
      f.blocks_per_wave = per_wave;
      f.est_speedup_pct = 100.0 * (1.0 - static_cast<double>(grid) / per_wave);
      out.push_back(f);
    } else if (grid % per_wave != 0) {
      const int64_t full = grid / per_wave;
      const double share = 1.0 / static_cast<double>(full + 1);
      if (share >= kTailRuleShare) {
        auto f =
            base(FindingKind::kTailEffect, KernelSection::kLaunchStatistics, FindingSeverity::kOpt);
        f.blocks_per_wave = per_wave;
        f.full_waves = full;
        f.partial_wave_blocks = grid - full * per_wave;
        f.est_speedup_pct = 100.0 * share;
        out.push_back(f);
      }
    }
  }
  if (k.block_size % d.warp_size != 0) {
    auto f = base(FindingKind::kBlockSizeNotWarpMultiple, KernelSection::kLaunchStatistics,
                  FindingSeverity::kOpt);
    const double lanes = static_cast<double>(r.warps_per_block) * d.warp_size;
    f.est_speedup_pct = 100.0 * (lanes - k.block_size) / lanes;
    out.push_back(f);
  }
  if (r.needs_smem_optin && r.limit_shared_mem > 0) {
    auto f =
        base(FindingKind::kSharedMemOptIn, KernelSection::kLaunchStatistics, FindingSeverity::kInf);
    f.smem_requested = k.static_smem + k.dynamic_smem;
    f.smem_default_max = d.smem_per_block;
    out.push_back(f);
  }

  // Occupancy.
  if (r.active_blocks == 0) {
    auto f = base(FindingKind::kCannotLaunch, KernelSection::kOccupancy, FindingSeverity::kWrn);
    f.detail = r.launch_error;
    out.push_back(f);
    return out;
  }
  if (r.occupancy_pct < kOccupancyRulePct) {
    auto f = base(FindingKind::kTheoreticalOccupancyLimited, KernelSection::kOccupancy,
                  FindingSeverity::kOpt);
    f.theoretical_warps_per_scheduler =
        static_cast<double>(r.active_warps) / d.warp_alloc_granularity;
    f.max_warps_per_scheduler = d.max_warps_per_sm / d.warp_alloc_granularity;
    f.est_speedup_pct = 100.0 - r.occupancy_pct;
    f.est_local = true;
    out.push_back(f);
  }
  if (k.achieved_occupancy_pct &&
      r.occupancy_pct - *k.achieved_occupancy_pct > kAchievedGapPoints) {
    auto f =
        base(FindingKind::kAchievedOccupancyGap, KernelSection::kOccupancy, FindingSeverity::kOpt);
    f.achieved_occupancy_pct = *k.achieved_occupancy_pct;
    f.est_speedup_pct = 100.0 * (1.0 - *k.achieved_occupancy_pct / r.occupancy_pct);
    f.est_local = true;
    out.push_back(f);
  }
  return out;
}

}  // namespace strata::analysis
