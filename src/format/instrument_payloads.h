// The instrument-events chunk (kind 9, since 1.2) that strata::instrument
// writes (src/agent/instrument, docs/instrument.md) and src/import reads, and
// the transport around it. Memory maps travel in the shared memory-map chunk
// (payloads.h).
//
// instrument-events: u32 tid, u32 clock (InstrumentClock), i64 ref_ns,
//   u64 ref_ticks, i64 now_ns, u64 now_ticks, then count u64 words; count =
//   (length - 40) / 8. A word whose low 47 bits are not 0 is an event:
//   bits 0-46 the function's address (what -finstrument-functions passes:
//   its entry), bit 47 set on exit, bits 48-63 the stamp's increase since the
//   previous event or clock record, on `clock`. A word whose low 47 bits are
//   0 is a clock record: the next word is an absolute stamp, which the event
//   after it counts from. Every chunk starts with a clock record. For kTsc,
//   (ref_*) is a (CLOCK_MONOTONIC ns, TSC) pair taken when the process
//   started recording and (now_*) one taken when the chunk was written, so
//   ns = ref_ns + (ticks - ref_ticks) * (now_ns - ref_ns) / (now_ticks -
//   ref_ticks), best with the pair of the latest chunk. For kMonotonic
//   stamps are ns and the four fields are 0.
//
// Threading: constants, and a pure decoder (allocates only error messages).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/result.h"
#include "format/byte_order.h"
#include "format/spool_format.h"
#include "format/wire_names.h"

namespace strata::format {

enum class InstrumentClock : uint32_t {
  kMonotonic = 1,  // stamps are CLOCK_MONOTONIC ns
  kTsc = 2,        // stamps are rdtsc ticks (invariant TSC), converted with the chunk's pairs
};
inline constexpr WireName kInstrumentClockNames[] = {
    {static_cast<uint32_t>(InstrumentClock::kMonotonic), "monotonic"},
    {static_cast<uint32_t>(InstrumentClock::kTsc), "tsc"},
};
static_assert(wire_names_unique(kInstrumentClockNames));

inline constexpr size_t kInstrumentEventsPrefix = 40;
inline constexpr size_t kInstrumentWordSize = 8;
inline constexpr uint64_t kInstrumentAddressMask = (uint64_t{1} << 47) - 1;
inline constexpr uint64_t kInstrumentExitBit = uint64_t{1} << 47;
inline constexpr int kInstrumentDeltaShift = 48;
inline constexpr uint64_t kInstrumentMaxDelta = 0xFFFF;

// The runtime's calibration (since 1.4): at start, before any instrumented
// code runs, the recording thread calls the entry points itself with these
// two addresses, which no function has: one call of kInstrumentCalibrationOuter
// around kInstrumentCalibrationCalls calls of kInstrumentCalibrationInner,
// which does nothing. The outer call's duration over its 2N + 1 gaps between
// events is what one event costs (the hooks' own time), which the importer
// subtracts from every gap (docs/instrument.md, Calibration) and then drops
// these events. A spool without them is read uncalibrated.
inline constexpr uint64_t kInstrumentCalibrationOuter = 1;
inline constexpr uint64_t kInstrumentCalibrationInner = 2;
inline constexpr uint32_t kInstrumentCalibrationCalls = 4096;

namespace instrument_events_offset {
inline constexpr size_t kTid = 0;        // u32
inline constexpr size_t kClock = 4;      // u32 InstrumentClock
inline constexpr size_t kRefNs = 8;      // i64
inline constexpr size_t kRefTicks = 16;  // u64
inline constexpr size_t kNowNs = 24;     // i64
inline constexpr size_t kNowTicks = 32;  // u64
}  // namespace instrument_events_offset

// One instrument-events chunk: its prefix and its words, unread.
struct InstrumentEvents {
  uint32_t tid = 0;
  InstrumentClock clock = InstrumentClock::kMonotonic;
  int64_t ref_ns = 0;
  uint64_t ref_ticks = 0;
  int64_t now_ns = 0;
  uint64_t now_ticks = 0;
  std::span<const std::byte> words;  // word_count() little-endian u64 words

  size_t word_count() const { return words.size() / kInstrumentWordSize; }
};

// Strict: the words must be whole and the clock one this build knows.
Result<InstrumentEvents> decode_instrument_events(std::span<const std::byte> payload);

// The 40-byte prefix instrument-events shares with torch-ops (tid, clock and
// the two clock pairs), decoded into `out`'s fields of the same names. The
// caller has checked the payload holds it; `kind` names the chunk in the error.
template <class Stamped>
Status decode_stamp_prefix(const char* kind, std::span<const std::byte> payload, Stamped& out);
Status check_stamp_clock(const char* kind, uint32_t clock);

template <class Stamped>
Status decode_stamp_prefix(const char* kind, std::span<const std::byte> payload, Stamped& out) {
  namespace off = instrument_events_offset;
  const std::byte* p = payload.data();
  const uint32_t clock = load_le32(p + off::kClock);
  STRATA_TRY(check_stamp_clock(kind, clock));
  out.tid = load_le32(p + off::kTid);
  out.clock = static_cast<InstrumentClock>(clock);
  out.ref_ns = static_cast<int64_t>(load_le64(p + off::kRefNs));
  out.ref_ticks = load_le64(p + off::kRefTicks);
  out.now_ns = static_cast<int64_t>(load_le64(p + off::kNowNs));
  out.now_ticks = load_le64(p + off::kNowTicks);
  return Ok{};
}

// Transport. The environment variable that switches recording on: the
// directory the spool instrument-PID.bin (instrument-PID.N.bin after a fork
// of the same image) is created in.
inline constexpr char kInstrumentDirEnv[] = "STRATA_INSTRUMENT_DIR";
// Set to "monotonic" to stamp with clock_gettime even where the TSC is invariant.
inline constexpr char kInstrumentClockEnv[] = "STRATA_INSTRUMENT_CLOCK";

}  // namespace strata::format
