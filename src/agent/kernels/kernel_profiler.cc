#include "agent/kernels/kernel_profiler.h"

#include <cupti.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>

#include "agent/log.h"
#include "agent/proc_info.h"
#include "common/clock.h"
#include "format/own_process.h"

namespace strata::agent::kernels {

namespace {

// Per thread: how deep inside launch APIs we are (a runtime launch that
// reaches the driver callbacks too is handled once, at depth 0), and
// whether this thread holds the profiler's lock for a profiled launch.
// Plain data: no TLS constructor in a dlopen'd library.
struct ThreadState {
  int depth;
  bool holds_lock;
};
thread_local ThreadState t_state;

bool is_privilege_error(CUptiResult rc) {
  return rc == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
         rc == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES;
}

bool is_unsupported_device(CUptiResult rc) {
  return rc == CUPTI_ERROR_NOT_SUPPORTED || rc == CUPTI_ERROR_NOT_COMPATIBLE ||
         rc == CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED || rc == CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED ||
         rc == CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED;
}

struct alignas(KernelProfiler) StorageBytes {
  unsigned char bytes[sizeof(KernelProfiler)];
};
StorageBytes g_storage;
std::atomic<KernelProfiler*> g_profiler{nullptr};
pthread_once_t g_construct_once = PTHREAD_ONCE_INIT;

}  // namespace

struct KernelProfilerStorage {
  static void construct() {
    g_profiler.store(new (g_storage.bytes) KernelProfiler(), std::memory_order_release);
  }
};

KernelProfiler& KernelProfiler::instance() {
  pthread_once(&g_construct_once, KernelProfilerStorage::construct);
  return *g_profiler.load(std::memory_order_acquire);
}

bool KernelProfiler::start(const Config& config) {
  config_ = config;
  owner_pid_ = getpid();
  uint32_t version = 0;
  if (cuptiGetVersion(&version) != CUPTI_SUCCESS || version < 130000) {
    // The range profiler API of cupti_range_profiler.h is CUDA 13's.
    log_line("CUPTI API version %u is older than 13.0; kernels not profiled", version);
    return false;
  }
  char regex_error[256];
  if (!filter_.init(config.kernel_name, regex_error, sizeof(regex_error))) {
    log_line("STRATA_KERNEL_NAME=%s: %s; no kernel matches", config.kernel_name, regex_error);
  }
  window_ = LaunchWindow(config.kernel_skip, config.kernel_count);
  // The extra names point into config_, which lives as long as the profiler.
  metrics_ = metrics_for_sections(config_.kernel_sections, config_.kernel_metrics,
                                  config_.kernel_metric_count);
  current_name_ = static_cast<char*>(std::malloc(KernelTable::kMaxStoredName + 1));
  if (!table_.init() || current_name_ == nullptr) {
    log_line("cannot allocate the kernel name table; kernels not profiled");
    return false;
  }

  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult rc = cuptiSubscribe(&subscriber, callback, this);
  if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    log_line(
        "another CUDA profiler (CUPTI subscriber: nsys, ncu, compute-sanitizer or Kineto) is "
        "active in this process; kernels not profiled: remove the other profiler from the "
        "command (or turn torch.profiler off) and run it again");
    return false;
  }
  if (rc != CUPTI_SUCCESS) {
    log_line("cannot attach to CUPTI (cuptiSubscribe: %s); kernels not profiled",
             cupti_result_name(rc));
    return false;
  }
  subscriber_ = subscriber;

  char path[Config::kMaxPath + 32];
  if (!spool_path(config, static_cast<int>(owner_pid_), path, sizeof(path))) {
    log_line("STRATA_RUN_DIR is too long; kernels not profiled");
    cuptiUnsubscribe(subscriber);
    return false;
  }
  {
    auto opened = format::SpoolWriter::open(path);
    if (!opened) {
      log_line("cannot open the spool: %s; kernels not profiled", opened.error().message.c_str());
      cuptiUnsubscribe(subscriber);
      return false;
    }
    spool_ = std::move(*opened);
  }
  format::append_own_process_info(spool_, kMaxCmdline);

