// Who called whom, as pstats' print_callers / print_callees show it: one
// edge per (caller, callee) pair of functions, with the edge's own counts
// and times.
//
// Sampled modes: an edge is a caller directly above the callee in a
// sampled stack. Its ncalls and tottime are the samples with the callee as
// leaf under that caller (so a function's edges add up to its row's ncalls
// and tottime); its cumtime is the samples whose stack holds the edge,
// counted once per sample however deep the recursion.
// Instrumented mode: every call of the callee made while the caller was
// the innermost open frame; cumtime only from primitive calls, as cProfile.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/cpu_profile.h"

namespace strata::analysis {

struct CpuEdge {
  uint32_t caller = 0;  // function indices, as CpuTable::functions
  uint32_t callee = 0;
  uint64_t ncalls = 0;
  uint64_t primitive_calls = 0;
  double tottime_s = 0;
  double cumtime_s = 0;
};

// Every edge of the threads in `tids` (all when empty), ordered by caller
// then callee index.
std::vector<CpuEdge> cpu_call_edges(const Profile& profile, const std::vector<int32_t>& tids);

}  // namespace strata::analysis
