// L2Flush: what `--cache-control all` does before every replay pass: the
// profiled kernel starts with no line of its data in the L2 cache and no
// dirty line of anyone's waiting to be written back during it, as ncu
// arranges with its own (driver-internal) cache flush.
//
// CUDA has no call that flushes L2, so the flush is a kernel
// (l2_sweep.cu) that reads a buffer twice the L2's size: every older line
// is evicted, dirty ones written back while the sweep runs, and L2 is left
// holding clean lines of the buffer, which cost the next kernel nothing.
//
// Per context, set up at its first flush: the buffer (cuMemAlloc, zeroed)
// and the sweep's module, JIT-compiled from the PTX embedded in the agent.
// Both live as long as the context (never freed: the profiler keeps its
// per-context state until exit, range_session.h).
// Threading: one thread at a time (the kernel profiler's lock).
#pragma once

#include <cuda.h>

#include <cstddef>

#include "agent/kernels/driver_api.h"

namespace strata::agent::kernels {

class L2Flush {
 public:
  // Runs the sweep on the current context's null stream and waits for it.
  // The first call sets up the buffer and the kernel on `device`.
  CUresult flush(const DriverApi& api, CUdevice device);
  size_t buffer_bytes() const { return words_ * kWordBytes; }

 private:
  static constexpr size_t kWordBytes = 16;  // the sweep reads uint4 words
  CUresult set_up(const DriverApi& api, CUdevice device);

  bool set_up_done_ = false;
  CUresult set_up_status_ = CUDA_SUCCESS;
  CUdeviceptr buffer_ = 0;
  size_t words_ = 0;
  unsigned grid_ = 0;
  CUfunction sweep_ = nullptr;
};

}  // namespace strata::agent::kernels
