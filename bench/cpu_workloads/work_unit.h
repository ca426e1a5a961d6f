// One calibrated unit of CPU-bound work for the strata cpu benchmarks: an
// integer mixing loop with no memory traffic and no calls, so its cost per
// iteration is the same on every thread and a sampler sees it in one function.
#pragma once
#include <cstdint>

namespace cpu_bench {

// Not inlined, so samples land in a function of this name.
[[gnu::noinline]] inline uint64_t spin_work(uint64_t iterations, uint64_t seed) {
  uint64_t x = seed | 1;
  for (uint64_t i = 0; i < iterations; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    asm volatile("" : "+r"(x));  // keep the loop from being folded away
  }
  return x;
}

}  // namespace cpu_bench
