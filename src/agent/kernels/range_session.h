// RangeSession: CUPTI's range profiler on one CUDA context, collecting the
// chosen metrics of one kernel launch at a time (CUDA 13 API:
// cupti_range_profiler.h + cupti_profiler_host.h; the call sequence of
// shared/reference/ncu-metrics.md and NVIDIA's range_profiling sample).
//
//   set_up (once, at the context's first profiled launch):
//     cuptiProfilerInitialize (once per process), cuptiDeviceGetChipName,
//     cuptiProfilerDeviceSupported, cuptiProfilerHostInitialize (without a
//     counter availability image; only if that fails
//     cuptiProfilerGetCounterAvailability, size then image, and a second
//     try with it), cuptiProfilerHostConfigAddMetrics,
//     cuptiProfilerHostGetConfigImageSize/GetConfigImage,
//     cuptiProfilerHostGetNumOfPasses, cuptiRangeProfilerEnable,
//     cuptiRangeProfilerGetCounterDataSize, cuptiRangeProfilerCounterDataImageInitialize
//   begin (launch API enter):
//     cuptiRangeProfilerCounterDataImageInitialize (a fresh image per
//     launch), cuptiRangeProfilerSetConfig (CUPTI_AutoRange, kernel or user
//     replay, one range per pass), cuptiRangeProfilerStart
//   kernel replay: end (launch API exit; CUPTI ran every pass inside the
//     launch): cuptiRangeProfilerStop, then evaluate
//   user replay (flushed_replay.h): per pass a relaunch, stop_pass
//     (cuptiRangeProfilerStop), start_pass (cuptiRangeProfilerStart) until
//     Stop says all passes were submitted, then evaluate
//   evaluate: cuptiRangeProfilerDecodeData,
//     cuptiRangeProfilerGetCounterDataInfo, cuptiProfilerHostEvaluateToGpuValues
//   tear_down: cuptiRangeProfilerDisable, cuptiProfilerHostDeinitialize
//
// Errors: every call returns the first CUptiResult that was not
// CUPTI_SUCCESS; the caller records it as the launch's status.
// Threading: one session is used by one thread at a time (the kernel
// profiler's lock). Allocation: set_up allocates the configuration and counter
// data images, and the availability image when it reads one (malloc).
#pragma once

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>

#include <cstddef>
#include <cstdint>

#include "agent/kernels/metric_list.h"

namespace strata::agent::kernels {

class RangeSession {
 public:
  RangeSession() = default;
  ~RangeSession();
  RangeSession(const RangeSession&) = delete;
  RangeSession& operator=(const RangeSession&) = delete;

  // `metrics` must outlive the session. `ranges`: kernels per pass, each its
  // own range (strata's replay: kReplayRangesPerPass; else 1); the
  // last range of a pass is the profiled kernel's. `debug`: one stderr line
  // per CUPTI call.
  CUptiResult set_up(CUcontext context, uint32_t device, const MetricList* metrics, size_t ranges,
                     bool debug);
  // Who replays the kernel for every pass the metrics need.
  enum class Replay {
    kCupti,  // CUPTI_KernelReplay, inside the launch (--cache-control none)
    kUser,   // CUPTI_UserReplay: flushed_replay.h relaunches it (--cache-control all)
  };
  // A fresh counter data image, the configuration, and the first pass's Start.
  CUptiResult begin(Replay replay);
  // User replay: Start of every pass after the first, Stop of every pass
  // (all_submitted: the last pass the configuration needs has run).
  CUptiResult start_pass();
  CUptiResult stop_pass(bool* all_submitted);
  // Kernel replay, at the launch's exit: Stop, then evaluate.
  CUptiResult end(double* values);
  // After the last pass: fills values[0..metrics->count) on success.
  CUptiResult evaluate(double* values);
  void tear_down();

  // Tests only (STRATA_AGENT_KERNELS_FAIL=unsupported-device): set_up reads
  // cuptiProfilerDeviceSupported's answer as a vGPU that cannot be profiled.
  void simulate_unsupported_device() { simulate_unsupported_ = true; }

  CUcontext context() const { return context_; }
  bool ready() const { return profiler_ != nullptr; }
  // "GH100"; empty before set_up got that far.
  const char* chip_name() const { return chip_name_; }
  size_t passes() const { return passes_; }
  // Why the device cannot be profiled, when cuptiProfilerDeviceSupported said so.
  const char* unsupported_reason() const { return unsupported_reason_; }

 private:
  CUptiResult traced(const char* call, CUptiResult rc) const;
  CUptiResult read_counter_availability(CUcontext context);
  CUptiResult initialize_host();
  CUptiResult set_config(Replay replay);

  CUcontext context_ = nullptr;
  uint32_t device_ = 0;
  const MetricList* metrics_ = nullptr;
  bool debug_ = false;
  bool simulate_unsupported_ = false;
  char chip_name_[64] = {};
  const char* unsupported_reason_ = nullptr;
  size_t passes_ = 0;
  size_t ranges_ = 1;
  uint64_t launches_ = 0;

  CUpti_Profiler_Host_Object* host_ = nullptr;
  CUpti_RangeProfiler_Object* profiler_ = nullptr;
  uint8_t* availability_ = nullptr;
  size_t availability_size_ = 0;
  uint8_t* config_ = nullptr;
  size_t config_size_ = 0;
  uint8_t* counter_data_ = nullptr;
  size_t counter_data_size_ = 0;
};

// CUptiResult's name ("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES").
const char* cupti_result_name(CUptiResult rc);

}  // namespace strata::agent::kernels
