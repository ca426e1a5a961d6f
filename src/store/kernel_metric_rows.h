// strata_kernel_metrics and strata_kernels_seen: what `strata kernels`
// measured per profiled launch, and every kernel name launched with its count
// (docs/kernels.md, docs/formats.md).
//
// Threading: as the TraceWriter/TraceReader passed in (one thread at a time).
// Allocation: the readers return owned copies.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "store/trace_db.h"

namespace strata::store {

// One profiled launch with its metrics, in the order the agent wrote them.
struct ProfiledLaunch {
  int64_t pid = 0;
  int64_t device = 0;
  int64_t correlation_id = 0;  // 0: unknown
  int64_t invocation = 0;      // 0-based among launches of kernel_name in the process
  std::string kernel_name;     // mangled
  int64_t status = 0;          // 0 collected; else CUptiResult, or CUresult + 1'000'000
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::vector<std::pair<std::string, double>> metrics;  // ncu raw name, base-unit value
};

struct KernelSeenRow {
  int64_t pid = 0;
  std::string kernel_name;  // mangled
  int64_t launches = 0;
};

Status write_profiled_launch(TraceWriter& writer, const ProfiledLaunch& launch);
Status write_kernels_seen(TraceWriter& writer, const std::vector<KernelSeenRow>& rows);

// Launches in file order; empty for traces without the table (older strata
// files, Nsight Systems exports). A row whose metric is NULL adds no metric.
Result<std::vector<ProfiledLaunch>> read_profiled_launches(const TraceReader& reader);
// Rows summed over processes per kernel name, most launches first (ties by name).
Result<std::vector<KernelSeenRow>> read_kernels_seen(const TraceReader& reader);

// Whether the trace has any strata_kernel_metrics row: false for a file
// without the table, an error (naming the file) for one that cannot be read.
Result<bool> kernel_profiles_present(const TraceReader& reader);

}  // namespace strata::store
