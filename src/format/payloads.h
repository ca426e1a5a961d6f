// Typed views of chunk payloads, and the decoders the CLI uses to get them
// from a SpoolReader's Chunk. Layouts are in spool_format.h and
// docs/spool-format.md; the writer encodes them in spool_writer.cc.
//
// Decoders are strict: a payload whose sizes do not add up exactly is an
// error (its CRC was valid, so the producer wrote it that way: a bug worth
// naming, not guessing around). Views (spans, string_views) point into the
// payload and live as long as it does. Decoders are pure and thread-safe;
// they allocate only the vectors they return and error messages.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "format/spool_format.h"

namespace strata::format {

// The file header, decoded. Fields a newer minor added are not here.
struct SpoolHeader {
  uint16_t major = 0;
  uint16_t minor = 0;
  uint32_t header_size = 0;
  uint32_t pid = 0;
  uint32_t clock_id = 0;  // a ClockId value
  int64_t start_clock_ns = 0;
  int64_t start_realtime_ns = 0;
  uint32_t flags = 0;
};

struct CuptiBuffer {
  uint32_t cupti_version = 0;  // cuptiGetVersion() of the producer: picks the record layouts
  std::span<const std::byte> records;
};

// One string table entry. The writer takes spans of these too.
struct StringEntry {
  uint64_t id = 0;
  std::string_view text;
};

struct DropCounter {
  uint32_t kind = 0;   // a DropCounterKind value; unknown values are passed through
  uint64_t total = 0;  // cumulative since the agent started
};

struct ThreadName {
  uint32_t tid = 0;
  std::string_view name;
};

struct ProcessInfo {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string_view exe;
  std::vector<std::string_view> args;  // argv, split from /proc/PID/cmdline's NUL-terminated form
};

// The writer's closing record: what it believes it wrote, so the reader can
// tell chunks lost to damage from chunks never written.
struct EndOfStream {
  uint64_t chunks_written = 0;  // chunks before this one
  uint64_t bytes_written = 0;   // bytes before this chunk, the file header included
  uint64_t write_errors = 0;    // appends that failed in write(2)
  int64_t end_clock_ns = 0;     // on the header's clock
  uint32_t signal = 0;          // 0: closed normally; otherwise the fatal signal being handled
};

// One profiled launch (kernel-metrics chunk, since 1.1).
struct KernelMetricsHeader {
  uint32_t device = 0;
  uint32_t status = 0;          // 0 collected; else the CUptiResult, or CUresult + 1'000'000
  uint64_t correlation_id = 0;  // of the launch API call; 0 if unknown
  uint64_t invocation = 0;      // 0-based ordinal among launches of this mangled name
  int64_t start_ns = 0;         // CLOCK_MONOTONIC around the profiled launch (replays included)
  int64_t end_ns = 0;
};

struct MetricValue {
  std::string_view name;  // ncu/CUPTI raw metric name
  double value = 0;
};

struct KernelMetrics {
  KernelMetricsHeader header;
  std::string_view kernel_name;  // mangled
  std::vector<MetricValue> metrics;
};

// One entry of a kernels-seen chunk (since 1.1).
struct KernelSeen {
  uint64_t launches = 0;  // cumulative launches of this name so far
  std::string_view name;  // mangled
};

// A memory-map chunk (since 1.2): a /proc/self/maps snapshot. Later
// snapshots of a process win where their lines overlap.
struct MemoryMap {
  int64_t time_ns = 0;    // on the header's clock; 0 when the producer took none
  std::string_view text;  // /proc/self/maps, as read
};

Result<CuptiBuffer> decode_cupti_buffer(std::span<const std::byte> payload);
Result<std::vector<StringEntry>> decode_strings(std::span<const std::byte> payload);
Result<std::vector<DropCounter>> decode_drop_counters(std::span<const std::byte> payload);
Result<ThreadName> decode_thread_name(std::span<const std::byte> payload);
Result<ProcessInfo> decode_process_info(std::span<const std::byte> payload);
Result<EndOfStream> decode_end_of_stream(std::span<const std::byte> payload);
Result<KernelMetrics> decode_kernel_metrics(std::span<const std::byte> payload);
Result<std::vector<KernelSeen>> decode_kernels_seen(std::span<const std::byte> payload);
Result<MemoryMap> decode_memory_map(std::span<const std::byte> payload);

// A DropCounterKind's name for reports ("cupti-records", ...); "unknown" otherwise.
const char* drop_counter_name(uint32_t kind);

}  // namespace strata::format
