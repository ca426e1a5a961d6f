#include "agent/cuda/tracer.h"

#include <cupti.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <new>

#include "agent/cuda/noisy_apis.h"
#include "agent/log.h"
#include "agent/signal_chain.h"
#include "common/clock.h"
#include "format/cupti_record_sizes.h"
#include "format/own_process.h"

namespace strata::agent {

namespace {

// Each kind with its record group (STRATA_AGENT_RECORD chooses groups).
struct KindInGroup {
  CUpti_ActivityKind kind;
  uint32_t group;
};
// Kinds the trace needs; a failure to enable one of these means no trace.
// CONCURRENT_KERNEL, never KERNEL (KIND_KERNEL serializes every kernel), and
// no GRAPH_TRACE (with it graph kernels never reach the kernel records).
constexpr KindInGroup kRequiredKinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, kRecordKernel},
    {CUPTI_ACTIVITY_KIND_RUNTIME, kRecordRuntime},
    {CUPTI_ACTIVITY_KIND_DRIVER, kRecordDriver},
    {CUPTI_ACTIVITY_KIND_MEMCPY, kRecordMemory},
    {CUPTI_ACTIVITY_KIND_MEMSET, kRecordMemory},
};
// Kinds the trace is better with; a failure is reported and tracing goes on.
constexpr KindInGroup kOptionalKinds[] = {
    {CUPTI_ACTIVITY_KIND_MEMCPY2, kRecordMemory},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, kRecordSync},
    {CUPTI_ACTIVITY_KIND_MARKER, kRecordNvtx},
    {CUPTI_ACTIVITY_KIND_MARKER_DATA, kRecordNvtx},
    {CUPTI_ACTIVITY_KIND_DEVICE, kRecordMeta},
    {CUPTI_ACTIVITY_KIND_CONTEXT, kRecordMeta},
    {CUPTI_ACTIVITY_KIND_NAME, kRecordMeta},
};
// How often the drain thread looks at the completed queue between flushes:
// a full buffer waits at most this long for the disk.
constexpr int kPollMs = 50;
// How long a terminating SIGTERM/SIGINT handler waits for the drain
// thread's forced flush, and a crash handler for an append in progress.
constexpr int64_t kSignalFlushWaitNs = 2'000'000'000;
constexpr int64_t kHaltWaitNs = 200'000'000;
// How long exit waits for the drain thread to stop.
constexpr int kJoinWaitSeconds = 2;

const char* result_string(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) return "unknown";
  return text;
}

// CUPTI's default timestamps are CLOCK_REALTIME on Linux; the spool's clock
// (and the CPU sampler's) is CLOCK_MONOTONIC. Registered before any kind is
// enabled (CUDA 13.0 docs: changing it mid-session mixes clocks).
uint64_t CUPTIAPI monotonic_timestamp() {
  return static_cast<uint64_t>(monotonic_ns());
}

void sleep_ns(int64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Held so that the subscriber slot is ours (CUPTI up to 13.2 allows one):
// a conflict shows up here, at start, with a clear message, and the
// callback layers (kernel replay, launch attribution) have their handle. No
// callback domain is enabled, so it costs nothing per call.
void CUPTIAPI on_cupti_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

struct alignas(Tracer) TracerStorageBytes {
  unsigned char bytes[sizeof(Tracer)];
};
TracerStorageBytes g_storage;
std::atomic<Tracer*> g_tracer{nullptr};
pthread_once_t g_construct_once = PTHREAD_ONCE_INIT;

}  // namespace

struct TracerStorage {
  static void construct() {
    g_tracer.store(new (g_storage.bytes) Tracer(), std::memory_order_release);
  }
};

Tracer& Tracer::instance() {
  pthread_once(&g_construct_once, TracerStorage::construct);
  return *g_tracer.load(std::memory_order_acquire);
}

