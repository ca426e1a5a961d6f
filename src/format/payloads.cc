// Payload decoders. Every length is checked against what is left before it is
// used, in 64-bit arithmetic, so no field value can make a read go past the
// payload.
#include "format/payloads.h"

#include <bit>

#include "format/byte_order.h"
#include "format/payload_error.h"

namespace strata::format {
namespace {

std::string_view text_at(std::span<const std::byte> payload, size_t offset, size_t size) {
  return {reinterpret_cast<const char*>(payload.data()) + offset, size};
}

// A name followed by zero padding to the next multiple of 8, starting at
// `*at`. Checks that name and padding fit in the payload; advances `*at`.
bool take_padded_name(std::span<const std::byte> payload, size_t* at, uint64_t len,
                      std::string_view* name) {
  uint64_t padded = align_chunk(len);
  if (*at > payload.size() || padded > payload.size() - *at) return false;
  *name = text_at(payload, *at, len);
  *at += padded;
  return true;
}

}  // namespace

const char* chunk_kind_name(uint32_t kind) {
  return wire_name(kChunkKindNames, kind);
}

const char* drop_counter_name(uint32_t kind) {
  return wire_name(kDropCounterNames, kind);
}

Result<MemoryMap> decode_memory_map(std::span<const std::byte> payload) {
  if (payload.size() < kMemoryMapPrefix) {
    return malformed_chunk("memory-map", bytes_text(payload.size()) + ", needs at least 8");
  }
  MemoryMap out;
  out.time_ns = static_cast<int64_t>(load_le64(payload.data()));
  out.text = text_at(payload, kMemoryMapPrefix, payload.size() - kMemoryMapPrefix);
  return out;
}

Result<CuptiBuffer> decode_cupti_buffer(std::span<const std::byte> payload) {
  if (payload.size() < kCuptiBufferPrefix) {
    return malformed_chunk("cupti-buffer", bytes_text(payload.size()) + ", needs at least 8");
  }
  CuptiBuffer out;
  out.cupti_version = load_le32(payload.data());
  out.records = payload.subspan(kCuptiBufferPrefix);
  return out;
}

Result<std::vector<StringEntry>> decode_strings(std::span<const std::byte> payload) {
  if (payload.size() < kStringsPrefix) {
    return malformed_chunk("strings", bytes_text(payload.size()) + ", needs at least 8");
  }
  uint64_t count = load_le32(payload.data());
  // Each entry needs its 12-byte prefix: this bounds the reservation.
  if (count > (payload.size() - kStringsPrefix) / kStringEntryPrefix) {
    return malformed_chunk(
        "strings", std::to_string(count) + " entries cannot fit in " + bytes_text(payload.size()));
  }
  std::vector<StringEntry> out;
  out.reserve(count);
  size_t at = kStringsPrefix;
  for (uint64_t i = 0; i < count; ++i) {
    if (payload.size() - at < kStringEntryPrefix) {
      return malformed_chunk("strings", "entry " + std::to_string(i) + " overruns the payload");
    }
    uint64_t id = load_le64(payload.data() + at);
    uint64_t len = load_le32(payload.data() + at + 8);
    at += kStringEntryPrefix;
    if (len > payload.size() - at) {
      return malformed_chunk("strings", "entry " + std::to_string(i) + " overruns the payload");
    }
    out.push_back({id, text_at(payload, at, len)});
    at += len;
  }
  if (at != payload.size()) {
    return malformed_chunk("strings", std::to_string(payload.size() - at) + " trailing bytes");
  }
  return out;
}

Result<std::vector<DropCounter>> decode_drop_counters(std::span<const std::byte> payload) {
  if (payload.size() < kDropCountersPrefix) {
    return malformed_chunk("drop-counters", bytes_text(payload.size()) + ", needs at least 8");
  }
  uint64_t count = load_le32(payload.data());
  if (kDropCountersPrefix + count * kDropCounterEntry != payload.size()) {
    return malformed_chunk("drop-counters", std::to_string(count) + " entries need " +
                                                std::to_string(8 + count * 16) + " bytes, have " +
                                                std::to_string(payload.size()));
  }
  std::vector<DropCounter> out(count);
  for (uint64_t i = 0; i < count; ++i) {
    const std::byte* e = payload.data() + kDropCountersPrefix + i * kDropCounterEntry;
    out[i] = {load_le32(e), load_le64(e + 8)};
  }
  return out;
}

Result<ThreadName> decode_thread_name(std::span<const std::byte> payload) {
  if (payload.size() < kThreadNamePrefix) {
    return malformed_chunk("thread-name", bytes_text(payload.size()) + ", needs at least 8");
  }
  return ThreadName{load_le32(payload.data()),
                    text_at(payload, kThreadNamePrefix, payload.size() - kThreadNamePrefix)};
}

Result<ProcessInfo> decode_process_info(std::span<const std::byte> payload) {
  if (payload.size() < kProcessInfoPrefix) {
    return malformed_chunk("process-info", bytes_text(payload.size()) + ", needs at least 16");
  }
  ProcessInfo out;
  out.pid = load_le32(payload.data());
  out.ppid = load_le32(payload.data() + 4);
  uint64_t exe_len = load_le32(payload.data() + 8);
  uint64_t cmdline_len = load_le32(payload.data() + 12);
  if (kProcessInfoPrefix + exe_len + cmdline_len != payload.size()) {
    return malformed_chunk("process-info", "exe and command line lengths (" +
                                               std::to_string(exe_len) + ", " +
                                               std::to_string(cmdline_len) + ") do not add up to " +
                                               bytes_text(payload.size()));
  }
  out.exe = text_at(payload, kProcessInfoPrefix, exe_len);
  std::string_view cmdline = text_at(payload, kProcessInfoPrefix + exe_len, cmdline_len);
  if (!cmdline.empty() && cmdline.back() != '\0') {
    return malformed_chunk("process-info", "command line does not end in NUL");
  }
  while (!cmdline.empty()) {
    size_t nul = cmdline.find('\0');
    out.args.push_back(cmdline.substr(0, nul));
    cmdline.remove_prefix(nul + 1);
  }
  return out;
}

Result<EndOfStream> decode_end_of_stream(std::span<const std::byte> payload) {
  if (payload.size() != kEndOfStreamSize) {
    return malformed_chunk("end-of-stream", bytes_text(payload.size()) + ", expected 40");
  }
  const std::byte* p = payload.data();
  EndOfStream out;
  out.chunks_written = load_le64(p);
  out.bytes_written = load_le64(p + 8);
  out.write_errors = load_le64(p + 16);
  out.end_clock_ns = static_cast<int64_t>(load_le64(p + 24));
  out.signal = load_le32(p + 32);
  return out;
}

Result<KernelMetrics> decode_kernel_metrics(std::span<const std::byte> payload) {
  constexpr const char* kKind = "kernel-metrics";
  if (payload.size() < kKernelMetricsPrefix) {
    return malformed_chunk(kKind, bytes_text(payload.size()) + ", needs at least 48");
  }
  const std::byte* p = payload.data();
  KernelMetrics out;
  out.header.device = load_le32(p);
  out.header.status = load_le32(p + 4);
  out.header.correlation_id = load_le64(p + 8);
  out.header.invocation = load_le64(p + 16);
  out.header.start_ns = static_cast<int64_t>(load_le64(p + 24));
  out.header.end_ns = static_cast<int64_t>(load_le64(p + 32));
  uint64_t name_len = load_le32(p + 40);
  uint64_t count = load_le32(p + 44);
  size_t at = kKernelMetricsPrefix;
  if (!take_padded_name(payload, &at, name_len, &out.kernel_name)) {
    return malformed_chunk(
        kKind, "kernel name of " + std::to_string(name_len) + " bytes overruns the payload");
  }
  // Each metric needs its 16-byte prefix: this bounds the reservation.
  if (count > (payload.size() - at) / kMetricEntryPrefix) {
    return malformed_chunk(
        kKind, std::to_string(count) + " metrics cannot fit in " + bytes_text(payload.size()));
  }
  out.metrics.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    if (payload.size() - at < kMetricEntryPrefix) {
      return malformed_chunk(kKind, "metric " + std::to_string(i) + " overruns the payload");
    }
    MetricValue m;
    m.value = std::bit_cast<double>(load_le64(p + at));
    uint64_t len = load_le32(p + at + 8);
    at += kMetricEntryPrefix;
    if (!take_padded_name(payload, &at, len, &m.name)) {
      return malformed_chunk(kKind, "metric " + std::to_string(i) + " overruns the payload");
    }
    out.metrics.push_back(m);
  }
  if (at != payload.size()) {
    return malformed_chunk(kKind, std::to_string(payload.size() - at) + " trailing bytes");
  }
  return out;
}

