// The values of one kernel-metrics chunk: the CUPTI metrics (when they were
// collected) followed by the launch__* and device__attribute_* values the
// agent knows without counters (docs/kernels-interface.md, "Metric names").
//
// Pure: no CUDA calls; the names are string literals, so the MetricValues
// it fills stay valid.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agent/kernels/driver_api.h"
#include "agent/kernels/launch_params.h"
#include "agent/kernels/metric_list.h"
#include "format/payloads.h"

namespace strata::agent::kernels {

struct LaunchFacts {
  LaunchParams params;
  FunctionAttributes function;
  bool stream_known = false;
  uint32_t stream_id = 0;          // CUPTI's stream id
  uint32_t context_id = 0;         // CUPTI's context uid
  uint32_t smem_config_bytes = 0;  // the executed carveout (executed_config.h); 0: unknown
};

// The fewest registers per thread an SM allocates (launch_metrics.cc).
inline constexpr int kMinAllocatedRegisters = 16;

// CUPTI metrics, up to 24 launch values (20 are named now), 10 device values.
inline constexpr size_t kMaxChunkMetrics = kMaxMetrics + 24 + kDeviceAttributeCount;

// Fills out[0..n) and returns n. `cupti_values` is null when the counters
// were not collected (status != 0): then only the launch and device values.
size_t build_launch_metrics(const MetricList& cupti, const double* cupti_values,
                            const LaunchFacts& launch, const DeviceAttributes& device,
                            format::MetricValue* out, size_t capacity);

}  // namespace strata::agent::kernels
