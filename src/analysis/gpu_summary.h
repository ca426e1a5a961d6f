// The GPU summaries of `nsys stats` (Nsight Systems 2025.3's report scripts
// cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,
// cuda_gpu_mem_size_sum, cuda_kern_exec_sum, nvtx_sum) and an op table in the
// manner of torch.profiler's key_averages(), computed from loaded columns.
// docs/reports.md gives each one's definition.
//
// Pure functions: no I/O, no formatting. Rows come sorted as nsys sorts them;
// where nsys's ORDER BY leaves ties open, the tie-break is stated. Statistics
// follow nsys (shared/reference/nsys-reports.md): sample standard deviation
// (0 for one value), median of an even count = mean of the two middle values.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "store/gpu_tables.h"

namespace strata::analysis {

// Statistics of integer values (ns or bytes) as nsys's SQL computes them.
struct IntStats {
  int64_t count = 0;
  int64_t total = 0;  // exact integer sum, as SQLite's sum()
  double mean = 0;
  double median = 0;
  int64_t min = 0;
  int64_t max = 0;
  double stddev = 0;  // sample (n - 1); 0 for fewer than two values
};

// Statistics of `values`, which must not be empty; reorders them (the median
// is found by selection, not a full sort).
IntStats int_stats(std::span<int64_t> values);

// SQLite's round(x, 1), which nsys applies to every ratio, mean, median and
// standard deviation before printing: half away from zero.
double round1(double value);

// One row of cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,
// cuda_gpu_mem_size_sum or nvtx_sum.
struct SummaryRow {
  double time_percent = 0;  // total / sum of the listed rows' totals x 100, unrounded
  IntStats stats;           // durations in ns; bytes for cuda_gpu_mem_size_sum
  std::string name;         // Name, Operation or Range
  std::string style;        // nvtx_sum: "PushPop" or "StartEnd"
};

struct GpuSummary {
  // Why the report has no rows where the file lacks its tables, in nsys's
  // words without the file name ("does not contain CUDA trace data."); empty
  // when the tables are there (even if they hold no rows).
  std::string missing;
  std::vector<SummaryRow> rows;
  // Rows the summary left out as nsys does, e.g. memcpy rows whose copyKind
  // is not in ENUM_CUDA_MEMCPY_OPER (nsys's inner join drops them).
  int64_t rows_left_out = 0;
};

// CUPTI_ACTIVITY_KIND_RUNTIME grouped by nameId: runtime and driver calls.
// Names lose a 6-character "_vNNNN" version suffix as nsys's script strips
// them; longer suffixes (cudaStreamIsCapturing_v10000) stay.
// Order: total desc, then nameId.
GpuSummary cuda_api_sum(const store::GpuTables& tables);

// A CUDA call's name as cuda_api_sum prints it: "cudaMemcpy_v3020" ->
// "cudaMemcpy" (a 6-character "_vNNNN" suffix only, as nsys strips it).
std::string strip_version_suffix(const std::string& name);

// CUPTI_ACTIVITY_KIND_KERNEL grouped by the name picked at load time
// (tables.kernel_names). Order: total desc, instances asc, name asc.
GpuSummary cuda_gpu_kern_sum(const store::GpuTables& tables);

// Memcpy rows per "[CUDA memcpy <ENUM_CUDA_MEMCPY_OPER label>]" plus memset
// rows as "[CUDA memset]". Order: total desc, then operation name.
GpuSummary cuda_gpu_mem_time_sum(const store::GpuTables& tables);
// The same groups over bytes. Order: total bytes desc, then operation name.
GpuSummary cuda_gpu_mem_size_sum(const store::GpuTables& tables);

// NVTX push/pop and start/end ranges per (range, style); the range name is
// "<domain>:<text>", the domain empty for the default domain (so ":name", as
// nsys prints it). A range without an end lasts until the table's last
// timestamp. Order: total desc, then range name and style.
GpuSummary nvtx_sum(const store::GpuTables& tables);

// The NVTX_EVENTS row (an index into tables.nvtx) that names each domain,
// keyed by (domainId, process bits of its globalTid): the earliest
// domain-creation event, the first in table order on a tie. nvtx_sum, the op
// table and the Chrome export's timeline all name domains by this rule.
std::map<std::pair<int64_t, int64_t>, size_t> nvtx_domain_rows(const store::NvtxColumns& nvtx);

// cuda_kern_exec_sum: kernels joined with their launch call (same
// correlationId, same process), per (PID, TID, device, API name, kernel).
// It and op_table need the kernels loaded with GpuLoadOptions::kernel_links;
// without them no kernel matches a launch call.
struct KernExecRow {
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t device_id = 0;
  int64_t count = 0;
  int64_t queue_count = 0;  // launches whose kernel started at or after the call returned
  IntStats total;           // call start -> max(call end, kernel end)
  IntStats api;             // the launch call
  IntStats queue;           // call end -> kernel start, over the queue_count launches only
  IntStats kernel;          // kernel start -> end
  std::string api_name;     // version suffix stripped as in cuda_api_sum
  std::string kernel_name;
};

struct KernExecSummary {
  std::string missing;
  std::vector<KernExecRow> rows;  // order: round1(total.mean) desc, then the group key
  int64_t kernels_unmatched =
      0;  // kernels without a launch call in the trace (nsys's join drops them)
};

KernExecSummary cuda_kern_exec_sum(const store::GpuTables& tables);

// The op table: per NVTX push/pop range name, as torch.profiler's
// key_averages() per op. A range's self CPU time is its duration minus that of
// the ranges nested in it on the same thread. A kernel belongs to the
// innermost range, on the launching thread, in which its launch call
// (matched by correlationId and process) started: that range's self GPU
// time; it counts in the GPU total of that range and of every range around it.
enum class OpSort { kSelfGpu, kGpuTotal, kSelfCpu, kCpuTotal, kCalls };

struct OpTableOptions {
  OpSort sort = OpSort::kSelfGpu;  // what the seed's key_averages table was sorted by
  size_t limit = 0;                // rows kept after sorting; 0 = all
};

struct OpRow {
  std::string name;
  int64_t calls = 0;
  int64_t self_cpu_ns = 0;
  int64_t cpu_total_ns = 0;
  int64_t self_gpu_ns = 0;
  int64_t gpu_total_ns = 0;
};

struct OpTable {
  std::string missing;
  std::vector<OpRow> rows;        // sorted by the option's key desc, then CPU total desc, then name
  int64_t self_cpu_total_ns = 0;  // sum of self CPU over all ranges (= time in top-level ranges)
  int64_t self_gpu_total_ns = 0;  // time of all kernels in the trace, inside ranges or not
  int64_t kernels_outside_ranges = 0;
};

OpTable op_table(const store::GpuTables& tables, const OpTableOptions& options = {});

}  // namespace strata::analysis
