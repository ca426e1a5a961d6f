// NVTX's injection entry point: with NVTX_INJECTION64_PATH naming
// libstrata_agent.so, the first NVTX call in each module using NVTX v3 loads
// it and calls InitializeInjectionNvtx2, which hands NVTX's export table to
// CUPTI so that ranges and marks become CUPTI_ACTIVITY_KIND_MARKER records.
// Statically injected NVTX (InitializeInjectionNvtx2_fnptr) is not covered.
#include <cupti.h>

#include "agent/agent_init.h"

// Exported by libcupti but declared in no CUDA 13.0 header (NVIDIA's
// cupti_trace_injection sample declares it the same way).
extern "C" CUptiResult CUPTIAPI cuptiNvtxInitialize2(void* get_export_table);

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    void* get_export_table) {
  // The first NVTX call may come before cuInit; CUPTI's activity API can be
  // set up before CUDA is (NVIDIA's activity_trace_async sample does), so
  // markers from the start of the program are kept.
  if (!strata::agent::ensure_started(strata::agent::Origin::kNvtxInjection)) {
    return 0;  // NVTX then stays a no-op: nothing to record them into
  }
  return cuptiNvtxInitialize2(get_export_table) == CUPTI_SUCCESS ? 1 : 0;
}
