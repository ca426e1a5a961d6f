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

// The one place a params type meets its _STRUCT_SIZE macro, so that the two
// cannot drift apart (structSize is how CUPTI tells its API versions apart).
#define STRATA_CUPTI_PARAMS(Type) make_params<Type>(Type##_STRUCT_SIZE)

// Returns the first CUptiResult that is not CUPTI_SUCCESS: the agent's
// counterpart of STRATA_TRY (common/result.h), since CUPTI calls give a code.
#define STRATA_CUPTI_TRY(expr)                                                           \
  do {                                                                                   \
    if (CUptiResult strata_rc_ = (expr); strata_rc_ != CUPTI_SUCCESS) return strata_rc_; \
  } while (0)

pthread_once_t g_profiler_once = PTHREAD_ONCE_INIT;
CUptiResult g_profiler_initialized = CUPTI_ERROR_NOT_INITIALIZED;

void initialize_profiler() {
  // "Loads the required libraries in the process address space. Sets up the
  // hooks with the CUDA driver" (cupti_profiler_target.h): libnvperf_host.so
  // and libnvperf_target.so from libcupti's directory. Once per process.
  auto params = STRATA_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
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

// The fill half of a size-then-fill pair: a zeroed buffer of the size CUPTI
// asked for (calloc, not new: the agent never throws).
CUptiResult allocate_image(size_t size, uint8_t** image, size_t* image_size) {
  *image_size = size;
  *image = static_cast<uint8_t*>(std::calloc(size ? size : 1, 1));
  return *image == nullptr ? CUPTI_ERROR_OUT_OF_MEMORY : CUPTI_SUCCESS;
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
  auto params = STRATA_CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  params.ctx = context;
  STRATA_CUPTI_TRY(traced("cuptiProfilerGetCounterAvailability(size)",
                          cuptiProfilerGetCounterAvailability(&params)));
  STRATA_CUPTI_TRY(
      allocate_image(params.counterAvailabilityImageSize, &availability_, &availability_size_));
  params.pCounterAvailabilityImage = availability_;
  return traced("cuptiProfilerGetCounterAvailability",
                cuptiProfilerGetCounterAvailability(&params));
}

CUptiResult RangeSession::initialize_host() {
  auto params = STRATA_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
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
  STRATA_CUPTI_TRY(traced("cuptiProfilerInitialize", g_profiler_initialized));

  {
    auto params = STRATA_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
    params.deviceIndex = device;
    STRATA_CUPTI_TRY(traced("cuptiDeviceGetChipName", cuptiDeviceGetChipName(&params)));
    if (params.pChipName != nullptr) {
      std::strncpy(chip_name_, params.pChipName, sizeof(chip_name_) - 1);
    }
  }
  {
    // Says why a device cannot be profiled (vGPU, confidential compute,
    // CMP, WSL, architecture) before the calls that only fail.
    auto params = STRATA_CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
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
    auto params = STRATA_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    params.pHostObject = host_;
    params.ppMetricNames = const_cast<const char**>(metrics_->names);
    params.numMetrics = metrics_->count;
    STRATA_CUPTI_TRY(
        traced("cuptiProfilerHostConfigAddMetrics", cuptiProfilerHostConfigAddMetrics(&params)));
  }
  {
    auto size = STRATA_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
    size.pHostObject = host_;
    STRATA_CUPTI_TRY(
        traced("cuptiProfilerHostGetConfigImageSize", cuptiProfilerHostGetConfigImageSize(&size)));
    STRATA_CUPTI_TRY(allocate_image(size.configImageSize, &config_, &config_size_));
    auto image = STRATA_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
    image.pHostObject = host_;
    image.configImageSize = config_size_;
    image.pConfigImage = config_;
    STRATA_CUPTI_TRY(
        traced("cuptiProfilerHostGetConfigImage", cuptiProfilerHostGetConfigImage(&image)));
  }
  {
    auto params = STRATA_CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
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
    auto params = STRATA_CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
    params.ctx = context;
    STRATA_CUPTI_TRY(traced("cuptiRangeProfilerEnable", cuptiRangeProfilerEnable(&params)));
    profiler_ = params.pRangeProfilerObject;
  }
  {
    // AutoRange makes one range per kernel; only the profiled launch (and,
    // in strata's replay, the sweep before it) runs between Start and Stop.
    auto params = STRATA_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
    params.pRangeProfilerObject = profiler_;
    params.pMetricNames = const_cast<const char**>(metrics_->names);
    params.numMetrics = metrics_->count;
    params.maxNumOfRanges = ranges_;
    params.maxNumRangeTreeNodes = ranges_;
    STRATA_CUPTI_TRY(traced("cuptiRangeProfilerGetCounterDataSize",
                            cuptiRangeProfilerGetCounterDataSize(&params)));
    STRATA_CUPTI_TRY(allocate_image(params.counterDataSize, &counter_data_, &counter_data_size_));
  }
  return CUPTI_SUCCESS;
}

CUptiResult RangeSession::set_config(Replay replay) {
  // "can also be used to reset the counter data image"
  // (cuptiRangeProfilerCounterDataImageInitialize, CUPTI 13 docs): each
  // launch starts from an empty image, so range 0 is always this launch.
  auto init = STRATA_CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  init.pRangeProfilerObject = profiler_;
  init.counterDataSize = counter_data_size_;
  init.pCounterData = counter_data_;
  STRATA_CUPTI_TRY(traced("cuptiRangeProfilerCounterDataImageInitialize",
                          cuptiRangeProfilerCounterDataImageInitialize(&init)));
  auto params = STRATA_CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
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
  STRATA_CUPTI_TRY(set_config(replay));
  ++launches_;
  return start_pass();
}

CUptiResult RangeSession::start_pass() {
  auto params = STRATA_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
  params.pRangeProfilerObject = profiler_;
  return traced("cuptiRangeProfilerStart", cuptiRangeProfilerStart(&params));
}

CUptiResult RangeSession::stop_pass(bool* all_submitted) {
  auto params = STRATA_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
  params.pRangeProfilerObject = profiler_;
  CUptiResult rc = traced("cuptiRangeProfilerStop", cuptiRangeProfilerStop(&params));
  *all_submitted = rc == CUPTI_SUCCESS && params.isAllPassSubmitted != 0;
  return rc;
}

CUptiResult RangeSession::end(double* values) {
  if (profiler_ == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  bool all_submitted = false;
  STRATA_CUPTI_TRY(stop_pass(&all_submitted));
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
    auto params = STRATA_CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
    params.pRangeProfilerObject = profiler_;
    STRATA_CUPTI_TRY(traced("cuptiRangeProfilerDecodeData", cuptiRangeProfilerDecodeData(&params)));
    if (params.numOfRangeDropped != 0 && debug_) {
      log_line("kernels: %zu ranges dropped", params.numOfRangeDropped);
    }
  }
  {
    auto params = STRATA_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
    params.pCounterDataImage = counter_data_;
    params.counterDataImageSize = counter_data_size_;
    STRATA_CUPTI_TRY(traced("cuptiRangeProfilerGetCounterDataInfo",
                            cuptiRangeProfilerGetCounterDataInfo(&params)));
    if (debug_) log_line("kernels: %zu ranges in the counter data", params.numTotalRanges);
    // No range: the launch failed before reaching the GPU.
    if (params.numTotalRanges == 0) return CUPTI_ERROR_INVALID_OPERATION;
    range = params.numTotalRanges - 1;  // the profiled kernel ran last
  }
  auto params = STRATA_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
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
    auto params = STRATA_CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
    params.pRangeProfilerObject = profiler_;
    traced("cuptiRangeProfilerDisable", cuptiRangeProfilerDisable(&params));
    profiler_ = nullptr;
  }
  if (host_ != nullptr) {
    auto params = STRATA_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
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
