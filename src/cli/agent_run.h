// What the verbs that inject libstrata_agent.so share (strata trace, strata
// kernels): finding the agent, the run's private spool directory, running the
// target with SIGINT/SIGTERM forwarded to it, and ingesting what the agent
// wrote into the trace.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/ingest/ingest.h"
#include "store/trace_db.h"

namespace strata::cli {

// The installed layout first (bin/strata beside lib/libstrata_agent.so),
// then the build tree this strata was built in.
std::optional<std::string> find_agent();

// A fresh 0700 directory under $TMPDIR (mkdtemp creates it so).
std::optional<std::string> make_run_dir();

std::vector<std::string> split_commas(const std::string& text);

// How the target ended.
struct TargetExit {
  std::optional<int> exit_status;
  std::optional<int> signal;
  int shell_status() const { return signal ? 128 + *signal : exit_status.value_or(0); }
};

// Runs the command (the agent's environment is set already). SIGINT/SIGTERM
// go to the target, which the agent flushes on its way out; strata stays
// alive to ingest what it wrote. The error is the one-line message, with the
// exit status strata returns in *error_status.
Result<TargetExit> run_forwarding_signals(const std::vector<std::string>& command,
                                          int* error_status);

// Writes the run row, ingests `spools`, runs `before_commit` (other layers'
// tables; may be empty) and commits the trace; prints the ingest's problems
// and damage notes. `run_dir` is removed either way. Errors: the trace could
// not be written.
Result<ingest::IngestStats> ingest_run(const std::string& run_dir,
                                       const std::vector<std::string>& spools,
                                       store::TraceWriter& writer, const store::RunInfo& info,
                                       const std::function<Status()>& before_commit = {});

}  // namespace strata::cli
