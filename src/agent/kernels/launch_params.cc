#include "agent/kernels/launch_params.h"

#include <cuda_runtime_api.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <generated_cuda_runtime_api_meta.h>

#include "agent/kernels/driver_launch_params.h"

namespace strata::agent::kernels {

namespace {

// __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t)
// (crt/device_functions.h, CUDA 13.0); CUPTI's parameter struct for cbid
// __cudaLaunchKernel_v13000 follows the generator's pattern of one member
// per argument, in order, as cudaLaunchKernel_v7000_params does.
struct InternalLaunchKernelParams {
  cudaKernel_t kernel;
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
};

void set_dims(LaunchParams* out, dim3 grid, dim3 block) {
  out->grid[0] = grid.x;
  out->grid[1] = grid.y;
  out->grid[2] = grid.z;
  out->block[0] = block.x;
  out->block[1] = block.y;
  out->block[2] = block.z;
}

void set_dims(LaunchParams* out, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
              unsigned bz) {
  out->grid[0] = gx;
  out->grid[1] = gy;
  out->grid[2] = gz;
  out->block[0] = bx;
  out->block[1] = by;
  out->block[2] = bz;
}

// The attributes of cuLaunchKernelEx / cudaLaunchKernelExC that change what
// ncu reports: cluster dimensions and cooperative. The two attribute structs
// have one layout (id, pad to 8, value union); each is read through its own type.
void read_driver_attributes(const CUlaunchAttribute* attrs, unsigned count, LaunchParams* out) {
  for (unsigned i = 0; attrs != nullptr && i < count; ++i) {
    if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      out->cluster[0] = attrs[i].value.clusterDim.x;
      out->cluster[1] = attrs[i].value.clusterDim.y;
      out->cluster[2] = attrs[i].value.clusterDim.z;
    } else if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE) {
      out->cooperative = attrs[i].value.cooperative != 0;
    }
  }
}

void read_runtime_attributes(const cudaLaunchAttribute* attrs, unsigned count, LaunchParams* out) {
  for (unsigned i = 0; attrs != nullptr && i < count; ++i) {
    if (attrs[i].id == cudaLaunchAttributeClusterDimension) {
      out->cluster[0] = attrs[i].val.clusterDim.x;
      out->cluster[1] = attrs[i].val.clusterDim.y;
      out->cluster[2] = attrs[i].val.clusterDim.z;
    } else if (attrs[i].id == cudaLaunchAttributeCooperative) {
      out->cooperative = attrs[i].val.cooperative != 0;
    }
  }
}

// One decoder per parameter layout; launch_callbacks() says which callback
// has which. A _ptsz variant has the same layout as its plain entry point.

// cudaLaunchKernel, cudaLaunchCooperativeKernel: func, gridDim, blockDim,
// args, sharedMem, stream.
template <typename P, LaunchApi kApi>
void decode_runtime_classic(const void* params, LaunchParams* out) {
  const auto* p = static_cast<const P*>(params);
  out->api = kApi;
  set_dims(out, p->gridDim, p->blockDim);
  out->dynamic_shared = p->sharedMem;
  out->stream = reinterpret_cast<CUstream>(p->stream);
  out->host_function = p->func;
  out->kernel_params = p->args;
  out->cooperative = kApi == LaunchApi::kCooperative;
}

// __cudaLaunchKernel: as cudaLaunchKernel, with a cudaKernel_t for the stub.
void decode_runtime_internal(const void* params, LaunchParams* out) {
  const auto* p = static_cast<const InternalLaunchKernelParams*>(params);
  out->api = LaunchApi::kRuntime;
  set_dims(out, p->gridDim, p->blockDim);
  out->dynamic_shared = p->sharedMem;
  out->stream = reinterpret_cast<CUstream>(p->stream);
  out->kernel = reinterpret_cast<CUkernel>(p->kernel);
  out->kernel_params = p->args;
}

// cudaLaunchKernelExC: the configuration (and its attributes) behind a pointer.
void decode_runtime_ex(const void* params, LaunchParams* out) {
  const auto* p = static_cast<const cudaLaunchKernelExC_v11060_params*>(params);
  out->api = LaunchApi::kRuntime;
  out->host_function = p->func;
  out->kernel_params = p->args;
  if (p->config == nullptr) return;
  set_dims(out, p->config->gridDim, p->config->blockDim);
  out->dynamic_shared = p->config->dynamicSmemBytes;
  out->stream = reinterpret_cast<CUstream>(p->config->stream);
  read_runtime_attributes(p->config->attrs, p->config->numAttrs, out);
}

