#include "agent/kernels/launch_params.h"

#include <cuda_runtime_api.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <generated_cuda_runtime_api_meta.h>

namespace strata::agent::kernels {

namespace {

// The driver's parameter structs, as generated_cuda_meta.h (CUDA 13.0,
// lines 3390, 3404, 3593) declares them. That header cannot be included on
// its own: it names the _v1 types cuda.h only declares for the driver's
// internal build. The _ptsz variants have the same members.
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

template <typename P>
void decode_runtime_classic(const void* params, LaunchApi api, LaunchParams* out) {
  const auto* p = static_cast<const P*>(params);
  out->api = api;
  set_dims(out, p->gridDim, p->blockDim);
  out->dynamic_shared = p->sharedMem;
  out->stream = reinterpret_cast<CUstream>(p->stream);
  out->host_function = p->func;
  out->cooperative = api == LaunchApi::kCooperative;
}

template <typename P>
void decode_driver_classic(const void* params, LaunchApi api, LaunchParams* out) {
  const auto* p = static_cast<const P*>(params);
  out->api = api;
  set_dims(out, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ);
  out->dynamic_shared = p->sharedMemBytes;
  out->stream = p->hStream;
  out->function = p->f;
  out->cooperative = api == LaunchApi::kCooperative;
}

}  // namespace

const CUpti_CallbackId kRuntimeLaunchCallbacks[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
};
const int kRuntimeLaunchCallbackCount =
    static_cast<int>(sizeof(kRuntimeLaunchCallbacks) / sizeof(kRuntimeLaunchCallbacks[0]));

const CUpti_CallbackId kDriverLaunchCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};
const int kDriverLaunchCallbackCount =
    static_cast<int>(sizeof(kDriverLaunchCallbacks) / sizeof(kDriverLaunchCallbacks[0]));

CallbackKind classify(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
        return CallbackKind::kGraphLaunch;
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
      case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
      case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
        return CallbackKind::kLaunch;
      default:
        return CallbackKind::kOther;
    }
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    switch (cbid) {
      case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
      case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
        return CallbackKind::kGraphLaunch;
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
        return CallbackKind::kLaunch;
      default:
        return CallbackKind::kOther;
    }
  }
  return CallbackKind::kOther;
}

bool decode_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params,
                   LaunchParams* out) {
  *out = LaunchParams{};
  if (params == nullptr || classify(domain, cbid) != CallbackKind::kLaunch) return false;
  out->runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (out->runtime) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
        out->per_thread_stream = true;
        [[fallthrough]];
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
        decode_runtime_classic<cudaLaunchKernel_v7000_params>(params, LaunchApi::kRuntime, out);
        return true;
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
        out->per_thread_stream = true;
        [[fallthrough]];
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
        decode_runtime_classic<cudaLaunchCooperativeKernel_v9000_params>(
            params, LaunchApi::kCooperative, out);
        return true;
      case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
        out->per_thread_stream = true;
        [[fallthrough]];
      case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000: {
        const auto* p = static_cast<const InternalLaunchKernelParams*>(params);
        out->api = LaunchApi::kRuntime;
        set_dims(out, p->gridDim, p->blockDim);
        out->dynamic_shared = p->sharedMem;
        out->stream = reinterpret_cast<CUstream>(p->stream);
        out->kernel = reinterpret_cast<CUkernel>(p->kernel);
        return true;
      }
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
        out->per_thread_stream = true;
        [[fallthrough]];
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060: {
        const auto* p = static_cast<const cudaLaunchKernelExC_v11060_params*>(params);
        out->api = LaunchApi::kRuntime;
        out->host_function = p->func;
        if (p->config == nullptr) return true;
        set_dims(out, p->config->gridDim, p->config->blockDim);
        out->dynamic_shared = p->config->dynamicSmemBytes;
        out->stream = reinterpret_cast<CUstream>(p->config->stream);
        read_runtime_attributes(p->config->attrs, p->config->numAttrs, out);
        return true;
      }
      default:
        return false;
    }
  }
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      out->per_thread_stream = true;
      [[fallthrough]];
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      decode_driver_classic<DriverLaunchKernelParams>(params, LaunchApi::kDriver, out);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      out->per_thread_stream = true;
      [[fallthrough]];
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      decode_driver_classic<DriverLaunchCooperativeKernelParams>(params, LaunchApi::kCooperative,
                                                                 out);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      out->per_thread_stream = true;
      [[fallthrough]];
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: {
      const auto* p = static_cast<const DriverLaunchKernelExParams*>(params);
      out->api = LaunchApi::kDriverEx;
      out->function = p->f;
      if (p->config == nullptr) return true;
      const CUlaunchConfig& c = *p->config;
      set_dims(out, c.gridDimX, c.gridDimY, c.gridDimZ, c.blockDimX, c.blockDimY, c.blockDimZ);
      out->dynamic_shared = c.sharedMemBytes;
      out->stream = c.hStream;
      read_driver_attributes(c.attrs, c.numAttrs, out);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace strata::agent::kernels
