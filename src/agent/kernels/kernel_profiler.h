// KernelProfiler: kernels mode of the agent (STRATA_AGENT_MODE=kernels, run by
// `strata kernels`; docs/kernels-interface.md, docs/agent.md "Kernels mode").
// Instead of the activity tracer, it holds the process's CUPTI subscriber
// and the launch callbacks of the runtime and driver APIs. Every launch is
// named and counted (KernelTable, written as kernels-seen chunks); the
// launches STRATA_KERNEL_NAME/SKIP/COUNT select are profiled with CUPTI's
// range profiler and written as one kernel-metrics chunk each. Who replays
// the kernel for the passes depends on STRATA_KERNEL_CACHE_CONTROL:
//   all (default): strata, with the caches flushed before every pass
//     (flushed_replay.h), from the enter callback of the driver launch (a
//     runtime launch: of the driver launch beneath it); the program's own
//     launch then runs unprofiled;
//   none, or where the checkpoint API is missing: CUPTI's kernel replay,
//     Start at the launch API's enter callback, Stop, decode and evaluate
//     at its exit, every pass inside the launch.
//
// Threading: callbacks come on any thread. One mutex covers the table and the
// sessions; a thread profiling a launch holds it from the enter to the exit
// callback, so another thread's launch waits meanwhile instead of landing
// in the profiled range (ncu serializes the same way). Waiting is bounded
// (kLockWaitSeconds): past it the other launch goes on uncounted, so a
// replay that somehow needs that thread cannot hang the program. A runtime
// launch that reaches the driver callbacks too (some CUDA versions) is seen
// once: a thread-local depth skips the nested callback.
// Allocation and locks: allowed here (not the tracing hot path): the table
// and spool at start, CUPTI's images at a context's first profiled launch,
// demangling once per new kernel name.
// Errors: nothing throws; a CUPTI error ends profiling with one stderr line,
// its status in that launch's chunk, and the program running on untouched.
// Lifetime: static storage, never destroyed (atexit and late callbacks).
#pragma once

#include <cuda.h>
#include <cupti_callbacks.h>
#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/config.h"
#include "agent/kernels/cache_flush.h"
#include "agent/kernels/driver_api.h"
#include "agent/kernels/executed_config.h"
#include "agent/kernels/flushed_replay.h"
#include "agent/kernels/kernel_table.h"
#include "agent/kernels/launch_metrics.h"
#include "agent/kernels/launch_window.h"
#include "agent/kernels/metric_list.h"
#include "agent/kernels/name_match.h"
#include "agent/kernels/range_session.h"
#include "format/spool_writer.h"

namespace strata::agent::kernels {

class KernelProfiler {
 public:
  static constexpr int kLockWaitSeconds = 30;
  // How long exit waits for a launch being profiled on another thread.
  static constexpr int kExitWaitSeconds = 2;
  static constexpr size_t kMaxContexts = 16;
  static constexpr int kMaxDevices = 64;

  static KernelProfiler& instance();

  // Subscribes to CUPTI, enables the launch callbacks, opens the spool.
  // Prints one line and returns false when the process runs unprofiled.
  bool start(const Config& config);
  // atexit: the last kernels-seen chunk, range profilers off, spool closed.
  void stop_at_exit();
  void on_fork_child();
  // SignalChain hook (async-signal-safe on the terminating path).
  void on_signal(int sig, bool terminating);

 private:
  KernelProfiler() = default;
  friend struct KernelProfilerStorage;

  struct Current {  // the launch being profiled (under mutex_)
    format::KernelMetricsHeader header;
    LaunchFacts facts;
    CUcontext context = nullptr;
    CUdevice cu_device = 0;  // the driver's handle of header.device
    RangeSession* session = nullptr;
    CacheFlush* flush = nullptr;  // the session's context's
    bool started = false;         // CUPTI's kernel replay: Stop at the exit callback
    bool replay_pending = false;  // strata's replay: at the driver launch still to come
    bool replayed = false;        // strata's replay ran (replay says how it went)
    ReplayResult replay;
    double values[kMaxMetrics] = {};
    size_t name_length = 0;
  };

  static void CUPTIAPI callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void* data);
  void on_launch_enter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                       const CUpti_CallbackData* data);
  void on_launch_exit(const CUpti_CallbackData* data);
  void on_graph_launch();
  void on_nested_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                        const CUpti_CallbackData* data);
  // Profiles the current launch, whose driver entry point and arguments
  // `launch` names, with strata's replay, or CUPTI's where that cannot run.
  void replay_current(const DriverLaunch& launch);

  bool lock();                    // kLockWaitSeconds, then says so once
  bool lock_within(int seconds);  // false: timed out
  void unlock() { pthread_mutex_unlock(&mutex_); }
  RangeSession* session_for(CUcontext context, uint32_t device, CUptiResult* status);
  const DeviceAttributes& device_attributes_of(uint32_t device);
  void report_failure(CUptiResult status, uint32_t device, const RangeSession* session);
  void tear_down_sessions();
  void write_seen();
  bool debug() const { return config_.debug; }

  Config config_;
  pid_t owner_pid_ = 0;
  std::atomic<bool> active_{false};
  std::atomic<bool> in_child_{false};
  std::atomic<bool> closed_{false};
  void* subscriber_ = nullptr;  // CUpti_SubscriberHandle

  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
  KernelNameFilter filter_;
  KernelTable table_;
  LaunchWindow window_{0, LaunchWindow::kUnlimited};
  MetricList metrics_;
  DriverApi driver_;
  bool driver_loaded_ = false;
  format::SpoolWriter spool_;

  ExecutedConfigProbe executed_;  // kernel records: carveout, registers (executed_config.h)
  RangeSession sessions_[kMaxContexts];
  CacheFlush flushes_[kMaxContexts];  // flushes_[i] serves sessions_[i]'s context
  size_t session_count_ = 0;
  bool fell_back_ = false;  // said once that strata's replay could not run
  DeviceAttributes device_cache_[kMaxDevices];
  bool device_cached_[kMaxDevices] = {};
  bool failed_ = false;  // a CUPTI error ended profiling
  bool done_ = false;    // STRATA_KERNEL_COUNT launches profiled
  bool first_profiled_ = true;

  Current current_;
  char* current_name_ = nullptr;  // KernelTable::kMaxStoredName + 1 bytes

  uint64_t captured_launches_ = 0;  // into stream captures: not counted as seen
  std::atomic<uint64_t> graph_launches_{0};
  std::atomic<uint64_t> unlocked_launches_{0};  // waited past kLockWaitSeconds
};

}  // namespace strata::agent::kernels
