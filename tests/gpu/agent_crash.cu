// GPU test program (e): launches 50 kernels and syncs, sleeps 1.5 s (three
// periodic flushes), launches 5 more, then dies of SIGSEGV. The first 50
// must be in the spool.
#include <unistd.h>

#include "common.h"

__global__ void early_kernel() {}
__global__ void late_kernel() {}

int main() {
  for (int i = 0; i < 50; ++i) early_kernel<<<1, 32>>>();
  CHECK_CUDA(cudaDeviceSynchronize());
  usleep(1500 * 1000);
  for (int i = 0; i < 5; ++i) late_kernel<<<1, 32>>>();
  std::fflush(stdout);
  volatile int* null_pointer = nullptr;
  *null_pointer = 1;
  return 0;
}