  // strata's replay relaunches the kernel once with records on; CUPTI's
  // kernel replay needs them on before the launch (executed_config.h).
  const auto records = config.kernel_cache_flush ? ExecutedConfigProbe::Records::kAroundRelaunch
                                                 : ExecutedConfigProbe::Records::kFromStart;
  if (config.smem_config_probe && !executed_.start(records)) {
    log_line(
        "cannot enable CUPTI's kernel records; the shared memory configuration is "
        "predicted, not read");
  }

  // Only the launch callbacks: every other API runs without a callback.
  for (const LaunchCallback& launch : launch_callbacks()) {
    rc = cuptiEnableCallback(1, subscriber, launch.domain, launch.cbid);
    if (rc != CUPTI_SUCCESS) break;
  }
  if (rc != CUPTI_SUCCESS) {
    log_line("cannot enable CUPTI's launch callbacks (%s); kernels not profiled",
             cupti_result_name(rc));
    cuptiUnsubscribe(subscriber);
    subscriber_ = nullptr;
    spool_.close();
    return false;
  }
  if (debug()) {
    log_line("kernels: profiling %s, skip %llu, count %s, %zu CUPTI metrics",
             config.kernel_name[0] ? config.kernel_name : "every kernel",
             static_cast<unsigned long long>(config.kernel_skip),
             config.kernel_count == Config::kAllLaunches ? "all" : "limited", metrics_.count);
  }
  active_.store(true, std::memory_order_release);
  return true;
}

void CUPTIAPI KernelProfiler::callback(void* self_ptr, CUpti_CallbackDomain domain,
                                       CUpti_CallbackId cbid, const void* raw) {
  auto* self = static_cast<KernelProfiler*>(self_ptr);
  if (raw == nullptr || !self->active_.load(std::memory_order_acquire) ||
      self->in_child_.load(std::memory_order_relaxed)) {
    return;
  }
  const auto* data = static_cast<const CUpti_CallbackData*>(raw);
  CallbackKind kind = classify(domain, cbid);
  if (kind == CallbackKind::kOther) return;
  ThreadState& t = t_state;
  if (data->callbackSite == CUPTI_API_ENTER) {
    if (t.depth++ > 0) {
      self->on_nested_launch(domain, cbid, data);
      return;
    }
    if (kind == CallbackKind::kGraphLaunch) {
      self->on_graph_launch();
    } else {
      self->on_launch_enter(domain, cbid, data);
    }
    return;
  }
  if (t.depth > 0 && --t.depth == 0 && t.holds_lock) self->on_launch_exit(data);
}

bool KernelProfiler::lock_within(int seconds) {
  timespec deadline;
  // On CLOCK_MONOTONIC (glibc 2.30+): a wall-clock jump must not shorten or
  // stretch the wait.
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += seconds;
  int rc;
  while ((rc = pthread_mutex_clocklock(&mutex_, CLOCK_MONOTONIC, &deadline)) == EINTR) {
  }
  return rc == 0;
}

bool KernelProfiler::lock() {
  if (lock_within(kLockWaitSeconds)) return true;
  if (unlocked_launches_.fetch_add(1) == 0) {
    log_line("a launch waited %d s for a profiled launch on another thread; it ran uncounted",
             kLockWaitSeconds);
  }
  return false;
}

void KernelProfiler::on_graph_launch() {
  // CUPTI's kernel replay profiles one kernel launch at a time; a graph
  // launch is not a kernel launch and cupti_range_profiler.h (CUDA 13.0)
  // names no graph support for CUPTI_KernelReplay, so the graph's kernels
  // are neither profiled nor counted in kernels-seen.
  if (graph_launches_.fetch_add(1) == 0) {
    log_line(
        "the program launches CUDA graphs: kernels inside graphs are not profiled (CUPTI's "
        "kernel replay does not replay graph launches) and not counted as seen");
  }
}

