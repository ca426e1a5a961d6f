// GPU test program (a): N empty kernels, pageable and pinned copies both
// ways, a memset, a device sync, NVTX push/pop, start/end and domain ranges.
//   agent_basic N   prints "start_ns S" and "end_ns E" (CLOCK_MONOTONIC)
#include <nvtx3/nvToolsExt.h>

#include "common.h"

__global__ void empty_kernel() {}

int main(int argc, char** argv) {
  long long start = monotonic_ns();
  int n = argc > 1 ? std::atoi(argv[1]) : 100;
  constexpr size_t kPageable = 1 << 20, kPinned = 2 << 20, kSet = 3 << 20;
  nvtxRangePushA("outer");
  void* device = nullptr;
  CHECK_CUDA(cudaMalloc(&device, kSet));
  nvtxRangePushA("inner");
  for (int i = 0; i < n; ++i) empty_kernel<<<1, 32>>>();
  CHECK_CUDA(cudaGetLastError());
  nvtxRangePop();
  nvtxRangePop();

  nvtxRangeId_t copies = nvtxRangeStartA("copies");
  void* pageable = std::malloc(kPageable);
  void* pinned = nullptr;
  CHECK_CUDA(cudaMallocHost(&pinned, kPinned));
  CHECK_CUDA(cudaMemcpy(device, pageable, kPageable, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(pageable, device, kPageable, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpyAsync(device, pinned, kPinned, cudaMemcpyHostToDevice, 0));
  CHECK_CUDA(cudaMemcpyAsync(pinned, device, kPinned, cudaMemcpyDeviceToHost, 0));
  CHECK_CUDA(cudaMemset(device, 0x5a, kSet));
  nvtxRangeEnd(copies);

  nvtxDomainHandle_t domain = nvtxDomainCreateA("strata-test");
  nvtxEventAttributes_t attributes = {};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = "domain-range";
  nvtxDomainRangePushEx(domain, &attributes);
  CHECK_CUDA(cudaDeviceSynchronize());
  nvtxDomainRangePop(domain);

  CHECK_CUDA(cudaFreeHost(pinned));
  CHECK_CUDA(cudaFree(device));
  std::free(pageable);
  std::printf("start_ns %lld\nend_ns %lld\n", start, monotonic_ns());
  return 0;
}
