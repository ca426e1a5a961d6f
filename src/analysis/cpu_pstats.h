// The CPU profile as pstats shows it (the seed's step 2: cProfile +
// show_pstats --sort cumtime --limit 15): one row per function with ncalls,
// tottime, cumtime and the two per-call ratios, the header pstats prints
// above it, a per-thread summary and the top self-time shares the accuracy
// benchmark compares with callgrind. Pure functions of a Profile.
//
// Sampled modes have no call counts: a row's "calls" are samples. ncalls is
// the number of samples with the function as leaf (self), tottime = sum of
// those samples' periods and cumtime = sum over samples whose stack holds the
// function anywhere, counted once per sample however deep the recursion; so
// times are estimates (error ~ sqrt(p(1-p)/N), shared/reference/cpu-sampling.md).
// Instrumented mode counts exactly, with cProfile's rules: a call is
// primitive when the function is not already active on the thread's stack,
// and only primitive calls add to cumtime.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/cpu_profile.h"
#include "analysis/cpu_sort.h"
#include "analysis/idle_frames.h"
#include "common/result.h"

namespace strata::analysis {

struct CpuTableOptions {
  // Keys in order (analysis/cpu_sort.h), each as pstats sorts it: counts
  // and times descending, names, files and lines ascending; remaining ties
  // by label, then tid. kSamples orders by the samples a function appears in
  // (inclusive) in sampled modes and by ncalls in instrumented mode.
  CpuSortKeys sort = {CpuSort::kCumtime};
  size_t limit = 0;           // 0 = all rows
  std::string filter;         // RE2 regex searched in the label (docs/cli.md); empty = all
  bool per_thread = false;    // rows per (thread, function) instead of per function
  std::vector<int32_t> tids;  // only these threads; empty = all
};

struct CpuRow {
  int32_t tid = -1;       // -1 when rows aggregate all threads
  uint32_t function = 0;  // index into CpuTable::functions
  std::string label;
  uint64_t ncalls = 0;           // instrumented: all calls; sampled: self samples
  uint64_t primitive_calls = 0;  // instrumented: non-recursive calls; sampled: = ncalls
  uint64_t self_samples = 0;
  uint64_t cum_samples = 0;
  double tottime_s = 0;
  double cumtime_s = 0;
  // pstats leaves percall blank when its divisor is 0. Sampled: per sample
  // (tottime / self samples, cumtime / inclusive samples); instrumented:
  // tottime / ncalls and cumtime / primitive calls, as pstats divides.
  std::optional<double> tottime_percall_s;
  std::optional<double> cumtime_percall_s;
};

struct CpuTable {
  ProfileMode mode = ProfileMode::kPerfEvent;
  std::vector<Function> functions;
  std::vector<CpuRow> rows;  // sorted, filtered and limited
  size_t total_rows = 0;     // before filter and limit ("List reduced from N to M")
  size_t filtered_rows = 0;  // after the filter, before the limit
  CpuTableOptions options;
};

// Errors: an invalid --filter regex, named with the regex library's message.
Result<CpuTable> cpu_function_table(const Profile& profile, const CpuTableOptions& options);

// The facts pstats prints above its table, plus sampling health.
struct CpuHeader {
  ProfileMode mode = ProfileMode::kPerfEvent;
  double rate_hz = 0;
  uint64_t samples = 0;
  uint64_t lost_samples = 0;
  uint64_t throttles = 0;
  double wall_s = 0;
  double cpu_s = 0;
  double profiled_s = 0;  // sampled: sum of sample weights; instrumented: sum of tottime
  // Sampled: samples per second of the target's CPU time (0 when unknown);
  // below rate_hz when the kernel skipped, throttled or lost samples.
  double effective_rate_hz = 0;
  size_t threads = 0;  // threads with data or named in the profile
  size_t processes = 0;
  uint64_t function_calls = 0;  // instrumented: "N function calls (M primitive calls)"
  uint64_t primitive_calls = 0;
  double instrument_overhead_ns_per_call = 0;  // instrumented: subtracted (0: not calibrated)
  // Instrumented-event repairs (balance_events), summed over threads.
  uint64_t frames_closed_at_end = 0;
  uint64_t frames_closed_by_outer_exit = 0;
  uint64_t unmatched_exits = 0;
  uint64_t reordered_times = 0;
  // Sampled: the samples of idle-spinning threads (analysis/idle_frames.h),
  // counted in the figures above. idle_shown: the table lists them too
  // (--idle); by default it leaves them out, as py-spy does.
  IdleSummary idle;
  bool idle_shown = false;
};

// Of the whole profile, idle samples included; idle_shown is left false.
CpuHeader cpu_header(const Profile& profile);

struct CpuThreadRow {
  int32_t tid = 0;
  int32_t pid = 0;
  std::string name;
  uint64_t samples = 0;  // sampled modes
  uint64_t calls = 0;    // instrumented mode
  double time_s = 0;     // sampled: sum of weights; instrumented: sum of self time
  double share = 0;      // fraction of the profile's time, 0..1
  double idle_s = 0;     // of time_s, idle-spinning (analysis/idle_frames.h)
  std::string idle_what;  // what it idled in most; "" when it did not
};

// Every thread with data or a name, by time descending then tid.
std::vector<CpuThreadRow> cpu_threads(const Profile& profile);

struct SelfShare {
  std::string label;
  uint64_t self_samples = 0;  // 0 in instrumented mode
  double self_s = 0;
  double share = 0;  // sampled: self samples / all samples; instrumented: self time / all
};

// The n functions with most self time (all when n == 0), by share descending,
// ties by label.
std::vector<SelfShare> top_self_shares(const Profile& profile, size_t n);

}  // namespace strata::analysis
