#include "agent/kernels/flushed_replay.h"

#include <cupti.h>
#include <cupti_checkpoint.h>
#include <cupti_driver_cbid.h>
#include <dlfcn.h>
#include <pthread.h>

#include <cstring>

#include "agent/kernels/driver_launch_params.h"
#include "agent/kernels/launch_params.h"
#include "common/clock.h"

namespace strata::agent::kernels {

namespace {

using NV::Cupti::Checkpoint::CUpti_Checkpoint;
using CheckpointCall = CUptiResult (*)(CUpti_Checkpoint*);

// More passes than any configuration of the four sections needs (9 on the
// H200); past it CUPTI would be asking for passes that never end.
constexpr int kMaxPasses = 64;

struct CheckpointApi {
  CheckpointCall save = nullptr;
  CheckpointCall restore = nullptr;
  CheckpointCall free = nullptr;
};
CheckpointApi g_checkpoint;
pthread_once_t g_checkpoint_once = PTHREAD_ONCE_INIT;

void load_checkpoint_api() {
  // The agent's RUNPATH names libcupti's directory, where CUDA 13 puts
  // libcheckpoint.so; else the directory of the libcupti actually loaded.
  void* library = dlopen("libcheckpoint.so", RTLD_NOW | RTLD_LOCAL);
  Dl_info info;
  if (library == nullptr && dladdr(reinterpret_cast<void*>(&cuptiGetVersion), &info) != 0 &&
      info.dli_fname != nullptr) {
    char path[4096];
    const char* slash = std::strrchr(info.dli_fname, '/');
    size_t dir = slash != nullptr ? static_cast<size_t>(slash - info.dli_fname) : 0;
    static constexpr char kName[] = "/libcheckpoint.so";
    if (slash != nullptr && dir + sizeof(kName) <= sizeof(path)) {
      std::memcpy(path, info.dli_fname, dir);
      std::memcpy(path + dir, kName, sizeof(kName));
      library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
  }
  if (library == nullptr) return;
  g_checkpoint.save = reinterpret_cast<CheckpointCall>(dlsym(library, "cuptiCheckpointSave"));
  g_checkpoint.restore = reinterpret_cast<CheckpointCall>(dlsym(library, "cuptiCheckpointRestore"));
  g_checkpoint.free = reinterpret_cast<CheckpointCall>(dlsym(library, "cuptiCheckpointFree"));
}

double ms_since(int64_t start_ns) {
  return static_cast<double>(monotonic_ns() - start_ns) / 1e6;
}

// A checkpoint restore, its time added to `*restore_ms`.
CUptiResult timed_restore(CUpti_Checkpoint& checkpoint, double* restore_ms) {
  const int64_t start = monotonic_ns();
  CUptiResult restored = g_checkpoint.restore(&checkpoint);
  *restore_ms += ms_since(start);
  return restored;
}

// The program's launch once more: the same entry point, the same arguments
// (the callback's parameter struct, valid for the whole callback).
CUresult relaunch(const DriverApi& api, const DriverLaunch& launch) {
  switch (launch.cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
      const auto* p = static_cast<const DriverLaunchKernelParams*>(launch.params);
      auto fn = launch.cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ? api.cuLaunchKernel
                                                                      : api.cuLaunchKernel_ptsz;
      if (fn == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
      return fn(p->f, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,
                p->blockDimZ, p->sharedMemBytes, p->hStream, p->kernelParams, p->extra);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const auto* p = static_cast<const DriverLaunchKernelExParams*>(launch.params);
      auto fn = launch.cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ? api.cuLaunchKernelEx
                                                                        : api.cuLaunchKernelEx_ptsz;
      if (fn == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
      return fn(p->config, p->f, p->kernelParams, p->extra);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
      const auto* p = static_cast<const DriverLaunchCooperativeKernelParams*>(launch.params);
      auto fn = launch.cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel
                    ? api.cuLaunchCooperativeKernel
                    : api.cuLaunchCooperativeKernel_ptsz;
      if (fn == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
      return fn(p->f, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,
                p->blockDimZ, p->sharedMemBytes, p->hStream, p->kernelParams);
    }
    default:
      return CUDA_ERROR_NOT_SUPPORTED;
  }
}

// The kernel once more with CUPTI's kernel records on, for the registers and
// shared-memory configuration the driver ran it with (executed_config.h),
// then memory restored again. Best effort: without it those come from the
// fallbacks docs/kernels.md names, and the metrics stand.
bool recorded_relaunch(const DriverApi& api, const DriverLaunch& launch,
                       ExecutedConfigProbe& records, CUpti_Checkpoint& checkpoint) {
  records.record_begin();
  if (!records.recording()) return false;
  CUresult launched = relaunch(api, launch);
  CUresult synced = launched == CUDA_SUCCESS ? api.cuCtxSynchronize() : launched;
  records.record_end();
  CUptiResult restored = g_checkpoint.restore(&checkpoint);
  return synced == CUDA_SUCCESS && restored == CUPTI_SUCCESS;
}

}  // namespace

bool can_relaunch(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return true;
    default:
      return false;
  }
}

ReplayResult replay_flushed(const DriverApi& api, RangeSession& session, CacheFlush& flush,
                            CUcontext context, CUdevice device, const DriverLaunch& launch,
                            ExecutedConfigProbe& records, double* values) {
  ReplayResult result;
  pthread_once(&g_checkpoint_once, load_checkpoint_api);
  if (g_checkpoint.save == nullptr || g_checkpoint.restore == nullptr ||
      g_checkpoint.free == nullptr || api.cuCtxSynchronize == nullptr ||
      !can_relaunch(launch.cbid)) {
    result.fall_back = true;
    result.failed_call = g_checkpoint.save == nullptr ? "dlopen libcheckpoint.so" : "relaunch";
    return result;
  }
  // The program's earlier work must be done before memory is saved, and the
  // sweep set up before anything changes, so that a failure here falls back
  // with nothing to undo.
  if (api.cuCtxSynchronize() != CUDA_SUCCESS || flush.prepare(api, device) != CUDA_SUCCESS) {
    result.fall_back = true;
    result.failed_call = "L2 sweep kernel";
    return result;
  }
  LaunchParams decoded;
  decode_launch(CUPTI_CB_DOMAIN_DRIVER_API, launch.cbid, launch.params, &decoded);
  result.touched_ranges = flush.find_touch_ranges(api, decoded.function, decoded.kernel_params);
  CUpti_Checkpoint checkpoint;
  std::memset(&checkpoint, 0, sizeof(checkpoint));
  checkpoint.structSize = CUpti_Checkpoint_STRUCT_SIZE;
  checkpoint.ctx = context;
  const int64_t save_start = monotonic_ns();
  CUptiResult saved = g_checkpoint.save(&checkpoint);
  result.save_ms = ms_since(save_start);
  if (saved != CUPTI_SUCCESS) {
    result.fall_back = true;
    result.status = saved;
    result.failed_call = "cuptiCheckpointSave";
    return result;
  }

  // The sweep goes where the program's launch goes; a _ptsz launch's null
  // stream is the calling thread's.
  const CUstream stream = decoded.stream == nullptr && decoded.per_thread_stream
                              ? CU_STREAM_PER_THREAD
                              : decoded.stream;
  bool all_submitted = false;
  const int64_t passes_start = monotonic_ns();
  while (!all_submitted) {
    if (result.passes == kMaxPasses) {
      result.status = CUPTI_ERROR_INVALID_OPERATION;
      result.failed_call = "replay: too many passes";
      break;
    }
    if (result.passes > 0) {
      CUptiResult restored = timed_restore(checkpoint, &result.restore_ms);
      if (restored != CUPTI_SUCCESS) {
        result.status = restored;
        result.failed_call = "cuptiCheckpointRestore";
        break;
      }
    }
    CUptiResult rc =
        result.passes == 0 ? session.begin(RangeSession::Replay::kUser) : session.start_pass();
    if (rc != CUPTI_SUCCESS) {
      result.status = rc;
      result.failed_call = "cuptiRangeProfilerStart";
      break;
    }
    ++result.passes;
    // The flush kernels, then the kernel, back to back on one stream, each
    // its own range; evaluate() reads the last, the kernel's.
    // After the restore: its writes are what must not be left in L2.
    CUresult launched = flush.enqueue(api, stream);
    if (launched == CUDA_SUCCESS) launched = relaunch(api, launch);
    CUresult synced = launched == CUDA_SUCCESS ? api.cuCtxSynchronize() : launched;
    rc = session.stop_pass(&all_submitted);
    if (launched != CUDA_SUCCESS || synced != CUDA_SUCCESS) {
      result.launch_error = launched != CUDA_SUCCESS ? launched : synced;
      result.status = CUPTI_ERROR_UNKNOWN;
      result.failed_call = "relaunch";
      break;
    }
    if (rc != CUPTI_SUCCESS) {
      result.status = rc;
      result.failed_call = "cuptiRangeProfilerStop";
      break;
    }
  }
  result.passes_ms = ms_since(passes_start) - result.restore_ms;
  // Every path: the program's launch must find memory as it left it.
  if (result.passes > 0) {
    CUptiResult rc = timed_restore(checkpoint, &result.restore_ms);
    if (rc != CUPTI_SUCCESS && result.status == CUPTI_SUCCESS) {
      result.status = rc;
      result.failed_call = "cuptiCheckpointRestore";
    }
  }
  if (result.status == CUPTI_SUCCESS) {
    const int64_t recorded_start = monotonic_ns();
    result.recorded = recorded_relaunch(api, launch, records, checkpoint);
    result.recorded_ms = ms_since(recorded_start);
  }
  g_checkpoint.free(&checkpoint);
  if (result.status == CUPTI_SUCCESS) {
    result.status = session.evaluate(values);
    if (result.status != CUPTI_SUCCESS) result.failed_call = "range profiler evaluation";
  }
  return result;
}

}  // namespace strata::agent::kernels
