#include "agent/kernels/driver_api.h"

#include <dlfcn.h>

#include <initializer_list>

namespace strata::agent::kernels {

namespace {

template <typename F>
void resolve(void* library, const char* name, F* out) {
  *out = library != nullptr ? reinterpret_cast<F>(dlsym(library, name)) : nullptr;
}

constexpr CUdevice_attribute kDeviceAttributes[kDeviceAttributeCount] = {
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
    CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
    CU_DEVICE_ATTRIBUTE_WARP_SIZE,
};

}  // namespace

bool DriverApi::load() {
  // RTLD_NOLOAD: the driver is already there (the agent runs from cuInit);
  // the handle is never closed.
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) return false;
  // cuda.h (13.0) maps none of these names to a versioned symbol, so the
  // plain names are the current ABI, except the memory calls, which are
  // looked up by the _v2 names cuda.h maps them to.
  resolve(driver, "cuDeviceGet", &cuDeviceGet);
  resolve(driver, "cuDeviceGetAttribute", &cuDeviceGetAttribute);
  resolve(driver, "cuFuncGetAttribute", &cuFuncGetAttribute);
  resolve(driver, "cuFuncGetName", &cuFuncGetName);
  resolve(driver, "cuKernelGetAttribute", &cuKernelGetAttribute);
  resolve(driver, "cuKernelGetName", &cuKernelGetName);
  resolve(driver, "cuStreamIsCapturing", &cuStreamIsCapturing);
  resolve(driver, "cuCtxSynchronize", &cuCtxSynchronize);
  resolve(driver, "cuMemAlloc_v2", &cuMemAlloc);
  resolve(driver, "cuMemsetD8_v2", &cuMemsetD8);
  resolve(driver, "cuModuleLoadData", &cuModuleLoadData);
  resolve(driver, "cuModuleLoadDataEx", &cuModuleLoadDataEx);
  resolve(driver, "cuModuleGetFunction", &cuModuleGetFunction);
  resolve(driver, "cuMemcpyHtoD_v2", &cuMemcpyHtoD);
  resolve(driver, "cuMemGetAddressRange_v2", &cuMemGetAddressRange);
  resolve(driver, "cuFuncGetParamInfo", &cuFuncGetParamInfo);
  resolve(driver, "cuKernelGetParamInfo", &cuKernelGetParamInfo);
  resolve(driver, "cuLaunchKernel", &cuLaunchKernel);
  resolve(driver, "cuLaunchKernel_ptsz", &cuLaunchKernel_ptsz);
  resolve(driver, "cuLaunchKernelEx", &cuLaunchKernelEx);
  resolve(driver, "cuLaunchKernelEx_ptsz", &cuLaunchKernelEx_ptsz);
  resolve(driver, "cuLaunchCooperativeKernel", &cuLaunchCooperativeKernel);
  resolve(driver, "cuLaunchCooperativeKernel_ptsz", &cuLaunchCooperativeKernel_ptsz);
  // The program's runtime: in the global scope when linked, or loaded
  // RTLD_LOCAL by a Python extension (PyTorch), found then by soname.
  resolve(RTLD_DEFAULT, "cudaGetFuncBySymbol", &cudaGetFuncBySymbol);
  for (const char* soname : {"libcudart.so.13", "libcudart.so.12"}) {
    if (cudaGetFuncBySymbol != nullptr) break;
    if (void* runtime = dlopen(soname, RTLD_NOW | RTLD_NOLOAD); runtime != nullptr) {
      resolve(runtime, "cudaGetFuncBySymbol", &cudaGetFuncBySymbol);
    }
  }
  return cuDeviceGet != nullptr && cuDeviceGetAttribute != nullptr && cuFuncGetAttribute != nullptr;
}

FunctionAttributes function_attributes(const DriverApi& api, const LaunchParams& launch,
                                       CUdevice device) {
  FunctionAttributes out;
  int registers = 0, shared = 0;
  CUfunction function = launch.function;
  if (function == nullptr && launch.host_function != nullptr && api.cudaGetFuncBySymbol) {
    CUfunction resolved = nullptr;
    if (api.cudaGetFuncBySymbol(&resolved, launch.host_function) == 0) function = resolved;
  }
  if (function != nullptr && api.cuFuncGetAttribute != nullptr) {
    out.known =
        api.cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, function) == CUDA_SUCCESS &&
        api.cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function) ==
            CUDA_SUCCESS;
  }
  // The CUkernel handle when there was no CUfunction, or it would not answer.
  if (!out.known && launch.kernel != nullptr && api.cuKernelGetAttribute != nullptr) {
    out.known = api.cuKernelGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, launch.kernel,
                                         device) == CUDA_SUCCESS &&
                api.cuKernelGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                         launch.kernel, device) == CUDA_SUCCESS;
  }
  if (out.known) {
    out.registers_per_thread = registers;
    out.static_shared = shared;
  }
  return out;
}

bool is_captured(const DriverApi& api, const LaunchParams& launch) {
  if (api.cuStreamIsCapturing == nullptr) return false;
  // A _ptsz launch's null stream is the per-thread stream.
  CUstream stream = launch.stream;
  if (stream == nullptr && launch.per_thread_stream) stream = CU_STREAM_PER_THREAD;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return api.cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS &&
         status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

const char* function_name(const DriverApi& api, const LaunchParams& launch) {
  const char* name = nullptr;
  if (launch.function != nullptr && api.cuFuncGetName != nullptr &&
      api.cuFuncGetName(&name, launch.function) == CUDA_SUCCESS) {
    return name;
  }
  if (launch.kernel != nullptr && api.cuKernelGetName != nullptr &&
      api.cuKernelGetName(&name, launch.kernel) == CUDA_SUCCESS) {
    return name;
  }
  return nullptr;
}

DeviceAttributes device_attributes(const DriverApi& api, CUdevice device) {
  DeviceAttributes out;
  if (api.cuDeviceGetAttribute == nullptr) return out;
  for (int i = 0; i < kDeviceAttributeCount; ++i) {
    out.known[i] =
        api.cuDeviceGetAttribute(&out.values[i], kDeviceAttributes[i], device) == CUDA_SUCCESS;
  }
  return out;
}

}  // namespace strata::agent::kernels
