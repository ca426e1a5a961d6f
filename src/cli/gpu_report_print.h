// Prints the nsys-compatible GPU reports (cuda_api_sum, cuda_gpu_kern_sum,
// ...) of a trace: a strata trace or an Nsight Systems SQLite export. The
// names, and the default set, are report/registry.h's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/registry.h"
#include "report/report_document.h"
#include "report/table.h"
#include "store/gpu_tables.h"
#include "store/trace_db.h"

namespace strata::cli {

// The reports are read in two steps, so that a caller reads everything
// before it prints anything: a read error then comes alone, never after half
// of the output. Then each report becomes a section of the command's one
// document (report/report_document.h).
struct GpuReportInput {
  std::vector<const report::ReportEntry*> entries;
  store::GpuTables tables;
};
// Checks the names and loads the tables; 2 with a one-line message on failure.
int load_gpu_reports(const store::TraceReader& reader, const std::vector<std::string>& names,
                     GpuReportInput& out);
// Each report a section named as nsys names it (cuda_api_sum, ...).
void add_gpu_reports(const store::TraceReader& reader, const GpuReportInput& input,
                     report::ReportDocument& document);

// op_sum of a trace with PyTorch ops is torch.profiler's table, built from
// strata_torch_ops rather than the GPU tables' NVTX ranges (strata report and
// strata trace's --stats both print it this way).
struct TorchOpFlags {
  std::string sort;              // torch's names or their aliases; empty: torch's default
  std::optional<int64_t> limit;  // rows kept; torch's table keeps 100 when not given
  bool group_by_shape = false;
  int group_by_stack = 0;
};
// nullopt with *status set (2, one line printed) when the flags or the file are wrong.
std::optional<report::GpuReport> torch_op_report(const store::TraceReader& reader,
                                                 const std::string& file, const TorchOpFlags& flags,
                                                 report::Format format, int* status);
// Adds it as the section op_sum (its notes on stderr outside table format).
void add_torch_op_report(const report::GpuReport& table, report::ReportDocument& document);

// Where a document goes: stdout, or with CSV and `-o DIR` one file per
// report, DIR/BASE_REPORTNAME.csv (nsys stats' names; BASE the trace's file
// name without extension). Returns the exit status: 2 with one line naming the
// path when a file cannot be written, or exists without `force`.
struct DocumentOutput {
  std::string csv_dir;  // empty: stdout
  std::string base;     // report::report_file_base(the trace)
  bool force = false;
};
int emit_document(const report::ReportDocument& document, const DocumentOutput& output);

}  // namespace strata::cli
