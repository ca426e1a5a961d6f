// `strata diagnose --range NAME`: the diagnosis limited to an NVTX range or
// a PyTorch record_function (or op) named NAME, as nsys analyze's range
// filter does. The rules (analysis/diagnosis.h) take no range, so the
// restriction is made in their input: the span from the first such range's
// start to the last one's end, and the CUDA calls, kernels, copies, memsets
// and CPU samples that start inside it.
//
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "analysis/cpu_profile.h"
#include "store/gpu_tables.h"
#include "store/torch_op_rows.h"

namespace strata::analysis {

struct TimeSpan {
  int64_t start = 0;
  int64_t end = 0;
  int64_t instances = 0;  // ranges named NAME found
};

// nullopt when neither an NVTX range (with an end) nor an op is named `name`.
std::optional<TimeSpan> find_range(const std::string& name, const store::GpuTables& gpu,
                                   std::span<const store::TorchOp> ops);

// The rows of `tables` that start inside `span`; the NVTX rows are kept.
store::GpuTables restrict_to(const store::GpuTables& tables, const TimeSpan& span);

// The samples taken inside `span` (instrumented call events are kept whole).
Profile restrict_to(const Profile& profile, const TimeSpan& span);

}  // namespace strata::analysis
