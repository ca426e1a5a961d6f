#include "cli/gpu_report_print.h"

#include <algorithm>
#include <cstdio>

#include "analysis/torch_op_table.h"
#include "cli/verbs.h"
#include "common/strings.h"
#include "report/gpu_reports.h"
#include "report/registry.h"
#include "store/gpu_tables.h"
#include "store/torch_op_rows.h"

namespace strata::cli {

int load_gpu_reports(const store::TraceReader& reader, const std::vector<std::string>& names,
                     GpuReportInput& out) {
  for (const auto& name : names) {
    const auto* entry = report::find_report(name, report::ReportInput::kGpuTables);
    if (entry == nullptr) {
      std::fprintf(stderr, "strata: unknown --report '%s' (known: %s)\n", printable(name).c_str(),
                   report::known_reports(report::ReportInput::kGpuTables).c_str());
      return kExitUsage;
    }
    out.entries.push_back(entry);
  }
  store::GpuLoadOptions load;
  for (const auto* entry : out.entries) load.timeline = load.timeline || entry->timeline;
  auto tables = store::load_gpu_tables(reader.handle(), reader.path(), load);
  if (!tables) return print_usage_error(tables.error().message);
  out.tables = std::move(tables).value();
  return kExitOk;
}

void print_gpu_reports(const store::TraceReader& reader, const GpuReportInput& input,
                       report::Format format) {
  report::GpuReportOptions options;
  options.format = format;
  bool first = true;
  for (const auto* entry : input.entries) {
    report::GpuReport r = entry->from_tables(input.tables, reader.path(), options);
    if (!first) std::fputs("\n", stdout);
    first = false;
    std::fputs(report::render_gpu_report(r, format).c_str(), stdout);
  }
  std::fflush(stdout);
}

int print_gpu_reports(const store::TraceReader& reader, const std::vector<std::string>& names,
                      report::Format format) {
  GpuReportInput input;
  if (int status = load_gpu_reports(reader, names, input); status != kExitOk) return status;
  print_gpu_reports(reader, input, format);
  return kExitOk;
}

std::optional<report::GpuReport> torch_op_report(const store::TraceReader& reader,
                                                 const std::string& file, const TorchOpFlags& flags,
                                                 report::Format format, int* status) {
  *status = kExitOk;
  analysis::TorchOpTableOptions options;
  if (!flags.sort.empty()) {
    auto sort = analysis::parse_torch_sort(flags.sort);
    if (!sort) {
      *status = print_usage_error(sort.error().message);
      return std::nullopt;
    }
    options.sort = *sort;
  }
  options.limit = flags.limit ? static_cast<size_t>(std::max<int64_t>(*flags.limit, 0)) : 100;
  options.group_by_shape = flags.group_by_shape;
  options.group_by_stack = flags.group_by_stack;
  auto rows = store::load_torch_op_rows(reader);
  if (!rows) {
    *status = print_usage_error(rows.error().message);
    return std::nullopt;
  }
  auto table = analysis::torch_op_table(*rows, options);
  if (!table) {
    *status = print_usage_error(printable(file) + ": " + table.error().message);
    return std::nullopt;
  }
  report::GpuReportOptions ro;
  ro.format = format;
  return report::torch_op_sum_report(*table, ro);
}

void print_torch_op_report(const report::GpuReport& table, report::Format format) {
  std::fputs(report::render_gpu_report(table, format).c_str(), stdout);
  if (format != report::Format::kTable) {
    for (const auto& note : table.notes) std::fprintf(stderr, "strata: %s\n", note.c_str());
  }
  std::fflush(stdout);
}

}  // namespace strata::cli
