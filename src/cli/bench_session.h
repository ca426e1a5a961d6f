// The recording half of `strata bench`, shared with `strata compare --vs`:
// checks the commands and flags, runs the command (and --vs's, interleaved
// A B A B ..., warm-ups first) with wait4's measurements and the --metric
// values, has the caller print its report of the runs, then stores every
// run in a new trace. A signal stops the runs and what ran is still
// reported and written (docs/cli.md, Signals).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/signal_forwarder.h"
#include "store/trace_db.h"

namespace strata::cli {

struct BenchSessionOptions {
  int runs = 5;
  int warmups = 1;
  std::optional<std::string> vs;  // set but empty is a usage error
  std::vector<std::string> metrics;
  std::optional<std::string> output;
  bool force = false;
  bool quiet = false;
  std::vector<std::string> command;
  // strata_run's verb; the default trace name is strata-VERBN.sqlite.
  std::string verb = "bench";
};

// The runs of `commands` (label, argv), interleaved, warm-ups first, as
// options' runs, warmups, quiet and metrics say; stops after a signal
// `forwarder` received, and before each iteration where `stop_early` (may
// be empty), shown the runs so far, says so (strata diagnose's --budget,
// and its baseline that stops at two runs that agree). A run that failed is
// named on stderr; a command that could not start stops the loop.
using StopEarly = std::function<bool(const std::vector<store::BenchRun>& runs)>;
struct MeasuredRuns {
  std::vector<store::BenchRun> runs;  // in the order they ran
  bool any_failed = false;
  bool started = true;  // false: a command could not start
};
MeasuredRuns measure_runs(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& commands,
    const BenchSessionOptions& options, SignalForwarder& forwarder,
    const StopEarly& stop_early = {});

// Prints the report of the runs (every run, warm-ups and failures too, in
// the order they ran) and returns the status the verb exits with when
// nothing else went wrong.
using BenchReporter = std::function<int(const std::vector<store::BenchRun>& runs)>;

// The exit status: 2 for a usage error (no command, a bad --vs or --metric,
// an output that cannot be written), 127 when a command cannot start, 1
// when a run failed or the trace could not be written, 128+N when
// interrupted by signal N; otherwise what `report` returned.
int run_bench_session(const BenchSessionOptions& options, const BenchReporter& report);

}  // namespace strata::cli
