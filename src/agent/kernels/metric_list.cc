#include "agent/kernels/metric_list.h"

#include <cstring>

#include "agent/config.h"

namespace strata::agent::kernels {

namespace {

constexpr const char* kSolMetrics[] = {
    "gpu__time_duration.sum",
    "gpc__cycles_elapsed.max",
    "gpc__cycles_elapsed.avg.per_second",
    "dram__cycles_elapsed.avg.per_second",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__cycles_active.avg",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
};
constexpr const char* kWorkloadMetrics[] = {
    "l1tex__cycles_active.avg", "lts__cycles_active.avg",   "smsp__cycles_active.avg",
    "dram__cycles_active.avg",  "sm__cycles_elapsed.sum",   "l1tex__cycles_elapsed.sum",
    "lts__cycles_elapsed.sum",  "smsp__cycles_elapsed.sum", "dram__cycles_elapsed.sum",
    "sm__cycles_active.avg",
};
constexpr const char* kOccupancyMetrics[] = {
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__warps_active.avg.per_cycle_active",
};

void add_one(MetricList* list, const char* name) {
  for (size_t i = 0; i < list->count; ++i) {
    if (std::strcmp(list->names[i], name) == 0) return;
  }
  if (list->count < kMaxMetrics) list->names[list->count++] = name;
}

template <size_t N>
void add_all(MetricList* list, const char* const (&names)[N]) {
  for (const char* name : names) add_one(list, name);
}

}  // namespace

MetricList metrics_for_sections(uint32_t sections, const char* extra, uint32_t extra_count) {
  MetricList list;
  if (sections & kSectionSol) add_all(&list, kSolMetrics);
  if (sections & kSectionWorkload) add_all(&list, kWorkloadMetrics);
  if (sections & kSectionOccupancy) add_all(&list, kOccupancyMetrics);
  for (uint32_t i = 0; extra != nullptr && i < extra_count && i < kMaxExtraMetrics; ++i) {
    add_one(&list, extra);
    extra += std::strlen(extra) + 1;
  }
  return list;
}

}  // namespace strata::agent::kernels