bool Tracer::start(const Config& config) {
  config_ = config;
  owner_pid_ = getpid();

  if (CUptiResult rc = cuptiGetVersion(&cupti_version_); rc != CUPTI_SUCCESS) {
    log_line("cannot query the CUPTI version (%s); not tracing", result_string(rc));
    return false;
  }
  // Record layouts (record_walk.cc) are those of CUPTI 13.x: an older CUPTI
  // (another copy loaded first, say) would be misread.
  if (cupti_version_ < 130000) {
    log_line(
        "CUPTI API version %u is older than 13.0, which this agent was built for; "
        "not tracing",
        cupti_version_);
    return false;
  }

  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult rc = cuptiSubscribe(&subscriber, on_cupti_callback, nullptr);
  if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    log_line(
        "another CUDA profiler (CUPTI subscriber: nsys, ncu, compute-sanitizer or Kineto) is "
        "active in this process; running untraced: remove the other profiler from the command "
        "(or turn torch.profiler off) and run it again");
    return false;
  }
  if (rc != CUPTI_SUCCESS) {
    log_line("cannot attach to CUPTI (cuptiSubscribe: %s); not tracing", result_string(rc));
    return false;
  }
  subscriber_ = subscriber;

  auto fail = [&](const char* what) {
    log_line("%s; not tracing", what);
    cuptiUnsubscribe(static_cast<CUpti_SubscriberHandle>(subscriber_));
    subscriber_ = nullptr;
    spool_.close();
    return false;
  };

  if (!pool_.init(size_t{config.buffer_mb} << 20, config.buffer_count) ||
      !completed_.init(config.buffer_count) || !strings_.init()) {
    return fail("cannot allocate the activity buffer pool");
  }
  char path[Config::kMaxPath + 32];
  if (!spool_path(config, static_cast<int>(owner_pid_), path, sizeof(path))) {
    return fail("STRATA_RUN_DIR is too long");
  }
  {
    auto opened = format::SpoolWriter::open(path);
    if (!opened) {
      log_line("cannot open the spool: %s; not tracing", opened.error().message.c_str());
      cuptiUnsubscribe(static_cast<CUpti_SubscriberHandle>(subscriber_));
      subscriber_ = nullptr;
      return false;
    }
    spool_ = std::move(*opened);
  }
  format::append_own_process_info(spool_, kMaxCmdline);

  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return fail("cannot create the drain thread's eventfd");

  // System thread ids (gettid), the ids perf samples and /proc/self/task use.
  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  if (config.cupti_clock) {
    log_line(
        "STRATA_AGENT_CLOCK=cupti: timestamps stay on CUPTI's clock (overhead diagnosis only)");
  } else if (CUptiResult ts = cuptiActivityRegisterTimestampCallback(monotonic_timestamp);
             ts != CUPTI_SUCCESS) {
    // Timestamps on another clock cannot be lined up with anything else.
    return fail("cannot put CUPTI timestamps on CLOCK_MONOTONIC");
  }
  if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
    return fail("cannot register CUPTI activity buffer callbacks");
  }
  state_.store(kTracing, std::memory_order_release);
  if (!enable_activities()) {
    state_.store(kStopped, std::memory_order_release);
    disable_activities();
    return fail("cannot enable CUPTI activity tracing");
  }

  // The drain thread takes no signals: they go to the program's threads,
  // where its own handlers expect them.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  int created = pthread_create(&drain_thread_, nullptr, drain_main, this);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (created != 0) {
    state_.store(kStopped, std::memory_order_release);
    disable_activities();
    return fail("cannot start the drain thread");
  }
  drain_started_ = true;
  return true;
}