Result<std::vector<KernelSeen>> decode_kernels_seen(std::span<const std::byte> payload) {
  constexpr const char* kKind = "kernels-seen";
  if (payload.size() < kKernelsSeenPrefix) {
    return malformed_chunk(kKind, bytes_text(payload.size()) + ", needs at least 8");
  }
  uint64_t count = load_le32(payload.data());
  if (count > (payload.size() - kKernelsSeenPrefix) / kKernelSeenEntryPrefix) {
    return malformed_chunk(
        kKind, std::to_string(count) + " entries cannot fit in " + bytes_text(payload.size()));
  }
  std::vector<KernelSeen> out;
  out.reserve(count);
  size_t at = kKernelsSeenPrefix;
  for (uint64_t i = 0; i < count; ++i) {
    if (payload.size() - at < kKernelSeenEntryPrefix) {
      return malformed_chunk(kKind, "entry " + std::to_string(i) + " overruns the payload");
    }
    KernelSeen seen;
    seen.launches = load_le64(payload.data() + at);
    uint64_t len = load_le32(payload.data() + at + 8);
    at += kKernelSeenEntryPrefix;
    if (!take_padded_name(payload, &at, len, &seen.name)) {
      return malformed_chunk(kKind, "entry " + std::to_string(i) + " overruns the payload");
    }
    out.push_back(seen);
  }
  if (at != payload.size()) {
    return malformed_chunk(kKind, std::to_string(payload.size() - at) + " trailing bytes");
  }
  return out;
}

}  // namespace strata::format
