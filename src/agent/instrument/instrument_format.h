// The spool chunks strata::instrument writes (docs/instrument.md), shared by
// the runtime (src/agent/instrument/instrument.cc) and the CLI that reads
// them (src/cli/cpu_instrument.cc). The rest of the spool is
// docs/spool-format.md; the two kinds below are proposed there as 7 and 8.
//
// instrument-events (7): u32 tid, u32 clock (InstrumentClock), i64 ref_ns,
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
// memory-map (8): u32 pid, u32 0, then the text of /proc/PID/maps. Written
//   when recording starts and again at exit (later lines win where they
//   overlap), so addresses in PIE executables and shared libraries can be
//   symbolized offline.
//
// Threading: constants only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/spool_format.h"

namespace strata::instrument {

inline constexpr uint32_t kInstrumentEventsKindNumber = 7;
inline constexpr uint32_t kMemoryMapKindNumber = 8;
// Spelled as casts so this header compiles whether or not spool_format.h
// already names the kinds.
inline constexpr format::ChunkKind kInstrumentEventsKind =
    static_cast<format::ChunkKind>(kInstrumentEventsKindNumber);
inline constexpr format::ChunkKind kMemoryMapKind =
    static_cast<format::ChunkKind>(kMemoryMapKindNumber);

enum class InstrumentClock : uint32_t {
  kMonotonic = 1,  // stamps are CLOCK_MONOTONIC ns
  kTsc = 2,        // stamps are rdtsc ticks (invariant TSC), converted with the chunk's pairs
};

inline constexpr size_t kEventsPrefix = 40;
inline constexpr size_t kWordSize = 8;
inline constexpr size_t kMemoryMapPrefix = 8;
inline constexpr uint64_t kAddressMask = (uint64_t{1} << 47) - 1;
inline constexpr uint64_t kExitBit = uint64_t{1} << 47;
inline constexpr int kDeltaShift = 48;
inline constexpr uint64_t kMaxDelta = 0xFFFF;

namespace events_offset {
inline constexpr size_t kTid = 0;        // u32
inline constexpr size_t kClock = 4;      // u32 InstrumentClock
inline constexpr size_t kRefNs = 8;      // i64
inline constexpr size_t kRefTicks = 16;  // u64
inline constexpr size_t kNowNs = 24;     // i64
inline constexpr size_t kNowTicks = 32;  // u64
}  // namespace events_offset

// The environment variable that switches recording on: the directory the
// spool instrument-PID.bin is created in.
inline constexpr char kDirEnv[] = "STRATA_INSTRUMENT_DIR";
// Set to "monotonic" to stamp with clock_gettime even where the TSC is invariant.
inline constexpr char kClockEnv[] = "STRATA_INSTRUMENT_CLOCK";

}  // namespace strata::instrument
