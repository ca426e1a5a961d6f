// One launch profiled by `strata kernels` (a store::ProfiledLaunch: ncu raw
// metric names and values) turned into what ncu's basic-set sections print:
// the launch configuration, the device limits, the occupancy model's result
// and every finding (SOL, Launch Statistics, Occupancy).
//
// The device limits come from the launch's device__attribute_* values (what
// the agent read from the real device); only the fields those do not cover
// (allocation units, carveouts, barriers) and devices without them come from
// the GPU table (gpu_specs.h) of the launch's compute capability.
//
// Pure functions: no I/O, no text.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/launch_rules.h"
#include "analysis/occupancy.h"
#include "store/kernel_metric_rows.h"

namespace strata::analysis {

struct KernelProfile {
  store::ProfiledLaunch launch;
  std::string demangled;                  // the name ncu prints
  std::map<std::string, double> metrics;  // by raw name; a repeated name keeps its last value
  std::array<int64_t, 3> grid{0, 0, 0};   // 0: unknown
  std::array<int64_t, 3> block{0, 0, 0};
  std::optional<int64_t> context_id;
  std::optional<int64_t> stream_id;
  std::optional<DeviceProps> device;    // unset: neither attributes nor a table entry
  bool device_from_attributes = false;  // at least the SM count and CC came from the device
  std::optional<KernelLaunch> kernel;   // unset: no block size known
  std::optional<OccupancyResult> occupancy;
  std::string occupancy_error;          // why occupancy is unset, when it is
  std::vector<KernelFinding> findings;  // SOL first, then Launch Statistics, then Occupancy

  std::optional<double> metric(const std::string& name) const;
};

KernelProfile analyze_profiled_launch(const store::ProfiledLaunch& launch);

// Every launch, in order.
std::vector<KernelProfile> analyze_profiled_launches(
    const std::vector<store::ProfiledLaunch>& launches);

// CUPTI's (or the driver's, + 1'000'000) name for a kernel-metrics status:
// "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; "status N" when unknown.
std::string profile_status_name(int64_t status);

}  // namespace strata::analysis
