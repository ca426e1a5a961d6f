// The bench summary of a trace `strata bench` wrote, for `strata report`:
// what the bench verb knew from its flags (the --metric keys, the run and
// warm-up counts) read back from the recorded runs.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "analysis/bench.h"

namespace strata::analysis {

struct RecordedBench {
  BenchSummary summary;
  size_t measured = 0;  // measured runs of command A
  size_t warmups = 0;   // warm-up runs of command A
};

// The metric keys are the ones the runs carry (recorded_metric_keys).
RecordedBench summarize_recorded_bench(std::span<const store::BenchRun> runs);

// The KEY=VALUE metric keys of the runs, in first-seen order.
std::vector<std::string> recorded_metric_keys(std::span<const store::BenchRun> runs);

}  // namespace strata::analysis