bool Tracer::enable_activities() {
  const uint32_t groups = config_.record_groups;
  for (const KindInGroup& k : kRequiredKinds) {
    if ((k.group & groups) == 0) continue;
    if (CUptiResult rc = cuptiActivityEnable(k.kind); rc != CUPTI_SUCCESS) {
      log_line("cuptiActivityEnable(kind %d) failed: %s", static_cast<int>(k.kind),
               result_string(rc));
      return false;
    }
  }
  for (const KindInGroup& k : kOptionalKinds) {
    if ((k.group & groups) == 0) continue;
    if (CUptiResult rc = cuptiActivityEnable(k.kind); rc != CUPTI_SUCCESS) {
      log_line("cuptiActivityEnable(kind %d) failed: %s; those records are missing",
               static_cast<int>(k.kind), result_string(rc));
    }
  }
  // External correlation (PyTorch ops): only where timestamps stay on
  // CUPTI's clock (STRATA_AGENT_CLOCK=cupti). Otherwise an API call's start
  // and the ops' stamps are read from CLOCK_MONOTONIC on the same thread, and
  // the import links each call to the op open around it without an id
  // pushed per op (import/torch_op_links.h). Only when the record walk can
  // step over its records; an unknown kind would end the walk of every buffer.
  if (config_.cupti_clock && (groups & kRecordKernel) != 0 &&
      format::cupti_record_size(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) != 0) {
    CUptiResult rc = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    if (rc != CUPTI_SUCCESS) {
      log_line("cuptiActivityEnable(external correlation) failed: %s; PyTorch ops are not linked "
               "to their kernels", result_string(rc));
    }
    external_correlation_.store(rc == CUPTI_SUCCESS, std::memory_order_release);
  }
  if (!config_.all_apis) {
    for (CUpti_CallbackId cbid : kNoisyRuntimeApis) cuptiActivityEnableRuntimeApi(cbid, 0);
    for (CUpti_CallbackId cbid : kNoisyDriverApis) cuptiActivityEnableDriverApi(cbid, 0);
  }
  return true;
}

void Tracer::disable_activities() {
  for (const KindInGroup& k : kRequiredKinds) cuptiActivityDisable(k.kind);
  for (const KindInGroup& k : kOptionalKinds) cuptiActivityDisable(k.kind);
  if (external_correlation_.exchange(false)) cuptiActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
}

void Tracer::set_recording(bool on) {
  if (!tracing()) return;
  if (on) {
    enable_activities();
  } else {
    disable_activities();
  }
}

int Tracer::push_external_id(uint64_t id) {
  Tracer* self = g_tracer.load(std::memory_order_acquire);
  if (self == nullptr || !self->tracing() || !self->external_correlation()) return 1;
  return cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id) == CUPTI_SUCCESS
             ? 0
             : 1;
}

int Tracer::pop_external_id() {
  Tracer* self = g_tracer.load(std::memory_order_acquire);
  if (self == nullptr || !self->tracing() || !self->external_correlation()) return 1;
  uint64_t last = 0;
  return cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last) == CUPTI_SUCCESS
             ? 0
             : 1;
}

void Tracer::buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  Tracer& self = *g_tracer.load(std::memory_order_acquire);
  *max_records = 0;
  // Declining is documented for CUDA 13.0 ("CUPTI may drop activity
  // records"; the drops show in cuptiActivityGetNumDroppedRecords). Before
  // CUPTI API v27 (CUDA 12.9) a NULL buffer crashed CUPTI; start() refuses
  // anything older than 13.0.
  uint8_t* given = nullptr;
  if (self.state_.load(std::memory_order_acquire) == kTracing &&
      !self.in_child_.load(std::memory_order_relaxed)) {
    given = self.pool_.acquire();
  }
  *buffer = given;
  *size = given == nullptr ? 0 : self.pool_.buffer_size();
}

void Tracer::buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  Tracer& self = *g_tracer.load(std::memory_order_acquire);
  if (buffer == nullptr || !self.pool_.owns(buffer)) return;
  if (valid == 0 || self.in_child_.load(std::memory_order_relaxed)) {
    self.pool_.release(buffer);
    return;
  }
  // Never full (a cell for every buffer of the pool); push_retry only waits
  // out a drain-thread pop vacating the cell.
  if (!self.completed_.push_retry(Completed{buffer, valid})) {
    self.lost_buffers_.fetch_add(1, std::memory_order_relaxed);
    self.pool_.release(buffer);
  }
}

void* Tracer::drain_main(void* arg) {
  auto* self = static_cast<Tracer*>(arg);
  pthread_setname_np(pthread_self(), "strata-drain");
  self->drain_tid_.store(static_cast<int>(syscall(SYS_gettid)), std::memory_order_release);
  self->drain_loop();
  return nullptr;
}

bool Tracer::enter_append() {
  appending_.store(1, std::memory_order_seq_cst);
  if (halt_.load(std::memory_order_seq_cst) != 0) {
    appending_.store(0, std::memory_order_seq_cst);
    return false;
  }
  return true;
}

