// What every recording verb does first: pick the trace file (-o, or the
// first free STEM<N>.sqlite), create it, and start the run's metadata.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/trace_db.h"

namespace strata::cli {

struct NewTrace {
  std::string path;
  store::TraceWriter writer;
  store::RunInfo info;  // verb, command, directory, host, strata version and start time
};

// On failure prints the one-line error and returns nullopt: the verb exits 2.
std::optional<NewTrace> start_trace(const std::optional<std::string>& output, bool force,
                                    const std::string& stem, const std::string& verb,
                                    const std::vector<std::string>& command);

}  // namespace strata::cli