void KernelProfiler::on_nested_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                      const CUpti_CallbackData* data) {
  // The driver call under a runtime launch: its CUfunction resolves the
  // kernel's registers without the runtime's help, and it is the call that
  // strata's replay relaunches. The replay's own launches come here too,
  // once replay_pending is cleared: they are neither counted nor profiled.
  if (!t_state.holds_lock || domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  // The replay's recorded relaunch: its record is the one to read.
  if (executed_.recording()) executed_.expect(data->correlationId);
  LaunchParams nested;
  if (decode_launch(domain, cbid, data->functionParams, &nested) &&
      current_.facts.params.function == nullptr) {
    current_.facts.params.function = nested.function;
  }
  if (current_.replay_pending && can_relaunch(cbid)) {
    replay_current(DriverLaunch{cbid, data->functionParams});
  }
}

void KernelProfiler::replay_current(const DriverLaunch& launch) {
  current_.replay_pending = false;
  current_.replay = replay_flushed(driver_, *current_.session, *current_.flush, current_.context,
                                   current_.cu_device, launch, executed_, current_.values);
  if (!current_.replay.fall_back) {
    current_.replayed = true;
    if (debug()) {
      log_line(
          "kernels: strata's replay: %d passes, caches flushed before each (instruction sweep: "
          "%s; %zu MB L2 sweep; discard: %s; pages of %zu allocations touched; set up in %.0f "
          "ms; recorded relaunch: %s): %s; checkpoint save %.1f ms, restores %.1f ms, passes "
          "%.1f ms, recorded relaunch %.1f ms",
          current_.replay.passes, current_.flush->sweeps_instructions() ? "yes" : "no",
          current_.flush->buffer_bytes() >> 20, current_.flush->discards() ? "yes" : "no",
          current_.replay.touched_ranges, current_.flush->set_up_ms(),
          current_.replay.recorded ? "yes" : "no", cupti_result_name(current_.replay.status),
          current_.replay.save_ms, current_.replay.restore_ms, current_.replay.passes_ms,
          current_.replay.recorded_ms);
    }
    return;
  }
  if (!fell_back_) {
    fell_back_ = true;
    log_line(
        "--cache-control all: %s failed; profiling with CUPTI's kernel replay instead, "
        "caches not flushed between passes",
        current_.replay.failed_call);
  }
  CUptiResult status = current_.session->begin(RangeSession::Replay::kCupti);
  current_.started = status == CUPTI_SUCCESS;
  current_.header.status = static_cast<uint32_t>(status);
}

void KernelProfiler::on_launch_enter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                     const CUpti_CallbackData* data) {
  LaunchParams params;
  if (!decode_launch(domain, cbid, data->functionParams, &params)) return;
  if (!lock()) return;
  if (!driver_loaded_) driver_loaded_ = driver_.load();
  // A launch into a stream capture only records a graph node: it runs later,
  // inside a graph launch, which kernel replay cannot profile (on_graph_launch).
  if (is_captured(driver_, params)) {
    ++captured_launches_;
    unlock();
    return;
  }
  const char* name = data->symbolName;
  if (name == nullptr || name[0] == '\0') name = function_name(driver_, params);
  if (name == nullptr) name = "";
  uint64_t ordinal = 0;
  KernelTable::Entry* entry = table_.count_launch(name, &ordinal);
  bool matched;
  if (entry != nullptr) {
    if (entry->match == KernelTable::Match::kUnknown) {
      entry->match = filter_.matches(name) ? KernelTable::Match::kYes : KernelTable::Match::kNo;
    }
    matched = entry->match == KernelTable::Match::kYes;
  } else {
    matched = filter_.matches(name);
  }
  if (!matched || failed_ || done_ || !window_.take()) {
    unlock();
    return;
  }
  // Profiled: the lock stays held until this launch's exit callback.
  t_state.holds_lock = true;
  current_ = Current{};
  current_.name_length = std::strlen(name);
  if (current_.name_length > KernelTable::kMaxStoredName) {
    current_.name_length = KernelTable::kMaxStoredName;
  }
  std::memcpy(current_name_, name, current_.name_length);
  current_name_[current_.name_length] = '\0';
  current_.header.invocation = ordinal;
  current_.header.correlation_id = data->correlationId;
  current_.context = data->context;
  current_.facts.params = params;
  current_.facts.context_id = data->contextUid;
  uint32_t device = 0;
  if (data->context != nullptr && cuptiGetDeviceId(data->context, &device) == CUPTI_SUCCESS) {
    current_.header.device = device;
  }
  if (driver_.cuDeviceGet != nullptr) {
    driver_.cuDeviceGet(&current_.cu_device, static_cast<int>(device));
  }
  uint32_t stream_id = 0;
  if (data->context != nullptr &&
      cuptiGetStreamIdEx(data->context, params.stream, params.per_thread_stream ? 1 : 0,
                         &stream_id) == CUPTI_SUCCESS) {
    current_.facts.stream_known = true;
    current_.facts.stream_id = stream_id;
  }
  if (debug()) {
    log_line("kernels: profiling %s invocation %llu on device %u", current_name_,
             static_cast<unsigned long long>(ordinal), device);
  }
  CUptiResult status = CUPTI_SUCCESS;
  const bool first = first_profiled_;
  first_profiled_ = false;
  current_.header.start_ns = monotonic_ns();
  if (config_.simulated_failure == SimulatedFailure::kPrivileges && first) {
    // STRATA_AGENT_KERNELS_FAIL=privileges: what a non-admin user gets where
    // the driver restricts counters, without calling CUPTI.
    status = CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  } else if (data->context == nullptr) {
    status = CUPTI_ERROR_INVALID_CONTEXT;
  } else {
    current_.session = session_for(data->context, device, &status);
    if (status == CUPTI_SUCCESS) {
      current_.flush = &flushes_[current_.session - sessions_];
      executed_.expect(data->correlationId);
      if (!config_.kernel_cache_flush) {
        status = current_.session->begin(RangeSession::Replay::kCupti);
        current_.started = status == CUPTI_SUCCESS;
      } else {
        // A runtime launch is replayed at its driver call (on_nested_launch).
        current_.replay_pending = true;
      }
    }
  }
  current_.header.status = static_cast<uint32_t>(status);
  if (current_.replay_pending && domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    replay_current(DriverLaunch{cbid, data->functionParams});
  }
}

