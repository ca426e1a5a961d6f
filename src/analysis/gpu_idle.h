// Where the GPU waited, and on what. From a trace's first kernel to its last
// GPU activity (kernels, copies, memsets: the work window; what comes before
// the first kernel is start-up), time is busy or idle. A gap that ends with
// the first launch of a kernel name, or before the first launch of the kernel
// with most GPU time, is set-up paid once (first_use_ns).
// Each other idle gap ends with an activity some host thread issued through
// one CUDA call; the gap is charged by what that thread was doing:
//  - until the issuing call returned: inside a synchronizing call, a launch
//    or enqueue call, another recorded CUDA call, or its own code (which
//    includes CUDA calls the agent does not record: docs/agent.md);
//  - after the issuing call returned (or all of the gap, when it returned
//    before the GPU went idle): queued, the work was already on its way
//    (launch latency, a stream waiting for another).
// That is the tutorial's question "is the GPU waiting on the host, and why",
// answered from one trace, as HTA separates host wait from GPU-side gaps.
//
// Needs the tables loaded with GpuLoadOptions::timeline (copies' correlation
// ids); a gap whose next activity has no API call in the trace (an nsys
// export without the runtime table, a graph's later kernels) is counted as
// unattributed rather than guessed at.
//
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "store/gpu_tables.h"

namespace strata::analysis {

// What a CUDA API call does to the host thread, by its name (docs/diagnose.md).
enum class ApiRole {
  kSync,    // blocks until the GPU has caught up: *Synchronize, a synchronous
            // cudaMemcpy/cuMemcpy, cudaFree/cuMemFree (an implicit device sync)
  kLaunch,  // enqueues work and returns: *Launch*, *Async copies and memsets
  kOther,   // everything else (attributes, allocation, module loading, ...)
};
ApiRole api_role(std::string_view name);
// cudaMemcpy*, cuMemcpy*, cudaMemset*, cuMemset*: a copy or memset call.
bool is_copy_call(std::string_view name);

struct IdleCauses {
  int64_t sync_ns = 0;          // the issuing thread was in a synchronizing call
  int64_t copy_sync_ns = 0;     // ... part of sync_ns: the call was a synchronous copy or memset
  int64_t launch_ns = 0;        // ... in a launch or enqueue call
  int64_t other_api_ns = 0;     // ... in another recorded CUDA call
  int64_t host_ns = 0;          // ... outside recorded CUDA calls
  int64_t queued_ns = 0;        // the issuing call had returned: the work was queued
  int64_t unattributed_ns = 0;  // no issuing call found for the next activity
  // Gaps that end with the first launch of a kernel name (its first use:
  // lazy module loading, a library's set-up, autotuning) or before the first
  // launch of the kernel with most GPU time (the program's set-up): paid
  // once; none of the causes above, so that a loop's rules do not count it.
  int64_t first_use_ns = 0;
  // Of the gaps in which the issuing thread first waited in a synchronizing
  // call (not a copy): everything else in them (own code, launching, other
  // calls, queued), which the wait exposed. Part of the fields above.
  int64_t after_sync_ns = 0;
  int64_t host_after_sync_ns = 0;  // ... its host_ns part

  int64_t host_side_ns() const { return sync_ns + launch_ns + other_api_ns + host_ns; }
};

// A stretch of a gap charged to the issuing thread's own code: where the
// CPU layer looks for the host function that held the GPU back.
struct HostInterval {
  int64_t global_tid = 0;
  int64_t start = 0;
  int64_t end = 0;
  bool after_sync = false;  // in a gap that began with a synchronizing call
};

struct GpuIdle {
  bool has_activity = false;    // any kernel, copy or memset
  bool has_api = false;         // any CUDA call in the trace
  int64_t first_api_start = 0;  // the earliest CUDA call (when has_api): CUDA start-up begins
  int64_t window_start = 0;     // the first kernel's start (the first copy's without kernels)
  int64_t window_end = 0;       // the last GPU activity's end
  int64_t busy_ns = 0;          // union of kernels, copies and memsets in the window
  int64_t gaps = 0;             // idle gaps in the window
  IdleCauses idle;
  std::vector<HostInterval> host_intervals;  // the parts of idle.host_ns, in time order

  int64_t window_ns() const { return window_end - window_start; }
  int64_t idle_ns() const { return window_ns() - busy_ns; }
};

GpuIdle gpu_idle(const store::GpuTables& tables);

}  // namespace strata::analysis
