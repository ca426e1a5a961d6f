// The kernel CacheFlush launches right after the L2 sweep (cache_flush.h):
// it discards the sweep buffer's lines from L2, so that the profiled kernel
// finds the L2 empty, as after ncu's flush (an invalidate), rather than full
// of clean lines. On the H200 a 64 MB reduction after a sweep alone made
// 17 % more L2 tag lookups than under ncu, and its L2 throughput read 5.5
// points high; with the discard, 3.2 (bench/flush_lab; docs/PERFORMANCE.md,
// "Instruction caches and an empty L2").
//
// discard.global.L2 exists from sm_80 on, hence this file's own PTX
// (compute_80, src/agent/CMakeLists.txt): the buffer's zeros are never
// written back, nor need to be, since nothing reads them but the sweep.
#include <cstddef>

extern "C" __global__ void strata_l2_discard(char* buffer, size_t bytes) {
  constexpr size_t kLine = 128;  // discard's only size
  for (size_t at = (blockIdx.x * size_t{blockDim.x} + threadIdx.x) * kLine; at < bytes;
       at += size_t{gridDim.x} * blockDim.x * kLine) {
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(buffer + at) : "memory");
  }
}
