// The few CUDA driver (and runtime) entry points the kernel profiler calls,
// looked up with dlsym rather than linked: the agent has no DT_NEEDED on
// libcuda (a machine without a driver must still load it, tests/agent's
// load tests), and the runtime is whichever copy the program brought
// (shared libcudart.so.13, or none for a static one).
//
// Most are getters (attributes, names, the current context's device) made
// from inside launch callbacks; the kernel profiler enables no callback for
// them, so they do not re-enter it. The launch and memory calls at the end
// serve strata's own replay (flushed_replay.h, cache_flush.h): its launches do
// re-enter the profiler's launch callbacks, which take them for nested
// launches and neither count nor profile them.
//
// Threading: load() once at start; the pointers are read-only afterwards.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "agent/kernels/launch_params.h"

namespace strata::agent::kernels {

struct DriverApi {
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*cuFuncGetAttribute)(int*, CUfunction_attribute, CUfunction) = nullptr;
  CUresult (*cuFuncGetName)(const char**, CUfunction) = nullptr;
  CUresult (*cuKernelGetAttribute)(int*, CUfunction_attribute, CUkernel, CUdevice) = nullptr;
  CUresult (*cuKernelGetName)(const char**, CUkernel) = nullptr;
  CUresult (*cuStreamIsCapturing)(CUstream, CUstreamCaptureStatus*) = nullptr;
  // cudaGetFuncBySymbol of the program's shared runtime: the CUfunction
  // (cudaFunction_t) behind a host stub of cudaLaunchKernel. Null with a
  // static runtime.
  int (*cudaGetFuncBySymbol)(CUfunction*, const void*) = nullptr;

  // Replay and cache flush. Each launch entry point under its own name (the
  // _ptsz ones take a null stream as the calling thread's stream), so that a
  // relaunch means what the program's launch meant.
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;                // cuMemAlloc_v2
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t) = nullptr;  // cuMemsetD8_v2
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned, CUjit_option*, void**) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;  // cuMemcpyHtoD_v2
  CUresult (*cuMemGetAddressRange)(CUdeviceptr*, size_t*, CUdeviceptr) = nullptr;  // _v2
  CUresult (*cuFuncGetParamInfo)(CUfunction, size_t, size_t*, size_t*) = nullptr;
  CUresult (*cuKernelGetParamInfo)(CUkernel, size_t, size_t*, size_t*) = nullptr;
  using LaunchKernelFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, unsigned, CUstream, void**, void**);
  using LaunchKernelExFn = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
  using LaunchCooperativeFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                           unsigned, unsigned, unsigned, CUstream, void**);
  LaunchKernelFn cuLaunchKernel = nullptr;
  LaunchKernelFn cuLaunchKernel_ptsz = nullptr;
  LaunchKernelExFn cuLaunchKernelEx = nullptr;
  LaunchKernelExFn cuLaunchKernelEx_ptsz = nullptr;
  LaunchCooperativeFn cuLaunchCooperativeKernel = nullptr;
  LaunchCooperativeFn cuLaunchCooperativeKernel_ptsz = nullptr;

  // False when libcuda.so.1 is not loaded or lacks the driver calls.
  bool load();
};

// The kernel's attributes the launch__ values need.
struct FunctionAttributes {
  bool known = false;
  int registers_per_thread = 0;
  int static_shared = 0;  // bytes per block
};

// Registers and static shared memory of the launched kernel, from whichever
// handle its parameters carry; unknown when none can be resolved.
FunctionAttributes function_attributes(const DriverApi& api, const LaunchParams& launch,
                                       CUdevice device);

// True when the launch goes into a CUDA graph being captured (stream
// capture) rather than to the GPU: such a launch runs later, inside a graph.
bool is_captured(const DriverApi& api, const LaunchParams& launch);

// The kernel's mangled name when the callback did not give one.
const char* function_name(const DriverApi& api, const LaunchParams& launch);

// device__attribute_* values, in the order of kDeviceAttributeNames.
inline constexpr int kDeviceAttributeCount = 10;
extern const char* const kDeviceAttributeNames[kDeviceAttributeCount];
struct DeviceAttributes {
  bool known[kDeviceAttributeCount] = {};
  int values[kDeviceAttributeCount] = {};
};
DeviceAttributes device_attributes(const DriverApi& api, CUdevice device);

}  // namespace strata::agent::kernels