void KernelProfiler::on_launch_exit(const CUpti_CallbackData* data) {
  const double* values = current_.values;
  CUptiResult status = static_cast<CUptiResult>(current_.header.status);
  if (current_.started) {
    status = current_.session->end(current_.values);
  } else if (current_.replayed) {
    status = current_.replay.status;
  } else if (current_.replay_pending) {
    // A runtime launch whose driver call never came through a callback.
    status = CUPTI_ERROR_NOT_SUPPORTED;
    log_line("kernels: %s: no driver launch under the runtime's to replay", current_name_);
  }
  const ExecutedLaunch executed = executed_.collect(debug());
  current_.header.end_ns = monotonic_ns();
  // A launch the API refused (bad configuration): no counters, and the
  // status names the CUDA error (CUresult + 1'000'000 as the interface
  // defines; a runtime launch's cudaError_t is passed the same way). Such a
  // launch never reached the GPU, so end() finds no range and fails too:
  // the API's error is the one to record, and it ends nothing (docs/agent.md,
  // "Faults"). A CUPTI failure before the launch (header.status already set
  // by begin) is kept: profiling did not start.
  const int returned = data->functionReturnValue != nullptr
                           ? *static_cast<const int*>(data->functionReturnValue)
                           : 0;
  if (current_.header.status == 0 && returned != 0) {
    current_.header.status = 1'000'000u + static_cast<uint32_t>(returned);
    status = CUPTI_ERROR_UNKNOWN;
  } else if (current_.replayed && status != CUPTI_SUCCESS) {
    // Not for a launch the API refused: the replay's relaunch was refused
    // the same way, and the CUDA error above says all there is.
    log_line("kernels: strata's replay of %s failed at %s (%s, CUDA error %d)", current_name_,
             current_.replay.failed_call, cupti_result_name(status),
             static_cast<int>(current_.replay.launch_error));
  }
  if (current_.header.status == 0) current_.header.status = static_cast<uint32_t>(status);
  const uint32_t device = current_.header.device;
  // Read even when the kernel record came, so that the debug line shows
  // both sources (on the H200 they differ as docs/kernels.md says: 8
  // compiled registers against the record's 16); once per profiled launch,
  // beside its replay passes.
  current_.facts.function = function_attributes(driver_, current_.facts.params, current_.cu_device);
  if (debug()) {
    const LaunchParams& p = current_.facts.params;
    log_line(
        "kernels: handles function %d kernel %d host stub %d; function attributes %s "
        "(registers %d, static shared %d); kernel record %s "
        "(registers %u, static shared %u, configuration %u)",
        p.function != nullptr, p.kernel != nullptr, p.host_function != nullptr,
        current_.facts.function.known ? "read" : "unknown",
        current_.facts.function.registers_per_thread, current_.facts.function.static_shared,
        executed.found ? "read" : "missing", executed.registers_per_thread,
        executed.static_shared_bytes, executed.smem_config_bytes);
  }
  if (executed.found) {
    // The driver's own account of the launch, which nsys and ncu print:
    // preferred over the function's attributes.
    current_.facts.function.known = true;
    current_.facts.function.registers_per_thread = static_cast<int>(executed.registers_per_thread);
    current_.facts.function.static_shared = static_cast<int>(executed.static_shared_bytes);
    current_.facts.smem_config_bytes = executed.smem_config_bytes;
  }
  format::MetricValue metrics[kMaxChunkMetrics];
  size_t count =
      build_launch_metrics(metrics_, status == CUPTI_SUCCESS ? values : nullptr, current_.facts,
                           device_attributes_of(device), metrics, kMaxChunkMetrics);
  if (!spool_.append_kernel_metrics(current_.header,
                                    std::string_view(current_name_, current_.name_length),
                                    std::span<const format::MetricValue>(metrics, count))) {
    log_line("could not write the metrics of %s to the spool", current_name_);
  }
  write_seen();
  if (current_.header.status != 0 && current_.header.status < 1'000'000u) {
    report_failure(static_cast<CUptiResult>(current_.header.status), device, current_.session);
  } else if (window_.exhausted()) {
    // The last launch to profile: later launches run with no profiler state.
    done_ = true;
    tear_down_sessions();
  }
  t_state.holds_lock = false;
  unlock();
}

