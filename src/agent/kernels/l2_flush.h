// L2Flush: what `--cache-control all` does before every replay pass: the
// profiled kernel starts with no line of its data in the L2 cache and no
// dirty line of anyone's waiting to be written back during it, as ncu
// arranges with its own (driver-internal) cache flush.
//
// CUDA has no call that flushes L2, so the flush is a kernel
// (l2_sweep.cu) that reads a buffer twice the L2's size: every older line
// is evicted, dirty ones written back while the sweep runs, and L2 is left
// holding clean lines of the buffer, which cost the next kernel nothing.
// The sweep is enqueued on the profiled launch's stream just before the
// relaunch, so that the GPU goes from one to the other with no idle gap
// (flushed_replay.h says why that matters).
//
// Per context, set up at its first flush: the buffer (cuMemAlloc, zeroed),
// a small array of the ranges to touch, and the module of both kernels,
// JIT-compiled from the PTX embedded in the agent. All live as long as the
// context (never freed: the profiler keeps its
// per-context state until exit, range_session.h).
// Threading: one thread at a time (the kernel profiler's lock).
#pragma once

#include <cuda.h>

#include <cstddef>

#include "agent/kernels/driver_api.h"

namespace strata::agent::kernels {

class L2Flush {
 public:
  // Sets up the buffer and the kernel on `device` (the first call; later
  // ones return its status).
  CUresult prepare(const DriverApi& api, CUdevice device);
  // The allocations the kernel's pointer arguments, and the pointer members
  // of its struct arguments, point into (found from its parameter list):
  // after each sweep, one load per 64 KB of them refills the GPU's address
  // translation caches, which the sweep most likely empties and ncu's flush
  // leaves alone (docs/PERFORMANCE.md, "Cache control": runs C and D, and
  // run G for struct arguments). Called once per profiled launch, before the
  // checkpoint is saved. Returns how many ranges were found.
  size_t find_touch_ranges(const DriverApi& api, CUfunction function, void* const* kernel_params);
  // Enqueues the sweep, then the touch of those ranges, on `stream`;
  // prepare() must have succeeded.
  CUresult enqueue(const DriverApi& api, CUstream stream);
  size_t buffer_bytes() const { return words_ * kWordBytes; }

 private:
  static constexpr size_t kWordBytes = 16;  // the sweep reads uint4 words
  static constexpr size_t kMaxTouchRanges = 32;
  static constexpr size_t kMaxParams = 256;
  // Nonzero argument words looked up per launch (4 KB of arguments): each
  // is one cuMemGetAddressRange call, made once per profiled launch.
  static constexpr size_t kMaxWordsAsked = 512;
  struct TouchRange {  // l2_sweep.cu's StrataTouchRange
    unsigned long long base;
    unsigned long long bytes;
  };
  CUresult set_up(const DriverApi& api, CUdevice device);

  bool set_up_done_ = false;
  CUresult set_up_status_ = CUDA_SUCCESS;
  CUdeviceptr buffer_ = 0;
  size_t words_ = 0;
  unsigned grid_ = 0;
  CUfunction sweep_ = nullptr;
  CUfunction touch_ = nullptr;
  CUdeviceptr touch_ranges_ = 0;  // kMaxTouchRanges TouchRange
  unsigned touch_count_ = 0;
};

}  // namespace strata::agent::kernels
