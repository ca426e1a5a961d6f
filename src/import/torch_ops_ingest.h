// Ingest: libstrata_torch's spools (torch-PID.bin, issue 18,
// docs/torch-ops-design.md) into strata_torch_ops and strata_torch_status,
// and the python-notorch-PID markers the Python hook leaves for processes
// that never imported torch.
//
// Each spool is read once through the one chunk loop (chunk_visitor.h):
// strings, torch-ops and torch-status chunks. Spool string ids are private
// to the spool and become the trace's StringIds ids. Op stamps on the TSC are
// converted to CLOCK_MONOTONIC ns with the spool's widest clock pair (as
// instrument_profile.cc converts instrument-events), once the whole spool is
// read, so every op of a process is on one line.
//
// Damage is never an error: bad chunks, unresolved strings and unreadable
// spools are strata_counters rows (spool.*, torch.*); only a failure to
// write the trace is.
//
// Threading: one thread, the writer's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/trace_db.h"

namespace strata::import {

inline constexpr std::string_view kTorchSpoolPrefix = "torch-";
inline constexpr std::string_view kNoTorchMarkerPrefix = "python-notorch-";

struct TorchIngestSummary {
  uint64_t spools = 0;  // torch spools read (header valid)
  uint64_t ops = 0;
  uint64_t threads = 0;    // distinct (pid, tid) with ops
  uint64_t processes = 0;  // distinct pids with ops
  uint64_t notorch_markers = 0;
  uint64_t damaged = 0;  // bad chunks, truncated bytes, unreadable spools
  // What the CLI prints, each after "strata: PyTorch ops: ", in order.
  std::vector<std::string> lines;
};

// Ingests every torch-*.bin in `run_dir` into `writer` (in its open
// transaction) and counts the python-notorch-* markers. Errors only when the
// trace cannot be written.
Result<TorchIngestSummary> ingest_torch_spools(const std::string& run_dir,
                                               store::TraceWriter& writer);

// The lines of `summary` once its counts are known (ingest_torch_spools calls
// it; exposed for tests): each status text once, the recording one followed
// by " — N ops on T threads in P processes"; "none (the program never
// imported torch)" when only markers were found; nothing when neither.
struct TorchStatusText {
  uint32_t status = 0;  // format::TorchStatus
  std::string text;
};
std::vector<std::string> torch_summary_lines(const std::vector<TorchStatusText>& statuses,
                                             const TorchIngestSummary& counts);

}  // namespace strata::import
