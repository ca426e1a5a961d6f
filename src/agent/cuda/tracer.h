// Tracer: the agent's CUPTI activity session, one per process.
//
// Data path: CUPTI asks for buffers (buffer_requested: taken from the fixed
// BufferPool, declined when it is empty), fills them on the threads that make
// CUDA calls, and hands them back (buffer_completed: pushed on a lock-free
// queue). The drain thread pops them, rewrites their string pointers into
// string ids (record_walk.h), appends them to the spool as cupti-buffer
// chunks and returns them to the pool. Every flush period it also calls
// cuptiActivityFlushAll(0), reads cuptiActivityGetNumDroppedRecords, writes
// drop counters and names new threads.
//
// Threading: start() runs once (pthread_once in the entry points). The CUPTI
// callbacks run on any thread and take no locks, allocate nothing and make
// no system calls. The drain thread is the only regular spool appender;
// stop_at_exit joins it before flushing on the exiting thread, and a
// terminating signal halts it (a seq_cst flag handshake) before the handler
// appends. In a fork()ed child the session is switched off and never
// flushed; the drain thread does not exist there.
// Allocation: start() allocates the pool, the queue, the string table and
// the spool; nothing after it does except opendir in the thread scan on the
// drain thread.
// Lifetime: the object lives in static storage and is never destroyed, so
// that atexit handlers and late CUPTI callbacks never see a dead object.
#pragma once

#include <cuda.h>
#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/bounded_queue.h"
#include "agent/buffer_pool.h"
#include "agent/config.h"
#include "agent/cuda/record_walk.h"
#include "agent/proc_info.h"
#include "format/spool_writer.h"

namespace strata::agent {

class Tracer {
 public:
  static Tracer& instance();

  // Sets up CUPTI and the spool. Prints one "strata agent:" line and returns
  // false when the process runs untraced (no run dir, no device, another
  // CUPTI subscriber, ...).
  bool start(const Config& config);
  bool tracing() const { return state_.load(std::memory_order_acquire) == kTracing; }

  // atexit: forced CUPTI flush, drain, close the spool.
  void stop_at_exit();
  // pthread_atfork child: tracing off, spool fd closed without an end marker.
  void on_fork_child();
  // SignalChain hook (async-signal-safe).
  void on_signal(int sig, bool terminating);

  // PyTorch ops (libstrata_torch.so, docs/torch-ops.md) under
  // STRATA_AGENT_CLOCK=cupti: each op pushes its id as CUPTI's external
  // correlation id (CUSTOM0) while it runs, so the
  // CUpti_ActivityExternalCorrelation records in this process's buffers link
  // it to the API calls, and through them the kernels, it made. Not needed
  // (and off) on CLOCK_MONOTONIC, the default: the import links calls to ops
  // by the one clock. Enabled only where the record walk knows the record's size.
  bool external_correlation() const { return external_correlation_.load(std::memory_order_acquire); }
  // Benchmarks only (strata_agent_bench_record): activity records off or on
  // again while tracing; the spool, drain thread and subscription stay.
  void set_recording(bool on);
  // 0 when pushed/popped; the wrappers do nothing (non-zero) unless tracing.
  static int push_external_id(uint64_t id);
  static int pop_external_id();

 private:
  enum State : int { kIdle, kTracing, kStopped };
  struct Completed {
    uint8_t* buffer;
    size_t valid;
  };

  Tracer() = default;
  friend struct TracerStorage;

  static void buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t size,
                               size_t valid);
  static void* drain_main(void* self);

  bool enable_activities();
  void disable_activities();
  // Pops every completed buffer and writes it. `from_signal`: the crash
  // path (emit every string again; no halt checks).
  void drain_completed(bool from_signal);
  void write_buffer(const Completed& completed, bool from_signal);
  void read_cupti_drops();
  void write_counters();
  void drain_loop();
  void wake_drain();
  // Drain-thread side of the halt handshake: false once a signal handler
  // has taken over the spool.
  bool enter_append();
  void leave_append() { appending_.store(0, std::memory_order_seq_cst); }

  std::atomic<int> state_{kIdle};
  std::atomic<bool> in_child_{false};
  std::atomic<bool> external_correlation_{false};
  Config config_;
  pid_t owner_pid_ = 0;
  uint32_t cupti_version_ = 0;
  void* subscriber_ = nullptr;  // CUpti_SubscriberHandle

  BufferPool pool_;
  BoundedQueue<Completed> completed_;
  StringIds strings_;
  format::SpoolWriter spool_;
  ThreadNamer namer_;

  pthread_t drain_thread_{};
  bool drain_started_ = false;
  std::atomic<int> drain_tid_{0};
  int wake_fd_ = -1;
  std::atomic<bool> stop_{false};
  // A signal handler asks for a forced flush and waits for flush_done_ to move.
  std::atomic<uint32_t> flush_requested_{0};
  std::atomic<uint32_t> flush_done_{0};
  // Halt handshake with signal handlers (enter_append / on_signal).
  std::atomic<int> halt_{0};
  std::atomic<int> appending_{0};
  std::atomic<bool> signal_closed_{false};

  // Counters (cumulative).
  std::atomic<uint64_t> cupti_dropped_{0};
  std::atomic<uint64_t> unparsed_buffers_{0};
  std::atomic<uint64_t> lost_buffers_{0};
  uint64_t written_counters_[3] = {~0ull, ~0ull, ~0ull};
};

}  // namespace strata::agent
