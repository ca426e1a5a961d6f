#include "cli/gpu_report_print.h"

#include <cstdio>

#include "cli/verbs.h"
#include "common/strings.h"
#include "report/gpu_reports.h"
#include "report/registry.h"
#include "store/gpu_tables.h"

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
  auto tables = store::load_gpu_tables(reader.handle(), reader.path());
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

}  // namespace strata::cli
