// CacheFlush: what `--cache-control all` does before every replay pass: the
// profiled kernel starts with none of its instructions in the SMs'
// instruction caches, no line of its data in the L2 cache and no dirty line
// of anyone's waiting to be written back during it, as ncu arranges with its
// own (driver-internal) cache flush.
//
// CUDA has no call that flushes a cache, so the flush is four kernels,
// enqueued on the profiled launch's stream just before the relaunch, so
// that the GPU goes from one to the next with no idle gap (flushed_replay.h
// says why that matters):
//   1. the instruction sweep (instruction_sweep_ptx.h): 256 KB of code run
//      on every SM, which evicts the kernel's instructions;
//   2. the L2 sweep (l2_sweep.cu), which reads a buffer twice the L2's size:
//      every older line is evicted, dirty ones written back while it runs;
//   3. the discard (l2_discard.cu, sm_80 and later) of the buffer's lines,
//      which leaves the L2 empty, as ncu's invalidate does;
//   4. the page touch (below), which undoes what the L2 sweep does that
//      ncu's flush does not.
// The instruction sweep goes first. Run between the L2 sweep and the kernel
// (about 95 us of arithmetic on the H200, with the memory idle), it gave a
// small memory-bound kernel 12 % more SM active cycles than ncu measures
// (docs/PERFORMANCE.md, "Instruction caches and an empty L2").
//
// Per context, set up at its first flush: the buffer (cuMemAlloc, zeroed),
// a small array of the ranges to touch, the modules of the L2 sweep and
// touch and of the discard, JIT-compiled from the PTX embedded in the agent,
// and the instruction sweep's module, JIT-compiled from PTX written at
// set-up. All live as long as the context (never freed: the profiler keeps
// its per-context state until exit, range_session.h).
// Threading: one thread at a time (the kernel profiler's lock).
#pragma once

#include <cuda.h>

#include <cstddef>

#include "agent/kernels/driver_api.h"

namespace strata::agent::kernels {

class CacheFlush {
 public:
  // Sets up the buffer and the kernels on `device` (the first call; later
  // ones return its status). The touch, the discard and the instruction
  // sweep are optional: without them the L2 sweep still runs.
  CUresult prepare(const DriverApi& api, CUdevice device);
  // The allocations the kernel's pointer arguments, and the pointer members
  // of its struct arguments, point into (found from its parameter list):
  // after each L2 sweep, one load per 64 KB of them refills the GPU's
  // address translation caches, which the sweep most likely empties and
  // ncu's flush leaves alone (docs/PERFORMANCE.md, "Cache control": runs C and D, and
  // run G for struct arguments). Called once per profiled launch, before the
  // checkpoint is saved. Returns how many ranges were found.
  size_t find_touch_ranges(const DriverApi& api, CUfunction function, void* const* kernel_params);
  // Enqueues the instruction sweep, the L2 sweep, the discard, then the
  // touch of those ranges, on `stream`; prepare() must have succeeded.
  CUresult enqueue(const DriverApi& api, CUstream stream);
  size_t buffer_bytes() const { return words_ * kWordBytes; }
  bool sweeps_instructions() const { return instruction_sweep_ != nullptr; }
  bool discards() const { return discard_ != nullptr; }
  double set_up_ms() const { return set_up_ms_; }  // the JIT compiles are most of it

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
  double set_up_ms_ = 0;
  CUdeviceptr buffer_ = 0;
  size_t words_ = 0;
  unsigned grid_ = 0;  // of the L2 sweep
  unsigned sms_ = 0;
  CUfunction sweep_ = nullptr;
  CUfunction touch_ = nullptr;
  CUfunction discard_ = nullptr;
  CUfunction instruction_sweep_ = nullptr;
  CUdeviceptr touch_ranges_ = 0;  // kMaxTouchRanges TouchRange
  unsigned touch_count_ = 0;
};

}  // namespace strata::agent::kernels
