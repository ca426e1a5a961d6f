// The CPU layer's tables (strata_cpu_samples, _stacks, _frames, _mappings,
// plus ThreadNames/PROCESSES and cpu.* counters) as plain rows, written into
// and read from a trace. The store knows nothing of the analysis types; the
// CLI converts between these rows and analysis::Profile.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/global_id.h"
#include "common/result.h"
#include "store/trace_db.h"

namespace strata::store {

struct CpuFrameRow {
  std::string function;  // "" when unsymbolized
  std::string file;
  int line = 0;  // definition line
  std::string module;
  uint64_t module_offset = 0;
  bool inlined = false;
  std::string kind = "native";   // native or python
  std::string python_name = {};  // cProfile's name of a C function Python calls; "" otherwise
  int sample_line = 0;           // the sampled instruction's line; 0 unknown
};

struct CpuSampleRow {
  int64_t time_ns = 0;  // CLOCK_MONOTONIC
  int32_t pid = 0;
  int32_t tid = 0;
  int64_t weight_ns = 0;
  int64_t stack = -1;  // index into CpuProfileRows::stacks; -1 when empty
  bool cut = false;    // the stack lacks its root part (stack copy too small)
};

// One -finstrument-functions event: entering or leaving a function.
struct CpuCallRow {
  int32_t pid = 0;
  int32_t tid = 0;
  int64_t time_ns = 0;
  int64_t frame = 0;  // index into CpuProfileRows::frames
  bool exit = false;
};

struct CpuThreadRow {
  int32_t pid = 0;
  int32_t tid = 0;
  std::string name;
};

struct CpuProfileRows {
  std::string source = "perf_event";  // perf_event, sigprof, or instrumented (calls, no samples)
  double rate_hz = 0;
  int64_t wall_ns = 0;
  int64_t cpu_ns = 0;
  std::optional<int64_t> minor_faults;  // strata_counters' cpu.minor_faults; absent in older traces
  uint64_t lost_samples = 0;
  uint64_t throttles = 0;
  double instrument_overhead_ns_per_call = 0;  // stored in ps (strata_counters)
  std::vector<CpuFrameRow> frames;
  std::vector<std::vector<int64_t>> stacks;  // frame indices, leaf first, deduplicated
  std::vector<CpuSampleRow> samples;
  std::vector<CpuCallRow> calls;  // instrumented mode, in order per thread
  std::vector<CpuThreadRow> threads;
  std::vector<std::pair<int32_t, std::string>> processes;  // pid, command
};

// nsys's serialized thread id (common/global_id.h).
inline int64_t global_tid(int32_t pid, int32_t tid) {
  return global_id::make_tid(pid, tid);
}

Status write_cpu_profile(TraceWriter& writer, const CpuProfileRows& rows);

// nullopt when the trace holds no CPU samples or calls.
Result<std::optional<CpuProfileRows>> read_cpu_profile(const TraceReader& reader);

}  // namespace strata::store
