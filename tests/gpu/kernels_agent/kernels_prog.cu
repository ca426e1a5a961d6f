// The kernels-mode agent's GPU program: one kernel per launch API, each with
// its own grid, so the test can tell the chunks apart. Knows nothing of
// strata; prints "ok" when every launch succeeded.
//   scale_kernel      <<<7, 128>>>        x3  (runtime, __cudaLaunchKernel in CUDA 13)
//   other_kernel      <<<2, 32>>>         x2  (never matches the test's filter)
//   driver_kernel     cuLaunchKernel      (3,2,1) x (64,1,1)
//   driver_ex_kernel  cuLaunchKernelEx    (5,1,1) x (96,1,1), 384 B dynamic shared
//   coop_kernel       cudaLaunchCooperativeKernel (2,1,1) x (32,1,1)
//   graph_kernel      captured into a CUDA graph, launched twice (not profiled)
// With --cupti-first it subscribes to CUPTI itself before its first CUDA call,
// as a profiler loaded into the program would (the agent must then step aside).
#include <cuda.h>
#include <cupti.h>

#include <cstdio>
#include <cstring>

#include "../common.h"

#define CHECK_CU(call)                                                            \
  do {                                                                            \
    CUresult strata_rc = (call);                                                  \
    if (strata_rc != CUDA_SUCCESS) {                                              \
      std::fprintf(stderr, "%s:%d: %s: CUresult %d\n", __FILE__, __LINE__, #call, \
                   static_cast<int>(strata_rc));                                  \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

__global__ void scale_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}
__global__ void other_kernel(float* x) {
  x[threadIdx.x] += 1.0f;
}
__global__ void driver_kernel(float* x) {
  x[(blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x] += 3.0f;
}
__global__ void driver_ex_kernel(float* x) {
  extern __shared__ float tile[];
  tile[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[blockIdx.x * blockDim.x + threadIdx.x] = tile[threadIdx.x] + 1.0f;
}
__global__ void coop_kernel(float* x) {
  x[blockIdx.x * blockDim.x + threadIdx.x] -= 1.0f;
}
__global__ void graph_kernel(float* x) {
  x[threadIdx.x] *= 0.5f;
}

static void CUPTIAPI ignore_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

int main(int argc, char** argv) {
  CUpti_SubscriberHandle own_subscriber = nullptr;
  if (argc > 1 && std::strcmp(argv[1], "--cupti-first") == 0) {
    CUptiResult rc = cuptiSubscribe(&own_subscriber, ignore_callback, nullptr);
    if (rc != CUPTI_SUCCESS) {
      std::fprintf(stderr, "kernels_prog: cuptiSubscribe: CUptiResult %d\n", static_cast<int>(rc));
      return 1;
    }
    std::fprintf(stderr, "kernels_prog: subscribed to CUPTI\n");
  }
  constexpr int kN = 1 << 16;
  float* x = nullptr;
  CHECK_CUDA(cudaMalloc(&x, kN * sizeof(float)));
  CHECK_CUDA(cudaMemset(x, 0, kN * sizeof(float)));

  for (int i = 0; i < 3; ++i) scale_kernel<<<7, 128>>>(x, kN);
  for (int i = 0; i < 2; ++i) other_kernel<<<2, 32>>>(x);
  CHECK_CUDA(cudaGetLastError());

  cudaFunction_t driver_fn = nullptr, driver_ex_fn = nullptr;
  CHECK_CUDA(cudaGetFuncBySymbol(&driver_fn, reinterpret_cast<const void*>(driver_kernel)));
  CHECK_CUDA(cudaGetFuncBySymbol(&driver_ex_fn, reinterpret_cast<const void*>(driver_ex_kernel)));
  void* args[] = {&x};
  CHECK_CU(cuLaunchKernel(reinterpret_cast<CUfunction>(driver_fn), 3, 2, 1, 64, 1, 1, 0, nullptr,
                          args, nullptr));

  CUlaunchConfig config = {};
  config.gridDimX = 5;
  config.gridDimY = 1;
  config.gridDimZ = 1;
  config.blockDimX = 96;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = 96 * sizeof(float);  // 384 bytes
  CHECK_CU(cuLaunchKernelEx(&config, reinterpret_cast<CUfunction>(driver_ex_fn), args, nullptr));

  int cooperative = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, 0));
  if (cooperative) {
    CHECK_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(coop_kernel), dim3(2),
                                           dim3(32), args, 0, nullptr));
  } else {
    std::fprintf(stderr, "device cannot launch cooperative kernels\n");
  }

  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  graph_kernel<<<1, 32, 0, stream>>>(x);
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 2; ++i) CHECK_CUDA(cudaGraphLaunch(exec, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFree(x));
  if (own_subscriber != nullptr) cuptiUnsubscribe(own_subscriber);
  std::printf("ok\n");
  return 0;
}
