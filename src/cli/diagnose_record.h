// strata diagnose's recorded layers: one run of the command with the CPU
// sampler and, where strata was built with CUDA, libstrata_agent.so (CUDA,
// NVTX) and the PyTorch op recorder injected (the machinery of `strata
// trace --trace cuda,nvtx,torch,cpu`), then, only when that run's GPU
// timeline does not explain the time and the budget allows, kernel metrics
// on the top kernels by GPU time (`strata kernels`' agent mode, one run per
// kernel, one launch each). Two implementations: diagnose_record.cc (CUDA
// builds) and diagnose_record_cpu.cc (the CPU layer alone).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/diagnosis.h"
#include "cli/new_trace.h"
#include "common/result.h"
#include "import/cpu/build_profile.h"
#include "store/diagnose_rows.h"

namespace strata::cli {

// How the target ended (as agent_run.h's TargetExit, which CPU-only builds lack).
struct RecordedExit {
  std::optional<int> exit_status;
  std::optional<int> signal;
  int shell_status() const { return signal ? 128 + *signal : exit_status.value_or(0); }
};

struct RecordRequest {
  std::vector<std::string> command;
  // Seconds the kernel-metrics runs may take, and what one is estimated to
  // cost; a run whose estimate does not fit is skipped and the log says so.
  double seconds_left = 0;
  double seconds_per_kernel_run = 0;
  analysis::DiagnosisThresholds thresholds;
  size_t top_kernels = 3;
};

struct Recording {
  RecordedExit target;
  std::optional<import::BuiltProfile> cpu;
  // The rows after the baseline's: cpu, timeline, ops, kernels.
  std::vector<store::DiagnoseLayerRow> layers;
  std::vector<std::string> run_dirs;  // spools still to ingest ([0]: the recorded run)
};

// The error is the one-line message; *error_status is what strata exits
// with (127: the command did not start; 1 otherwise).
Result<Recording> record_layers(const RecordRequest& request, int* error_status);

// Writes the run row, the recording's spools and CPU profile, then what
// `write_rest` writes, and commits the trace; removes the run directories.
// Prints why and returns false when the trace could not be written.
bool commit_recording(Recording& recording, NewTrace& trace,
                      const std::function<Status()>& write_rest);

}  // namespace strata::cli
