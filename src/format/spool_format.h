// The spool's wire constants: magic, version, chunk framing, chunk kinds and
// the byte offsets of every fixed field. docs/spool-format.md is the prose
// version of this file; the two change together.
//
// Versioning: the magic and the major/minor fields at offsets 8 and 10 are
// frozen forever, so any reader can name the version of any spool. A new
// minor may only add things an older reader can skip (chunk kinds, drop
// counter kinds, header fields after the v1.0 ones); anything else, including
// a change to an existing payload layout, is a new major.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>

#include "format/wire_names.h"

namespace strata::format {

inline constexpr char kSpoolMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'S', 'P'};
inline constexpr uint16_t kFormatMajor = 1;
// 1.1 added kernel-metrics and kernels-seen. 1.2 gave the producers that had
// borrowed numbers kinds of their own: instrument-events and memory-map
// (strata::instrument had written them as 7 and 8, colliding with 1.1) and
// sampler-samples and sampler-counters (the in-process sampler had hidden
// them in cupti-buffer chunks behind an "SGPF" tag). 1.3 added torch-ops and
// torch-status (libstrata_torch.so, PyTorch ops). 1.4 gave instrument-events
// the runtime's calibration calls (instrument_payloads.h), at addresses 1 and
// 2, which 1.3 readers show as two unsymbolized functions.
inline constexpr uint16_t kFormatMinor = 4;

// File header, v1.0 layout. header_size lets a newer minor append fields: an
// older reader checks the CRC over the whole header and ignores the rest.
inline constexpr size_t kFileHeaderSize = 48;
inline constexpr size_t kMaxFileHeaderSize = 4096;
namespace header_offset {
inline constexpr size_t kMagic = 0;             // char[8] "STRATASP"
inline constexpr size_t kMajor = 8;             // u16
inline constexpr size_t kMinor = 10;            // u16
inline constexpr size_t kHeaderSize = 12;       // u32, bytes including the trailing CRC
inline constexpr size_t kPid = 16;              // u32, the producer's pid
inline constexpr size_t kClockId = 20;          // u32, ClockId of start_clock_ns
inline constexpr size_t kStartClockNs = 24;     // i64, on clock_id, at open
inline constexpr size_t kStartRealtimeNs = 32;  // i64, CLOCK_REALTIME at the same instant
inline constexpr size_t kFlags = 40;            // u32, none defined in 1.0 (written as 0)
// u32 CRC-32 of bytes [0, header_size - 4) sits at header_size - 4 (44 in v1.0).
}  // namespace header_offset

// Chunk framing: [marker u32][kind u32][length u32][crc u32][payload][pad].
// The CRC covers kind, length and payload, so a damaged length is caught
// without trusting it. Chunks start 8-aligned (payloads are zero-padded) so
// that an undamaged payload can be read in place as CUPTI records.
inline constexpr uint32_t kChunkMarker = 0xA97C5AD3;  // bytes D3 5A 7C A9: not ASCII, not 0/FF
inline constexpr size_t kChunkHeaderSize = 16;
inline constexpr size_t kChunkAlignment = 8;
// CUPTI buffers are 1-10 MB (Kineto uses 4 MB); anything near this bound is a
// damaged length, and the bound keeps the reader's resync cost finite.
inline constexpr uint32_t kMaxChunkPayload = 64u << 20;
namespace chunk_offset {
inline constexpr size_t kMarker = 0;
inline constexpr size_t kKind = 4;
inline constexpr size_t kLength = 8;
inline constexpr size_t kCrc = 12;
}  // namespace chunk_offset

inline constexpr size_t align_chunk(size_t n) {
  return (n + kChunkAlignment - 1) & ~(kChunkAlignment - 1);
}

