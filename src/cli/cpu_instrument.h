// `strata cpu --instrument`: cProfile's exact counts for native programs
// (docs/instrument.md). The command, built with -finstrument-functions and
// linked with strata::instrument, runs with STRATA_INSTRUMENT_DIR pointing at
// a private directory; each of its processes writes instrument-PID.bin
// there, which import::read_instrument_spools turns into the profile.
//
// Threading: single-threaded; run_instrumented blocks until the command
// exits and sets STRATA_INSTRUMENT_DIR in this process's environment while
// it runs (call it from the CLI's main thread). Ownership: the private
// directory is created and removed by run_instrumented; the caller owns the
// returned profile.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/process.h"
#include "common/result.h"
#include "import/instrument_profile.h"

namespace strata::cli {

struct InstrumentOptions {
  // Parent of the private run directory; empty: $TMPDIR, else /tmp.
  std::string temp_parent;
  // How the command's output is handled (strata leaves it untouched by default).
  OutputMode output = OutputMode::kInherit;
};

struct InstrumentedRun {
  import::InstrumentedProfile data;  // profile.wall_ns and cpu_ns are the command's
  ProcessResult process;             // exit status or signal, for strata's own exit status
};

// Runs argv under instrumentation. Errors: the command cannot start
// ("cannot start 'CMD': ..."), the private directory cannot be made, or the
// command recorded nothing ("CMD wrote no instrumentation events: build it
// with -finstrument-functions and link strata::instrument").
inline constexpr std::string_view kNoInstrumentationEvents = " wrote no instrumentation events";

Result<InstrumentedRun> run_instrumented(const std::vector<std::string>& argv,
                                         const InstrumentOptions& options = {});

}  // namespace strata::cli
