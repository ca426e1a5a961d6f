#include "agent/kernels/cache_flush.h"

#include <chrono>
#include <cstring>
#include <string>

#include "agent/kernels/instruction_sweep_ptx.h"
#include "agent/kernels/l2_discard_ptx.h"
#include "agent/kernels/l2_sweep_ptx.h"

namespace strata::agent::kernels {

namespace {

constexpr unsigned kSweepBlock = 512;
constexpr unsigned kTouchBlock = 256;
constexpr unsigned kSweepBlocksPerSm = 4;  // enough loads in flight to stream at DRAM speed
// One warp per SM sub-partition (each has its own first-level instruction
// cache), twice over so that every SM gets a block whatever the scheduler's
// placement.
constexpr unsigned kInstructionSweepBlock = 128;
constexpr unsigned kInstructionSweepBlocksPerSm = 2;

// The instruction sweep's module, compiled at the JIT's lowest optimization
// level: the code is straight-line arithmetic that no level shortens, and
// level 0 compiles its 16K instructions in half the time of the default
// (ptxas on the dev machine: 0.4 against 0.9 s).
CUfunction load_instruction_sweep(const DriverApi& api) {
  if (api.cuModuleLoadDataEx == nullptr) return nullptr;
  const std::string ptx = instruction_sweep_ptx();
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
  void* values[] = {nullptr};  // the level, 0, as the option's pointer-sized value
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  if (api.cuModuleLoadDataEx(&module, ptx.c_str(), 1, options, values) != CUDA_SUCCESS ||
      api.cuModuleGetFunction(&function, module, kInstructionSweepEntry) != CUDA_SUCCESS) {
    return nullptr;
  }
  return function;
}

}  // namespace

CUresult CacheFlush::set_up(const DriverApi& api, CUdevice device) {
  if (api.cuDeviceGetAttribute == nullptr || api.cuMemAlloc == nullptr ||
      api.cuMemsetD8 == nullptr || api.cuModuleLoadData == nullptr ||
      api.cuModuleGetFunction == nullptr || api.cuLaunchKernel == nullptr) {
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
  sms_ = static_cast<unsigned>(sms > 0 ? sms : 1);
  grid_ = sms_ * kSweepBlocksPerSm;
  if (CUresult rc = api.cuMemAlloc(&buffer_, bytes); rc != CUDA_SUCCESS) return rc;
  if (CUresult rc = api.cuMemsetD8(buffer_, 0, bytes); rc != CUDA_SUCCESS) return rc;
  CUmodule module = nullptr;
  if (CUresult rc = api.cuModuleLoadData(&module, kL2SweepPtx); rc != CUDA_SUCCESS) return rc;
  if (CUresult rc = api.cuModuleGetFunction(&sweep_, module, "strata_l2_sweep");
      rc != CUDA_SUCCESS) {
    return rc;
  }
  // The page touch is optional: without it the sweep still runs.
  if (api.cuModuleGetFunction(&touch_, module, "strata_touch_pages") != CUDA_SUCCESS ||
      api.cuMemAlloc(&touch_ranges_, kMaxTouchRanges * sizeof(TouchRange)) != CUDA_SUCCESS) {
    touch_ = nullptr;
  }
  // The discard needs sm_80 (l2_discard.cu); an older GPU's JIT refuses it.
  CUmodule discard_module = nullptr;
  if (api.cuModuleLoadData(&discard_module, kL2DiscardPtx) != CUDA_SUCCESS ||
      api.cuModuleGetFunction(&discard_, discard_module, "strata_l2_discard") != CUDA_SUCCESS) {
    discard_ = nullptr;
  }
  instruction_sweep_ = load_instruction_sweep(api);
  return CUDA_SUCCESS;
}

size_t CacheFlush::find_touch_ranges(const DriverApi& api, CUfunction function,
                                     void* const* kernel_params) {
  touch_count_ = 0;
  if (touch_ == nullptr || function == nullptr || kernel_params == nullptr ||
      api.cuFuncGetParamInfo == nullptr || api.cuMemGetAddressRange == nullptr ||
      api.cuMemcpyHtoD == nullptr) {
    return 0;
  }
  // The driver launch under a runtime launch may carry a CUkernel where a
  // CUfunction goes (cuLaunchKernel accepts both): on the H200 neither
  // cuFuncGetAttribute nor cuFuncGetParamInfo answered for that handle, so
  // cuKernelGetParamInfo is asked next.
  auto param_info = [&](size_t index, size_t* offset, size_t* size) {
    if (api.cuFuncGetParamInfo(function, index, offset, size) == CUDA_SUCCESS) return true;
    return api.cuKernelGetParamInfo != nullptr &&
           api.cuKernelGetParamInfo(reinterpret_cast<CUkernel>(function), index, offset, size) ==
               CUDA_SUCCESS;
  };
  TouchRange ranges[kMaxTouchRanges];
  unsigned count = 0;
  size_t words_asked = 0;
  for (size_t i = 0; i < kMaxParams && count < kMaxTouchRanges; ++i) {
    size_t offset = 0, size = 0;
    if (!param_info(i, &offset, &size)) break;
    if (kernel_params[i] == nullptr) continue;
    // A pointer argument is one 8-byte word; a struct argument (cuBLAS
    // passes its matrices inside one) is read as its 8-byte-aligned words,
    // where its pointer members are. Any word inside a device allocation
    // counts: a number that happens to fall inside one only adds a touch.
    const auto* bytes_of_param = static_cast<const unsigned char*>(kernel_params[i]);
    for (size_t at = 0; at + sizeof(CUdeviceptr) <= size && count < kMaxTouchRanges &&
                        words_asked < kMaxWordsAsked;
         at += sizeof(CUdeviceptr)) {
      CUdeviceptr candidate = 0;
      std::memcpy(&candidate, bytes_of_param + at, sizeof(candidate));
      if (candidate == 0) continue;
      ++words_asked;
      CUdeviceptr base = 0;
      size_t bytes = 0;
      if (api.cuMemGetAddressRange(&base, &bytes, candidate) != CUDA_SUCCESS) continue;
      bool seen = false;
      for (unsigned j = 0; j < count; ++j) seen = seen || ranges[j].base == base;
      if (!seen) ranges[count++] = TouchRange{base, bytes};
    }
  }
  if (count > 0 &&
      api.cuMemcpyHtoD(touch_ranges_, ranges, count * sizeof(TouchRange)) == CUDA_SUCCESS) {
    touch_count_ = count;
  }
  return touch_count_;
}

CUresult CacheFlush::prepare(const DriverApi& api, CUdevice device) {
  if (!set_up_done_) {
    set_up_done_ = true;
    const auto start = std::chrono::steady_clock::now();
    set_up_status_ = set_up(api, device);
    set_up_ms_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  return set_up_status_;
}

CUresult CacheFlush::enqueue(const DriverApi& api, CUstream stream) {
  if (sweep_ == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  CUdeviceptr sink = buffer_;  // never written (the kernels' comments say why)
  if (instruction_sweep_ != nullptr) {
    void* sweep_args[] = {&sink};
    if (CUresult rc =
            api.cuLaunchKernel(instruction_sweep_, sms_ * kInstructionSweepBlocksPerSm, 1, 1,
                               kInstructionSweepBlock, 1, 1, 0, stream, sweep_args, nullptr);
        rc != CUDA_SUCCESS) {
      return rc;
    }
  }
  CUdeviceptr words = buffer_;
  size_t count = words_;
  void* args[] = {&words, &count, &sink};
  CUresult rc =
      api.cuLaunchKernel(sweep_, grid_, 1, 1, kSweepBlock, 1, 1, 0, stream, args, nullptr);
  if (rc == CUDA_SUCCESS && discard_ != nullptr) {
    size_t bytes = buffer_bytes();
    void* discard_args[] = {&words, &bytes};
    rc = api.cuLaunchKernel(discard_, grid_, 1, 1, kSweepBlock, 1, 1, 0, stream, discard_args,
                            nullptr);
  }
  if (rc != CUDA_SUCCESS || touch_count_ == 0) return rc;
  CUdeviceptr ranges = touch_ranges_;
  void* touch_args[] = {&ranges, &sink};
  return api.cuLaunchKernel(touch_, touch_count_, 1, 1, kTouchBlock, 1, 1, 0, stream, touch_args,
                            nullptr);
}

}  // namespace strata::agent::kernels
