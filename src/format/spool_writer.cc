// SpoolWriter. The async-signal-safe parts use only writev/close/getpid and
// lock-free atomics, and save and restore errno so that a signal handler
// calling them leaves the interrupted code's errno alone.
#include "format/spool_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "format/byte_order.h"
#include "format/crc32.h"

namespace strata::format {
namespace {

constexpr unsigned char kZeroPad[kChunkAlignment] = {};

// Restores errno on scope exit: a handler must not change what the code it
// interrupted sees.
class ErrnoGuard {
 public:
  ErrnoGuard() : saved_(errno) {}
  ~ErrnoGuard() { errno = saved_; }

 private:
  int saved_;
};

iovec part(const void* data, size_t size) {
  return {const_cast<void*>(data), size};
}

}  // namespace

SpoolWriter::~SpoolWriter() {
  close();
}

SpoolWriter::SpoolWriter(SpoolWriter&& other) noexcept {
  move_from(other);
}

SpoolWriter& SpoolWriter::operator=(SpoolWriter&& other) noexcept {
  if (this != &other) {
    close();
    move_from(other);
  }
  return *this;
}

void SpoolWriter::move_from(SpoolWriter& other) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  fd_.store(other.fd_.exchange(-1, kRelaxed), kRelaxed);
  owner_pid_ = other.owner_pid_;
  chunks_written_.store(other.chunks_written_.load(kRelaxed), kRelaxed);
  bytes_written_.store(other.bytes_written_.load(kRelaxed), kRelaxed);
  write_errors_.store(other.write_errors_.load(kRelaxed), kRelaxed);
  rejected_.store(other.rejected_.load(kRelaxed), kRelaxed);
  last_errno_.store(other.last_errno_.load(kRelaxed), kRelaxed);
}

Result<SpoolWriter> SpoolWriter::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return make_error(path + ": cannot create spool: " + std::strerror(errno));

  unsigned char header[kFileHeaderSize] = {};
  std::memcpy(header + header_offset::kMagic, kSpoolMagic, sizeof kSpoolMagic);
  store_le16(header + header_offset::kMajor, kFormatMajor);
  store_le16(header + header_offset::kMinor, kFormatMinor);
  store_le32(header + header_offset::kHeaderSize, kFileHeaderSize);
  pid_t pid = getpid();
  store_le32(header + header_offset::kPid, static_cast<uint32_t>(pid));
  store_le32(header + header_offset::kClockId, static_cast<uint32_t>(ClockId::kMonotonic));
  store_le64(header + header_offset::kStartClockNs, static_cast<uint64_t>(monotonic_ns()));
  store_le64(header + header_offset::kStartRealtimeNs, static_cast<uint64_t>(realtime_ns()));
  store_le32(header + header_offset::kFlags, 0);
  store_le32(header + kFileHeaderSize - 4, crc32(header, kFileHeaderSize - 4));

  SpoolWriter writer(fd, pid);
  iovec iov = part(header, sizeof header);
  if (!writer.write_all(fd, &iov, 1)) {
    std::string message = path + ": cannot write spool header: " +
                          std::strerror(writer.last_errno_.load(std::memory_order_relaxed));
    writer.abandon();
    ::unlink(path.c_str());
    return make_error(std::move(message));
  }
  return writer;
}

bool SpoolWriter::write_all(int fd, iovec* iov, int count) {
  while (count > 0) {
    ssize_t n = ::writev(fd, iov, count);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // writev never returns 0 for a non-empty regular-file write; treat it
      // as an error rather than spin.
      int err = n < 0 ? errno : EIO;
      write_errors_.fetch_add(1, std::memory_order_relaxed);
      last_errno_.store(err, std::memory_order_relaxed);
      return false;
    }
    bytes_written_.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    size_t done = static_cast<size_t>(n);
    while (count > 0 && done >= iov->iov_len) {
      done -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + done;
      iov->iov_len -= done;
    }
  }
  return true;
}

