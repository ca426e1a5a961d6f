// Tables of the nsys-compatible GPU summaries (analysis/gpu_summary.h), with
// Nsight Systems 2025.3's report names, title lines, column names, column
// order and units, so that `nsys stats --report NAME` and strata's report of
// the same file can be compared number by number; and the op table with
// torch.profiler key_averages()' column names and time format.
//
// Numbers as nsys prints them: Time (%), means, medians and standard
// deviations rounded to one decimal as nsys's SQL rounds them (half away
// from zero), integers exact, sizes in MB of 10^6 bytes with three decimals.
// JSON carries the same rounded values as numbers.
//
// Names: control bytes are escaped; in table format a name longer than the
// tool's column is cut as that tool cuts it (nsys: 99 characters + "…";
// torch: 52 + "..."), CSV and JSON keep every name whole.
#pragma once

#include <string>
#include <vector>

#include "analysis/gpu_summary.h"
#include "analysis/torch_op_table.h"
#include "report/table.h"

namespace strata::report {

struct GpuReportOptions {
  Format format = Format::kTable;
  // nsys's default "column" output groups digits (1,234,567); its "table"
  // output, the seed's, does not.
  bool thousands_separators = false;
};

// A report ready to render: the table, or nsys's SKIPPED line where the file
// lacks the report's tables, and footer lines.
struct GpuReport {
  Table table;          // title " ** CUDA API Summary (cuda_api_sum):", ...
  std::string skipped;  // "SKIPPED: <file> does not contain CUDA trace data."; empty if none
  std::vector<std::string> notes;  // printed under the table in table format
  std::vector<std::string> header;  // printed between the title and the table in table format
};

// `source` names the file in the SKIPPED line (GpuTables::source).
GpuReport cuda_api_sum_report(const analysis::GpuSummary& summary, const std::string& source,
                              const GpuReportOptions& options = {});
GpuReport cuda_gpu_kern_sum_report(const analysis::GpuSummary& summary, const std::string& source,
                                   const GpuReportOptions& options = {});
GpuReport cuda_gpu_mem_time_sum_report(const analysis::GpuSummary& summary,
                                       const std::string& source,
                                       const GpuReportOptions& options = {});
GpuReport cuda_gpu_mem_size_sum_report(const analysis::GpuSummary& summary,
                                       const std::string& source,
                                       const GpuReportOptions& options = {});
GpuReport nvtx_sum_report(const analysis::GpuSummary& summary, const std::string& source,
                          const GpuReportOptions& options = {});
GpuReport cuda_kern_exec_sum_report(const analysis::KernExecSummary& summary,
                                    const std::string& source,
                                    const GpuReportOptions& options = {});
// torch.profiler's key_averages().table() columns: Name, Self CPU %, Self CPU,
// CPU total %, CPU total, CPU time avg, Self CUDA, Self CUDA %, CUDA total,
// CUDA time avg, # of Calls; times as torch prints them (3 decimals, us/ms/s)
// and, in JSON, as numbers of microseconds.
GpuReport op_sum_report(const analysis::OpTable& table, const std::string& source,
                        const GpuReportOptions& options = {});

// The op table of a trace with PyTorch ops (analysis/torch_op_table.h):
// torch.profiler's columns and units; "Input Shapes" and "Source Location"
// as torch adds them with group_by_input_shape / group_by_stack_n; notes
// "Self CPU time total: X" and, with CUDA time, "Self CUDA time total: Y".
GpuReport torch_op_sum_report(const analysis::TorchOpTable& table,
                              const GpuReportOptions& options = {});

// emit_nvtx's range name without its ", seq = N, op_id = M, sizes = ..."
// suffix (the NVTX op table's rows are grouped by it).
std::string strip_emit_nvtx_suffix(const std::string& name);

// Table format: the title line, a blank line, then the table (or the SKIPPED
// line) and the notes. CSV and JSON: the table alone (header only / [] when
// skipped), so that they stay machine-readable; the caller prints `skipped`
// and `notes` to stderr.
std::string render_gpu_report(const GpuReport& report, Format format);

// Torch's time format: "%.3fs" from 1 s, "%.3fms" from 1 ms, else "%.3fus".
std::string torch_time(double microseconds);
// A name cut to `width` characters (UTF-8 aware), the last ones replaced by
// `ellipsis`, after escaping control bytes; shorter names come back escaped.
std::string fit_name(const std::string& name, size_t width, const std::string& ellipsis);

}  // namespace strata::report
