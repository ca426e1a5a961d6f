// FlushedReplay: strata's own replay of a profiled launch, for
// `--cache-control all` (the default; docs/kernels.md "Cache control").
//
// CUPTI's kernel replay (RangeSession::Replay::kCupti) saves the device
// memory before the first pass and restores it before the others, and
// leaves L2 as those copies leave it: on the H200 its save left dirty lines
// that the profiled kernel then had to write back (a 64 MB reduction ran
// 19% longer than under ncu). ncu flushes the caches before every pass; so
// does this replay, which runs the passes itself from the launch's enter
// callback, through CUPTI's user replay:
//
//   cuCtxSynchronize                the program's earlier work is done
//   CacheFlush::prepare, find_touch_ranges (the kernel's pointer arguments)
//   cuptiCheckpointSave             the context's device memory
//   for each pass: cuptiCheckpointRestore (after the first), RangeSession
//     begin / start_pass, then on the launch's stream, back to back: the
//     instruction sweep, the L2 sweep and discard, the page touch
//     (cache_flush.h), the relaunch (the same driver entry point with the
//     program's own arguments); cuCtxSynchronize, stop_pass
//   until CUPTI says every pass was submitted; then
//   cuptiCheckpointRestore; the recorded relaunch (kernel records on, the
//   kernel once more, cuCtxSynchronize, records off, cuptiCheckpointRestore:
//   executed_config.h says why only there); cuptiCheckpointFree,
//   RangeSession::evaluate (the pass's last range: the kernel's; each flush
//   kernel has its own).
//
// Why each piece (measured on the H200, docs/PERFORMANCE.md "Kernel layer"):
// the sweep inside the pass, with no host gap before the kernel, made a
// reduction and a cooperative kernel agree with ncu; the page touch after it
// brought kernels of 3 to 6 us from 17-29% longer than ncu to within about
// 6%: most likely the sweep evicts the GPU's address translations of the
// kernel's memory, which ncu's own flush keeps and the touch restores; the
// instruction sweep before them and the discard gave a 4-block cuBLAS gemm
// ncu's SM and L2 active cycles and a reduction ncu's L2 throughput within
// the tolerance (ncu's flush empties the instruction caches and
// invalidates the L2; an L2 sweep does neither; "Instruction caches and an
// empty L2").
//
// The program's own launch then runs unprofiled on the restored memory, so
// what it computes is what one launch computes.
//
// The checkpoint API is libcheckpoint.so beside libcupti (CUDA 13),
// dlopen'd at first use. Until the first pass starts, any failure (no
// libcheckpoint, no memory for the checkpoint, no sweep kernel) leaves
// everything as it was and says fall_back: the caller profiles the launch
// with CUPTI's kernel replay instead. A failure after that ends this
// launch's profile; memory is restored and the checkpoint freed on every path.
// Threading: one thread at a time (the kernel profiler's lock).
#pragma once

#include <cuda.h>
#include <cupti_callbacks.h>
#include <cupti_result.h>

#include <cstddef>

#include "agent/kernels/cache_flush.h"
#include "agent/kernels/driver_api.h"
#include "agent/kernels/executed_config.h"
#include "agent/kernels/range_session.h"

namespace strata::agent::kernels {

// Kernels in each pass of strata's replay, each its own range: the
// instruction sweep, the L2 sweep, the discard, the page touch, the profiled
// kernel (the last).
inline constexpr size_t kReplayRangesPerPass = 5;

// A driver launch callback's entry point and parameter struct.
struct DriverLaunch {
  CUpti_CallbackId cbid = 0;
  const void* params = nullptr;
};

struct ReplayResult {
  CUptiResult status = CUPTI_SUCCESS;
  bool fall_back = false;                // nothing was run: use CUPTI's kernel replay
  CUresult launch_error = CUDA_SUCCESS;  // a relaunch the driver refused
  const char* failed_call = "";          // the call that failed, for the one stderr line
  int passes = 0;
  size_t touched_ranges = 0;  // allocations whose pages are touched after each sweep
  bool recorded = false;      // the recorded relaunch ran
  // Where the replay's time went, for the debug line: the checkpoint's save,
  // its restores (before every pass but the first, and after the last), the
  // passes without those restores, the recorded relaunch with its restore.
  double save_ms = 0;
  double restore_ms = 0;
  double passes_ms = 0;
  double recorded_ms = 0;
};

// True when `cbid` is a driver launch the replay can relaunch.
bool can_relaunch(CUpti_CallbackId cbid);

// `records`: the probe turned on for the recorded relaunch (which does
// nothing where the probe did not start).
ReplayResult replay_flushed(const DriverApi& api, RangeSession& session, CacheFlush& flush,
                            CUcontext context, CUdevice device, const DriverLaunch& launch,
                            ExecutedConfigProbe& records, double* values);

}  // namespace strata::agent::kernels
