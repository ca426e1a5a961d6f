// The size of each CUPTI activity record the agent enables, as this build's
// CUDA 13.0 headers (cupti_activity.h) lay it out: the agent walks its
// buffers with it and ingest reads the spooled buffers with it, so the two
// cannot disagree. CUDA-only: include it only from targets built with the
// CUDA toolkit (the agent, ingest). tests/agent/record_walk_test.cc checks it
// against libcupti's own parser.
#pragma once

#include <cupti_activity.h>

#include <cstddef>
#include <cstdint>

namespace strata::format {

// 0 for a kind the agent never enables: such a record ends the walk of its
// buffer (the size of what follows is unknown).
inline size_t cupti_record_size(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
      return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_NAME:
      return sizeof(CUpti_ActivityName);
    case CUPTI_ACTIVITY_KIND_MARKER:
      return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA:
      return sizeof(CUpti_ActivityMarkerData2);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:  // PyTorch ops' ids (issue 18)
      return sizeof(CUpti_ActivityExternalCorrelation);
    default:
      return 0;
  }
}

}  // namespace strata::format