RangeSession* KernelProfiler::session_for(CUcontext context, uint32_t device, CUptiResult* status) {
  for (size_t i = 0; i < session_count_; ++i) {
    if (sessions_[i].context() == context) {
      *status = sessions_[i].ready() ? CUPTI_SUCCESS : CUPTI_ERROR_NOT_INITIALIZED;
      return &sessions_[i];
    }
  }
  if (session_count_ == kMaxContexts) {
    *status = CUPTI_ERROR_MAX_LIMIT_REACHED;
    return nullptr;
  }
  RangeSession* session = &sessions_[session_count_++];
  if (config_.simulated_failure == SimulatedFailure::kUnsupportedDevice) {
    session->simulate_unsupported_device();
  }
  *status = session->set_up(context, device, &metrics_,
                            config_.kernel_cache_flush ? kReplayRangesPerPass : 1, debug());
  return session;
}

const DeviceAttributes& KernelProfiler::device_attributes_of(uint32_t device) {
  static const DeviceAttributes kNone;
  if (device >= static_cast<uint32_t>(kMaxDevices)) return kNone;
  if (!device_cached_[device] && driver_.cuDeviceGet != nullptr) {
    CUdevice cu_device = 0;
    if (driver_.cuDeviceGet(&cu_device, static_cast<int>(device)) == CUDA_SUCCESS) {
      device_cache_[device] = device_attributes(driver_, cu_device);
      device_cached_[device] = true;
    }
  }
  return device_cache_[device];
}

