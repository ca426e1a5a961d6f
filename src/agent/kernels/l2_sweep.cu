// The kernel CacheFlush launches before every replay pass (cache_flush.h): it
// reads a buffer twice the size of the L2 cache, so that every line the
// profiled kernel or the memory restore left in L2 is evicted (dirty lines
// are written back now, not during the pass) and the pass starts with the
// kernel's data cold, as after ncu's --cache-control all.
//
// Compiled to PTX for the lowest architecture CUDA 13 supports and embedded
// in the agent (src/agent/CMakeLists.txt); the driver JIT-compiles it for
// the GPU at hand, so the agent carries no per-architecture binary.
#include <cstddef>

extern "C" __global__ void strata_l2_sweep(const uint4* __restrict__ words, size_t count,
                                           unsigned* sink) {
  unsigned folded = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    // .cg: cached in L2 only, where the eviction has to happen.
    uint4 w = __ldcg(words + i);
    folded ^= w.x ^ w.y ^ w.z ^ w.w;
  }
  // The buffer holds zeros (the discard after the sweep drops only L2's
  // copies of them), so this store never happens; it keeps the compiler
  // from dropping the loads, and would land in the buffer itself.
  if (folded == 0x9e3779b9u) *sink = folded;
}

// One address range the profiled kernel's arguments point into.
struct StrataTouchRange {
  unsigned long long base;
  unsigned long long bytes;
};

// After the sweep: one 4-byte load per 64 KB of each range the kernel's
// arguments point into, so that the GPU's address translation caches hold
// the kernel's pages again, as they do after ncu's flush (which empties the
// caches without evicting translations); the data it brings into L2 is one
// sector per 64 KB. One block per range.
extern "C" __global__ void strata_touch_pages(const StrataTouchRange* ranges, unsigned* sink) {
  const StrataTouchRange r = ranges[blockIdx.x];
  unsigned folded = 0;
  for (unsigned long long offset = threadIdx.x * 65536ull; offset < r.bytes;
       offset += blockDim.x * 65536ull) {
    folded ^= __ldcg(reinterpret_cast<const unsigned*>(r.base + offset));
  }
  if (folded == 0x9e3779b9u && r.bytes == 1) *sink = folded;  // never: keeps the loads
}
