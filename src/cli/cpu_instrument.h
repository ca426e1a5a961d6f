// `strata cpu --instrument`: cProfile's exact counts for native programs
// (docs/instrument.md). The command, built with -finstrument-functions and
// linked with strata::instrument, runs with STRATA_INSTRUMENT_DIR pointing at
// a private directory; each of its processes writes instrument-PID.bin
// there. The spools are read back, function addresses symbolized offline
// against the maps each process recorded, and the result is an
// analysis::Profile of mode kInstrumented (ThreadCalls per thread), which
// cpu_function_table turns into pstats' ncalls (3/1), tottime and cumtime.
//
// Threading: single-threaded; run_instrumented blocks until the command
// exits and sets STRATA_INSTRUMENT_DIR in this process's environment while
// it runs (call it from the CLI's main thread). Ownership: the private
// directory is created and removed by run_instrumented; the caller owns the
// returned profile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/cpu_profile.h"
#include "common/process.h"
#include "common/result.h"

namespace strata::cli {

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
  std::vector<std::string> notes;  // one line each, for stderr ("strata: " is the caller's)
};

// Reads instrument spools (any order; one per process) into a profile.
// Never fails: unreadable files and damage are counted and noted.
InstrumentedProfile read_instrument_spools(const std::vector<std::string>& paths);

struct InstrumentOptions {
  // Parent of the private run directory; empty: $TMPDIR, else /tmp.
  std::string temp_parent;
  // How the command's output is handled (strata leaves it untouched by default).
  OutputMode output = OutputMode::kInherit;
};

struct InstrumentedRun {
  InstrumentedProfile data;  // profile.wall_ns and cpu_ns are the command's
  ProcessResult process;     // exit status or signal, for strata's own exit status
};

// Runs argv under instrumentation. Errors: the command cannot start
// ("cannot start 'CMD': ..."), the private directory cannot be made, or the
// command recorded nothing ("CMD wrote no instrumentation events: build it
// with -finstrument-functions and link strata::instrument").
Result<InstrumentedRun> run_instrumented(const std::vector<std::string>& argv,
                                         const InstrumentOptions& options = {});

}  // namespace strata::cli