// Chunk kinds: every kind any producer writes (CUPTI agent, strata::instrument,
// the in-process sampler). This enum is the one owner of the numbers; a
// producer that needs a kind adds it here, to kChunkKindNames below and to
// docs/spool-format.md. Numbers are never reused; a reader skips and counts
// kinds it does not know, so adding one is a minor version. Payload layouts
// of 9-14 are in instrument_payloads.h, payloads.h, sampler_payloads.h and
// torch_payloads.h.
enum class ChunkKind : uint32_t {
  kCuptiBuffer = 1,   // u32 cupti_version, u32 0, then the buffer's valid bytes
  kStrings = 2,       // u32 count, u32 0, then count x {u64 id, u32 len, bytes[len]}
  kDropCounters = 3,  // u32 count, u32 0, then count x {u32 DropCounterKind, u32 0, u64 total}
  kThreadName = 4,    // u32 tid, u32 0, then the name's bytes (no NUL)
  kProcessInfo = 5,   // u32 pid, u32 ppid, u32 exe_len, u32 cmdline_len, exe, cmdline
  kEndOfStream = 6,  // u64 chunks, u64 bytes, u64 write_errors, i64 end_clock_ns, u32 signal, u32 0
  // Since 1.1 (strata kernels). One per profiled launch: u32 device, u32 status,
  // u64 correlation_id, u64 invocation, i64 start_ns, i64 end_ns, u32 name_len,
  // u32 metric_count, name (mangled, no NUL), zero pad to 8, then metric_count x
  // {f64 value, u32 name_len, u32 0, name, zero pad to 8}.
  kKernelMetrics = 7,
  // Since 1.1. u32 count, u32 0, then count x {u64 launches, u32 name_len, u32 0,
  // name (mangled), zero pad to 8}. Cumulative launch counts per kernel name.
  kKernelsSeen = 8,
  // Since 1.2 (strata::instrument). u32 tid, u32 InstrumentClock, i64 ref_ns,
  // u64 ref_ticks, i64 now_ns, u64 now_ticks, then u64 event words
  // (instrument_payloads.h).
  kInstrumentEvents = 9,
  // Since 1.2 (strata::instrument, the in-process sampler). i64 time (on the
  // header's clock; 0 when not taken), then the text of /proc/self/maps.
  kMemoryMap = 10,
  // Since 1.2 (the in-process sampler). u32 tid, u32 count, then count samples
  // {u64 time, u32 overruns, u32 stack_size, u64 regs[8], stack, pad to 8}
  // (sampler_payloads.h).
  kSamplerSamples = 11,
  // Since 1.2 (the in-process sampler). u32 hz, u32 stack_bytes, then u64
  // totals, one per SamplerCounter slot (sampler_payloads.h).
  kSamplerCounters = 12,
  // Since 1.3 (libstrata_torch.so). One thread's PyTorch ops: the
  // instrument-events prefix, then 48-byte records (torch_payloads.h).
  kTorchOps = 13,
  // Since 1.3. u32 TorchStatus, u32 0, then a line of text (torch_payloads.h).
  kTorchStatus = 14,
};
inline constexpr uint32_t kLastKnownKind = 14;

inline constexpr bool is_known_kind(uint32_t kind) {
  return kind >= 1 && kind <= kLastKnownKind;
}

// Every kind with its name, the one table chunk_kind_name reads and the
// uniqueness test checks (tests/format/wire_numbers_test.cc).
inline constexpr WireName kChunkKindNames[] = {
    {static_cast<uint32_t>(ChunkKind::kCuptiBuffer), "cupti-buffer"},
    {static_cast<uint32_t>(ChunkKind::kStrings), "strings"},
    {static_cast<uint32_t>(ChunkKind::kDropCounters), "drop-counters"},
    {static_cast<uint32_t>(ChunkKind::kThreadName), "thread-name"},
    {static_cast<uint32_t>(ChunkKind::kProcessInfo), "process-info"},
    {static_cast<uint32_t>(ChunkKind::kEndOfStream), "end-of-stream"},
    {static_cast<uint32_t>(ChunkKind::kKernelMetrics), "kernel-metrics"},
    {static_cast<uint32_t>(ChunkKind::kKernelsSeen), "kernels-seen"},
    {static_cast<uint32_t>(ChunkKind::kInstrumentEvents), "instrument-events"},
    {static_cast<uint32_t>(ChunkKind::kMemoryMap), "memory-map"},
    {static_cast<uint32_t>(ChunkKind::kSamplerSamples), "sampler-samples"},
    {static_cast<uint32_t>(ChunkKind::kSamplerCounters), "sampler-counters"},
    {static_cast<uint32_t>(ChunkKind::kTorchOps), "torch-ops"},
    {static_cast<uint32_t>(ChunkKind::kTorchStatus), "torch-status"},
};
static_assert(wire_names_unique(kChunkKindNames), "two chunk kinds share a number or a name");
static_assert(std::size(kChunkKindNames) == kLastKnownKind, "a chunk kind without a name");

