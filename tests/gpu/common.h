// Shared bits of the agent's GPU test programs: error checks and the
// CLOCK_MONOTONIC stamps they print so the test can bound the trace's
// timestamps by the program's own lifetime.
#pragma once

#include <cuda_runtime.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(call)                                                 \
  do {                                                                   \
    cudaError_t strata_rc = (call);                                      \
    if (strata_rc != cudaSuccess) {                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorString(strata_rc));                       \
      std::exit(1);                                                      \
    }                                                                    \
  } while (0)

inline long long monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
