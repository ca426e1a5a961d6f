// The CUPTI range-profiler metrics of each ncu section strata kernels
// collects (docs/kernels-interface.md, "Metric names"; shared/reference/
// ncu-metrics.md has what each value is). "launch" needs no counters: its
// values are computed on the host from the launch__* and device__attribute_*
// values the agent always writes.
//
// Allocation: none; the names are string literals or point into the
// agent's Config.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agent/config.h"

namespace strata::agent::kernels {

// The sections' 21 distinct CUPTI metrics (sm__cycles_active.avg belongs to
// sol and workload and is listed once), and room for the extra ones of
// STRATA_KERNEL_METRICS.
inline constexpr size_t kSectionMetrics = 21;
inline constexpr size_t kMaxExtraMetrics = Config::kMaxKernelMetrics;
inline constexpr size_t kMaxMetrics = kSectionMetrics + kMaxExtraMetrics;

struct MetricList {
  const char* names[kMaxMetrics] = {};
  size_t count = 0;
};

// The metrics of the sections in `sections` (KernelSection bits of
// config.h), in a fixed order, then the `extra_count` NUL-ended names at
// `extra` (Config::kernel_metrics, which must outlive the list), each name
// once.
MetricList metrics_for_sections(uint32_t sections, const char* extra = nullptr,
                                uint32_t extra_count = 0);

}  // namespace strata::agent::kernels