void KernelProfiler::report_failure(CUptiResult status, uint32_t device,
                                    const RangeSession* session) {
  failed_ = true;
  const char* chip = session != nullptr && session->chip_name()[0] ? session->chip_name() : "?";
  if (is_privilege_error(status)) {
    log_line(
        "no permission to read GPU performance counters (%s): run as root, or load the nvidia "
        "module with NVreg_RestrictProfilingToAdminUsers=0 "
        "(https://developer.nvidia.com/ERR_NVGPUCTRPERM); kernels not profiled",
        cupti_result_name(status));
  } else if (is_unsupported_device(status)) {
    const char* reason = session != nullptr ? session->unsupported_reason() : nullptr;
    log_line(
        "device %u (%s) cannot be profiled by CUPTI's range profiler (%s%s%s); "
        "kernels not profiled",
        device, chip, cupti_result_name(status), reason ? ": " : "", reason ? reason : "");
  } else {
    log_line("CUPTI's range profiler failed on device %u (%s): %s; no more kernels are profiled",
             device, chip, cupti_result_name(status));
  }
  tear_down_sessions();
}

void KernelProfiler::tear_down_sessions() {
  executed_.stop();
  for (size_t i = 0; i < session_count_; ++i) sessions_[i].tear_down();
}

void KernelProfiler::write_seen() {
  // Cumulative counts of every name so far; a reader keeps, per name, the
  // latest count. Batched so that the crash path needs little stack.
  constexpr size_t kBatch = 64;
  format::KernelSeen batch[kBatch];
  size_t n = 0;
  bool wrote = false;
  table_.for_each([&](const KernelTable::Entry& entry) {
    batch[n++] =
        format::KernelSeen{entry.launches, std::string_view(entry.text, entry.stored_length)};
    if (n == kBatch) {
      spool_.append_kernels_seen(std::span<const format::KernelSeen>(batch, n));
      n = 0;
      wrote = true;
    }
  });
  if (n > 0 || !wrote) spool_.append_kernels_seen(std::span<const format::KernelSeen>(batch, n));
}

void KernelProfiler::stop_at_exit() {
  if (in_child_.load(std::memory_order_relaxed) || !active_.load(std::memory_order_acquire)) return;
  // A launch being profiled on another thread (the program exits while it
  // runs) holds the lock: wait briefly, then write what is known without it.
  bool locked = lock_within(kExitWaitSeconds);
  if (!locked) {
    log_line(
        "exit: a kernel launch was still being profiled on another thread after %d s; its "
        "metrics are missing",
        kExitWaitSeconds);
  }
  active_.store(false, std::memory_order_release);
  if (!closed_.exchange(true)) {
    write_seen();
    if (locked) tear_down_sessions();
    if (debug()) {
      log_line(
          "kernels: %llu matching launches, %llu profiled, %zu kernel names, %llu graph "
          "launches, %llu launches into stream captures",
          static_cast<unsigned long long>(window_.matched()),
          static_cast<unsigned long long>(window_.profiled()), table_.size(),
          static_cast<unsigned long long>(graph_launches_.load()),
          static_cast<unsigned long long>(captured_launches_));
    }
    if (table_.overflow_launches() > 0) {
      log_line("%llu launches of kernels beyond the %zu-name table were not counted by name",
               static_cast<unsigned long long>(table_.overflow_launches()), table_.size());
    }
    spool_.close(0);
  }
  if (locked) unlock();
}

void KernelProfiler::on_fork_child() {
  // As the tracer: the child runs unprofiled and never touches CUPTI; the
  // inherited spool fd is closed without an end marker (not the opener).
  in_child_.store(true, std::memory_order_relaxed);
  active_.store(false, std::memory_order_release);
  spool_.close();
}

void KernelProfiler::on_signal(int sig, bool terminating) {
  if (!terminating || in_child_.load(std::memory_order_relaxed) ||
      !active_.load(std::memory_order_acquire)) {
    return;
  }
  if (closed_.exchange(true)) return;
  // Async-signal-safe: SpoolWriter appends with writev on the stack; the
  // table is read as it stands (an entry's text is published last).
  write_seen();
  spool_.close(static_cast<uint32_t>(sig));
}

}  // namespace strata::agent::kernels
