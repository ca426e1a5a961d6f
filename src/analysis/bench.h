// The baseline step's analysis: per-command summaries of measured runs and
// A/B ratios per interleaved pair. Pure: takes the recorded runs, returns
// numbers; src/report/bench_report.* turns them into tables.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/stats.h"
#include "store/trace_db.h"

namespace strata::analysis {

// One measured quantity of a run: wall/user/sys in ms, peak RSS in MiB, the
// page faults (perf stat's page-faults: ru_minflt, faults served without
// I/O), or a KEY=VALUE metric the program printed.
struct Quantity {
  std::string name;  // "wall", "user", "sys", "peak RSS", "page faults", or the metric key
  std::string unit;  // "ms", "MiB", "count", or "" for metrics
  // Traces recorded before strata stored page faults have none: reports leave
  // such a quantity out rather than print a row of dashes.
  bool left_out_when_absent = false;
};

struct CommandSummary {
  std::string label;  // "A" / "B"
  std::vector<std::string> command;
  size_t measured = 0;   // measured runs (warm-ups excluded)
  size_t succeeded = 0;  // of those, exited with status 0
  // Parallel to BenchSummary::quantities; nullopt where no successful run had it.
  std::vector<std::optional<Summary>> values;
};

struct Ratio {
  size_t pairs = 0;  // pairs (i-th A, i-th B) where both succeeded and had the value
  double median = 0;
  double min = 0;
  double max = 0;
};

struct Failure {
  std::string label;
  int iteration = 0;  // 0-based measured iteration
  bool warmup = false;
  std::optional<int> exit_status;
  std::optional<int> signal;
};

struct MissingMetric {
  std::string label;
  int iteration = 0;
  std::string key;
};

struct BenchSummary {
  std::vector<Quantity> quantities;
  std::vector<CommandSummary> commands;        // A, then B when --vs was given
  std::vector<std::optional<Ratio>> ratios;    // A/B, parallel to quantities; empty without B
  std::vector<Failure> failures;               // every run that did not exit 0, warm-ups too
  std::vector<MissingMetric> missing_metrics;  // successful measured runs lacking a --metric
};

// The quantities summarize_bench reports, in its order: wall, user, sys, peak
// RSS and page faults, then one per metric key.
std::vector<Quantity> bench_quantities(std::span<const std::string> metric_keys);

// The values of quantity `index` (into bench_quantities) over the measured
// runs of command `label` that exited 0 and have it, in iteration order:
// what summarize_bench summarizes, and what strata compare tests.
std::vector<double> measured_values(std::span<const store::BenchRun> runs, std::string_view label,
                                    size_t index, std::span<const std::string> metric_keys);

// `metric_keys` are the --metric keys in the order given.
BenchSummary summarize_bench(std::span<const store::BenchRun> runs,
                             std::span<const std::string> metric_keys);

// Finds KEY=VALUE for `key` in one line of program output: KEY must start the
// line or follow whitespace, and VALUE is the number up to the next
// whitespace. Returns nullopt when absent or not a number.
std::optional<double> find_metric(std::string_view line, std::string_view key);

}  // namespace strata::analysis
