// What the verbs that inject libstrata_agent.so share (strata trace, strata
// kernels): finding the agent, the run's private spool directory, running the
// target with the signals sent to strata forwarded to it, and ingesting what the agent
// wrote into the trace.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/new_trace.h"
#include "common/result.h"
#include "common/signal_forwarder.h"
#include "import/cupti_ingest.h"

namespace strata::cli {

// The installed layout first (bin/strata beside lib/libstrata_agent.so),
// then the build tree this strata was built in. The error is the one-line
// message (the verb exits 1).
Result<std::string> find_agent();

// A fresh 0700 directory under $TMPDIR (mkdtemp creates it so). The error is
// the one-line message (the verb exits 1).
Result<std::string> make_run_dir();

std::vector<std::string> split_commas(const std::string& text);

// How the target ended.
struct TargetExit {
  std::optional<int> exit_status;
  std::optional<int> signal;
  int shell_status() const { return signal ? 128 + *signal : exit_status.value_or(0); }
};

// The verb's exit status once the report is printed: the target's (128+N
// when signal N killed it), unless the target succeeded and the report
// failed, whose status is returned then.
int exit_status_after_report(const TargetExit& target, int report_status);

// 128+N once strata was sent stop signal N while `interrupts` lived (the
// verb stopped after the run and kept what it measured; docs/cli.md), else
// `status`. For every verb that runs a target.
int status_unless_interrupted(const SignalForwarder& interrupts, int status);

// Runs the command (the agent's environment is set already). Stop signals
// (SIGINT, SIGTERM, SIGHUP, ...: common/signal_forwarder.h) go to the
// target, which the agent flushes on its way out; strata stays alive to
// ingest what it wrote. The error is the one-line message, with the
// exit status strata returns in *error_status.
Result<TargetExit> run_forwarding_signals(const std::vector<std::string>& command,
                                          int* error_status);

// What the agent left in the run directory, now in the trace.
struct IngestedRun {
  std::vector<std::string> spools;  // empty: the agent wrote nothing
  import::IngestStats stats;
  uint64_t torch_ops = 0;  // PyTorch ops recorded (libstrata_torch's spools)
};

// After the target ended: records how in `trace.info`, writes the run row,
// ingests the spools of `run_dir`, runs `before_commit` (other layers'
// tables; may be empty) and commits the trace; prints the ingest's problems
// and damage notes. `run_dir` is removed either way. When the trace could
// not be written, prints why and returns nullopt (the verb exits 1).
std::optional<IngestedRun> ingest_agent_run(const std::string& run_dir, const TargetExit& target,
                                            NewTrace& trace,
                                            const std::function<Status()>& before_commit = {});

}  // namespace strata::cli
