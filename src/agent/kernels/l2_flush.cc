#include "agent/kernels/l2_flush.h"

#include "agent/kernels/l2_sweep_ptx.h"

namespace strata::agent::kernels {

namespace {

constexpr unsigned kSweepBlock = 512;
constexpr unsigned kSweepBlocksPerSm = 4;  // enough loads in flight to stream at DRAM speed

}  // namespace

CUresult L2Flush::set_up(const DriverApi& api, CUdevice device) {
  if (api.cuDeviceGetAttribute == nullptr || api.cuMemAlloc == nullptr ||
      api.cuMemsetD8 == nullptr || api.cuModuleLoadData == nullptr ||
      api.cuModuleGetFunction == nullptr || api.cuLaunchKernel == nullptr ||
      api.cuCtxSynchronize == nullptr) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  int l2_bytes = 0, sms = 0;
  if (CUresult rc = api.cuDeviceGetAttribute(&l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device);
      rc != CUDA_SUCCESS) {
    return rc;
  }
  if (CUresult rc =
          api.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
      rc != CUDA_SUCCESS) {
    return rc;
  }
  // Twice the L2: its replacement is not strict LRU, and one pass over
  // exactly its size leaves some old lines in place.
  const size_t bytes = 2 * static_cast<size_t>(l2_bytes > 0 ? l2_bytes : 1 << 20);
  words_ = bytes / kWordBytes;
  grid_ = static_cast<unsigned>(sms > 0 ? sms : 1) * kSweepBlocksPerSm;
  if (CUresult rc = api.cuMemAlloc(&buffer_, bytes); rc != CUDA_SUCCESS) return rc;
  if (CUresult rc = api.cuMemsetD8(buffer_, 0, bytes); rc != CUDA_SUCCESS) return rc;
  CUmodule module = nullptr;
  if (CUresult rc = api.cuModuleLoadData(&module, kL2SweepPtx); rc != CUDA_SUCCESS) return rc;
  return api.cuModuleGetFunction(&sweep_, module, "strata_l2_sweep");
}

CUresult L2Flush::flush(const DriverApi& api, CUdevice device) {
  if (!set_up_done_) {
    set_up_done_ = true;
    set_up_status_ = set_up(api, device);
  }
  if (set_up_status_ != CUDA_SUCCESS) return set_up_status_;
  CUdeviceptr words = buffer_;
  size_t count = words_;
  CUdeviceptr sink = buffer_;  // never written: the buffer is zeros (l2_sweep.cu)
  void* args[] = {&words, &count, &sink};
  if (CUresult rc =
          api.cuLaunchKernel(sweep_, grid_, 1, 1, kSweepBlock, 1, 1, 0, nullptr, args, nullptr);
      rc != CUDA_SUCCESS) {
    return rc;
  }
  return api.cuCtxSynchronize();
}

}  // namespace strata::agent::kernels
