// `strata compare A B`: two traces (or the runs of two commands) side by
// side, layer by layer. The CLI loads each side into a CompareSide; this
// compares them: the wall time with its test (analysis/compare_wall.h), and
// per layer the rows of the summary its report prints (pstats' functions,
// torch.profiler's ops, nsys's kernels, API calls, memory operations and
// NVTX ranges), matched by name (analysis/row_diff.h). A layer is compared
// when both sides hold it; one that only one side holds is named, not
// listed row by row (every row would be "added").
//
// Pure functions, no I/O: report/compare_report.h prints the result.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/compare_wall.h"
#include "analysis/cpu_profile.h"
#include "analysis/row_diff.h"
#include "analysis/torch_op_table.h"
#include "store/gpu_tables.h"

namespace strata::analysis {

// One side, as loaded from a trace file or from one command's bench runs.
struct CompareSide {
  std::string name;  // the file (printable), or "FILE (A)" for one command of a --vs trace
  bool nsys_export = false;
  std::string verb;                  // strata_run's verb: "bench", "cpu", "trace", ...
  std::vector<std::string> command;  // what ran
  // How `wall` was measured: "bench" for bench runs (several), else the verb
  // of the one run it holds (its strata_run start to end); "" when none.
  std::string wall_source;
  std::vector<QuantitySamples> wall;
  std::optional<Profile> cpu;           // as the reports show it (the Python view, short names)
  std::optional<TorchOpTable> ops;      // torch.profiler's table of the PyTorch ops
  std::optional<store::GpuTables> gpu;  // when the trace holds CUDA rows
};

enum class SectionKind { kCpuFunctions, kTorchOps, kKernels, kCudaApi, kMemOps, kNvtx };

// The section's name in JSON and CSV: the report it compares
// ("cpu_functions", "op_sum", "cuda_gpu_kern_sum", "cuda_api_sum",
// "cuda_gpu_mem_time_sum", "nvtx_sum").
std::string_view section_key(SectionKind kind);

// What each row of a section carries, in the order of KeyedRow::values:
//   kCpuFunctions: self time (tottime), total time (cumtime), in ns; count:
//     ncalls (samples in a sampled profile). Functions are matched by file
//     and name, not line, so that an edit that moves a function leaves it one
//     row; a function whose file only the directories tell apart (two build
//     directories) is matched when that leaves no doubt.
//   kTorchOps: Self CPU, Self CUDA (ns); count: calls. Device rows (kernels,
//     copies) are left out: the kernel section holds them.
//   kKernels, kCudaApi, kNvtx: total time (ns); count: instances or calls.
//   kMemOps: total time (ns), bytes; count: operations.
size_t section_measures(SectionKind kind);
// The measures whose change orders the rows: self time for functions (a
// caller's total follows its callees'), both self times for ops, time for the rest.
std::vector<size_t> section_sort_by(SectionKind kind);

struct SectionDiff {
  SectionKind kind = SectionKind::kKernels;
  RowDiff diff;
};

// Why the wall time was not compared.
enum class WallMissing {
  kNone,
  kNoWall,        // a side has none (an Nsight Systems export, a trace without runs)
  kMeasuredApart  // bench runs on one side, a profiled run on the other (or two verbs)
};

struct CompareOptions {
  size_t limit = 15;  // rows per section; 0 = all
  double confidence = 0.95;
  double min_change = kDefaultMinChange;
};

struct Comparison {
  std::optional<WallComparison> wall;
  WallMissing wall_missing = WallMissing::kNone;
  std::vector<SectionDiff> sections;  // in SectionKind order; sections without rows left out
  // Layers only one side holds: (layer, true when it is A's).
  std::vector<std::pair<SectionKind, bool>> one_sided;
  // One CPU profile is sampled and the other --instrument: ncalls are
  // samples on one side and calls on the other.
  bool cpu_modes_differ = false;
  VerdictResult verdict;

  // Nothing at all in common: no wall time and no layer to compare.
  bool empty() const { return !wall && sections.empty(); }
};

Comparison compare_sides(const CompareSide& a, const CompareSide& b,
                         const CompareOptions& options = {});

// The rows of each layer, as diff_rows takes them (exposed for the tests).
std::vector<KeyedRow> cpu_function_rows(const Profile& profile);
std::vector<KeyedRow> torch_op_rows(const TorchOpTable& table);
std::vector<KeyedRow> gpu_rows(SectionKind kind, const store::GpuTables& tables);

}  // namespace strata::analysis
