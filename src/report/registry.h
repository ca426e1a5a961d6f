// The reports `strata report --report NAME` (and `strata trace --stats`)
// know, registered once: name, one line of help, what each reads and how it
// runs. The `--report` help, its validation ("unknown --report 'x' (known:
// ...)") and the default set come from this table, so a new report is its
// own function, one line in registry.cc and its test (docs/reports.md).
//
// Contract: the table is constant and built at compile time; names are
// unique within an input kind (tests/gpu_reports/registry_test.cc).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/multi_rank.h"
#include "report/gpu_reports.h"
#include "store/gpu_tables.h"

namespace strata::report {

// What a report reads. It decides when the name is accepted: one trace's
// GPU tables and its profiled kernel launches with one file, the ranks of a
// job with several.
enum class ReportInput {
  kGpuTables,       // nsys's CUDA/NVTX tables (store/gpu_tables.h)
  kKernelProfiles,  // strata_kernel_metrics: the sections of `strata kernels`
  kRanks,           // several files, one per rank (analysis/multi_rank.h)
};

// The inputs of a multi-rank report.
struct RankReportArgs {
  const analysis::MultiRankResult& result;
  std::span<const analysis::RankInput> inputs;
  size_t limit = 0;  // --limit: rows kept; 0 keeps all
};

struct ReportEntry {
  const char* name;
  const char* help;  // one line: what the report shows
  ReportInput input;
  // Place in the set `nsys profile --stats=true` prints (1 first), which
  // `strata trace` and `strata report` print by default; 0: only on request.
  int default_order = 0;
  // kGpuTables: the report of `tables`; `source` names the file in SKIPPED lines.
  GpuReport (*from_tables)(const store::GpuTables& tables, const std::string& source,
                           const GpuReportOptions& options) = nullptr;
  // kRanks.
  GpuReport (*from_ranks)(const RankReportArgs& args) = nullptr;
  // kKernelProfiles have no runner here: the caller renders the launches
  // with report/kernel_report.h's render_kernel_profiles, all sections.
  // kGpuTables: the report needs the tables loaded with
  // GpuLoadOptions::timeline (launch configurations, copies' correlation).
  bool timeline = false;
};

// Every report, in the order help lists them.
std::span<const ReportEntry> report_registry();

// The entry of `name` among the reports of `input`, or nullptr.
const ReportEntry* find_report(std::string_view name, ReportInput input);

// The names of `input`'s reports in registry order.
std::vector<std::string> report_names(ReportInput input);

// "a, b, c": the names of `input`'s reports, for "unknown --report" messages
// (the GPU-table reports in name order, the others in registry order).
std::string known_reports(ReportInput input);

// The reports of the GPU tables printed when none is asked for, in nsys's order.
std::vector<std::string> default_gpu_reports();

// The help of `--report`, generated from the table.
std::string report_flag_help();

}  // namespace strata::report
