#include "analysis/occupancy.h"

#include <algorithm>
#include <string>

namespace strata::analysis {
namespace {

int64_t div_round_up(int64_t x, int64_t y) {
  return (x + y - 1) / y;
}
int64_t round_up(int64_t x, int64_t y) {
  return div_round_up(x, y) * y;
}

Error field_error(const DeviceProps& d, const char* field, const std::string& why) {
  return make_error("device '" + d.name + "': " + field + " " + why);
}

}  // namespace

Status validate(const DeviceProps& d) {
  auto positive = [&](int64_t v, const char* field) -> std::optional<Error> {
    if (v <= 0) return field_error(d, field, "must be positive, is " + std::to_string(v));
    return std::nullopt;
  };
  for (auto [v, field] : {std::pair<int64_t, const char*>{d.sm_count, "sm_count"},
                          {d.warp_size, "warp_size"},
                          {d.max_threads_per_block, "max_threads_per_block"},
                          {d.max_threads_per_sm, "max_threads_per_sm"},
                          {d.max_warps_per_sm, "max_warps_per_sm"},
                          {d.max_blocks_per_sm, "max_blocks_per_sm"},
                          {d.regs_per_sm, "regs_per_sm"},
                          {d.regs_per_block, "regs_per_block"},
                          {d.max_regs_per_thread, "max_regs_per_thread"},
                          {d.reg_alloc_unit, "reg_alloc_unit"},
                          {d.warp_alloc_granularity, "warp_alloc_granularity"},
                          {d.smem_per_sm, "smem_per_sm"},
                          {d.smem_per_block, "smem_per_block"},
                          {d.smem_per_block_optin, "smem_per_block_optin"},
                          {d.smem_alloc_granularity, "smem_alloc_granularity"}}) {
    if (auto e = positive(v, field)) return *e;
  }
  if (d.max_warps_per_sm * d.warp_size != d.max_threads_per_sm) {
    return field_error(
        d, "max_warps_per_sm",
        "x warp_size must equal max_threads_per_sm (" + std::to_string(d.max_threads_per_sm) + ")");
  }
  if (d.reserved_smem_per_block < 0)
    return field_error(d, "reserved_smem_per_block", "is negative");
  if (d.barriers_per_sm < 0) return field_error(d, "barriers_per_sm", "is negative");
  if (d.smem_carveouts.empty()) return field_error(d, "smem_carveouts", "is empty");
  if (!std::is_sorted(d.smem_carveouts.begin(), d.smem_carveouts.end()) ||
      d.smem_carveouts.front() < 0) {
    return field_error(d, "smem_carveouts", "must be ascending and not negative");
  }
  if (d.smem_carveouts.back() != d.smem_per_sm) {
    return field_error(d, "smem_carveouts", "must end at smem_per_sm");
  }
  return Ok{};
}

int64_t predict_smem_config(const DeviceProps& d, int64_t smem_per_block, int target_blocks) {
  // A block must fit at least once; beyond that, as many as the other limits
  // let the SM hold.
  int64_t want = std::max<int64_t>(target_blocks, 1);
  for (int64_t carveout : d.smem_carveouts) {
    if (smem_per_block == 0 || carveout / smem_per_block >= want) return carveout;
  }
  return d.smem_carveouts.back();
}

namespace {

// The launch's own numbers, checked before the model runs on them.
Status check_launch(const DeviceProps& d, const KernelLaunch& k) {
  if (k.block_size < 1) {
    return make_error("block size must be at least 1, is " + std::to_string(k.block_size));
  }
  if (k.registers_per_thread < 0) {
    return make_error("registers per thread must not be negative, is " +
                      std::to_string(k.registers_per_thread));
  }
  if (k.static_smem < 0 || k.dynamic_smem < 0) {
    return make_error("shared memory per block must not be negative");
  }
  if (k.barriers && *k.barriers < 0) {
    return make_error("barriers per block must not be negative, is " + std::to_string(*k.barriers));
  }
  if (k.grid_size && *k.grid_size < 1) {
    return make_error("grid size must be at least 1 block, is " + std::to_string(*k.grid_size));
  }
  if (k.smem_config && std::find(d.smem_carveouts.begin(), d.smem_carveouts.end(),
                                 *k.smem_config) == d.smem_carveouts.end()) {
    std::string sizes;
    for (int64_t c : d.smem_carveouts) {
      sizes += (sizes.empty() ? "" : ", ") + std::to_string(c / 1024);
    }
    return make_error("shared memory configuration " + std::to_string(*k.smem_config) +
                      " bytes is not one " + d.name + " supports (" + sizes + " KB)");
  }
  return Ok{};
}

// Each limit_by_* step sets one resource's block limit in `r`; a launch the
// resource cannot hold even once gets limit 0 and its reason in `errors`.

void limit_by_warps(const DeviceProps& d, const KernelLaunch& k, OccupancyResult& r,
                    std::vector<std::string>& errors) {
  if (k.block_size > d.max_threads_per_block) {
    r.limit_warps = 0;
    errors.push_back("block size " + std::to_string(k.block_size) + " exceeds the maximum of " +
                     std::to_string(d.max_threads_per_block) + " threads per block");
  } else {
    r.limit_warps = d.max_threads_per_sm / d.warp_size / r.warps_per_block;
  }
}

// Per warp and per sub-partition (cudaOccMaxBlocksPerSMRegsLimit).
void limit_by_registers(const DeviceProps& d, const KernelLaunch& k, OccupancyResult& r,
                        std::vector<std::string>& errors) {
  const int64_t parts = d.warp_alloc_granularity;
  r.regs_per_warp =
      static_cast<int>(round_up(int64_t{k.registers_per_thread} * d.warp_size, d.reg_alloc_unit));
  const int64_t regs_per_block = int64_t{r.regs_per_warp} * r.warps_per_block;
  const int64_t regs_assumed = int64_t{r.regs_per_warp} * round_up(r.warps_per_block, parts);
  r.regs_per_block = static_cast<int>(std::min<int64_t>(regs_per_block, INT32_MAX));
  if (k.registers_per_thread > d.max_regs_per_thread) {
    r.limit_registers = 0;
    errors.push_back(std::to_string(k.registers_per_thread) + " registers per thread exceed the " +
                     "maximum of " + std::to_string(d.max_regs_per_thread));
  } else if (regs_per_block > d.regs_per_block || regs_assumed > d.regs_per_block) {
    r.limit_registers = 0;
    errors.push_back(
        "the block needs " + std::to_string(std::max(regs_per_block, regs_assumed)) +
        " registers (" + std::to_string(r.regs_per_warp) + " per warp x " +
        std::to_string(regs_assumed > regs_per_block ? round_up(r.warps_per_block, parts)
                                                     : r.warps_per_block) +
        " warps), more than the " + std::to_string(d.regs_per_block) + " a block may have");
  } else if (r.regs_per_warp == 0) {
    r.limit_registers = kUnlimited;
  } else {
    int64_t warps_per_part = (d.regs_per_sm / parts) / r.regs_per_warp;
    r.limit_registers = static_cast<int>(warps_per_part * parts / r.warps_per_block);
  }
}

// Barriers (sm_90+). Nsight Compute shows at most the SM's block limit.
void limit_by_barriers(const DeviceProps& d, const KernelLaunch& k, OccupancyResult& r,
                       std::vector<std::string>& errors) {
  if (d.barriers_per_sm <= 0) return;
  int barriers = k.barriers.value_or(1);
  r.limit_barriers = barriers == 0 ? kUnlimited : d.barriers_per_sm / barriers;
  r.limit_barriers_shown = std::min(*r.limit_barriers, d.max_blocks_per_sm);
  if (*r.limit_barriers == 0) {
    errors.push_back(std::to_string(barriers) + " barriers per block exceed the " +
                     std::to_string(d.barriers_per_sm) + " an SM has");
  }
}

// Shared memory (cudaOccMaxBlocksPerSMSmemLimit), with the carveout given or
// as the driver would choose it; runs after the other limits, which that
// choice depends on.
void limit_by_shared_mem(const DeviceProps& d, const KernelLaunch& k, OccupancyResult& r,
                         std::vector<std::string>& errors) {
  r.reserved_smem_per_block = d.reserved_smem_per_block;
  const int64_t requested = k.static_smem + k.dynamic_smem;
  r.smem_per_block = round_up(requested + d.reserved_smem_per_block, d.smem_alloc_granularity);
  r.needs_smem_optin = requested > d.smem_per_block;
  const int64_t smem_limit_per_block = d.smem_per_block_optin + d.reserved_smem_per_block;
  if (r.smem_per_block > smem_limit_per_block) {
    r.limit_shared_mem = 0;
    r.smem_config = d.smem_carveouts.back();
    r.smem_config_predicted = !k.smem_config.has_value();
    errors.push_back("the block needs " + std::to_string(r.smem_per_block) +
                     " bytes of shared memory (static " + std::to_string(k.static_smem) +
                     " + dynamic " + std::to_string(k.dynamic_smem) + " + driver " +
                     std::to_string(d.reserved_smem_per_block) + ", rounded up to " +
                     std::to_string(d.smem_alloc_granularity) + "), more than the " +
                     std::to_string(smem_limit_per_block) + " a block may have");
    return;
  }
  if (k.smem_config) {
    r.smem_config_predicted = false;
    r.smem_config = *k.smem_config;
    if (r.smem_config < r.smem_per_block) {
      // The driver overrides a preference that cannot hold one block.
      r.smem_config = predict_smem_config(d, r.smem_per_block, 1);
      r.smem_config_raised = true;
    }
  } else {
    int others = std::min(
        {r.limit_warps, r.limit_blocks, r.limit_registers, r.limit_barriers.value_or(kUnlimited)});
    r.smem_config = predict_smem_config(d, r.smem_per_block, others);
  }
  r.limit_shared_mem =
      r.smem_per_block == 0 ? kUnlimited : static_cast<int>(r.smem_config / r.smem_per_block);
}

// Active blocks: the smallest limit; the limiters: the resources at it.
void set_active_blocks(const DeviceProps& d, OccupancyResult& r) {
  r.active_blocks = std::min({r.limit_warps, r.limit_blocks, r.limit_registers, r.limit_shared_mem,
                              r.limit_barriers.value_or(kUnlimited)});
  if (r.limit_warps == r.active_blocks) r.limiters |= kLimitWarps;
  if (r.limit_registers == r.active_blocks) r.limiters |= kLimitRegisters;
  // A predicted carveout is by construction just large enough for what the
  // other limits allow, so its limit often equals theirs; shared memory
  // limits only where even the largest carveout holds no more blocks.
  if (r.limit_shared_mem == r.active_blocks &&
      (!r.smem_config_predicted || r.smem_per_block == 0 || r.limit_shared_mem == 0 ||
       d.smem_per_sm / r.smem_per_block <= r.active_blocks)) {
    r.limiters |= kLimitSharedMem;
  }
  if (r.limit_blocks == r.active_blocks) r.limiters |= kLimitBlocks;
  if (r.limit_barriers && *r.limit_barriers == r.active_blocks) r.limiters |= kLimitBarriers;
}

// Threads and waves of the grid, where its size is known.
void set_grid(const DeviceProps& d, const KernelLaunch& k, OccupancyResult& r) {
  if (!k.grid_size) return;
  r.threads = *k.grid_size * k.block_size;
  if (r.active_blocks > 0) {
    r.waves =
        static_cast<double>(*k.grid_size) / (static_cast<double>(r.active_blocks) * d.sm_count);
  }
}

}  // namespace

Result<OccupancyResult> compute_occupancy(const DeviceProps& d, const KernelLaunch& k) {
  STRATA_TRY(validate(d));
  STRATA_TRY(check_launch(d, k));
  OccupancyResult r;
  std::vector<std::string> errors;
  r.warps_per_block = static_cast<int>(div_round_up(k.block_size, d.warp_size));
  limit_by_warps(d, k, r, errors);
  r.limit_blocks = d.max_blocks_per_sm;
  limit_by_registers(d, k, r, errors);
  limit_by_barriers(d, k, r, errors);
  limit_by_shared_mem(d, k, r, errors);
  set_active_blocks(d, r);
  r.active_warps = r.active_blocks * r.warps_per_block;
  r.occupancy_pct = 100.0 * r.active_warps / d.max_warps_per_sm;
  for (size_t i = 0; i < errors.size(); ++i) {
    r.launch_error += (i == 0 ? "" : "; ") + errors[i];
  }
  set_grid(d, k, r);
  return r;
}

}  // namespace strata::analysis
