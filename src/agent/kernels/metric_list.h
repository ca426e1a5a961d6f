// The CUPTI range-profiler metrics of each ncu section strata kernels
// collects (docs/kernels-interface.md, "Metric names"; shared/reference/
// ncu-metrics.md has what each value is). "launch" needs no counters: its
// values are computed on the host from the launch__* and device__attribute_*
// values the agent always writes.
//
// Allocation: none; the names are string literals.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::agent::kernels {

// All 21 distinct CUPTI metrics (sm__cycles_active.avg belongs to sol and
// workload and is listed once).
inline constexpr size_t kMaxMetrics = 21;

struct MetricList {
  const char* names[kMaxMetrics] = {};
  size_t count = 0;
};

// The metrics of the sections in `sections` (KernelSection bits of
// config.h), in a fixed order, each once.
MetricList metrics_for_sections(uint32_t sections);

}  // namespace strata::agent::kernels
