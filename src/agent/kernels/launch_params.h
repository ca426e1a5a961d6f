// What a launch callback's parameters say about the launch: which API, the
// grid and block, dynamic shared memory, stream, cluster, cooperative, and a
// handle to the kernel (CUfunction, CUkernel or the runtime's host stub).
//
// The parameter structs are those of generated_cuda_meta.h and
// generated_cuda_runtime_api_meta.h (CUDA 13.0), which CUPTI passes as
// CUpti_CallbackData::functionParams. __cudaLaunchKernel, what nvcc 13's
// <<<>>> calls (crt/host_runtime.h, crt/device_functions.h), has no struct
// there; its parameters are cudaLaunchKernel's with a cudaKernel_t first,
// and launch_params.cc declares that layout.
//
// Pure: reads the struct it is given, no CUDA calls, so the tests feed it
// structs of their own.
#pragma once

#include <cuda.h>
#include <cupti_callbacks.h>

#include <cstdint>
#include <span>

namespace strata::agent::kernels {

// launch__api values (docs/kernels-interface.md).
enum class LaunchApi : uint32_t {
  kNone = 0,
  kRuntime = 1,      // <<<>>>, cudaLaunchKernel, cudaLaunchKernelExC
  kDriver = 2,       // cuLaunchKernel
  kDriverEx = 3,     // cuLaunchKernelEx
  kCooperative = 4,  // cudaLaunchCooperativeKernel, cuLaunchCooperativeKernel
};

enum class CallbackKind : uint8_t {
  kOther,        // not a callback the kernel profiler handles
  kLaunch,       // a kernel launch
  kGraphLaunch,  // cudaGraphLaunch / cuGraphLaunch
};

struct LaunchParams {
  LaunchApi api = LaunchApi::kNone;
  bool runtime = false;            // runtime domain (else driver)
  bool per_thread_stream = false;  // a _ptsz entry point
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint64_t dynamic_shared = 0;
  uint32_t cluster[3] = {0, 0, 0};  // 0: no cluster set
  bool cooperative = false;
  CUstream stream = nullptr;
  // At most one of these names the kernel.
  CUfunction function = nullptr;        // driver launches
  CUkernel kernel = nullptr;            // __cudaLaunchKernel (cudaKernel_t is a CUkernel)
  const void* host_function = nullptr;  // cudaLaunchKernel*: the host stub or a cudaKernel_t
  // The argument array (one pointer per kernel parameter); null where the
  // launch passes its arguments another way (cuLaunchKernel's `extra`).
  void** kernel_params = nullptr;
};

// One callback the kernel profiler enables and what its functionParams are.
struct LaunchCallback {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  CallbackKind kind;       // kLaunch or kGraphLaunch
  bool per_thread_stream;  // a _ptsz entry point
  // Reads the parameter struct into the LaunchParams it is given (api, grid,
  // block, shared memory, stream, kernel handle); null for graph launches.
  void (*decode)(const void* params, LaunchParams* out);
};

// Every callback the kernel profiler enables: the kernel and graph launches
// of the runtime, then of the driver, each with its _ptsz variant. The one
// list that classify() and decode_launch() read.
std::span<const LaunchCallback> launch_callbacks();

CallbackKind classify(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

// Fills `out` from a launch callback's functionParams. False when `cbid` is
// not a launch or `params` is null.
bool decode_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params,
                   LaunchParams* out);

}  // namespace strata::agent::kernels
