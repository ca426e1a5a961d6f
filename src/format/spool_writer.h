// SpoolWriter: the agent's side of the spool (docs/spool-format.md). It frames
// payloads as CRC'd chunks and writes them to a per-process file.
//
// Allocation: open() may allocate (the path, its error message). Nothing
// after it does: append*, close and abandon use only the stack.
// Threading and signals: append*, close, abandon and stats take no locks and
// call only writev(2), close(2), getpid(2) and clock_gettime(2), so they may run on any thread
// and inside a signal handler (a crash handler's final flush). Each chunk goes
// out in one writev on an O_APPEND file, which lands whole, so concurrent
// appenders interleave whole chunks. Only a short write (disk full, signal
// mid-write) can leave a partial chunk; the reader resynchronizes past it.
// close() must not race with appends on other threads (the fd number could
// be reused): stop the drain thread first. open(), moves and destruction are
// init/teardown-time and not thread-safe.
// Errors: nothing throws or aborts. A failed write is counted in stats() (and
// in the end-of-stream chunk) and the append returns false; later appends
// still try, since disk-full can clear.
// Fork: a child inherits the object and the fd. Its appends land in the
// parent's spool as whole chunks; close() in any process but the one that
// opened the spool closes the fd without writing the end marker, so a child
// cannot mark its parent's spool as ended. A child that wants its own spool
// calls open() on a new path.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "format/payloads.h"
#include "format/spool_format.h"

namespace strata::format {

struct WriterStats {
  uint64_t chunks_written = 0;  // chunks fully written, the end marker included
  uint64_t bytes_written = 0;   // every byte write(2) accepted, the header included
  uint64_t write_errors = 0;    // appends that failed in write(2) (or close's end marker)
  uint64_t rejected = 0;        // appends refused before writing: closed, too large, too many parts
  int last_errno = 0;           // errno of the latest write error
};

class SpoolWriter {
 public:
  // Payload parts append_iov takes at once: bounds the stack it uses.
  static constexpr int kMaxParts = 16;
  // append_strings splits larger batches into chunks of this many entries.
  static constexpr size_t kMaxStringsPerChunk = 64;
  // append_drop_counters splits larger sets into chunks of this many entries.
  static constexpr size_t kMaxDropCountersPerChunk = 32;
  // append_kernel_metrics refuses more metrics than this per launch (CUPTI's
  // basic set plus the launch and device values is about 50); it bounds the
  // stack the encoder uses and keeps writev under IOV_MAX.
  static constexpr size_t kMaxKernelMetrics = 256;
  // append_kernels_seen splits larger lists into chunks of this many entries
  // (and sooner if the names would pass kMaxKernelChunkPayload).
  static constexpr size_t kMaxKernelsSeenPerChunk = 128;

  // A closed writer: every append is rejected.
  SpoolWriter() = default;
  ~SpoolWriter();
  SpoolWriter(SpoolWriter&& other) noexcept;
  SpoolWriter& operator=(SpoolWriter&& other) noexcept;
  SpoolWriter(const SpoolWriter&) = delete;
  SpoolWriter& operator=(const SpoolWriter&) = delete;

  // Creates `path` (O_EXCL: a spool is never appended to a stale file; mode
  // 0600: command lines can hold secrets) and writes the file header with
  // this process's pid and a CLOCK_MONOTONIC/CLOCK_REALTIME pair.
  static Result<SpoolWriter> open(const std::string& path);

  // One chunk of `kind` holding `size` bytes. Returns whether all of it was
  // written. EINTR is retried and short writes are continued.
  bool append(ChunkKind kind, const void* data, size_t size);
  // One chunk whose payload is the concatenation of `count` parts (at most
  // kMaxParts), written with the chunk header in one writev: no copy.
  bool append_iov(ChunkKind kind, const iovec* parts, int count);

  // Typed appenders for the kinds of spool_format.h, all copy-free.
  bool append_cupti_buffer(uint32_t cupti_version, const void* records, size_t size);
  bool append_strings(std::span<const StringEntry> entries);
  bool append_drop_counters(std::span<const DropCounter> counters);
  bool append_thread_name(uint32_t tid, std::string_view name);
  // `cmdline` is argv in /proc/PID/cmdline form: each argument followed by a NUL.
  bool append_process_info(uint32_t pid, uint32_t ppid, std::string_view exe,
                           std::string_view cmdline);
  // One kernel-metrics chunk (since 1.1). Refused (false, counted in
  // stats().rejected) with more than kMaxKernelMetrics metrics or a payload
  // over kMaxKernelChunkPayload. Names are written as given, no copy.
  bool append_kernel_metrics(const KernelMetricsHeader& header, std::string_view kernel_name,
                             std::span<const MetricValue> metrics);
  // kernels-seen chunks (since 1.1), split as needed. An entry whose name
  // alone cannot fit in a chunk is refused and counted; the others are written.
  bool append_kernels_seen(std::span<const KernelSeen> seen);

  // Writes the end-of-stream chunk (signal 0 for a normal close, the signal
  // number from a fatal-signal handler) and closes the fd. Returns whether
  // the end marker was written. Idempotent: later calls return false.
  bool close(uint32_t signal = 0);
  // Closes the fd without an end marker: the file then reads as a crash.
  void abandon();

  bool is_open() const { return fd_.load(std::memory_order_relaxed) >= 0; }
  // The spool's fd (-1 when closed), for fsync or fstat by the owner.
  int fd() const { return fd_.load(std::memory_order_relaxed); }
  WriterStats stats() const;

 private:
  SpoolWriter(int fd, pid_t owner) : fd_(fd), owner_pid_(owner) {}
  // Frames and writes one chunk. iov[0] and iov[count - 1] are free slots
  // for the chunk header and the padding; the payload parts lie between and
  // add up to payload_size.
  bool emit(ChunkKind kind, iovec* iov, int count, size_t payload_size);
  bool emit_to(int fd, ChunkKind kind, iovec* iov, int count, size_t payload_size);
  // Writes iov[0..count) fully, consuming iov. Records errors.
  bool write_all(int fd, iovec* iov, int count);
  void move_from(SpoolWriter& other);

  std::atomic<int> fd_{-1};
  pid_t owner_pid_ = 0;
  std::atomic<uint64_t> chunks_written_{0};
  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> write_errors_{0};
  std::atomic<uint64_t> rejected_{0};
  std::atomic<int> last_errno_{0};

  static_assert(std::atomic<uint64_t>::is_always_lock_free,
                "counters must be lock-free to be touched from signal handlers");
  static_assert(std::atomic<int>::is_always_lock_free);
};

}  // namespace strata::format