bool SpoolWriter::emit(ChunkKind kind, iovec* iov, int count, size_t payload_size) {
  return emit_to(fd_.load(std::memory_order_relaxed), kind, iov, count, payload_size);
}

bool SpoolWriter::emit_to(int fd, ChunkKind kind, iovec* iov, int count, size_t payload_size) {
  ErrnoGuard errno_guard;
  if (fd < 0 || payload_size > kMaxChunkPayload) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  unsigned char header[kChunkHeaderSize];
  store_le32(header + chunk_offset::kMarker, kChunkMarker);
  store_le32(header + chunk_offset::kKind, static_cast<uint32_t>(kind));
  store_le32(header + chunk_offset::kLength, static_cast<uint32_t>(payload_size));
  uint32_t crc = crc32_update(0, header + chunk_offset::kKind, 8);
  for (int i = 1; i < count - 1; ++i) crc = crc32_update(crc, iov[i].iov_base, iov[i].iov_len);
  store_le32(header + chunk_offset::kCrc, crc);

  iov[0] = part(header, sizeof header);
  iov[count - 1] = part(kZeroPad, align_chunk(payload_size) - payload_size);
  if (!write_all(fd, iov, count)) return false;
  chunks_written_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool SpoolWriter::append(ChunkKind kind, const void* data, size_t size) {
  iovec iov[3] = {{}, part(data, size), {}};
  return emit(kind, iov, 3, size);
}

bool SpoolWriter::append_iov(ChunkKind kind, const iovec* parts, int count) {
  if (count < 0 || count > kMaxParts) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  iovec iov[kMaxParts + 2];
  size_t size = 0;
  for (int i = 0; i < count; ++i) {
    // Caller-given lengths may be anything: saturate so the sum cannot wrap.
    size = parts[i].iov_len > kMaxChunkPayload
               ? SIZE_MAX
               : (size == SIZE_MAX ? SIZE_MAX : size + parts[i].iov_len);
    iov[i + 1] = parts[i];
  }
  return emit(kind, iov, count + 2, size);
}

bool SpoolWriter::append_cupti_buffer(uint32_t cupti_version, const void* records, size_t size) {
  unsigned char prefix[kCuptiBufferPrefix] = {};
  store_le32(prefix, cupti_version);
  iovec iov[4] = {{}, part(prefix, sizeof prefix), part(records, size), {}};
  return emit(ChunkKind::kCuptiBuffer, iov, 4, sizeof prefix + size);
}

bool SpoolWriter::append_strings(std::span<const StringEntry> entries) {
  bool ok = true;
  while (!entries.empty()) {
    size_t n = entries.size() < kMaxStringsPerChunk ? entries.size() : kMaxStringsPerChunk;
    unsigned char prefix[kStringsPrefix] = {};
    unsigned char entry_prefix[kMaxStringsPerChunk][kStringEntryPrefix];
    iovec iov[2 * kMaxStringsPerChunk + 3];
    store_le32(prefix, static_cast<uint32_t>(n));
    iov[1] = part(prefix, sizeof prefix);
    // Sizes of objects in memory cannot wrap a 64-bit sum; emit() bounds it.
    size_t size = sizeof prefix;
    int count = 2;
    for (size_t i = 0; i < n; ++i) {
      std::string_view text = entries[i].text;
      store_le64(entry_prefix[i], entries[i].id);
      store_le32(entry_prefix[i] + 8, static_cast<uint32_t>(text.size()));
      iov[count++] = part(entry_prefix[i], kStringEntryPrefix);
      iov[count++] = part(text.data(), text.size());
      size += kStringEntryPrefix + text.size();
    }
    ok = emit(ChunkKind::kStrings, iov, count + 1, size) && ok;
    entries = entries.subspan(n);
  }
  return ok;
}

bool SpoolWriter::append_drop_counters(std::span<const DropCounter> counters) {
  bool ok = true;
  while (!counters.empty()) {
    size_t n =
        counters.size() < kMaxDropCountersPerChunk ? counters.size() : kMaxDropCountersPerChunk;
    unsigned char payload[kDropCountersPrefix + kMaxDropCountersPerChunk * kDropCounterEntry] = {};
    store_le32(payload, static_cast<uint32_t>(n));
    for (size_t i = 0; i < n; ++i) {
      unsigned char* e = payload + kDropCountersPrefix + i * kDropCounterEntry;
      store_le32(e, counters[i].kind);
      store_le64(e + 8, counters[i].total);
    }
    ok = append(ChunkKind::kDropCounters, payload, kDropCountersPrefix + n * kDropCounterEntry) &&
         ok;
    counters = counters.subspan(n);
  }
  return ok;
}

bool SpoolWriter::append_thread_name(uint32_t tid, std::string_view name) {
  unsigned char prefix[kThreadNamePrefix] = {};
  store_le32(prefix, tid);
  iovec iov[4] = {{}, part(prefix, sizeof prefix), part(name.data(), name.size()), {}};
  return emit(ChunkKind::kThreadName, iov, 4, sizeof prefix + name.size());
}

bool SpoolWriter::append_process_info(uint32_t pid, uint32_t ppid, std::string_view exe,
                                      std::string_view cmdline) {
  unsigned char prefix[kProcessInfoPrefix];
  store_le32(prefix, pid);
  store_le32(prefix + 4, ppid);
  store_le32(prefix + 8, static_cast<uint32_t>(exe.size()));
  store_le32(prefix + 12, static_cast<uint32_t>(cmdline.size()));
  iovec iov[5] = {{},
                  part(prefix, sizeof prefix),
                  part(exe.data(), exe.size()),
                  part(cmdline.data(), cmdline.size()),
                  {}};
  return emit(ChunkKind::kProcessInfo, iov, 5, sizeof prefix + exe.size() + cmdline.size());
}

bool SpoolWriter::append_kernel_metrics(const KernelMetricsHeader& header,
                                        std::string_view kernel_name,
                                        std::span<const MetricValue> metrics) {
  if (metrics.size() > kMaxKernelMetrics) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  unsigned char prefix[kKernelMetricsPrefix];
  store_le32(prefix, header.device);
  store_le32(prefix + 4, header.status);
  store_le64(prefix + 8, header.correlation_id);
  store_le64(prefix + 16, header.invocation);
  store_le64(prefix + 24, static_cast<uint64_t>(header.start_ns));
  store_le64(prefix + 32, static_cast<uint64_t>(header.end_ns));
  store_le32(prefix + 40, static_cast<uint32_t>(kernel_name.size()));
  store_le32(prefix + 44, static_cast<uint32_t>(metrics.size()));
  // Two parts per metric: the previous name's padding with this entry's
  // prefix in one piece, then the name. The payload ends padded to 8 itself.
  unsigned char entry[kMaxKernelMetrics][kChunkAlignment + kMetricEntryPrefix];
  iovec iov[2 * kMaxKernelMetrics + 5];
  int count = 1;
  iov[count++] = part(prefix, sizeof prefix);
  iov[count++] = part(kernel_name.data(), kernel_name.size());
  size_t size = sizeof prefix + kernel_name.size();
  for (size_t i = 0; i < metrics.size(); ++i) {
    size_t pad = align_chunk(size) - size;
    unsigned char* e = entry[i];
    std::memset(e, 0, pad);
    store_le64(e + pad, std::bit_cast<uint64_t>(metrics[i].value));
    store_le32(e + pad + 8, static_cast<uint32_t>(metrics[i].name.size()));
    store_le32(e + pad + 12, 0);
    iov[count++] = part(e, pad + kMetricEntryPrefix);
    iov[count++] = part(metrics[i].name.data(), metrics[i].name.size());
    size += pad + kMetricEntryPrefix + metrics[i].name.size();
    if (size > kMaxKernelChunkPayload) break;  // refused below; stop before overflowing
  }
  size_t tail = align_chunk(size) - size;
  iov[count++] = part(kZeroPad, tail);
  size += tail;
  if (size > kMaxKernelChunkPayload) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  return emit(ChunkKind::kKernelMetrics, iov, count + 1, size);
}

bool SpoolWriter::append_kernels_seen(std::span<const KernelSeen> seen) {
  bool ok = true;
  while (!seen.empty()) {
    unsigned char prefix[kKernelsSeenPrefix] = {};
    unsigned char entry[kMaxKernelsSeenPerChunk][kKernelSeenEntryPrefix];
    iovec iov[3 * kMaxKernelsSeenPerChunk + 3];
    iov[1] = part(prefix, sizeof prefix);
    int count = 2;
    size_t size = sizeof prefix;
    size_t taken = 0;  // entries consumed from `seen`, written or refused
    uint32_t written = 0;
    while (taken < seen.size() && written < kMaxKernelsSeenPerChunk) {
      const KernelSeen& s = seen[taken];
      size_t entry_size = kKernelSeenEntryPrefix + align_chunk(s.name.size());
      if (entry_size > kMaxKernelChunkPayload - kKernelsSeenPrefix) {
        rejected_.fetch_add(1, std::memory_order_relaxed);  // can never fit: drop it alone
        ok = false;
        ++taken;
        continue;
      }
      if (size + entry_size > kMaxKernelChunkPayload) break;  // next chunk
      unsigned char* e = entry[written];
      store_le64(e, s.launches);
      store_le32(e + 8, static_cast<uint32_t>(s.name.size()));
      store_le32(e + 12, 0);
      iov[count++] = part(e, kKernelSeenEntryPrefix);
      iov[count++] = part(s.name.data(), s.name.size());
      iov[count++] = part(kZeroPad, align_chunk(s.name.size()) - s.name.size());
      size += entry_size;
      ++written;
      ++taken;
    }
    if (written > 0) {
      store_le32(prefix, written);
      ok = emit(ChunkKind::kKernelsSeen, iov, count + 1, size) && ok;
    }
    seen = seen.subspan(taken);
  }
  return ok;
}

bool SpoolWriter::close(uint32_t signal) {
  ErrnoGuard errno_guard;
  // Taking the fd first makes close() idempotent even against a second closer.
  int fd = fd_.exchange(-1, std::memory_order_relaxed);
  if (fd < 0) return false;
  bool wrote_end = false;
  if (getpid() == owner_pid_) {
    unsigned char payload[kEndOfStreamSize] = {};
    store_le64(payload, chunks_written_.load(std::memory_order_relaxed));
    store_le64(payload + 8, bytes_written_.load(std::memory_order_relaxed));
    store_le64(payload + 16, write_errors_.load(std::memory_order_relaxed));
    store_le64(payload + 24, static_cast<uint64_t>(monotonic_ns()));
    store_le32(payload + 32, signal);
    iovec iov[3] = {{}, part(payload, sizeof payload), {}};
    wrote_end = emit_to(fd, ChunkKind::kEndOfStream, iov, 3, sizeof payload);
  }
  ::close(fd);  // not retried on EINTR: on Linux the fd is released either way
  return wrote_end;
}

void SpoolWriter::abandon() {
  int fd = fd_.exchange(-1, std::memory_order_relaxed);
  if (fd >= 0) ::close(fd);
}

WriterStats SpoolWriter::stats() const {
  WriterStats s;
  s.chunks_written = chunks_written_.load(std::memory_order_relaxed);
  s.bytes_written = bytes_written_.load(std::memory_order_relaxed);
  s.write_errors = write_errors_.load(std::memory_order_relaxed);
  s.rejected = rejected_.load(std::memory_order_relaxed);
  s.last_errno = last_errno_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace strata::format
