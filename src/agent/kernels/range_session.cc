#include "agent/kernels/range_session.h"

#include <cupti.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <pthread.h>

#include <cstdlib>
#include <cstring>

#include "agent/log.h"
#include "common/clock.h"

namespace strata::agent::kernels {

namespace {

// A CUPTI parameter struct: zeroed (pPriv and every unused field null, as
// the headers ask) with its structSize set.
template <typename T>
T make_params(size_t struct_size) {
  T params;
  std::memset(&params, 0, sizeof(params));
  params.structSize = struct_size;
  return params;
}

pthread_once_t g_profiler_once = PTHREAD_ONCE_INIT;
CUptiResult g_profiler_initialized = CUPTI_ERROR_NOT_INITIALIZED;

void initialize_profiler() {
  // "Loads the required libraries in the process address space. Sets up the
  // hooks with the CUDA driver" (cupti_profiler_target.h): libnvperf_host.so
  // and libnvperf_target.so from libcupti's directory. Once per process.
  auto params =
      make_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  g_profiler_initialized = cuptiProfilerInitialize(&params);
}

const char* support_name(CUpti_Profiler_Support_Level level) {
  switch (level) {
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED:
      return "unsupported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED:
      return "disabled";
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED:
      return "supported";
    default:
      return "unknown";
  }
}

uint8_t* allocate(size_t size) {
  return static_cast<uint8_t*>(std::calloc(size ? size : 1, 1));
}

}  // namespace

const char* cupti_result_name(CUptiResult rc) {
  const char* text = nullptr;
  if (cuptiGetResultString(rc, &text) != CUPTI_SUCCESS || text == nullptr) return "unknown";
  return text;
}

RangeSession::~RangeSession() {
  tear_down();
}

// t= is when the call returned, on strata's clock (CLOCK_MONOTONIC), in ms.
// Between two consecutive CUPTI calls the gap is the second call's cost;
// between others it also holds the agent's and the program's work.
CUptiResult RangeSession::traced(const char* call, CUptiResult rc) const {
  if (debug_) {
    log_line("kernels: %s -> %s (t=%.1f ms)", call, cupti_result_name(rc),
             static_cast<double>(monotonic_ns()) / 1e6);
  }
  return rc;
}

CUptiResult RangeSession::read_counter_availability(CUcontext context) {
  // Two calls: the first with a null image returns the size
  // (cupti_profiler_target.h).
  auto params = make_params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  params.ctx = context;
  if (CUptiResult rc = traced("cuptiProfilerGetCounterAvailability(size)",
                              cuptiProfilerGetCounterAvailability(&params));
      rc) {
    return rc;
  }
  availability_size_ = params.counterAvailabilityImageSize;
  availability_ = allocate(availability_size_);
  if (availability_ == nullptr) return CUPTI_ERROR_OUT_OF_MEMORY;
  params.pCounterAvailabilityImage = availability_;
  return traced("cuptiProfilerGetCounterAvailability",
                cuptiProfilerGetCounterAvailability(&params));
}

CUptiResult RangeSession::initialize_host() {
  auto params = make_params<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  params.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  params.pChipName = chip_name_;
  params.pCounterAvailabilityImage = availability_;  // null on the first try
  CUptiResult rc = traced(availability_ == nullptr ? "cuptiProfilerHostInitialize"
                                                   : "cuptiProfilerHostInitialize(availability)",
                          cuptiProfilerHostInitialize(&params));
  if (rc == CUPTI_SUCCESS) host_ = params.pHostObject;
  return rc;
}

CUptiResult RangeSession::set_up(CUcontext context, uint32_t device, const MetricList* metrics,
                                 size_t ranges, bool debug) {
  context_ = context;
  ranges_ = ranges > 0 ? ranges : 1;
  device_ = device;
  metrics_ = metrics;
  debug_ = debug;
  pthread_once(&g_profiler_once, initialize_profiler);
  if (CUptiResult rc = traced("cuptiProfilerInitialize", g_profiler_initialized); rc) return rc;

  {
    auto params =
        make_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    params.deviceIndex = device;
    if (CUptiResult rc = traced("cuptiDeviceGetChipName", cuptiDeviceGetChipName(&params)); rc) {
      return rc;
    }
    if (params.pChipName != nullptr) {
      std::strncpy(chip_name_, params.pChipName, sizeof(chip_name_) - 1);
    }
  }
  {
    // Says why a device cannot be profiled (vGPU, confidential compute,
    // CMP, WSL, architecture) before the calls that only fail.
    auto params = make_params<CUpti_Profiler_DeviceSupported_Params>(
        CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
    params.cuDevice = static_cast<CUdevice>(device);
    params.api = CUPTI_PROFILER_RANGE_PROFILING;
    CUptiResult rc = traced("cuptiProfilerDeviceSupported", cuptiProfilerDeviceSupported(&params));
    if (rc == CUPTI_SUCCESS && simulate_unsupported_) {
      params.isSupported = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
      params.vGpu = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
    }
    if (rc == CUPTI_SUCCESS && params.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
      unsupported_reason_ = params.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED
                                ? "architecture"
                            : params.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "vGPU"
                            : params.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED
                                ? "confidential compute"
                            : params.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "CMP device"
                            : params.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "WSL"
                            : params.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "SLI"
                                                                                   : "unknown";
      if (debug_) {
        log_line("kernels: device %u: profiling %s (%s)", device, support_name(params.isSupported),
                 unsupported_reason_);
      }
      return CUPTI_ERROR_NOT_SUPPORTED;
    }
  }
  // The counter availability image takes about 110 ms on the H200, some 15 %
  // of what strata adds to a native run. cupti_profiler_host.h calls it
  // "required for future chip support", so it is read only when the host will
  // not start without it. Where profiling is restricted to admin users,
  // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES then comes from a later call
  // (presumably the range profiler's Enable or Start; no such machine has
  // confirmed which), and report_failure words it the same.
  if (CUptiResult rc = initialize_host(); rc) {
    if (CUptiResult read = read_counter_availability(context); read) return read;
    if (CUptiResult again = initialize_host(); again) return again;
  }
  {
    auto params = make_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    params.pHostObject = host_;
    params.ppMetricNames = const_cast<const char**>(metrics_->names);
    params.numMetrics = metrics_->count;
    if (CUptiResult rc =
            traced("cuptiProfilerHostConfigAddMetrics", cuptiProfilerHostConfigAddMetrics(&params));
        rc) {
      return rc;
    }
  }
  {
    auto size = make_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = host_;
    if (CUptiResult rc = traced("cuptiProfilerHostGetConfigImageSize",
                                cuptiProfilerHostGetConfigImageSize(&size));
        rc) {
      return rc;
    }
    config_size_ = size.configImageSize;
    config_ = allocate(config_size_);
    if (config_ == nullptr) return CUPTI_ERROR_OUT_OF_MEMORY;
    auto image = make_params<CUpti_Profiler_Host_GetConfigImage_Params>(
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    image.pHostObject = host_;
    image.configImageSize = config_size_;
    image.pConfigImage = config_;
    if (CUptiResult rc =
            traced("cuptiProfilerHostGetConfigImage", cuptiProfilerHostGetConfigImage(&image));
        rc) {
      return rc;
    }
  }
  {
    auto params = make_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    params.configImageSize = config_size_;
    params.pConfigImage = config_;
    if (traced("cuptiProfilerHostGetNumOfPasses", cuptiProfilerHostGetNumOfPasses(&params)) ==
        CUPTI_SUCCESS) {
      passes_ = params.numOfPasses;  // informational: kernel replay runs them all
    }
    if (debug_)
      log_line("kernels: %zu metrics need %zu passes on %s", metrics_->count, passes_, chip_name_);
  }
  {
    auto params = make_params<CUpti_RangeProfiler_Enable_Params>(
        CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    params.ctx = context;
    if (CUptiResult rc = traced("cuptiRangeProfilerEnable", cuptiRangeProfilerEnable(&params));
        rc) {
      return rc;
    }
    profiler_ = params.pRangeProfilerObject;
  }
  {
    // AutoRange makes one range per kernel; only the profiled launch (and,
    // in strata's replay, the sweep before it) runs between Start and Stop.
    auto params = make_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    params.pRangeProfilerObject = profiler_;
    params.pMetricNames = const_cast<const char**>(metrics_->names);
    params.numMetrics = metrics_->count;
    params.maxNumOfRanges = ranges_;
    params.maxNumRangeTreeNodes = ranges_;
    if (CUptiResult rc = traced("cuptiRangeProfilerGetCounterDataSize",
                                cuptiRangeProfilerGetCounterDataSize(&params));
        rc) {
      return rc;
    }
    counter_data_size_ = params.counterDataSize;
    counter_data_ = allocate(counter_data_size_);
    if (counter_data_ == nullptr) return CUPTI_ERROR_OUT_OF_MEMORY;
  }
  return CUPTI_SUCCESS;
}

CUptiResult RangeSession::set_config(Replay replay) {
  // "can also be used to reset the counter data image"
  // (cuptiRangeProfilerCounterDataImageInitialize, CUPTI 13 docs): each
  // launch starts from an empty image, so range 0 is always this launch.
  auto init = make_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = profiler_;
  init.counterDataSize = counter_data_size_;
  init.pCounterData = counter_data_;
  if (CUptiResult rc = traced("cuptiRangeProfilerCounterDataImageInitialize",
                              cuptiRangeProfilerCounterDataImageInitialize(&init));
      rc) {
    return rc;
  }
  auto params = make_params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  params.pRangeProfilerObject = profiler_;
  params.configSize = config_size_;
  params.pConfig = config_;
  params.counterDataImageSize = counter_data_size_;
  params.pCounterDataImage = counter_data_;
  params.range = CUPTI_AutoRange;
  // Kernel replay: CUPTI replays the kernel for every pass inside the
  // launch. User replay: strata does (flushed_replay.h), one Start/Stop per pass.
  params.replayMode = replay == Replay::kCupti ? CUPTI_KernelReplay : CUPTI_UserReplay;
  params.maxRangesPerPass = ranges_;
  params.numNestingLevels = 1;  // "For Auto range mode, this should be set to 1."
  params.minNestingLevel = 1;
  params.passIndex = 0;
  params.targetNestingLevel = 1;
  return traced("cuptiRangeProfilerSetConfig", cuptiRangeProfilerSetConfig(&params));
}

CUptiResult RangeSession::begin(Replay replay) {
  if (profiler_ == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  if (CUptiResult rc = set_config(replay); rc) return rc;
  ++launches_;
  return start_pass();
}

CUptiResult RangeSession::start_pass() {
  auto params =
      make_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  params.pRangeProfilerObject = profiler_;
  return traced("cuptiRangeProfilerStart", cuptiRangeProfilerStart(&params));
}

CUptiResult RangeSession::stop_pass(bool* all_submitted) {
  auto params =
      make_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  params.pRangeProfilerObject = profiler_;
  CUptiResult rc = traced("cuptiRangeProfilerStop", cuptiRangeProfilerStop(&params));
  *all_submitted = rc == CUPTI_SUCCESS && params.isAllPassSubmitted != 0;
  return rc;
}

CUptiResult RangeSession::end(double* values) {
  if (profiler_ == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  bool all_submitted = false;
  if (CUptiResult rc = stop_pass(&all_submitted); rc) return rc;
  // With kernel replay every pass ran inside the launch; anything else
  // would leave metrics of passes that never ran.
  if (!all_submitted) {
    if (debug_) log_line("kernels: cuptiRangeProfilerStop: not all passes were submitted");
    return CUPTI_ERROR_INVALID_OPERATION;
  }
  return evaluate(values);
}

CUptiResult RangeSession::evaluate(double* values) {
  if (profiler_ == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  size_t range = 0;
  {
    auto params = make_params<CUpti_RangeProfiler_DecodeData_Params>(
        CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    params.pRangeProfilerObject = profiler_;
    if (CUptiResult rc =
            traced("cuptiRangeProfilerDecodeData", cuptiRangeProfilerDecodeData(&params));
        rc) {
      return rc;
    }
    if (params.numOfRangeDropped != 0 && debug_) {
      log_line("kernels: %zu ranges dropped", params.numOfRangeDropped);
    }
  }
  {
    auto params = make_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    params.pCounterDataImage = counter_data_;
    params.counterDataImageSize = counter_data_size_;
    if (CUptiResult rc = traced("cuptiRangeProfilerGetCounterDataInfo",
                                cuptiRangeProfilerGetCounterDataInfo(&params));
        rc) {
      return rc;
    }
    if (debug_) log_line("kernels: %zu ranges in the counter data", params.numTotalRanges);
    // No range: the launch failed before reaching the GPU.
    if (params.numTotalRanges == 0) return CUPTI_ERROR_INVALID_OPERATION;
    range = params.numTotalRanges - 1;  // the profiled kernel ran last
  }
  auto params = make_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  params.pHostObject = host_;
  params.pCounterDataImage = counter_data_;
  params.counterDataImageSize = counter_data_size_;
  params.rangeIndex = range;
  params.ppMetricNames = const_cast<const char**>(metrics_->names);
  params.numMetrics = metrics_->count;
  params.pMetricValues = values;
  return traced("cuptiProfilerHostEvaluateToGpuValues",
                cuptiProfilerHostEvaluateToGpuValues(&params));
}

void RangeSession::tear_down() {
  if (profiler_ != nullptr) {
    auto params = make_params<CUpti_RangeProfiler_Disable_Params>(
        CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    params.pRangeProfilerObject = profiler_;
    traced("cuptiRangeProfilerDisable", cuptiRangeProfilerDisable(&params));
    profiler_ = nullptr;
  }
  if (host_ != nullptr) {
    auto params = make_params<CUpti_Profiler_Host_Deinitialize_Params>(
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    params.pHostObject = host_;
    traced("cuptiProfilerHostDeinitialize", cuptiProfilerHostDeinitialize(&params));
    host_ = nullptr;
  }
  std::free(availability_);
  std::free(config_);
  std::free(counter_data_);
  availability_ = config_ = counter_data_ = nullptr;
}

}  // namespace strata::agent::kernels
