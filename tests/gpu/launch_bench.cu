// Launch-overhead probe for scripts/gpu-agent-check: N empty <<<1,32>>>
// launches after a warm-up, timed on CLOCK_MONOTONIC including the final
// sync. Prints "us_per_launch X", then "main_end_monotonic_ns T": the end of
// main, from which a tracer's flush, teardown and post-processing are timed.
//   launch_bench [N]
#include "common.h"

__global__ void bench_kernel() {}

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 100000;
  for (int i = 0; i < 1000; ++i) bench_kernel<<<1, 32>>>();
  CHECK_CUDA(cudaDeviceSynchronize());
  long long start = monotonic_ns();
  for (int i = 0; i < n; ++i) bench_kernel<<<1, 32>>>();
  CHECK_CUDA(cudaDeviceSynchronize());
  long long end = monotonic_ns();
  std::printf("us_per_launch %.3f\n", (end - start) / 1000.0 / n);
  std::printf("main_end_monotonic_ns %lld\n", monotonic_ns());
  std::fflush(stdout);
  return 0;
}
