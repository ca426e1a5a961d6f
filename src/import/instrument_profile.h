// Instrument spools -> an instrumented profile: the reading half of `strata
// cpu --instrument` (docs/instrument.md). Each process of a command built
// with -finstrument-functions and linked with strata::instrument writes
// instrument-PID.bin; read_instrument_spools reads them through the one
// chunk loop (chunk_visitor.h), symbolizes function addresses offline
// against the memory maps each process recorded, and returns an
// analysis::Profile of mode kInstrumented (ThreadCalls per thread), which
// cpu_function_table turns into pstats' ncalls (3/1), tottime and cumtime.
//
// Threading: single-threaded, pure but for reading the files and the
// binaries symbolization opens. Ownership: the caller owns the result.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/cpu_profile.h"
#include "common/result.h"

namespace strata::import {

// What reading the spools met. Damage is counted, never fatal: a process
// that crashed mid-write still gives the chunks it completed.
struct InstrumentCounters {
  uint64_t spools = 0;             // spool files read
  uint64_t unreadable_spools = 0;  // files whose header did not open (see notes)
  uint64_t unclosed_spools = 0;    // no clean end marker: the process crashed or was killed
  uint64_t events = 0;             // enter/exit events kept
  uint64_t dropped_events = 0;     // the runtime's own drop counter (instrument-events)
  uint64_t damaged_chunks = 0;     // chunks lost to CRC or length damage
  uint64_t skipped_bytes = 0;      // bytes passed over resynchronizing
  uint64_t truncated_bytes = 0;    // incomplete chunks at the end of a spool
  uint64_t malformed_chunks = 0;   // valid CRC, payload sizes that do not add up
  uint64_t torn_events = 0;        // words that decode to no event (a slot still unfilled at exit)
  uint64_t unsymbolized_functions = 0;  // addresses no symbol covers
};

struct InstrumentedProfile {
  analysis::Profile profile;  // mode kInstrumented; wall_ns/cpu_ns left to the caller
  InstrumentCounters counters;
  // The runtime's own cost per call (enter and exit), measured at start in
  // each process and subtracted from its times (docs/instrument.md,
  // Calibration); the largest over the processes. 0 when none calibrated.
  double overhead_ns_per_call = 0;
  uint64_t calibrated_processes = 0;
  uint64_t uncalibrated_processes = 0;  // spools of a runtime before 1.4, or damaged
  std::vector<std::string> notes;  // one line each, for stderr ("strata: " is the caller's)
};

// Reads instrument spools (any order; one per process) into a profile:
// processes in pid order, threads in tid order, whatever order `paths` has.
// Never fails: unreadable files and damage are counted and noted.
InstrumentedProfile read_instrument_spools(const std::vector<std::string>& paths);

}  // namespace strata::import
