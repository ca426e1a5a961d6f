// The first gemm of the seed's slow_loop_sync as `ncu --set basic
// --clock-control none` measured it on the H200 (shared/reference/
// anchor-figures.md), as the agent would write it: raw metric values in
// CUPTI's base units (ns, cycle, cycle/second, %), chosen so that ncu's
// rounding gives the printed figures (7,776 ns -> "7.78" us, ...). Shared
// by the ingest, report and CLI tests.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "format/payloads.h"
#include "format/spool_writer.h"

namespace strata::testing {

// cuBLAS's C-linkage gemm: ncu prints the name as it is.
inline const std::string kAnchorKernel =
    "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_"
    "alignc4_execute_kernel__5x_cublas";
inline const std::string kOtherKernel = "_Z15elementwise_addPKfS0_Pfi";  // elementwise_add(...)

inline std::vector<std::pair<std::string, double>> anchor_counter_metrics() {
  return {
      {"gpu__time_duration.sum", 7776},
      {"gpc__cycles_elapsed.max", 15368},
      {"gpc__cycles_elapsed.avg.per_second", 1.976e9},
      {"dram__cycles_elapsed.avg.per_second", 3.1904e9},
      {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 1.9012},
      {"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", 0.4312},
      {"l1tex__throughput.avg.pct_of_peak_sustained_active", 19.9087},
      {"lts__throughput.avg.pct_of_peak_sustained_elapsed", 1.4023},
      {"sm__cycles_active.avg", 1462.666667},
      {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 1.6389},
      // Workload distribution: not among the anchor figures; consistent
      // made-up values (132 SMs x 15,368 cycles elapsed, ...).
      {"l1tex__cycles_active.avg", 1250.5},
      {"lts__cycles_active.avg", 210.25},
      {"smsp__cycles_active.avg", 912.125},
      {"dram__cycles_active.avg", 88.5},
      {"sm__cycles_elapsed.sum", 2028576},
      {"l1tex__cycles_elapsed.sum", 2028576},
      {"lts__cycles_elapsed.sum", 1475328},
      {"smsp__cycles_elapsed.sum", 8114304},
      {"dram__cycles_elapsed.sum", 301800},
      {"sm__warps_active.avg.pct_of_peak_sustained_active", 3.1235},
      {"sm__warps_active.avg.per_cycle_active", 1.9991},
  };
}

// What the agent knows without counters (also when collection failed).
inline std::vector<std::pair<std::string, double>> anchor_launch_metrics() {
  return {
      {"launch__grid_dim_x", 16},
      {"launch__grid_dim_y", 1},
      {"launch__grid_dim_z", 1},
      {"launch__block_dim_x", 64},
      {"launch__block_dim_y", 1},
      {"launch__block_dim_z", 1},
      {"launch__grid_size", 16},
      {"launch__block_size", 64},
      {"launch__thread_count", 1024},
      {"launch__registers_per_thread", 80},
      {"launch__shared_mem_per_block_static", 0},
      {"launch__shared_mem_per_block_dynamic", 6528},
      {"launch__cooperative", 0},
      {"launch__stream_id", 7},
      {"launch__context_id", 1},
      {"launch__api", 1},
      {"launch__shared_mem_config_size", 135168},
      {"device__attribute_multiprocessor_count", 132},
      {"device__attribute_compute_capability_major", 9},
      {"device__attribute_compute_capability_minor", 0},
      {"device__attribute_max_threads_per_multiprocessor", 2048},
      {"device__attribute_max_blocks_per_multiprocessor", 32},
      {"device__attribute_max_registers_per_multiprocessor", 65536},
      {"device__attribute_max_shared_memory_per_multiprocessor", 233472},
      {"device__attribute_max_shared_memory_per_block_optin", 232448},
      {"device__attribute_reserved_shared_memory_per_block", 1024},
      {"device__attribute_warp_size", 32},
  };
}

inline constexpr uint32_t kInsufficientPrivileges = 35;  // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES

// Appends one anchor launch; with `status` != 0, only the launch and device
// values, as the agent writes a failed collection.
// `extra`: counters beyond the sections' (what --metrics asks for).
inline bool append_anchor_launch(format::SpoolWriter& writer, uint64_t invocation,
                                 uint32_t status = 0,
                                 const std::vector<std::pair<std::string, double>>& extra = {}) {
  auto values = anchor_launch_metrics();
  if (status == 0) {
    auto counters = anchor_counter_metrics();
    values.insert(values.begin(), counters.begin(), counters.end());
    values.insert(values.end(), extra.begin(), extra.end());
  }
  std::vector<format::MetricValue> metrics;
  for (const auto& [name, value] : values) metrics.push_back({name, value});
  format::KernelMetricsHeader header;
  header.device = 0;
  header.status = status;
  header.correlation_id = 1000 + invocation;
  header.invocation = invocation;
  header.start_ns = 5'000'000'000 + static_cast<int64_t>(invocation) * 1'000'000;
  header.end_ns = header.start_ns + 250'000;
  return writer.append_kernel_metrics(header, kAnchorKernel, metrics);
}

// The kernels-seen list of the slow loop: 256 gemms, 3 elementwise adds.
inline bool append_anchor_seen(format::SpoolWriter& writer, uint64_t gemms = 256) {
  format::KernelSeen seen[] = {{3, kOtherKernel}, {gemms, kAnchorKernel}};
  return writer.append_kernels_seen(seen);
}

}  // namespace strata::testing