void Tracer::drain_loop() {
  int64_t next_flush = monotonic_ns() + int64_t{config_.flush_ms} * 1'000'000;
  namer_.scan(spool_);
  while (!stop_.load(std::memory_order_acquire) && halt_.load(std::memory_order_acquire) == 0) {
    int64_t now = monotonic_ns();
    int64_t wait_ms = (next_flush - now) / 1'000'000;
    if (wait_ms > kPollMs) wait_ms = kPollMs;
    if (wait_ms < 0) wait_ms = 0;
    pollfd fd{wake_fd_, POLLIN, 0};
    if (poll(&fd, 1, static_cast<int>(wait_ms)) > 0) {
      uint64_t ignored = 0;
      ssize_t n = read(wake_fd_, &ignored, sizeof(ignored));
      (void)n;
    }
    if (stop_.load(std::memory_order_acquire)) break;
    uint32_t requested = flush_requested_.load(std::memory_order_acquire);
    bool forced = requested != flush_done_.load(std::memory_order_acquire);
    if (forced || monotonic_ns() >= next_flush) {
      // Flag 0 returns every buffer whose records are complete, full or not
      // (CUDA 13.0 docs); it is meant to be called periodically from a thread
      // like this one. Never from a CUPTI callback.
      cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
      drain_completed(false);
      read_cupti_drops();
      if (enter_append()) {
        write_counters();
        namer_.scan(spool_);
        leave_append();
      }
      next_flush = monotonic_ns() + int64_t{config_.flush_ms} * 1'000'000;
      if (forced) flush_done_.store(requested, std::memory_order_release);
    } else {
      drain_completed(false);
    }
  }
}

void Tracer::drain_completed(bool from_signal) {
  Completed completed;
  while (completed_.pop(&completed)) {
    if (!from_signal && !enter_append()) {
      // A signal handler owns the spool now; let it write this one too.
      completed_.push_retry(completed);
      return;
    }
    write_buffer(completed, from_signal);
    // A dying process needs no buffers back (and release may wait on the
    // very thread the signal interrupted).
    if (from_signal) continue;
    leave_append();
    pool_.release(completed.buffer);
  }
}

void Tracer::write_buffer(const Completed& completed, bool from_signal) {
  StringBatch batch(spool_);
  WalkResult walk =
      walk_and_rewrite(completed.buffer, completed.valid, strings_, batch, from_signal);
  if (!walk.complete) unparsed_buffers_.fetch_add(1, std::memory_order_relaxed);
  batch.flush();
  spool_.append_cupti_buffer(cupti_version_, completed.buffer, completed.valid);
}

void Tracer::read_cupti_drops() {
  // Not under any lock of ours: Kineto saw an ABBA deadlock between this
  // call and bufferCompleted when it held its own mutex around it.
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    cupti_dropped_.fetch_add(dropped, std::memory_order_relaxed);
  }
}

void Tracer::write_counters() {
  uint64_t totals[3] = {
      cupti_dropped_.load(std::memory_order_relaxed),
      pool_.unavailable() + lost_buffers_.load(std::memory_order_relaxed),
      spool_.stats().write_errors,
  };
  if (std::memcmp(totals, written_counters_, sizeof(totals)) == 0) return;
  format::DropCounter counters[3] = {
      {static_cast<uint32_t>(format::DropCounterKind::kCuptiRecords), totals[0]},
      {static_cast<uint32_t>(format::DropCounterKind::kBuffersUnavailable), totals[1]},
      {static_cast<uint32_t>(format::DropCounterKind::kSpoolWriteErrors), totals[2]},
  };
  if (spool_.append_drop_counters(counters)) std::memcpy(written_counters_, totals, sizeof(totals));
}

void Tracer::wake_drain() {
  uint64_t one = 1;
  ssize_t n = write(wake_fd_, &one, sizeof(one));
  (void)n;
}