// "cupti-buffer", "strings", ...; "unknown" for kinds this build does not know.
const char* chunk_kind_name(uint32_t kind);

// Fixed payload sizes (prefixes for the variable-length kinds).
inline constexpr size_t kCuptiBufferPrefix = 8;
inline constexpr size_t kStringsPrefix = 8;
inline constexpr size_t kStringEntryPrefix = 12;  // u64 id, u32 len
inline constexpr size_t kDropCountersPrefix = 8;
inline constexpr size_t kDropCounterEntry = 16;
inline constexpr size_t kThreadNamePrefix = 8;
inline constexpr size_t kProcessInfoPrefix = 16;
inline constexpr size_t kEndOfStreamSize = 40;
inline constexpr size_t kKernelMetricsPrefix = 48;  // up to and including metric_count
inline constexpr size_t kMetricEntryPrefix = 16;    // f64 value, u32 name_len, u32 0
inline constexpr size_t kKernelsSeenPrefix = 8;
inline constexpr size_t kKernelSeenEntryPrefix = 16;  // u64 launches, u32 name_len, u32 0
inline constexpr size_t kMemoryMapPrefix = 8;         // i64 time
// The kernel chunks are small by nature (one launch, a few dozen metrics);
// the writer refuses larger ones, which bounds what the agent encodes.
inline constexpr size_t kMaxKernelChunkPayload = 64u << 10;

// The clock of the header's start timestamp and, by the agent's contract, of
// every timestamp in the spool (CUPTI is pointed at it by its timestamp
// callback). Values are strata's own, not the host's clockid_t.
enum class ClockId : uint32_t {
  kMonotonic = 1,  // CLOCK_MONOTONIC
};
inline constexpr WireName kClockIdNames[] = {
    {static_cast<uint32_t>(ClockId::kMonotonic), "monotonic"},
};
static_assert(wire_names_unique(kClockIdNames));

// What a drop counter counts. Totals are cumulative since the agent started,
// so a later chunk supersedes an earlier one and a lost chunk loses nothing.
enum class DropCounterKind : uint32_t {
  kCuptiRecords = 1,        // cuptiActivityGetNumDroppedRecords
  kBuffersUnavailable = 2,  // bufferRequested found the pool empty
  kSpoolWriteErrors = 3,    // appends that failed in write(2)
  kNvtxEvents = 4,          // NVTX events dropped by the agent's own rings
  kInstrumentEvents = 5,    // instrumentation events dropped by the agent's own rings
};
inline constexpr WireName kDropCounterNames[] = {
    {static_cast<uint32_t>(DropCounterKind::kCuptiRecords), "cupti-records"},
    {static_cast<uint32_t>(DropCounterKind::kBuffersUnavailable), "buffers-unavailable"},
    {static_cast<uint32_t>(DropCounterKind::kSpoolWriteErrors), "spool-write-errors"},
    {static_cast<uint32_t>(DropCounterKind::kNvtxEvents), "nvtx-events"},
    {static_cast<uint32_t>(DropCounterKind::kInstrumentEvents), "instrument-events"},
};
static_assert(wire_names_unique(kDropCounterNames), "two drop counters share a number or a name");

}  // namespace strata::format
