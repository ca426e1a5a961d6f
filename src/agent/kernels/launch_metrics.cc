#include "agent/kernels/launch_metrics.h"

#include <algorithm>

namespace strata::agent::kernels {

// Here rather than in driver_api.cc, which only the agent links: the names
// go into every chunk, the pure part the unit tests cover. Same order as
// driver_api.cc's attribute ids.
const char* const kDeviceAttributeNames[kDeviceAttributeCount] = {
    "device__attribute_multiprocessor_count",
    "device__attribute_compute_capability_major",
    "device__attribute_compute_capability_minor",
    "device__attribute_max_threads_per_multiprocessor",
    "device__attribute_max_blocks_per_multiprocessor",
    "device__attribute_max_registers_per_multiprocessor",
    "device__attribute_max_shared_memory_per_multiprocessor",
    "device__attribute_max_shared_memory_per_block_optin",
    "device__attribute_reserved_shared_memory_per_block",
    "device__attribute_warp_size",
};

namespace {

struct Appender {
  format::MetricValue* out;
  size_t capacity;
  size_t count = 0;
  void add(const char* name, double value) {
    if (count < capacity) out[count++] = format::MetricValue{name, value};
  }
};

}  // namespace

size_t build_launch_metrics(const MetricList& cupti, const double* cupti_values,
                            const LaunchFacts& launch, const DeviceAttributes& device,
                            format::MetricValue* out, size_t capacity) {
  Appender a{out, capacity};
  if (cupti_values != nullptr) {
    for (size_t i = 0; i < cupti.count; ++i) a.add(cupti.names[i], cupti_values[i]);
  }
  const LaunchParams& p = launch.params;
  const double grid = static_cast<double>(p.grid[0]) * p.grid[1] * p.grid[2];
  const double block = static_cast<double>(p.block[0]) * p.block[1] * p.block[2];
  a.add("launch__grid_dim_x", p.grid[0]);
  a.add("launch__grid_dim_y", p.grid[1]);
  a.add("launch__grid_dim_z", p.grid[2]);
  a.add("launch__block_dim_x", p.block[0]);
  a.add("launch__block_dim_y", p.block[1]);
  a.add("launch__block_dim_z", p.block[2]);
  a.add("launch__grid_size", grid);
  a.add("launch__block_size", block);
  a.add("launch__thread_count", grid * block);
  if (launch.function.known) {
    // As the SM allocates them, which is what ncu prints and its occupancy
    // uses: never fewer than 16. On the H200, ncu printed 16 for five kernels
    // that ptxas compiled to 8, 13 and 14 registers, and the exact count from
    // 24 up (tests/gpu/kernel_zoo.cu against ncu 2025.3, 2026-12-01).
    a.add("launch__registers_per_thread",
          std::max(launch.function.registers_per_thread, kMinAllocatedRegisters));
    a.add("launch__shared_mem_per_block_static", launch.function.static_shared);
  }
  a.add("launch__shared_mem_per_block_dynamic", static_cast<double>(p.dynamic_shared));
  if (p.cluster[0] != 0) {
    a.add("launch__cluster_dim_x", p.cluster[0]);
    a.add("launch__cluster_dim_y", p.cluster[1]);
    a.add("launch__cluster_dim_z", p.cluster[2]);
  }
  if (launch.smem_config_bytes != 0) {
    a.add("launch__shared_mem_config_size", launch.smem_config_bytes);
  }
  a.add("launch__cooperative", p.cooperative ? 1 : 0);
  if (launch.stream_known) a.add("launch__stream_id", launch.stream_id);
  a.add("launch__context_id", launch.context_id);
  a.add("launch__api", static_cast<double>(static_cast<uint32_t>(p.api)));
  for (int i = 0; i < kDeviceAttributeCount; ++i) {
    if (device.known[i]) a.add(kDeviceAttributeNames[i], device.values[i]);
  }
  return a.count;
}

}  // namespace strata::agent::kernels