void Tracer::stop_at_exit() {
  if (in_child_.load(std::memory_order_relaxed)) return;
  int expected = kTracing;
  if (!state_.compare_exchange_strong(expected, kStopped, std::memory_order_acq_rel)) return;
  if (drain_started_) {
    stop_.store(true, std::memory_order_release);
    wake_drain();
    timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += kJoinWaitSeconds;
    if (pthread_timedjoin_np(drain_thread_, nullptr, &deadline) != 0) {
      // Stuck inside CUPTI (a flush waiting on a lock a dying thread holds).
      // Appending now would race with it, so the spool stays as the last
      // periodic flush left it, without an end marker.
      log_line("the drain thread did not stop within %d s; the trace ends at its last flush",
               kJoinWaitSeconds);
      return;
    }
    drain_started_ = false;
  }
  if (signal_closed_.load(std::memory_order_acquire)) return;
  // Flushed on the exiting thread while CUDA is still up: this atexit
  // handler was registered at cuInit, after the CUDA runtime's own.
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  drain_completed(false);
  read_cupti_drops();
  if (!enter_append()) return;
  write_counters();
  namer_.scan(spool_);
  disable_activities();
  if (unparsed_buffers_.load() > 0) {
    log_line("%llu activity buffers held records of unexpected kinds; their names may be missing",
             static_cast<unsigned long long>(unparsed_buffers_.load()));
  }
  if (uint64_t dropped = cupti_dropped_.load() + pool_.unavailable(); dropped > 0) {
    log_line(
        "%llu CUPTI records dropped, %llu buffer requests refused (pool of %u x %u MiB: "
        "raise STRATA_AGENT_BUFFER_COUNT)",
        static_cast<unsigned long long>(cupti_dropped_.load()),
        static_cast<unsigned long long>(pool_.unavailable()), config_.buffer_count,
        config_.buffer_mb);
  }
  spool_.close(0);
  leave_append();
}

void Tracer::on_fork_child() {
  // The child has only the forking thread: no drain thread to stop, and a
  // CUPTI flush here hangs (HPCToolkit#195). The spool is the parent's:
  // SpoolWriter::close in another process closes the fd without the end
  // marker. An exec'd child loads the agent again and opens its own spool.
  in_child_.store(true, std::memory_order_relaxed);
  state_.store(kStopped, std::memory_order_release);
  drain_started_ = false;
  spool_.close();
  if (wake_fd_ >= 0) {
    close(wake_fd_);
    wake_fd_ = -1;
  }
}

void Tracer::on_signal(int sig, bool terminating) {
  if (in_child_.load(std::memory_order_relaxed) ||
      state_.load(std::memory_order_acquire) != kTracing) {
    return;
  }
  int self_tid = static_cast<int>(syscall(SYS_gettid));
  bool on_drain_thread = self_tid == drain_tid_.load(std::memory_order_acquire);
  if (!SignalChain::is_crash_signal(sig) && !on_drain_thread) {
    // SIGTERM/SIGINT: the drain thread can still run CUPTI's forced flush;
    // wake it and, when the process is going down, wait for it (bounded:
    // the interrupted thread may hold a CUPTI lock the flush needs).
    uint32_t ticket = flush_requested_.fetch_add(1, std::memory_order_acq_rel) + 1;
    wake_drain();
    if (!terminating) return;
    int64_t waited = 0;
    while (static_cast<int32_t>(flush_done_.load(std::memory_order_acquire) - ticket) < 0 &&
           waited < kSignalFlushWaitNs) {
      sleep_ns(5'000'000);
      waited += 5'000'000;
    }
  }
  if (!terminating) return;
  // Take the spool over: the drain thread stops appending at its next
  // check; wait for an append in progress (not if this is that thread).
  if (halt_.exchange(1, std::memory_order_seq_cst) != 0) return;  // another handler has it
  int64_t waited = 0;
  while (!on_drain_thread && appending_.load(std::memory_order_seq_cst) != 0 &&
         waited < kHaltWaitNs) {
    sleep_ns(1'000'000);
    waited += 1'000'000;
  }
  // Only what CUPTI already completed: flushing CUPTI from a crash handler
  // is not async-signal-safe. Anything older than the last periodic flush
  // (flush_ms, at most 500 ms) is in these buffers or already on disk.
  drain_completed(true);
  write_counters();
  signal_closed_.store(true, std::memory_order_release);
  spool_.close(static_cast<uint32_t>(sig));
}

}  // namespace strata::agent