// cuLaunchKernel, cuLaunchCooperativeKernel: f, the six dimensions,
// sharedMemBytes, hStream.
template <typename P, LaunchApi kApi>
void decode_driver_classic(const void* params, LaunchParams* out) {
  const auto* p = static_cast<const P*>(params);
  out->api = kApi;
  set_dims(out, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ);
  out->dynamic_shared = p->sharedMemBytes;
  out->stream = p->hStream;
  out->function = p->f;
  out->kernel_params = p->kernelParams;
  out->cooperative = kApi == LaunchApi::kCooperative;
}

// cuLaunchKernelEx: the configuration (and its attributes) behind a pointer.
void decode_driver_ex(const void* params, LaunchParams* out) {
  const auto* p = static_cast<const DriverLaunchKernelExParams*>(params);
  out->api = LaunchApi::kDriverEx;
  out->function = p->f;
  out->kernel_params = p->kernelParams;
  if (p->config == nullptr) return;
  const CUlaunchConfig& c = *p->config;
  set_dims(out, c.gridDimX, c.gridDimY, c.gridDimZ, c.blockDimX, c.blockDimY, c.blockDimZ);
  out->dynamic_shared = c.sharedMemBytes;
  out->stream = c.hStream;
  read_driver_attributes(c.attrs, c.numAttrs, out);
}

constexpr CUpti_CallbackDomain kRuntime = CUPTI_CB_DOMAIN_RUNTIME_API;
constexpr CUpti_CallbackDomain kDriver = CUPTI_CB_DOMAIN_DRIVER_API;
constexpr CallbackKind kLaunch = CallbackKind::kLaunch;
constexpr CallbackKind kGraph = CallbackKind::kGraphLaunch;
constexpr bool kPtsz = true;

constexpr auto* kRuntimeLaunch =
    &decode_runtime_classic<cudaLaunchKernel_v7000_params, LaunchApi::kRuntime>;
constexpr auto* kRuntimeCooperative =
    &decode_runtime_classic<cudaLaunchCooperativeKernel_v9000_params, LaunchApi::kCooperative>;
constexpr auto* kDriverLaunch =
    &decode_driver_classic<DriverLaunchKernelParams, LaunchApi::kDriver>;
constexpr auto* kDriverCooperative =
    &decode_driver_classic<DriverLaunchCooperativeKernelParams, LaunchApi::kCooperative>;

constexpr LaunchCallback kLaunchCallbacks[] = {
    {kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, kLaunch, !kPtsz, kRuntimeLaunch},
    {kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000, kLaunch, kPtsz,
     kRuntimeLaunch},
    {kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, kLaunch, !kPtsz,
     decode_runtime_ex},
    {kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060, kLaunch, kPtsz,
     decode_runtime_ex},
    {kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000, kLaunch, !kPtsz,
     kRuntimeCooperative},
    {kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000, kLaunch, kPtsz,
     kRuntimeCooperative},
    {kRuntime, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, kLaunch, !kPtsz,
     decode_runtime_internal},
    {kRuntime, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000, kLaunch, kPtsz,
     decode_runtime_internal},
    {kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, kGraph, !kPtsz, nullptr},
    {kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000, kGraph, kPtsz, nullptr},

    {kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, kLaunch, !kPtsz, kDriverLaunch},
    {kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, kLaunch, kPtsz, kDriverLaunch},
    {kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, kLaunch, !kPtsz, decode_driver_ex},
    {kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, kLaunch, kPtsz, decode_driver_ex},
    {kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, kLaunch, !kPtsz,
     kDriverCooperative},
    {kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, kLaunch, kPtsz,
     kDriverCooperative},
    {kDriver, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, kGraph, !kPtsz, nullptr},
    {kDriver, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, kGraph, kPtsz, nullptr},
};

// A linear scan: 18 entries, and only these callbacks are enabled, so it
// runs once per launch.
const LaunchCallback* find_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  for (const LaunchCallback& callback : kLaunchCallbacks) {
    if (callback.domain == domain && callback.cbid == cbid) return &callback;
  }
  return nullptr;
}

}  // namespace

std::span<const LaunchCallback> launch_callbacks() {
  return kLaunchCallbacks;
}

CallbackKind classify(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const LaunchCallback* callback = find_callback(domain, cbid);
  return callback != nullptr ? callback->kind : CallbackKind::kOther;
}

bool decode_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params,
                   LaunchParams* out) {
  *out = LaunchParams{};
  const LaunchCallback* callback = find_callback(domain, cbid);
  if (params == nullptr || callback == nullptr || callback->decode == nullptr) return false;
  out->runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  out->per_thread_stream = callback->per_thread_stream;
  callback->decode(params, out);
  return true;
}

}  // namespace strata::agent::kernels
