// The driver's launch parameter structs, as generated_cuda_meta.h (CUDA
// 13.0, lines 3390, 3404, 3593) declares them; CUPTI passes them as a driver
// launch callback's CUpti_CallbackData::functionParams. That header cannot
// be included on its own: it names the _v1 types cuda.h only declares for
// the driver's internal build. The _ptsz variants have the same members.
// Read by launch_params.cc (decoding) and flushed_replay.cc (relaunching).
#pragma once

#include <cuda.h>

namespace strata::agent::kernels {

struct DriverLaunchKernelParams {
  CUfunction f;
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  void** kernelParams;
  void** extra;
};
struct DriverLaunchKernelExParams {
  const CUlaunchConfig* config;
  CUfunction f;
  void** kernelParams;
  void** extra;
};
struct DriverLaunchCooperativeKernelParams {
  CUfunction f;
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  void** kernelParams;
};

}  // namespace strata::agent::kernels
