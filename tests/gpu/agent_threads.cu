// GPU test program (b): 8 threads, each with 2 streams, each launching K
// kernels per stream concurrently; known totals.
//   agent_threads K
#include <pthread.h>

#include <thread>
#include <vector>

#include "common.h"

__global__ void thread_kernel(int* out) {
  if (out != nullptr) *out = 1;
}

int main(int argc, char** argv) {
  int k = argc > 1 ? std::atoi(argv[1]) : 200;
  CHECK_CUDA(cudaFree(nullptr));  // context up before the threads race
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([k, t] {
      char name[16];
      std::snprintf(name, sizeof(name), "worker-%d", t);
      pthread_setname_np(pthread_self(), name);
      cudaStream_t streams[2];
      for (auto& s : streams) CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      for (int i = 0; i < k; ++i) {
        for (auto& s : streams) thread_kernel<<<1, 32, 0, s>>>(nullptr);
      }
      for (auto& s : streams) {
        CHECK_CUDA(cudaStreamSynchronize(s));
        CHECK_CUDA(cudaStreamDestroy(s));
      }
    });
  }
  for (auto& th : threads) th.join();
  std::printf("launched %d\n", 8 * 2 * k);
  return 0;
}
